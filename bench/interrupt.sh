#!/usr/bin/env bash
# Ctrl-C during a run (docs/audit.md, "After the run" and "Cost at scale"): a 60 s ycsb
# workload A run on the null engine (16 users; AUDIT=true forces the audit
# on, so that its history is written; by default it is off on null) is
# interrupted 4 s in, N times each way:
#  1. SIGINT to scalelab alone (what a terminal's Ctrl-C delivers);
#  2. `timeout --preserve-status -s INT 4`, which signals scalelab and then
#     its whole process group: the signal arrives twice.
# Each try must exit 3 within 1 s of the signal, with run.json (status
# "interrupted") and report.html written. Prints one line a try and a
# tally; exits 1 if any try fails.
# Usage: bash bench/interrupt.sh [tries each way, default 20] [scalelab binary, default: built into bin/]
set -uo pipefail
cd "$(dirname "$0")/.."
tries=${1:-20}
bin=${2:-}
if [ -z "$bin" ]; then
  go build -o bin/scalelab ./cmd/scalelab || exit 1
  bin=bin/scalelab
fi
. bench/lib.sh
bench_dir interrupt
machine "$(load_average)"
args=(run ycsb --engine null --set ycsb.workload=a --users 16 --duration 60s --progress off)
if [ -n "${AUDIT:-}" ]; then
  args+=(--audit="$AUDIT")
fi
echo "scalelab ${args[*]}"
status() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" "$1" 2>/dev/null || echo none; }
fails=0
check() { # check NAME CODE SECONDS DIR
  local st rep=no
  st=$(status "$4/run.json")
  [ -f "$4/report.html" ] && rep=yes
  local ok=ok
  if [ "$2" != 3 ] || [ "$st" != interrupted ] || [ "$rep" != yes ] || ! python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1.0 else 1)" "$3"; then
    ok=FAIL
    fails=$((fails + 1))
  fi
  printf '%-8s exit %s, %.2f s after the signal, run.json %s, report.html %s: %s\n' "$1" "$2" "$3" "$st" "$rep" "$ok"
}
for i in $(seq "$tries"); do
  d="$out/kill-$i"
  "$bin" "${args[@]}" --out "$d" >/dev/null 2>&1 &
  pid=$!
  sleep 4
  t0=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid"
  code=$?
  t1=$(date +%s.%N)
  check "kill-$i" "$code" "$(echo "$t1 - $t0" | bc)" "$d"

  d="$out/timeout-$i"
  t0=$(date +%s.%N)
  timeout --preserve-status -s INT 4 "$bin" "${args[@]}" --out "$d" >/dev/null 2>&1
  code=$?
  t1=$(date +%s.%N)
  check "timeout-$i" "$code" "$(echo "$t1 - $t0 - 4" | bc)" "$d"
done
echo "$((2 * tries - fails)) of $((2 * tries)) tries exited 3 within 1 s with run.json and report.html"
[ "$fails" = 0 ]
