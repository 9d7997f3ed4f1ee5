#!/usr/bin/env python3
"""Tests of scripts/render_figures.py (ctest label `python`).

Run: /usr/bin/python3 tests/python/test_render_figures.py [-v]. Exits 77 (ctest: skipped) when
matplotlib, h5py or numpy cannot be imported. The figures' numbers (figures.json) are compared
with the report read here, independently, with h5py.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import importlib
    importlib.import_module("matplotlib")  # the script draws with it: skipped without it
    import h5py
    import numpy as np
except ImportError as e:
    print("SKIP: %s (install python3-matplotlib python3-h5py)" % e)
    sys.exit(77)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "render_figures.py")
REFERENCE = os.path.join(ROOT, "reports", "reference", "verify.h5")
LAYERS, HEADS, SENTENCES = 6, 12, 3
LAMBDAS = [0.0, 0.5, 1.0, 2.0, 10.0, 50.0]
CORRECTIONS = ["none", "lambda:0.5", "lambda:1", "lambda:2", "lambda:10", "svd"]


def render(report, out, env=None):
    p = subprocess.run([sys.executable, SCRIPT, "--report", report, "--out", out],
                       capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stderr


def from_json(values):
    """The manifest's numbers back to floats ("inf", "nan" strings included)."""
    return np.array([float(v) for v in values], dtype=float)


def strings(ds):
    return [str(s) for s in ds.asstr()[()]]


def write_experiment(f, name, axes, columns):
    """An experiment group as reports/SCHEMA.md ("Experiments") lays it out."""
    g = f.create_group("checks/" + name)
    rows = len(next(iter(axes.values())))
    for key, value in (("kind", "experiment"), ("check", name), ("claim", "fixture"),
                       ("axes", ",".join(axes)), ("columns", ",".join(columns))):
        g.attrs[key] = value
    g.attrs["rows"] = np.int64(rows)
    for a, v in axes.items():
        g.create_dataset("table/" + a, data=[str(x) for x in v], dtype=h5py.string_dtype())
    for c, v in columns.items():
        g.create_dataset("table/" + c, data=np.asarray(v, dtype=float))


def grid(*sizes):
    return [tuple(ix) for ix in np.ndindex(*sizes)]


def write_weights_kappa(f, rng):
    cells = grid(LAYERS, HEADS, 3, len(CORRECTIONS))
    before = {c[:3]: 10 ** rng.uniform(0.3, 3) for c in cells}
    kb = np.array([before[c[:3]] for c in cells])
    ka = np.array([kb[i] if c[3] == 0 else 10 ** rng.uniform(0.05, 2.5)
                   for i, c in enumerate(cells)])
    write_experiment(f, "model-weights-kappa", {
        "layer": [c[0] for c in cells], "head": [c[1] for c in cells],
        "matrix": ["QKV"[c[2]] for c in cells], "correction": [CORRECTIONS[c[3]] for c in cells]},
        {"sigma_1": np.ones(len(cells)), "sigma_min": 1 / kb, "kappa_before": kb,
         "kappa_after": ka, "ratio": ka / kb, "lambda": np.zeros(len(cells)),
         "weyl_bound": np.full(len(cells), np.nan), "weyl_applies": np.zeros(len(cells)),
         "helped": (ka < kb).astype(float)})


def write_kappa_j(f, rng):
    cells = grid(LAYERS, HEADS, SENTENCES)
    bound = 10 ** rng.uniform(2, 9, len(cells))
    kappa = bound * 10 ** rng.uniform(-4, -0.1, len(cells))
    verdict = ["holds"] * len(cells)
    kappa[5], verdict[5] = bound[5] * 30, "violated"  # a planted violation
    bound[7] = np.inf  # an infinite bound: not drawn
    kappa[9], bound[9], verdict[9] = np.nan, np.nan, "not_applicable"
    write_experiment(f, "model-kappa-J", {
        "layer": [c[0] for c in cells], "head": [c[1] for c in cells],
        "sentence": [c[2] for c in cells], "verdict": verdict},
        {"N": np.full(len(cells), 12.0), "kappa_J": kappa, "bound": bound, "ratio": kappa / bound})


