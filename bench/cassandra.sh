#!/usr/bin/env bash
# logs on Cassandra: a 1-node vs a 3-node local ring. For each
# size it times `scalelab cluster up` (until every node is UN and the
# scalelab superuser is set up), then, with the SAI secondary indexes
# (logs.indexes=on), without them (off: the bare table, counts as ALLOW
# FILTERING scans) and with query tables kept at write time instead
# (off, logs.query_tables=true), measures
#  1. single-record writes (logs.mix=write), closed model;
#  2. reads by id (logs.mix=read), closed model;
#  3. count_a/count_b/count_c (logs.mix=count_a:1,count_b:1,count_c:1);
# and stops the ring. Replication factor = node count (1 or 3), QUORUM
# reads and writes (the engine's defaults).
# Usage: bash bench/cassandra.sh [seconds per measured run, default 20]
# Environment: HEAP (per node, default 768m), USERS (default 16), RECORDS
# (loaded before each run, default 50000).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
heap=${HEAP:-768m}
users=${USERS:-16}
records=${RECORDS:-50000}
make -s build java >/dev/null
. bench/lib.sh
bench_dir bench-cassandra home
machine "$(load_average)"
echo "cassandra, heap $heap per node, $users users, ${secs}s per run (5 s warm-up), $records records loaded per configuration, QUORUM"

run() { # run NAME CLUSTER ARGS...
  local name=$1 cl=$2
  shift 2
  quiet "$out/$cl-$name.log" bin/scalelab run logs --engine cassandra --cluster "$cl" --progress off --out "$out/$cl-$name" "$@"
}

line() { # line RUN-DIR OP LABEL
  field "$1/run.json" "'$3: %.0f/s, mean %.2f ms, p99 %s, errors %d' % (r['summary']['$2']['throughput_per_s'], r['summary']['$2']['mean_ms'], '%.2f ms' % r['summary']['$2']['p99_ms'] if r['summary']['$2']['p99_ms'] is not None else 'n/a (too few samples)', r['summary']['$2']['errors'])"
}

for nodes in 1 3; do
  cl="bench$nodes"
  echo
  echo "== $nodes node(s), heap $heap each, replication factor $nodes"
  timed_up cassandra "$cl" --nodes "$nodes" --heap "$heap"
  for ix in on off tables; do
    arm=(--set logs.indexes=$ix)
    if [ "$ix" = tables ]; then arm=(--set logs.indexes=off --set logs.query_tables=true); fi
    echo "-- ${arm[*]}"
    # load once per configuration, then run on the loaded records
    run "load$ix" "$cl" --load-only --set logs.records="$records" "${arm[@]}"
    common=(--set logs.load=false --set logs.records=0 "${arm[@]}" --users "$users" --duration "${secs}s" --warmup 5s)
    run "write$ix" "$cl" --set logs.mix=write:1 "${common[@]}"
    line "$out/$cl-write$ix" logs.write "writes"
    run "read$ix" "$cl" --set logs.mix=read:1 "${common[@]}"
    line "$out/$cl-read$ix" logs.read "reads by id"
    run "count$ix" "$cl" --set logs.mix=count_a:1,count_b:1,count_c:1 "${common[@]}"
    line "$out/$cl-count$ix" logs.count_a "count_a"
    line "$out/$cl-count$ix" logs.count_b "count_b"
    line "$out/$cl-count$ix" logs.count_c "count_c"
  done
  bin/scalelab cluster down "$cl" >/dev/null
done
