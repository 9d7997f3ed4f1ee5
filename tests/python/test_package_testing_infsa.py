"""attnspec.testing for Linear-InfSA and one-hop InfSA: plain numpy kernels pass at fp32 and fp16,
the planted faults (query pooled by a plain mean, gamma twice, normalised by the max; the norm of
one row instead of the Frobenius norm) do not, and the verdicts and numbers equal the CLI's
`check-kernel linear-infsa` / `pure-infsa` on the same files."""
import numpy as np
import pytest

import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 64, 16)


def plain_linear_infsa(q, k, v, gamma=0.95, eps=1e-6, mean_pool=False, gamma_twice=False,
                       max_norm=False):
    """Linear-InfSA in float32, q_bar stored in q's dtype, output in q's dtype. The keyword
    arguments plant faults."""
    out_type = q.dtype
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    c = np.float32(1 / np.sqrt(q.shape[-1]))
    qt = qf * c
    e = np.ones(qt.shape[:-1], np.float32) if mean_pool else np.linalg.norm(qt, axis=-1)
    qb = (np.einsum("...i,...id->...d", e, qt) / (e.sum(-1)[..., None] + np.float32(eps)))
    qb = qb.astype(out_type).astype(np.float32)
    s = np.maximum(np.float32(0), np.einsum("...d,...jd->...j", qb, kf * c))
    den = s.max(-1) if max_norm else s.sum(-1)
    a = s / (den[..., None] + np.float32(eps))
    g = np.float32(gamma) ** (2 if gamma_twice else 1)
    p = g * np.einsum("...j,...jd->...d", a, vf)
    return np.broadcast_to(p[..., None, :], q.shape[:-1] + v.shape[-1:]).astype(out_type)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_a_plain_kernel_passes_every_stress_case(dtype):
    t = at.check_linear_infsa(plain_linear_infsa, dtype=dtype, shape=SHAPE, seeds=(0, 1))
    verdicts = list(t["verdict"])
    assert len(verdicts) == len(at.linear_infsa_cases()) * 2
    assert verdicts == ["pass"] * len(verdicts), t
    assert max(t["worst_bound_ratio"]) < 1


def test_the_baseline_passes_at_bf16_and_relu_zero_is_zero():
    q, k, v = at.stress_linear_infsa_case("dominant-key", 3, SHAPE, "bf16")
    o = at.baseline_linear_infsa(q, k, v, dtype="bf16")
    r = at.assert_linear_infsa_close(o, q, k, v, dtype="bf16")
    assert r.operation == "linear-infsa" and r.baseline_bound_ratio <= 1
    q, k, v = at.stress_linear_infsa_case("relu-zero", 3, SHAPE, "fp16")
    assert not at.baseline_linear_infsa(q, k, v, dtype="fp16").any()


@pytest.mark.parametrize("fault", ["mean_pool", "gamma_twice", "max_norm"])
def test_planted_wrong_kernels_are_wrong(fault):
    q, k, v = at.stress_linear_infsa_case("heavy-tail", 5, SHAPE, "fp16")
    out = plain_linear_infsa(q, k, v, **{fault: True})
    r = at.check_linear_infsa_output(out, q, k, v)
    assert r.verdict == "wrong", r.summary
    with pytest.raises(AssertionError, match="linear-infsa kernel check: wrong"):
        at.assert_linear_infsa_close(out, q, k, v)


def test_the_verdict_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    g = run_cli(cli, "check-kernel", "linear-infsa", "--generate", "dominant-key", "--seed", "4",
                "--shape", ",".join(map(str, SHAPE)), "--inputs", inp, "--dtype", "fp16")
    assert g["case"] == "dominant-key"
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    for a, b in zip((q, k, v), at.stress_linear_infsa_case("dominant-key", 4, SHAPE, "fp16")):
        assert a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64))
    for out in (plain_linear_infsa(q, k, v), plain_linear_infsa(q, k, v, mean_pool=True)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "linear-infsa", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--gamma", "0.9", codes=(0, 1))
        r = at.check_linear_infsa_output(out, q, k, v, gamma=0.9, dtype="fp16")
        assert c["verdict"] == r.verdict
        for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
            assert same(num(c[key]), getattr(r, key)), key


def plain_pure_infsa(q, k, v, gamma=0.95, eps=1e-6, row_norm=False):
    """gamma ReLU(q k^T / d) / (||.||_F + eps) v in float32, ReLU(q k^T / d) stored in q's
    dtype, output in q's dtype; ``row_norm`` plants the norm of A+'s first row."""
    out_type = q.dtype
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    x = np.einsum("...id,...jd->...ij", qf, kf) / np.float32(q.shape[-1])
    a = np.maximum(np.float32(0), x)
    a = a.astype(out_type).astype(np.float32)
    sq = (a[..., :1, :] ** 2).sum((-2, -1)) if row_norm else (a ** 2).sum((-2, -1))
    o = np.float32(gamma) * np.einsum("...ij,...jd->...id", a, vf)
    return (o / (np.sqrt(sq)[..., None, None] + np.float32(eps))).astype(out_type)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_pure_infsa_a_plain_kernel_passes_and_a_one_row_norm_is_wrong(dtype):
    t = at.check_pure_infsa(plain_pure_infsa, dtype=dtype, shape=(2, 32, 16))
    assert list(t["verdict"]) == ["pass"] * len(at.linear_infsa_cases()), t
    q, k, v = at.stress_linear_infsa_case("gaussian", 2, (2, 32, 16), dtype)
    r = at.check_pure_infsa_output(plain_pure_infsa(q, k, v, row_norm=True), q, k, v)
    assert r.verdict == "wrong" and r.operation == "pure-infsa"
    o = at.baseline_pure_infsa(q, k, v, dtype=dtype)
    assert at.assert_pure_infsa_close(o, q, k, v, dtype=dtype).baseline_bound_ratio <= 1


def test_pure_infsa_verdict_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "pure-infsa", "--generate", "heavy-tail", "--seed", "2",
            "--shape", "2,32,16", "--inputs", inp, "--dtype", "fp16")
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    for out in (plain_pure_infsa(q, k, v), plain_pure_infsa(q, k, v, row_norm=True)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "pure-infsa", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", codes=(0, 1))
        r = at.check_pure_infsa_output(out, q, k, v, dtype="fp16")
        assert c["verdict"] == r.verdict
        for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
            assert same(num(c[key]), getattr(r, key)), key
