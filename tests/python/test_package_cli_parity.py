"""The package gives the CLI's numbers bit for bit: the same library functions on the same input
(`attnspec jacobian --dataset ... --svd ... --json` against attnspec.spectrum on the head
datasets.load gives). The CLI is the `cli` fixture (conftest.py, cli_support.py: skipped without
one, run with the OpenBLAS core the package loads with)."""
import json
import re

import pytest

from cli_support import num, run_cli

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")


def untimed(notes):
    """The notes without their measured seconds ("dpotrf 0.01 s" -> "dpotrf <t> s")."""
    return [re.sub(r"\b\d+(\.\d+)? s\b", "<t> s", n) for n in notes]


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
