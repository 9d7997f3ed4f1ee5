"""attnspec.testing: validate an attention kernel (yours) against a float64 reference.

The same checks as ``attnspec check-kernel attention``, ``attention-vjp`` and ``attention-jvp``
(docs/cli/check-kernel.md; the bounds are
derived in proofs/kernel_tolerance.md). For a declared storage dtype (``"fp16"``, ``"bf16"``,
``"tf32"``, ``"fp32"``, ``"fp64"``: inputs, P and output) and accumulation (``"fp32"`` default,
or ``"fp64"``), each output element gets two tolerances:

* the **rounding bound**: no kernel that rounds correctly at those precisions, in any summation
  order or blocking (online softmax included), can be farther from the exact result;
* the **baseline rule**: ``factor`` (default 2) x the error of attnspec's own plain kernel at the
  same precisions, per query row and over the tensor (FlashAttention's rule), plus a floor.

The verdict is ``"pass"`` (within the rule), ``"fail"`` (beyond the rule, within the bound) or
``"wrong"`` (beyond the bound, or NaN/Inf where the reference is finite: no correct kernel at
these precisions produces it), with the worst elements.

Arrays: ``q``, ``k``, ``v`` of shape (N, d), (H, N, d) or (B, H, N, d) (K and V may have fewer
heads than Q, d_v may differ from d), ``out`` of shape (..., N, d_v) and ``lse`` (..., N). numpy
arrays or torch tensors of any float dtype; they are upcast to float64 (exact) and copied once
(tensors on a GPU are copied to the host: the reference is computed on the CPU). ``mask=`` (the
forward and the derivatives): a bool array (True = the key takes part, as PyTorch SDPA's attn_mask) or a float
array added to the scaled logits (-inf hides a key), of shape (N_q, N_k), (H, N_q, N_k) or
(B, H, N_q, N_k) -- ``check-kernel --mask boolean|additive``.
``dtype=None`` takes the storage dtype from ``out`` (float16 -> fp16, bfloat16 -> bf16, float32 ->
fp32, float64 -> fp64; tf32 must be named). Units: errors are absolute, in the output's units.

Example::

    import numpy as np, attnspec.testing as at
    q, k, v = at.stress_case("spike-v", seed=1, shape=(2, 128, 64), dtype="fp16")
    out = my_fp16_attention(q, k, v)                 # your kernel, returning float16
    at.assert_attention_close(out, q, k, v)          # AssertionError with the worst elements

The derivatives: ``assert_vjp_close(dq, dk, dv, q, k, v, do)`` (the backward pass for the
cotangent ``do``) and ``assert_jvp_close(do_t, q, k, v, tq, tk, tv)`` (the forward-mode
derivative for the tangents), with ``stress_vjp_case`` / ``stress_jvp_case`` for their inputs and
``check_vjp_output`` / ``check_jvp_output`` returning the check instead of raising.

Linear-InfSA (``attnspec check-kernel linear-infsa``): ``assert_linear_infsa_close(out, q, k,
v, gamma=0.95, eps=1e-6)``, ``check_linear_infsa_output``, ``check_linear_infsa(fn, ...)`` over
``stress_linear_infsa_case`` (the attention cases and relu-zero, dominant-key). One-hop InfSA
(``check-kernel pure-infsa``, gamma ReLU(q k^T / d) / (||.||_F + eps) v):
``assert_pure_infsa_close``, ``check_pure_infsa_output``, ``check_pure_infsa(fn, ...)`` on the
same cases. The Neumann kernel (``check-kernel neumann``, ((I - G)^-1 - I) v with
G = gamma Â, N_q = N_k): ``assert_neumann_close``, ``check_neumann_output``,
``check_neumann(fn, ...)`` over ``stress_neumann_case`` (those cases and rank-one),
``baseline_neumann``.

SpecA (``check-kernel spec-attention``, softmax(s x W'_Q W'_K^T x^T) x W'_V with W' = W + C):
``assert_spec_attention_close(out, x, w_q, w_k, w_v, correction="lambda", lam=10)``,
``check_spec_attention_output``, ``check_spec_attention(fn, ...)`` over
``stress_spec_attention_case`` (module attnspec._testing_spec).
"""

from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._arrays import _to_numpy
from ._errors import ArrayTypeError, DataError, UsageError, make
from ._table import table

#: The declared precisions, in the CLI's spelling.
DTYPES = ("fp16", "bf16", "tf32", "fp32", "fp64")
#: The verdicts, best first.
VERDICTS = ("pass", "fail", "wrong")

_NUMPY_DTYPE = {"float16": "fp16", "float32": "fp32", "float64": "fp64"}
_TORCH_DTYPE = {"torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32",
                "torch.float64": "fp64"}


def _dtype_of(x, name):
    """The declared storage of ``x`` from its dtype (tf32 cannot be seen: name it)."""
    d = str(getattr(x, "dtype", ""))
    found = _TORCH_DTYPE.get(d) or _NUMPY_DTYPE.get(d)
    if found is None:
        raise make(UsageError, "%s: dtype %s names no storage precision; pass dtype= one of %s"
                   % (name, d or type(x).__name__, DTYPES), "dtype")
    return found


def _f64(x, name, allow_nonfinite=False):
    """``x`` as a C-contiguous float64 numpy array (an exact upcast of any float dtype); a
    tensor on a GPU is copied to the host first."""
    a = _to_numpy(x, name, to_host=True)
    if a.dtype.kind != "f" or a.dtype.itemsize > 8:
        raise make(ArrayTypeError, "%s: dtype %s is not float16, bfloat16, float32 or float64"
                   % (name, a.dtype), name)
    if a.ndim < 1 or a.size == 0:
        raise make(DataError, "%s: shape %s is empty" % (name, a.shape), name)
    a = np.ascontiguousarray(a, dtype=np.float64)
    if not allow_nonfinite and not np.isfinite(a).all():
        i = tuple(int(j) for j in np.argwhere(~np.isfinite(a))[0])
        raise make(DataError, "%s: NaN or Inf at index %s" % (name, i), name)
    return a


