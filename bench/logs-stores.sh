#!/usr/bin/env bash
# The log study's stores side by side: examples/logs-stores.yaml's quick
# profile (write, read, counts and freshness tests on PostgreSQL, a 1-node
# OpenSearch, and Cassandra with SAI indexes, as a bare table and with query
# tables; 20,000 records, 5-second runs, 3 interleaved repeats), too long
# for CI (about 15 minutes here with the clusters' start-up). scalelab starts
# and stops every cluster. Prints the experiment's tables; the results stay
# in the directory it names.
# Usage: bash bench/logs-stores.sh [--profile NAME] [--repeats N]   (arguments go to `experiment run`)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build java >/dev/null
out=$(mktemp -d /tmp/scalelab-bench-logs.XXXXXX)
export SCALELAB_HOME="$out/home"
. bench/lib.sh
machine "$(load_average)"
start=$(date +%s)
bin/scalelab experiment run examples/logs-stores.yaml --out "$out/results" "$@"
echo "took $(( $(date +%s) - start )) s; results in $out/results"
