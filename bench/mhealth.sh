#!/usr/bin/env bash
# mhealth on a local 2-node OpenSearch cluster (default 1 s refresh vs
# refresh after every write) next to a local PostgreSQL primary, from one
# script: stale reads and activity.post p50/p99 of each.
# Usage: bash bench/mhealth.sh [seconds per run, default 30] [users, default 8]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
users=${2:-8}
go build -o bin/scalelab ./cmd/scalelab
. bench/lib.sh
bench_dir bench-mhealth home
bench_cluster mhos
bench_cluster mhpg
machine

row() { # row LABEL RESULTS_DIR
  python3 - "$1" "$2" <<'PY'
import json, sys
label, d = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/run.json"))
s = r["summary"]["activity.post"]
rep = r.get("scenario_report") or {}
st, fr = rep.get("stale_reads", {}), rep.get("fresh_reads", {})
def pct(op):
    a, b = st.get(op, 0), fr.get(op, 0)
    return f"{a}/{a+b} ({100*a/(a+b):.0f}%)" if a + b else "-"
f = lambda v: "-" if v is None else f"{v:.2f}"
print(f"{label:<34} post p50 {f(s['p50_ms']):>7} ms  p99 {f(s['p99_ms']):>8} ms  posts/s {s['throughput_per_s']:8.1f}  stale totals {pct('totals.get'):>16}  stale achievements {pct('achievements.get'):>16}  status {r['status']}")
PY
}

echo "== cluster up opensearch, 2 nodes"
/usr/bin/time -f "cluster up took %e s" bin/scalelab cluster up opensearch --name mhos --nodes 2 --heap 512m >/dev/null
bin/scalelab run mhealth --engine opensearch --cluster mhos --users "$users" --duration "${secs}s" --warmup 5s --out "$out/os-default" --progress off >/dev/null
bin/scalelab run mhealth --engine opensearch --cluster mhos --users "$users" --duration "${secs}s" --warmup 5s --set opensearch.refresh=true --out "$out/os-refresh" --progress off >/dev/null
bin/scalelab cluster down mhos >/dev/null

echo "== cluster up postgres, primary only"
bin/scalelab cluster up postgres --name mhpg >/dev/null
bin/scalelab run mhealth --engine postgres --cluster mhpg --users "$users" --duration "${secs}s" --warmup 5s --out "$out/pg" --progress off >/dev/null
bin/scalelab cluster down mhpg >/dev/null

echo
echo "mhealth, $users patients (closed model, no think time), ${secs}s each:"
row "opensearch 2 nodes, refresh 1s" "$out/os-default"
row "opensearch 2 nodes, refresh=true" "$out/os-refresh"
row "postgres primary" "$out/pg"
