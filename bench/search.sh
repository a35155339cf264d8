#!/usr/bin/env bash
# logs on OpenSearch: a 1-node vs a 3-node local cluster. For each size it
# times `scalelab cluster up`, then measures
#  1. single-record writes (logs.mix=write), closed model;
#  2. reads by id (logs.mix=read), closed model;
#  3. freshness: the study's probe (10,000 records with one new timestamp
#     written at about 2,000/s by 8 writers, then a count every 100 ms until
#     all are visible), five probes one after the other;
# and stops the cluster. One node runs with 1 shard (the log study's single
# node) and with 6; the cluster with 6 (the study's clusters); no replicas.
# Usage: bash bench/search.sh [seconds per measured run, default 30]
# Environment: HEAP (per node, default 1g), USERS (default 16), RECORDS
# (loaded before each run, default 100000), ENGINE (default opensearch).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
heap=${HEAP:-1g}
users=${USERS:-16}
records=${RECORDS:-100000}
engine=${ENGINE:-opensearch}
make -s build java >/dev/null
. bench/lib.sh
bench_dir bench-search home
machine "$(load_average)"
echo "engine $engine, heap $heap per node, $users users, ${secs}s per run (5 s warm-up), $records records loaded per run"

run() { # run NAME CLUSTER SHARDS ARGS...
  local name=$1 cl=$2 shards=$3
  shift 3
  quiet "$out/$cl-$name.log" bin/scalelab run logs --engine "$engine" --cluster "$cl" --progress off --out "$out/$cl-$name" \
    --set logs.records="$records" --set "$engine.shards=$shards" --set "$engine.replicas=0" "$@"
}

# configurations: nodes:shards. The log study used 1 shard on one node and
# 6 on clusters; 6 shards on one node separates the effect of the shard
# count (each shard has its own translog, fsynced per write request) from
# that of the node count.
for nodes in 1 3; do
  cl="bench$nodes"
  echo
  echo "== $nodes node(s), heap $heap each"
  timed_up "$engine" "$cl" --nodes "$nodes" --heap "$heap"
  shard_counts="6"
  [ "$nodes" -eq 1 ] && shard_counts="1 6"
  for shards in $shard_counts; do
    echo "-- $shards shard(s), no replicas"
    run "write$shards" "$cl" "$shards" --set logs.mix=write:1 --users "$users" --duration "${secs}s" --warmup 5s
    field "$out/$cl-write$shards/run.json" "'writes: %.0f/s, mean %.2f ms, p99 %.2f ms, errors %d' % (r['summary']['logs.write']['throughput_per_s'], r['summary']['logs.write']['mean_ms'], r['summary']['logs.write']['p99_ms'], r['summary']['logs.write']['errors'])"

    run "read$shards" "$cl" "$shards" --set logs.mix=read:1 --users "$users" --duration "${secs}s" --warmup 5s
    field "$out/$cl-read$shards/run.json" "'reads by id: %.0f/s, mean %.2f ms, p99 %.2f ms, errors %d' % (r['summary']['logs.read']['throughput_per_s'], r['summary']['logs.read']['mean_ms'], r['summary']['logs.read']['p99_ms'], r['summary']['logs.read']['errors'])"

    run "fresh$shards" "$cl" "$shards" --set logs.mix=freshness:1 --users 1 --ops 10
    field "$out/$cl-fresh$shards/run.json" "(lambda f, w: 'freshness (default 1 s refresh): %d probes, %d failed; delay mean %.0f ms, min %.0f, max %.0f; polls mean %.1f; probe writes %.0f/s' % (f['probes'], f['failed_probes'], f['delay_ms']['mean'], f['delay_ms']['min'], f['delay_ms']['max'], f['polls']['mean'], w))(r['scenario_report']['freshness'], 10000 / (r['summary']['logs.freshness_write']['mean_ms'] / 1000))"
  done
  bin/scalelab cluster down "$cl" >/dev/null
done
