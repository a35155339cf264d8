#!/usr/bin/env bash
# Core performance figures in one run:
#  1. null engine, ycsb workload C, closed model, 16 users: ops/s and
#     scalelab CPU per operation (targets: >= 3,000,000 ops/s, <= 0.6 us/op);
#  2. recording one latency (go test -bench; target <= 50 ns);
#  3. phases with 100,000 concurrent sessions thinking 10 s on null:
#     resident memory (target <= 2 GiB) and scheduling lag p99 (< 10 ms);
#  4. phases with 1,000,000 concurrent sessions on null (50,000/s for 20 s):
#     thinking 10 s (500,000 operations due in the last 10 s): lag p99
#     < 10 ms, < 1 % late, peak RSS <= 2 GiB; thinking 60 s (none due):
#     peak RSS <= 1.5 GiB; and the scheduler alone waking a million jobs
#     over 10 s (go test -bench).
# Usage: bash bench/core.sh [seconds for run 1, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
go build -o bin/scalelab ./cmd/scalelab
. bench/lib.sh
bench_dir bench
machine "$(go version)"

echo
echo "== 1. null engine, ycsb C, closed, 16 users, ${secs}s"
bin/scalelab run ycsb --engine null --set ycsb.workload=c --users 16 --duration "${secs}s" --out "$out/null" --progress off >/dev/null
field "$out/null/run.json" "'throughput %.0f ops/s (target >= 3,000,000); scalelab CPU %.3f us/op (target <= 0.6); CPU utilisation %.0f%% of %d CPUs' % (r['totals']['throughput_per_s'], r['process']['cpu_per_op_us'], 100*r['process']['cpu_utilisation'], r['host']['cpus'])"

echo
echo "== 2. recording one latency"
go test ./metrics -run '^$' -bench 'BenchmarkRecord$|BenchmarkNow$' -benchtime 5000000x | grep -E '^Benchmark'
echo "(target: BenchmarkRecord <= 50 ns/op)"

echo
echo "== 3. phases: 10,000 sessions/s for 10 s, think 10 s, null engine (100,000 concurrent sessions)"
bin/scalelab run ycsb --engine null --phases 10s@10000/s --think 10s --set ycsb.session_ops=1000 --duration 25s --out "$out/phases" --progress off >/dev/null
field "$out/phases/run.json" "'max concurrent sessions %d; peak RSS %.0f MiB (target <= 2048); scheduling lag p50 %.3f ms, p99 %.3f ms (target < 10), p99.9 %s ms' % (r['max_sessions'], r['process']['max_rss_bytes']/2**20, r['schedule_lag']['p50_ms'], r['schedule_lag']['p99_ms'], r['schedule_lag']['p999_ms'])"

echo
echo "== 4. phases: 50,000 sessions/s for 20 s on null (1,000,000 concurrent sessions)"
for think in 10s 60s; do
  bin/scalelab run ycsb --engine null --set ycsb.workload=c --phases 20s@50000/s --think "$think" --audit=false --out "$out/million-$think" --progress off >/dev/null
  field "$out/million-$think/run.json" "'think $think: max concurrent sessions %d; peak RSS %.0f MiB (target <= %s); operations %d, schedule lag p99 %s ms (target < 10), late %.2f%% (target < 1); scalelab %.2f cores' % (r['max_sessions'], r['process']['max_rss_bytes']/2**20, '2048' if '$think' == '10s' else '1536', r['totals']['count'], (r.get('schedule_lag') or {}).get('p99_ms'), 100*sum(s['late'] for s in r['summary'].values())/max(r['totals']['count'], 1), (r['process']['cpu_user_s']+r['process']['cpu_sys_s'])/r['process']['wall_s'])"
done
go test ./load -run '^$' -bench 'BenchmarkSchedulerWake$' -benchtime 1x | grep -E '^Benchmark'
echo "(targets: lag-p99-ms < 10, late-% < 1)"
