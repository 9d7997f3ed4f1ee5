"""attnspec.testing for SpecA (check-kernel spec-attention): a plain numpy float32 kernel passes
every stress case with the lambda and the SVD corrections, the planted faults (C_V omitted, lambda
times all ones, sigma_r instead of sigma_1, scale 1/d, an extra relative error 1e-4 in a few
elements) do not, and the verdicts and numbers equal the CLI's on the same files."""
import numpy as np
import pytest

import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (48, 24, 8)


def plain_spec_attention(x, w_q, w_k, w_v, correction="lambda", lam=10.0, causal=False,
                         fault=None):
    """SpecA in float32 with W + C formed in float64 then stored in float32; ``fault`` plants one
    of no_cv, ones, sigma_r, scale_1_over_d, extra_error."""
    def corr(w):
        if correction == "svd":
            u, s, vt = np.linalg.svd(w.astype(np.float64), full_matrices=False)
            return (s[-1] if fault == "sigma_r" else s[0]) * u @ vt
        if fault == "ones":
            return lam * np.ones(w.shape)
        return lam * np.eye(*w.shape)
    ws = [(w.astype(np.float64) + (0 if fault == "no_cv" and i == 2 else corr(w)))
          .astype(np.float32) for i, w in enumerate((w_q, w_k, w_v))]
    xf = x.astype(np.float32)
    q, k, v = (xf @ w for w in ws)
    d = w_q.shape[1]
    s = np.float32(1 / d if fault == "scale_1_over_d" else 1 / np.sqrt(d))
    logits = np.einsum("...id,...jd->...ij", q, k) * s
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = np.einsum("...ij,...jd->...id", p, v).astype(np.float32)
    if fault == "extra_error":
        o.reshape(-1)[[3, 17, 40]] *= np.float32(1 + 1e-4)
    return o


@pytest.mark.parametrize("correction", ["lambda", "svd"])
def test_a_plain_kernel_passes_every_stress_case(correction):
    t = at.check_spec_attention(plain_spec_attention, correction=correction, shape=SHAPE)
    verdicts = list(t["verdict"])
    assert len(verdicts) == len(at.spec_attention_cases()) * 2
    assert verdicts == ["pass"] * len(verdicts), t
    assert max(t["worst_bound_ratio"]) < 1


@pytest.mark.parametrize("fault,correction", [("no_cv", "lambda"), ("ones", "lambda"),
                                              ("sigma_r", "svd"), ("scale_1_over_d", "lambda"),
                                              ("extra_error", "lambda")])
def test_planted_wrong_kernels_do_not_pass(fault, correction):
    x, w_q, w_k, w_v, lam = at.stress_spec_attention_case("gaussian", 5, SHAPE)
    out = plain_spec_attention(x, w_q, w_k, w_v, correction, lam, fault=fault)
    r = at.check_spec_attention_output(out, x, w_q, w_k, w_v, correction=correction, lam=lam)
    assert r.verdict == ("fail" if fault == "extra_error" else "wrong"), r.summary
    with pytest.raises(AssertionError, match="spec-attention kernel check: " + r.verdict):
        at.assert_spec_attention_close(out, x, w_q, w_k, w_v, correction=correction, lam=lam)


def test_the_baseline_passes_and_bad_arguments_are_refused():
    x, w_q, w_k, w_v, lam = at.stress_spec_attention_case("large-lambda", 1, SHAPE, "bf16")
    assert lam == 100
    o = at.baseline_spec_attention(x, w_q, w_k, w_v, lam=lam, dtype="bf16", causal=True)
    r = at.assert_spec_attention_close(o, x, w_q, w_k, w_v, lam=lam, dtype="bf16", causal=True)
    assert r.operation == "spec-attention" and r.baseline_bound_ratio <= 1
    with pytest.raises(at.DataError, match="lam must be finite and >= 0"):
        at.check_spec_attention_output(o, x, w_q, w_k, w_v, lam=-1.0, dtype="bf16")
    with pytest.raises(at.UsageError):
        at.check_spec_attention_output(o, x, w_q, w_k, w_v, correction="polar", dtype="bf16")
    with pytest.raises(at.DataError, match=r"w_k has shape \(3, 8\)"):
        at.check_spec_attention_output(o, x, w_q, w_k[:3], w_v, dtype="bf16")


def test_the_verdict_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    g = run_cli(cli, "check-kernel", "spec-attention", "--generate", "rank-deficient-w", "--seed",
                "4", "--shape", ",".join(map(str, SHAPE)), "--inputs", inp)
    assert g["case"] == "rank-deficient-w"
    with np.load(inp) as f:
        arrays = [f[n] for n in ("x", "w_q", "w_k", "w_v")]
    for a, b in zip(arrays, at.stress_spec_attention_case("rank-deficient-w", 4, SHAPE)):
        assert a.shape == b.shape and np.array_equal(a, b)
    for correction in ("lambda", "svd"):
        for fault in (None, "sigma_r" if correction == "svd" else "no_cv", "extra_error"):
            out = plain_spec_attention(*arrays, correction, 10.0, fault=fault)
            np.savez(outp, o=out)
            c = run_cli(cli, "check-kernel", "spec-attention", "--inputs", inp, "--output", outp,
                        "--correction", correction, codes=(0, 1))
            r = at.check_spec_attention_output(out, *arrays, correction=correction)
            assert c["verdict"] == r.verdict, (correction, fault)
            for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error",
                        "tensor_allowed", "max_reference_error"):
                assert same(num(c[key]), getattr(r, key)), key
