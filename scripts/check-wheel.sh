#!/usr/bin/env bash
# The package as a user gets it (issue 30): builds a wheel and an sdist from this checkout
# (the wheel through scripts/python-env.sh's CMake tree, so a warm run compiles nothing), checks
# what they hold (the extension, its stubs, py.typed, the pytest plugin's entry point; the sdist:
# the CMake project and the sources, no build tree; and that this check rejects a copy of the
# wheel without its stubs and of the sdist with a build tree), installs the wheel into a new virtual
# environment outside the checkout and runs the README's Python example there, as written.
# Usage: scripts/check-wheel.sh   (after scripts/test.sh or scripts/python-env.sh made build/python)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "check-wheel: $*"; }
fail() { echo "check-wheel: $*" >&2; exit 1; }
py=${ATTNSPEC_PY_DIR:-build/python}/venv/bin/python
[ -x "$py" ] || bash scripts/python-env.sh --no-test >/dev/null

t0=$SECONDS
ATTNSPEC_PY_WHEEL_DIR="$tmp/dist" bash scripts/python-env.sh >/dev/null
"$py" -m build --sdist --no-isolation -o "$tmp/dist" . >"$tmp/sdist.log" 2>&1 ||
  { cat "$tmp/sdist.log" >&2; fail "python -m build --sdist failed"; }
wheel=$(ls "$tmp"/dist/attnspec-*.whl) sdist=$(ls "$tmp"/dist/attnspec-*.tar.gz)
say "built $(basename "$wheel") and $(basename "$sdist") in $((SECONDS - t0)) s"

# What the wheel and the sdist hold; the checker must also reject a wheel without its stubs and an
# sdist carrying a build tree (planted, on copies of the two).
"$py" - "$wheel" "$sdist" "$tmp" <<'PY' || exit 1
import io, sys, tarfile, zipfile
wheel, sdist, tmp = sys.argv[1:4]

def problems(wheel, sdist):
    z = zipfile.ZipFile(wheel)
    names = z.namelist()
    need = ["attnspec/__init__.py", "attnspec/_core.pyi", "attnspec/py.typed",
            "attnspec/testing.py", "attnspec/pytest_plugin.py"]
    bad = ["wheel: " + n for n in need if n not in names]
    if not any(n.startswith("attnspec/_core.") and n.endswith(".so") for n in names):
        bad.append("wheel: attnspec/_core*.so")
    ep = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    if not ep or "attnspec.pytest_plugin" not in z.read(ep[0]).decode():
        bad.append("wheel: entry point pytest11 = attnspec.pytest_plugin")
    members = [m.split("/", 1)[-1] for m in tarfile.open(sdist).getnames()]
    for n in ["pyproject.toml", "CMakeLists.txt", "python/src/module.cpp", "lib/CMakeLists.txt"]:
        if n not in members:
            bad.append("sdist: " + n)
    bad += ["sdist: build tree " + m for m in members if m.startswith(("build/", "build-python/"))]
    return bad, len(names), len(members)

found, n_wheel, n_sdist = problems(wheel, sdist)
if found:
    sys.exit("check-wheel: %s" % "; ".join(found[:6]))
planted_wheel, planted_sdist = tmp + "/planted.whl", tmp + "/planted.tar.gz"
with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(planted_wheel, "w") as dst:
    for item in src.infolist():
        if item.filename != "attnspec/_core.pyi":
            dst.writestr(item, src.read(item.filename))
with tarfile.open(sdist) as src, tarfile.open(planted_sdist, "w:gz") as dst:
    for m in src.getmembers():
        dst.addfile(m, src.extractfile(m) if m.isfile() else None)
    root = src.getnames()[0].split("/", 1)[0]
    info = tarfile.TarInfo(root + "/build/CMakeCache.txt")
    dst.addfile(info, io.BytesIO(b""))
found, _, _ = problems(planted_wheel, planted_sdist)
if found != ["wheel: attnspec/_core.pyi", "sdist: build tree build/CMakeCache.txt"]:
    sys.exit("check-wheel: the content check missed a planted fault: %s" % found)
print("check-wheel: wheel %d files, sdist %d files: contents as expected (planted faults caught)"
      % (n_wheel, n_sdist))
PY

# A new environment, outside the checkout: install the wheel, run the README's example.
t0=$SECONDS
/usr/bin/python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel"
awk '/^## From Python/{f=1} f&&/^```python$/{p=1;next} p&&/^```$/{exit} p' README.md >"$tmp/example.py"
[ -s "$tmp/example.py" ] || fail "no Python example under the README's '## From Python'"
(cd "$tmp" && "$tmp/venv/bin/python" example.py) >"$tmp/example.out" 2>&1 ||
  { cat "$tmp/example.out" >&2; fail "the README's Python example failed in a new venv"; }
"$tmp/venv/bin/python" -c 'import attnspec, sys; sys.exit(attnspec.__file__.startswith(sys.argv[1]))' \
  "$root" || fail "the new venv imported attnspec from the checkout"
say "README example in a new venv ($((SECONDS - t0)) s): $(tail -1 "$tmp/example.out")"
