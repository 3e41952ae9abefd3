#!/usr/bin/env python3
"""Queries on a file in place, Weir beside DuckDB in one run.

    python3 benches/files_compare.py WEIR_BINARY [DIR] [THREADS] [RUNS]

DIR holds big.csv and big.parquet (made when missing, with DuckDB: 20M
rows of `id, k = id % 1000, s = 'name' || id, v = random()`; keep them
out of the repository, e.g. under /tmp). Each query runs RUNS times (3) in
a fresh process per engine on THREADS threads (2); the table gives the
median wall time of the process and its peak resident memory (ru_maxrss).
DuckDB runs in `python3` (`import duckdb`), so its memory includes the
interpreter's (about 40 MB) and its time the import (about 0.1 s);
`duckdb q` is its query alone, timed inside the process.
"""

import os
import resource
import statistics
import subprocess
import sys
import time

QUERIES = [
    ("count(*)", "SELECT count(*) FROM '{f}'"),
    ("filter", "SELECT id, s, v FROM '{f}' WHERE id = 12345678"),
    ("LIMIT 1", "SELECT s FROM '{f}' LIMIT 1"),
    ("GROUP BY", "SELECT k, count(*) AS n, sum(v) AS sv FROM '{f}' GROUP BY k"),
]

DUCKDB = """
import duckdb, sys, time
c = duckdb.connect()
c.sql("SET threads={threads}")
c.sql("SET enable_progress_bar=false")
t = time.perf_counter()
rows = c.sql(sys.argv[1]).fetchall()
print(time.perf_counter() - t, len(rows), file=sys.stderr)
"""


def make_files(folder):
    import duckdb

    csv = os.path.join(folder, "big.csv")
    parquet = os.path.join(folder, "big.parquet")
    c = duckdb.connect()
    if not os.path.exists(csv):
        c.sql(
            "COPY (SELECT i AS id, i % 1000 AS k, 'name' || i AS s, random() AS v "
            f"FROM range(20000000) t(i)) TO '{csv}' (HEADER)"
        )
    if not os.path.exists(parquet):
        c.sql(f"COPY (SELECT * FROM read_csv('{csv}')) TO '{parquet}' (FORMAT parquet)")
    return csv, parquet


def run(cmd, runs):
    times, peaks, inner = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read()
        proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{cmd[:3]} failed: {err}")
        times.append(wall)
        peaks.append(usage.ru_maxrss * 1024)
        # DuckDB's script ends with its query's time
        last = err.strip().splitlines()[-1:] or [""]
        try:
            inner.append(float(last[0].split()[0]))
        except (ValueError, IndexError):
            pass
    return (
        statistics.median(times),
        statistics.median(peaks),
        statistics.median(inner) if inner else None,
    )


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    weir = sys.argv[1]
    folder = sys.argv[2] if len(sys.argv) > 2 else "/tmp/files_compare"
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    os.makedirs(folder, exist_ok=True)
    csv, parquet = make_files(folder)
    script = DUCKDB.format(threads=threads)
    print(f"{threads} threads, median of {runs}, a fresh process per run")
    print("| file | query | Weir s | DuckDB s | duckdb q s | ratio | Weir MB | DuckDB MB | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, path in [("CSV", csv), ("Parquet", parquet)]:
        for label, sql in QUERIES:
            q = sql.format(f=path)
            w_t, w_m, _ = run([weir, "--threads", str(threads), "--format", "csv", "-c", q], runs)
            d_t, d_m, d_q = run(["python3", "-c", script, q], runs)
            print(
                f"| {name} | {label} | {w_t:.2f} | {d_t:.2f} | {d_q or 0:.2f} | {w_t / d_t:.2f} "
                f"| {w_m / 1e6:.0f} | {d_m / 1e6:.0f} | {w_m / d_m:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
