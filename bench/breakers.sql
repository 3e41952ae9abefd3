-- Breaker shapes (issue 13): high-cardinality GROUP BY, top-N, full sort, DISTINCT.
-- Timed by `cargo xtask bench queries` after queries.sql; not part of `weir --demo`.
-- G1
SELECT l_orderkey, sum(l_extendedprice) AS total FROM lineitem GROUP BY l_orderkey ORDER BY total DESC LIMIT 5;
-- G2
SELECT l_partkey, count(*) AS n, sum(l_quantity) AS qty FROM lineitem GROUP BY l_partkey;
-- G3
SELECT l_suppkey, l_partkey, count(*) AS n FROM lineitem GROUP BY l_suppkey, l_partkey;
-- T10
SELECT l_orderkey, l_extendedprice FROM lineitem ORDER BY l_extendedprice DESC LIMIT 10;
-- T1000
SELECT l_orderkey, l_partkey, l_extendedprice FROM lineitem ORDER BY l_shipdate DESC, l_extendedprice LIMIT 1000;
-- S1
SELECT l_orderkey, l_extendedprice FROM lineitem ORDER BY l_extendedprice;
-- D1
SELECT count(DISTINCT l_partkey) FROM lineitem;
-- D2
SELECT DISTINCT l_orderkey FROM lineitem;
