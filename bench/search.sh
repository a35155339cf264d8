#!/usr/bin/env bash
# logs on OpenSearch: a 1-node vs a 3-node local cluster (issue: search
# engines). For each size it times `scalelab cluster up`, then measures
#  1. single-record writes (logs.mix=write), closed model;
#  2. reads by id (logs.mix=read), closed model;
#  3. freshness: the study's probe (10,000 records with one new timestamp
#     written at about 2,000/s by 8 writers, then a count every 100 ms until
#     all are visible), five probes one after the other;
# and stops the cluster. Shards follow the log study: 1 on one node, 6 on
# the cluster; no replicas.
# Usage: bash bench/search.sh [seconds per measured run, default 30]
# Environment: HEAP (per node, default 1g), USERS (default 16), RECORDS
# (loaded before each run, default 200000), ENGINE (default opensearch).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
heap=${HEAP:-1g}
users=${USERS:-16}
records=${RECORDS:-200000}
engine=${ENGINE:-opensearch}
make -s build java >/dev/null
out=$(mktemp -d /tmp/scalelab-bench-search.XXXXXX)
export SCALELAB_HOME="$out/home"
clusters=()
cleanup() {
  for c in "${clusters[@]}"; do bin/scalelab cluster down "$c" >/dev/null 2>&1 || true; done
  rm -rf "$out"
}
trap cleanup EXIT
echo "machine: $(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/Mem:/{print $2}') GiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "engine $engine, heap $heap per node, $users users, ${secs}s per run (5 s warm-up), $records records loaded per run"

field() { # field FILE PYTHON-EXPRESSION-ON-r
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

run() { # run NAME CLUSTER SHARDS ARGS...
  local name=$1 cl=$2 shards=$3
  shift 3
  if ! bin/scalelab run logs --engine "$engine" --cluster "$cl" --progress off --out "$out/$cl-$name" \
    --set logs.records="$records" --set "$engine.shards=$shards" --set "$engine.replicas=0" "$@" >"$out/$cl-$name.log" 2>&1; then
    cat "$out/$cl-$name.log" >&2
    exit 1
  fi
}

for nodes in 1 3; do
  cl="bench$nodes"
  shards=1
  [ "$nodes" -gt 1 ] && shards=6
  echo
  echo "== $nodes node(s), $shards shard(s)"
  clusters+=("$cl")
  start=$(date +%s.%N)
  if ! bin/scalelab cluster up "$engine" --name "$cl" --nodes "$nodes" --heap "$heap" >"$out/$cl-up.log" 2>&1; then
    cat "$out/$cl-up.log" >&2
    exit 1
  fi
  python3 -c "import sys,time; print('cluster up: %.1f s' % (time.time() - float(sys.argv[1])))" "$start"

  run write "$cl" "$shards" --set logs.mix=write:1 --users "$users" --duration "${secs}s" --warmup 5s
  field "$out/$cl-write/run.json" "'writes: %.0f/s, mean %.2f ms, p99 %.2f ms, errors %d' % (r['summary']['logs.write']['throughput_per_s'], r['summary']['logs.write']['mean_ms'], r['summary']['logs.write']['p99_ms'], r['summary']['logs.write']['errors'])"

  run read "$cl" "$shards" --set logs.mix=read:1 --users "$users" --duration "${secs}s" --warmup 5s
  field "$out/$cl-read/run.json" "'reads by id: %.0f/s, mean %.2f ms, p99 %.2f ms, errors %d' % (r['summary']['logs.read']['throughput_per_s'], r['summary']['logs.read']['mean_ms'], r['summary']['logs.read']['p99_ms'], r['summary']['logs.read']['errors'])"

  run fresh "$cl" "$shards" --set logs.mix=freshness:1 --users 1 --ops 10
  field "$out/$cl-fresh/run.json" "(lambda f: 'freshness (default 1 s refresh): %d probes, %d failed; delay mean %.0f ms, min %.0f, max %.0f; polls mean %.1f' % (f['probes'], f['failed_probes'], f['delay_ms']['mean'], f['delay_ms']['min'], f['delay_ms']['max'], f['polls']['mean']))(r['scenario_report']['freshness'])"

  bin/scalelab cluster down "$cl" >/dev/null
  clusters=()
done
