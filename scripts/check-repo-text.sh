#!/usr/bin/env bash
# check-repo-text.sh: the repository speaks of the project alone. Fails when a
# tracked file names a path of one particular machine or a file outside the
# repository, speaks of how the work is organised, or when a relative link in a
# Markdown file does not resolve.
set -u
cd "$(git rev-parse --show-toplevel)" || exit 2
status=0
# Paths of one machine and files that live outside the repository.
pattern='/work/|/root/|/home/[a-z]|/usr/lib/jvm/[a-z]|\.\./shared/|STUDIES\.md|GUIDE\.md'
hits=$(git ls-files -z | grep -zv -e '^go\.sum$' -e '^scripts/check-repo-text\.sh$' | xargs -0 grep -nE "$pattern" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "files name a machine path or a file outside the repository:" >&2
  echo "$hits" >&2
  status=1
fi
# Words about how the work is organised rather than about the project.
process='\(issue[ :]|\bissue [0-9]+\b|your task|your final message|closing note|helper agent'
hits=$(git ls-files -z | grep -zv -e '^go\.sum$' -e '^scripts/check-repo-text\.sh$' | xargs -0 grep -niE "$process" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "files speak of how the work is organised, not of the project:" >&2
  echo "$hits" >&2
  status=1
fi
# Relative links in Markdown must resolve inside the repository.
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
