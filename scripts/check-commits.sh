#!/usr/bin/env bash
# Reports commit subjects longer than the limit (CONTRIBUTING "Commits": at most 72 characters,
# measurements in the body) in the range SINCE..HEAD.
#
#   scripts/check-commits.sh SINCE [--max N] [--warn]
#
#   SINCE   a commit (sha, tag or ref); the commits after it up to HEAD are checked
#   --max N the limit in characters (default 72)
#   --warn  list the long subjects but exit 0
#
# Exit 0 when every subject fits, 1 when one does not (each listed as "sha length subject"),
# 64 on a usage error, 66 when SINCE is not a commit of this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
max=72
warn=0
since=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max)
      [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { echo "check-commits: --max needs a number" >&2; exit 64; }
      max=$2; shift 2 ;;
    --warn) warn=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "check-commits: unknown option $1 (see --help)" >&2; exit 64 ;;
    *)
      [ -z "$since" ] || { echo "check-commits: one SINCE only (got '$since' and '$1')" >&2; exit 64; }
      since=$1; shift ;;
  esac
done
[ -n "$since" ] || { echo "check-commits: SINCE missing (usage: scripts/check-commits.sh SINCE [--max N] [--warn])" >&2; exit 64; }
git rev-parse -q --verify "$since^{commit}" >/dev/null ||
  { echo "check-commits: '$since' is not a commit of this repository" >&2; exit 66; }
n=0
long=0
# %x09 separates the short sha from the subject; awk measures in characters (UTF-8 aware
# under a UTF-8 locale; in the C locale a multi-byte character counts its bytes).
while IFS=$'\t' read -r sha subject; do
  n=$((n + 1))
  len=$(printf '%s' "$subject" | LC_ALL=C.UTF-8 awk '{ print length($0) }')
  if [ "$len" -gt "$max" ]; then
    long=$((long + 1))
    printf '%s %4d %s\n' "$sha" "$len" "$subject"
  fi
done < <(git log --no-merges --format='%h%x09%s' "$since..HEAD")
echo "check-commits: $n commit(s) after $since, $long with a subject over $max characters"
if [ "$long" -gt 0 ] && [ "$warn" = 0 ]; then exit 1; fi
exit 0
