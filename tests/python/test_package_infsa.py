"""attnspec.infsa: the Neumann analysis and fidelity against `attnspec neumann` and `attnspec
fidelity` on the same generated inputs (equal bits: the same library code on the same draws),
the kernel, closure and Perron pairs against their definitions in numpy (within named rounding
allowances), Linear-InfSA against a numpy transcription of its definition, and each function's
bad input raising the named attnspec exception."""
import math

import numpy as np
import pytest

from cli_support import num, run_cli, same

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")
infsa = attnspec.infsa

U = np.finfo(np.float64).eps / 2  # unit roundoff


def qk(N=40, d=8, family="shared-mean", seed=11):
    return infsa.draw_family(family, N, d, mu=1.0, seed=seed)


@pytest.mark.parametrize("family, N, d, gamma, seed", [
    ("shared-mean", 48, 8, 0.9, 11),
    ("gaussian", 33, 5, 0.95, 20251),
])
def test_neumann_equals_the_cli(cli, family, N, d, gamma, seed):
    out = run_cli(cli, "neumann", "--tokens", str(N), "--dh", str(d), "--family", family,
                  "--seed", str(seed), "--gamma", repr(gamma), "--no-report")
    Q, K = infsa.draw_family(family, N, d, mu=1.0, seed=seed)
    nk = infsa.neumann(infsa.affinity(Q, K).A_hat, gamma)
    assert (out["N"], out["gamma"]) == (nk.n, nk.gamma)
    assert same(out["frobenius"], nk.frobenius)
    assert tuple(num(x) for x in out["norm2"]) == nk.norm2
    assert tuple(num(x) for x in out["rho"]) == nk.rho
    for k in ("residual", "residual_bound", "min_entry", "min_diag_minus_1", "entry_tol",
              "commutator"):
        assert same(out["invariants"][k], nk.invariants[k]), k
    t = nk.truncation
    assert [r["K"] for r in out["truncation"]] == list(t["K"]) == list(infsa.ORDERS)
    for i, r in enumerate(out["truncation"]):
        assert same(r["bound"], t["bound"][i]) and same(r["error"], t["error"][i])
    assert (num(out["target"]), out["K_for_target"]) == (nk.target, nk.K_for_target)
    c, ref = nk.centralities, out["centralities"]
    assert same(ref["katz_in_max"], c.katz_in.max())
    assert same(ref["katz_out_max"], c.katz_out.max())
    assert same(ref["expected_steps_max"], c.expected_steps.max())
    assert same(ref["min_leak"], c.min_leak) and ref["probabilistic"] == c.probabilistic
    assert ref["perron_left_converged"] == c.left.converged


def test_kernel_and_closure_are_their_definitions():
    Q, K = qk()
    A = infsa.affinity(Q, K).A_hat
    n, gamma = A.shape[0], 0.9
    V = np.random.default_rng(3).standard_normal((n, 6))
    nk = infsa.neumann(A, gamma, V, kernel=True)
    M = np.eye(n) - gamma * A
    # numpy's product adds at most n u |M| |N| to the library's residual, bounded by its LU bound
    numpy_round = n * U * np.linalg.norm(M, "fro") * np.linalg.norm(nk.kernel, "fro")
    resid = np.linalg.norm(M @ nk.kernel - np.eye(n), "fro")
    assert resid <= nk.invariants["residual_bound"] + numpy_round
    # C V = N gamma A V: the library's solves against numpy's, both backward stable: the
    # difference is within a few u kappa(M) ||C V|| (kappa_F from the library's invariants)
    CV = nk.closure_times_V
    ref = np.linalg.solve(M, gamma * A @ V)
    assert np.linalg.norm(CV - ref) <= 8 * n * U * nk.invariants["kappa_F"] * np.linalg.norm(ref)
    np.testing.assert_array_equal(infsa.closure_times(A, gamma, V), CV)  # same code path
    CtV = infsa.closure_times(A, gamma, V, transpose=True)
    ref_t = np.linalg.solve(M.T, gamma * A.T @ V)
    assert np.linalg.norm(CtV - ref_t) <= 8 * n * U * nk.invariants["kappa_F"] * np.linalg.norm(
        ref_t)
    assert nk.invariants["min_entry"] >= -nk.invariants["entry_tol"]  # N >= 0 (Neumann series)


