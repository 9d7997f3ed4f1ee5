"""attnspec.checks: the registry, runs and replays of `attnspec verify`, compared with the CLI on
the same checks and seed (equal verdicts, equal bits: the same library code runs), and the
replay of the committed counterexample files of reports/reference/ (scripts/check-reference.sh
replays each with the CLI and expects `violated`)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cli_support import ROOT, run_cli, same

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")

# Two cheap checks of different kinds of statement (weights' kappa; a certified Perron bound):
# 0.28 s and 0.01 s in `verify --all --threads 1` (proofs/registry.cpp, cost).
CHEAP = ["thm3.5", "infsa.perron"]
SEED = 7
REFERENCE = os.path.join(ROOT, "reports", "reference")
COUNTEREXAMPLES = os.path.join(REFERENCE, "verify.counterexamples")


@pytest.fixture(scope="module")
def runs():
    # threads=2 here, --threads 1 for the CLI: the runs are bit-identical for any thread count
    return attnspec.checks.run(CHEAP, seed=SEED, threads=2)


def assert_same_record(mine, ref):
    """A Record against a record of the CLI's JSON (json_check_result): every field, equal bits."""
    assert (mine.check, mine.regime, mine.seed, mine.verdict) == (
        ref["check"], ref["regime"], ref["seed"], ref["verdict"])
    assert [(h[0], h[1], h[2]) for h in mine.hypotheses] == [
        (h["name"], h["met"], h["detail"]) for h in ref["hypotheses"]]
    assert len(mine.comparisons) == len(ref["comparisons"])
    for c, r in zip(mine.comparisons, ref["comparisons"]):
        assert (c.name, c.relation, c.lhs_name, c.rhs_name, c.verdict, c.basis) == (
            r["name"], r["relation"], r["lhs_name"], r["rhs_name"], r["verdict"], r["basis"])
        for a, b in ((c.lhs, r["lhs"]), (c.rhs, r["rhs"]), (c.margin, r["margin"]),
                     (c.ratio, r["ratio"]), (c.lhs_lo, r["lhs_enclosure"][0]),
                     (c.lhs_hi, r["lhs_enclosure"][1]), (c.rhs_lo, r["rhs_enclosure"][0]),
                     (c.rhs_hi, r["rhs_enclosure"][1])):
            assert same(a, b), (c.name, a, b)
    assert [(t[0], t[2]) for t in mine.tolerances] == [
        (t["name"], t["reason"]) for t in ref["tolerances"]]
    assert all(same(t[1], r["value"]) for t, r in zip(mine.tolerances, ref["tolerances"]))
    assert mine.conventions == ref["conventions"]
    assert list(mine.values) == list(ref["values"])
    assert all(same(mine.values[k], ref["values"][k]) for k in ref["values"])
    assert mine.note == ref.get("note", "")


def test_list_is_verify_list(cli):
    text = run_cli(cli, "verify", "--list", as_json=False)
    rows = [line.split("\t") for line in text.splitlines() if line]
    mine = attnspec.checks.list()
    assert [c.name for c in mine] == [r[0] for r in rows]
    for c, (name, source, kind, rest) in zip(mine, rows):
        assert source == "reconstructed (%s)" % c.source
        assert kind == c.kind and kind in ("theorem", "reading", "experiment")
        assert rest == "%s  [%s]" % (c.summary, c.statement)
        assert os.path.exists(os.path.join(ROOT, c.statement))


def test_run_equals_the_cli(cli, runs):
    out = run_cli(cli, "verify", *CHEAP, "--seed", str(SEED), "--threads", "1", "--no-report")
    assert [c["name"] for c in out["checks"]] == [r.check for r in runs] == CHEAP
    assert runs.verdicts == {c["name"]: c["verdict"] for c in out["checks"]}
    for ref in out["checks"]:
        run = runs[ref["name"]]
        assert (run.kind, run.claim, run.seed, run.headline, run.source) == (
            ref["kind"], ref["claim"], ref["seed"], ref["headline_comparison"], ref["source"])
        assert len(run.records) == ref["instances"] > 0
        for v in attnspec.checks.VERDICTS:
            assert run.count(v) == ref["n_" + v]
        assert [g.regime for g in run.regimes] == [g["regime"] for g in ref["regimes"]]
        for g, r in zip(run.regimes, ref["regimes"]):
            assert (g.holds, g.violated, g.inconclusive, g.not_applicable) == (
                r["n_holds"], r["n_violated"], r["n_inconclusive"], r["n_not_applicable"])
            assert same(g.worst_ratio, r["worst_ratio"]) and same(g.median_ratio,
                                                                   r["median_ratio"])
        rec = ref.get("first_violation") or ref["tightest_instance"]
        mine = [r for r in run.records if (r.regime, r.seed) == (rec["regime"], rec["seed"])]
        assert len(mine) == 1
        assert_same_record(mine[0], rec)


def test_instance_table_has_the_report_columns(runs):
    for run in runs:
        t = run.instances
        assert list(t.keys()) == ["regime", "verdict", "seed", "lhs", "rhs", "margin", "ratio"]
        assert len(t["regime"]) == len(run.records)
        for i, rec in enumerate(run.records):
            c = rec.comparison(run.headline)
            assert (t["regime"][i], t["verdict"][i], int(t["seed"][i])) == (
                rec.regime, rec.verdict, rec.seed)
            assert same(t["lhs"][i], c.lhs) and same(t["margin"][i], c.margin)
            assert same(t["ratio"][i], c.ratio) and same(t["rhs"][i], c.rhs)
    stacked = runs.instances
    assert len(stacked["check"]) == sum(len(r.records) for r in runs)
    assert set(np.asarray(stacked["verdict"])) <= set(attnspec.checks.VERDICTS)