def write_speca(f, rng):
    cells = grid(LAYERS, HEADS, SENTENCES, len(LAMBDAS))
    lam = np.array([LAMBDAS[c[3]] for c in cells])
    kappa = 10 ** (1 + 0.3 * np.array([c[0] for c in cells]) + 0.5 * lam ** 0.5
                   + rng.normal(0, 0.3, len(cells)))
    kappa[3] = np.inf  # a rank-deficient J
    write_experiment(f, "model-speca-lambda", {
        "layer": [c[0] for c in cells], "head": [c[1] for c in cells],
        "sentence": [c[2] for c in cells]},
        {"lambda": lam, "kappa_J": kappa, "max_prob": 1 - 0.6 * np.exp(-lam / 3)})


def write_infsa(f, rng):
    cells = grid(LAYERS, HEADS, SENTENCES)
    n = len(cells)
    write_experiment(f, "model-infsa", {
        "layer": [c[0] for c in cells], "head": [c[1] for c in cells],
        "sentence": [c[2] for c in cells]},
        {"N": np.array([[9, 14, 23][c[2]] for c in cells], dtype=float),
         "rho": rng.uniform(0.2, 0.6, n), "min_R": rng.uniform(0, 0.5, n),
         "K_1e-6": rng.integers(8, 30, n).astype(float),
         "cos_left": 1 - 10 ** rng.uniform(-3, -0.7, n),
         "cos_right": 1 - 10 ** rng.uniform(-2.5, -0.5, n)})


def write_tool_groups(f, rng):
    """/neumann, /fidelity, /jacobian (--svd full), /cond as reports/SCHEMA.md lays them out."""
    K = np.array([1, 2, 4, 8, 16, 32])
    t = f.create_group("neumann/truncation")
    f["neumann"].attrs.update({"N": np.int64(64), "gamma": 0.95})
    t.attrs.update({"target": 1e-6, "K_for_target": np.int64(24)})
    t["K"], t["bound"] = K, 0.6 ** (K + 1) / 0.4
    t["error"] = t["bound"][()] * 0.8
    fam = ["gaussian", "shared-mean", "independent-means"]
    rows = grid(3, 3, 2)
    g = f.create_group("fidelity")
    g.create_dataset("family", data=[fam[r[0]] for r in rows], dtype=h5py.string_dtype())
    g["N"] = np.array([[32, 64, 128][r[1]] for r in rows], dtype=np.int64)
    g["cos_left"], g["cos_right"] = rng.uniform(0.5, 1, len(rows)), rng.uniform(0.3, 1, len(rows))
    for h, kappa in enumerate([30.0, 4e3]):
        s = f.create_group("jacobian/head_%d/spectrum" % h)
        f["jacobian/head_%d" % h].attrs["name"] = "h%d" % h
        s.attrs["mode"] = "full"
        s.create_group("kappa_strict").attrs["value"] = kappa
        s["gram_sigma"] = np.geomspace(kappa, 1, 24)
        s.create_group("sigma_max").attrs["sigma"] = kappa
        s.create_group("sigma_min").attrs["sigma"] = 1.0
    f["jacobian"].attrs["wrt"] = "weights"
    c = f.create_group("cond")
    c.attrs.update({"dataset": "/W", "method": "eigen-jacobi"})
    c.create_group("kappa_strict").attrs["value"] = 100.0
    c["sigma"] = np.geomspace(100, 1, 10)
    c["sigma_lo"], c["sigma_hi"] = c["sigma"][()] * 0.999, c["sigma"][()] * 1.001


def model_report(path):
    """A report holding every table the figures read, model experiments included."""
    rng = np.random.default_rng(11)
    with h5py.File(path, "w") as f:
        f.attrs["schema_version"] = "1.0"
        for writer in (write_weights_kappa, write_kappa_j, write_speca, write_infsa,
                       write_tool_groups):
            writer(f, rng)


class Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="render-figures-")
        cls.out = os.path.join(cls.tmp.name, "figures")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def manifest(self, out=None):
        with open(os.path.join(out or self.out, "figures.json"), encoding="utf-8") as f:
            return json.load(f)

    def tsv(self, out=None):
        with open(os.path.join(out or self.out, "figures.tsv"), encoding="utf-8") as f:
            return [line.rstrip("\n").split("\t") for line in f]


def table(f, check):
    g = f["checks/%s/table" % check]
    return {k: (strings(g[k]) if h5py.check_string_dtype(g[k].dtype) else g[k][()]) for k in g}


def positive_finite(*arrays):
    return np.logical_and.reduce([np.isfinite(a) & (a > 0) for a in arrays])


