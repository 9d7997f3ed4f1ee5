#!/usr/bin/env bash
# scripts/gpu-check.sh [--vit] [--python PY] OUT [BUNDLE]: the GPU run anyone can repeat, on a
# machine with a device, from a bundle made by scripts/gpu-bundle.sh. BUNDLE is the .tar.xz
# (default: attnspec-gpu.tar.xz in the current directory), unpacked into a temporary folder, or
# an unpacked attnspec-gpu/ folder, used in place. Every step has a cap (its wall-clock limit,
# the kill included); the caps add up to at most the budget of 8 minutes (480 s), so the run
# ends in time whatever hangs. `--caps` prints the table, `--help` this text and the table.
# Order: what the machine is (info, never pass or fail); `attnspec gpu-check --quick`, one twin
# per process (a twin's sticky CUDA fault stays in its process); the gpu test program;
# compute-sanitizer memcheck and racecheck on narrow test filters (the kernels, quick sizes);
# the full gpu-check cases, one twin per process; the GPU benchmarks with their PyTorch peers;
# last and optional (--vit), the full jacobian_spectrum set, which holds the ViT-B case
# (N = 197, D = 768): gpu-check selects twins, not cases, so that step runs the twin's whole set.
#   --vit         run the optional last step (skipped without it, or when less of the budget is
#                 left than its cap; the summary says which)
#   --python PY   the Python whose nvidia-* wheels may provide the CUDA libraries (the bundle's
#                 `run` looks under /usr/local/cuda, then LD_LIBRARY_PATH, then those wheels) and
#                 that runs the PyTorch peers (PYTHON); default: python3 on PATH
#   ATTNSPEC_SANITIZER=PATH  the compute-sanitizer to use (empty: none)
#   ATTNSPEC_GPU_BUDGET=S    another budget in seconds (tests); a step gets min(cap, what is left)
# OUT receives three files, and only these (the device tool brings back at most 8):
#   summary.txt    one line per step: "NAME: STATUS, exit N in S s[: last line of its log]",
#                  STATUS one of passed, FAILED, skipped: no device, peer unavailable,
#                  target missed, info, not run; then "result: ..." and "total: ...".
#                  A skipped step, a missing peer or a missed target is never called passed.
#   gpu_check.txt  the gpu-check report: every gpu-check step's table, in order
#   logs.tar.gz    every step's log and the gpu-check HDF5 reports (logs/, reports/), refreshed
#                  after each step, so a run cut short still leaves its logs
# A benchmark's verdict comes from its output: a line with "peer unavailable" (its PyTorch peer
# did not run) or one starting "target missed" (bench/gpu/*.cpp print them).
# Exit codes:
#   0   every check ran on a device and passed, every benchmark ran its peer and met its targets
#   1   a check failed: a test, a twin disagreeing, the GPU backend failing to load (gpu-check
#       exit 72), a sanitizer error, a benchmark error, a timeout, the budget spent before a
#       step, or no compute-sanitizer on a machine with a device
#   2   nothing failed, but a benchmark's peer was unavailable or a target was missed
#   69  no usable device: nothing failed, but the device checks were skipped (GPU numerics NOT
#       verified)
#   64 usage, 66 no bundle, 73 OUT cannot be created, 74 the bundle cannot be unpacked
set -uo pipefail

twins=(linear_infsa spec_attention jacobian_spectrum svd neumann perron_tiled)
full_twins=(linear_infsa spec_attention svd neumann perron_tiled)  # jacobian_spectrum: --vit
vit_twin=jacobian_spectrum
nbench=5  # bench slots in the table; the bundle's bench_* run in name order
# compute-sanitizer filters (Catch2 test specs, comma = or): kernels at quick sizes. racecheck
# only where kernels share memory: every twin (Linear-InfSA, the SpecA softmax, the Gram combine
# of jacobian_spectrum, svd's extract_r tiles, neumann's residual reduction, the tiled Perron
# product on partial tiles). With -w NoTests a
# filter that matches no test exits 2 (a failure), never a silent pass; tests/cli/
# test_gpu_check_script.cpp checks that each pattern opens a TEST_CASE name in tests/gpu/.
memcheck_filter="Linear-InfSA twin: bitwise reproducible*,spec_attention reruns*"
memcheck_filter+=",gpu svd_batched: the three paths*,gpu check_neumann: the quick cases*"
memcheck_filter+=",perron_tiled twin: partial tiles*"
racecheck_filter="Linear-InfSA twin: bitwise reproducible*,spec_attention reruns*"
racecheck_filter+=",perron_tiled twin: partial tiles*,gpu svd_batched: the three paths*"
racecheck_filter+=",gpu check_neumann: the quick cases*"
racecheck_filter+=",jacobian_spectrum twin agrees with the CPU enclosures on the quick cases*"

