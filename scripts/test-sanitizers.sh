#!/usr/bin/env bash
# Builds the asan preset (ATTNSPEC_SANITIZERS=address,undefined, -O1 -g1: line tables for the
# reports; CUDA and bench off) into build/asan and runs its cpu and cli suites; any sanitizer
# report fails the test (-fno-sanitize-recover=all, halt_on_error=1), leaks included.
#
#   scripts/test-sanitizers.sh [--all]
#
#   (default)  the tests that exercise memory handling (CI): file and HDF5 IO, the report
#              sections, the hostile-input suite, the thread pool and parallel loops, the run loop
#              and its instance spread, the memory budget, the GPU backend loader and driver
#              probe, and every CLI test (the executable end to end: parsing, reports,
#              counterexample files, render, merge). Not the numerical tests of attention/,
#              spectral/, infsa/ and the checks, which are the same code paths at other sizes and
#              take most of the sanitizer time. Nor the CLI's gpu-check fault matrix (every
#              emulated twin under every planted fault: 197 s under ASan, the longest but one),
#              whose memory paths the cpu/gpu emulate tests and the clean CLI emulate run cover.
#   --all      every cpu and cli test
set -euo pipefail
cd "$(dirname "$0")/.."
filter='^(cpu/(io|base|gpu|report)/|cpu/proofs/test_(run_loop|instance_spread)|cpu/infsa/test_memory_budget|cli/|hostile/)'
exclude='each planted fault in each emulated twin'
case "${1:-}" in
  --all) filter="" exclude="" ;;
  "") ;;
  -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
  *) echo "test-sanitizers.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)
source scripts/ccache-env.sh
cmake --preset asan --no-warn-unused-cli "${CCACHE_CMAKE_ARGS[@]}" "-DATTNSPEC_TEST_FILTER=$filter" \
  ${ATTNSPEC_SANITIZER_CMAKE_ARGS:-} >/dev/null
# Only what the cpu and cli suites run (not the slow or gpu test programs).
cmake --build build/asan -j"$jobs" --target attnspec attnspec_tests_cpu attnspec_tests_cli
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build/asan
echo "test-sanitizers: test sources matching '${filter:-(all)}'"
echo "test-sanitizers: tests excluded by name: '${exclude:-(none)}'"
ctest -L "cpu|cli" ${exclude:+-E "$exclude"} --output-on-failure -j"$jobs"
