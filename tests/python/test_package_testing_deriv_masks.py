"""attnspec.testing and the pytest plugin for the derivatives of attention under boolean and
additive masks: plain numpy masked VJP and JVP kernels pass check_vjp / check_jvp(mask=...);
planted wrong ones (dV or dK blind to the boolean mask, the additive mask with the wrong sign or
transposed, a JVP blind to the mask) are wrong; the verdicts and numbers equal the CLI's on the
same file; the plugin's --attnspec-mask=boolean|additive hands the mask to the test and its
reproducer replays through the CLI; spec-attention takes the mask as the CLI does."""
import json
import os

import numpy as np
import pytest

import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 48, 16)
CASES = ("gaussian", "large-logits", "heavy-tail")
pytest_plugins = ["pytester"]


def _bias(mask, acc):
    """The logit bias of a mask: bool -> 0 / -inf, float -> its values."""
    m = np.asarray(mask)
    return np.where(m, acc(0), acc(-np.inf)) if m.dtype == np.bool_ else m.astype(acc)


def _softmax(q, k, bias, acc):
    qf, kf = q.astype(acc), k.astype(acc)
    s = acc(1 / np.sqrt(q.shape[-1]))
    x = np.einsum("...id,...jd->...ij", qf, kf) * s + bias
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, acc(0))  # fully masked rows: P = 0
    e = np.exp(x - m)
    l = e.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(l > 0, e / np.where(l > 0, l, 1), acc(0))
    return qf, kf, s, p


def masked_vjp(q, k, v, do, mask, acc=np.float32, fault=None):
    """A plain masked backward pass in `acc`, P and dS stored in q's dtype. Faults: "dv-blind"
    and "dk-blind" use the mask-ignoring weights there; "sign" and "transposed" misread the
    additive mask everywhere."""
    b = _bias(mask, acc)
    if fault == "sign":
        b = np.where(np.isfinite(b), -b, b)
    if fault == "transposed":
        b = np.swapaxes(b, -1, -2)
    qf, kf, s, p = _softmax(q, k, b, acc)
    vf, g = v.astype(acc), do.astype(acc)
    stored = p.astype(q.dtype).astype(acc)
    o = np.einsum("...ij,...jd->...id", stored, vf).astype(q.dtype).astype(acc)
    D = (g * o).sum(-1, keepdims=True)
    dP = np.einsum("...id,...jd->...ij", g, vf)
    dS = (p * (dP - D)).astype(q.dtype).astype(acc)
    blind = _softmax(q, k, acc(0), acc)[3]
    dSk = (blind * (dP - D)).astype(q.dtype).astype(acc) if fault == "dk-blind" else dS
    pv = blind.astype(q.dtype).astype(acc) if fault == "dv-blind" else stored
    dq = np.einsum("...ij,...jd->...id", dS, kf) * s
    dk = np.einsum("...ij,...id->...jd", dSk, qf) * s
    dv = np.einsum("...ij,...id->...jd", pv, g)
    return tuple(x.astype(q.dtype) for x in (dq, dk, dv))


def masked_jvp(q, k, v, tq, tk, tv, mask, acc=np.float32, blind=False):
    """A plain masked forward-mode derivative; `blind` ignores the mask."""
    qf, kf, s, p = _softmax(q, k, acc(0) if blind else _bias(mask, acc), acc)
    tqf, tkf, tvf = (x.astype(acc) for x in (tq, tk, tv))
    ds = (np.einsum("...id,...jd->...ij", tqf, kf) + np.einsum("...id,...jd->...ij", qf, tkf)) * s
    w = (p * (ds - (p * ds).sum(-1, keepdims=True))).astype(q.dtype).astype(acc)
    out = np.einsum("...ij,...jd->...id", w, v.astype(acc))
    out = out + np.einsum("...ij,...jd->...id", p.astype(q.dtype).astype(acc), tvf)
    return out.astype(q.dtype)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("kind", ["boolean", "additive"])