def _choice(value, name, allowed):
    if value not in allowed:
        raise make(UsageError, "%s must be one of %s, got %r" % (name, allowed, value), name)
    return value


@dataclass(frozen=True)
class Element:
    """One output element: its index, the kernel's value, the reference, |got - reference|,
    the rounding bound there, the row's allowed error and the baseline's error there."""
    index: tuple
    got: float
    reference: float
    error: float
    bound: float
    allowed: float
    baseline: float


def _elements(items):
    return tuple(Element(tuple(e["index"]), e["got"], e["reference"], e["error"], e["bound"],
                         e["allowed"], e["baseline"]) for e in items)


@dataclass(frozen=True)
class KernelCheck:
    """The outcome of one check: ``verdict`` (VERDICTS) and ``summary`` (one line, as the CLI
    prints it); ``worst_rule_ratio`` (max over rows of error / allowed: <= 1 passes the rule),
    ``worst_bound_ratio`` (max over elements of error / rounding bound: > 1 is wrong),
    ``baseline_bound_ratio`` (the same for attnspec's own kernel: a self-check, <= 1);
    ``rows``, ``masked_rows``, ``rows_beyond_rule``, ``elements_beyond_bound``, ``nonfinite``;
    the tensor-wide figures; ``worst_by_bound`` and ``worst_by_rule`` (Element tuples); and the
    log-sum-exp figures when ``lse`` was given (``has_lse``)."""
    verdict: str
    summary: str
    dtype: str
    accumulate: str
    scale: float
    inputs_exact: bool
    rows: int
    masked_rows: int
    rows_beyond_rule: int
    elements_beyond_bound: int
    nonfinite: int
    tensor_error: float
    tensor_baseline: float
    tensor_allowed: float
    worst_rule_ratio: float
    worst_bound_ratio: float
    baseline_bound_ratio: float
    max_reference_error: float
    worst_by_bound: tuple = field(repr=False)
    worst_by_rule: tuple = field(repr=False)
    has_lse: bool = False
    lse_beyond_bound: int = 0
    lse_bound_ratio: float = 0.0
    worst_lse: tuple = field(default=(), repr=False)
    #: inputs with NaN/Inf (attention, its derivatives, the InfSA family): the elements of
    #: the output (and lse) that must be NaN/Inf, and the elements that break the stated
    #: propagation (docs/cli/check-kernel.md, "Non-finite inputs")
    nonfinite_expected: int = 0
    nonfinite_mismatch: int = 0
    #: what was checked: "attention", "attention-jvp", or a tensor of "attention-vjp" ("dq", ...)
    operation: str = "attention"

    @property
    def passed(self):
        return self.verdict == "pass"

    def message(self):
        """The verdict, the summary and the worst elements, one per line."""
        lines = ["%s kernel check: %s (dtype %s, accumulate %s)"
                 % (self.operation, self.verdict, self.dtype, self.accumulate), self.summary]
        worst = self.worst_by_bound if self.verdict == "wrong" else self.worst_by_rule
        for e in worst:
            lines.append("  at %s: got %.17g, reference %.17g, error %.3g, allowed %.3g, "
                         "rounding bound %.3g" % (e.index, e.got, e.reference, e.error,
                                                  e.allowed, e.bound))
        for e in self.worst_lse if self.lse_beyond_bound else ():
            lines.append("  lse at %s: got %.17g, reference %.17g, error %.3g, bound %.3g"
                         % (e.index, e.got, e.reference, e.error, e.bound))
        return "\n".join(lines)


def _mask(causal):
    if causal not in (True, False):
        raise make(UsageError, "causal must be True or False, got %r" % (causal,), "causal")
    return "causal" if causal else "none"


def _mask_array(mask, causal):
    """(mask name, float64 array or None) of a ``mask=`` argument: None (then ``causal``), a
    bool array (boolean: True = the key takes part, PyTorch SDPA's convention) or any float array
    (additive: added to the scaled logits, -inf hides a key; NaN and +inf are refused)."""
    if mask is None:
        return _mask(causal), None
    if causal:
        raise make(UsageError, "give mask= or causal=True, not both", "mask")
    a = _to_numpy(mask, "mask", to_host=True)
    if a.dtype == np.bool_:
        return "boolean", np.ascontiguousarray(a, dtype=np.float64)
    return "additive", _f64(a, "mask", allow_nonfinite=True)


def _scale(scale):
    if scale is None:
        return 0.0
    s = float(scale)
    if not np.isfinite(s) or s <= 0:
        raise make(DataError, "scale must be finite and > 0, got %r" % (scale,), "scale")
    return s


def _settings(dtype, out, name, accumulate, factor):
    """The declared dtype (from ``out`` when None), checked with accumulate and factor."""
    dtype = _choice(dtype or _dtype_of(out, name), "dtype", DTYPES)
    _choice(accumulate, "accumulate", ("fp32", "fp64"))
    if not (float(factor) >= 1 and np.isfinite(float(factor))):
        raise make(DataError, "factor must be finite and >= 1, got %r" % (factor,), "factor")
    return dtype


