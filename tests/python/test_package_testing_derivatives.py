"""attnspec.testing for the derivatives of attention: plain numpy VJP and JVP kernels pass,
planted wrong ones do not, and the verdicts and numbers equal the CLI's `check-kernel
attention-vjp` / `attention-jvp` on the same files."""
import numpy as np
import pytest

import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 64, 32)


def _forward(q, k, v, causal, acc, mask_shift=0):
    """Logits, P (float `acc`) and P stored in q's dtype, as a plain kernel computes them."""
    qf, kf, vf = (x.astype(acc) for x in (q, k, v))
    s = acc(1 / np.sqrt(q.shape[-1]))
    logits = np.einsum("...id,...jd->...ij", qf, kf) * s
    if causal:
        n_q, n_k = logits.shape[-2:]
        i, j = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
        logits = np.where(j <= i + (n_k - n_q) + mask_shift, logits, acc(-np.inf))
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    stored = p.astype(q.dtype).astype(acc)
    return qf, kf, vf, s, p, stored


def plain_vjp(q, k, v, do, causal=False, acc=np.float32, drop_dv_row=None, dk_scale=None,
              mask_shift=0):
    """A plain backward pass: O from the stored P, D = rowsum(dO o O), dS = P (dP - D) stored in
    q's dtype, sums in `acc`; outputs in q's dtype. The keyword arguments plant faults."""
    qf, kf, vf, s, p, stored = _forward(q, k, v, causal, acc, mask_shift)
    g = do.astype(acc)
    o = np.einsum("...ij,...jd->...id", stored, vf).astype(q.dtype).astype(acc)
    D = (g * o).sum(-1, keepdims=True)
    dP = np.einsum("...id,...jd->...ij", g, vf)
    dS = (p * (dP - D)).astype(q.dtype).astype(acc)
    dq = np.einsum("...ij,...jd->...id", dS, kf) * s
    dk = np.einsum("...ij,...id->...jd", dS, qf) * (s if dk_scale is None else acc(dk_scale))
    pv = stored.copy()
    if drop_dv_row is not None:
        pv[..., drop_dv_row, :] = 0  # query row drop_dv_row adds nothing to dV
    dv = np.einsum("...ij,...id->...jd", pv, g)
    return tuple(x.astype(q.dtype) for x in (dq, dk, dv))


def plain_jvp(q, k, v, tq, tk, tv, causal=False, acc=np.float32, no_tv=False):
    """A plain forward-mode derivative: ds = s (tq k^T + q tk^T), W = P (ds - rowsum(P ds))
    stored in q's dtype, do_t = W v + P tv in `acc`; `no_tv` forgets the tv term."""
    qf, kf, vf, s, p, stored = _forward(q, k, v, causal, acc)
    tqf, tkf, tvf = (x.astype(acc) for x in (tq, tk, tv))
    ds = (np.einsum("...id,...jd->...ij", tqf, kf) + np.einsum("...id,...jd->...ij", qf, tkf)) * s
    ds = np.where(p > 0, ds, acc(0))
    w = (p * (ds - (p * ds).sum(-1, keepdims=True))).astype(q.dtype).astype(acc)
    out = np.einsum("...ij,...jd->...id", w, vf)
    if not no_tv:
        out = out + np.einsum("...ij,...jd->...id", stored, tvf)
    return out.astype(q.dtype)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_plain_derivative_kernels_pass_every_stress_case(dtype):
    t = at.check_vjp(lambda q, k, v, do, causal: plain_vjp(q, k, v, do, causal), dtype=dtype,
                     shape=SHAPE)
    assert list(t["verdict"]) == ["pass"] * len(at.stress_cases()) * 2, t
    assert max(t["worst_bound_ratio"]) < 1
    t = at.check_jvp(lambda q, k, v, tq, tk, tv, causal: plain_jvp(q, k, v, tq, tk, tv, causal),
                     dtype=dtype, shape=SHAPE)
    assert list(t["verdict"]) == ["pass"] * len(at.stress_cases()) * 2, t


