"""attnspec.testing with boolean and additive masks (mask=): a plain kernel applying the mask
passes, planted mask faults (mask ignored, transposed, sign flipped, scaled) do not, and the
verdicts and figures equal the CLI's `check-kernel attention --mask boolean|additive` on the same
files; fully masked rows are present (the generated masks hide every key of some rows)."""
import numpy as np
import pytest

import attnspec
import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 48, 16)


def masked_attention(q, k, v, mask, fault=None):
    """A plain float32 kernel with P stored in q's dtype: bool mask (True = attend) or additive
    mask added to the scaled logits; a fully masked row gives NaN (PyTorch's math path)."""
    out_type = q.dtype
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    s = np.float32(1 / np.sqrt(q.shape[-1]))
    logits = np.einsum("...id,...jd->...ij", qf, kf)
    m = np.swapaxes(mask, -1, -2) if fault == "transposed" else mask
    if m.dtype == np.bool_:
        logits = logits * s
        if fault != "ignored":
            logits = np.where(m, logits, np.float32(-np.inf))
    elif fault == "scaled":
        logits = (logits + m.astype(np.float32)) * s
    else:
        mf = m.astype(np.float32)
        if fault == "sign":
            mf = np.where(np.isfinite(mf), -mf, mf)
        logits = logits * s + mf
    with np.errstate(invalid="ignore"):
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p = (p / p.sum(axis=-1, keepdims=True)).astype(out_type)
    return np.einsum("...ij,...jd->...id", p.astype(np.float32), vf).astype(out_type)


def generated(cli, tmp_path, kind, dtype="fp16"):
    inp = str(tmp_path / ("in-%s.npz" % kind))
    run_cli(cli, "check-kernel", "attention", "--generate", "gaussian", "--seed", "3", "--shape",
            ",".join(map(str, SHAPE)), "--inputs", inp, "--dtype", dtype, "--mask", kind)
    with np.load(inp) as f:
        q, k, v, m = (f[n].astype(np.float16 if dtype == "fp16" else np.float32)
                      for n in ("q", "k", "v", "mask"))
    mask = m != 0 if kind == "boolean" else m
    return inp, q, k, v, mask


@pytest.mark.parametrize("kind", ["boolean", "additive"])
def test_masked_verdicts_and_numbers_equal_the_cli(cli, tmp_path, kind):
    inp, q, k, v, mask = generated(cli, tmp_path, kind)
    full = (~mask if kind == "boolean" else mask == -np.inf).all(axis=-1)
    assert full.sum() >= 6  # rows 7, 23, 39 of each head
    outp = str(tmp_path / "out.npz")
    faults = [None, "transposed"] + (["ignored"] if kind == "boolean" else ["sign", "scaled"])
    for fault in faults:
        out = masked_attention(q, k, v, mask, fault)
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "attention", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", kind, codes=(0, 1))
        r = at.check_attention_output(out, q, k, v, mask=mask, dtype="fp16")
        assert r.verdict == ("pass" if fault is None else "wrong"), (fault, r.summary)
        assert c["verdict"] == r.verdict
        assert int(c["masked_rows"]) == r.masked_rows == full.sum()
        for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
            assert same(num(c[key]), getattr(r, key)), key
        assert int(c["rows_beyond_rule"]) == r.rows_beyond_rule


def test_masks_pass_at_fp32_and_the_baseline_takes_them():
    q, k, v = at.stress_case("heavy-tail", 2, SHAPE, "fp32")
    rng = np.random.default_rng(0)
    keep = rng.random((SHAPE[0], SHAPE[1], SHAPE[1])) > 0.3
    keep[:, 5, :] = False  # fully masked rows
    additive = np.where(keep, rng.uniform(-3, 1, keep.shape), -np.inf)
    for mask in (keep, additive, additive[0]):  # (H, N, N) and broadcast (N, N)
        r = at.assert_attention_close(masked_attention(q, k, v, mask), q, k, v, mask=mask)
        assert r.masked_rows == 2  # row 5 of each head
        o, lse = at.baseline_attention(q, k, v, mask=mask)
        assert np.all(o[:, 5] == 0) and np.all(lse[:, 5] == -np.inf)
        r = at.check_attention_output(o, q, k, v, mask=mask, lse=lse, dtype="fp32")
        assert r.verdict == "pass", r.summary


def test_bad_masks_raise_their_named_exceptions():
    q, k, v = at.stress_case("gaussian", 0, SHAPE, "fp32")
    out = masked_attention(q, k, v, np.ones((SHAPE[1], SHAPE[1]), bool))
    with pytest.raises(attnspec.DataError, match="mask has shape"):
        at.check_attention_output(out, q, k, v, mask=np.ones((SHAPE[1], 3), bool))
    with pytest.raises(attnspec.DataError, match="NaN"):
        at.check_attention_output(out, q, k, v, mask=np.full((SHAPE[1], SHAPE[1]), np.nan))
    with pytest.raises(attnspec.UsageError):
        at.check_attention_output(out, q, k, v, mask=np.ones((48, 48), bool), causal=True)


def test_torch_bool_and_float_masks():
    torch = pytest.importorskip("torch", reason="torch is not installed in this environment")
    q, k, v = (torch.from_numpy(a) for a in at.stress_case("gaussian", 1, SHAPE, "fp32"))
    keep = torch.rand(SHAPE[0], SHAPE[1], SHAPE[1], generator=torch.Generator().manual_seed(0))
    keep = keep > 0.25
    keep[:, 0, 0] = True
    for mask in (keep, torch.where(keep, 0.5, float("-inf"))):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert at.check_attention_output(out, q, k, v, mask=mask).verdict == "pass"
