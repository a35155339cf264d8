#!/usr/bin/env bash
# The social study's single-node run (mixes D1 and D2, uniform keys) on
# three stores of this machine, interleaved ROUNDS times: FerretDB v1.24.2 on
# its SQLite backend through the mongodb engine (scalelab cluster up
# ferretdb), PostgreSQL 15 (scalelab cluster up postgres) and embedded
# SQLite. Prints each run's ops/s and, per store and mix, the mean.
# Usage: bash bench/mongodb.sh [seconds per run, default 10] [rounds, default 3] [users, default 4]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
rounds=${2:-3}
users=${3:-4}
go build -o bin/scalelab ./cmd/scalelab
make -s ferretdb
. bench/lib.sh
bench_dir mongodb home
bench_cluster fdb
bench_cluster pg
machine "$(go version)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bin/scalelab cluster up ferretdb --name fdb >/dev/null
bin/scalelab cluster up postgres --name pg >/dev/null
common=(--users "$users" --duration "${secs}s" --warmup 2s --progress off --set social.users=2000 --set social.keys=uniform)
store_args() {
  case $1 in
    ferretdb) echo "--cluster fdb" ;;
    postgres) echo "--cluster pg" ;;
    sqlite) echo "--engine sqlite --target $out/social.db" ;;
  esac
}
# Load each store once; the runs then reuse the data (social.load=false).
for s in ferretdb postgres sqlite; do
  # shellcheck disable=SC2046
  bin/scalelab run social $(store_args $s) "${common[@]}" --load-only --out "$out/load-$s" >/dev/null
done
printf '%-9s %-4s %6s %10s\n' store mix round ops/s
for r in $(seq 1 "$rounds"); do
  for mix in d1 d2; do
    for s in ferretdb postgres sqlite; do
      dir="$out/$s-$mix-$r"
      # shellcheck disable=SC2046
      bin/scalelab run social $(store_args $s) "${common[@]}" --set social.mix=$mix --set social.load=false --out "$dir" >/dev/null
      ops=$(python3 -c "import json;print('%.1f' % json.load(open('$dir/run.json'))['totals']['throughput_per_s'])")
      printf '%-9s %-4s %6s %10s\n' "$s" "$mix" "$r" "$ops" | tee -a "$out/table"
    done
  done
done
echo "mean ops/s per store and mix:"
awk '{k=$1" "$2; s[k]+=$4; n[k]++} END {for (k in s) printf "  %-14s %10.1f\n", k, s[k]/n[k]}' "$out/table" | sort
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
