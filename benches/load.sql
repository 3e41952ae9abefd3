-- The load (issue 13): every column of `lineitem` read from its Parquet file into memory.
-- Timed by `cargo xtask bench lineitem` only; both harnesses replace {data} with the data folder.
-- L1
SELECT * FROM read_parquet('{data}/lineitem.parquet');
