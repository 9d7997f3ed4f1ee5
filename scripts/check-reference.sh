#!/usr/bin/env bash
# CI: the committed reference report is what the current code produces.
#  1. re-runs the reference command (scripts/reference-args.sh) and compares the new report with
#     reports/reference/verify.h5 entry by entry (scripts/compare-reports.py: verdicts, counts and
#     strings exactly; floating-point values to a relative 1e-9, since BLAS kernels on another CPU
#     may round differently);
#  2. renders the committed report and requires reports/reference/verify.md to be that rendering;
#  3. requires the same counterexample files, and replays every committed one: each must come back
#     `violated` (exit 1) from its file alone.
# Fix a failure with scripts/make-reference.sh and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/reference-args.sh
bin=${ATTNSPEC_BIN:-build/cli/attnspec}
py=/usr/bin/python3
ref=reports/reference
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnspec-ref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-reference: $*" >&2; echo "check-reference: regenerate with scripts/make-reference.sh" >&2; exit 1; }

"$bin" verify --all "${REFERENCE_ARGS[@]}" --out "$tmp/verify.h5" > /dev/null
"$py" scripts/compare-reports.py --rtol 1e-9 "$ref/verify.h5" "$tmp/verify.h5" ||
  fail "reports/reference/verify.h5 is not what the current code produces"
"$bin" report render "$ref/verify.h5" --out "$tmp/rendered.md" > /dev/null
diff -u "$ref/verify.md" "$tmp/rendered.md" > "$tmp/md.diff" ||
  { head -40 "$tmp/md.diff"; fail "reports/reference/verify.md is not the rendering of verify.h5"; }
rm "$tmp/rendered.md"

# Counterexample files: the same names, and each replays to `violated` from the file alone.
(cd "$ref" && find . -name '*.h5' ! -name verify.h5 | sort) > "$tmp/committed.txt"
(cd "$tmp" && find . -name '*.h5' ! -name verify.h5 | sort) > "$tmp/regenerated.txt"
diff -u "$tmp/committed.txt" "$tmp/regenerated.txt" ||
  fail "the counterexample files differ from those the reference run writes"
n=0
while read -r f; do
  check=$("$py" -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['check'])" "$ref/$f")
  set +e
  "$bin" verify "$check" --instance "$ref/$f" --quiet > "$tmp/replay.txt" 2>&1
  rc=$?
  set -e
  [ $rc -eq 1 ] || { cat "$tmp/replay.txt"; fail "$ref/$f ($check) replayed with exit $rc, not 1 (violated)"; }
  n=$((n + 1))
done < "$tmp/committed.txt"
echo "check-reference: report matches, rendering current, $n counterexample files replay as violated"
