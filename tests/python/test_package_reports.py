"""attnspec.reports: reports the CLI writes in the test, read by the package (kind, check runs,
page) and compared with `attnspec report show --json`, and rendered by the package and by
`attnspec report render` into the same page."""
import os
import shutil

import pytest

from cli_support import ROOT, run_cli, same

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")

CHEAP = ["thm3.5", "infsa.perron"]


@pytest.fixture(scope="module")
def verify_report(cli, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("verify") / "v.h5")
    run_cli(cli, "verify", *CHEAP, "--seed", "3", "--threads", "1", "--quiet", "--out", path)
    return path


@pytest.fixture(scope="module")
def neumann_report(cli, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("neumann") / "n.h5")
    run_cli(cli, "neumann", "--tokens", "24", "--dh", "6", "--seed", "2", "--out", path)
    return path


def test_verify_report_is_what_report_show_reads(cli, verify_report):
    show = run_cli(cli, "report", "show", verify_report)
    r = attnspec.reports.read(verify_report)
    assert r.kind == show["kind"] == "verify"
    assert list(r.summary) == show["summary"]
    assert [c.name for c in r.checks] == [c["name"] for c in show["checks"]] == CHEAP
    runs = attnspec.checks.run(CHEAP, seed=3, threads=1)  # the same run, in this process
    assert r.verdicts == runs.verdicts
    for c in r.checks:
        run = runs[c.name]
        assert (c.kind, c.claim, c.source, c.headline) == (run.kind, run.claim, run.source,
                                                           run.headline)
        assert c.instances == len(run.records)
        assert c.counts == {v: run.count(v) for v in attnspec.checks.VERDICTS}
        assert list(c.regimes["regime"]) == [g.regime for g in run.regimes]
        for i, g in enumerate(run.regimes):
            assert same(c.regimes["worst_ratio"][i], g.worst_ratio)
        for rec in c.records:  # the stored records' headlines are the run's records
            mine = [x for x in run.records if (x.regime, str(x.seed)) == (rec.regime, rec.seed)]
            assert len(mine) == 1 and mine[0].verdict == rec.verdict
            assert [x.name for x in rec.comparisons] == [x.name for x in mine[0].comparisons]
            assert all(same(a.lhs, b.lhs) and same(a.rhs, b.rhs)
                       for a, b in zip(rec.comparisons, mine[0].comparisons))
    assert r.provenance == show["provenance"] and r.provenance["seed"] == "3"
    assert "report " + verify_report in r.text


def test_neumann_report_page(cli, neumann_report):
    show = run_cli(cli, "report", "show", neumann_report)
    r = attnspec.reports.read(neumann_report)
    assert r.kind == show["kind"] == "neumann"
    assert list(r.summary) == show["summary"] and r.summary
    assert r.checks == () and r.sections
    shown = run_cli(cli, "report", "show", neumann_report, as_json=False)
    assert r.text == shown
    for s in r.sections:
        for t in s.tables:
            lengths = {len(c) for c in t.columns.values()}
            assert len(lengths) == 1  # every column has one cell per row


@pytest.mark.parametrize("which", ["verify_report", "neumann_report"])
def test_markdown_equals_report_render(cli, which, request, tmp_path):
    path = request.getfixturevalue(which)
    ref = tmp_path / "cli.md"
    run_cli(cli, "report", "render", path, "--out", str(ref), as_json=False)
    mine = tmp_path / "py.md"
    assert attnspec.reports.render(path, str(mine)) == 0
    assert mine.read_text() == ref.read_text() == attnspec.reports.markdown(path)


def figures_available():
    from subprocess import run
    py = os.environ.get("ATTNSPEC_PYTHON", "/usr/bin/python3")
    return shutil.which(py) and run([py, "-c", "import matplotlib, h5py"]).returncode == 0


def test_render_directory_equals_report_render(cli, verify_report, tmp_path):
    if not figures_available():
        pytest.skip("the figures script needs matplotlib and h5py for /usr/bin/python3")
    ref, mine = tmp_path / "cli", tmp_path / "py"
    run_cli(cli, "report", "render", verify_report, "--out", str(ref), as_json=False)
    n = attnspec.reports.render(verify_report, str(mine))
    assert n > 0
    assert (mine / "report.md").read_text() == (ref / "report.md").read_text()
    assert sorted(os.listdir(mine / "figures")) == sorted(os.listdir(ref / "figures"))
    assert (mine / "figures" / "figures.tsv").read_text() == (
        ref / "figures" / "figures.tsv").read_text()
    # again over the page it made: replaced atomically; without figures, report.md only
    assert attnspec.reports.render(verify_report, str(mine), figures=False) == 0
    assert "report.md" in os.listdir(mine) and "figures" not in os.listdir(mine)


def test_reference_report_reads(cli):
    path = os.path.join(ROOT, "reports", "reference", "verify.h5")
    show = run_cli(cli, "report", "show", path)
    r = attnspec.reports.read(path)
    assert r.kind == "verify" and list(r.summary) == show["summary"]
    assert [c.name for c in r.checks] == [c["name"] for c in show["checks"]]
    assert [e.name for e in r.experiments]  # the reference run has experiments (tables)
    e = r.experiments[0]
    cols = list(e.table.keys())  # a DataFrame or a dict of arrays: one length, > 0
    assert cols and len({len(e.table[c]) for c in cols}) == 1 and len(e.table[cols[0]])


@pytest.mark.parametrize("args, exc", [
    (("no-such-report.h5",), attnspec.InputNotFoundError),
    ((os.path.join(ROOT, "CMakeLists.txt"),), attnspec.Error),
])
def test_read_errors(args, exc):
    with pytest.raises(exc):
        attnspec.reports.read(*args)


def test_render_refuses_its_input_and_foreign_directories(verify_report, tmp_path):
    with pytest.raises(attnspec.UsageError):
        attnspec.reports.render(verify_report, verify_report)  # the input itself
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("not a page")
    with pytest.raises(attnspec.OutputError):
        attnspec.reports.render(verify_report, str(foreign))
    assert os.listdir(foreign) == ["keep.txt"]
