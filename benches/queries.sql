-- F1
SELECT count(*) FROM lineitem WHERE l_quantity < 5;
-- F2
SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24;
-- F3
SELECT l_orderkey, l_partkey, l_extendedprice FROM lineitem WHERE l_shipmode = 'AIR' AND l_quantity > 45 AND l_discount = 0.10;
-- F4
SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%';
-- F5
SELECT count(*) FROM lineitem WHERE l_returnflag = 'R' OR l_linestatus = 'F';
-- F6
SELECT count(*) FROM lineitem WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate BETWEEN DATE '1995-06-01' AND DATE '1995-12-31';
-- Q1
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price, sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;
