#!/usr/bin/env bash
# test-clusters.sh COMMAND...: runs COMMAND (the test suite) with one shared
# 1-node cluster per JVM engine (opensearch, elasticsearch, cassandra)
# started for the whole run, so that test binaries share them instead of
# each starting its own (engine/enginetest: CIClusters). Tests isolate their
# data on them by index prefix or keyspace. The clusters are stopped when the
# command ends, whatever happens. An engine whose cluster cannot start here
# (no JDK, no launcher) is left to the tests, which start their own or say
# what is missing.
set -u
cd "$(dirname "$0")/.." || exit 2
home=$(mktemp -d "${TMPDIR:-/tmp}/scalelab-test-clusters.XXXXXX")
bin="$home/scalelab"
go build -o "$bin" ./cmd/scalelab || exit 2
stop() {
  for st in "$home"/clusters/ci-*/cluster.json; do
    [ -f "$st" ] || continue
    SCALELAB_HOME="$home" "$bin" cluster down "$(basename "$(dirname "$st")")" >/dev/null 2>&1 || true
  done
  rm -rf "$home"
}
trap stop EXIT
trap 'exit 130' INT TERM
up() { # up ENGINE HEAP
  local name="ci-$1"
  if ! SCALELAB_HOME="$home" "$bin" cluster up "$1" --name "$name" --nodes 1 --heap "$2" >"$home/$name.log" 2>&1; then
    echo "note: no shared $1 test cluster ($(tail -1 "$home/$name.log")); its tests start their own" >&2
    SCALELAB_HOME="$home" "$bin" cluster down "$name" >/dev/null 2>&1 || true
  fi
}
up opensearch 384m &
p1=$!
up elasticsearch 384m &
p2=$!
wait $p1 $p2
up cassandra 512m
started=()
for st in "$home"/clusters/ci-*/cluster.json; do
  [ -f "$st" ] && started+=("$(basename "$(dirname "$st")")")
done
echo "shared test clusters: ${started[*]:-none}" >&2
SCALELAB_TEST_CLUSTERS="$home/clusters" "$@"
