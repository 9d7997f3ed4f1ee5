#!/usr/bin/env bash
# Every example of docs/cli/<command>.md that states a time or a memory (issue 13, "every example
# finishes on 2 cores in the time its documentation states"; the examples and their times moved
# from --help to the command pages in issue 29): runs each one as the page prints it, with
# /usr/bin/time -v, and prints its wall time, CPU time (user + system) and peak RSS with the ratio
# to what the page states. The `jacobian` examples state CPU seconds (its page says so), the ViT-B
# one and `verify --all` wall time. Before running, each example's command text is looked up on
# the page of its command: an example edited on the page but not here (or the reverse) fails the
# script (exit 1) instead of timing something the page no longer shows.
#
# usage: bench/bench_help_examples.sh [BUILD/cli/attnspec] [--quick]
#        (default build/cli/attnspec; run from the source tree so the datasets and docs/cli/ are
#        found; --quick leaves out the ViT-B head and verify --all, about 70 s of the ~2 min)
# Exit: 0 every example within what its page states, 1 one over it (or an example missing from
# its page, or one failed). Quote the numbers with the machine's load (printed) and BLAS core.
set -euo pipefail
bin=build/cli/attnspec
quick=0
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    -h | --help)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) bin=$a ;;
    esac
done
[ -x "$bin" ] || { echo "bench_help_examples: no executable $bin (build first)" >&2; exit 66; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# command | text the help shows (a unique part of the example line) | limit | unit (cpu|wall) | GB
# (0: the help states no memory). Arguments after the shown text are added here: --out/--no-report
# keep the example from writing into reports/out/.
examples=(
    "jacobian|--random 128,384,32 --seed 1 --token-dist layernorm --svd auto|3.1|cpu|0.3"
    "jacobian|--dataset minilm-l6:0:0 --svd auto|1|cpu|0"
    "jacobian|--random 64,128,32 --svd auto --store-j|2.5|cpu|0"
    "jacobian|--random 128,384,32 --max-memory 2GiB --store-limit 0|2.5|cpu|0"
    "jacobian|--random 64,128,32 --token-dist gaussian --scale 1 --weight-scale 1.3 --svd extremal --no-report|2.5|cpu|0.38"
)
if [ "$quick" = 0 ]; then
    examples+=(
        "jacobian|--random 197,768,64 --token-dist layernorm --scale invsqrt --svd extremal --max-memory 8GiB|75|wall|2.6"
        "jacobian|--random 197,768,64 --seed 1 --token-dist gaussian --scale 1 --svd extremal --certify always --max-memory 10GiB --no-report|375|wall|11.25"
        "verify|--all|120|wall|0"
    )
fi
# "~x" is read as up to 1.25 x (2.5 for "~2 s", 3.1 for "~2.5 s"), "under a second" as 1 s, "< 2 min" as
# 120 s, "~1 min wall" as 75 s, "~5 min wall" as 375 s; the memory figures as stated, with the same 1.25 for "~".

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}," \
    "$("$bin" info 2>/dev/null | grep -i 'blas' | head -1 | sed 's/^ *//')"
status=0
for e in "${examples[@]}"; do
    IFS='|' read -r cmd shown limit unit gb <<<"$e"
    page=docs/cli/$cmd.md
    page_text=$(tr -s ' \\\n' ' ' <"$page" 2>/dev/null || true)
    if [[ "$page_text" != *"$shown"* ]]; then
        echo "MISSING from $page: $shown"
        status=1
        continue
    fi
    read -r -a args <<<"$shown"
    extra=(--out "$out/r.h5")
    [[ " $shown " == *" --no-report "* ]] && extra=()
    [ "$cmd" = verify ] && extra+=(-q)
    rc=0
    /usr/bin/time -v -o "$out/time" "$bin" "$cmd" "${args[@]}" "${extra[@]}" >"$out/stdout" \
        2>"$out/stderr" || rc=$?
    # verify's verdict codes (1 violated, 2 inconclusive) are results, not failures
    if [ "$rc" -ne 0 ] && ! { [ "$cmd" = verify ] && [ "$rc" -le 2 ]; }; then
        echo "FAILED (exit $rc): attnspec $cmd $shown"
        tail -3 "$out/stderr"
        status=1
        continue
    fi
    wall=$(grep 'Elapsed (wall clock)' "$out/time" | sed 's/.*): //' |
        awk -F: '{s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s}')
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$out/time")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2 * 1024 / 1e9}' "$out/time")
    verdict=$(awk -v w="$wall" -v c="$cpu" -v r="$rss" -v l="$limit" -v u="$unit" -v g="$gb" 'BEGIN {
        t = (u == "cpu") ? c : w
        ok = t <= l && (g == 0 || r <= 1.25 * g)
        printf "%s  %s %.2f s of %g s stated (%.2fx)", ok ? "ok  " : "OVER", u, t, l, t / l
        if (g > 0) printf ", %.2f GB of %g GB stated (%.2fx)", r, g, r / g
        printf "; wall %.2f s, CPU %.2f s, peak %.3f GB", w, c, r
    }')
    echo "$verdict  attnspec $cmd $shown"
    [[ $verdict == OVER* ]] && status=1
done
exit $status
