-- Variants of the bench's shapes on other columns, keys and LIMITs (docs/PERFORMANCE.md, eighth session of 2026-11-27):
-- X, Z, T, H (GROUP BY, top-N, full sorts, windows, DISTINCT) and R (range and point filters on a clustered column).
-- Not timed by `cargo xtask bench`; run them with the harness beside DuckDB, e.g.
-- `compare --data target/tpch-data/sf1 --sf 1 --tables lineitem --queries benches/variants.sql --threads 2` and
-- `python3 benches/compare_peer.py --data target/tpch-data/sf1 --tables lineitem --queries benches/variants.sql --threads 2`.
-- X1
SELECT l_orderkey, l_extendedprice * (1 - l_discount) AS r FROM lineitem ORDER BY r DESC LIMIT 10;
-- X2
SELECT l_orderkey, l_shipdate FROM lineitem ORDER BY l_shipdate DESC, l_orderkey LIMIT 10;
-- X3
SELECT l_partkey, l_suppkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_partkey, l_suppkey ORDER BY q DESC LIMIT 10;
-- X4
SELECT l_orderkey, l_linenumber, l_extendedprice FROM lineitem ORDER BY l_extendedprice;
-- X5
SELECT l_suppkey, count(DISTINCT l_partkey) AS p FROM lineitem GROUP BY l_suppkey;
-- X6
SELECT l_orderkey - 3000000 AS k, count(*) AS n, sum(l_quantity) AS q FROM lineitem GROUP BY 1;
-- X7
SELECT l_comment FROM lineitem ORDER BY l_comment DESC LIMIT 10;
-- X8
SELECT DISTINCT l_orderkey FROM lineitem;
-- X9
SELECT l_orderkey, l_linenumber, count(*) AS n FROM lineitem GROUP BY 1, 2 ORDER BY n DESC LIMIT 5;
-- X10
SELECT l_orderkey, l_quantity, l_extendedprice FROM lineitem WHERE l_shipdate > DATE '1997-01-01' ORDER BY l_quantity, l_extendedprice DESC LIMIT 1000;
-- X11
SELECT l_shipdate, l_shipmode, avg(l_discount) AS d, count(*) AS n FROM lineitem GROUP BY 1, 2;
-- X12
SELECT * FROM lineitem ORDER BY l_partkey LIMIT 10 OFFSET 100000;
-- X13
SELECT CAST(l_extendedprice AS BIGINT) AS p, count(*) AS n FROM lineitem GROUP BY 1;
-- X14
SELECT l_returnflag, l_orderkey, sum(l_quantity) OVER (PARTITION BY l_returnflag ORDER BY l_orderkey, l_linenumber) AS s FROM lineitem;
-- X15
SELECT -l_partkey AS k, max(l_shipdate) AS d FROM lineitem GROUP BY 1;
-- X16
SELECT l_orderkey, avg(l_extendedprice) AS a, min(l_discount) AS m FROM lineitem WHERE l_quantity < 25 GROUP BY l_orderkey;
-- Z1
SELECT l_shipinstruct, l_shipmode, l_returnflag, count(DISTINCT l_suppkey) AS s FROM lineitem GROUP BY ALL;
-- Z2
SELECT DISTINCT l_shipmode, l_shipinstruct, l_linestatus FROM lineitem;
-- Z3
SELECT l_orderkey, l_linenumber, l_comment FROM lineitem ORDER BY l_receiptdate DESC, l_comment;
-- Z4
SELECT l_suppkey, avg(l_discount) AS d, stddev_samp(l_quantity) AS q FROM lineitem GROUP BY l_suppkey;
-- Z5
SELECT l_orderkey, l_suppkey, count(*) AS n FROM lineitem GROUP BY l_orderkey, l_suppkey HAVING count(*) > 1;
-- Z6
SELECT l_orderkey, lag(l_extendedprice) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS p FROM lineitem;
-- Z7
SELECT l_partkey, sum(l_quantity) OVER (PARTITION BY l_partkey) AS t FROM lineitem;
-- Z8
SELECT l_suppkey, l_extendedprice, rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem QUALIFY r <= 3;
-- Z10
SELECT year(l_shipdate) AS y, month(l_shipdate) AS m, count(DISTINCT l_partkey) AS p FROM lineitem GROUP BY 1, 2;
-- Z11
SELECT l_comment FROM lineitem ORDER BY length(l_comment) DESC, l_comment LIMIT 10;
-- Z12
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS v FROM lineitem GROUP BY l_orderkey ORDER BY v DESC LIMIT 20;
-- Z13
SELECT DISTINCT l_partkey % 1000 AS p, l_returnflag FROM lineitem;
-- Z14
SELECT l_shipdate, l_orderkey FROM lineitem ORDER BY l_shipdate, l_orderkey;
-- T1
SELECT l_orderkey, l_partkey FROM lineitem ORDER BY l_partkey LIMIT 10;
-- T2
SELECT l_orderkey, l_quantity FROM lineitem ORDER BY l_quantity DESC, l_orderkey LIMIT 10;
-- T3
SELECT l_orderkey, l_discount, l_extendedprice FROM lineitem ORDER BY l_discount DESC, l_extendedprice LIMIT 10;
-- T4
SELECT * FROM lineitem ORDER BY l_shipmode, l_shipdate DESC LIMIT 10;
-- T5
SELECT l_orderkey, l_tax FROM lineitem ORDER BY l_tax, l_orderkey DESC LIMIT 1000;
-- T6
SELECT l_returnflag, l_linestatus, l_orderkey FROM lineitem ORDER BY l_returnflag DESC, l_linestatus, l_orderkey LIMIT 100;
-- H1
SELECT l_extendedprice, count(*) AS n FROM lineitem GROUP BY l_extendedprice;
-- H2
SELECT l_shipdate, l_commitdate, count(*) AS n FROM lineitem GROUP BY 1, 2;
-- H3
SELECT l_partkey, l_orderkey % 7 AS m, sum(l_quantity) AS q FROM lineitem GROUP BY 1, 2;
-- H4
SELECT l_suppkey, l_shipmode, avg(l_extendedprice) AS a FROM lineitem GROUP BY 1, 2;
-- H5
SELECT l_orderkey, max(l_comment) AS c FROM lineitem GROUP BY l_orderkey;
-- H6
SELECT l_discount * 100 AS d, l_tax, count(*) AS n, sum(l_extendedprice) AS s FROM lineitem GROUP BY 1, 2;
-- H7
SELECT count(DISTINCT l_extendedprice) FROM lineitem;
-- H8
SELECT l_partkey, count(*) FILTER (WHERE l_returnflag = 'R') AS r, count(*) AS n FROM lineitem GROUP BY l_partkey;
-- R1
SELECT sum(l_extendedprice) FROM lineitem WHERE l_orderkey BETWEEN 1000000 AND 1100000;
-- R2
SELECT count(*) FROM lineitem WHERE l_orderkey < 0;
-- R3
SELECT l_orderkey, l_linenumber, l_quantity FROM lineitem WHERE l_orderkey = 4200007;
