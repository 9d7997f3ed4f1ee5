"""The attnspec package: heads, Jacobians, spectra, datasets, errors (docs/python.md)."""
import math
import os
import re

import numpy as np
import pytest

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def small_head(N=5, D=6, d=3, seed=0, biases=False, s=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    W = [rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3)]
    b = [rng.standard_normal(d) * 0.1 for _ in range(3)] if biases else [None] * 3
    return attnspec.Head(X, *W, *b, s=s), X, W, b


def forward_np(X, W, b, s):
    Q, K, V = (X @ w + (0 if bb is None else bb) for w, bb in zip(W, b))
    L = s * Q @ K.T
    L -= L.max(axis=1, keepdims=True)
    S = np.exp(L)
    S /= S.sum(axis=1, keepdims=True)
    return S @ V


def test_version_is_the_cmake_project_version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    want = re.search(r"project\(attnspec VERSION ([0-9.]+)", text).group(1)
    assert attnspec.__version__ == want
    assert attnspec._core.__version__ == want


def test_stubs_are_shipped():
    pyi = os.path.join(os.path.dirname(attnspec._core.__file__), "_core.pyi")
    text = open(pyi).read()
    assert "def head_spectrum(" in text and "class Head" in text
    for name in ("run_checks", "replay_check", "infsa_neumann", "infsa_linear", "report_read",
                 "report_render"):
        assert "def %s(" % name in text, name


def test_head_forward_matches_numpy():
    for biases in (False, True):
        h, X, W, b = small_head(biases=biases, s=0.7)
        assert (h.N, h.D, h.d, h.s) == (5, 6, 3, 0.7)
        assert (h.b_Q is None) == (not biases)
        np.testing.assert_allclose(h.forward(), forward_np(X, W, b, 0.7), rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(h.X, X)
    assert small_head()[0].s == 1.0  # s=None: the paper's s = 1


def test_float32_and_float16_are_upcast_exactly():
    h, X, W, _ = small_head()
    X32 = X.astype(np.float32)
    h32 = attnspec.Head(X32, *W)
    np.testing.assert_array_equal(h32.X, X32.astype(np.float64))
    attnspec.Head(X.astype(np.float16), *W)  # accepted
    hf = attnspec.Head(np.asfortranarray(X), *W)  # F order and strided views: same values
    np.testing.assert_array_equal(hf.X, X)
    attnspec.Head(X[:, ::1], *[w[::1] for w in W])
    attnspec.Head(X.tolist(), *W)  # nested lists of floats


@pytest.mark.parametrize("bad, exc, words", [
    (lambda X: X.astype(np.int64), attnspec.ArrayTypeError, ["X", "int64", "float"]),
    (lambda X: X.astype(np.complex128), attnspec.ArrayTypeError, ["X", "complex128"]),
    (lambda X: X.astype(object), attnspec.ArrayTypeError, ["X", "object"]),
    (lambda X: X[None], attnspec.DataError, ["X", "2-D", "(1, 5, 6)"]),
    (lambda X: X[:0], attnspec.DataError, ["X", "empty", "(0, 6)"]),
    (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X),
     attnspec.DataError, ["X", "NaN", "(1, 1)"]),
    (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 0, np.inf, X),
     attnspec.DataError, ["X", "Inf", "(0, 0)"]),
])
def test_hostile_arrays_raise_named_errors(bad, exc, words):
    _, X, W, _ = small_head()
    with pytest.raises(exc) as e:
        attnspec.Head(bad(X), *W)
    for w in words:
        assert w in str(e.value)
    assert isinstance(e.value, attnspec.Error) and e.value.parameter == "X"


def test_shape_errors_name_the_argument_and_shapes():
    _, X, W, _ = small_head()
    with pytest.raises(ValueError, match=r"W_K has shape \(6, 4\), expected \(6, 3\)"):
        attnspec.Head(X, W[0], np.ones((6, 4)), W[2])
    with pytest.raises(attnspec.DataError, match=r"W_Q has shape \(5, 3\), expected \(6, 3\)"):
        attnspec.Head(X, W[0][:5], W[1], W[2])
    with pytest.raises(attnspec.DataError, match=r"b_V has shape \(4,\), expected \(3,\)"):
        attnspec.Head(X, *W, b_V=np.ones(4))
    for s in (0, -1.0, math.inf, math.nan, "1", True):
        with pytest.raises(attnspec.DataError, match="s"):
            attnspec.Head(X, *W, s=s)