# The caps, in run order: step, seconds, what it runs. Estimates made without a device (context
# and library start-up ~2 s per process, the CPU references on 16 cores); their sum stays a few
# seconds under the budget for what runs between steps (the log archive after each).
cap_rows=()
cap_of() {
  case $1 in
    nvidia-smi) echo 5 ;; info) echo 5 ;; host) echo 5 ;;
    check-quick-*) echo 8 ;;
    gpu-tests) echo 60 ;; memcheck) echo 30 ;; racecheck) echo 40 ;;
    check-full-svd) echo 25 ;; check-full-perron_tiled) echo 25 ;;
    check-full-"$vit_twin") echo 60 ;;
    check-full-*) echo 15 ;;
    bench-slot) echo 25 ;; pack) echo 3 ;;
  esac
}
add_row() { cap_rows+=("$1|$(cap_of "$2")|$3"); }
add_row nvidia-smi nvidia-smi "nvidia-smi (info)"
add_row info info "attnspec info (info)"
add_row host host "where the CUDA libraries come from, glibc floor (info)"
for t in "${twins[@]}"; do
  add_row "check-quick-$t" "check-quick-$t" "gpu-check --quick --twin $t"
done
add_row gpu-tests gpu-tests "the gpu test program, whole"
add_row memcheck memcheck "compute-sanitizer memcheck, test filter below"
add_row racecheck racecheck "compute-sanitizer racecheck, test filter below"
for t in "${full_twins[@]}"; do add_row "check-full-$t" "check-full-$t" "gpu-check --twin $t"; done
for i in $(seq 1 $nbench); do
  add_row "bench-$i" bench-slot "a bench_* of the bundle, with its peer"
done
add_row "check-full-$vit_twin" "check-full-$vit_twin" \
  "gpu-check --twin $vit_twin (ViT-B case), optional (--vit)"
add_row pack pack "logs.tar.gz, a last time"
caps_total=0
for r in "${cap_rows[@]}"; do IFS='|' read -r _ s _ <<<"$r"; caps_total=$((caps_total + s)); done

print_caps() {
  echo "step caps (seconds, wall clock, kill included), in run order:"
  local r n s w
  for r in "${cap_rows[@]}"; do
    IFS='|' read -r n s w <<<"$r"
    printf '  %4d s  %-32s %s\n' "$s" "$n" "$w"
  done
  echo "caps total: $caps_total s (budget: 480 s)"
  echo "memcheck filter: $memcheck_filter"
  echo "racecheck filter: $racecheck_filter"
  echo "twins: ${twins[*]}"
}
usage() { echo "usage: scripts/gpu-check.sh [--vit] [--python PY] OUT [BUNDLE]" \
  "| --caps | --help"; }

vit=0 py=""
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; print_caps
                 exit 0 ;;
    --caps) print_caps; exit 0 ;;
    --vit) vit=1; shift ;;
    --python)
      [ $# -ge 2 ] || { usage >&2; exit 64; }
      py=$2; shift 2 ;;
    --) shift; args+=("$@"); break ;;
    -*) echo "gpu-check.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then usage >&2; exit 64; fi
out=$(realpath -m "${args[0]}")
bundle=${args[1]:-attnspec-gpu.tar.xz}
mkdir -p "$out" || exit 73
work=$(mktemp -d "${TMPDIR:-/tmp}/attnspec-gpu-check.XXXXXX") || exit 73
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/reports"
if [ -d "$bundle" ]; then
  top=$(realpath "$bundle")
  [ -x "$top/run" ] || top=$top/attnspec-gpu
  [ -x "$top/run" ] ||
    { echo "gpu-check.sh: $bundle is not a bundle folder (no run)" >&2; exit 66; }
else
  [ -f "$bundle" ] ||
    { echo "gpu-check.sh: no bundle $bundle (make one with scripts/gpu-bundle.sh)" >&2; exit 66; }
  tar -C "$work" -xJf "$bundle" ||
    { echo "gpu-check.sh: cannot unpack $bundle" >&2; exit 74; }
  top=$work/attnspec-gpu
