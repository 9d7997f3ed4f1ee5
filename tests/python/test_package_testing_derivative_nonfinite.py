"""attnspec.testing's derivative checks on inputs with NaN/Inf (docs/cli/check-kernel.md,
"Non-finite inputs"): the non-finite cases of attention-vjp and attention-jvp, plain float32
derivatives pass on each, numpy.nan_to_num of their outputs and one row's NaN spread over its head
are wrong, and the verdicts and counts equal the CLI's on one file."""
import numpy as np
import pytest

import attnspec
import attnspec.testing as at
from cli_support import run_cli

SHAPE = (2, 32, 8)


def _softmax(q, k, causal):
    with np.errstate(all="ignore"):
        x = np.einsum("hid,hjd->hij", q, k) * np.float32(1 / np.sqrt(q.shape[-1]))
        if causal:
            n = x.shape[-1]
            x = np.where(np.tril(np.ones((n, n), bool)), x, np.float32(-np.inf))
        t = np.exp(x - x.max(-1, keepdims=True))
        return t / t.sum(-1, keepdims=True)


def vjp(q, k, v, do, causal=False):
    """float32 dq, dk, dv (dS = P o (dO V^T - rowsum(dO o O)))."""
    q, k, v, do = (a.astype(np.float32) for a in (q, k, v, do))
    s = np.float32(1 / np.sqrt(q.shape[-1]))
    p = _softmax(q, k, causal)
    with np.errstate(all="ignore"):
        o = np.einsum("hij,hjd->hid", p, v)
        ds = p * (np.einsum("hid,hjd->hij", do, v) - (do * o).sum(-1, keepdims=True))
        return (s * np.einsum("hij,hjd->hid", ds, k), s * np.einsum("hij,hid->hjd", ds, q),
                np.einsum("hij,hid->hjd", p, do))


def jvp(q, k, v, tq, tk, tv, causal=False):
    """float32 do_t = P o (ds - rowsum(P o ds)) V + P tv."""
    q, k, v, tq, tk, tv = (a.astype(np.float32) for a in (q, k, v, tq, tk, tv))
    s = np.float32(1 / np.sqrt(q.shape[-1]))
    p = _softmax(q, k, causal)
    with np.errstate(all="ignore"):
        ds = s * (np.einsum("hid,hjd->hij", tq, k) + np.einsum("hid,hjd->hij", q, tk))
        w = p * (ds - (p * ds).sum(-1, keepdims=True))
        return np.einsum("hij,hjd->hid", w, v) + np.einsum("hij,hjd->hid", p, tv)


def spread(a):
    """Every head holding a NaN/Inf made NaN throughout (a planted fault)."""
    a = a.copy()
    a[~np.isfinite(a).all(axis=(-2, -1))] = np.nan
    return a


def test_the_derivative_nonfinite_cases():
    vjp_names = at.nonfinite_stress_cases("attention-vjp")
    jvp_names = at.nonfinite_stress_cases("attention-jvp")
    assert vjp_names == at.nonfinite_stress_cases() + ("nan-do", "inf-do")
    assert jvp_names[6:] == ("nan-tq", "inf-tq", "nan-tk", "inf-tk", "nan-tv", "inf-tv")
    for name in ("nan-do", "inf-do"):
        arrays = at.stress_vjp_case(name, 3, SHAPE, "fp16")
        assert [int((~np.isfinite(a)).sum()) for a in arrays] == [0, 0, 0, SHAPE[0]]
        for a, b in zip(arrays, at.stress_vjp_case(name, 3, SHAPE, "fp16")):
            assert np.array_equal(a, b, equal_nan=True)
    arrays = at.stress_jvp_case("inf-tk", 3, SHAPE, "fp32")
    assert [int((~np.isfinite(a)).sum()) for a in arrays] == [0, 0, 0, 0, SHAPE[0], 0]
    with pytest.raises(Exception, match="plants into"):
        at.stress_jvp_case("nan-do", 3, SHAPE, "fp32")
    with pytest.raises(attnspec.UsageError, match="plants into do or a tangent"):
        at.stress_case("inf-tk", 3, SHAPE, "fp32")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", at.nonfinite_stress_cases("attention-vjp"))
def test_vjp_plain_passes_and_planted_faults_are_wrong(name, causal):
    q, k, v, do = at.stress_vjp_case(name, 1, SHAPE, "fp32")
    dq, dk, dv = vjp(q, k, v, do, causal)
    r = at.assert_vjp_close(dq, dk, dv, q, k, v, do, causal=causal)
    assert sum(t.nonfinite_expected for t in (r.dq, r.dk, r.dv)) > 0
    assert all(t.nonfinite_mismatch == 0 for t in (r.dq, r.dk, r.dv))
    z = at.check_vjp_output(*(np.nan_to_num(a) for a in (dq, dk, dv)), q, k, v, do, causal=causal)
    assert z.verdict == "wrong"
    s = at.check_vjp_output(spread(dq), spread(dk), spread(dv), q, k, v, do, causal=causal)
    if name in ("nan-q", "nan-do") and not causal:  # one row of dQ non-finite, the rest finite
        assert s.verdict == "wrong" and s.dq.nonfinite_mismatch > 0


@pytest.mark.parametrize("name", at.nonfinite_stress_cases("attention-jvp"))
def test_jvp_plain_passes_and_planted_faults_are_wrong(name):
    arrays = at.stress_jvp_case(name, 2, SHAPE, "fp32")
    o = jvp(*arrays)
    r = at.assert_jvp_close(o, *arrays)
    assert r.nonfinite_expected > 0 and r.nonfinite_mismatch == 0
    assert at.check_jvp_output(np.nan_to_num(o), *arrays).verdict == "wrong"
    if name in ("nan-q", "nan-tq", "nan-v", "nan-tv"):  # some elements of the head stay finite
        s = at.check_jvp_output(spread(o), *arrays)
        assert s.verdict == "wrong" and s.nonfinite_mismatch > 0


def test_the_verdicts_and_counts_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "attention-vjp", "--generate", "inf-do", "--seed", "5",
            "--shape", ",".join(map(str, SHAPE)), "--inputs", inp)
    with np.load(inp) as f:
        q, k, v, do = f["q"], f["k"], f["v"], f["do"]
    for a, b in zip((q, k, v, do), at.stress_vjp_case("inf-do", 5, SHAPE, "fp32")):
        assert np.array_equal(a, b, equal_nan=True)
    dq, dk, dv = vjp(q, k, v, do)
    verdicts = []
    for outs in ((dq, dk, dv), tuple(np.nan_to_num(a) for a in (dq, dk, dv))):
        np.savez(outp, dq=outs[0], dk=outs[1], dv=outs[2])
        c = run_cli(cli, "check-kernel", "attention-vjp", "--inputs", inp, "--output", outp,
                    codes=(0, 1))
        r = at.check_vjp_output(*outs, q, k, v, do)
        assert c["verdict"] == r.verdict
        for n in ("dq", "dk", "dv"):
            for key in ("nonfinite_expected", "nonfinite_mismatch", "nonfinite",
                        "elements_beyond_bound"):
                assert int(c["outputs"][n][key]) == getattr(getattr(r, n), key), (n, key)
        verdicts.append(r.verdict)
    assert verdicts == ["pass", "wrong"]
