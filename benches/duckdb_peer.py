#!/usr/bin/env python3
"""Time benches/queries.sql and benches/breakers.sql on DuckDB over the same lineitem the Weir bench loads.

usage: pip install duckdb
       cargo xtask bench queries -- --sf 1 --threads 2   # writes target/tpch/sf1/lineitem.parquet
       python3 benches/duckdb_peer.py [--sf 1] [--threads 2] [--reps 5] [--only G1,T10]
Loads the Parquet file into an in-memory table (as Weir does), runs each query once
to warm up and then --reps times, and prints the median and the row count; each
result is materialised in a temporary table (as Weir returns batches), not printed.
"""
import argparse, os, statistics, time

import duckdb

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def queries(path):
    label = None
    for line in open(path):
        if line.startswith("-- "):
            # the label is the first word; the rest says what it shows
            label = (line[3:].split() or [""])[0]
            continue
        sql = line.strip().rstrip(";")
        if sql:
            yield label, sql


def run(con, sql):
    """Runs `sql`, materialising its result in DuckDB (not converted to
    Python objects); returns its row count."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE __result AS {sql}")
    return con.execute("SELECT count(*) FROM __result").fetchone()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", default="1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()

    parquet = os.path.join(ROOT, f"target/tpch/sf{a.sf}/lineitem.parquet")
    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    t = time.perf_counter()
    con.execute(f"CREATE TABLE lineitem AS SELECT * FROM read_parquet('{parquet}')")
    rows = con.execute("SELECT count(*) FROM lineitem").fetchone()[0]
    print(f"duckdb {duckdb.__version__}: loaded {rows} rows in {time.perf_counter() - t:.2f} s; "
          f"{a.threads} threads, {a.reps} reps")
    only = set(a.only.split(",")) if a.only else None
    files = [os.path.join(ROOT, "benches", f) for f in ("queries.sql", "breakers.sql")]
    for label, sql in (q for f in files if os.path.exists(f) for q in queries(f)):
        if only and label not in only:
            continue
        rows_out = run(con, sql)
        ts = []
        for _ in range(a.reps):
            t = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE __result AS {sql}")
            ts.append(time.perf_counter() - t)
        print(f"{label:<5} median {statistics.median(ts) * 1e3:9.2f} ms  rows_out={rows_out}")


if __name__ == "__main__":
    main()