def test_dense_jacobian_against_central_differences():
    h, X, W, b = small_head(biases=True, s=0.9)
    N, D, d = 5, 6, 3
    J = attnspec.jacobian(h)
    assert J.shape == (N * d, 3 * D * d)
    rng = np.random.default_rng(3)
    dW = [rng.standard_normal((D, d)) for _ in range(3)]
    v = np.concatenate([w.reshape(-1, order="F") for w in dW])
    t = 1e-6
    plus = forward_np(X, [w + t * e for w, e in zip(W, dW)], b, 0.9)
    minus = forward_np(X, [w - t * e for w, e in zip(W, dW)], b, 0.9)
    fd = ((plus - minus) / (2 * t)).reshape(-1, order="F")
    np.testing.assert_allclose(J @ v, fd, rtol=1e-6, atol=1e-8)
    JX = attnspec.jacobian(h, wrt="input")
    assert JX.shape == (N * d, N * D)
    dX = rng.standard_normal((N, D))
    fdx = ((forward_np(X + t * dX, W, b, 0.9) - forward_np(X - t * dX, W, b, 0.9)) / (2 * t))
    np.testing.assert_allclose(JX @ dX.reshape(-1, order="F"), fdx.reshape(-1, order="F"),
                               rtol=1e-6, atol=1e-8)


def test_operator_matches_dense_and_scipy_accepts_it():
    h = small_head(N=6, D=5, d=2, biases=True)[0]
    for wrt in ("weights", "input"):
        J = attnspec.jacobian(h, wrt=wrt, form="dense")
        op = attnspec.jacobian(h, wrt=wrt, form="operator")
        assert isinstance(op, attnspec.JacobianOperator)
        assert op.shape == J.shape and op.dtype == np.float64
        x = np.linspace(-1, 1, J.shape[1])
        y = np.linspace(1, 2, J.shape[0])
        np.testing.assert_allclose(op.matvec(x), J @ x, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(op.rmatvec(y), J.T @ y, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(op.to_dense(), J, rtol=1e-12, atol=1e-14)
        with pytest.raises(attnspec.DataError, match="expected"):
            op.matvec(x[:-1])
    sla = pytest.importorskip("scipy.sparse.linalg")
    op = attnspec.jacobian(h, form="operator")
    L = sla.aslinearoperator(op)
    s = sla.svds(L, k=1, return_singular_vectors=False)
    J = attnspec.jacobian(h, form="dense")
    assert abs(s[0] - np.linalg.svd(J, compute_uv=False)[0]) <= 1e-10 * s[0]


def test_spectrum_of_a_head_encloses_numpys_svd():
    h = small_head(N=6, D=8, d=3, seed=2, biases=True, s=1 / np.sqrt(3))[0]
    for wrt in ("weights", "input"):
        sp = attnspec.spectrum(h, wrt=wrt)
        assert sp.of == ("J" if wrt == "weights" else "J_X")
        sv = np.linalg.svd(attnspec.jacobian(h, wrt=wrt), compute_uv=False)
        for est, ref in ((sp.sigma_max, sv[0]), (sp.sigma_min, sv[-1]),
                         (sp.kappa, sv[0] / sv[-1])):
            assert est.lo <= est.value <= est.hi
            assert est.value == pytest.approx(ref, rel=1e-8)
        assert sp.kappa.convention == "strict" and sp.kappa_nz.convention == "nz"
        assert sp.method and sp.mode in ("full", "extremal") and sp.basis.startswith("sigma_max: ")
        assert sp.rows == sv.size and isinstance(sp.notes, tuple)
    same = h.spectrum(svd="full", certify="always")
    assert same.kappa.lo <= same.kappa.value <= same.kappa.hi


def test_spectrum_of_a_matrix():
    # a signed permutation times a diagonal: singular values 4, 2, 0.5 exactly, kappa 8
    M = np.array([[4.0, 0, 0], [0, 0, -2.0], [0, 0.5, 0]])
    for svd in ("auto", "gesdd", "gejsv", "jacobi"):
        sp = attnspec.spectrum(M, svd=svd)
        assert sp.of == "matrix" and sp.rows == 3 and sp.method
        assert sp.sigma_max.lo <= 4.0 <= sp.sigma_max.hi
        assert sp.sigma_min.lo <= 0.5 <= sp.sigma_min.hi
        assert sp.kappa.lo <= 8.0 <= sp.kappa.hi and sp.kappa.value == pytest.approx(8.0)
        np.testing.assert_allclose(sp.singular_values, [4, 2, 0.5], rtol=1e-14)
    R = np.outer([1.0, 2.0, 3.0], [1.0, 1.0])  # rank 1: strict kappa inf, nz finite
    r = attnspec.spectrum(R)
    assert math.isinf(r.kappa.value) and r.kappa_nz.value == pytest.approx(1.0)
    assert r.kappa_nz.rank == 1


def test_option_errors_are_usage_errors():
    h = small_head()[0]
    for kw, word in (({"svd": "bogus"}, "bogus"), ({"certify": "maybe"}, "maybe"),
                     ({"wrt": "bias"}, "bias")):
        with pytest.raises(attnspec.UsageError, match=word) as e:
            attnspec.spectrum(h, **kw)
        assert isinstance(e.value, ValueError) and e.value.code == 64
    with pytest.raises(attnspec.UsageError):
        attnspec.spectrum(np.eye(3), svd="extremal")
    with pytest.raises(attnspec.UsageError):
        attnspec.jacobian(h, form="sparse")


def test_library_errors_carry_code_and_parameter():
    h = small_head()[0]
    old = attnspec.memory_limit()
    try:
        attnspec.set_memory_limit(1000)
        with pytest.raises(attnspec.DataError) as e:
            attnspec.spectrum(h)
        assert e.value.code == 65 and e.value.parameter == "max_bytes"
        assert "max_bytes" in str(e.value)
        with pytest.raises(attnspec.DataError, match="max_bytes"):
            attnspec.jacobian(h, form="dense")
        assert isinstance(attnspec.jacobian(h), attnspec.JacobianOperator)  # auto: operator
    finally:
        attnspec.set_memory_limit(old)
    with pytest.raises(attnspec.UsageError):
        attnspec.set_memory_limit(-1)


def test_datasets():
    names = attnspec.datasets.list()
    assert "minilm-l6" in names and "attention_heads" in names
    ds = attnspec.datasets.load("minilm-l6")
    assert (ds.layers, ds.n_heads, ds.D, ds.d) == (6, 12, 384, 32)
    assert len(ds.sentences) == 8 and ds.n_tokens[0] == 11
    h = ds.head(2, 5, 1)
    assert (h.N, h.D, h.d) == (17, 384, 32)
    assert h.s == pytest.approx(1 / np.sqrt(32)) and h.b_Q is not None
    layer = ds.heads(layer=0, sentence=0)
    assert [label for label, _ in layer][:2] == ["minilm-l6:L0:H0:S0", "minilm-l6:L0:H1:S0"]
    assert len(layer) == 12
    with pytest.raises(attnspec.InputNotFoundError, match="minilm-l6") as e:
        attnspec.datasets.load("no-such-dataset")
    assert e.value.code == 66 and isinstance(e.value, FileNotFoundError)
    with pytest.raises(attnspec.DataError, match="out of range"):
        ds.head(7, 0, 0)
    single = attnspec.datasets.load("attention_heads")
    assert len(single.heads()) == 4


def test_extension_links_no_boost():
    import shutil
    import subprocess
    if not shutil.which("ldd"):
        pytest.skip("no ldd on this system")
    out = subprocess.run(["ldd", attnspec._core.__file__], capture_output=True, text=True).stdout
    assert "libhdf5" in out and "boost" not in out.lower()


def _import_with(**env):
    """`import attnspec` in a child process with `env` added; (returncode, stdout, stderr)."""
    import subprocess
    import sys

    full = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "ATTNSPEC_BLAS_CORE"):
        full.pop(k, None)
    full.update(env)
    code = ("import attnspec, json\n"
            "print(json.dumps(attnspec.blas_info()))\n")
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                         timeout=120)
    return out.returncode, out.stdout, out.stderr