fi
run="$top/run"
start=$PWD
case $py in */*) py=$(realpath -m "$py") ;; esac
cd "$work" || exit 73  # the reports' paths in the summary read reports/NAME.h5
if [ -n "$py" ]; then export ATTNSPEC_PYTHON="$py" PYTHON="$py"; fi
budget=${ATTNSPEC_GPU_BUDGET:-480}
pack_reserve=$(cap_of pack)
t0=$SECONDS
passed=0 failed=0 nodev=0 short=0
failed_names="" nodev_names="" short_names=""
device=unknown  # yes / no, from the gpu-check steps and the gpu test program
summary=$out/summary.txt report=$out/gpu_check.txt
: >"$summary"
: >"$report"

note() { echo "$*" | tee -a "$summary"; }
fail_step() { failed=$((failed + 1)); failed_names+=" $1"; note "$1: FAILED, $2"; }
nodev_step() { nodev=$((nodev + 1)); nodev_names+=" $1"; note "$1: skipped: no device, $2"; }
short_step() { short=$((short + 1)); short_names+=" $1 ($2)"; note "$1: $2, $3"; }
pack() {
  tar -C "$work" -czf "$out/logs.tar.gz.part" logs reports 2>/dev/null &&
    mv -f "$out/logs.tar.gz.part" "$out/logs.tar.gz"
}
left() { echo $((budget - pack_reserve - (SECONDS - t0))); }

note "gpu-check.sh: bundle $top; caps total $caps_total s, budget $budget s"
extra=$(find "$out" -mindepth 1 -maxdepth 1 ! -name summary.txt ! -name gpu_check.txt \
  ! -name logs.tar.gz | wc -l)
[ "$extra" -eq 0 ] ||
  note "warning: $out already holds $extra other entries (the device tool brings back 8 files)"

# step NAME CAP KIND CMD...: runs CMD with the limit min(CAP, what is left of the budget), the
# last 2 s of it for the kill, and judges its exit code by KIND: info (never counted), test
# (77 = no device), check (gpu-check: 69 = no device, 72 = the backend failed to load), bench
# (69 = no device; exit 0 judged by its output), sanitizer (judged by what the earlier steps
# found out about the device).
step() {
  local name=$1 cap=$2 kind=$3; shift 3
  local lft
  lft=$(left)
  if [ "$lft" -le 5 ]; then
    if [ "$kind" = info ]; then note "$name: info, not run (budget of ${budget} s spent)"
    else fail_step "$name" "not run (budget of ${budget} s spent)"; fi
    return
  fi
  local lim=$((cap < lft ? cap : lft)) s=$SECONDS rc log=$work/logs/$name.log
  echo "=== $name (cap ${lim} s)"
  timeout -k 2 $((lim > 2 ? lim - 2 : 1)) "$@" >"$log" 2>&1
  rc=$?
  local last
  last=$(grep -v '^[[:space:]]*$' "$log" | tail -1 | cut -c1-160)
  local what="exit $rc in $((SECONDS - s)) s${last:+: $last}"
  tail -5 "$log"
  if [ "$kind" = check ]; then
    { echo "=== $name: $*"; echo "--- $what"; cat "$log"; echo; } >>"$report"
  fi
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    if [ "$kind" = info ]; then note "$name: info, timed out after ${lim} s"
    else fail_step "$name" "timed out after ${lim} s (exit $rc)"; fi
    pack
    return
  fi
  case $kind in
    info)
      note "$name: info, $what" ;;
    test | check | bench)
      local skip=69
      [ "$kind" = test ] && skip=77
      if [ $rc -eq 0 ] && [ "$kind" = bench ]; then
        device=yes
        local peer miss
        peer=$(grep -i -m1 'peer unavailable' "$log" | cut -c1-120)
        miss=$(grep -m1 '^target missed' "$log" | cut -c1-120)
        local t="exit 0 in $((SECONDS - s)) s"
        if [ -n "$miss" ]; then short_step "$name" "target missed" "$t: $miss"
        elif [ -n "$peer" ]; then short_step "$name" "peer unavailable" "$t: $peer"
        else passed=$((passed + 1)); note "$name: passed, $what"; fi
      elif [ $rc -eq 0 ]; then
        device=yes; passed=$((passed + 1)); note "$name: passed, $what"
      elif [ $rc -eq $skip ]; then
        [ "$device" = yes ] || device=no
        nodev_step "$name" "$what"
      elif [ "$kind" = check ] && [ $rc -eq 72 ]; then
        fail_step "$name" "the GPU backend failed to load (library there, not loadable), $what"
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
  pack
}

# shellcheck disable=SC2317  # run by `bash -c host_info` (exported) under the step's timeout
host_info() {
  local where floor host g
  where=$("$run" --where-cuda 2>&1)
  echo "$where"
  floor=$(sed -n 's/^glibc floor: \([0-9.]*\).*/\1/p' "$top/MANIFEST" 2>/dev/null)
  host=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
  if [ -z "$floor" ]; then g="glibc: host ${host:-unknown}, bundle floor unknown (no MANIFEST)"
  elif [ "$(printf '%s\n%s\n' "$floor" "${host:-0}" | sort -V | head -1)" = "$floor" ]; then
    g="glibc: host $host >= bundle floor $floor"
  else
    g="glibc: host ${host:-unknown} < bundle floor $floor: the bundle's programs cannot load"
  fi
  echo "$g"
  # One line for the summary: where the CUDA libraries come from, and glibc.
  where=$(echo "$where" | sed -n 's/^CUDA libraries: \(from [^(;]*\|not found\).*/\1/p' |
    sed 's/ *$//')
  echo "CUDA libraries ${where:-unknown (the bundle run has no --where-cuda)}; $g"
}

