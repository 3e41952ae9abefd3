#!/usr/bin/env python3
"""DuckDB's side of `cargo xtask bench tpch|lineitem` (Weir's side is
crates/engine/benches/compare.rs; same arguments, same output).

usage: python3 benches/compare_peer.py --data DIR [--tables T,..] --queries PATH [--queries PATH]
           [--threads N] [--reps 5] [--only Q01,Q03] [--memory] [--out FILE]

Loads each DIR/<table>.parquet into an in-memory table (as Weir does), runs
each query once to warm up and then --reps times, and reports the median;
each result is materialised in a temporary table (as Weir returns batches),
not converted to Python objects. --memory runs each query once more in a
fresh process and reports the growth of its peak resident set over the set
right after loading. Output: label, median ms, rows, peak bytes, error
(tab-separated, one line per query). `{data}` in a query is replaced by
the data folder, so a query may read the Parquet files themselves.
"""
import argparse, os, re, statistics, subprocess, sys, time

import duckdb

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]


def queries(path, data):
    if os.path.isdir(path):
        for f in sorted(p for p in os.listdir(path) if p.endswith(".sql")):
            text = open(os.path.join(path, f)).read().strip().rstrip(";").replace("{data}", data)
            yield os.path.splitext(f)[0].upper(), text
        return
    label = ""
    for line in open(path):
        if line.startswith("-- "):
            # the label is the first word; the rest says what it shows
            label = (line[3:].split() or [""])[0]
            continue
        sql = line.strip().rstrip(";").replace("{data}", data)
        if sql:
            yield label, sql


def status_bytes(field):
    m = re.search(field + r"\s+(\d+)", open("/proc/self/status").read())
    return int(m.group(1)) * 1024 if m else 0


def run(con, sql):
    con.execute(f"CREATE OR REPLACE TEMP TABLE __result AS {sql}")
    return con.execute("SELECT count(*) FROM __result").fetchone()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--sf", default="1")  # accepted for symmetry; the data is already generated
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--queries", action="append", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default=None)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", default=None)
    a = ap.parse_args()

    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    start = time.perf_counter()
    for t in a.tables.split(","):
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_parquet('{os.path.join(a.data, t + '.parquet')}')")
    all_queries = [q for p in a.queries for q in queries(p, os.path.abspath(a.data))]
    if a.child:
        sql = next(s for l, s in all_queries if l == a.child)
        before = status_bytes("VmRSS:")
        open("/proc/self/clear_refs", "w").write("5")
        try:
            run(con, sql)
        except duckdb.Error:
            pass
        print(f"peak_delta_bytes {max(0, status_bytes('VmHWM:') - before)}")
        return
    print(f"duckdb {duckdb.__version__}: loaded {a.tables} in {time.perf_counter() - start:.2f} s; "
          f"{a.threads} threads, {a.reps} reps", file=sys.stderr)
    only = set(a.only.split(",")) if a.only else None
    lines = []
    for label, sql in all_queries:
        if only and label not in only:
            continue
        error, rows, median = "", 0, 0.0
        try:
            rows = run(con, sql)
            ts = []
            for _ in range(a.reps):
                t = time.perf_counter()
                run(con, sql)
                ts.append(time.perf_counter() - t)
            median = statistics.median(ts) * 1e3 if ts else 0.0
        except duckdb.Error as e:
            error = str(e).replace("\t", " ").replace("\n", " ")
        peak = 0
        if a.memory and not error:
            args = [x for x in sys.argv[1:]]
            keep, i = [], 0
            while i < len(args):
                if args[i] in ("--out", "--only"):
                    i += 2
                elif args[i] == "--memory":
                    i += 1
                else:
                    keep.append(args[i]); i += 1
            out = subprocess.run([sys.executable, __file__, *keep, "--child", label],
                                 capture_output=True, text=True).stdout
            m = re.search(r"peak_delta_bytes (\d+)", out)
            peak = int(m.group(1)) if m else 0
        print(f"{label:<4} median {median:9.2f} ms  rows {rows:<8} peak {peak / 2**20:8.1f} MiB {error}",
              file=sys.stderr)
        lines.append(f"{label}\t{median:.3f}\t{rows}\t{peak}\t{error}")
    text = "".join(l + "\n" for l in lines)
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
