-- The orders worth counting.
-- param: min_amount = 5
SELECT order_id, customer, day, amount
FROM 'data/orders.csv'
WHERE amount >= ${min_amount}
