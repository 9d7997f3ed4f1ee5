#!/usr/bin/env bash
# kappa(J) through the CLI at MiniLM size (issue 13, "the user's path is the engine's path"):
# wall time and peak RSS (/usr/bin/time -v) of `attnspec jacobian --svd auto` on
#   - a real MiniLM head: --dataset minilm-l6:0:0:7 (the longest sentence, N = 58; J 1856 x 36864)
#   - a random (128, 384, 32) head with layer-normed tokens (J 4096 x 36864, 1.1 GiB dense)
# each printed with its ratio to the targets (<= 3 s, <= 0.5 GB). With a second binary, both run
# side by side (before / after) in one session.
#
# usage: bench/bench_cli_kappa.sh [BUILD/cli/attnspec [BEFORE/cli/attnspec]]
#        (default build/cli/attnspec; run from the source tree so the datasets are found)
# Quote the numbers with the BLAS core that ran: OPENBLAS_CORETYPE (or `attnspec info`).
set -euo pipefail
after=${1:-build/cli/attnspec}
before=${2:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target_s=3
target_gb=0.5
cases=("--dataset minilm-l6:0:0:7 --svd auto"
       "--random 128,384,32 --seed 1 --token-dist layernorm --svd auto")

# measure BIN ARGS -> "seconds max_rss_kib cpu_seconds" (CPU = user + system: on a loaded machine
# the wall time says how much of the cores the run got, the CPU time how much work it did)
measure() {
    local bin=$1
    shift
    /usr/bin/time -v -o "$out/time" "$bin" jacobian "$@" --out "$out/r.h5" >"$out/stdout" \
        2>"$out/stderr" || { echo "FAILED: $bin jacobian $*" >&2; tail -3 "$out/stderr" >&2; return 1; }
    local wall rss
    wall=$(grep 'Elapsed (wall clock)' "$out/time" | sed 's/.*): //' |
           awk -F: '{s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s}')
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$out/time")
    echo "$wall $rss $cpu"
}

echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset (the BLAS detects the core)}, $(nproc) cores"
for c in "${cases[@]}"; do
    read -r -a args <<<"$c"
    echo "attnspec jacobian $c"
    for which in after before; do
        bin=${!which}
        [ -n "$bin" ] || continue
        read -r wall rss cpu < <(measure "$bin" "${args[@]}")
        awk -v w="$which" -v t="$wall" -v r="$rss" -v c="$cpu" -v ts="$target_s" -v tg="$target_gb" 'BEGIN {
            gb = r * 1024 / 1e9
            printf "  %-6s %7.2f s (%.2fx the %g s target), %.2f CPU s  %6.3f GB peak RSS (%.2fx the %g GB target)\n",
                   w, t, t / ts, ts, c, gb, gb / tg, tg }'
    done
done
