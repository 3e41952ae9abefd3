-- High-cardinality GROUP BY and DISTINCT shapes beside G1-G3 and D2 (docs/PERFORMANCE.md, seventh session of 2026-11-26).
-- Not timed by `cargo xtask bench`; run them with the harness, e.g.
-- `compare --data target/tpch-data/sf1 --sf 1 --tables lineitem --queries benches/high_cardinality.sql --threads 2`.
-- X1
SELECT l_comment, count(*) AS n FROM lineitem GROUP BY l_comment;
-- X2
SELECT l_orderkey, l_partkey, count(*) AS n FROM lineitem GROUP BY l_orderkey, l_partkey;
-- X3
SELECT l_partkey, l_shipdate, sum(l_quantity) AS q FROM lineitem GROUP BY l_partkey, l_shipdate;
-- X4
SELECT count(*) FROM (SELECT DISTINCT l_suppkey, l_shipdate FROM lineitem);
