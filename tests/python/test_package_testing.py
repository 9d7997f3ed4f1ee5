"""attnspec.testing: correct kernels pass, planted wrong kernels do not, and the verdicts and
numbers equal the CLI's `check-kernel attention` on the same files (equal bits: the same code)."""
import os

import numpy as np
import pytest

import attnspec
import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 64, 32)


def plain_attention(q, k, v, causal=False, scale=None, acc=np.float32, drop_key=None,
                    no_max=False, mask_shift=0):
    """A plain kernel: inputs as given, logits, softmax and P V in `acc`, output in q's dtype.
    The keyword arguments plant faults."""
    out_type = q.dtype
    qf, kf, vf = (x.astype(acc) for x in (q, k, v))
    d = q.shape[-1]
    s = acc(1 / np.sqrt(d)) if scale is None else acc(scale)
    logits = np.einsum("...id,...jd->...ij", qf, kf) * s
    n_q, n_k = logits.shape[-2:]
    if causal:
        i = np.arange(n_q)[:, None]
        j = np.arange(n_k)[None, :]
        logits = np.where(j <= i + (n_k - n_q) + mask_shift, logits, acc(-np.inf))
    if drop_key is not None:
        logits[..., drop_key] = acc(-np.inf)
    m = 0 if no_max else logits.max(axis=-1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.exp(logits - m)
        p = p / p.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", p.astype(acc), vf).astype(out_type)


@pytest.mark.parametrize("dtype,np_type", [("fp32", np.float32), ("fp16", np.float16)])
def test_a_plain_kernel_passes_every_stress_case(dtype, np_type):
    t = at.check_attention(lambda q, k, v, causal: plain_attention(q, k, v, causal), dtype=dtype,
                           shape=SHAPE, seeds=(0, 1))
    verdicts = list(t["verdict"])
    assert len(verdicts) == len(at.stress_cases()) * 2 * 2
    assert verdicts == ["pass"] * len(verdicts), t
    assert max(t["worst_bound_ratio"]) < 1


def test_the_baseline_passes_and_is_within_its_own_bound():
    q, k, v = at.stress_case("gaussian", 3, SHAPE, "bf16")
    o, lse = at.baseline_attention(q, k, v, dtype="bf16", causal=True)
    r = at.check_attention_output(o, q, k, v, lse=lse, dtype="bf16", causal=True)
    assert r.verdict == "pass" and r.has_lse and r.lse_beyond_bound == 0
    assert r.baseline_bound_ratio <= 1 and r.worst_bound_ratio <= 1


@pytest.mark.parametrize("fault", ["scale 1/d", "causal off by one", "dropped key",
                                   "no max subtraction"])
def test_planted_wrong_kernels_are_wrong(fault):
    case = "large-logits" if fault == "no max subtraction" else "gaussian"
    q, k, v = at.stress_case(case, 5, SHAPE, "fp32")
    causal = fault == "causal off by one"
    kw = {"scale 1/d": {"scale": 1 / SHAPE[-1]}, "causal off by one": {"mask_shift": 1},
          "dropped key": {"drop_key": 7}, "no max subtraction": {"no_max": True}}[fault]
    out = plain_attention(q, k, v, causal=causal, **kw)
    with pytest.raises(AssertionError) as e:
        at.assert_attention_close(out, q, k, v, causal=causal)
    assert "attention kernel check: wrong" in str(e.value)
    r = at.check_attention_output(out, q, k, v, causal=causal)
    assert r.verdict == "wrong" and r.worst_bound_ratio > 1
    assert len(r.worst_by_bound) > 0 and r.worst_by_bound[0].error > r.worst_by_bound[0].bound


def test_a_small_relative_error_that_allclose_accepts_is_caught():
    q, k, v = at.stress_case("gaussian", 2, SHAPE, "fp32")
    out = plain_attention(q, k, v)
    bad = out.copy()
    for row in ((0, 3), (1, 10), (1, 40)):  # the largest element of three rows, off by 1e-4
        bad[row + (int(np.argmax(np.abs(out[row]))),)] *= np.float32(1 + 1e-4)
    assert np.allclose(bad, out, atol=1e-2)  # what a hand-picked tolerance would accept
    assert at.check_attention_output(out, q, k, v).verdict == "pass"
    r = at.check_attention_output(bad, q, k, v)
    assert r.verdict != "pass" and r.rows_beyond_rule == 3
    flagged = {e.index[:-1] for e in r.worst_by_rule if e.error > e.allowed}
    assert flagged == {(0, 3), (1, 10), (1, 40)}


def test_the_verdict_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    g = run_cli(cli, "check-kernel", "attention", "--generate", "spike-v", "--seed", "4",
                "--shape", ",".join(map(str, SHAPE)), "--inputs", inp, "--dtype", "fp16")
    assert g["case"] == "spike-v"
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    # the generator here writes the same values
    for a, b in zip((q, k, v), at.stress_case("spike-v", 4, SHAPE, "fp16")):
        assert a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64))
    for out in (plain_attention(q, k, v, causal=True),
                plain_attention(q, k, v, causal=True, mask_shift=1)):
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "attention", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--mask", "causal", codes=(0, 1))
        r = at.check_attention_output(out, q, k, v, dtype="fp16", causal=True)
        assert c["verdict"] == r.verdict
        for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
            assert same(num(c[key]), getattr(r, key)), key
        assert int(c["rows_beyond_rule"]) == r.rows_beyond_rule