def _kernel_check(d, dtype, accumulate, operation="attention"):
    """A KernelCheck from the native result dict."""
    return KernelCheck(
        verdict=d["verdict"], summary=d["summary"], dtype=dtype, accumulate=accumulate,
        scale=d["scale"], inputs_exact=d["inputs_exact"], rows=d["rows"],
        masked_rows=d["masked_rows"], rows_beyond_rule=d["rows_beyond_rule"],
        elements_beyond_bound=d["elements_beyond_bound"], nonfinite=d["nonfinite"],
        tensor_error=d["tensor_error"], tensor_baseline=d["tensor_baseline"],
        tensor_allowed=d["tensor_allowed"], worst_rule_ratio=d["worst_rule_ratio"],
        worst_bound_ratio=d["worst_bound_ratio"], baseline_bound_ratio=d["baseline_bound_ratio"],
        max_reference_error=d["max_reference_error"],
        worst_by_bound=_elements(d["worst_by_bound"]), worst_by_rule=_elements(d["worst_by_rule"]),
        has_lse=d["has_lse"], lse_beyond_bound=d.get("lse_beyond_bound", 0),
        lse_bound_ratio=d.get("lse_bound_ratio", 0.0), worst_lse=_elements(d.get("worst_lse", ())),
        nonfinite_expected=d.get("nonfinite_expected", 0),
        nonfinite_mismatch=d.get("nonfinite_mismatch", 0), operation=operation)


