#!/usr/bin/env bash
# Regenerates reports/reference/ from the current build: the default run (`attnspec verify --all`
# with the reference seed), its Markdown rendering and its counterexample files.
#   scripts/make-reference.sh            (after scripts/build.sh)
# scripts/check-reference.sh (run by CI) fails when the committed reference is not what this
# produces; run this script and commit the result after a change that moves a number.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/reference-args.sh
bin=${ATTNSPEC_BIN:-build/cli/attnspec}
ref=reports/reference
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnspec-ref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$bin" verify --all "${REFERENCE_ARGS[@]}" --out "$tmp/verify.h5"
"$bin" report render "$tmp/verify.h5" --out "$tmp/verify.md"
rm -rf "$ref"
mkdir -p "$ref"
cp -r "$tmp"/. "$ref"/
echo "make-reference: wrote $(find "$ref" -type f | wc -l) files to $ref"
