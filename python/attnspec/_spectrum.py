"""sigma_max, sigma_min and kappa with enclosures: of a head's Jacobian (the engine of
``attnspec jacobian --svd``) or of a matrix (the analysis of ``attnspec cond``)."""

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Optional, Tuple

import numpy as np

from . import _core, _interrupt
from ._arrays import as_library_matrix
from ._errors import UsageError, make
from ._head import Head, check_wrt
from .checks import _count

#: The CLI's ``jacobian --full-upto`` default: ``svd="auto"`` computes every eigenvalue of
#: J J^T up to this many rows, the extremal ones above.
FULL_UPTO = 512

_DENSE_METHODS = ("auto", "full", "jacobi", "bdc", "gesdd", "gejsv")


@dataclass(frozen=True)
class Estimate:
    """A computed value with an enclosure: the exact quantity lies in [lo, hi] under the
    assumptions stated in docs/accuracy.md. ``basis`` names the argument that gave the interval
    (e.g. "temple", "jordan-wielandt", "gram-weyl", "weyl", "certified")."""

    value: float
    lo: float
    hi: float
    basis: str = ""

    def __contains__(self, x):
        return self.lo <= x <= self.hi

    @property
    def rel_width(self):
        """(hi - lo) / |value| (inf when value is 0 or the interval unbounded)."""
        if self.value == 0 or not math.isfinite(self.hi - self.lo):
            return math.inf
        return (self.hi - self.lo) / abs(self.value)


@dataclass(frozen=True)
class Kappa(Estimate):
    """kappa = sigma_max / sigma_min with its enclosure (docs/MATH.md §1). ``convention``:
    "strict" divides by the smallest of the min(rows, cols) singular values (inf for a
    rank-deficient matrix), "nz" by the smallest above ``rtol`` * sigma_max (``rank`` of them)."""

    convention: str = "strict"
    rank: int = 0
    rtol: float = 0.0
    sigma_max: float = 0.0
    sigma_min: float = 0.0


@dataclass(frozen=True)
class Spectrum:
    """The spectrum of J (a head's weight Jacobian), J_X, or a matrix.

    ``kappa`` is the strict condition number (``kappa.convention == "strict"``), ``kappa_nz`` the
    nz one; ``sigma_max`` and ``sigma_min`` are the largest and smallest of the min(rows, cols)
    singular values. Each has ``.value``, ``.lo``, ``.hi`` and ``.basis``. Singular values are in
    the units of the operator (for J: output units per weight unit; dimensionless for kappa).
    ``method`` describes the route (the engine's description for J, the SVD backend for a
    matrix), ``mode`` what ``svd=`` resolved to ("full": every singular value, or "extremal"),
    ``notes`` what the engine reported (fallbacks, certificates), ``of`` what was analysed ("J",
    "J_X" or "matrix"). ``singular_values`` holds every singular value when they were all
    computed (mode "full"), else only the extremes the engine found."""

    of: str
    rows: int
    cols: int
    kappa: Kappa
    kappa_nz: Kappa
    sigma_max: Estimate
    sigma_min: Estimate
    method: str
    mode: str
    rank: int
    notes: Tuple[str, ...] = ()
    seconds: float = 0.0
    gram_seconds: float = 0.0
    rel_error_bound: Optional[float] = None
    singular_values: np.ndarray = field(default=None, repr=False, compare=False)
    raw: dict = field(default=None, repr=False, compare=False)

    @property
    def basis(self):
        """Which argument encloses each extreme: "sigma_max: temple, sigma_min: certified"."""
        return "sigma_max: %s, sigma_min: %s" % (self.sigma_max.basis, self.sigma_min.basis)

    def __str__(self):
        k = self.kappa
        return ("%s (%d x %d, %s): kappa_strict = %.17g in [%.17g, %.17g], sigma_max = %.17g, "
                "sigma_min = %.17g" % (self.of, self.rows, self.cols, self.method, k.value,
                                        k.lo, k.hi, self.sigma_max.value, self.sigma_min.value))


def _kappa(d, basis):
    return Kappa(value=d["value"], lo=d["lo"], hi=d["hi"], basis=basis,
                 convention=d["convention"], rank=d["rank"], rtol=d["rtol"],
                 sigma_max=d["sigma_max"], sigma_min=d["sigma_min"])


def _threads(threads):
    """None: 0 (the process's count); else an integer in [1, 4096], as checks.run takes it."""
    return 0 if threads is None else _count(threads, "threads", 1, 4096)


class _StderrProgress:
    """``attnspec.spectrum: [stage] done/total unit, ~s left`` on stderr, at most every 0.5 s
    and at the end of each stage."""

    def __init__(self):
        self._last = 0.0

    def __call__(self, stage, done, total, unit, seconds_left):
        now = time.monotonic()
        if done < total and now - self._last < 0.5:
            return
        self._last = now
        left = "" if math.isnan(seconds_left) else ", ~%.0f s left" % seconds_left
        sys.stderr.write("attnspec.spectrum: [%s] %d/%d %s%s\n" % (stage, done, total, unit, left))
        sys.stderr.flush()


def _progress(progress):
    if progress is True:
        return _StderrProgress()
    if progress is None or progress is False:
        return None
    if not callable(progress):
        raise make(UsageError, "progress = %r: expected True (stderr), False/None or a callable "
                   "progress(stage, done, total, unit, seconds_left)" % (progress,), "progress")
    return progress


