#!/usr/bin/env bash
# CI: the committed reference report is what the current code produces.
#  1. re-runs the reference command (scripts/reference-args.sh) and compares the new report with
#     reports/reference/verify.h5 entry by entry (scripts/compare-reports.py: verdicts, counts and
#     strings exactly; floating-point values to a relative 1e-9), both runs with the OpenBLAS
#     kernels that reference-args.sh pins (Haswell's): other kernels round differently, by far
#     more than 1e-9 in enclosure widths and rounding-level ratios;
#  2. renders the committed report as a page and requires reports/reference/verify/report.md and
#     figures/figures.tsv to be that rendering, and the figures' data (figures/figures.json) to
#     equal the committed ones (numbers to a relative 1e-9; pixels are not compared);
#  3. requires the same counterexample files, and replays every committed one: each must come back
#     `violated` (exit 1, with --fail-on readings so that a reading's files count too) from its
#     file alone;
#  0. first of all, requires the committed report to come from a clean tree: root attribute
#     git_dirty = "false" in verify.h5 (a report made from uncommitted code cannot be reproduced
#     from any commit).
# Fix a failure with scripts/make-reference.sh (from a clean tree: commit first) and commit the
# result.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/reference-args.sh
bin=${ATTNSPEC_BIN:-build/cli/attnspec}
script=${ATTNSPEC_RENDER_SCRIPT:-scripts/render_figures.py}
py=/usr/bin/python3
ref=${ATTNSPEC_REFERENCE_DIR:-reports/reference}  # tests point it at a copy
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnspec-ref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-reference: $*" >&2; echo "check-reference: regenerate with scripts/make-reference.sh" >&2; exit 1; }

dirty=$("$py" -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs.get('git_dirty', 'missing'))" "$ref/verify.h5")
[ "$dirty" = "false" ] ||
  fail "reports/reference/verify.h5 has git_dirty = $dirty: it was made from a tree with uncommitted changes (commit, then run scripts/make-reference.sh)"

mkdir "$tmp/run"
"$bin" verify --all "${REFERENCE_ARGS[@]}" --out "$tmp/run/verify.h5" > /dev/null
"$py" scripts/compare-reports.py --rtol 1e-9 "$ref/verify.h5" "$tmp/run/verify.h5" ||
  fail "reports/reference/verify.h5 is not what the current code produces"

# The page, rendered from the committed report (the path make-reference.sh renders).
page=$ref/verify
if [ -d "$page/figures" ]; then
  [ -f "$script" ] || fail "the reference page has figures but $script is missing"
  "$bin" report render "$ref/verify.h5" --out "$tmp/page" 2> "$tmp/render.err" ||
    { cat "$tmp/render.err"; fail "report render failed"; }
  diff -u "$page/figures/figures.tsv" "$tmp/page/figures/figures.tsv" ||
    fail "$page/figures/figures.tsv is not the figures of verify.h5"
  "$py" scripts/compare-reports.py --json --rtol 1e-9 "$page/figures/figures.json" \
    "$tmp/page/figures/figures.json" || fail "$page/figures/figures.json is not the data of verify.h5"
else
  [ ! -f "$script" ] || fail "the reference page has no figures, but $script exists"
  "$bin" report render "$ref/verify.h5" --out "$tmp/page" --no-figures 2> /dev/null
fi
diff -u "$page/report.md" "$tmp/page/report.md" > "$tmp/md.diff" ||
  { head -40 "$tmp/md.diff"; fail "$page/report.md is not the rendering of verify.h5"; }

# Counterexample files: the same names, and each replays to `violated` from the file alone.
(cd "$ref" && find . -name '*.h5' ! -name verify.h5 | sort) > "$tmp/committed.txt"
(cd "$tmp/run" && find . -name '*.h5' ! -name verify.h5 | sort) > "$tmp/regenerated.txt"
diff -u "$tmp/committed.txt" "$tmp/regenerated.txt" ||
  fail "the counterexample files differ from those the reference run writes"
n=0
while read -r f; do
  check=$("$py" -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['check'])" "$ref/$f")
  set +e
  "$bin" verify "$check" --instance "$ref/$f" --quiet --fail-on readings > "$tmp/replay.txt" 2>&1
  rc=$?
  set -e
  [ $rc -eq 1 ] || { cat "$tmp/replay.txt"; fail "$ref/$f ($check) replayed with exit $rc, not 1 (violated)"; }
  n=$((n + 1))
done < "$tmp/committed.txt"
echo "check-reference: report matches, page and figures' data current, $n counterexample files replay as violated"
