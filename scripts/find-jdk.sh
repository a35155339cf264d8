#!/usr/bin/env bash
# find-jdk.sh MIN [MAX]: prints the home of the newest installed JDK whose
# major version (from its release file) is at least MIN and at most MAX;
# exits 1 with a message when there is none. It looks at $JAVA_HOME, the
# java on PATH and every JDK home under /usr/lib/jvm, /usr/java, /opt/java
# and /opt, as scalelab itself does (cluster/jvm).
set -u
min=${1:?usage: find-jdk.sh MIN [MAX]}
max=${2:-0}
version() {
  local v
  v=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$1/release" 2>/dev/null | head -1)
  v=${v#1.}
  echo "${v%%.*}"
}
candidates=()
[ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
if command -v java >/dev/null 2>&1; then
  candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
fi
for root in /usr/lib/jvm /usr/java /opt/java /opt; do
  for d in "$root"/*; do [ -x "$d/bin/java" ] && candidates+=("$d"); done
done
best="" bestv=0
for home in "${candidates[@]}"; do
  [ -x "$home/bin/java" ] || continue
  v=$(version "$home")
  case "$v" in ''|*[!0-9]*) continue ;; esac
  if [ "$v" -ge "$min" ] && { [ "$max" -eq 0 ] || [ "$v" -le "$max" ]; } && [ "$v" -gt "$bestv" ]; then
    best=$home bestv=$v
  fi
done
if [ -z "$best" ]; then
  if [ "$max" -eq 0 ]; then want="$min+"; else want="$min to $max"; fi
  echo "no JDK $want installed (looked at \$JAVA_HOME, java on PATH, /usr/lib/jvm, /usr/java, /opt/java, /opt)" >&2
  exit 1
fi
echo "$best"
