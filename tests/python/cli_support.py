"""Helpers of the package's CLI parity tests (tests/python/test_package_*.py): the attnspec
executable they compare with ($ATTNSPEC_CLI, else build/cli/attnspec; the `cli` fixture of
conftest.py skips without one) and running it. The CLI runs in the caller's environment: it picks
its OpenBLAS kernels as the package does (the best core of the build for the CPU, re-executing
itself where OpenBLAS chose a weaker one; the package loads OpenBLAS with that core: _blas.py,
docs/blas.md), so both run the same kernels."""
import json
import math
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cli_path():
    """The attnspec executable, or a pytest skip naming how to get one."""
    path = os.environ.get("ATTNSPEC_CLI")
    if path:
        assert os.access(path, os.X_OK), "ATTNSPEC_CLI=%s is not an executable" % path
        return path
    path = os.path.join(ROOT, "build", "cli", "attnspec")
    if not os.access(path, os.X_OK):
        pytest.skip("no attnspec executable: build it (scripts/build.sh) or set ATTNSPEC_CLI")
    return path


def run_cli(cli, *args, codes=(0,), as_json=True):
    """Runs `cli ARGS... [--json]`, asserts its exit code is one of `codes`, and returns the
    parsed JSON document (as_json) or stdout."""
    env = dict(os.environ)  # the CLI chooses its OpenBLAS core as the package does (_blas.py)
    argv = [cli, *args] + (["--json"] if as_json else [])
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode in codes, "%s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr)
    return json.loads(p.stdout) if as_json else p.stdout


def num(x):
    """A number of the CLI's JSON: %.17g round-trips; "inf", "-inf", "nan" come as strings."""
    return float(x)


def same(a, b):
    """Equal bits as numbers, NaN equal to NaN."""
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or a == b
