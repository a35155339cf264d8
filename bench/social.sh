#!/usr/bin/env bash
# The social scenario on SQLite with the study's defaults: 50,000 users,
# 250,000 operations shared by all users (--ops), closed model with 8 users
# and no think time, for each key chooser (uniform, zipfian, the friend
# walk) and both mixes; then the graph build and figures as Go benchmarks.
# Prints throughput and read/update latencies per run, and the walk's
# friend share.
# Usage: bash bench/social.sh [ops per run, default 250000]
# Environment: USERS (virtual users, default 8), ENGINE (default sqlite;
# others need --target/--cluster in EXTRA), EXTRA (more run flags).
set -euo pipefail
cd "$(dirname "$0")/.."
ops=${1:-250000}
users=${USERS:-8}
engine=${ENGINE:-sqlite}
make -s build >/dev/null
. bench/lib.sh
bench_dir bench-social
machine "$(load_average)"
echo "social on $engine: 50,000 users, $ops operations, $users users (closed, no think time)"
printf '%-6s %-8s %9s %10s %9s %9s %9s %9s %8s\n' mix keys load_s ops/s read_p50 read_p99 upd_p50 upd_p99 friends
for mix in d1 d2; do
  for keys in uniform zipfian social; do
    dir="$out/$mix-$keys"
    # shellcheck disable=SC2086
    if ! bin/scalelab run social --engine "$engine" --ops "$ops" --users "$users" --progress off --out "$dir" \
      --set social.mix="$mix" --set social.keys="$keys" ${EXTRA:-} >"$dir.log" 2>&1; then
      cat "$dir.log" >&2
      exit 1
    fi
    python3 - "$dir/run.json" "$mix" "$keys" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
tot = sum(v.get("throughput_per_s") or 0 for v in s.values())
def ms(op, q):
    v = s.get(op, {}).get(q)
    return "-" if v is None else f"{v:.3f}"
walk = r.get("scenario_report", {}).get("walk", {})
fs = walk.get("friend_share")
print(f'{sys.argv[2]:<6} {sys.argv[3]:<8} {r["load_phase"]["seconds"]:9.1f} {tot:10.0f} '
      f'{ms("users.read","p50_ms"):>9} {ms("users.read","p99_ms"):>9} {ms("users.update","p50_ms"):>9} {ms("users.update","p99_ms"):>9} '
      f'{"-" if fs is None else f"{fs:.3f}":>8}')
PY
  done
done
echo
echo "graph (50,000 users, m=10, mu=0.1):"
go test -run '^$' -bench 'BuildKE|GraphStats' -benchmem -count 3 ./scenario/social | grep Benchmark
