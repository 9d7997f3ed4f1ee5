#!/usr/bin/env bash
# Regenerates reports/reference/ from the current build: the default run (`attnspec verify --all`
# with the reference seed) as verify.h5, its counterexample files (verify.counterexamples/) and its
# rendered page verify/ (report.md plus figures/: SVG, PNG, figures.tsv, figures.json, made by
# scripts/render_figures.py with matplotlib).
#   scripts/make-reference.sh            (after scripts/build.sh)
# scripts/check-reference.sh (run by CI) fails when the committed reference is not what this
# produces, or was made from a dirty tree (git_dirty = true); commit the code first, run this
# script from the clean tree, and commit the result after a change that moves a number.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/reference-args.sh
bin=${ATTNSPEC_BIN:-build/cli/attnspec}
script=${ATTNSPEC_RENDER_SCRIPT:-scripts/render_figures.py}
ref=reports/reference
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnspec-ref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$bin" verify --all "${REFERENCE_ARGS[@]}" --out "$tmp/verify.h5"
# A reference made by a binary built from uncommitted code reproduces no commit: refuse it (the
# binary records the tree it was built from; rebuild after committing).
dirty=$(/usr/bin/python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs.get('git_dirty', 'missing'))" "$tmp/verify.h5")
if [ "$dirty" != "false" ]; then
  echo "make-reference: the binary was built from a tree with git_dirty = $dirty: commit, rebuild, then run this again" >&2
  exit 1
fi
rm -rf "$ref"
mkdir -p "$ref"
cp -r "$tmp"/. "$ref"/
# The page is rendered from the committed path, as check-reference.sh renders it.
if [ -f "$script" ]; then
  "$bin" report render "$ref/verify.h5" --out "$ref/verify"
else
  echo "make-reference: $script not found: the reference page has no figures" >&2
  "$bin" report render "$ref/verify.h5" --out "$ref/verify" --no-figures
fi
echo "make-reference: wrote $(find "$ref" -type f | wc -l) files to $ref"
