#!/usr/bin/env python3
"""Which translation units clang-tidy must see again (scripts/tidy.sh).

Usage: tidy-select.py BUILD_DIR CHANGED_LIST CANDIDATE_LIST

CHANGED_LIST: a file of repository-relative paths changed since the last commit a full tidy run
passed on. CANDIDATE_LIST: the repository-relative sources tidy covers. Prints, one per line, the
candidates that are in BUILD_DIR/compile_commands.json and either changed themselves or include
(directly or not) a changed file, read from the compiler's dependency file next to the object
(<object>.d, written by the build). A unit whose dependency file is missing or unreadable is
printed too: it cannot be shown unchanged, so it is checked. Exit 0; 2 on a usage error.
"""
import json
import os
import shlex
import sys


def object_of(entry):
    """The object file a compile_commands entry writes (its -o argument), absolute."""
    if "output" in entry:
        out = entry["output"]
    else:
        args = entry.get("arguments") or shlex.split(entry["command"])
        out = None
        for i, a in enumerate(args):
            if a == "-o" and i + 1 < len(args):
                out = args[i + 1]
            elif a.startswith("-o") and len(a) > 2:
                out = a[2:]
        if out is None:
            return None
    return os.path.normpath(os.path.join(entry["directory"], out))


def dependencies(depfile, directory):
    """The paths a Make-style dependency file names, absolute and normalised."""
    with open(depfile, encoding="utf-8", errors="replace") as f:
        text = f.read().replace("\\\n", " ")
    deps = set()
    for line in text.splitlines():
        if ":" not in line:
            continue
        _, rhs = line.split(":", 1)
        for tok in rhs.split():
            deps.add(os.path.normpath(os.path.join(directory, tok)))
    return deps


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build, changed_list, candidate_list = argv[1:]
    root = os.getcwd()
    with open(changed_list, encoding="utf-8") as f:
        changed = {os.path.normpath(os.path.join(root, p.strip())) for p in f if p.strip()}
    with open(candidate_list, encoding="utf-8") as f:
        candidates = [p.strip() for p in f if p.strip()]
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = {os.path.normpath(e["file"]): e for e in json.load(f)}
    for rel in candidates:
        path = os.path.normpath(os.path.join(root, rel))
        entry = entries.get(path)
        if entry is None:
            continue  # not compiled in this configuration (e.g. the CUDA stub's twin)
        if path in changed:
            print(rel)
            continue
        obj = object_of(entry)
        try:
            deps = dependencies(obj + ".d", entry["directory"]) if obj else None
        except OSError:
            deps = None
        if deps is None or deps & changed:
            print(rel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
