#!/usr/bin/env bash
# scripts/gpu-check.sh DIR [BUNDLE.tar.xz]: the GPU run anyone can repeat, on a machine with a
# device, from a bundle made by scripts/gpu-bundle.sh (default BUNDLE: attnspec-gpu.tar.xz in the
# current directory; or an attnspec-gpu/ folder already in DIR). Unpacks into DIR, then, each step
# with its own timeout inside a total budget of 8 minutes (ATTNSPEC_GPU_BUDGET seconds):
#   nvidia-smi, attnspec info          what the machine is
#   the gpu test program               tests/attnspec_tests_gpu (exit 77: skipped, no device)
#   attnspec gpu-check                 every twin against its CPU reference: DIR/gpu_check.h5
#   compute-sanitizer memcheck, racecheck on the gpu test program (tests that run the CLI are
#                                      left out: [gpu-cli])
#   GPU benchmarks                     bench/bench_* of the bundle (if any), each with a timeout;
#                                      each runs its PyTorch peer (bench/peer_*.py,
#                                      ATTNSPEC_PEER_DIR) and prints the ratio
# Everything is logged under DIR (one .log per step, summary.txt with each step's exit code and
# seconds). Exit: 0 when every step that ran passed (a skipped gpu test counts as not passed: 1).
set -uo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: scripts/gpu-check.sh DIR [BUNDLE.tar.xz]" >&2; exit 64; }
dir=$(realpath -m "$1")
bundle=${2:-attnspec-gpu.tar.xz}
mkdir -p "$dir" || exit 73
if [ ! -x "$dir/attnspec-gpu/run" ]; then
  [ -f "$bundle" ] || { echo "gpu-check.sh: no bundle $bundle (make one with scripts/gpu-bundle.sh)" >&2; exit 66; }
  tar -C "$dir" -xJf "$bundle" || exit 74
fi
run="$dir/attnspec-gpu/run"
budget=${ATTNSPEC_GPU_BUDGET:-480}
t0=$SECONDS
status=0
: >"$dir/summary.txt"
# step NAME MAX_SECONDS CMD...: runs CMD with timeout min(MAX, what is left of the budget).
step() {
  local name=$1 max=$2; shift 2
  local left=$((budget - (SECONDS - t0)))
  if [ "$left" -le 5 ]; then
    echo "$name: not run (budget of ${budget} s spent)" | tee -a "$dir/summary.txt"
    status=1
    return
  fi
  local lim=$((max < left ? max : left)) s=$SECONDS rc
  echo "=== $name (timeout ${lim} s)"
  timeout -k 10 "$lim" "$@" >"$dir/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc in $((SECONDS - s)) s$([ $rc -eq 124 ] && echo ' (timed out)')" | tee -a "$dir/summary.txt"
  tail -5 "$dir/$name.log"
  [ $rc -eq 0 ] || status=1
}
step nvidia-smi 15 nvidia-smi
step info 20 "$run" attnspec info
step gpu-tests 150 "$run" attnspec_tests_gpu --durations yes
step gpu-check 180 "$run" attnspec gpu-check --out "$dir/gpu_check.h5"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
  /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$sanitizer" ]; then
  step memcheck 120 "$sanitizer" --tool memcheck --error-exitcode 1 "$run" attnspec_tests_gpu "~[gpu-cli]"
  step racecheck 120 "$sanitizer" --tool racecheck --error-exitcode 1 "$run" attnspec_tests_gpu "~[gpu-cli]"
else
  echo "compute-sanitizer: not found (PATH, /usr/local/cuda), not run" | tee -a "$dir/summary.txt"
  status=1
fi
export ATTNSPEC_PEER_DIR="$dir/attnspec-gpu/bench"
for b in "$dir"/attnspec-gpu/bench/bench_*; do
  [ -f "$b" ] && [ -x "$b" ] && step "$(basename "$b")" 90 "$run" "$(basename "$b")"
done
echo "total: $((SECONDS - t0)) s of $budget s; logs in $dir" | tee -a "$dir/summary.txt"
exit $status