def test_dtype_is_taken_from_the_output_or_refused():
    q, k, v = at.stress_case("gaussian", 0, SHAPE, "fp16")
    out = plain_attention(q, k, v)
    assert at.check_attention_output(out, q, k, v).dtype == "fp16"
    with pytest.raises(attnspec.UsageError):
        at.check_attention_output(out.astype(np.float64).tolist(), q, k, v)
    with pytest.raises(attnspec.UsageError):
        at.check_attention_output(out, q, k, v, dtype="fp8")


def test_bad_inputs_raise_their_named_exceptions():
    q, k, v = at.stress_case("gaussian", 0, SHAPE, "fp32")
    out = plain_attention(q, k, v)
    nan_q = q.copy()  # the checks take NaN/Inf inputs (test_package_testing_*nonfinite.py),
    nan_q[1, 2, 3] = np.nan  # the baselines refuse them
    with pytest.raises(attnspec.DataError, match=r"q: NaN or Inf at index \(1, 2, 3\)"):
        at.baseline_neumann(nan_q, k, v)
    with pytest.raises(attnspec.ArrayTypeError):
        at.check_attention_output(out, q.astype(np.int32), k, v)
    with pytest.raises(attnspec.DataError):
        at.check_attention_output(out[..., :5, :], q, k, v)  # wrong output shape
    with pytest.raises(attnspec.DataError):
        at.check_attention_output(out, q, k, v, scale=-1.0)
    with pytest.raises(attnspec.UsageError):
        at.stress_case("no-such-case", 0, SHAPE)
    # NaN in the output is not an input error: it is a wrong kernel
    nan_out = out.copy()
    nan_out[0, 0, 0] = np.nan
    assert at.check_attention_output(nan_out, q, k, v).verdict == "wrong"


def test_torch_tensors_are_taken_as_their_dtype():
    torch = pytest.importorskip("torch", reason="torch is not installed in this environment")
    q, k, v = (torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
               for a in at.stress_case("gaussian", 0, SHAPE, "bf16"))
    out = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    r = at.check_attention_output(out.to(torch.bfloat16), q, k, v)
    assert r.dtype == "bf16" and r.verdict == "pass"


def test_the_package_exports_testing():
    assert "testing" in attnspec.__all__ and attnspec.testing is at
    assert os.path.basename(at.__file__) == "testing.py"
