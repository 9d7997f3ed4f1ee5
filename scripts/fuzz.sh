#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, ATTNSPEC_FUZZ=ON, Debian's clang 14 with
# -fsanitize=fuzzer,address,undefined) into build-fuzz and runs each one.
#
#   scripts/fuzz.sh [--runs N | --seconds S] [--keep-going] [--crashes] [TARGET...]
#
#   --runs N       run each target for N executions (libFuzzer -runs)
#   --seconds S    run each target for S seconds (libFuzzer -max_total_time; default 20)
#   --keep-going   do not stop at the first crash: libFuzzer's fork mode (-fork=1
#                  -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) goes on fuzzing and counts
#                  them; exit 0 even when a target crashed (CI, until the known loader bugs are
#                  fixed). Crash inputs are left in build-fuzz/artifacts/<target>/
#   --crashes      do not fuzz: replay tests/fuzz/crashes/<target>/* and say which still fail
#   TARGET         attention_input, qk_input, safetensors, instance, report, report_sections,
#                  report_raw, options, exchange
#                  (default: every tests/fuzz/fuzz_*.cpp)
#
# Each target starts from its committed seed corpus tests/fuzz/corpus/<target>/ (copied into
# build-fuzz/corpus/<target>/, which grows; the committed one does not). Limits per target:
# -timeout=25 s per input, -rss_limit_mb=2048, and the library's memory budget is 256 MiB
# (tests/fuzz/support/fuzz_support.cpp). Prints executions and exec/s per target.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-max_total_time=20)
keep_going=0
replay=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) mode=(-runs="$2"); shift 2 ;;
    --seconds) mode=(-max_total_time="$2"); shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --crashes) replay=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do
    t=$(basename "$f" .cpp)
    targets+=("${t#fuzz_}")
  done
fi
CXX_FUZZ=${CXX_FUZZ:-/usr/bin/clang++}
CC_FUZZ=${CC_FUZZ:-/usr/bin/clang}
jobs=$(nproc 2>/dev/null || echo 2)
source scripts/ccache-env.sh  # CCACHE_CMAKE_ARGS: the compiler launchers, when ccache is installed
t0=$SECONDS
# -O1 with line tables: the usual fuzzing trade-off (instrumented code stays fast, the build
# stays short); asserts stay on (no NDEBUG), so an Eigen assertion is a finding too.
cmake -S . -B build-fuzz --no-warn-unused-cli -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_C_COMPILER="$CC_FUZZ" "${CCACHE_CMAKE_ARGS[@]}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DATTNSPEC_FUZZ=ON -DATTNSPEC_CUDA=OFF -DATTNSPEC_BUILD_TESTS=OFF -DATTNSPEC_BUILD_BENCH=OFF \
  -DATTNSPEC_WERROR=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")
echo "fuzz.sh: build took $((SECONDS - t0)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside libhdf5 itself on corrupt files (fuzz_report_raw) are HDF5's, not ours.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
# Every file the targets write goes under one temp dir per fuzz.sh run (a target that aborts,
# times out or is a killed fork-mode child cannot remove its own), removed on exit.
shm=/tmp
if [ -d /dev/shm ] && [ -w /dev/shm ]; then shm=/dev/shm; fi
TMPDIR=$(mktemp -d "$shm/attnspec-fuzz-run.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
status=0
summary=()
for t in "${targets[@]}"; do
  exe=$PWD/build-fuzz/tests/fuzz/fuzz_$t  # absolute: fork-mode children of fuzz_options start in its temp dir
  if [ "$replay" = 1 ]; then
    for c in tests/fuzz/crashes/"$t"/*; do
      [ -f "$c" ] || continue
      if "$exe" -timeout=25 -rss_limit_mb=2048 "$PWD/$c" >"build-fuzz/replay-$t.log" 2>&1; then
        summary+=("$t: $(basename "$c"): passes now")
      else
        summary+=("$t: $(basename "$c"): still fails ($(grep -m1 -E 'ERROR|runtime error|attnspec fuzz' "build-fuzz/replay-$t.log" || echo "see build-fuzz/replay-$t.log"))")
        status=1
      fi
    done
    continue
  fi
  corpus=$PWD/build-fuzz/corpus/$t  # absolute: fuzz_options chdir()s to its temp dir
  artifacts=$PWD/build-fuzz/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  if [ -d tests/fuzz/corpus/"$t" ]; then cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true; fi
  log=build-fuzz/fuzz-$t.log
  echo "=== fuzz_$t ${mode[*]}"
  rc=0
  fork=()
  if [ "$keep_going" = 1 ]; then fork=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fi
  "$exe" "${fork[@]}" "${mode[@]}" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$keep_going" = 1 ]; then
    # fork mode: the last status line "#N: cov: .. exec/s E oom/timeout/crash: a/b/c time: Ts"
    last=$(grep -E '^#[0-9]+: cov' "$log" | tail -1)
    runs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
    eps=$(sed -n 's/.*exec\/s \([0-9]*\).*/\1/p' <<<"$last")
    secs=$(sed -n 's/.*time: \([0-9]*\)s.*/\1/p' <<<"$last")
    otc=$(sed -n 's/.*oom\/timeout\/crash: \([0-9\/]*\).*/\1/p' <<<"$last")
    summary+=("fuzz_$t: ${runs:-?} executions, ${eps:-?} exec/s, ${secs:-?} s, oom/timeout/crash ${otc:-?} (inputs in $artifacts/)")
    case "$otc" in 0/0/0|"") ;; *) status=1 ;; esac
  elif [ "$rc" = 0 ]; then
    summary+=("fuzz_$t: ${runs:-?} executions, ${eps:-?} exec/s${secs:+, ${secs} s}, no crash")
  else
    first=$(grep -m1 -E '^==[0-9]+==ERROR|runtime error|attnspec fuzz:|ALARM|out-of-memory' "$log" || true)
    summary+=("fuzz_$t: CRASH after ${runs:-?} executions: ${first:-see $log} (input in $artifacts/)")
    tail -40 "$log"
    status=1
  fi
done
echo "=== fuzz.sh summary"
printf '%s\n' "${summary[@]}"
if [ "$status" != 0 ] && [ "$keep_going" = 1 ]; then
  echo "fuzz.sh: crashes found (--keep-going: exit 0)"
  exit 0
fi
exit "$status"