def test_centralities_and_perron():
    Q, K = qk()
    A = infsa.affinity(Q, K).A_hat
    gamma = 0.9
    c = infsa.centralities(A, gamma)
    one = np.ones(A.shape[0])
    # R = 1 - gamma A 1: row sums of n non-negative terms, rounded in another order by numpy:
    # within gamma_n (A 1) each, plus the subtraction's u
    ref = one - gamma * (A @ one)
    assert (abs(c.leak - ref) <= 2 * A.shape[0] * U * gamma * (A @ one) + 2 * U).all()
    assert c.min_leak == c.leak.min() and c.probabilistic == (c.min_leak >= 0)
    for left in (True, False):
        p = infsa.perron(A, left=left)
        lo, hi = p.rho_enclosure
        assert p.converged and lo <= p.rho <= hi and hi - lo <= 1e-10 * hi
        assert (p.vec >= 0).all() and abs(np.linalg.norm(p.vec) - 1) <= 8 * U * len(p.vec)
        # numpy's eigenvalue has its own error, about n u ||A||_2
        rho_np = max(abs(np.linalg.eigvals(A)))
        slack = 8 * A.shape[0] * U * np.linalg.norm(A, 2)
        assert lo - slack <= rho_np <= hi + slack
        same_pair = c.left if left else c.right
        np.testing.assert_array_equal(p.vec, same_pair.vec)  # centralities use perron()
    # matrix-free: A+ = (||A+||_F + eps) A_hat has the same vector and a scaled rho
    m = infsa.perron_relu(Q, K, tile=16)
    aff = infsa.affinity(Q, K)
    scale = aff.frob_plus + 1e-6
    lo, hi = infsa.perron(A).rho_enclosure
    # A_hat's entries are rounded (the product, / d_h, / the norm): relative (d_h + 4) u each
    rel = 4 * (Q.shape[1] + 4) * U
    assert m.rho_enclosure[0] <= hi * scale * (1 + rel)
    assert lo * scale * (1 - rel) <= m.rho_enclosure[1]
    f_lo, f_hi = m.frobenius
    assert f_lo * (1 - rel) <= aff.frob_plus <= f_hi * (1 + rel)


def linear_infsa_numpy(Q, K, V, gamma, eps):
    """docs/MATH.md §3 / linear_infsa.hpp, transcribed: q~ = q / sqrt(d_h), e_i = ||q~_i||,
    q_bar = sum e_i q~_i / (sum e + eps), s = ReLU(K~ q_bar), a = s / (sum s + eps),
    p = gamma V^T a."""
    c = 1 / math.sqrt(Q.shape[1])
    Qt, Kt = Q * c, K * c
    e = np.linalg.norm(Qt, axis=1)
    q_bar = Qt.T @ e / (e.sum() + eps)
    s = np.maximum(0.0, Kt @ q_bar)
    a = s / (s.sum() + eps)
    return gamma * V.T @ a, q_bar, a


def test_linear_infsa_is_its_definition():
    Q, K = qk(N=64, d=8)
    V = np.random.default_rng(5).standard_normal(Q.shape)
    lin = infsa.linear_infsa(Q, K, V, gamma=0.9)
    p, q_bar, a = linear_infsa_numpy(Q, K, V, 0.9, 1e-6)
    # sums of N non-negative terms: relative error <= gamma_N ~ N u each (two sweeps, x4)
    tol = 4 * Q.shape[0] * U
    assert np.linalg.norm(lin.q_bar - q_bar) <= tol * np.linalg.norm(q_bar)
    assert np.linalg.norm(lin.weights - a) <= tol * np.linalg.norm(a)
    # p = gamma V^T a: the weights' error carried through |V|, plus the sum's own rounding
    p_tol = 0.9 * (tol * np.linalg.norm(np.abs(V).T @ a)
                   + np.linalg.norm(np.abs(V), 2) * np.linalg.norm(lin.weights - a))
    assert np.linalg.norm(lin.p - p) <= 2 * p_tol
    assert not lin.degenerate and 0 < lin.weights.sum() <= 1
    assert lin.output(5).shape == (5, Q.shape[1])
    zero = infsa.linear_infsa(np.zeros_like(Q), K, V)
    assert zero.degenerate and not zero.p.any() and not zero.weights.any()