def test_plain_masked_kernels_pass_and_the_fn_gets_the_mask(dtype, kind):
    seen = []

    def vjp(q, k, v, do, mask):
        seen.append(mask)
        return masked_vjp(q, k, v, do, mask)
    t = at.check_vjp(vjp, dtype=dtype, shape=SHAPE, cases=CASES, mask=kind)
    assert list(t["verdict"]) == ["pass"] * len(CASES), t
    assert max(t["worst_bound_ratio"]) < 1 and not any(t["causal"])
    assert (seen[0].dtype == np.bool_) == (kind == "boolean") and seen[0].shape == (2, 48, 48)
    assert np.array_equal(seen[0], at.stress_mask(kind, 0, SHAPE, dtype))
    t = at.check_jvp(lambda q, k, v, tq, tk, tv, mask: masked_jvp(q, k, v, tq, tk, tv, mask),
                     dtype=dtype, shape=SHAPE, cases=CASES, mask=kind)
    assert list(t["verdict"]) == ["pass"] * len(CASES), t
    q, k, v, do = at.stress_vjp_case("near-ties", 1, SHAPE, dtype)
    m = at.stress_mask(kind, 1, SHAPE, dtype)
    r = at.check_vjp_output(*at.baseline_vjp(q, k, v, do, dtype=dtype, mask=m), q, k, v, do,
                            dtype=dtype, mask=m)
    assert r.verdict == "pass" and r.dq.masked_rows == 2 * 3  # rows 7, 23, 39 of each head


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_planted_mask_faults_are_wrong(dtype):
    q, k, v, do = at.stress_vjp_case("gaussian", 5, SHAPE, dtype)
    acc = np.float32
    for kind, fault, tensor in (("boolean", "dv-blind", "dv"), ("boolean", "dk-blind", "dk"),
                                ("additive", "sign", None), ("additive", "transposed", None)):
        m = at.stress_mask(kind, 5, SHAPE, dtype)
        grads = masked_vjp(q, k, v, do, m, acc, fault)
        with pytest.raises(AssertionError, match="attention-vjp kernel check: wrong"):
            at.assert_vjp_close(*grads, q, k, v, do, dtype=dtype, mask=m)
        if tensor:
            r = at.check_vjp_output(*grads, q, k, v, do, dtype=dtype, mask=m)
            assert getattr(r, tensor).verdict == "wrong" and r.dq.verdict == "pass"
    case = at.stress_jvp_case("spike-v", 5, SHAPE, dtype)
    m = at.stress_mask("boolean", 5, SHAPE, dtype)
    with pytest.raises(AssertionError, match="attention-jvp kernel check: wrong"):
        at.assert_jvp_close(masked_jvp(*case, m, blind=True), *case, dtype=dtype, mask=m)
    assert at.assert_jvp_close(masked_jvp(*case, m), *case, dtype=dtype, mask=m).passed
    with pytest.raises(at.UsageError):
        at.check_vjp(lambda *a, **kw: None, mask="boolean", causal=(False, True))


def _same_numbers(c, r):
    assert c["verdict"] == r.verdict
    for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
        assert same(num(c[key]), getattr(r, key)), key


