"""attnspec.testing's SpecA check on x or weights holding NaN/Inf (docs/cli/check-kernel.md,
"Non-finite inputs", spec-attention): a plain numpy float32 kernel passes every non-finite case
with and without the causal mask, numpy.nan_to_num of its output is wrong wherever an element must
be NaN/Inf, a non-finite weight under the SVD correction is refused, and the verdict and counts
equal the CLI's on one file."""
import numpy as np
import pytest

import attnspec
import attnspec.testing as at
from cli_support import run_cli

SHAPE = (2, 24, 12, 8)


def plain(x, w_q, w_k, w_v, lam=10.0, causal=False):
    """float32 SpecA with the lambda correction: NaN/Inf propagate as IEEE arithmetic says."""
    with np.errstate(all="ignore"):
        ws = [(w.astype(np.float64) + lam * np.eye(*w.shape)).astype(np.float32)
              for w in (w_q, w_k, w_v)]
        xf = x.astype(np.float32)
        q, k, v = (xf @ w for w in ws)
        logits = np.einsum("...id,...jd->...ij", q, k) * np.float32(1 / np.sqrt(w_q.shape[1]))
        if causal:
            n = logits.shape[-1]
            logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return np.einsum("...ij,...jd->...id", p, v).astype(np.float32)


def test_the_cases():
    assert at.nonfinite_stress_cases("spec-attention") == ("nan-x", "inf-x", "nan-w", "inf-w")
    x, w_q, w_k, w_v, lam = at.stress_spec_attention_case("nan-x", 3, SHAPE)
    g = at.stress_spec_attention_case("gaussian", 3, SHAPE)
    assert np.isnan(x).sum() == SHAPE[0]  # one per batch, else the gaussian case's values
    assert np.array_equal(np.where(np.isnan(x), 0, x), np.where(np.isnan(x), 0, g[0]))
    assert lam == 10.0


@pytest.mark.parametrize("name", ("nan-x", "inf-x", "nan-w", "inf-w"))
@pytest.mark.parametrize("causal", (False, True))
def test_a_plain_kernel_passes_and_nan_to_num_is_wrong(name, causal):
    expected = 0
    for seed in (1, 2, 3):
        x, w_q, w_k, w_v, lam = at.stress_spec_attention_case(name, seed, SHAPE)
        o = plain(x, w_q, w_k, w_v, lam, causal)
        r = at.assert_spec_attention_close(o, x, w_q, w_k, w_v, lam=lam, causal=causal)
        assert r.nonfinite_mismatch == 0
        expected += r.nonfinite_expected
        if r.nonfinite_expected > 0:
            z = at.check_spec_attention_output(np.nan_to_num(o), x, w_q, w_k, w_v, lam=lam,
                                               causal=causal)
            assert z.verdict == "wrong"
            assert z.nonfinite_mismatch > 0
    assert expected > 0


def test_a_nonfinite_weight_under_the_svd_correction_is_refused():
    x, w_q, w_k, w_v, _ = at.stress_spec_attention_case("inf-w", 1, SHAPE)
    o = plain(x, w_q, w_k, w_v)
    with pytest.raises(attnspec.DataError, match="SVD correction of a non-finite weight"):
        at.check_spec_attention_output(o, x, w_q, w_k, w_v, correction="svd")


def test_the_verdicts_and_counts_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "spec-attention", "--generate", "nan-x", "--seed", "2",
            "--shape", ",".join(map(str, SHAPE)), "--inputs", inp)
    with np.load(inp) as f:
        arrays = [f[n] for n in ("x", "w_q", "w_k", "w_v")]
    for a, b in zip(arrays, at.stress_spec_attention_case("nan-x", 2, SHAPE)):
        assert np.array_equal(a, b, equal_nan=True)
    o = plain(*arrays, causal=True)
    verdicts = []
    for out in (o, np.nan_to_num(o)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "spec-attention", "--inputs", inp, "--output", outp,
                    "--mask", "causal", codes=(0, 1))
        r = at.check_spec_attention_output(out, *arrays, causal=True)
        assert c["verdict"] == r.verdict
        for key in ("nonfinite_expected", "nonfinite_mismatch", "nonfinite",
                    "elements_beyond_bound"):
            assert int(c[key]) == getattr(r, key), key
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
