#!/usr/bin/env bash
# check-links.sh: every relative link in a tracked Markdown file resolves to a
# file inside the repository.
set -u
cd "$(git rev-parse --show-toplevel)" || exit 2
status=0
while IFS= read -r md; do
  dir=$(dirname "$md")
  while IFS= read -r link; do
    target=${link%%#*}
    [ -z "$target" ] && continue
    case "$target" in http://*|https://*|mailto:*) continue ;; esac
    if [ ! -e "$dir/$target" ]; then
      echo "$md: link to $link does not resolve" >&2
      status=1
    fi
  done < <(grep -oE '\]\([^) ]+\)' "$md" | sed -E 's/^\]\(//; s/\)$//')
done < <(git ls-files '*.md')
exit $status