def test_fidelity_table_equals_the_cli(cli):
    out = run_cli(cli, "fidelity", "--tokens", "32,40", "--dh", "8", "--draws", "2", "--family",
                  "gaussian,shared-mean", "--seed", "5", "--no-report")
    t = infsa.fidelity_table(["gaussian", "shared-mean"], [32, 40], d_h=8, draws=2, seed=5)
    assert len(t["family"]) == len(out["records"]) == 8
    for i, r in enumerate(out["records"]):
        assert (t["family"][i], t["N"][i], t["head"][i], t["draw"][i], int(t["seed"][i])) == (
            r["family"], r["N"], r["head"], r["draw"], r["seed"])
        for k in ("cos_left", "cos_right", "cos_katz_in", "cos_katz_out", "perron_vec_error"):
            assert same(t[k][i], r[k]), k
        assert (t["rho_hat_lo"][i], t["rho_hat_hi"][i]) == tuple(num(x) for x in r["rho_hat"])
        assert t["perron_converged"][i] == r["perron_converged"]
        assert r["seed"] == infsa.instance_seed(5, i)  # instance i's seed, as the table says
    # one record again from its seed: draw_family + fidelity give the same bits
    r = out["records"][5]
    Q, K = infsa.draw_family(r["family"], r["N"], 8, 1.0, r["seed"])
    f = infsa.fidelity(Q, K)
    assert same(f.cos_left, r["cos_left"]) and same(f.cos_katz_out, r["cos_katz_out"])
    lin = infsa.linear_infsa(Q, K, K)
    cos = lin.weights @ f.left.vec / np.linalg.norm(lin.weights)  # |v| = 1
    assert abs(cos - f.cos_left) <= 8 * r["N"] * U


def test_matrix_free_fidelity_equals_the_cli(cli):
    out = run_cli(cli, "fidelity", "--tokens", "40", "--dh", "8", "--draws", "1", "--family",
                  "gaussian", "--seed", "9", "--matrix-free", "--right", "--no-report")
    r = out["records"][0]
    Q, K = infsa.draw_family("gaussian", 40, 8, 1.0, r["seed"])
    f = infsa.fidelity(Q, K, matrix_free=True, with_right=True)
    assert f.matrix_free and math.isnan(f.cos_katz_in)
    for k in ("cos_left", "cos_right", "cos_katz_in", "cos_katz_out"):
        assert same(getattr(f, k), r[k]), k


A_OK = np.full((4, 4), 0.05)


