"""spec-attention in attnspec.testing (``attnspec check-kernel spec-attention``): the SpecA
forward of docs/MATH.md Def 3.6 on given x and weights, O = softmax(s x W'_Q W'_K^T x^T) x W'_V with
W' = W + C, C = ``lam`` I (rectangular identity, ``correction="lambda"``) or sigma_1(W) U V^T
(``correction="svd"``, Thm 3.5). Re-exported by attnspec.testing; kept in its own module."""

import numpy as np

from . import _core
from ._errors import DataError, make
from .testing import (DTYPES, _array, _choice, _f64, _kernel_check, _mask_array, _run_cases,
                      _scale, _settings, _typed)

_CORRECTIONS = ("lambda", "svd")


def _lam(lam):
    x = float(lam)
    if not (np.isfinite(x) and x >= 0):
        raise make(DataError, "lam must be finite and >= 0, got %r" % (lam,), "lambda")
    return x


def _inputs(x, w_q, w_k, w_v):
    return [_f64(a, n, allow_nonfinite=True)
            for a, n in ((x, "x"), (w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v"))]


def check_spec_attention_output(out, x, w_q, w_k, w_v, *, correction="lambda", lam=10.0,
                                dtype=None, accumulate="fp32", causal=False, mask=None,
                                scale=None, factor=2.0, floor_units=2.0, worst=5):
    """Checks ``out`` (shape (..., N, d_v)) as SpecA on ``x`` ((N, D) or (B, N, D)) and the
    weights ``w_q``, ``w_k`` (D, d), ``w_v`` (D, d_v) with the correction ``correction`` (and
    ``lam`` for "lambda", default 10 as in the paper), computed by a kernel storing ``dtype`` and
    accumulating in ``accumulate``; returns a KernelCheck (operation "spec-attention"). ``scale``
    None is 1/sqrt(d). ``mask``: as in check_attention_output, of shape (N, N) or (B', N, N)
    (B' = 1 or B; bool or float; not with ``causal=True``). Cost O(B N (D (d + d_v) + N (d +
    d_v))) plus one SVD per weight. ``x`` and the weights may hold NaN/Inf (mask none or causal,
    ``correction="lambda"`` for a non-finite weight; nonfinite_stress_cases("spec-attention")):
    the elements that must then be NaN/Inf follow docs/cli/check-kernel.md ("Non-finite inputs"),
    counted in nonfinite_expected and nonfinite_mismatch."""
    dtype = _settings(dtype, out, "out", accumulate, factor)
    _choice(correction, "correction", _CORRECTIONS)
    o = _f64(out, "out", allow_nonfinite=True)
    kind, m = _mask_array(mask, causal)
    d = _core.kernel_check_spec_attention(*_inputs(x, w_q, w_k, w_v), o, correction, _lam(lam),
                                          kind, _scale(scale), dtype, accumulate,
                                          float(factor), float(floor_units), int(worst), m)
    return _kernel_check(d, dtype, accumulate, "spec-attention")


def assert_spec_attention_close(out, x, w_q, w_k, w_v, **kwargs):
    """Raises AssertionError (the verdict, the summary and the worst elements) unless
    check_spec_attention_output(out, x, w_q, w_k, w_v, **kwargs) passes; returns the check."""
    r = check_spec_attention_output(out, x, w_q, w_k, w_v, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def spec_attention_cases():
    """The stress cases of spec-attention: gaussian, large-lambda, rank-deficient-w,
    large-logits."""
    return tuple(_core.kernel_spec_attention_case_names())


def stress_spec_attention_case(name, seed=0, shape=(64, 32, 16), dtype="fp32"):
    """(x, w_q, w_k, w_v, lam) of spec-attention stress case ``name`` (spec_attention_cases(), or
    the NaN/Inf ones of nonfinite_stress_cases("spec-attention")),
    ``shape`` (N, D, d) or (B, N, D, d): the arrays ``attnspec check-kernel spec-attention
    --generate NAME --seed S --shape ...`` writes, and the lambda the case is checked with (100
    for large-lambda, else 10)."""
    _choice(dtype, "dtype", DTYPES)
    shape = tuple(int(s) for s in shape)
    *arrays, lam = _core.kernel_spec_attention_case(str(name), int(seed), list(shape), dtype)
    return _typed([_array(t) for t in arrays], dtype) + (lam,)


def baseline_spec_attention(x, w_q, w_k, w_v, *, correction="lambda", lam=10.0, dtype="fp32",
                            accumulate="fp32", causal=False, mask=None, scale=None):
    """attnspec's plain SpecA with every operation rounded to ``dtype`` / ``accumulate`` (the
    baseline of check_spec_attention_output), as a float64 array of the rounded values. ``mask``
    as in check_spec_attention_output."""
    _choice(dtype, "dtype", DTYPES)
    _choice(accumulate, "accumulate", ("fp32", "fp64"))
    _choice(correction, "correction", _CORRECTIONS)
    kind, m = _mask_array(mask, causal)
    return _array(_core.kernel_baseline_spec_attention(
        *_inputs(x, w_q, w_k, w_v), correction, _lam(lam), kind, _scale(scale), dtype,
        accumulate, m))


def check_spec_attention(fn, *, correction="lambda", dtype="fp32", accumulate="fp32",
                         cases="stress", shape=(64, 32, 16), seeds=(0,), causal=(False, True),
                         factor=2.0):
    """check_attention for SpecA: calls ``fn(x, w_q, w_k, w_v, correction=..., lam=...,
    causal=c)``, which returns the output, on every case of stress_spec_attention_case()
    (``cases``: "stress" for all of spec_attention_cases(), or a list of names), seed and causal
    flag (``lam``: the case's, 100 for large-lambda, else 10); the same table."""
    names = spec_attention_cases() if cases == "stress" else tuple(cases)

    def call(case, c):
        *arrays, lam = case
        return check_spec_attention_output(fn(*arrays, correction=correction, lam=lam, causal=c),
                                           *arrays, correction=correction, lam=lam, dtype=dtype,
                                           accumulate=accumulate, causal=c, factor=factor)
    return _run_cases(names, seeds, causal,
                      lambda n, s: stress_spec_attention_case(n, s, shape, dtype), call)
