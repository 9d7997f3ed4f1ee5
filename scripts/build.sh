#!/usr/bin/env bash
# Configure and build attnspec (Release) into build/. Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
source scripts/ccache-env.sh
# ATTNSPEC_CMAKE_ARGS (e.g. -DATTNSPEC_CUDA=ON, set by .ci/run) adds configure options.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${CCACHE_CMAKE_ARGS[@]}" ${ATTNSPEC_CMAKE_ARGS:-} "$@"
cmake --build build -j"$jobs"
