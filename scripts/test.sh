#!/usr/bin/env bash
# README quick-start command (2): install what is missing, build, run the test suite through ctest.
#   scripts/test.sh          default suite (labels cpu, cli, gpu; gpu tests skip without a device)
#   scripts/test.sh --slow   only the long checks (label slow)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
jobs=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = "--slow" ]; then
  ctest -L slow --output-on-failure -j"$jobs"
else
  ctest -LE slow --output-on-failure -j"$jobs"
fi
