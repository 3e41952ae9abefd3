#!/usr/bin/env bash
# The 50-stage `weir run` measurement of docs/PERFORMANCE.md.
#
# usage: benches/run_project.sh WEIR_BINARY [ROWS] [THREADS]
#
# Generates a project of 50 stages in a temporary folder: 10 stages each
# reading a slice of one generated Parquet file, then 4 layers of 10 stages,
# each reading one stage of the layer before (10 independent chains of 5).
# Times a full run, a no-change rerun, and a rerun after editing one stage
# of the first layer, and prints how many stages ran at once at most.
set -euo pipefail
weir=$(realpath "$1")
rows=${2:-2000000}
threads=${3:-$(nproc)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$weir" -c "COPY (SELECT range AS id, range % 1000 AS k, (range * 7) % 10007 AS v FROM range($rows)) TO 'data.parquet'" >/dev/null
for i in $(seq 0 9); do
  echo "SELECT id, k, v + $i AS v FROM 'data.parquet' WHERE id % 10 = $i" > "l0_$i.sql"
  for j in 1 2 3 4; do
    prev="l$((j - 1))_$i"
    echo "SELECT id, k, (v * $((j + 2))) % 100003 AS v FROM $prev WHERE v % $((j + 6)) <> 0 ORDER BY v, id" > "l${j}_$i.sql"
  done
done
ls *.sql | wc -l | xargs echo "stages:"
timed() {
  local label=$1; shift
  local start end
  start=$(date +%s.%N)
  "$weir" run . --threads "$threads" "$@" > "$label.log"
  end=$(date +%s.%N)
  echo "$label: $(echo "$end - $start" | bc) s wall; $(tail -1 "$label.log")"
}
timed full
timed nochange
echo "SELECT id, k, v + 100 AS v FROM 'data.parquet' WHERE id % 10 = 3" > l0_3.sql
timed edit
# the most stages running at once in the full run, from their spans
awk '/^ran/ { s = $NF; gsub(/[\[\]s]/, "", s); split(s, p, /\.\./); print p[1], 1; print p[2], -1 }' full.log \
  | sort -n -k1,1 -k2,2 | awk '{ n += $2; if (n > m) m = n } END { print "most stages running at once (full run):", m }'
awk '/^ran/ { for (i = 1; i <= NF; i++) if ($i == "in") { gsub(/s/, "", $(i+1)); t += $(i+1) } } END { print "sum of stage times (full run):", t, "s" }' full.log
# the same project one stage at a time (one mutex group), from scratch
rm -rf .weir
for f in *.sql; do { echo "-- mutex: one"; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"; done
timed serial
