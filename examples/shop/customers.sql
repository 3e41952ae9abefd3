-- Revenue per customer.
-- output: out/customers.parquet
SELECT customer, count(*) AS orders, sum(amount) AS revenue, max(amount) AS biggest
FROM orders
GROUP BY customer
ORDER BY revenue DESC
