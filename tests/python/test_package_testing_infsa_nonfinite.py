"""attnspec.testing's linear-infsa and pure-infsa checks on inputs with NaN/Inf
(docs/cli/check-kernel.md, "Non-finite inputs"): plain float32 kernels pass on every non-finite
case, numpy.nan_to_num of their outputs and a NaN spread over its head are wrong where the pattern
says so, neumann still refuses such inputs, and the verdict and counts equal the CLI's on one
file."""
import numpy as np
import pytest

import attnspec
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


def test_neumann_refuses_nonfinite_inputs():
    q, k, v = at.stress_linear_infsa_case("nan-k", 1, SHAPE, "fp32")
    with pytest.raises(attnspec.DataError, match="NaN or Inf"):
        at.check_neumann_output(v, q, k, v)


def test_the_verdicts_and_counts_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "linear-infsa", "--generate", "inf-v", "--seed", "2", "--shape",
            ",".join(map(str, SHAPE)), "--inputs", inp)
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    for a, b in zip((q, k, v), at.stress_linear_infsa_case("inf-v", 2, SHAPE, "fp32")):
        assert np.array_equal(a, b, equal_nan=True)
    o = linear_infsa(q, k, v)
    verdicts = []
    for out in (o, np.nan_to_num(o)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "linear-infsa", "--inputs", inp, "--output", outp,
                    codes=(0, 1))
        r = at.check_linear_infsa_output(out, q, k, v)
        assert c["verdict"] == r.verdict
        for key in ("nonfinite_expected", "nonfinite_mismatch", "nonfinite",
                    "elements_beyond_bound"):
            assert int(c[key]) == getattr(r, key), key
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
