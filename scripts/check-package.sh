#!/usr/bin/env bash
# Installs the configured build/ into a temporary prefix and builds + runs tests/package (a
# find_package(attnspec CONFIG) consumer computing kappa(diag(4,2,1)) = 4) against it.
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
cmake -S tests/package -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
"$tmp/consumer/consumer"
echo "check-package: OK (find_package(attnspec) + attnspec::core from $build installed)"
