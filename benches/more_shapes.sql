-- Shapes of the breakers not in breakers.sql: string keys, QUALIFY, several keys (docs/PERFORMANCE.md, fourth session of 2026-11-27;
-- U20-U31, sorts by strings, QUALIFY by strings and dates, mixed and several COUNT(DISTINCT)s: fifth session of 2026-11-27).
-- Not timed by `cargo xtask bench`; run them with the harness beside DuckDB, e.g.
-- `compare --data target/tpch-data/sf1 --sf 1 --tables lineitem --queries benches/more_shapes.sql --threads 2` and
-- `python3 benches/compare_peer.py --data target/tpch-data/sf1 --tables lineitem --queries benches/more_shapes.sql --threads 2`.
-- U1
SELECT l_comment, count(*) AS n FROM lineitem GROUP BY l_comment ORDER BY n DESC, l_comment LIMIT 5;
-- U2
SELECT l_shipmode, l_shipinstruct, count(*) AS n, avg(l_discount) AS d FROM lineitem GROUP BY l_shipmode, l_shipinstruct;
-- U3
SELECT count(DISTINCT l_orderkey) FROM lineitem;
-- U4
SELECT DISTINCT l_partkey, l_suppkey FROM lineitem;
-- U5
SELECT l_comment, l_orderkey FROM lineitem ORDER BY l_comment LIMIT 10;
-- U6
SELECT l_orderkey, l_comment FROM lineitem ORDER BY l_comment;
-- U7
SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount)) AS rev FROM lineitem GROUP BY l_suppkey ORDER BY rev DESC LIMIT 10;
-- U8
SELECT * FROM lineitem ORDER BY l_receiptdate, l_orderkey LIMIT 100;
-- U9
SELECT l_partkey, min(l_shipdate) AS a, max(l_commitdate) AS b FROM lineitem GROUP BY l_partkey;
-- U10
SELECT count(DISTINCT l_comment) FROM lineitem;
-- U11
SELECT l_orderkey, l_partkey, l_quantity FROM lineitem ORDER BY l_quantity DESC, l_partkey LIMIT 1000;
-- U12
SELECT l_partkey, l_suppkey, l_orderkey, l_extendedprice FROM lineitem ORDER BY l_partkey, l_suppkey;
-- U13
SELECT l_shipdate, count(DISTINCT l_suppkey) AS s FROM lineitem GROUP BY l_shipdate;
-- U14
SELECT l_returnflag, l_linestatus, l_shipmode, count(*) AS n, sum(l_quantity) AS q FROM lineitem WHERE l_discount > 0.05 GROUP BY ALL ORDER BY ALL;
-- U15
SELECT l_orderkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300;
-- U16
SELECT l_suppkey, l_orderkey, l_extendedprice, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS rn FROM lineitem QUALIFY rn <= 2;
-- U17
SELECT l_shipinstruct, count(*) AS n FROM lineitem GROUP BY l_shipinstruct;
-- U18
SELECT l_comment, l_shipmode, count(*) AS n FROM lineitem GROUP BY l_comment, l_shipmode ORDER BY n DESC LIMIT 3;
-- U19
SELECT l_suppkey, l_orderkey, l_extendedprice, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS rn FROM lineitem;
-- U20
SELECT l_shipmode, l_orderkey, l_linenumber FROM lineitem ORDER BY l_shipmode, l_orderkey DESC;
-- U21
SELECT DISTINCT l_comment FROM lineitem;
-- U22
SELECT l_orderkey % 1000 AS b, year(l_shipdate) AS y, count(*) AS n, sum(l_extendedprice) AS s FROM lineitem GROUP BY 1, 2;
-- U23
SELECT l_partkey, count(DISTINCT l_suppkey) AS s FROM lineitem GROUP BY l_partkey;
-- U24
SELECT l_suppkey, l_partkey, l_orderkey, l_linenumber FROM lineitem ORDER BY l_suppkey DESC, l_partkey, l_orderkey;
-- U25
SELECT l_orderkey, l_partkey, rank() OVER (PARTITION BY l_orderkey ORDER BY l_extendedprice DESC) AS r FROM lineitem;
-- U26
SELECT l_partkey, l_orderkey, row_number() OVER (PARTITION BY l_partkey ORDER BY l_shipdate) AS rn FROM lineitem QUALIFY rn = 1;
-- U27
SELECT l_shipinstruct, l_orderkey, l_comment FROM lineitem QUALIFY row_number() OVER (PARTITION BY l_shipinstruct ORDER BY l_comment DESC) <= 3;
-- U28
SELECT min(l_comment), max(l_comment), count(DISTINCT l_shipinstruct) FROM lineitem;
-- U29
SELECT l_returnflag, count(DISTINCT l_partkey) AS p, sum(l_quantity) AS q FROM lineitem GROUP BY l_returnflag;
-- U30
SELECT count(DISTINCT l_partkey) AS p, count(DISTINCT l_suppkey) AS s FROM lineitem;
-- U31
SELECT l_shipmode, count(DISTINCT l_orderkey) AS o, count(*) AS n FROM lineitem GROUP BY l_shipmode;
-- WA1 (any aggregate as a window function, 2026-11-28)
SELECT l_orderkey, string_agg(l_shipmode, ',' ORDER BY l_linenumber) OVER (PARTITION BY l_orderkey) AS modes FROM lineitem;
-- WA2
SELECT l_suppkey, median(l_quantity) OVER (PARTITION BY l_suppkey) AS m FROM lineitem;
-- WA3
SELECT l_orderkey, count(DISTINCT l_partkey) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS n FROM lineitem;
-- LK1 (a LIKE pattern of each row, 2026-11-28)
SELECT count(*) FROM lineitem WHERE l_comment LIKE l_shipmode || '%';
-- LK2
SELECT count(*) FROM lineitem WHERE l_comment ILIKE '%' || l_shipmode || '%';
-- WA4 (a median over a moving frame keeps a sorted window, 2026-11-28)
SELECT sum(m) FROM (SELECT median(l_extendedprice) OVER (ORDER BY l_orderkey, l_linenumber ROWS BETWEEN 10 PRECEDING AND 10 FOLLOWING) AS m FROM lineitem WHERE l_orderkey < 1000000);
-- WA5
SELECT sum(m) FROM (SELECT quantile_cont(l_quantity, 0.9) OVER (PARTITION BY l_suppkey ORDER BY l_shipdate ROWS BETWEEN 50 PRECEDING AND CURRENT ROW) AS m FROM lineitem);
-- U32 (a decimal product of capped type, 2026-11-28)
SELECT sum(l_extendedprice * (1 - l_discount)) AS rev FROM lineitem;
-- WR1 (windows over bounded frames computed range by range, 2026-11-28)
SELECT sum(m) FROM (SELECT max(l_extendedprice) OVER (ORDER BY l_shipdate ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS m FROM lineitem);
-- WR2
SELECT sum(m) FROM (SELECT avg(l_quantity) OVER (ORDER BY l_orderkey, l_linenumber ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS m FROM lineitem);
-- WR3
SELECT sum(m) FROM (SELECT avg(l_extendedprice) OVER (ORDER BY l_shipdate RANGE BETWEEN INTERVAL 3 DAYS PRECEDING AND CURRENT ROW) AS m FROM lineitem);
-- WR4
SELECT sum(m) FROM (SELECT count(*) OVER (ORDER BY l_shipdate RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING) AS m FROM lineitem);
-- WR5
SELECT sum(m) FROM (SELECT max(l_quantity) OVER (ORDER BY l_commitdate DESC RANGE BETWEEN INTERVAL 1 MONTH PRECEDING AND INTERVAL 2 DAYS FOLLOWING) AS m FROM lineitem);