def test_the_baselines_pass_within_their_own_bound():
    q, k, v, do = at.stress_vjp_case("heavy-tail", 3, SHAPE, "bf16")
    dq, dk, dv = at.baseline_vjp(q, k, v, do, dtype="bf16", causal=True)
    r = at.check_vjp_output(dq, dk, dv, q, k, v, do, dtype="bf16", causal=True)
    assert r.verdict == "pass" and r.worst_bound_ratio <= 1
    assert r.dk.baseline_bound_ratio <= 1 and r.dk.tensor_error == r.dk.tensor_baseline
    case = at.stress_jvp_case("near-ties", 3, SHAPE, "bf16")
    r = at.check_jvp_output(at.baseline_jvp(*case, dtype="bf16"), *case, dtype="bf16")
    assert r.verdict == "pass" and r.baseline_bound_ratio <= 1


@pytest.mark.parametrize("fault", ["dV drops a row", "dK scale 1/d", "causal off by one"])
def test_planted_wrong_vjp_kernels_are_wrong(fault):
    q, k, v, do = at.stress_vjp_case("gaussian", 5, SHAPE, "fp32")
    causal = fault == "causal off by one"
    kw = {"dV drops a row": {"drop_dv_row": 9}, "dK scale 1/d": {"dk_scale": 1 / SHAPE[-1]},
          "causal off by one": {"mask_shift": 1}}[fault]
    grads = plain_vjp(q, k, v, do, causal=causal, **kw)
    with pytest.raises(AssertionError) as e:
        at.assert_vjp_close(*grads, q, k, v, do, causal=causal)
    assert "attention-vjp kernel check: wrong" in str(e.value)
    r = at.check_vjp_output(*grads, q, k, v, do, causal=causal)
    assert r.verdict == "wrong" and r.worst_bound_ratio > 1
    if fault == "dV drops a row":
        assert r.dv.verdict == "wrong" and r.dq.verdict == "pass" and r.dk.verdict == "pass"


def test_a_jvp_without_its_tv_term_is_wrong():
    case = at.stress_jvp_case("spike-v", 5, SHAPE, "fp16")
    with pytest.raises(AssertionError, match="attention-jvp kernel check: wrong"):
        at.assert_jvp_close(plain_jvp(*case, no_tv=True), *case)
    assert at.assert_jvp_close(plain_jvp(*case), *case).verdict == "pass"


def _same_numbers(c, r):
    assert c["verdict"] == r.verdict
    for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
        assert same(num(c[key]), getattr(r, key)), key
    assert int(c["rows_beyond_rule"]) == r.rows_beyond_rule


def test_the_verdicts_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    shape = ",".join(map(str, SHAPE))
    run_cli(cli, "check-kernel", "attention-vjp", "--generate", "spike-v", "--seed", "4",
            "--shape", shape, "--inputs", inp, "--dtype", "fp16")
    with np.load(inp) as f:  # float32 members holding fp16 values: the kernel reads float16
        q, k, v, do = (f[n].astype(np.float16) for n in ("q", "k", "v", "do"))
    for a, b in zip((q, k, v, do), at.stress_vjp_case("spike-v", 4, SHAPE, "fp16")):
        assert a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64))
    verdicts = []
    for grads in (plain_vjp(q, k, v, do, causal=True),
                  plain_vjp(q, k, v, do, causal=True, drop_dv_row=9)):
        np.savez(outp, dq=grads[0], dk=grads[1], dv=grads[2])
        c = run_cli(cli, "check-kernel", "attention-vjp", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", "causal", codes=(0, 1))
        r = at.check_vjp_output(*grads, q, k, v, do, dtype="fp16", causal=True)
        assert c["verdict"] == r.verdict
        verdicts.append(r.verdict)
        for name in ("dq", "dk", "dv"):
            _same_numbers(c["outputs"][name], getattr(r, name))
    assert verdicts == ["pass", "wrong"]
    run_cli(cli, "check-kernel", "attention-jvp", "--generate", "heavy-tail", "--seed", "4",
            "--shape", shape, "--inputs", inp, "--dtype", "fp16")
    with np.load(inp) as f:
        case = tuple(f[n].astype(np.float16) for n in ("q", "k", "v", "tq", "tk", "tv"))
    for a, b in zip(case, at.stress_jvp_case("heavy-tail", 4, SHAPE, "fp16")):
        assert np.array_equal(a.astype(np.float64), b.astype(np.float64))
    verdicts = []
    for out in (plain_jvp(*case), plain_jvp(*case, no_tv=True)):
        np.savez(outp, do_t=out)
        c = run_cli(cli, "check-kernel", "attention-jvp", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", codes=(0, 1))
        r = at.check_jvp_output(out, *case, dtype="fp16")
        _same_numbers(c, r)
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