@pytest.mark.parametrize("kind", ["boolean", "additive"])
def test_the_verdicts_and_numbers_equal_the_cli(cli, tmp_path, kind):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    shape = ",".join(map(str, SHAPE))
    run_cli(cli, "check-kernel", "attention-vjp", "--generate", "spike-v", "--seed", "4",
            "--shape", shape, "--inputs", inp, "--dtype", "fp16", "--mask", kind)
    with np.load(inp) as f:
        q, k, v, do = (f[n].astype(np.float16) for n in ("q", "k", "v", "do"))
        m = f["mask"] != 0 if kind == "boolean" else f["mask"].astype(np.float16)
    assert np.array_equal(m, at.stress_mask(kind, 4, SHAPE, "fp16"))
    verdicts = []
    for fault in (None, "dv-blind" if kind == "boolean" else "sign"):
        grads = masked_vjp(q, k, v, do, m, fault=fault)
        np.savez(outp, dq=grads[0], dk=grads[1], dv=grads[2])
        c = run_cli(cli, "check-kernel", "attention-vjp", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", kind, codes=(0, 1))
        r = at.check_vjp_output(*grads, q, k, v, do, dtype="fp16", mask=m)
        assert c["verdict"] == r.verdict
        verdicts.append(r.verdict)
        for name in ("dq", "dk", "dv"):
            _same_numbers(c["outputs"][name], getattr(r, name))
    assert verdicts == ["pass", "wrong"]
    run_cli(cli, "check-kernel", "attention-jvp", "--generate", "heavy-tail", "--seed", "4",
            "--shape", shape, "--inputs", inp, "--dtype", "fp16", "--mask", kind)
    with np.load(inp) as f:
        case = tuple(f[n].astype(np.float16) for n in ("q", "k", "v", "tq", "tk", "tv"))
    verdicts = []
    for blind in (False, True):
        out = masked_jvp(*case, m, blind=blind)
        np.savez(outp, do_t=out)
        c = run_cli(cli, "check-kernel", "attention-jvp", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", kind, codes=(0, 1))
        r = at.check_jvp_output(out, *case, dtype="fp16", mask=m)
        _same_numbers(c, r)
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]


PLUGIN_TESTS = '''
import attnspec.testing as at


def test_vjp(attnspec_case):
    c = attnspec_case
    assert c.mask is not None and not c.causal
    dq, dk, dv = at.baseline_vjp(c.q, c.k, c.v, c.do, dtype=c.dtype, mask=c.mask)
    c.assert_vjp_close(dq.astype(c.q.dtype), dk.astype(c.k.dtype), dv.astype(c.v.dtype))


def test_vjp_mask_blind(attnspec_case):
    c = attnspec_case
    dq, dk, dv = at.baseline_vjp(c.q, c.k, c.v, c.do, dtype=c.dtype)
    c.assert_vjp_close(dq.astype(c.q.dtype), dk.astype(c.k.dtype), dv.astype(c.v.dtype))


def test_linear(attnspec_case):
    attnspec_case.assert_linear_infsa_close(attnspec_case.q)
'''


@pytest.mark.parametrize("kind", ["boolean", "additive"])
def test_the_plugin_passes_the_mask_and_replays(pytester, tmp_path, cli, kind):
    pytester.makepyfile(test_masked=PLUGIN_TESTS)
    repro = tmp_path / "repro"
    r = pytester.runpytest("--attnspec-cases=gaussian", "--attnspec-mask=" + kind,
                           "--attnspec-shape=1,32,8", "--attnspec-repro=%s" % repro,
                           "-rs", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=1, skipped=1)
    text = "\n".join(r.outlines)
    assert "test_vjp_mask_blind[gaussian-s0-%s]" % kind in text
    assert "takes no mask: case gaussian-s0-%s is %s" % (kind, kind) in text
    (name,) = os.listdir(repro)
    z = np.load(str(repro / name))
    assert "mask" in z.files
    case = json.loads(z["case"].item().decode())
    assert case["mask"] == kind and "--mask %s" % kind in case["replay"]
    d = run_cli(cli, *case["replay"].split()[1:], codes=(1,))
    assert d["verdict"] == case["verdict"] == "wrong"


@pytest.mark.parametrize("kind", ["boolean", "additive"])
def test_spec_attention_takes_the_mask_as_the_cli(cli, tmp_path, kind):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "spec-attention", "--generate", "gaussian", "--seed", "2",
            "--shape", "2,32,16,8", "--inputs", inp, "--dtype", "fp16", "--mask", kind)
    with np.load(inp) as f:
        x, wq, wk, wv = (f[n].astype(np.float16) for n in ("x", "w_q", "w_k", "w_v"))
        m = f["mask"] != 0 if kind == "boolean" else f["mask"].astype(np.float16)
    assert m.shape == (2, 32, 32)
    verdicts = []
    for mask in (m, None):  # the baseline with the mask, then blind to it
        o = at.baseline_spec_attention(x, wq, wk, wv, dtype="fp16", mask=mask).astype(np.float16)
        np.savez(outp, o=o)
        c = run_cli(cli, "check-kernel", "spec-attention", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", kind, codes=(0, 1))
        r = at.check_spec_attention_output(o, x, wq, wk, wv, dtype="fp16", mask=m)
        _same_numbers(c, r)
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
