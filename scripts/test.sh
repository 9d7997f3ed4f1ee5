#!/usr/bin/env bash
# README quick-start command (2): install what is missing, build, run the test suite through ctest.
#   scripts/test.sh          default suite (labels cpu, cli, gpu; gpu tests skip without a device)
#   scripts/test.sh --slow   only the long checks (label slow)
# The default suite then builds the Python package (CMake tree build-python/) into the venv
# build/python/venv and runs its pytest suite against the build/ CLI (scripts/python-env.sh; its
# time is printed). ATTNSPEC_NO_PYTHON=1 leaves it out.
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
  cd ..
  if [ "${ATTNSPEC_NO_PYTHON:-0}" != 1 ]; then
    t0=$SECONDS
    ATTNSPEC_CLI="$(pwd -P)/build/cli/attnspec" bash scripts/python-env.sh
    echo "test.sh: Python package built and tested in $((SECONDS - t0)) s"
  fi
fi