def check_attention_output(out, q, k, v, *, lse=None, dtype=None, accumulate="fp32",
                           causal=False, mask=None, scale=None, factor=2.0, floor_units=2.0,
                           worst=5):
    """Checks ``out`` = softmax(scale q k^T + mask) v (and ``lse``, the log-sum-exp per row) as a
    kernel storing ``dtype`` and accumulating in ``accumulate`` computed it; returns a
    KernelCheck. ``scale`` None is 1/sqrt(d); ``causal`` is FlashAttention's bottom-right
    alignment. ``mask``: an array of shape (N_q, N_k), (H, N_q, N_k) or (B, H, N_q, N_k) (B, H
    may be 1), numpy or CPU torch: bool (True = the key takes part, as PyTorch SDPA's attn_mask;
    ``check-kernel --mask boolean``) or float (added to the scaled logits, -inf hides a key;
    ``--mask additive``); not with ``causal=True``. A row with no visible key expects zeros or
    NaN. Cost O(B H N_q N_k (d + d_v)), memory O(N d) beyond the inputs. Without ``mask``, q, k,
    v may hold NaN/Inf (nonfinite_stress_cases()): the elements that must then be NaN/Inf follow
    the propagation stated in docs/cli/check-kernel.md, the others are checked as usual."""
    dtype = _settings(dtype, out, "out", accumulate, factor)
    arrays = [_f64(x, n, allow_nonfinite=True) for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    o = _f64(out, "out", allow_nonfinite=True)
    l = None if lse is None else _f64(lse, "lse", allow_nonfinite=True)
    kind, m = _mask_array(mask, causal)
    d = _core.kernel_check_attention(*arrays, o, l, kind, _scale(scale), dtype,
                                     accumulate, float(factor), float(floor_units), int(worst), m)
    return _kernel_check(d, dtype, accumulate)


def _across(name, combine):
    """A property of VjpCheck: ``combine`` (max or sum) of ``name`` over dq, dk, dv."""
    return property(lambda self: combine(getattr(t, name) for t in (self.dq, self.dk, self.dv)),
                    doc="%s of %s over dq, dk, dv" % (combine.__name__, name))


@dataclass(frozen=True)
class VjpCheck:
    """The outcome of an attention-vjp check: ``verdict`` (the worst of the three tensors'),
    ``summary`` (one line) and one KernelCheck per output: ``dq``, ``dk``, ``dv`` (rows of dK and
    dV are key rows)."""
    verdict: str
    summary: str
    dq: KernelCheck = field(repr=False)
    dk: KernelCheck = field(repr=False)
    dv: KernelCheck = field(repr=False)

    @property
    def passed(self):
        return self.verdict == "pass"

    worst_bound_ratio = _across("worst_bound_ratio", max)
    worst_rule_ratio = _across("worst_rule_ratio", max)
    rows_beyond_rule = _across("rows_beyond_rule", sum)
    elements_beyond_bound = _across("elements_beyond_bound", sum)

    def message(self):
        """The verdict and summary, then the message of each tensor that did not pass."""
        lines = ["attention-vjp kernel check: %s (dtype %s, accumulate %s)"
                 % (self.verdict, self.dq.dtype, self.dq.accumulate), self.summary]
        lines += [t.message() for t in (self.dq, self.dk, self.dv) if not t.passed]
        return "\n".join(lines)


def check_vjp_output(dq, dk, dv, q, k, v, do, *, dtype=None, accumulate="fp32", causal=False,
                     mask=None, scale=None, factor=2.0, floor_units=2.0, worst=5):
    """Checks the backward pass ``dq``, ``dk``, ``dv`` (shapes of q, k, v) of attention on q, k, v
    for the cotangent ``do`` (shape of the output) as a kernel storing ``dtype`` computed it;
    returns a VjpCheck. ``dtype`` None is taken from ``dq``. Under grouped heads dK and dV sum over
    the query heads sharing a K/V head. ``mask`` as in check_attention_output (bool or float;
    not with ``causal=True``): a row with no visible key expects zeros or NaN in dQ and adds
    nothing to dK, dV. q, k, v, do may hold NaN/Inf (nonfinite_stress_cases("attention-vjp"),
    without a boolean/additive mask): which elements must then be NaN/Inf follows
    docs/cli/check-kernel.md ("Non-finite inputs"), counted in each tensor's nonfinite_expected
    and nonfinite_mismatch. Cost O(B H N_q N_k (d + d_v)), memory O(N d)."""
    dtype = _settings(dtype, dq, "dq", accumulate, factor)
    arrays = [_f64(x, n, allow_nonfinite=True) for x, n in ((q, "q"), (k, "k"), (v, "v"),
                                                           (do, "do"))]
    outs = [_f64(x, n, allow_nonfinite=True) for x, n in ((dq, "dq"), (dk, "dk"), (dv, "dv"))]
    kind, m = _mask_array(mask, causal)
    d = _core.kernel_check_vjp(*arrays, *outs, kind, _scale(scale), dtype, accumulate,
                               float(factor), float(floor_units), int(worst), m)
    return VjpCheck(verdict=d["verdict"], summary=d["summary"],
                    **{n: _kernel_check(d[n], dtype, accumulate, n) for n in ("dq", "dk", "dv")})


def check_jvp_output(do_t, q, k, v, tq, tk, tv, *, dtype=None, accumulate="fp32", causal=False,
                     mask=None, scale=None, factor=2.0, floor_units=2.0, worst=5):
    """Checks the forward-mode derivative ``do_t`` (shape of the output) of attention on q, k, v
    along the tangents ``tq``, ``tk``, ``tv`` (shapes of q, k, v); returns a KernelCheck.
    ``dtype`` None is taken from ``do_t``. ``mask`` as in check_vjp_output (the mask itself has
    no tangent). The inputs may hold NaN/Inf, as for check_vjp_output
    (nonfinite_stress_cases("attention-jvp"))."""
    dtype = _settings(dtype, do_t, "do_t", accumulate, factor)
    arrays = [_f64(x, n, allow_nonfinite=True) for x, n in ((q, "q"), (k, "k"), (v, "v"),
                                                           (tq, "tq"), (tk, "tk"), (tv, "tv"))]
    o = _f64(do_t, "do_t", allow_nonfinite=True)
    kind, m = _mask_array(mask, causal)
    d = _core.kernel_check_jvp(*arrays, o, kind, _scale(scale), dtype, accumulate,
                               float(factor), float(floor_units), int(worst), m)
    return _kernel_check(d, dtype, accumulate, "attention-jvp")


def assert_vjp_close(dq, dk, dv, q, k, v, do, **kwargs):
    """Raises AssertionError (the verdict, the summary and the worst elements of each tensor that
    did not pass) unless check_vjp_output(...) passes; returns the VjpCheck."""
    r = check_vjp_output(dq, dk, dv, q, k, v, do, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def assert_jvp_close(do_t, q, k, v, tq, tk, tv, **kwargs):
    """Raises AssertionError unless check_jvp_output(...) passes; returns the KernelCheck."""
    r = check_jvp_output(do_t, q, k, v, tq, tk, tv, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def assert_attention_close(out, q, k, v, **kwargs):
    """Raises AssertionError (its message: the verdict, the summary and the worst elements)
    unless check_attention_output(out, q, k, v, **kwargs) passes; returns the KernelCheck."""
    r = check_attention_output(out, q, k, v, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def _array(shape_values):
    shape, values = shape_values
    return np.asarray(values, dtype=np.float64).reshape(tuple(shape))


def stress_cases():
    """The names of the stress suite's generators of finite inputs (kernels/stress.hpp), in
    order: every one but ``denormal``, which stress_case() also makes (proofs/kernel_tolerance.md,
    "Denormal-range inputs"), and the non-finite ones (nonfinite_stress_cases())."""
    return tuple(_core.kernel_stress_names())


def nonfinite_stress_cases(operation="attention"):
    """The names of the stress generators with one NaN/Inf per head of ``operation``: for
    ``"attention"`` in q, k or v (``nan-q``, ``inf-q``, ``nan-k``, ``inf-k``, ``nan-v``,
    ``inf-v``; stress_case()); ``"attention-vjp"`` those and ``nan-do``, ``inf-do`` in the
    cotangent (stress_vjp_case()); ``"attention-jvp"`` those and ``nan-tq``, ``inf-tq``,
    ``nan-tk``, ``inf-tk``, ``nan-tv``, ``inf-tv`` in a tangent (stress_jvp_case()).
    ``"linear-infsa"``, ``"pure-infsa"`` and ``"neumann"``: the attention ones
    (stress_linear_infsa_case(), stress_neumann_case(), check_linear_infsa_output,
    check_pure_infsa_output, check_neumann_output). ``"spec-attention"``: ``nan-x``, ``inf-x``
    (one element of x per batch), ``nan-w``, ``inf-w`` (one element of one weight)
    (stress_spec_attention_case(), check_spec_attention_output with ``correction="lambda"``)."""
    _choice(operation, "operation", ("attention", "attention-vjp", "attention-jvp",
                                     "linear-infsa", "pure-infsa", "neumann", "spec-attention"))
    return tuple(_core.kernel_stress_names(nonfinite=True, operation=operation))


def _typed(arrays, dtype):
    """numpy float16 for fp16, float64 for fp64, float32 otherwise (bf16, tf32 values exact)."""
    np_type = {"fp16": np.float16, "fp64": np.float64}.get(dtype, np.float32)
    return tuple(a.astype(np_type) for a in arrays)


def stress_case(name, seed=0, shape=(2, 128, 64), dtype="fp32"):
    """(q, k, v) of stress case ``name`` (stress_cases(), ``denormal`` or
    nonfinite_stress_cases()), reproducible from (name, seed, shape), values representable in
    ``dtype``: numpy float16 for fp16, float32 for fp32, bf16 and tf32 (numpy has no such types:
    the values are exact in them), float64 for fp64. The same arrays ``attnspec check-kernel
    attention --generate NAME --seed S --shape ...`` writes. A case of a derivative's directions
    (``nan-do`` .. ``inf-tv``) raises UsageError: stress_vjp_case(), stress_jvp_case()."""
    if str(name)[4:6] in ("do", "tq", "tk", "tv") and str(name)[:4] in ("nan-", "inf-"):
        raise make(UsageError, "stress case %r plants into do or a tangent: use stress_vjp_case "
                   "or stress_jvp_case" % (name,), "name")
    return _qkv(name, seed, shape, dtype)


def _qkv(name, seed, shape, dtype):
    _choice(dtype, "dtype", DTYPES)
    shape = tuple(int(s) for s in shape)
    q, k, v = (_array(t) for t in _core.kernel_stress_case(str(name), int(seed), list(shape),
                                                            dtype))
    return _typed((q, k, v), dtype)


def _directions(name, seed, shapes, dtype):
    return _typed([_array(t) for t in _core.kernel_stress_directions(
        str(name), int(seed), [list(s) for s in shapes], dtype)], dtype)


def stress_vjp_case(name, seed=0, shape=(2, 128, 64), dtype="fp32"):
    """(q, k, v, do): stress_case(...) and the cotangent ``do`` (shape of the output), the arrays
    ``attnspec check-kernel attention-vjp --generate NAME --seed S --shape ...`` writes; NAME may
    be one of nonfinite_stress_cases("attention-vjp") (``nan-do``, ``inf-do``: one NaN/Inf per
    head of ``do``)."""
    q, k, v = _qkv(name, seed, shape, dtype)
    (do,) = _directions(name, seed, [q.shape[:-1] + v.shape[-1:]], dtype)
    return q, k, v, do


def stress_jvp_case(name, seed=0, shape=(2, 128, 64), dtype="fp32"):
    """(q, k, v, tq, tk, tv): stress_case(...) and the tangents (shapes of q, k, v), the arrays
    ``attnspec check-kernel attention-jvp --generate NAME --seed S --shape ...`` writes; NAME may
    be one of nonfinite_stress_cases("attention-jvp") (``nan-tq`` .. ``inf-tv``: one NaN/Inf per
    head of that tangent)."""
    q, k, v = _qkv(name, seed, shape, dtype)
    return (q, k, v) + _directions(name, seed, [q.shape, k.shape, v.shape], dtype)


def _baseline_derivative(op, arrays, directions, dtype, accumulate, causal, scale, mask):
    _choice(dtype, "dtype", DTYPES)
    _choice(accumulate, "accumulate", ("fp32", "fp64"))
    ins = [_f64(x, n) for x, n in zip(arrays, ("q", "k", "v"))]
    dirs = [_f64(x, n) for x, n in directions]
    kind, m = _mask_array(mask, causal)
    out = _core.kernel_baseline_derivative(op, *ins, dirs, kind, _scale(scale), dtype,
                                           accumulate, m)
    return tuple(_array(t) for t in out)


def baseline_vjp(q, k, v, do, *, dtype="fp32", accumulate="fp32", causal=False, mask=None,
                 scale=None):
    """attnspec's plain backward pass with every operation rounded to ``dtype`` / ``accumulate``
    (the baseline of check_vjp_output): (dq, dk, dv) as float64 arrays of the rounded values.
    ``mask`` as in check_vjp_output."""
    return _baseline_derivative("vjp", (q, k, v), [(do, "do")], dtype, accumulate, causal, scale,
                                mask)


def baseline_jvp(q, k, v, tq, tk, tv, *, dtype="fp32", accumulate="fp32", causal=False,
                 mask=None, scale=None):
    """attnspec's plain forward-mode derivative at ``dtype`` / ``accumulate`` (the baseline of
    check_jvp_output): do_t as a float64 array of the rounded values. ``mask`` as above."""
    (do_t,) = _baseline_derivative("jvp", (q, k, v), [(tq, "tq"), (tk, "tk"), (tv, "tv")], dtype,
                                   accumulate, causal, scale, mask)
    return do_t


def stress_mask(kind, seed=0, shape=(2, 128, 64), dtype="fp32"):
    """The ``kind`` ("boolean" or "additive") mask of the case with q of ``shape`` (N_q = N_k)
    and ``seed``: the array ``attnspec check-kernel OP --generate NAME --seed S --shape ... --mask
    KIND`` writes (key padding, holes, fully masked rows; kernels/stress.hpp). boolean: a numpy
    bool array (True = the key takes part); additive: the values (-inf hides a key) in the
    dtype's numpy type, as stress_case()."""
    _choice(kind, "mask", ("boolean", "additive"))
    _choice(dtype, "dtype", DTYPES)
    m = _array(_core.kernel_stress_mask(kind, int(seed), [int(s) for s in shape], dtype))
    return m != 0 if kind == "boolean" else _typed([m], dtype)[0]


def baseline_attention(q, k, v, *, dtype="fp32", accumulate="fp32", causal=False, mask=None,
                       scale=None):
    """attnspec's plain kernel with every operation rounded to ``dtype`` / ``accumulate``: the
    baseline the rule is measured against. Returns (out, lse) as float64 numpy arrays holding
    the rounded values. ``mask`` as in check_attention_output."""
    _choice(dtype, "dtype", DTYPES)
    _choice(accumulate, "accumulate", ("fp32", "fp64"))
    arrays = [_f64(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    kind, m = _mask_array(mask, causal)
    o, l = _core.kernel_baseline_attention(*arrays, kind, _scale(scale), dtype, accumulate, m)
    return _array(o), _array(l)


def _masked_cases(mask, causal, shape, dtype, build):
    """(causal flags, build) of check_attention / check_vjp / check_jvp: without ``mask``, the
    ``causal`` flags (None: False and True); with mask="boolean" or "additive", causal False only
    and each case built as (arrays, stress_mask(mask, seed, shape, dtype))."""
    if mask is None:
        return ((False, True) if causal is None else causal), build
    _choice(mask, "mask", ("boolean", "additive"))
    if causal not in (None, False) and tuple(np.atleast_1d(causal)) != (False,):
        raise make(UsageError, "give mask= or causal flags, not both", "mask")
    return False, lambda n, s: (build(n, s), stress_mask(mask, s, shape, dtype))


def _run_cases(cases, seeds, causal, make, call):
    """The table of check_attention / check_vjp / check_jvp: ``make(name, seed)`` builds a case,
    ``call(case, causal)`` runs and checks the user's function on it."""
    names = stress_cases() if cases == "stress" else tuple(cases)
    flags = (causal,) if causal in (True, False) else tuple(causal)
    cols = {k: [] for k in ("case", "seed", "causal", "verdict", "worst_rule_ratio",
                            "worst_bound_ratio", "rows_beyond_rule", "elements_beyond_bound")}
    checks = []
    for name in names:
        for seed in seeds:
            case = make(name, seed)
            for c in flags:
                r = call(case, c)
                checks.append(r)
                for key, val in (("case", name), ("seed", seed), ("causal", c),
                                 ("verdict", r.verdict), ("worst_rule_ratio", r.worst_rule_ratio),
                                 ("worst_bound_ratio", r.worst_bound_ratio),
                                 ("rows_beyond_rule", r.rows_beyond_rule),
                                 ("elements_beyond_bound", r.elements_beyond_bound)):
                    cols[key].append(val)
    t = table(cols, dtypes={"case": str, "verdict": str, "causal": bool})
    try:
        t.attrs["checks"] = checks
    except AttributeError:
        t["checks"] = checks
    return t


def check_attention(fn, *, dtype="fp32", accumulate="fp32", cases="stress", shape=(2, 128, 64),
                    seeds=(0,), causal=None, mask=None, factor=2.0):
    """Calls ``fn(q, k, v, causal=c)`` on every generated case (``cases``: "stress" for all of
    stress_cases(), or a list of names), seed and causal flag (``causal``: default False and
    True), and checks what it returns (``out``, or ``(out, lse)``). ``mask="boolean"`` or
    ``"additive"``: instead ``fn(q, k, v, mask=m)`` with m = stress_mask(mask, seed, shape, dtype)
    (a bool array, True = attend, or a float array added to the scaled logits, -inf hiding a
    key; PyTorch SDPA's attn_mask conventions), causal False only. Returns one row per call:
    case, seed, causal, verdict, worst_rule_ratio, worst_bound_ratio, rows_beyond_rule,
    elements_beyond_bound (a pandas DataFrame when pandas is installed, else a dict of numpy
    arrays), and the KernelCheck objects as ``.checks`` on the dict form / ``.attrs["checks"]``
    on the DataFrame."""
    causal, make = _masked_cases(mask, causal, shape, dtype,
                                 lambda n, s: stress_case(n, s, shape, dtype))

    def call(case, c):
        arrays, m = case if mask else (case, None)
        got = fn(*arrays, mask=m) if mask else fn(*arrays, causal=c)
        out, lse = got if isinstance(got, tuple) else (got, None)
        return check_attention_output(out, *arrays, lse=lse, dtype=dtype, accumulate=accumulate,
                                      causal=c, mask=m, factor=factor)
    return _run_cases(cases, seeds, causal, make, call)


def check_vjp(fn, *, dtype="fp32", accumulate="fp32", cases="stress", shape=(2, 128, 64),
              seeds=(0,), causal=None, mask=None, factor=2.0):
    """check_attention for a backward pass: calls ``fn(q, k, v, do, causal=c)`` (with ``mask=``:
    ``fn(q, k, v, do, mask=m)``, m as in check_attention), which returns ``(dq, dk, dv)``, on
    every case of stress_vjp_case(); the same table, with VjpCheck objects (rows_beyond_rule and
    elements_beyond_bound summed over the three tensors)."""
    causal, make = _masked_cases(mask, causal, shape, dtype,
                                 lambda n, s: stress_vjp_case(n, s, shape, dtype))

    def call(case, c):
        arrays, m = case if mask else (case, None)
        dq, dk, dv = fn(*arrays, mask=m) if mask else fn(*arrays, causal=c)
        return check_vjp_output(dq, dk, dv, *arrays, dtype=dtype, accumulate=accumulate,
                                causal=c, mask=m, factor=factor)
    return _run_cases(cases, seeds, causal, make, call)


def check_jvp(fn, *, dtype="fp32", accumulate="fp32", cases="stress", shape=(2, 128, 64),
              seeds=(0,), causal=None, mask=None, factor=2.0):
    """check_attention for a forward-mode derivative: calls ``fn(q, k, v, tq, tk, tv,
    causal=c)`` (with ``mask=``: ``fn(q, k, v, tq, tk, tv, mask=m)``), which returns ``do_t``, on
    every case of stress_jvp_case(); the same table."""
    causal, make = _masked_cases(mask, causal, shape, dtype,
                                 lambda n, s: stress_jvp_case(n, s, shape, dtype))

    def call(case, c):
        arrays, m = case if mask else (case, None)
        got = fn(*arrays, mask=m) if mask else fn(*arrays, causal=c)
        return check_jvp_output(got, *arrays, dtype=dtype, accumulate=accumulate, causal=c,
                                mask=m, factor=factor)
    return _run_cases(cases, seeds, causal, make, call)


def _infsa_params(gamma, eps):
    g, e = float(gamma), float(eps)
    if not np.isfinite(g):
        raise make(DataError, "gamma must be finite, got %r" % (gamma,), "gamma")
    if not (np.isfinite(e) and e >= 0):
        raise make(DataError, "eps must be finite and >= 0, got %r" % (eps,), "eps")
    return g, e


def _infsa_output(op, operation, out, q, k, v, params, dtype, accumulate, factor, floor_units,
                  worst):
    """The check of one InfSA-family output (``op`` of kernel_check_infsa: "linear", "pure",
    "neumann"); ``params`` validates (gamma, eps)."""
    dtype = _settings(dtype, out, "out", accumulate, factor)
    g, e = params
    arrays = [_f64(x, n, allow_nonfinite=True) for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    o = _f64(out, "out", allow_nonfinite=True)
    d = _core.kernel_check_infsa(op, *arrays, o, g, e, dtype, accumulate, float(factor),
                                 float(floor_units), int(worst))
    return _kernel_check(d, dtype, accumulate, operation)


def check_linear_infsa_output(out, q, k, v, *, gamma=0.95, eps=1e-6, dtype=None,
                              accumulate="fp32", factor=2.0, floor_units=2.0, worst=5):
    """Checks ``out`` (shape (..., N, d_v): every row the pooled vector) as Linear-InfSA of the
    public InfSA code on q, k, v (the library's CPU reference, docs/MATH.md §3: energy-pooled
    query, normalised ReLU scores, gamma sum_j a_j v_j broadcast) computed by a kernel storing
    ``dtype`` and accumulating in ``accumulate``; returns a KernelCheck (operation
    "linear-infsa"). ``gamma``, ``eps``: the library's defaults. q, k, v may hold NaN/Inf
    (stress_linear_infsa_case() of nonfinite_stress_cases()): which elements must then be
    NaN/Inf (or 0) follows docs/cli/check-kernel.md ("Non-finite inputs"), counted in
    nonfinite_expected and nonfinite_mismatch. Cost O(B H N (d + d_v))."""
    return _infsa_output("linear", "linear-infsa", out, q, k, v, _infsa_params(gamma, eps), dtype,
                         accumulate, factor, floor_units, worst)


def check_pure_infsa_output(out, q, k, v, *, gamma=0.95, eps=1e-6, dtype=None,
                            accumulate="fp32", factor=2.0, floor_units=2.0, worst=5):
    """Checks ``out`` (shape (..., N, d_v)) as one InfSA layer of the public code on q, k, v:
    gamma ReLU(q k^T / d) / (||.||_F + eps) v per head (docs/MATH.md §3; issue 31's rho is this
    gamma), computed by a kernel storing ``dtype`` and accumulating in ``accumulate``; returns a
    KernelCheck (operation "pure-infsa"). q, k, v may hold NaN/Inf, as for
    check_linear_infsa_output. Cost O(B H N_q N_k (d + d_v)), memory O(N d_v)."""
    return _infsa_output("pure", "pure-infsa", out, q, k, v, _infsa_params(gamma, eps), dtype,
                         accumulate, factor, floor_units, worst)


def assert_pure_infsa_close(out, q, k, v, **kwargs):
    """Raises AssertionError unless check_pure_infsa_output(out, q, k, v, **kwargs) passes;
    returns the KernelCheck."""
    r = check_pure_infsa_output(out, q, k, v, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def assert_linear_infsa_close(out, q, k, v, **kwargs):
    """Raises AssertionError (the verdict, the summary and the worst elements) unless
    check_linear_infsa_output(out, q, k, v, **kwargs) passes; returns the KernelCheck."""
    r = check_linear_infsa_output(out, q, k, v, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def linear_infsa_cases():
    """The stress cases of linear-infsa: stress_cases() and relu-zero, dominant-key."""
    return tuple(_core.kernel_linear_infsa_case_names())


def stress_linear_infsa_case(name, seed=0, shape=(2, 128, 64), dtype="fp32"):
    """(q, k, v) of linear-infsa stress case ``name`` (linear_infsa_cases(), ``denormal`` or
    nonfinite_stress_cases()), the arrays
    ``attnspec check-kernel linear-infsa --generate NAME --seed S --shape ...`` writes."""
    _choice(dtype, "dtype", DTYPES)
    shape = tuple(int(s) for s in shape)
    arrays = _core.kernel_linear_infsa_case(str(name), int(seed), list(shape), dtype)
    return _typed([_array(t) for t in arrays], dtype)


def _baseline_infsa(op, q, k, v, gamma, eps, dtype, accumulate):
    _choice(dtype, "dtype", DTYPES)
    _choice(accumulate, "accumulate", ("fp32", "fp64"))
    g, e = _infsa_params(gamma, eps)
    arrays = [_f64(x, n) for x, n in ((q, "q"), (k, "k"), (v, "v"))]
    return _array(_core.kernel_baseline_infsa(op, *arrays, g, e, dtype, accumulate))


def baseline_linear_infsa(q, k, v, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32"):
    """attnspec's plain Linear-InfSA with every operation rounded to ``dtype`` / ``accumulate``
    (the baseline of check_linear_infsa_output), as a float64 array of the rounded values."""
    return _baseline_infsa("linear", q, k, v, gamma, eps, dtype, accumulate)


def baseline_pure_infsa(q, k, v, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32"):
    """attnspec's plain one-hop InfSA at ``dtype`` / ``accumulate`` (the baseline of
    check_pure_infsa_output), as a float64 array of the rounded values."""
    return _baseline_infsa("pure", q, k, v, gamma, eps, dtype, accumulate)


def _check_infsa(check, fn, gamma, eps, dtype, accumulate, cases, shape, seeds, factor):
    names = linear_infsa_cases() if cases == "stress" else tuple(cases)

    def call(case, c):
        return check(fn(*case), *case, gamma=gamma, eps=eps, dtype=dtype, accumulate=accumulate,
                     factor=factor)
    return _run_cases(names, seeds, False,
                      lambda n, s: stress_linear_infsa_case(n, s, shape, dtype), call)


def check_linear_infsa(fn, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32",
                       cases="stress", shape=(2, 128, 64), seeds=(0,), factor=2.0):
    """check_attention for Linear-InfSA: calls ``fn(q, k, v)``, which returns the output, on
    every case of stress_linear_infsa_case() (``cases``: "stress" for all of
    linear_infsa_cases(), or a list of names) and seed; the same table (its ``causal`` column
    False)."""
    return _check_infsa(check_linear_infsa_output, fn, gamma, eps, dtype, accumulate, cases,
                        shape, seeds, factor)


def check_pure_infsa(fn, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32",
                     cases="stress", shape=(2, 64, 32), seeds=(0,), factor=2.0):
    """check_linear_infsa for one-hop InfSA: calls ``fn(q, k, v)`` on every case of
    stress_linear_infsa_case() and seed and checks it with check_pure_infsa_output."""
    return _check_infsa(check_pure_infsa_output, fn, gamma, eps, dtype, accumulate, cases,
                        shape, seeds, factor)


# --- neumann (check-kernel neumann) ---------------------------------------------------------

def _neumann_params(gamma, eps):
    g, e = _infsa_params(gamma, eps)
    if not 0 < g < 1:
        raise make(DataError, "gamma must be in (0, 1) for neumann, got %r" % (gamma,), "gamma")
    if not e > 0:
        raise make(DataError, "eps must be > 0 for neumann, got %r" % (eps,), "eps")
    return g, e


def check_neumann_output(out, q, k, v, *, gamma=0.95, eps=1e-6, dtype=None, accumulate="fp32",
                         factor=2.0, floor_units=2.0, worst=5):
    """Checks ``out`` (shape (..., N, d_v)) as the Neumann kernel ((I - G)^-1 - I) v on q, k, v,
    G = gamma ReLU(q k^T / d) / (||.||_F + eps) per head (docs/MATH.md §3; N_q = N_k <= 2048,
    gamma in (0, 1), eps > 0), computed by a kernel storing ``dtype`` and accumulating in
    ``accumulate``; returns a KernelCheck (operation "neumann"). q, k, v may hold NaN/Inf
    (stress_neumann_case() of nonfinite_stress_cases("neumann")): which elements must then be
    NaN/Inf (or 0) follows docs/cli/check-kernel.md ("Non-finite inputs", neumann: rows reaching a
    NaN/Inf v row through entries > 0 of A+), counted in nonfinite_expected and
    nonfinite_mismatch. Cost O(B H N^2 (N + d + d_v)), memory four N x N float64 matrices per
    head (twice the time on non-finite inputs)."""
    return _infsa_output("neumann", "neumann", out, q, k, v, _neumann_params(gamma, eps), dtype,
                         accumulate, factor, floor_units, worst)


def assert_neumann_close(out, q, k, v, **kwargs):
    """Raises AssertionError (the verdict, the summary and the worst elements) unless
    check_neumann_output(out, q, k, v, **kwargs) passes; returns the KernelCheck."""
    r = check_neumann_output(out, q, k, v, **kwargs)
    if not r.passed:
        raise AssertionError(r.message())
    return r


def neumann_cases():
    """The stress cases of neumann: linear_infsa_cases() and rank-one (||G||_2 close to gamma)."""
    return tuple(_core.kernel_neumann_case_names())


def stress_neumann_case(name, seed=0, shape=(2, 64, 32), dtype="fp32"):
    """(q, k, v) of neumann stress case ``name`` (neumann_cases(), or
    nonfinite_stress_cases("neumann")), the arrays ``attnspec check-kernel neumann --generate NAME
    --seed S --shape ...`` writes."""
    _choice(dtype, "dtype", DTYPES)
    shape = tuple(int(s) for s in shape)
    arrays = _core.kernel_linear_infsa_case(str(name), int(seed), list(shape), dtype, True)
    return _typed([_array(t) for t in arrays], dtype)


def baseline_neumann(q, k, v, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32"):
    """attnspec's plain Neumann kernel, the literal ((I - G)^-1 - I) v with every operation
    rounded to ``dtype`` / ``accumulate``, as a float64 array of the rounded values."""
    _neumann_params(gamma, eps)
    return _baseline_infsa("neumann", q, k, v, gamma, eps, dtype, accumulate)


def check_neumann(fn, *, gamma=0.95, eps=1e-6, dtype="fp32", accumulate="fp32", cases="stress",
                  shape=(2, 64, 32), seeds=(0,), factor=2.0):
    """check_linear_infsa for the Neumann kernel: calls ``fn(q, k, v)`` on every case of
    stress_neumann_case() (``cases``: "stress" for all of neumann_cases(), or a list of names)
    and seed and checks it with check_neumann_output; the same table."""
    names = neumann_cases() if cases == "stress" else tuple(cases)

    def call(case, c):
        return check_neumann_output(fn(*case), *case, gamma=gamma, eps=eps, dtype=dtype,
                                    accumulate=accumulate, factor=factor)
    return _run_cases(names, seeds, False,
                      lambda n, s: stress_neumann_case(n, s, shape, dtype), call)


# spec-attention (its own module; it imports the helpers above).
from ._testing_spec import (assert_spec_attention_close, baseline_spec_attention,  # noqa: E402
                            check_spec_attention, check_spec_attention_output,
                            spec_attention_cases, stress_spec_attention_case)
