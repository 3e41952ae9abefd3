-- More variants of the bench's shapes (docs/PERFORMANCE.md, ninth session of 2026-11-27):
-- P (windows over a few partitions, VARCHAR partition keys) and M (string keys, LAG, running and whole-partition aggregates, DISTINCT pairs).
-- Not timed by `cargo xtask bench`; run them with the harness beside DuckDB, e.g.
-- `compare --data target/tpch-data/sf1 --sf 1 --tables lineitem --queries benches/variants2.sql --threads 2` and
-- `python3 benches/compare_peer.py --data target/tpch-data/sf1 --tables lineitem --queries benches/variants2.sql --threads 2`.
-- P1
SELECT l_orderkey, rank() OVER (PARTITION BY l_returnflag ORDER BY l_extendedprice) AS r FROM lineitem;
-- P2
SELECT l_orderkey, sum(l_quantity) OVER (PARTITION BY l_linestatus ORDER BY l_shipdate) AS s FROM lineitem;
-- P3
SELECT l_orderkey, row_number() OVER (PARTITION BY l_shipmode ORDER BY l_orderkey) AS rn FROM lineitem;
-- M1
SELECT l_comment, count(*) AS n FROM lineitem GROUP BY l_comment ORDER BY n DESC, l_comment LIMIT 5;
-- M2
SELECT count(DISTINCT l_comment) AS c FROM lineitem;
-- M3
SELECT l_orderkey, l_comment FROM lineitem ORDER BY l_comment DESC LIMIT 10;
-- M4
SELECT l_suppkey, l_comment, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_comment) AS rn FROM lineitem;
-- M5
SELECT l_shipmode, l_orderkey, lag(l_extendedprice) OVER (PARTITION BY l_shipmode ORDER BY l_orderkey, l_linenumber) AS p FROM lineitem;
-- M6
SELECT count(*) AS n FROM (SELECT DISTINCT l_partkey, l_suppkey FROM lineitem);
-- M7
SELECT extract(year FROM l_shipdate) AS y, l_returnflag, sum(l_extendedprice) AS s, avg(l_discount) AS d FROM lineitem GROUP BY ALL ORDER BY ALL;
-- M8
SELECT l_partkey, min(l_comment) AS c, max(l_shipdate) AS d FROM lineitem GROUP BY l_partkey ORDER BY l_partkey LIMIT 5;
-- M9
SELECT l_suppkey, sum(l_extendedprice) OVER (PARTITION BY l_suppkey) AS t FROM lineitem;
-- M10
SELECT l_orderkey, max(l_extendedprice) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS m FROM lineitem;
