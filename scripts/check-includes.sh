#!/usr/bin/env bash
# Dependencies point down (CONTRIBUTING.md, "Module map"): fails (exit 1, one line per include,
# FILE:LINE) when an #include in lib/ proofs/ gpu/ cli/ tests/ bench/
#   * in lib/ names a header of gpu/, proofs/ or cli/ (attnspec/gpu/..., attnspec/proofs/..., or a
#     path that resolves there);
#   * in proofs/ names a header of gpu/ or cli/; in gpu/ names a header of proofs/ or cli/;
#   * names a private library header lib/src/<module>/X.hpp from outside lib/src/<module>/;
#   * names a private GPU header gpu/src/<module>/X.hpp from outside gpu/;
#   * names a private proofs header proofs/X.hpp from outside proofs/;
#   * in lib/ names a header of a library module that is not below its own, in the order
#     base < spectral < attention, infsa, kernels < io < report (those three never include each
#     other; report is the only module that reads and writes report sections; a new module
#     is a finding until it is given its layer in LIB_RANK);
#   * in proofs/ names proofs/registry.hpp from anywhere but proofs/registry.cpp (the checks and
#     the run loop never include the registry: it includes them).
# Tests are white-box: tests/<suite>/<module>/ may include the private headers of <module> in
# lib/src/ and gpu/src/ (the CPU suite runs the twins' *_logic.hpp), tests/<suite>/gpu/ those of
# gpu/src/, tests/<suite>/proofs/ those of proofs/.
# A quoted include resolves against the including file's folder, then the include folders of the
# build (lib/include, gpu/include, proofs/include, cli, tests, tests/fuzz/support); attnspec/...
# names a public header by its second component. Unresolved names (system, generated) are skipped.
# Usage: bash scripts/check-includes.sh [repository root, default: this script's repository]
#        bash scripts/check-includes.sh --self-test   (plants one bad include per rule in a copy of
#                                                      the sources: each must be reported, and the
#                                                      unplanted copy must pass)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd -P)"

check() {
  python3 - "$1" <<'PY'
import os, re, sys

root = os.path.realpath(sys.argv[1])
top = ("lib", "proofs", "gpu", "cli", "tests", "bench")
exts = (".cpp", ".hpp", ".h", ".cu", ".cuh")
roots = ["lib/include", "gpu/include", "proofs/include", "cli", "tests", "tests/fuzz/support"]
inc = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def owner(rel):
    """(component, module, private) of a repository path, or None outside the sources."""
    p = rel.split("/")
    if p[0] == "lib" and len(p) > 3 and p[1] == "src":
        return ("lib", p[2], True)
    if p[0] == "lib":
        return ("lib", None, False)
    if p[0] == "gpu" and len(p) > 3 and p[1] == "src":
        return ("gpu", p[2], True)
    if p[0] == "gpu":
        return ("gpu", None, False)
    if p[0] == "proofs":
        return ("proofs", None, p[1] != "include")
    if p[0] in ("cli", "tests", "bench"):
        return (p[0], None, True)
    return None


def resolve(src_dir, name):
    for base in [src_dir] + [os.path.join(root, r) for r in roots]:
        cand = os.path.realpath(os.path.join(base, name))
        if os.path.isfile(cand) and cand.startswith(root + os.sep):
            return os.path.relpath(cand, root)
    return None


LIB_RANK = {"base": 0, "spectral": 1, "attention": 2, "infsa": 2, "kernels": 2, "io": 3,
            "report": 4}


def lib_module(rel):
    """The library module of a path under lib/ (src/<m>/ or include/attnspec/<m>/), else None."""
    p = rel.split("/")
    if p[0] == "lib" and len(p) > 3 and p[1] == "src":
        return p[2]
    if p[0] == "lib" and len(p) > 4 and p[1] == "include" and p[2] == "attnspec":
        return p[3]
    return None


def layer_problem(frm, tgt_rel, name):
    """The layering rules inside lib/ and proofs/ (see the header of this script)."""
    if name.startswith("attnspec/"):
        tgt = "lib/include/" + name if name.split("/")[1] not in ("gpu", "proofs") else None
    else:
        tgt = tgt_rel
    a, b = lib_module(frm), lib_module(tgt) if tgt else None
    for m in (a, b):
        if m is not None and m not in LIB_RANK:
            return f"lib/{m} is not in LIB_RANK (scripts/check-includes.sh): give it its layer"
    if a and b and a != b and LIB_RANK[b] >= LIB_RANK[a]:
        return (f"lib/{a} must not include lib/{b} "
                "(base < spectral < attention, infsa, kernels < io < report)")
    reg = name.endswith("proofs/registry.hpp") or (tgt_rel or "").endswith("proofs/registry.hpp")
    if frm.startswith("proofs/") and reg and frm != "proofs/registry.cpp":
        return "only proofs/registry.cpp includes the registry (checks and run loop never do)"
    return None


def problem(frm, tgt_rel, name):
    why = layer_problem(frm, tgt_rel, name)
    if why:
        return why
    f = owner(frm)
    fp = frm.split("/")
    if name.startswith("attnspec/"):
        comp = name.split("/")[1]
        t = ("gpu", None, False) if comp == "gpu" else \
            ("proofs", None, False) if comp == "proofs" else ("lib", None, False)
    elif tgt_rel is None:
        return None
    else:
        t = owner(tgt_rel)
        if t is None:
            return None
    forbidden = {"lib": ("gpu", "proofs", "cli"), "proofs": ("gpu", "cli"),
                 "gpu": ("proofs", "cli")}
    if t[0] in forbidden.get(f[0], ()):
        return f"{f[0]}/ must not include {t[0]}/ (dependencies point down)"
    if not t[2] or t[0] in ("cli", "tests", "bench"):
        return None
    tests_module = fp[2] if fp[0] == "tests" and len(fp) > 3 else None
    if t[0] == "lib":
        if frm.startswith(f"lib/src/{t[1]}/") or tests_module == t[1]:
            return None
        return f"private header of lib/src/{t[1]}/ used outside it"
    if t[0] == "gpu":
        if f[0] == "gpu" or tests_module in (t[1], "gpu"):
            return None
        return "private header of gpu/src/ used outside gpu/"
    if t[0] == "proofs":
        if f[0] == "proofs" or tests_module == "proofs":
            return None
        return "private header of proofs/ used outside proofs/"
    return None


bad = 0
for d in top:
    for dirpath, dirnames, files in os.walk(os.path.join(root, d)):
        dirnames.sort()
        for fn in sorted(files):
            if not fn.endswith(exts):
                continue
            path = os.path.join(dirpath, fn)
            frm = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = inc.match(line)
                    if not m:
                        continue
                    quote, name = m.groups()
                    if quote == "<" and not name.startswith("attnspec/"):
                        continue
                    tgt = None if name.startswith("attnspec/") else resolve(dirpath, name)
                    why = problem(frm, tgt, name)
                    if why:
                        print(f'check-includes: {frm}:{no}: #include "{name}": {why}')
                        bad = 1
sys.exit(bad)
PY
}

