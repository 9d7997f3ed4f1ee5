#!/usr/bin/env bash
# scripts/gpu-check.sh DIR [BUNDLE.tar.xz]: the GPU run anyone can repeat, on a machine with a
# device, from a bundle made by scripts/gpu-bundle.sh (default BUNDLE: attnspec-gpu.tar.xz in the
# current directory; or an attnspec-gpu/ folder already in DIR). Unpacks into DIR, then, each step
# with its own timeout inside a total budget of 8 minutes (ATTNSPEC_GPU_BUDGET seconds):
#   nvidia-smi, attnspec info          what the machine is (informational: never pass or fail)
#   the gpu test program               tests/attnspec_tests_gpu (exit 77: skipped, no device)
#   attnspec gpu-check                 every twin against its CPU reference: DIR/gpu_check.h5
#                                      (exit 69: no GPU run possible)
#   compute-sanitizer memcheck, racecheck on the gpu test program (tests that run the CLI are
#                                      left out: [gpu-cli]); ATTNSPEC_SANITIZER=PATH picks the
#                                      program (empty: none). Without a device nothing is checked:
#                                      the step says "no device" whatever the sanitizer returns.
#   GPU benchmarks                     bench/bench_* of the bundle (if any), each with a timeout;
#                                      each runs its PyTorch peer (bench/peer_*.py,
#                                      ATTNSPEC_PEER_DIR) and prints the ratio (exit 69: no device)
# Everything is logged under DIR: one .log per step, and summary.txt with one line per step
# ("NAME: passed | FAILED | skipped: no device | info, exit N in S s[: last line of its log]"),
# then "result: ..." and "total: ...". A skipped step is never called passed.
# Exit codes:
#   0   every check ran on a device and passed
#   1   a check failed: a test, a twin disagreeing, a sanitizer error, a benchmark, a timeout, the
#       budget spent before a step, or no compute-sanitizer on a machine with a device
#   69  no usable device: nothing failed, but the device checks were skipped (GPU numerics NOT
#       verified)
#   64 usage, 66 no bundle, 73 DIR cannot be created, 74 the bundle cannot be unpacked
set -uo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: scripts/gpu-check.sh DIR [BUNDLE.tar.xz]" >&2; exit 64; }
dir=$(realpath -m "$1")
bundle=${2:-attnspec-gpu.tar.xz}
mkdir -p "$dir" || exit 73
if [ ! -x "$dir/attnspec-gpu/run" ]; then
  [ -f "$bundle" ] || { echo "gpu-check.sh: no bundle $bundle (make one with scripts/gpu-bundle.sh)" >&2; exit 66; }
  tar -C "$dir" -xJf "$bundle" || { echo "gpu-check.sh: cannot unpack $bundle into $dir" >&2; exit 74; }
fi
run="$dir/attnspec-gpu/run"
budget=${ATTNSPEC_GPU_BUDGET:-480}
t0=$SECONDS
passed=0 failed=0 nodev=0
failed_names="" nodev_names=""
device=unknown  # yes / no, from the gpu test program and gpu-check
: >"$dir/summary.txt"

note() { echo "$1" | tee -a "$dir/summary.txt"; }
fail_step() { failed=$((failed + 1)); failed_names+=" $1"; note "$1: FAILED, $2"; }
nodev_step() { nodev=$((nodev + 1)); nodev_names+=" $1"; note "$1: skipped: no device, $2"; }

# step NAME MAX_SECONDS KIND CMD...: runs CMD with timeout min(MAX, what is left of the budget) and
# judges its exit code by KIND: info (never counted), test (77 = no device), check (69 = no
# device), sanitizer (judged by what the earlier steps found out about the device).
step() {
  local name=$1 max=$2 kind=$3; shift 3
  local left=$((budget - (SECONDS - t0)))
  if [ "$left" -le 5 ]; then
    [ "$kind" = info ] && { note "$name: info, not run (budget of ${budget} s spent)"; return; }
    fail_step "$name" "not run (budget of ${budget} s spent)"
    return
  fi
  local lim=$((max < left ? max : left)) s=$SECONDS rc
  echo "=== $name (timeout ${lim} s)"
  timeout -k 10 "$lim" "$@" >"$dir/$name.log" 2>&1
  rc=$?
  local last
  last=$(grep -v '^[[:space:]]*$' "$dir/$name.log" | tail -1 | cut -c1-160)
  local what="exit $rc in $((SECONDS - s)) s${last:+: $last}"
  tail -5 "$dir/$name.log"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    [ "$kind" = info ] && { note "$name: info, timed out after ${lim} s"; return; }
    fail_step "$name" "timed out after ${lim} s (exit $rc)"
    return
  fi
  case $kind in
    info)
      note "$name: info, $what" ;;
    test | check)
      local skip=77
      [ "$kind" = check ] && skip=69
      if [ $rc -eq 0 ]; then
        device=yes; passed=$((passed + 1)); note "$name: passed, $what"
      elif [ $rc -eq $skip ]; then
        device=no; nodev_step "$name" "$what"
      else
        fail_step "$name" "$what"
      fi ;;
    sanitizer)
      if [ "$device" = no ]; then
        nodev_step "$name" "nothing checked ($what)"
      elif [ $rc -eq 0 ]; then
        passed=$((passed + 1)); note "$name: passed, $what"
      else
        fail_step "$name" "$what"
      fi ;;
  esac
}

if command -v nvidia-smi >/dev/null 2>&1; then
  step nvidia-smi 15 info nvidia-smi
else
  note "nvidia-smi: info, not found on PATH"
fi
step info 20 info "$run" attnspec info
step gpu-tests 150 test "$run" attnspec_tests_gpu --durations yes
step gpu-check 180 check "$run" attnspec gpu-check --out "$dir/gpu_check.h5"
if [ -n "${ATTNSPEC_SANITIZER+set}" ]; then
  sanitizer=$ATTNSPEC_SANITIZER
else
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
fi
if [ -n "$sanitizer" ]; then
  step memcheck 120 sanitizer "$sanitizer" --tool memcheck --error-exitcode 1 "$run" attnspec_tests_gpu "~[gpu-cli]"
  step racecheck 120 sanitizer "$sanitizer" --tool racecheck --error-exitcode 1 "$run" attnspec_tests_gpu "~[gpu-cli]"
elif [ "$device" = no ]; then
  nodev_step sanitizer "not run (compute-sanitizer not found on PATH or under /usr/local/cuda either)"
else
  fail_step sanitizer "not run: compute-sanitizer not found (PATH, /usr/local/cuda)"
fi
export ATTNSPEC_PEER_DIR="$dir/attnspec-gpu/bench"
for b in "$dir"/attnspec-gpu/bench/bench_*; do
  [ -f "$b" ] && [ -x "$b" ] && step "$(basename "$b")" 90 check "$run" "$(basename "$b")"
done
if [ $failed -gt 0 ]; then
  note "result: FAILED: $failed check(s) failed:$failed_names; $passed passed, $nodev skipped for want of a device"
  code=1
elif [ $nodev -gt 0 ]; then
  note "result: NO DEVICE: $nodev check(s) skipped for want of a device:$nodev_names; none failed; GPU numerics not verified"
  code=69
else
  note "result: all $passed checks passed on the device"
  code=0
fi
note "total: $((SECONDS - t0)) s of $budget s; logs in $dir; exit $code"
exit $code
