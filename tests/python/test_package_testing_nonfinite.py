"""attnspec.testing on inputs with NaN/Inf (docs/cli/check-kernel.md, "Non-finite inputs"): the
non-finite stress cases, a plain float32 kernel passes on each, numpy.nan_to_num of its output and
a max over the whole head are wrong, and the verdicts and counts equal the CLI's on one file."""
import numpy as np
import pytest

import attnspec
import attnspec.testing as at
from cli_support import run_cli

SHAPE = (2, 48, 16)


def plain(q, k, v, causal=False, global_max=False):
    """float32 max-subtracted softmax attention (numpy's max propagates NaN); `global_max` takes
    the max over every logit of the head instead of per row (a planted fault)."""
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    with np.errstate(all="ignore"):
        x = np.einsum("hid,hjd->hij", qf, kf) * np.float32(1 / np.sqrt(q.shape[-1]))
        if causal:
            n = x.shape[-1]
            x = np.where(np.tril(np.ones((n, n), bool)), x, np.float32(-np.inf))
        m = x.max(axis=(-2, -1) if global_max else -1, keepdims=True)
        t = np.exp(x - m)
        l = t.sum(-1, keepdims=True)
        o = np.einsum("hij,hjd->hid", t / l, vf)
        lse = (m + np.log(l))[..., 0]
    return o, lse


def test_the_nonfinite_cases():
    names = at.nonfinite_stress_cases()
    assert names == ("nan-q", "inf-q", "nan-k", "inf-k", "nan-v", "inf-v")
    assert not set(names) & set(at.stress_cases())
    for name in names:
        q, k, v = at.stress_case(name, 3, SHAPE, "fp16")
        g = at.stress_case("gaussian", 3, SHAPE, "fp16")
        planted = {"q": q, "k": k, "v": v}[name[-1]]
        assert (~np.isfinite(planted)).sum() == SHAPE[0]  # one per head
        again = at.stress_case(name, 3, SHAPE, "fp16")
        for a, b in zip((q, k, v), again):
            assert np.array_equal(a, b, equal_nan=True)
        assert (~np.isfinite(q) | (q == g[0])).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", ["nan-q", "inf-q", "nan-k", "inf-k", "nan-v", "inf-v"])
def test_a_plain_kernel_passes_and_planted_faults_are_wrong(name, causal):
    q, k, v = at.stress_case(name, 1, SHAPE, "fp32")
    o, lse = plain(q, k, v, causal)
    r = at.assert_attention_close(o, q, k, v, lse=lse, causal=causal)
    assert r.nonfinite_expected > 0 and r.nonfinite_mismatch == 0
    z = at.check_attention_output(np.nan_to_num(o), q, k, v, lse=np.nan_to_num(lse),
                                  causal=causal)
    assert z.verdict == "wrong" and z.nonfinite_mismatch > 0
    with pytest.raises(AssertionError, match="wrong"):
        at.assert_attention_close(np.nan_to_num(o), q, k, v, causal=causal)
    if name in ("nan-q", "inf-k"):  # the poisoned row's NaN or +inf reaches the head's max
        o, lse = plain(q, k, v, causal, global_max=True)
        g = at.check_attention_output(o, q, k, v, lse=lse, causal=causal)
        assert g.verdict == "wrong" and g.nonfinite > 0 and g.nonfinite_mismatch > 0


def test_the_derivatives_accept_nonfinite_inputs():
    q, k, v, do = at.stress_vjp_case("nan-q", 0, SHAPE, "fp32")  # test_..._derivative_nonfinite
    r = at.check_vjp_output(q, k, v, q, k, v, do)  # q, k, v as dq, dk, dv: finite where NaN due
    assert r.verdict == "wrong" and r.dk.nonfinite_mismatch > 0


def test_the_verdicts_and_counts_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "attention", "--generate", "inf-k", "--seed", "2", "--shape",
            ",".join(map(str, SHAPE)), "--inputs", inp)
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    for a, b in zip((q, k, v), at.stress_case("inf-k", 2, SHAPE, "fp32")):
        assert np.array_equal(a, b, equal_nan=True)
    o, lse = plain(q, k, v)
    for out, l in ((o, lse), (np.nan_to_num(o), np.nan_to_num(lse)), plain(q, k, v, False, True)):
        np.savez(outp, o=out, lse=l)
        c = run_cli(cli, "check-kernel", "attention", "--inputs", inp, "--output", outp,
                    codes=(0, 1))
        r = at.check_attention_output(out, q, k, v, lse=l)
        assert c["verdict"] == r.verdict
        for key in ("nonfinite_expected", "nonfinite_mismatch", "nonfinite",
                    "elements_beyond_bound"):
            assert int(c[key]) == getattr(r, key), key
    assert [c["verdict"], r.verdict] == ["wrong", "wrong"]


def test_nonfinite_inputs_under_a_mask_array_are_refused():
    q, k, v = at.stress_case("nan-k", 1, SHAPE, "fp32")
    out, _ = plain(q, k, v)
    keep = np.ones(SHAPE[1:2] * 2, bool)
    with pytest.raises(attnspec.DataError, match="non-finite inputs are checked under mask none"):
        at.check_attention_output(out, q, k, v, mask=keep)
    assert at.check_attention_output(out, q, k, v).verdict == "pass"
