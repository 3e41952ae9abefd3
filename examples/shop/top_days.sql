-- The five best days, once the customer totals are written.
-- depends: customers
-- timeout: 30s
SELECT day, revenue FROM daily ORDER BY revenue DESC LIMIT 5