class ModelReport(Fixture):
    """Every figure of a report holding the model experiments and the tool groups."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = os.path.join(cls.tmp.name, "model.h5")
        model_report(cls.model)
        cls.rc, cls.err = render(cls.model, cls.out)

    def test_manifest_lists_every_figure_and_its_files(self):
        self.assertEqual(self.rc, 0, self.err)
        rows = self.tsv()
        self.assertEqual(rows[0], ["id", "section", "svg", "png", "caption"])
        ids = {r[0]: r[1] for r in rows[1:]}
        self.assertEqual(ids, {
            "verify-model-weights-kappa-W_Q": "verify/model-weights-kappa",
            "verify-model-weights-kappa-W_K": "verify/model-weights-kappa",
            "verify-model-weights-kappa-W_V": "verify/model-weights-kappa",
            "verify-model-kappa-J-kappa-bound": "verify/model-kappa-J",
            "verify-model-speca-lambda-lambda": "verify/model-speca-lambda",
            "verify-model-infsa-fidelity": "verify/model-infsa",
            "jacobian-spectra": "jacobian", "cond-sigma": "cond",
            "neumann-truncation": "neumann", "fidelity-cos": "fidelity"})
        for r in rows[1:]:
            self.assertTrue(r[4])
            for name in r[2:4]:
                self.assertGreater(os.path.getsize(os.path.join(self.out, name)), 1000, name)
        self.assertEqual(set(self.manifest()["figures"]), set(ids))

    def test_heatmap_cells_are_the_table_values(self):
        figs = self.manifest()["figures"]
        with h5py.File(self.model, "r") as f:
            t = table(f, "model-weights-kappa")
        for r in range(len(t["layer"])):
            fig = figs["verify-model-weights-kappa-W_" + t["matrix"][r]]["data"]
            c = t["correction"][r]
            cell = (fig["layers"].index(t["layer"][r]), fig["heads"].index(t["head"][r]))
            want = t["kappa_before"][r] if c == "none" else t["kappa_after"][r]
            self.assertEqual(fig["kappa"][c][cell[0]][cell[1]], want)
            self.assertEqual(fig["helped"][c][cell[0]][cell[1]], t["helped"][r])
        self.assertEqual(figs["verify-model-weights-kappa-W_K"]["data"]["layers"],
                         [str(x) for x in range(LAYERS)])
        for m in "QKV":  # the dotted cells: κ after > κ before, counted from the table
            raised = figs["verify-model-weights-kappa-W_" + m]["data"]["raised"]
            for c in CORRECTIONS:
                sel = (np.array(t["matrix"]) == m) & (np.array(t["correction"]) == c)
                self.assertEqual(raised[c], int(np.sum(t["kappa_after"][sel] >
                                                       t["kappa_before"][sel])), (m, c))

    def test_kappa_bound_points_and_the_planted_violation(self):
        data = self.manifest()["figures"]["verify-model-kappa-J-kappa-bound"]["data"]
        with h5py.File(self.model, "r") as f:
            t = table(f, "model-kappa-J")
        keep = positive_finite(t["kappa_J"], t["bound"])
        np.testing.assert_array_equal(from_json(data["kappa_J"]), t["kappa_J"][keep])
        np.testing.assert_array_equal(from_json(data["bound"]), t["bound"][keep])
        self.assertEqual(data["verdict"], [v for v, k in zip(t["verdict"], keep) if k])
        self.assertEqual(data["verdict"].count("violated"), 1)
        self.assertEqual(data["not_plotted"], 2)  # the infinite bound and the not-applicable row

    def test_lambda_curves_are_medians_over_heads_and_sentences(self):
        layers = self.manifest()["figures"]["verify-model-speca-lambda-lambda"]["data"]["layers"]
        with h5py.File(self.model, "r") as f:
            t = table(f, "model-speca-lambda")
        lam, kappa = np.asarray(t["lambda"]), np.asarray(t["kappa_J"])
        for layer, curve in layers.items():
            self.assertEqual(from_json(curve["lambda"]).tolist(), LAMBDAS)
            for i, x in enumerate(LAMBDAS):
                sel = (np.array(t["layer"]) == layer) & (lam == x)
                v = kappa[sel]
                self.assertAlmostEqual(float(curve["kappa_J_median"][i]),
                                       float(np.median(v[np.isfinite(v)])), places=12)
                self.assertEqual(curve["kappa_J_infinite"][i], int(np.isinf(v).sum()))
        self.assertEqual(sum(sum(c["kappa_J_infinite"]) for c in layers.values()), 1)

    def test_fidelity_and_tool_figures_carry_the_report_numbers(self):
        figs = self.manifest()["figures"]
        with h5py.File(self.model, "r") as f:
            t = table(f, "model-infsa")
            sel = np.array(t["layer"]) == "2"
            np.testing.assert_array_equal(
                from_json(figs["verify-model-infsa-fidelity"]["data"]["layers"]["2"]["cos_left"]),
                t["cos_left"][sel])
            neu = figs["neumann-truncation"]["data"]
            for key in ("K", "error", "bound"):
                np.testing.assert_array_equal(from_json(neu[key]), f["neumann/truncation/" + key])
            self.assertEqual(neu["K_for_target"], 24)
            fam = strings(f["fidelity/family"])
            got = figs["fidelity-cos"]["data"]["families"]["shared-mean"]
            want = f["fidelity/cos_right"][()][np.array(fam) == "shared-mean"]
            np.testing.assert_array_equal(from_json(got["cos_right"]), want)
            spec = figs["jacobian-spectra"]["data"]
            self.assertEqual(spec["heads"], ["h0", "h1"])
            np.testing.assert_array_equal(from_json(spec["sigma"][1]),
                                          f["jacobian/head_1/spectrum/gram_sigma"])
            np.testing.assert_array_equal(from_json(figs["cond-sigma"]["data"]["sigma_hi"]),
                                          f["cond/sigma_hi"])

    def test_two_runs_give_identical_files(self):
        out2 = os.path.join(self.tmp.name, "again")
        rc, err = render(self.model, out2)
        self.assertEqual(rc, 0, err)
        for name in sorted(os.listdir(self.out)):
            with open(os.path.join(self.out, name), "rb") as a, \
                    open(os.path.join(out2, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name + " differs between two runs")


@unittest.skipUnless(os.path.exists(REFERENCE), "no committed reference report")
class ReferenceVerifyReport(Fixture):
    """The committed reference verify report: summary, thm3.4 scatter, specA-sweep curves."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ref_out = cls.out
        cls.ref_rc, cls.ref_err = render(REFERENCE, cls.ref_out)

    def test_verdict_counts(self):
        self.assertEqual(self.ref_rc, 0, self.ref_err)
        data = self.manifest(self.ref_out)["figures"]["summary-verdicts"]["data"]
        with h5py.File(REFERENCE, "r") as f:
            # theorems and readings of a theorem, each with its kind; experiments stay apart
            kinds = {c: f["checks"][c].attrs["kind"] for c in f["checks"]}
            self.assertIn("reading", kinds.values())
            self.assertEqual(sorted(data["checks"]),
                             sorted(c for c, k in kinds.items() if k != "experiment"))
            self.assertEqual(data["kinds"], [kinds[c] for c in data["checks"]])
            for i, c in enumerate(data["checks"]):
                for k in ("n_holds", "n_violated", "n_inconclusive", "n_not_applicable"):
                    self.assertEqual(data[k][i], int(f["checks"][c].attrs[k]), (c, k))

    def test_thm34_scatter_is_lhs_against_rhs(self):
        data = self.manifest(self.ref_out)["figures"]["verify-thm3.4-kappa-bound"]["data"]
        with h5py.File(REFERENCE, "r") as f:
            g = f["checks/thm3.4"]
            lhs, rhs = g["instances/lhs"][()], g["instances/rhs"][()]
            verdict = strings(g["instances/verdict"])
            keep = positive_finite(lhs, rhs)
            robust = [float(g["records/instance_%d/values" % i].attrs["violation_robust"])
                      for i in range(len(lhs)) if keep[i] and verdict[i] == "violated"]
        np.testing.assert_array_equal(from_json(data["kappa_J"]), lhs[keep])
        np.testing.assert_array_equal(from_json(data["bound"]), rhs[keep])
        self.assertEqual(data["verdict"].count("violated"), verdict.count("violated"))
        got = [r for r, v in zip(from_json(data["violation_robust"]), data["verdict"])
               if v == "violated"]
        self.assertEqual(got, robust)

    def test_speca_sweep_curves(self):
        curves = self.manifest(self.ref_out)["figures"]["verify-specA-sweep-lambda"]["data"]
        with h5py.File(REFERENCE, "r") as f:
            t = table(f, "specA-sweep")
        self.assertEqual(sum(len(c["lambda"]) for c in curves["curves"]), len(t["lambda"]))
        for c in curves["curves"]:
            rows = [r for r in range(len(t["lambda"])) if (t["tokens"][r], t["placement"][r],
                    t["scale"][r]) == (c["tokens"], c["placement"], c["scale"])]
            rows.sort(key=lambda r: float(t["lambda"][r]))
            np.testing.assert_array_equal(from_json(c["lambda"]),
                                          [float(t["lambda"][r]) for r in rows])
            np.testing.assert_array_equal(from_json(c["median_kappa_ratio"]),
                                          t["median_kappa_ratio"][rows])


