#!/usr/bin/env bash
# The acknowledged-write audit's cost (docs/audit.md):
#  1. go test -bench: one audited write (invocation + outcome line), one
#     operation that wrote nothing, reading the history of 1,000,000 writes;
#  2. scalelab on the null engine, ycsb workload D (5 % inserts, every one
#     audited), with and without --audit, alternating, N repeats each:
#     throughput and scalelab's CPU per operation;
#  3. the same with ycsb workload D's inserts read back on the memory engine
#     (the read-back's speed).
# Usage: bash bench/audit.sh [repeats, default 3] [ops per run, default 3000000]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
ops=${2:-3000000}
go build -o bin/scalelab ./cmd/scalelab
. bench/lib.sh
bench_dir bench
machine "$(load_average)" "$(go version)"

echo
echo "== 1. history writes"
go test ./audit -run '^$' -bench 'BenchmarkLog' -benchtime 2s | grep -E '^Benchmark'
go test ./audit -run '^$' -bench 'BenchmarkReadHistory' -benchtime 3x -benchmem | grep -E '^Benchmark'

echo
echo "== 2. null engine, ycsb D, closed, 8 users, $ops operations, audit on/off x $reps"
for i in $(seq "$reps"); do
  for a in true false; do
    d="$out/null-$a-$i"
    bin/scalelab run ycsb --engine null --set ycsb.workload=d --set ycsb.records=1000 --ops "$ops" --users 8 --audit=$a --out "$d" --progress off >/dev/null 2>&1
    field "$d/run.json" "'audit=%-5s %9.0f ops/s  %.3f us CPU/op  %d inserts logged' % ('$a', r['totals']['throughput_per_s'], r['process']['cpu_per_op_us'], (r.get('audit') or {}).get('attempted', 0))"
  done
done

echo
echo "== 3. read-back on memory (ycsb D, $ops operations)"
d="$out/memory"
bin/scalelab run ycsb --engine memory --set ycsb.workload=d --set ycsb.records=1000 --ops "$ops" --users 8 --out "$d" --progress off >/dev/null 2>&1
field "$d/run.json" "'%d items read back in %.3f s, %d lost' % (r['audit']['read_back'], r['audit']['read_back_s'], r['audit']['lost'])"
