#!/usr/bin/env bash
# The repository stands alone: fails (exit 1, one line per problem) when
#   * a relative Markdown link [text](target) in a tracked *.md file points outside the
#     repository or at a path that does not exist in it (http(s):, mailto: and #anchors are
#     skipped; a #fragment is ignored), or
#   * a tracked text file names the design folder that lived outside the repository
#     ("shared/design/"): docs/MATH.md and docs/SOURCES.md replaced it.
# Usage: bash scripts/check-links.sh [repository root, default: this script's repository]
set -euo pipefail
root="$(cd "${1:-$(dirname "$0")/..}" && pwd -P)"
cd "$root"
bad=0
while IFS= read -r -d '' md; do
  dir="$(dirname "$md")"
  # Inline links: ](target) or ](target "title"); one target per line of output.
  while IFS= read -r target; do
    case "$target" in
      http://* | https://* | mailto:* | '#'* | '') continue ;;
    esac
    path="${target%%#*}"
    [ -n "$path" ] || continue
    if [ "${path#/}" != "$path" ]; then
      echo "check-links: $md: absolute link '$target' (use a path relative to the file)"
      bad=1
      continue
    fi
    resolved="$(realpath -m "$dir/$path")"
    if [ "${resolved#"$root"/}" = "$resolved" ] && [ "$resolved" != "$root" ]; then
      echo "check-links: $md: link '$target' points outside the repository"
      bad=1
    elif [ ! -e "$resolved" ]; then
      echo "check-links: $md: link '$target' points at a missing file"
      bad=1
    fi
  done < <(grep -o '](\([^) ]*\)' "$md" | sed 's/^](//' || true)
done < <(git -C "$root" ls-files -z -- '*.md')
# Mentions of the old external design folder, in any tracked text file but this one.
while IFS= read -r hit; do
  echo "check-links: $hit: names 'shared/design/', which is outside the repository (use docs/)"
  bad=1
done < <(git -C "$root" grep -I -n -e 'shared/design/' -- . ':!scripts/check-links.sh' |
  cut -d: -f1,2 || true)
if [ "$bad" -ne 0 ]; then
  echo "check-links: FAILED (links must stay inside the repository and point at existing files)"
  exit 1
fi
echo "check-links: ok"