def _head_spectrum(head, svd, certify, wrt, full_upto, threads, progress):
    check_wrt(wrt)
    r = _interrupt.call(_core.head_spectrum, head._h, svd, certify, wrt, int(full_upto),
                        _core.memory_limit_bytes(), threads, progress)
    smax, smin = r["sigma_max"], r["sigma_min"]
    basis = "quotient of the sigma enclosures"
    return Spectrum(
        of="J" if wrt == "weights" else "J_X", rows=r["rows"], cols=r["cols"],
        kappa=_kappa(r["kappa_strict"], basis), kappa_nz=_kappa(r["kappa_nz"], basis),
        sigma_max=Estimate(smax["value"], smax["lo"], smax["hi"], smax["basis"]),
        sigma_min=Estimate(smin["value"], smin["lo"], smin["hi"], smin["basis"]),
        method=r["method"], mode=r["mode"], rank=r["rank"], notes=tuple(r["notes"]),
        seconds=r["seconds"], gram_seconds=r["gram_seconds"],
        rel_error_bound=r["rel_error_bound"],
        singular_values=r["gram_sigma"], raw=r)


def _matrix_spectrum(M, svd, certify, rtol, threads):
    if svd not in _DENSE_METHODS:
        raise make(UsageError, "svd = %r: a matrix takes %s (every singular value, dense SVD)"
                   % (svd, ", ".join(_DENSE_METHODS)), "svd")
    if certify not in ("auto", "never"):
        raise make(UsageError, "certify = %r: a matrix's dense SVD enclosures need no "
                   "certificate; use 'auto' or 'never'" % (certify,), "certify")
    M = as_library_matrix(M, "matrix")  # no copy unless a strided view (docs/python.md, "Arrays")
    r = _interrupt.call(_core.matrix_spectrum, M, "auto" if svd == "full" else svd,
                        -1.0 if rtol is None else float(rtol), threads)
    n = len(r["sigma"])
    basis = "quotient of the sigma enclosures"
    return Spectrum(
        of="matrix", rows=r["rows"], cols=r["cols"],
        kappa=_kappa(r["kappa_strict"], basis), kappa_nz=_kappa(r["kappa_nz"], basis),
        sigma_max=Estimate(r["sigma"][0], r["lo"][0], r["hi"][0], r["basis"][0]),
        sigma_min=Estimate(r["sigma"][n - 1], r["lo"][n - 1], r["hi"][n - 1], r["basis"][n - 1]),
        method=r["method"], mode="full", rank=r["kappa_nz"]["rank"], notes=(),
        seconds=r["seconds"], singular_values=r["sigma"], raw=r)


def spectrum(head_or_matrix, svd="auto", certify="auto", wrt="weights", *, full_upto=FULL_UPTO,
             rtol=None, threads=None, progress=None):
    """sigma_max, sigma_min and kappa (strict and nz), each with an enclosure of the exact value.

    For an ``attnspec.Head``: of its Jacobian J (``wrt="weights"``, N d x 3 D d) or J_X
    (``wrt="input"``, N d x N D), without forming it, by the engine and with the defaults of
    ``attnspec jacobian --svd SVD --certify CERTIFY`` (same numbers, bit for bit):

    * ``svd``: "auto" (every eigenvalue of J J^T up to ``full_upto`` rows, the CLI's 512, else
      the extremal ones), "full" or "extremal";
    * ``certify``: "auto" (certify sigma_min's lower end when the engine's own bound is 0 or
      wider than 1e-6 relative and the work is moderate), "always" or "never"
      (docs/accuracy.md).

    For a matrix (anything ``attnspec._arrays`` accepts as a 2-D float array): every singular
    value by a dense SVD with rigorous enclosures, as ``attnspec cond`` (``svd``: "auto" or
    "full", or a backend "jacobi", "bdc", "gesdd", "gejsv"; ``certify`` "auto" or "never": the
    dense enclosures need no certificate; ``wrt`` does not apply). ``rtol``: the nz convention's
    relative threshold (default max(rows, cols) * eps). A float64 matrix that is F-contiguous is
    read in place, bit for bit as ``attnspec cond``; a C-contiguous one is read in place as its
    transpose (the same singular values; the last bits of the enclosures may differ from the
    CLI's); a strided view is copied first (``raw["transposed"]``, ``raw["data_address"]``: the
    buffer the library read).

    ``threads``: the BLAS (and certificate) threads of this call (None: the process's count,
    every core unless set otherwise); the count is process-wide while the call runs, so two
    concurrent calls with different counts interfere. OpenBLAS splits its products by thread
    count, so a head's J may differ in the last bits between counts (the enclosures hold for
    each); ``threads=None`` gives the CLI's bits when the CLI runs with the same count. ``progress`` (a head's J only): True
    prints the engine's stages on stderr, or a callable ``progress(stage, done, total, unit,
    seconds_left)`` called from the computing thread with the GIL held (stages "forming",
    "Cholesky", "Lanczos", "eigensolve", "refinement", "certify"; ``seconds_left`` NaN when not
    yet estimated; an exception it raises is reported as unraisable and the solve goes on).

    Errors: ``UsageError`` for an unknown option value, ``DataError`` for bad data or a problem
    above the memory budget (``attnspec.memory_limit()``), refused before allocating. The GIL is
    released while the library computes.
    """
    if isinstance(head_or_matrix, Head):
        if rtol is not None:
            raise make(UsageError, "rtol applies to a matrix; J's nz threshold is the engine's "
                       "default", "rtol")
        return _head_spectrum(head_or_matrix, svd, certify, wrt, full_upto, _threads(threads),
                              _progress(progress))
    check_wrt(wrt)
    if progress not in (None, False):
        raise make(UsageError, "progress applies to a head's J; a matrix's dense SVD is one "
                   "LAPACK call", "progress")
    return _matrix_spectrum(head_or_matrix, svd, certify, rtol, _threads(threads))
