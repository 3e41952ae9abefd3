-- More variants of the bench's shapes (docs/PERFORMANCE.md, tenth session of 2026-11-27): GROUP BY and
-- ORDER BY on strings (S, C), aggregates over string and mixed keys (A), top-N with OFFSET and SELECT * (B),
-- windows (W4-W8, P4), DISTINCT pairs (D3, D4). Not timed by `cargo xtask bench`; run them beside DuckDB:
-- `compare --data target/tpch-data/sf1 --sf 1 --tables lineitem --queries benches/variants3.sql --threads 2` and
-- `python3 benches/compare_peer.py --data target/tpch-data/sf1 --tables lineitem --queries benches/variants3.sql --threads 2`.
-- S2
SELECT l_orderkey, l_shipmode FROM lineitem ORDER BY l_shipmode, l_extendedprice;
-- S3
SELECT l_orderkey, l_returnflag, l_linestatus FROM lineitem ORDER BY l_returnflag DESC, l_linestatus, l_orderkey;
-- S4
SELECT l_orderkey, l_comment FROM lineitem ORDER BY l_comment;
-- S5
SELECT l_orderkey, l_shipdate FROM lineitem ORDER BY l_shipdate DESC, l_orderkey;
-- S6
SELECT l_orderkey, l_extendedprice FROM lineitem WHERE l_linestatus = 'O' ORDER BY l_extendedprice;
-- P4
SELECT l_orderkey, row_number() OVER (PARTITION BY l_linestatus ORDER BY l_extendedprice) AS rn FROM lineitem WHERE l_linestatus = 'O';
-- A1
SELECT l_shipinstruct, l_shipmode, count(*) AS n, sum(l_quantity) AS q FROM lineitem GROUP BY l_shipinstruct, l_shipmode;
-- A2
SELECT l_orderkey, l_shipmode, sum(l_extendedprice) AS s FROM lineitem GROUP BY l_orderkey, l_shipmode ORDER BY s DESC LIMIT 10;
-- A3
SELECT l_partkey, l_suppkey, l_shipmode, count(*) AS n FROM lineitem GROUP BY ALL ORDER BY n DESC, l_partkey LIMIT 10;
-- A4
SELECT l_shipdate, count(DISTINCT l_orderkey) AS n FROM lineitem GROUP BY l_shipdate ORDER BY l_shipdate LIMIT 10;
-- A5
SELECT count(DISTINCT l_orderkey || l_shipmode) FROM lineitem;
-- A6
SELECT DISTINCT l_partkey, l_shipmode FROM lineitem;
-- A7
SELECT l_suppkey, min(l_shipdate) AS a, max(l_receiptdate) AS b, avg(l_extendedprice) AS c FROM lineitem GROUP BY l_suppkey ORDER BY c DESC LIMIT 5;
-- B1
SELECT l_orderkey, l_comment FROM lineitem ORDER BY l_shipmode DESC, l_comment LIMIT 100;
-- B2
SELECT * FROM lineitem ORDER BY l_extendedprice DESC LIMIT 10;
-- B3
SELECT l_orderkey, l_discount FROM lineitem ORDER BY l_discount, l_orderkey DESC LIMIT 5000;
-- B4
SELECT l_orderkey, l_quantity FROM lineitem WHERE l_shipdate > DATE '1995-01-01' ORDER BY l_quantity DESC, l_orderkey LIMIT 10 OFFSET 100;
-- C1
SELECT * FROM lineitem ORDER BY l_orderkey DESC, l_linenumber;
-- C2
SELECT l_partkey, l_suppkey, l_shipdate FROM lineitem ORDER BY l_partkey, l_suppkey, l_shipdate;
-- C3
SELECT l_orderkey, l_shipinstruct FROM lineitem ORDER BY l_shipinstruct, l_orderkey;
-- W4
SELECT l_orderkey, dense_rank() OVER (ORDER BY l_shipdate) AS r FROM lineitem;
-- W5
SELECT l_partkey, avg(l_quantity) OVER (PARTITION BY l_partkey) AS a FROM lineitem;
-- W6
SELECT l_orderkey, lead(l_shipdate) OVER (PARTITION BY l_orderkey ORDER BY l_shipdate) AS nx FROM lineitem;
-- W7
SELECT l_suppkey, sum(l_extendedprice) OVER (PARTITION BY l_suppkey ORDER BY l_shipdate ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS m FROM lineitem;
-- W8
SELECT l_shipmode, count(*) OVER (PARTITION BY l_shipmode, l_returnflag) AS c FROM lineitem;
-- D3
SELECT count(DISTINCT l_suppkey), count(DISTINCT l_partkey) FROM lineitem;
-- D4
SELECT DISTINCT l_shipdate, l_commitdate FROM lineitem;
