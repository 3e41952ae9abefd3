#!/bin/bash
# Parallel efficiency of the lineitem shapes on a 2-CPU machine whose CPUs
# may run at different speeds (docs/PERFORMANCE.md, sixth session of
# 2026-11-26): each query on 1 thread pinned to CPU 0, on 1 thread pinned
# to CPU 1, and on 2 threads, alternated ROUNDS times; per query the
# medians, the ideal 2-thread time 1/(1/a+1/b) and the efficiency (the
# ideal over the 2-thread time).
#
# usage: benches/efficiency.sh COMPARE_BINARY QUERIES [ROUNDS]
#   COMPARE_BINARY: the benchmark harness, from
#     cargo bench -p weir-engine --bench compare --no-run
#   QUERIES: e.g. G1,S1,T10 (names in benches/queries.sql, benches/breakers.sql)
#   The TPC-H SF 1 Parquet files must be in target/tpch-data/sf1
#   (`cargo xtask bench lineitem` writes them).
set -euo pipefail
BIN=$1; Q=$2; R=${3:-3}
cd "$(dirname "$0")/.."
out=$(mktemp)
for _ in $(seq "$R"); do
  for mode in cpu0 cpu1 2t; do
    case $mode in
      cpu0) run=(taskset -c 0 "$BIN"); t=1 ;;
      cpu1) run=(taskset -c 1 "$BIN"); t=1 ;;
      2t) run=("$BIN"); t=2 ;;
    esac
    "${run[@]}" --data target/tpch-data/sf1 --sf 1 --tables lineitem \
      --queries benches/queries.sql --queries benches/breakers.sql \
      --threads "$t" --reps 5 --only "$Q" --out "$out.tsv" >/dev/null 2>&1
    awk -v m="$mode" '{print m, $1, $2}' "$out.tsv" >> "$out"
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mode, q, ms = line.split()
    d[(q, mode)].append(float(ms))
print("| shape | CPU 0, 1 thread | CPU 1, 1 thread | 2 threads | ideal | efficiency |")
print("|---|---:|---:|---:|---:|---:|")
for q in sorted({q for q, _ in d}):
    a, b, t = (statistics.median(d[(q, m)]) for m in ("cpu0", "cpu1", "2t"))
    ideal = 1 / (1 / a + 1 / b)
    print(f"| {q} | {a:.1f} | {b:.1f} | {t:.1f} | {ideal:.1f} | {ideal / t:.2f} |")
PY
rm -f "$out" "$out.tsv"
