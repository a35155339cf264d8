#!/usr/bin/env bash
# App tier figures (records over HTTP), on a local PostgreSQL primary and an
# app cluster of one `scalelab serve records` behind HAProxy, which this
# script starts and stops:
#  1. what one app server sustains: closed users with no think time through
#     the balancer; requests per second (the balancer's count), the app
#     server's CPU, and the load generator's own CPU per request (it must
#     stay a small share of the app server's);
#  2. the balancer's added latency: the same moderate load (4 users, no
#     think time, bcrypt cost 4 so that pages dominate) straight to the app
#     server and through HAProxy, interleaved ROUNDS times; p50 and p99 of
#     the page requests (home, signup_page, medical_page, profile).
# Usage: bash bench/app.sh [seconds per run, default 20] [rounds, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
rounds=${2:-3}
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || { echo "no haproxy: run make setup (apt-get install -y haproxy)" >&2; exit 2; }
go build -o bin/scalelab ./cmd/scalelab
. bench/lib.sh
bench_dir app home
bench_cluster benchweb
bench_cluster benchpg
machine "$(go version)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bin/scalelab cluster up postgres --name benchpg >/dev/null
small="--set records.providers=2000 --set records.patients=1000 --set records.think_page=0s --set records.think_form=0s"

echo
echo "== 1. one app server (16 requests at once, GOMAXPROCS 1), bcrypt cost 10, 32 users without think time, ${secs}s"
bin/scalelab cluster up app --name benchweb --scenario records --servers 1 --cluster benchpg --opt procs=1 >/dev/null
# shellcheck disable=SC2086
sl_run records --cluster benchweb $small --users 32 --duration "$((secs + 3))s" --warmup 3s --out "$out/sustain"
python3 - "$out/sustain/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
app = next(t["app"] for t in r["tiers"] if t["role"] == "app")
secs = r["measured_s"] + r["load"]["warmup_s"]  # the balancer counts the whole load
req = app["requests"]
tiers = {t["tier"]: t for t in r["telemetry"]["tiers"]}
gen_cores = tiers["generator"]["cpu_mean_cores"]
print("requests through the balancer: %d in %.1f s: %.0f req/s; sessions' operations %.0f ops/s" % (req, secs, req / secs, r["totals"]["throughput_per_s"]))
print("app server %.2f cores, store %.2f cores, balancer %.2f cores, load generator %.2f cores = %.0f us per request (%.0f%% of the app server's CPU)" % (
    tiers["app"]["cpu_mean_cores"], tiers["store"]["cpu_mean_cores"], tiers["balancer"]["cpu_mean_cores"], gen_cores,
    1e6 * gen_cores / (req / secs), 100 * gen_cores / tiers["app"]["cpu_mean_cores"]))
print("saturation: " + r["telemetry"].get("saturation", ""))
PY
bin/scalelab cluster down benchweb >/dev/null

echo
echo "== 2. the balancer's added latency: 4 users without think time, bcrypt cost 4, ${secs}s per run, $rounds rounds"
bin/scalelab cluster up app --name benchweb --scenario records --servers 1 --cluster benchpg --opt procs=1 --set records.bcrypt_cost=4 >/dev/null
direct=$(bin/scalelab cluster status benchweb --json | python3 -c "import json,sys; n=[n for n in json.load(sys.stdin)[0]['nodes'] if n['name']=='app1'][0]; print('http://%s:%d' % (n['host'], n['port']))")
ops="home signup_page medical_page profile"
for r in $(seq "$rounds"); do
  # shellcheck disable=SC2086
  sl_run records --cluster benchpg --app "$direct" $small --set records.bcrypt_cost=4 --users 4 --duration "$((secs + 3))s" --warmup 3s --out "$out/direct-$r"
  # shellcheck disable=SC2086
  sl_run records --cluster benchweb $small --set records.bcrypt_cost=4 --users 4 --duration "$((secs + 3))s" --warmup 3s --out "$out/lb-$r"
  python3 - "$out/direct-$r/run.json" "$out/lb-$r/run.json" "$r" $ops <<'PY'
import json, sys
d, b = (json.load(open(p))["summary"] for p in sys.argv[1:3])
parts = []
for op in sys.argv[4:]:
    parts.append("%s p50 %.3f/%.3f p99 %.3f/%.3f" % (op, d[op]["p50_ms"], b[op]["p50_ms"], d[op]["p99_ms"], b[op]["p99_ms"]))
print("round %s (ms, direct/through HAProxy): %s" % (sys.argv[3], "; ".join(parts)))
PY
done
python3 - "$out" "$rounds" $ops <<'PY'
import json, sys, statistics as st
out, rounds, ops = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for q in ("p50_ms", "p99_ms"):
    diffs = []
    for r in range(1, rounds + 1):
        d = json.load(open("%s/direct-%d/run.json" % (out, r)))["summary"]
        b = json.load(open("%s/lb-%d/run.json" % (out, r)))["summary"]
        diffs += [b[op][q] - d[op][q] for op in ops]
    print("added by HAProxy, %s: median %.3f ms over %d (round, page) pairs (min %.3f, max %.3f)" % (q[:3], st.median(diffs), len(diffs), min(diffs), max(diffs)))
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
