-- Breaker shapes (issue 13): high-cardinality GROUP BY, top-N, full sort, DISTINCT; window functions (issue 9).
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
-- W1
SELECT l_orderkey, l_linenumber, row_number() OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS rn FROM lineitem;
-- W2
SELECT l_suppkey, l_shipdate, sum(l_quantity) OVER (PARTITION BY l_suppkey ORDER BY l_shipdate) AS running FROM lineitem;
-- W3
SELECT l_orderkey, rank() OVER (ORDER BY l_extendedprice DESC) AS r FROM lineitem;