def test_table_without_pandas_is_a_dict_of_arrays(runs, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    t = runs.instances
    assert isinstance(t, dict)
    assert t["seed"].dtype == np.uint64 and t["lhs"].dtype == np.float64
    assert t["verdict"].dtype.kind == "U"


def test_table_is_a_dataframe_with_pandas(runs):
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (optional)")
    t = runs["thm3.5"].instances
    assert isinstance(t, pandas.DataFrame) and list(t.columns)[:3] == ["regime", "verdict", "seed"]
    assert len(t) == len(runs["thm3.5"].records) and t["seed"].dtype == np.uint64


def test_experiment_table_equals_the_cli(cli):
    # specA-sweep: an experiment (a table, no verdict); --trials 6 keeps it to 0.1 s
    out = run_cli(cli, "verify", "specA-sweep", "--seed", str(SEED), "--threads", "1",
                  "--trials", "6", "--no-report")
    ref = out["checks"][0]
    run = attnspec.checks.run("specA-sweep", seed=SEED, threads=1, trials=6)["specA-sweep"]
    assert run.kind == ref["kind"] == "experiment" and len(run.records) == ref["instances"]
    t = run.table
    assert list(t.keys()) == ref["axes"] + ref["columns"]
    assert len(t[ref["axes"][0]]) == len(ref["rows"]) > 0
    for i, row in enumerate(ref["rows"]):
        assert [t[a][i] for a in ref["axes"]] == [row[a] for a in ref["axes"]]
        assert all(same(t[c][i], row[c]) for c in ref["columns"]), i


def test_seed_decides_the_instances():
    a = attnspec.checks.run("infsa.perron", seed=SEED, threads=1)["infsa.perron"]
    b = attnspec.checks.run("infsa.perron", seed=SEED + 1, threads=1)["infsa.perron"]
    assert [r.seed for r in a.records] != [r.seed for r in b.records]


def counterexample_files():
    return sorted(f for f in os.listdir(COUNTEREXAMPLES) if f.endswith(".h5"))


def test_replay_counterexample_equals_the_cli(cli):
    name = counterexample_files()[0]
    path = os.path.join(COUNTEREXAMPLES, name)
    check = name.split("-instance_")[0]
    # a violated theorem exits 1 (what check-reference.sh expects of every file)
    out = run_cli(cli, "verify", check, "--instance", path, codes=(1,))
    r = attnspec.checks.replay(path)  # the check from the file
    assert r.verdict == "violated" and r.check == check
    assert (r.group, r.kind, r.source) == (out["group"], out["kind"], out["source"])
    assert_same_record(r, out["record"])


def test_replay_of_a_report_record_equals_the_cli(cli):
    path = os.path.join(REFERENCE, "verify.h5")
    out = run_cli(cli, "verify", "thm3.5", "--instance", path, codes=(0, 1))
    r = attnspec.checks.replay(path, "thm3.5")
    assert r.group == out["group"] and r.group.startswith("/checks/thm3.5/records/")
    assert_same_record(r, out["record"])


def h5py_python():
    """An interpreter with h5py (Debian's python3-h5py for /usr/bin/python3), or None."""
    py = "/usr/bin/python3"
    ok = os.access(py, os.X_OK) and subprocess.run([py, "-c", "import h5py"]).returncode == 0
    return py if ok else None


@pytest.mark.parametrize("edit, words", [
    ("f.attrs['schema_version'] = '2.0'", "schema_version '2.0'; this attnspec reads schema 1.x"),
    ("del f.attrs['schema_version']", "no schema_version"),
])
def test_replay_refuses_other_schemas(tmp_path, edit, words):
    py = h5py_python()
    if py is None:
        pytest.skip("no python3 with h5py to edit the file (python3-h5py)")
    path = str(tmp_path / "edited.h5")
    shutil.copy(os.path.join(COUNTEREXAMPLES, counterexample_files()[0]), path)
    subprocess.run([py, "-c", "import h5py, sys\nwith h5py.File(sys.argv[1], 'a') as f: " + edit,
                    path], check=True)
    with pytest.raises(attnspec.DataError) as e:
        attnspec.checks.replay(path)
    assert words in str(e.value)


@pytest.mark.parametrize("call, exc, parameter", [
    (lambda: attnspec.checks.run("no-such-check"), attnspec.UsageError, "names"),
    (lambda: attnspec.checks.run(CHEAP, threads=0), attnspec.UsageError, "threads"),
    (lambda: attnspec.checks.run(CHEAP, quick="yes"), attnspec.UsageError, "quick"),
    (lambda: attnspec.checks.run(CHEAP, regimes=["no-such-regime"]), attnspec.UsageError,
     "regimes"),
    # a fixed shape whose lower memory bound passes the budget: refused before any work
    (lambda: attnspec.checks.run(CHEAP, shape=(10**6, 10**6)), attnspec.DataError, "max_bytes"),
    (lambda: attnspec.checks.run(CHEAP, shape=(4,)), attnspec.UsageError, "shape"),
    (lambda: attnspec.checks.replay(os.path.join(REFERENCE, "verify.h5")), attnspec.UsageError,
     "check"),
    (lambda: attnspec.checks.replay(os.path.join(REFERENCE, "verify.h5"), "no-such-check"),
     attnspec.UsageError, "check"),
    (lambda: attnspec.checks.replay(os.path.join(ROOT, "no-such-file.h5"), "thm3.5"),
     attnspec.InputNotFoundError, None),
])
def test_bad_arguments_raise_named_errors(call, exc, parameter):
    with pytest.raises(exc) as e:
        call()
    if parameter is not None:
        assert e.value.parameter == parameter
