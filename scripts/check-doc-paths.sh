#!/usr/bin/env bash
# Every repository path the contributor docs name exists: fails (exit 1, FILE:LINE per path) when a
# `backticked` path in CONTRIBUTING.md or docs/*.md (docs/cli/*.md included) names nothing in the
# tree. A word inside backticks counts as a path when it is made of ASCII path characters (so
# formulas are skipped) and has a '/' or ends in a source or data extension; it exists when a
# file or folder has that path from the repository root, or ends with it ("io/h5.hpp" is
# lib/include/attnspec/io/h5.hpp; a bare "rounding.hpp" is any file of that name). Skipped:
# templates (<stem>, *, {cu,cpp}, ..., $VAR), metavariables (an upper-case first part no name in
# the tree starts with: F.h5, DIR/report.md; i/n), bare extensions (.cu), options, URLs, absolute
# paths, and run outputs (build*/, reports/out/).
# Usage: bash scripts/check-doc-paths.sh [repository root, default: this script's repository]
#        bash scripts/check-doc-paths.sh --self-test   (plants a missing path in copies of
#                                                       CONTRIBUTING.md and a docs page: each must
#                                                       be reported, the unplanted copy must pass)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd -P)"

check() {
  python3 - "$1" <<'PY'
import glob, os, re, sys

root = os.path.realpath(sys.argv[1])
paths, names = set(), set()
for dirpath, dirnames, files in os.walk(root):
    rel = os.path.relpath(dirpath, root)
    dirnames[:] = [d for d in dirnames if not (rel == "." and (d == ".git" or d.startswith("build")))]
    if rel != ".":
        paths.add(rel)
        names.add(os.path.basename(rel))
    for f in files:
        paths.add(f if rel == "." else f"{rel}/{f}")
        names.add(f)
stems = {n.split(".")[0] for n in names}
suffixes = set()
for p in paths:
    parts = p.split("/")
    for i in range(1, len(parts)):
        suffixes.add("/".join(parts[i:]))

ext = re.compile(r"\.(hpp|h|cpp|cu|cuh|md|py|sh|txt|cmake|json|h5|npz|yml|yaml|toml|cfg)$")
pathlike = re.compile(r"[A-Za-z0-9_.+/-]+")
template = re.compile(r"[<>*{}$=]|\.\.\.|^-|://|^/|^~|^\.[A-Za-z0-9]+$")
docs = ["CONTRIBUTING.md"] + sorted(
    os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
bad = 0
for doc in docs:
    full = os.path.join(root, doc)
    if not os.path.isfile(full):
        continue
    in_fence = False
    with open(full, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for span in re.findall(r"`([^`]+)`", line):
                for word in span.split():
                    w = word.rstrip(".,;:)")
                    w = w.split("#")[0]
                    if not w or template.search(w) or not pathlike.fullmatch(w) or \
                            not ("/" in w or ext.search(w)):
                        continue
                    if w.startswith(("build", "reports/out/")):
                        continue
                    # A metavariable (F.h5, DIR/report.md, SHARD.h5): an upper-case first part
                    # that no file or folder in the tree is named after (README.md is checked).
                    head = re.split(r"[./]", w, maxsplit=1)[0]
                    if (re.fullmatch(r"[A-Z][A-Z0-9_]{0,11}", head) and head not in stems) or \
                            re.fullmatch(r"[a-z]/[a-z]", w):  # --shard i/n
                        continue
                    p = w.rstrip("/")
                    ok = p in paths or p in suffixes if "/" in p else p in names
                    if not ok:
                        print(f"check-doc-paths: {doc}:{no}: `{w}` names no file or folder in the tree")
                        bad = 1
sys.exit(bad)
PY
}

self_test() {
  local src tmp out fail=0 f n
  src="$(cd "$here/.." && pwd -P)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  # The tree's names as empty files, the documents themselves as they are.
  (cd "$src" && git ls-files --cached --others --exclude-standard) | while IFS= read -r f; do
    mkdir -p "$tmp/$(dirname "$f")" && : >"$tmp/$f"
  done
  cp "$src/CONTRIBUTING.md" "$tmp/CONTRIBUTING.md"
  (cd "$src" && find docs -name '*.md' -print0 | tar --null -T - -cf -) | tar -xf - -C "$tmp"
  if ! out="$(check "$tmp")"; then
    echo "check-doc-paths self-test: FAILED: the unplanted copy does not pass:"
    echo "$out"
    return 1
  fi
  local expect=()
  for f in CONTRIBUTING.md docs/planted.md; do
    mkdir -p "$tmp/$(dirname "$f")" && touch "$tmp/$f"
    n="$(($(wc -l <"$tmp/$f") + 1))"
    echo 'See `gpu/src/attention/softmax_logic.hpp` for the arithmetic, `F.h5` for yours.' >>"$tmp/$f"
    expect+=("check-doc-paths: $f:$n: \`gpu/src/attention/softmax_logic.hpp\`")
    # an upper-case name the tree has (README.md) is a path, not a metavariable
    echo 'And `docs/README.md` too.' >>"$tmp/$f"
    expect+=("check-doc-paths: $f:$((n + 1)): \`docs/README.md\`")
  done
  if out="$(check "$tmp")"; then
    echo "check-doc-paths self-test: FAILED: the planted copy passes"
    return 1
  fi
  for f in "${expect[@]}"; do
    grep -qF "$f" <<<"$out" || {
      echo "check-doc-paths self-test: FAILED: not reported: ${f#check-doc-paths: }"
      fail=1
    }
  done
  [ "$(wc -l <<<"$out")" -eq "${#expect[@]}" ] || {
    echo "check-doc-paths self-test: FAILED: expected ${#expect[@]} lines, got:"
    echo "$out"
    fail=1
  }
  [ "$fail" -eq 0 ] && echo "check-doc-paths self-test: ok (${#expect[@]} planted paths reported, clean copy passes)"
  return "$fail"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
  exit $?
fi
root="$(cd "${1:-$here/..}" && pwd -P)"
if ! check "$root"; then
  echo "check-doc-paths: FAILED (a path the docs name does not exist)"
  exit 1
fi
echo "check-doc-paths: ok"
