#!/usr/bin/env bash
# Builds the asan preset (ATTNSPEC_SANITIZERS=address,undefined, -O1 -g1: line tables for the
# reports, and a build about 2.3x shorter than -O2 -g; CUDA and bench off) into build/asan and runs the cpu and cli suites; any sanitizer report fails the test
# (-fno-sanitize-recover=all, halt_on_error=1), leaks included.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset asan ${ATTNSPEC_SANITIZER_CMAKE_ARGS:-} >/dev/null
# Only what the cpu and cli suites run (not the slow or gpu test programs).
cmake --build build/asan -j"$jobs" --target attnspec attnspec_tests_cpu attnspec_tests_cli
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build/asan
ctest -L "cpu|cli" --output-on-failure -j"$jobs"