def test_a_bad_blas_core_is_a_usage_error_at_import():
    import json

    rc, out, _ = _import_with()
    assert rc == 0
    info = json.loads(out)
    if not info["core"]:
        pytest.skip("not OpenBLAS: attnspec chooses no kernels")
    # The reason says who chose the core (it read "does not call select_blas_kernels" before).
    assert "select_blas_kernels" not in info["reason"], info["reason"]
    # A name that is no core: the CLI's exit-64 message, raised as attnspec.UsageError.
    rc, _, err = _import_with(ATTNSPEC_BLAS_CORE="Skylake")
    assert rc != 0
    assert "UsageError" in err and "ATTNSPEC_BLAS_CORE = 'Skylake'" in err, err
    # A core this CPU lacks is refused before OpenBLAS loads it (it would stop with SIGILL).
    if info["best"] != "SapphireRapids":
        rc, _, err = _import_with(ATTNSPEC_BLAS_CORE="SapphireRapids")
        assert rc != 0
        assert "UsageError" in err and "ATTNSPEC_BLAS_CORE = SapphireRapids" in err, err
    # A core that runs is forced, and the reason says so; off keeps OpenBLAS's choice.
    rc, out, err = _import_with(ATTNSPEC_BLAS_CORE="prescott")
    assert rc == 0, err
    forced = json.loads(out)
    assert forced["core"] == "Prescott"
    assert "forced by ATTNSPEC_BLAS_CORE=Prescott" in forced["reason"]
    rc, out, err = _import_with(ATTNSPEC_BLAS_CORE="off")
    assert rc == 0, err
    assert json.loads(out)["reason"] == "detected by OpenBLAS, kept: ATTNSPEC_BLAS_CORE=off"