def minimal_report(path, version="1.0", edit=None):
    """A report with root provenance and one model-kappa-J table; edit(f) damages it."""
    with h5py.File(path, "w") as f:
        if version is not None:
            f.attrs["schema_version"] = version
        write_experiment(f, "model-kappa-J", {"layer": ["0", "0"], "head": ["0", "1"],
                                              "sentence": ["0", "0"],
                                              "verdict": ["holds", "holds"]},
                         {"kappa_J": [2.0, 3.0], "bound": [10.0, 20.0]})
        if edit:
            edit(f)


def replace_column(name, data):
    def edit(f):
        del f["checks/model-kappa-J/table/" + name]
        if data is not None:
            f["checks/model-kappa-J/table/" + name] = data
    return edit


def external_column(f):
    """The 'bound' column with its raw data in another file (HDF5 external storage)."""
    del f["checks/model-kappa-J/table/bound"]
    raw = f.filename + ".raw"
    np.array([1.0, 2.0]).tofile(raw)
    f.create_dataset("checks/model-kappa-J/table/bound", shape=(2,), dtype="<f8",
                     external=[(raw, 0, 16)])


class BadInput(Fixture):
    """Malformed files, unknown schema versions, unusable outputs: a code and one line."""

    def expect(self, path, code, words, env=None, out=None):
        rc, err = render(path, out or self.out, env)
        self.assertEqual(rc, code, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNotIn("Traceback", err)
        for w in words:
            self.assertIn(w, err)

    def test_malformed_reports_exit_65_naming_the_object(self):
        t = "/checks/model-kappa-J/table/"
        cases = {
            "old-version": ("0.9", None, ["schema_version '0.9'"]),
            "future-version": ("2.0", None, ["schema_version '2.0'"]),
            "no-version": (None, None, ["schema_version"]),
            "missing-column": ("1.0", replace_column("bound", None), [t + "bound", "missing"]),
            "short-column": ("1.0", replace_column("bound", [1.0]), [t + "bound", "(2,)"]),
            "2d-column": ("1.0", replace_column("kappa_J", np.ones((2, 2))), [t + "kappa_J"]),
            "text-column": ("1.0", replace_column("bound", np.array([b"a", b"b"])),
                            [t + "bound", "expected numbers"]),
            "external-link": ("1.0", replace_column("bound", h5py.ExternalLink("x.h5", "/b")),
                              [t + "bound", "external link"]),
            "external-storage": ("1.0", external_column, [t + "bound", "outside the file"]),
            "rows-missing": ("1.0", lambda f: f["checks/model-kappa-J"].attrs.__delitem__("rows"),
                             ["'rows'"]),
        }
        for name, (version, edit, words) in cases.items():
            with self.subTest(name):
                path = os.path.join(self.tmp.name, name + ".h5")
                minimal_report(path, version, edit)
                self.expect(path, 65, [path] + words)

    def test_not_hdf5_exits_65_and_missing_file_66(self):
        path = os.path.join(self.tmp.name, "text.h5")
        with open(path, "w") as f:
            f.write("not an HDF5 file\n")
        self.expect(path, 65, ["not an HDF5 file"])
        self.expect(os.path.join(self.tmp.name, "absent.h5"), 66, ["no such file"])

    def test_valid_minimal_report_renders(self):
        path = os.path.join(self.tmp.name, "minimal.h5")
        minimal_report(path)
        rc, err = render(path, self.out)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(self.tsv()), 2)

    def test_empty_report_writes_an_empty_manifest(self):
        path = os.path.join(self.tmp.name, "empty.h5")
        with h5py.File(path, "w") as f:
            f.attrs["schema_version"] = "1.0"
        out = os.path.join(self.tmp.name, "empty-figures")
        rc, err = render(path, out)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.tsv(out), [["id", "section", "svg", "png", "caption"]])
        self.assertEqual(self.manifest(out)["figures"], {})
        self.assertEqual(sorted(os.listdir(out)), ["figures.json", "figures.tsv"])

    def test_unwritable_output_exits_73(self):
        path = os.path.join(self.tmp.name, "minimal.h5")
        minimal_report(path)
        blocker = os.path.join(self.tmp.name, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        self.expect(path, 73, [blocker], out=blocker)
        self.expect(path, 73, [blocker], out=os.path.join(blocker, "sub"))

    def test_missing_matplotlib_exits_69(self):
        shadow = os.path.join(self.tmp.name, "shadow", "matplotlib")
        os.makedirs(shadow, exist_ok=True)
        with open(os.path.join(shadow, "__init__.py"), "w") as f:
            f.write("raise ImportError('planted: matplotlib absent')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(shadow))
        path = os.path.join(self.tmp.name, "minimal.h5")
        minimal_report(path)
        self.expect(path, 69, ["matplotlib", "python3-matplotlib"], env=env)


class SmallReports(Fixture):
    """Reports with one feature each: extremal spectra, a gpu-check group, a new experiment."""

    def test_extremal_spectra_give_sigma_max_and_min_per_head(self):
        path = os.path.join(self.tmp.name, "extremal.h5")
        with h5py.File(path, "w") as f:
            f.attrs["schema_version"] = "1.0"
            for h, (hi, lo) in enumerate([(9.0, 0.5), (4.0, 1e-6), (7.0, 0.01)]):
                s = f.create_group("jacobian/head_%d/spectrum" % h)
                s.attrs["mode"] = "extremal"
                s.create_group("sigma_max").attrs["sigma"] = hi
                s.create_group("sigma_min").attrs["sigma"] = lo
                s.create_group("kappa_strict").attrs["value"] = hi / lo
        rc, err = render(path, self.out)
        self.assertEqual(rc, 0, err)
        data = self.manifest()["figures"]["jacobian-extremes"]["data"]
        self.assertEqual(data["heads"], ["0", "1", "2"])
        self.assertEqual(data["sigma_max"], [9.0, 4.0, 7.0])
        self.assertEqual(data["sigma_min"], [0.5, 1e-6, 0.01])

    def test_gpu_check_and_unknown_experiments_are_noted_not_drawn(self):
        path = os.path.join(self.tmp.name, "notes.h5")
        minimal_report(path, edit=lambda f: (f.create_group("gpu_check"), write_experiment(
            f, "new-experiment", {"cell": ["a"]}, {"value": [1.0]})))
        rc, err = render(path, self.out)
        self.assertEqual(rc, 0, err)
        notes = self.manifest()["notes"]
        self.assertEqual(len(notes), 2, notes)
        self.assertIn("gpu-check", notes[1])
        self.assertIn("new-experiment", notes[0])
        self.assertEqual([r[0] for r in self.tsv()[1:]], ["verify-model-kappa-J-kappa-bound"])

    def test_empty_tables_draw_nothing_and_say_so(self):
        path = os.path.join(self.tmp.name, "empty-tables.h5")
        with h5py.File(path, "w") as f:
            f.attrs["schema_version"] = "1.0"
            axes = {"layer": [], "head": [], "sentence": []}
            write_experiment(f, "model-speca-lambda", axes,
                             {"lambda": [], "kappa_J": [], "max_prob": []})
            write_experiment(f, "model-infsa", axes, {"N": [], "cos_left": [], "cos_right": []})
            write_experiment(f, "model-kappa-J", dict(axes, verdict=[]),
                             {"kappa_J": [], "bound": []})
            write_experiment(f, "specA-sweep", {k: [] for k in ("tokens", "placement", "scale",
                                                                "lambda")},
                             {"median_kappa_ratio": [], "median_max_prob": []})
            write_experiment(f, "model-weights-kappa", {k: [] for k in ("layer", "head", "matrix",
                                                                        "correction")},
                             {"kappa_before": [], "kappa_after": [], "helped": []})
        rc, err = render(path, self.out)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)  # the "0 figure(s)" line
        self.assertEqual(self.tsv(), [["id", "section", "svg", "png", "caption"]])
        self.assertEqual(len(self.manifest()["notes"]), 5)


if __name__ == "__main__":
    unittest.main()
