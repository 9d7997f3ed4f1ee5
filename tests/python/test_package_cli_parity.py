"""The package gives the CLI's numbers bit for bit: the same library functions on the same input
(`attnspec jacobian --dataset ... --svd ... --json` against attnspec.spectrum on the head
datasets.load gives). The CLI is $ATTNSPEC_CLI, else build/cli/attnspec (skipped without one).
The CLI runs with ATTNSPEC_BLAS_CORE=off: it keeps the OpenBLAS kernels OpenBLAS chose, as this
process does (the CLI's default may re-execute itself with faster ones: docs/blas.md)."""
import json
import os
import re
import subprocess

import pytest

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get("ATTNSPEC_CLI")
    if path:
        assert os.access(path, os.X_OK), "ATTNSPEC_CLI=%s is not an executable" % path
        return path
    path = os.path.join(ROOT, "build", "cli", "attnspec")
    if not os.access(path, os.X_OK):
        pytest.skip("no attnspec executable: build it (scripts/build.sh) or set ATTNSPEC_CLI")
    return path


def run_cli(cli, *args):
    env = dict(os.environ, ATTNSPEC_BLAS_CORE="off")
    p = subprocess.run([cli, *args, "--json"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def untimed(notes):
    """The notes without their measured seconds ("dpotrf 0.01 s" -> "dpotrf <t> s")."""
    return [re.sub(r"\b\d+(\.\d+)? s\b", "<t> s", n) for n in notes]


def num(x):
    return float(x)  # %.17g round-trips; "inf" / "nan" as strings


@pytest.mark.parametrize("selector, wrt, svd", [
    ("minilm-l6:0:0:0", "weights", "auto"),     # 352 rows: every Gram eigenvalue
    ("minilm-l6:3:7:2", "weights", "extremal"),  # Lanczos + refinement (+ certificate)
    ("minilm-l6:1:2:0", "input", "auto"),
])
def test_jacobian_spectrum_equals_the_cli_bit_for_bit(cli, selector, wrt, svd):
    out = run_cli(cli, "jacobian", "--dataset", selector, "--wrt", wrt, "--svd", svd,
                  "--no-report")
    ref = out["spectrum"][0]
    _, layer, head, sentence = selector.split(":")
    h = attnspec.datasets.load("minilm-l6").head(int(layer), int(head), int(sentence))
    sp = attnspec.spectrum(h, svd=svd, wrt=wrt)
    assert (sp.rows, sp.cols, sp.method, sp.mode) == (ref["rows"], ref["cols"], ref["method"],
                                                       ref["mode"])
    for mine, theirs in ((sp.kappa, ref["kappa_strict"]), (sp.kappa_nz, ref["kappa_nz"])):
        assert mine.value == num(theirs["value"])
        assert (mine.lo, mine.hi) == tuple(num(v) for v in theirs["enclosure"])
        assert mine.rank == theirs["rank"] and mine.convention == theirs["convention"]
    for mine, theirs in ((sp.sigma_max, ref["sigma_max"]), (sp.sigma_min, ref["sigma_min"])):
        assert mine.value == num(theirs["sigma"])
        assert (mine.lo, mine.hi) == tuple(num(v) for v in theirs["enclosure"])
        assert mine.basis == theirs["basis"]
    assert untimed(sp.notes) == untimed(ref["notes"])


def test_dataset_catalogue_equals_the_cli(cli):
    out = run_cli(cli, "dataset", "list")
    text = json.dumps(out)
    for name in attnspec.datasets.list():
        assert '"%s"' % name in text
