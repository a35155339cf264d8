# Shared by the bench scripts, sourced after `cd` to the repository root:
#   bench_dir NAME [home]   makes the scratch directory $out (removed at exit,
#                           after the clusters named by bench_cluster are
#                           stopped); with "home", SCALELAB_HOME is $out/home
#   bench_cluster NAME      stops cluster NAME at exit (if still up)
#   timed_up ENGINE NAME ARGS...  scalelab cluster up ENGINE --name NAME ARGS
#                           (stopped at exit), printing how long it took
#   quiet LOG CMD...        runs CMD with its output in LOG, which it prints
#                           before exiting 1 when CMD fails
#   machine [PART...]       prints the machine line: CPUs, model, memory, then
#                           each PART after "; "
#   load_average            the 1, 5 and 15 minute load averages
#   field FILE EXPR         prints the Python expression EXPR of r, FILE's JSON
#   sl_run ARGS...          scalelab run ARGS (no progress line), quiet
#                           unless it fails
bench_clusters=()

bench_cleanup() {
  local c
  for c in "${bench_clusters[@]}"; do bin/scalelab cluster down "$c" >/dev/null 2>&1 || true; done
  rm -rf "$out"
}

bench_dir() {
  out=$(mktemp -d "/tmp/scalelab-$1.XXXXXX")
  if [ "${2:-}" = home ]; then export SCALELAB_HOME="$out/home"; fi
  trap bench_cleanup EXIT
}

bench_cluster() { bench_clusters+=("$1"); }

quiet() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
}

timed_up() {
  local engine=$1 name=$2 start
  shift 2
  bench_cluster "$name"
  start=$(date +%s.%N)
  quiet "$out/$name-up.log" bin/scalelab cluster up "$engine" --name "$name" "$@"
  python3 -c "import sys,time; print('cluster up: %.1f s' % (time.time() - float(sys.argv[1])))" "$start"
}

load_average() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

machine() {
  local line part
  line="machine: $(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/Mem:/{print $2}') GiB"
  for part in "$@"; do line="$line; $part"; done
  echo "$line"
}

field() { # field FILE PYTHON-EXPRESSION-ON-r
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

sl_run() { # scalelab run ..., quiet unless it fails
  bin/scalelab run "$@" --progress off >"$out/run.txt" 2>&1 || { cat "$out/run.txt" >&2; exit 1; }
}
