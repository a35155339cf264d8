#!/usr/bin/env bash
# PostgreSQL figures (the postgres engine and the logs scenario), on one
# local primary that this script starts (scalelab cluster up) and stops:
#  1. ycsb workload C, 16 users, against pgbench -S -c 16 -j 2 on the same
#     server, interleaved ROUNDS times: scalelab's throughput as a share of
#     pgbench's (target >= 90 %, proof that scalelab is not the bottleneck)
#     and scalelab's own CPU per operation (target <= 25 us). pgbench -S
#     sends simple-protocol queries (parsed and planned each time) while
#     scalelab prepares its statements, so pgbench -M prepared is measured
#     too, for a like-for-like figure;
#  2. loading 1,000,000 logs records with bulk writes (COPY through pgx, no
#     secondary indexes) against COPY of the same records from a CSV file
#     through psql (target: at most twice psql's time), best of ROUNDS each.
# Usage: bash bench/postgres.sh [seconds per throughput run, default 30] [rounds, default 2]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
rounds=${2:-2}
records=1000000
PG_BIN=${SCALELAB_PG_BIN:-/usr/lib/postgresql/15/bin}
for b in pgbench psql initdb; do
  [ -x "$PG_BIN/$b" ] || { echo "no $PG_BIN/$b: run make setup (apt-get install -y postgresql)" >&2; exit 2; }
done
go build -o bin/scalelab ./cmd/scalelab
. bench/lib.sh
bench_dir pgbench home
name=bench
bench_cluster "$name"
machine "$(go version)" "$("$PG_BIN/postgres" --version)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

bin/scalelab cluster up postgres --name "$name" >"$out/up.txt"
target=$(awk '/^target:/{print $2}' "$out/up.txt")
port=${target##*:}; port=${port%%/*}
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=scalelab PGDATABASE=scalelab
PGPASSWORD=$(cat "$SCALELAB_HOME/clusters/$name/password")
export PGPASSWORD PGOPTIONS="-c client_min_messages=warning"
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
echo "server: $target, $(psql -Atc "SELECT 'shared_buffers ' || current_setting('shared_buffers') || ', fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')")"

echo
echo "== 1. ycsb C, 16 users vs pgbench -S -c 16 -j 2, ${secs}s each, $rounds rounds interleaved"
"$PG_BIN/pgbench" -i -s 10 -q >/dev/null 2>&1
sl_run ycsb --engine postgres --cluster "$name" --set ycsb.records=100000 --load-only --out "$out/ycsb-load"
psql -c "VACUUM ANALYZE" >/dev/null
pg_sum=0; pgp_sum=0; sl_sum=0; cpu_max=0
for r in $(seq "$rounds"); do
  tps=$("$PG_BIN/pgbench" -S -c 16 -j 2 -T "$secs" -n 2>/dev/null | awk '/^tps = /{print $3; exit}')
  sl_run ycsb --engine postgres --cluster "$name" --set ycsb.workload=c --set ycsb.records=100000 --set ycsb.load=false \
    --users 16 --duration "$((secs + 3))s" --warmup 3s --out "$out/ycsb-$r"
  tpsp=$("$PG_BIN/pgbench" -S -M prepared -c 16 -j 2 -T "$secs" -n 2>/dev/null | awk '/^tps = /{print $3; exit}')
  sl=$(field "$out/ycsb-$r/run.json" "r['totals']['throughput_per_s']")
  cpu=$(field "$out/ycsb-$r/run.json" "r['process']['cpu_per_op_us']")
  printf 'round %d: pgbench -S %.0f tps; scalelab ycsb C %.0f ops/s (%.1f%% of pgbench -S), scalelab CPU %.1f us/op, p99 %s ms; pgbench -S -M prepared %.0f tps (scalelab %.1f%% of it)\n' \
    "$r" "$tps" "$sl" "$(python3 -c "print(100*$sl/$tps)")" "$cpu" "$(field "$out/ycsb-$r/run.json" "r['summary']['read']['p99_ms']")" "$tpsp" "$(python3 -c "print(100*$sl/$tpsp)")"
  pg_sum=$(python3 -c "print($pg_sum+$tps)"); pgp_sum=$(python3 -c "print($pgp_sum+$tpsp)"); sl_sum=$(python3 -c "print($sl_sum+$sl)")
  cpu_max=$(python3 -c "print(max($cpu_max, $cpu))")
done
python3 -c "print('mean over rounds: pgbench -S %.0f tps, scalelab %.0f ops/s = %.1f%% (target >= 90%%); pgbench -S -M prepared %.0f tps (scalelab %.1f%% of it); scalelab CPU at most %.1f us/op (target <= 25)' % ($pg_sum/$rounds, $sl_sum/$rounds, 100*$sl_sum/$pg_sum, $pgp_sum/$rounds, 100*$sl_sum/$pgp_sum, $cpu_max))"
psql -c "DROP TABLE scalelab.usertable" -c "DROP TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers" >/dev/null

echo
echo "== 2. loading $records logs records: scalelab bulk writes (COPY via pgx, logs.indexes=off) vs psql \\copy from a CSV file"
best_sl=""; best_psql=""
for r in $(seq "$rounds"); do
  psql -c "CHECKPOINT" >/dev/null
  sl_run logs --engine postgres --cluster "$name" --set logs.records=$records --set logs.indexes=off --load-only --out "$out/logs-$r"
  sl=$(field "$out/logs-$r/run.json" "r['load_phase']['seconds']")
  [ -f "$out/logs.csv" ] || psql -c "\\copy scalelab.logs TO '$out/logs.csv' CSV"
  psql -c "DROP TABLE IF EXISTS logs_copy" -c "CREATE TABLE logs_copy (LIKE scalelab.logs INCLUDING ALL)" -c "CHECKPOINT" >/dev/null
  start=$(date +%s.%N)
  psql -c "\\copy logs_copy FROM '$out/logs.csv' CSV"
  end=$(date +%s.%N)
  pt=$(python3 -c "print($end-$start)")
  n=$(psql -Atc "SELECT count(*) FROM logs_copy")
  printf 'round %d: scalelab %.2f s (%.0f records/s); psql \\copy %.2f s for %d rows\n' "$r" "$sl" "$(python3 -c "print($records/$sl)")" "$pt" "$n"
  best_sl=$(python3 -c "print(min(x for x in [$sl, ${best_sl:-1e9}]))"); best_psql=$(python3 -c "print(min(x for x in [$pt, ${best_psql:-1e9}]))")
done
python3 -c "print('best: scalelab %.2f s, psql %.2f s: ratio %.2f (target <= 2)' % ($best_sl, $best_psql, $best_sl/$best_psql))"
echo "(scalelab's load phase includes DROP/CREATE TABLE and ANALYZE; with logs.indexes=on it also builds three indexes)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
