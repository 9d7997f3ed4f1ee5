#!/usr/bin/env python3
"""Compare two attnspec HDF5 reports entry by entry: every dataset and every attribute, exactly
(NaN equal to NaN), ignoring what legitimately differs between two runs of the same seed: wall
times, creation time, host, command line and the build identity (git sha, versions, compiler).

    /usr/bin/python3 scripts/compare-reports.py A.h5 B.h5 [--ignore NAME ...] [--rtol R]
    /usr/bin/python3 scripts/compare-reports.py A.h5 B.h5 --counterexamples [--rtol R]
    /usr/bin/python3 scripts/compare-reports.py --json A.json B.json [--rtol R]

With --counterexamples, the reports' companion directories (<stem>.counterexamples, written by
`verify`) are compared too: the same file names, and each pair of instance files entry by entry
under the same rules (used to show that `report merge` of shards gives the unsharded run's files).

With --json, A and B are the figures' data of two renderings (figures.json, reports/SCHEMA.md
"Rendered report directory"): the same keys, list lengths and strings, numbers to --rtol.

With --rtol R, floating-point entries agree when |a - b| <= R * max(|a|, |b|) element by element
(NaN equal to NaN, infinities equal only to themselves); integers and strings (verdicts, counts,
regime names) are always compared exactly. Used by scripts/check-reference.sh, where the committed
reference may come from a CPU whose BLAS kernels round differently.

Exit 0 when the reports agree, 1 when they differ (the first differences are printed), 2 on a
usage or read error. Needs h5py and numpy (Debian: python3-h5py, python3-numpy).
Used to show that a refactoring changed no verdict and no number (run `attnspec verify --all`
with one seed on both builds: the thm3.4 search is bounded by evaluations, so a seed reproduces
the report unless a wall-clock cap, --time-budget or --search-seconds, cut it short), and by
scripts/check-reference.sh.
"""
import argparse
import json
import math
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover - environment problem
    print(f"compare-reports: {e} (install python3-h5py and python3-numpy)", file=sys.stderr)
    sys.exit(2)

# Attributes that describe the run or the build rather than the result.
RUN_ATTRIBUTES = {
    "seconds", "created_utc", "command_line", "host", "counterexample_dir",
    "git_sha", "git_dirty", "tool_version", "build_type", "compiler", "blas", "cuda",
}


def entries(path, ignore):
    out = {}
    with h5py.File(path, "r") as f:
        def take_attrs(name, obj):
            for k, v in obj.attrs.items():
                if k not in ignore:
                    out[f"{name}@{k}"] = v

        take_attrs("/", f)

        def visit(name, obj):
            take_attrs(name, obj)
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]

        f.visititems(visit)
    return out


def same(x, y, rtol=0.0):
    a, b = np.asarray(x), np.asarray(y)
    if a.shape != b.shape:
        return False
    if rtol > 0 and a.dtype.kind == "f" and b.dtype.kind == "f":
        a, b = a.astype(np.float64), b.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        finite = np.isfinite(a) & np.isfinite(b)
        with np.errstate(invalid="ignore"):  # inf - inf: decided by the equality test below
            close = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))
        ok = both_nan | (finite & close) | (~finite & ~np.isnan(a) & (a == b))
        return bool(np.all(ok))
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # strings and objects: no NaN
        return bool(np.array_equal(a, b))


def json_diffs(a, b, rtol, path="", out=None):
    """Paths where two JSON values differ (numbers: relative rtol; "nan" strings equal)."""
    out = [] if out is None else out
    num = (int, float)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"only in {'B' if k not in a else 'A'}: {path}/{k}")
            else:
                json_diffs(a[k], b[k], rtol, f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"differs: {path}: length {len(a)} | {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                json_diffs(x, y, rtol, f"{path}[{i}]", out)
    elif isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool):
        if not (a == b or abs(a - b) <= rtol * max(abs(a), abs(b))) or math.isnan(a) != math.isnan(b):
            out.append(f"differs: {path}: {a!r} | {b!r}")
    elif a != b:
        out.append(f"differs: {path}: {str(a)[:70]} | {str(b)[:70]}")
    return out


def companion(path):
    return (path[:-3] if path.endswith(".h5") else path) + ".counterexamples"


def compare_files(a, b, ignore, rtol, label=""):
    """Number of differing entries of two HDF5 files (the first 20 differences are printed)."""
    ea, eb = entries(a, ignore), entries(b, ignore)
    diffs = 0
    for key in sorted(set(ea) | set(eb)):
        if key not in ea or key not in eb:
            msg = f"only in {'B' if key not in ea else 'A'}: {label}{key}"
        elif not same(ea[key], eb[key], rtol):
            msg = f"differs: {label}{key}: {str(ea[key])[:70]} | {str(eb[key])[:70]}"
        else:
            continue
        diffs += 1
        if diffs <= 20:
            print(msg)
    return len(ea), len(eb), diffs


def compare_companions(a, b, ignore, rtol):
    """Differences between the counterexample directories of reports A and B."""
    da, db = companion(a), companion(b)
    fa = set(os.listdir(da)) if os.path.isdir(da) else set()
    fb = set(os.listdir(db)) if os.path.isdir(db) else set()
    diffs = 0
    for name in sorted(fa ^ fb):
        print(f"only in {'B' if name in fb else 'A'}'s counterexamples: {name}")
        diffs += 1
    for name in sorted(fa & fb):
        diffs += compare_files(os.path.join(da, name), os.path.join(db, name), ignore, rtol,
                               f"{name}:")[2]
    print(f"{len(fa)} counterexample files in A, {len(fb)} in B")
    return diffs


def main_json(args):
    try:
        with open(args.a) as fa, open(args.b) as fb:
            ja, jb = json.load(fa), json.load(fb)
    except (OSError, ValueError) as e:
        print(f"compare-reports: cannot read: {e}", file=sys.stderr)
        return 2
    diffs = json_diffs(ja, jb, args.rtol)
    for d in diffs[:20]:
        print(d)
    print(f"{len(diffs)} differences")
    return 1 if diffs else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--ignore", action="append", default=[],
                    help="another attribute name to ignore (repeatable)")
    ap.add_argument("--rtol", type=float, default=0.0,
                    help="relative tolerance for floating-point entries (default 0: exact)")
    ap.add_argument("--counterexamples", action="store_true",
                    help="also compare the reports' counterexample directories file by file")
    ap.add_argument("--json", action="store_true",
                    help="A and B are figures.json files (the figures' data), not reports")
    args = ap.parse_args()
    if args.json:
        return main_json(args)
    ignore = RUN_ATTRIBUTES | set(args.ignore)
    try:
        na, nb, diffs = compare_files(args.a, args.b, ignore, args.rtol)
        print(f"{na} entries in A, {nb} in B; {diffs} differences")
        if args.counterexamples:
            diffs += compare_companions(args.a, args.b, ignore, args.rtol)
    except OSError as e:
        print(f"compare-reports: cannot read: {e}", file=sys.stderr)
        return 2
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
