#!/usr/bin/env bash
# CTest entry mpi.verify (MPI builds only, tests/CMakeLists.txt): `mpirun -n 2 attnspec verify
# ... --mpi` writes the report the serial run writes (compare-reports --rtol 0
# --counterexamples), with the instances spread over the ranks (thm3.4's searches included) and,
# under a --time-budget, with whole checks per rank (shards); a run where one rank fails (planted
# with ATTNSPEC_MPI_PLANT_FAILURE, or a refused problem) exits non-zero on every rank, keeps the
# previous report and leaves no shard file; ranks with different BLAS kernels are refused (64). Runs as root need --allow-run-as-root; 2 ranks on a
# machine with fewer cores need --oversubscribe (both are passed). --bind-to none: mpirun binds each
# rank to one core by default, and OpenBLAS then runs one thread, whose sums round differently in
# the last bits from the serial run's (model-kappa-J, a BLAS-heavy check, is in the selection to
# show it). About 20 s.
#   usage: verify_mpi.sh MPIEXEC ATTNSPEC PYTHON SOURCE_DIR
set -euo pipefail
mpiexec=$1 cli=$2 python=$3 src=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sel=(thm3.5 thm3.8 thm3.8-above-sigma1 infsa.neumann model-kappa-J --trials 8 -q --fail-on never)
launch=("$mpiexec" --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
mpi=("${launch[@]}" -n 2)

"$cli" verify "${sel[@]}" --out "$dir/serial.h5" > /dev/null
# instance mode (the default): every rank evaluates its share of each check's instances
"${mpi[@]}" "$cli" verify "${sel[@]}" --mpi --out "$dir/mpi.h5" > "$dir/mpi.out"
grep -q "^thm3.5: " "$dir/mpi.out"  # rank 0 prints the table
"$python" "$src/scripts/compare-reports.py" "$dir/serial.h5" "$dir/mpi.h5" --rtol 0 --counterexamples
# thm3.4's counterexample searches are spread too
"$cli" verify thm3.4 --trials 4 --search-evals 40 -q --fail-on never --out "$dir/s34.h5" > /dev/null
"${mpi[@]}" "$cli" verify thm3.4 --trials 4 --search-evals 40 -q --fail-on never --mpi \
    --out "$dir/m34.h5" > /dev/null
"$python" "$src/scripts/compare-reports.py" "$dir/s34.h5" "$dir/m34.h5" --rtol 0
# shard mode (a wall-clock limit: the ranks would not agree where it stops): whole checks per rank
"${mpi[@]}" "$cli" verify "${sel[@]}" --time-budget 1000 --mpi --out "$dir/shard.h5" \
    > "$dir/shard.out"
grep -q "merged 2 shard(s), 5 check(s) and 2 counterexample file(s)" "$dir/shard.out"
"$python" "$src/scripts/compare-reports.py" "$dir/serial.h5" "$dir/shard.h5" --rtol 0 --counterexamples

cp "$dir/serial.h5" "$dir/prev.h5"
expect_failure() {  # $1: what; $2: output; then the command. Exit non-zero, report untouched
    local what=$1 out=$2 rc=0
    shift 2
    "$@" > "$out" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] || { echo "$what: a failing rank must fail the run"; exit 1; }
    cmp "$dir/serial.h5" "$dir/prev.h5" || { echo "$what: the previous report changed"; exit 1; }
}
# instance mode, one rank fails outside an instance (planted): the other stops at its next exchange
expect_failure "planted rank failure" "$dir/plant.out" env ATTNSPEC_MPI_PLANT_FAILURE=1 \
    "${mpi[@]}" -x ATTNSPEC_MPI_PLANT_FAILURE "$cli" verify "${sel[@]}" --mpi --out "$dir/prev.h5"
grep -q "planted failure of rank 1" "$dir/plant.out"
grep -q "rank 0: stopped: another rank failed; no report was written" "$dir/plant.out"
# instance mode, every rank refuses the same problem (model-kappa-J above --max-memory 1M: 65)
expect_failure "refused problem" "$dir/refuse.out" "${mpi[@]}" "$cli" verify thm3.5 \
    model-kappa-J --trials 4 -q --max-memory 1M --mpi --out "$dir/prev.h5"
grep -q "max" "$dir/refuse.out"
# instance mode, ranks whose BLAS kernels differ (their last bits would): refused before any work
core=$("$cli" info | sed -n 's/^blas_core: //p')
other=Haswell
[ "$core" = Haswell ] && other=Sandybridge
expect_failure "different BLAS kernels" "$dir/blas.out" "${launch[@]}" -n 1 "$cli" verify thm3.5 \
    --mpi -q --out "$dir/prev.h5" : -n 1 -x ATTNSPEC_BLAS_CORE=$other "$cli" verify thm3.5 --mpi \
    -q --out "$dir/prev.h5"
grep -q "rank 1 runs another build or BLAS than rank 0" "$dir/blas.out"
# shard mode: one rank fails (model-kappa-J's shard), the other holds thm3.5
expect_failure "failing shard" "$dir/fail.out" "${mpi[@]}" "$cli" verify thm3.5 model-kappa-J \
    --trials 4 -q --max-memory 1M --time-budget 1000 --mpi --out "$dir/prev.h5"
grep -q "another rank failed; no report was written" "$dir/fail.out"
left=$(find "$dir" -name '.*' | wc -l)
[ "$left" -eq 0 ] || { echo "shard files left: $(find "$dir" -name '.*')"; exit 1; }
echo "mpi.verify: 2 ranks = serial run (instances spread, and shards); a failing rank fails" \
    "every rank and writes nothing"
