-- Revenue per day.
-- output: out/daily.csv
SELECT day, count(*) AS orders, sum(amount) AS revenue
FROM orders
GROUP BY day
ORDER BY day