if command -v nvidia-smi >/dev/null 2>&1; then
  step nvidia-smi "$(cap_of nvidia-smi)" info nvidia-smi
else
  note "nvidia-smi: info, not found on PATH"
fi
step info "$(cap_of info)" info "$run" attnspec info
export -f host_info
export run top
step host "$(cap_of host)" info bash -c host_info
for t in "${twins[@]}"; do
  step "check-quick-$t" "$(cap_of "check-quick-$t")" check "$run" attnspec gpu-check --quick \
    --twin "$t" --out "reports/check-quick-$t.h5"
done
step gpu-tests "$(cap_of gpu-tests)" test "$run" attnspec_tests_gpu --durations yes
if [ -n "${ATTNSPEC_SANITIZER+set}" ]; then
  sanitizer=$ATTNSPEC_SANITIZER
  case $sanitizer in */*) sanitizer=$(cd "$start" && realpath -m "$sanitizer") ;; esac
else
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
fi
if [ -n "$sanitizer" ]; then
  step memcheck "$(cap_of memcheck)" sanitizer "$sanitizer" --tool memcheck --error-exitcode 1 \
    "$run" attnspec_tests_gpu -w NoTests "$memcheck_filter"
  step racecheck "$(cap_of racecheck)" sanitizer "$sanitizer" --tool racecheck \
    --error-exitcode 1 "$run" attnspec_tests_gpu -w NoTests "$racecheck_filter"
elif [ "$device" = no ]; then
  nodev_step sanitizer "not run (compute-sanitizer not found on PATH or under /usr/local/cuda)"
else
  fail_step sanitizer "not run: compute-sanitizer not found (PATH, /usr/local/cuda)"
fi
for t in "${full_twins[@]}"; do
  step "check-full-$t" "$(cap_of "check-full-$t")" check "$run" attnspec gpu-check --twin "$t" \
    --out "reports/check-full-$t.h5"
done
export ATTNSPEC_PEER_DIR="$top/bench"
i=0
for b in "$top"/bench/bench_*; do
  if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
  i=$((i + 1))
  if [ $i -gt $nbench ]; then
    short_step "$(basename "$b")" "not run" "no bench slot left ($nbench in the cap table)"
    continue
  fi
  step "$(basename "$b")" "$(cap_of bench-slot)" bench "$run" "$(basename "$b")"
done
vit_name=check-full-$vit_twin vit_cap=$(cap_of "check-full-$vit_twin")
vit_note=""
if [ $vit -eq 0 ]; then
  vit_note="optional ViT-B step not run (pass --vit)"
  note "$vit_name: not run, optional (pass --vit to run it)"
elif [ "$(left)" -lt "$vit_cap" ]; then
  vit_note="optional ViT-B step not run ($(left) s of the budget left, its cap is $vit_cap s)"
  note "$vit_name: not run, optional: $(left) s of the budget left, below its cap of $vit_cap s"
else
  step "$vit_name" "$vit_cap" check "$run" attnspec gpu-check --twin "$vit_twin" \
    --out "reports/$vit_name.h5"
fi

if [ $failed -gt 0 ]; then
  note "result: FAILED: $failed check(s) failed:$failed_names; $passed passed," \
    "$nodev skipped for want of a device, $short benchmark(s) short"
  code=1
elif [ $nodev -gt 0 ]; then
  note "result: NO DEVICE: $nodev check(s) skipped for want of a device:$nodev_names; none" \
    "failed; GPU numerics not verified"
  code=69
elif [ $short -gt 0 ]; then
  note "result: NOT ALL PASSED: $passed passed, none failed, but $short benchmark(s) fell" \
    "short:$short_names"
  code=2
else
  note "result: all $passed checks passed on the device${vit_note:+; $vit_note}"
  code=0
fi
note "total: $((SECONDS - t0)) s of $budget s; exit $code; files in $out: summary.txt," \
  "gpu_check.txt, logs.tar.gz (logs/, reports/)"
timeout "$pack_reserve" tar -C "$work" -czf "$out/logs.tar.gz" logs reports ||
  echo "gpu-check.sh: could not pack the logs into $out/logs.tar.gz" >&2
exit $code
