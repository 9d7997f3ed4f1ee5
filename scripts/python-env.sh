#!/usr/bin/env bash
# Builds the Python package attnspec into a virtual environment under build/ and runs its pytest
# suite (docs/python.md). scripts/test.sh runs it after ctest. Steps, each timed:
#   1. the venv DIR/venv (Debian's python3 -m venv; Debian's pip refuses global installs), once;
#   2. the build and test requirements from the package index (scikit-build-core, nanobind,
#      numpy, pytest, scipy, build), only when the venv lacks them (a stamp holds the list);
#   3. `pip install .` without build isolation, CMake's build tree kept in TREE, compiled through
#      ccache (scripts/ccache-env.sh): a warm rebuild compiles nothing. TREE is a sibling of build/
#      and uses build/'s generator (Makefiles) and ATTNSPEC_WERROR, so that the core's compile
#      commands, relative to the repository (CCACHE_BASEDIR), are build/'s: where build/'s core
#      is position-independent too (CUDA builds), they come from the cache build/ just filled;
#   4. pytest tests/python (the package suite; ATTNSPEC_CLI, when set, is the attnspec executable
#      the parity tests compare with, default build/cli/attnspec when present).
# Usage: bash scripts/python-env.sh [--no-test] [pytest arguments...]
# Environment: ATTNSPEC_PY_DIR, the venv's folder (default build/python); ATTNSPEC_PY_TREE, the
#              CMake tree (default build-python; keep it one level below the root for the cache);
#              ATTNSPEC_PY_JOBS (default nproc); ATTNSPEC_PY_VERBOSE=1 (show the CMake build);
#              ATTNSPEC_CMAKE_ARGS: its -DATTNSPEC_WERROR=ON is passed on (.ci/run sets it);
#              ATTNSPEC_PY_TORCH=1 also installs PyTorch (analyze, torch tests, bench/python);
#              ATTNSPEC_PY_WHEEL_DIR=DIR builds a wheel into DIR instead of step 3's install, and
#              skips step 4 (scripts/check-wheel.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
dir=${ATTNSPEC_PY_DIR:-build/python}
case "$dir" in /*) ;; *) dir="$root/$dir" ;; esac
tree=${ATTNSPEC_PY_TREE:-build-python}
case "$tree" in /*) ;; *) tree="$root/$tree" ;; esac
run_tests=1
if [ "${1:-}" = "--no-test" ]; then run_tests=0; shift; fi
t_all=$SECONDS
say() { echo "python-env: $*"; }

# 1. the virtual environment
t0=$SECONDS
if [ ! -x "$dir/venv/bin/python" ]; then
  if ! /usr/bin/python3 -m venv "$dir/venv"; then
    say "cannot create a venv (Debian: apt-get install python3-venv; scripts/install-deps.sh)" >&2
    exit 1
  fi
  say "created $dir/venv in $((SECONDS - t0)) s"
fi
py="$dir/venv/bin/python"

# 2. requirements (network only when the list changed or the venv is new)
reqs="scikit-build-core>=0.10 nanobind>=2.0 numpy pytest scipy build"
t0=$SECONDS
if [ "$(cat "$dir/venv/.attnspec-reqs" 2>/dev/null)" != "$reqs" ]; then
  # shellcheck disable=SC2086
  "$py" -m pip install -q --disable-pip-version-check $reqs
  echo "$reqs" >"$dir/venv/.attnspec-reqs"
  say "installed $reqs in $((SECONDS - t0)) s"
fi

# 2b. PyTorch, only when asked (ATTNSPEC_PY_TORCH=1): attnspec.analyze and the torch tests and
#     benchmarks use it; the default suite skips them without it (several GB from the index)
if [ "${ATTNSPEC_PY_TORCH:-0}" = 1 ] && ! "$py" -c "import torch" 2>/dev/null; then
  t0=$SECONDS
  "$py" -m pip install -q --disable-pip-version-check torch
  say "installed torch in $((SECONDS - t0)) s"
fi
# 3. build and install the package (CMake tree kept: incremental; ccache when installed)
source scripts/ccache-env.sh
defines=()
for a in "${CCACHE_CMAKE_ARGS[@]}"; do defines+=("--config-settings=cmake.define.${a#-D}"); done
case " ${ATTNSPEC_CMAKE_ARGS:-} " in
  *" -DATTNSPEC_WERROR=ON "*) defines+=("--config-settings=cmake.define.ATTNSPEC_WERROR=ON") ;;
esac
quiet=(-q)
[ "${ATTNSPEC_PY_VERBOSE:-0}" = 1 ] && quiet=(-v)
t0=$SECONDS
jobs=${ATTNSPEC_PY_JOBS:-$(nproc 2>/dev/null || echo 2)}
# CC/CXX as build/ finds them (scikit-build-core would name Python's sysconfig compiler,
# x86_64-linux-gnu-g++, and no compile command would match build/'s in the cache)
# ATTNSPEC_PY_WHEEL_DIR=DIR: build a wheel into DIR from the same tree instead of installing
# (scripts/check-wheel.sh), and run no tests.
pip_cmd=(install)
if [ -n "${ATTNSPEC_PY_WHEEL_DIR:-}" ]; then pip_cmd=(wheel -w "$ATTNSPEC_PY_WHEEL_DIR"); run_tests=0; fi
CC=${CC:-cc} CXX=${CXX:-c++} CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=$jobs \
  "$py" -m pip "${pip_cmd[@]}" "${quiet[@]}" --disable-pip-version-check --no-build-isolation \
  --no-deps --no-index --config-settings=build-dir="$tree" "${defines[@]}" .
if [ -n "${ATTNSPEC_PY_WHEEL_DIR:-}" ]; then
  say "built the wheel in $((SECONDS - t0)) s: $(ls "$ATTNSPEC_PY_WHEEL_DIR")"
else
  say "built and installed the package in $((SECONDS - t0)) s ($("$py" -c \
    'import attnspec; print("attnspec", attnspec.__version__)'))"
fi

# 4. the package's tests
if [ "$run_tests" = 1 ]; then
  t0=$SECONDS
  if [ -z "${ATTNSPEC_CLI:-}" ] && [ -x build/cli/attnspec ]; then
    export ATTNSPEC_CLI="$root/build/cli/attnspec"
  fi
  # from the venv's folder: the package under test is the installed one, not python/attnspec
  (cd "$dir" && "$py" -m pytest -q -p no:cacheprovider "$root/tests/python" "$@")
  say "pytest in $((SECONDS - t0)) s"
fi
say "total $((SECONDS - t_all)) s"