@pytest.mark.parametrize("call, exc, parameter", [
    (lambda: infsa.neumann(A_OK, 1.0), attnspec.DataError, "gamma"),
    (lambda: infsa.neumann(A_OK, 0.0), attnspec.DataError, "gamma"),
    (lambda: infsa.neumann(A_OK, -0.5), attnspec.DataError, "gamma"),
    (lambda: infsa.neumann(A_OK, float("nan")), attnspec.DataError, "gamma"),
    (lambda: infsa.neumann(np.ones((4, 4)), 0.5), attnspec.DataError, "gamma"),  # g rho = 2
    (lambda: infsa.neumann(-A_OK, 0.5), attnspec.DataError, None),
    (lambda: infsa.neumann(np.ones((4, 3)) * 0.05, 0.5), attnspec.DataError, None),
    (lambda: infsa.neumann(np.where(np.eye(4) > 0, np.nan, A_OK), 0.5), attnspec.DataError,
     "A_hat"),
    (lambda: infsa.neumann(A_OK, 0.5, V=np.ones((3, 2))), attnspec.DataError, None),
    (lambda: infsa.neumann(A_OK, 0.5, orders=[-1]), attnspec.UsageError, "orders"),
    (lambda: infsa.neumann(A_OK, 0.5, target=0.0), attnspec.DataError, "target"),
    (lambda: infsa.neumann(A_OK.astype(np.int64), 0.5), attnspec.ArrayTypeError, "A_hat"),
    (lambda: infsa.closure_times(A_OK, 1.5, np.ones((4, 2))), attnspec.DataError, "gamma"),
    (lambda: infsa.centralities(A_OK, 0.0), attnspec.DataError, "gamma"),
    (lambda: infsa.perron(-A_OK), attnspec.DataError, None),
    (lambda: infsa.perron(A_OK, rel_width=-1), attnspec.DataError, "rel_width"),
    (lambda: infsa.perron(A_OK[:, :3]), attnspec.DataError, None),
    (lambda: infsa.affinity(*qk(), kind="bogus"), attnspec.UsageError, "affinity"),
    (lambda: infsa.affinity(*qk(), eps=-1.0), attnspec.DataError, "eps"),
    (lambda: infsa.affinity(qk()[0], qk()[1][:5]), attnspec.DataError, None),
    (lambda: infsa.linear_infsa(*qk(), qk()[0], gamma=1.0), attnspec.DataError, "gamma"),
    (lambda: infsa.linear_infsa(*qk(), qk()[0], eps=-1e-3), attnspec.DataError, "eps"),
    (lambda: infsa.linear_infsa(*qk(), qk()[0][:, :3]), attnspec.DataError, None),
    (lambda: infsa.linear_infsa(qk()[0], qk()[1], qk()[0][None]), attnspec.DataError, "V"),
    (lambda: infsa.fidelity(*qk(), gamma=2.0), attnspec.DataError, "gamma"),
    (lambda: infsa.draw_family("bogus", 8, 4), attnspec.UsageError, "family"),
    (lambda: infsa.draw_family("gaussian", 8, 4, mu=float("inf")), attnspec.DataError, "mu"),
])
def test_bad_input_raises_named_errors(call, exc, parameter):
    with pytest.raises(exc) as e:
        call()
    if parameter is not None:
        assert e.value.parameter == parameter


def _shown(cli, path):
    """`attnspec report show --json` of a report, less what differs between two writers of the
    same numbers (the provenance: command line, times, host, build; the file name)."""
    doc = run_cli(cli, "report", "show", str(path))
    doc.pop("provenance", None)
    doc.pop("file", None)
    return doc


def test_fidelity_report_from_python_is_the_clis(cli, tmp_path):
    py, ref = tmp_path / "py.h5", tmp_path / "cli.h5"
    t = infsa.fidelity_table(["gaussian", "shared-mean"], [32], d_h=8, draws=2, seed=5, report=py)
    run_cli(cli, "fidelity", "--tokens", "32", "--dh", "8", "--draws", "2", "--family",
            "gaussian,shared-mean", "--seed", "5", "--out", str(ref))
    a, b = _shown(cli, py), _shown(cli, ref)
    assert a == b
    assert len(t["family"]) == 4


def test_neumann_report_from_python_holds_the_analysis(cli, tmp_path):
    Q, K = infsa.draw_family("shared-mean", 48, 8, mu=1.0, seed=11)
    path = tmp_path / "n.h5"
    nk = infsa.neumann(infsa.affinity(Q, K).A_hat, 0.9, report=path)
    ref = tmp_path / "cli.h5"
    run_cli(cli, "neumann", "--tokens", "48", "--dh", "8", "--family", "shared-mean", "--seed",
            "11", "--gamma", "0.9", "--out", str(ref))
    a, b = _shown(cli, path), _shown(cli, ref)
    assert a["kind"] == b["kind"] == "neumann"
    # The same analysis (the same Â, bit for bit): the summary's lines but the first, which
    # names the source (the Python call with Â given, the CLI's generated family).
    assert a["summary"][1:] == b["summary"][1:] and len(a["summary"]) >= 3
    assert "python:attnspec.infsa.neumann" in a["summary"][0]
    assert "generated:shared-mean" in b["summary"][0]
    assert nk.n == 48


def test_a_report_path_that_cannot_be_written_is_an_output_error(tmp_path):
    Q, K = qk()
    with pytest.raises(attnspec.OutputError):
        infsa.neumann(infsa.affinity(Q, K).A_hat, 0.9, report=tmp_path / "no" / "dir" / "n.h5")
    assert not (tmp_path / "no").exists()
