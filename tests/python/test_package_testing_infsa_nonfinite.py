"""attnspec.testing's linear-infsa, pure-infsa and neumann checks on inputs with NaN/Inf
(docs/cli/check-kernel.md, "Non-finite inputs"): plain float32 kernels pass on every non-finite
case, numpy.nan_to_num of their outputs and a NaN spread over its head are wrong where the pattern
says so, and the verdict and counts equal the CLI's on one file (linear-infsa inf-v, neumann
nan-v)."""
import numpy as np
import pytest

import attnspec.testing as at
from cli_support import run_cli

SHAPE = (2, 32, 8)


def linear_infsa(q, k, v, gamma=0.95, eps=1e-6):
    """float32 Linear-InfSA (ReLU as np.maximum: NaN propagates), every row the pooled vector."""
    q, k, v = (a.astype(np.float32) for a in (q, k, v))
    c = np.float32(1 / np.sqrt(q.shape[-1]))
    with np.errstate(all="ignore"):
        qt = q * c
        e = np.sqrt((qt * qt).sum(-1, keepdims=True))
        qb = (e * qt).sum(-2, keepdims=True) / (e.sum(-2, keepdims=True) + np.float32(eps))
        s = np.maximum(np.float32(0), (qb * k).sum(-1, keepdims=True) * c)
        o = np.float32(gamma) * (s * v).sum(-2, keepdims=True) / (s.sum(-2, keepdims=True)
                                                                  + np.float32(eps))
    return np.broadcast_to(o, q.shape[:-1] + v.shape[-1:]).copy()


@pytest.mark.parametrize("name", at.nonfinite_stress_cases("linear-infsa"))
def test_a_plain_kernel_passes_and_nan_to_num_is_wrong(name):
    q, k, v = at.stress_linear_infsa_case(name, 1, SHAPE, "fp32")
    o = linear_infsa(q, k, v)
    r = at.assert_linear_infsa_close(o, q, k, v)
    assert r.nonfinite_mismatch == 0
    if name in ("nan-v", "inf-v"):  # column c of the head NaN/Inf, the other columns finite
        assert r.nonfinite_expected > 0
        assert at.check_linear_infsa_output(np.nan_to_num(o), q, k, v).verdict == "wrong"
        spread = o.copy()
        spread[~np.isfinite(o).all(axis=(-2, -1))] = np.nan
        assert at.check_linear_infsa_output(spread, q, k, v).verdict == "wrong"


def pure_infsa(q, k, v, gamma=0.95, eps=1e-6):
    """float32 one-hop InfSA (ReLU as np.maximum: NaN propagates)."""
    q, k, v = (a.astype(np.float32) for a in (q, k, v))
    with np.errstate(all="ignore"):
        a = np.maximum(np.float32(0), np.einsum("hid,hjd->hij", q, k) / np.float32(q.shape[-1]))
        f = np.sqrt((a * a).sum(axis=(-2, -1), keepdims=True))
        return np.float32(gamma) * np.einsum("hij,hjd->hid", a / (f + np.float32(eps)), v)


@pytest.mark.parametrize("name", at.nonfinite_stress_cases("pure-infsa"))
def test_pure_infsa_plain_passes_and_nan_to_num_is_wrong(name):
    q, k, v = at.stress_linear_infsa_case(name, 1, SHAPE, "fp32")
    o = pure_infsa(q, k, v)
    r = at.assert_pure_infsa_close(o, q, k, v)
    assert r.nonfinite_mismatch == 0
    if r.nonfinite_expected > 0:
        assert at.check_pure_infsa_output(np.nan_to_num(o), q, k, v).verdict == "wrong"


def neumann(q, k, v, gamma=0.95, eps=1e-6):
    """float32 Neumann kernel (ReLU as np.maximum: NaN propagates): (I - G)^-1 (G v) by
    numpy.linalg.solve (LAPACK LU with partial pivoting) per head, NaN where LAPACK meets a zero
    pivot (NaN in G can give one)."""
    q, k, v = (a.astype(np.float32) for a in (q, k, v))
    with np.errstate(all="ignore"):
        a = np.maximum(np.float32(0), np.einsum("hid,hjd->hij", q, k) / np.float32(q.shape[-1]))
        f = np.sqrt((a * a).sum(axis=(-2, -1), keepdims=True))
        g = np.float32(gamma) * a / (f + np.float32(eps))
        eye = np.eye(q.shape[-2], dtype=np.float32)
        o = np.empty(v.shape, np.float32)
        for h in range(len(g)):
            try:
                o[h] = np.linalg.solve(eye - g[h], g[h] @ v[h])
            except np.linalg.LinAlgError:
                o[h] = np.nan
        return o


def test_neumann_takes_the_attention_cases():
    assert at.nonfinite_stress_cases("neumann") == at.nonfinite_stress_cases("pure-infsa")


@pytest.mark.parametrize("name", at.nonfinite_stress_cases("neumann"))
def test_neumann_plain_passes_and_nan_to_num_is_wrong(name):
    q, k, v = at.stress_neumann_case(name, 1, SHAPE, "fp32")
    o = neumann(q, k, v)
    r = at.assert_neumann_close(o, q, k, v)
    assert r.nonfinite_mismatch == 0
    if r.nonfinite_expected > 0:
        assert at.check_neumann_output(np.nan_to_num(o), q, k, v).verdict == "wrong"
    if name in ("nan-v", "inf-v"):  # column c NaN/Inf, the other columns finite
        spread = o.copy()
        spread[~np.isfinite(o).all(axis=(-2, -1))] = np.nan
        assert at.check_neumann_output(spread, q, k, v).verdict == "wrong"


@pytest.mark.parametrize("op,case", [("linear-infsa", "inf-v"), ("neumann", "nan-v")])
def test_the_verdicts_and_counts_equal_the_cli(cli, tmp_path, op, case):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", op, "--generate", case, "--seed", "2", "--shape",
            ",".join(map(str, SHAPE)), "--inputs", inp)
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    gen = at.stress_neumann_case if op == "neumann" else at.stress_linear_infsa_case
    for a, b in zip((q, k, v), gen(case, 2, SHAPE, "fp32")):
        assert np.array_equal(a, b, equal_nan=True)
    kernel, check = ((neumann, at.check_neumann_output) if op == "neumann"
                     else (linear_infsa, at.check_linear_infsa_output))
    o = kernel(q, k, v)
    verdicts = []
    for out in (o, np.nan_to_num(o)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", op, "--inputs", inp, "--output", outp, codes=(0, 1))
        r = check(out, q, k, v)
        assert c["verdict"] == r.verdict
        for key in ("nonfinite_expected", "nonfinite_mismatch", "nonfinite",
                    "elements_beyond_bound"):
            assert int(c[key]) == getattr(r, key), key
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
