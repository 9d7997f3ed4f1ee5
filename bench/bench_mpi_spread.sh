#!/usr/bin/env bash
# verify --mpi with the instances spread over K ranks (issue 13, "sweeps beyond one machine"):
# wall time of `mpirun -n K attnspec verify ... --mpi --threads 1` against the serial
# `attnspec verify ... --threads 1`, R alternating runs each, medians and their ratio, and the two
# reports compared with scripts/compare-reports.py --rtol 0 --counterexamples (every round).
# K ranks on one machine with --threads 1 each use K cores, as --threads K does in one process:
# the ratio says what the exchanges and the work every rank repeats (dataset reads, plans,
# experiment tables) cost against a perfect K-fold split.
#
# usage: bench/bench_mpi_spread.sh [-n K] [-r R] [--cli BUILD/cli/attnspec] [-- VERIFY ARGS...]
#        (default K = 2, R = 3, build/cli/attnspec, verify --all; run from the source tree)
set -euo pipefail
k=2 reps=3 cli=build/cli/attnspec
args=(--all)
while [ $# -gt 0 ]; do
    case $1 in
        -n) k=$2; shift 2 ;;
        -r) reps=$2; shift 2 ;;
        --cli) cli=$2; shift 2 ;;
        --) shift; args=("$@"); break ;;
        *) echo "usage: $0 [-n K] [-r R] [--cli PATH] [-- VERIFY ARGS...]" >&2; exit 64 ;;
    esac
done
command -v mpirun >/dev/null || { echo "mpirun not found (openmpi-bin)" >&2; exit 69; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun -n "$k" --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
common=("${args[@]}" -q --fail-on never --threads 1)

seconds() {  # run the command, print its wall seconds
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$out/stderr" || { echo "FAILED: $*" >&2; tail -3 "$out/stderr" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "[setup] $(nproc) cores; load $(cut -d' ' -f1 /proc/loadavg); attnspec verify ${args[*]}:" \
     "serial --threads 1 vs mpirun -n $k --mpi --threads 1, $reps runs each, alternating"
: >"$out/serial.t"
: >"$out/mpi.t"
for r in $(seq 1 "$reps"); do
    s=$(seconds "$cli" verify "${common[@]}" --out "$out/serial.h5")
    m=$(seconds "${mpi[@]}" "$cli" verify "${common[@]}" --mpi --out "$out/mpi.h5")
    echo "$s" >>"$out/serial.t"
    echo "$m" >>"$out/mpi.t"
    /usr/bin/python3 scripts/compare-reports.py "$out/serial.h5" "$out/mpi.h5" --rtol 0 \
        --counterexamples >"$out/compare" || { cat "$out/compare"; echo "reports differ" >&2; exit 1; }
    same=$(head -1 "$out/compare")
    echo "  run $r: serial $s s, $k ranks $m s; $same"
done
ms=$(median <"$out/serial.t")
mm=$(median <"$out/mpi.t")
echo "median $ms s (serial) vs $mm s ($k ranks): speed-up $(echo "$ms $mm" |
     awk '{printf "%.2f", $1 / $2}')x (ideal $k x)"
