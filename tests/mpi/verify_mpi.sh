#!/usr/bin/env bash
# CTest entry mpi.verify (MPI builds only, tests/CMakeLists.txt): `mpirun -n 2 attnspec verify
# ... --mpi` writes the report the serial run writes (compare-reports --rtol 0
# --counterexamples), and a run where one rank fails exits non-zero on every rank, keeps the
# previous report and leaves no shard file. Runs as root need --allow-run-as-root; 2 ranks on a
# machine with fewer cores need --oversubscribe (both are passed). --bind-to none: mpirun binds each
# rank to one core by default, and OpenBLAS then runs one thread, whose sums round differently in
# the last bits from the serial run's (model-kappa-J, a BLAS-heavy check, is in the selection to
# show it). About 10 s.
#   usage: verify_mpi.sh MPIEXEC ATTNSPEC PYTHON SOURCE_DIR
set -euo pipefail
mpiexec=$1 cli=$2 python=$3 src=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sel=(thm3.5 thm3.8 thm3.8-above-sigma1 infsa.neumann model-kappa-J --trials 8 -q --fail-on never)
mpi=("$mpiexec" -n 2 --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)

"$cli" verify "${sel[@]}" --out "$dir/serial.h5" > /dev/null
"${mpi[@]}" "$cli" verify "${sel[@]}" --mpi --out "$dir/mpi.h5" > "$dir/mpi.out"
grep -q "merged 2 shard(s), 5 check(s) and 2 counterexample file(s)" "$dir/mpi.out"
"$python" "$src/scripts/compare-reports.py" "$dir/serial.h5" "$dir/mpi.h5" --rtol 0 --counterexamples

# one rank fails (model-kappa-J above --max-memory 1M: exit 65), the other holds thm3.5
cp "$dir/serial.h5" "$dir/prev.h5"
rc=0
"${mpi[@]}" "$cli" verify thm3.5 model-kappa-J --trials 4 -q --max-memory 1M --mpi \
    --out "$dir/prev.h5" > "$dir/fail.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || { echo "a failing rank must fail the run"; exit 1; }
grep -q "another rank failed; no report was written" "$dir/fail.out"
cmp "$dir/serial.h5" "$dir/prev.h5"  # the previous report is untouched
left=$(find "$dir" -name '.*' | wc -l)
[ "$left" -eq 0 ] || { echo "shard files left: $(find "$dir" -name '.*')"; exit 1; }
echo "mpi.verify: 2 ranks = serial run; a failing rank fails every rank and writes nothing"