self_test() {
  local src tmp out fail=0
  src="$(cd "$here/.." && pwd -P)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  (cd "$src" && find lib proofs gpu cli tests bench -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
    -print0 | tar --null -T - -cf -) | tar -xf - -C "$tmp"
  if ! out="$(check "$tmp")"; then
    echo "check-includes self-test: FAILED: the unplanted copy does not pass:"
    echo "$out"
    return 1
  fi
  # One planted include per rule: file, include line.
  local plants=(
    'lib/src/base/errors.cpp|#include "attnspec/gpu/base/hd.hpp"'
    'lib/include/attnspec/base/check.hpp|#include "attnspec/proofs/registry.hpp"'
    'lib/src/io/h5.cpp|#include "cli.hpp"'
    'proofs/registry.cpp|#include "attnspec/gpu/check/gpu_check.hpp"'
    'proofs/thm_3_5.cpp|#include "commands.hpp"'
    'gpu/src/base/driver_probe.cpp|#include "attnspec/proofs/registry.hpp"'
    'lib/src/attention/attention.cpp|#include "../spectral/operator_spectrum_internal.hpp"'
    'cli/cli.cpp|#include "../gpu/src/base/cuda_status_codes.hpp"'
    'tests/cpu/base/test_plant.cpp|#include "../../../gpu/src/infsa/infsa_faults.hpp"'
    'cli/cli.cpp|#include "../proofs/attention_run.hpp"'
    'lib/src/io/h5.cpp|#include "attnspec/report/kinds.hpp"'
    'lib/include/attnspec/spectral/svd.hpp|#include "../attention/jacobian.hpp"'
    'lib/src/infsa/neumann.cpp|#include "attnspec/attention/attention.hpp"'
    'proofs/run_loop.cpp|#include "attnspec/proofs/registry.hpp"'
    'lib/src/kernels/precision.cpp|#include "attnspec/infsa/perron.hpp"'
    'lib/src/newmod/x.cpp|#include "attnspec/base/errors.hpp"'
  )
  local p file line n expect=()
  for p in "${plants[@]}"; do
    file="${p%%|*}" line="${p#*|}"
    mkdir -p "$(dirname "$tmp/$file")"
    touch "$tmp/$file"
    n="$(($(wc -l <"$tmp/$file") + 1))"
    echo "$line" >>"$tmp/$file"
    expect+=("check-includes: $file:$n: ${line}:")
  done
  if out="$(check "$tmp")"; then
    echo "check-includes self-test: FAILED: the planted copy passes"
    return 1
  fi
  for p in "${expect[@]}"; do
    if ! grep -qF "$p" <<<"$out"; then
      echo "check-includes self-test: FAILED: not reported: ${p#check-includes: }"
      fail=1
    fi
  done
  [ "$(grep -c '' <<<"$out")" -eq "${#plants[@]}" ] || {
    echo "check-includes self-test: FAILED: expected ${#plants[@]} lines, got:"
    echo "$out"
    fail=1
  }
  [ "$fail" -eq 0 ] && echo "check-includes self-test: ok (${#plants[@]} planted includes reported, clean copy passes)"
  return "$fail"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
  exit $?
fi
root="$(cd "${1:-$here/..}" && pwd -P)"
if ! check "$root"; then
  echo "check-includes: FAILED (an include points up or into another module's private header)"
  exit 1
fi
echo "check-includes: ok"
