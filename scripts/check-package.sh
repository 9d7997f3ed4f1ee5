#!/usr/bin/env bash
# Installs the configured build/ into a temporary prefix, renders a report with the installed
# executable (it must run the installed share/attnspec/render_figures.py), and builds + runs
# tests/package (a find_package(attnspec CONFIG) consumer computing kappa(diag(4,2,1)) = 4).
# Usage: scripts/check-package.sh [build-dir]   (default build/, which scripts/build.sh makes)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# The package must not depend on the source or build tree: no path into them may be installed.
if grep -rlF -e "$PWD/" "$tmp/prefix/lib/cmake/attnspec" "$tmp/prefix/include"; then
  echo "check-package: installed files above refer to the source/build tree" >&2
  exit 1
fi
# The installed executable renders with the figures script installed beside it, not the source
# tree's (issue 29): its log line names the script it runs.
"$tmp/prefix/bin/attnspec" neumann --tokens 16 --dh 4 --out "$tmp/n.h5" >/dev/null 2>&1
"$tmp/prefix/bin/attnspec" report render "$tmp/n.h5" --out "$tmp/page" 2>"$tmp/render.err" ||
  { cat "$tmp/render.err" >&2; echo "check-package: installed report render failed" >&2; exit 1; }
script="$tmp/prefix/share/attnspec/render_figures.py"
if ! grep -F "figures: " "$tmp/render.err" | grep -qF " $script "; then
  cat "$tmp/render.err" >&2
  echo "check-package: the installed attnspec does not run the installed figures script" >&2
  exit 1
fi
cmake -S tests/package -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
"$tmp/consumer/consumer"
echo "check-package: OK (find_package(attnspec) + attnspec::core from $build installed)"
