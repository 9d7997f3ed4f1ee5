# The arguments of the reference run (sourced by make-reference.sh and check-reference.sh).
REFERENCE_ARGS=(--seed 20251 --quiet --fail-on never)
# The OpenBLAS kernels of the reference run, pinned: each core type rounds its own way (a
# Cooperlake machine's AVX-512 kernels and an AMD EPYC's Zen kernels gave kappa enclosures 0.5 %
# apart, and rounding-level ratios twice as large, on the same code), so a reference made on one
# CPU is reproduced on another only with the same kernels. Haswell's (AVX2 + FMA) run on every
# x86-64 CPU since 2013, Intel and AMD alike (OpenBLAS's Zen core uses them: Zen and Haswell
# gave bit-identical reports); a CPU without AVX2 or FMA refuses the setting (exit 64), so the
# check fails there rather than compare other kernels' numbers.
export ATTNSPEC_BLAS_CORE=Haswell
