"""Infinite Self-Attention (InfSA, docs/MATH.md §3; proofs/infsa_neumann.md,
proofs/infsa_absorbing.md, proofs/infsa_fidelity.md), computed by the library that
``attnspec neumann`` and ``attnspec fidelity`` run, so the same numbers::

    import attnspec
    Q, K = attnspec.infsa.draw_family("shared-mean", N=128, d=64, seed=20251)
    A_hat = attnspec.infsa.affinity(Q, K).A_hat        # ReLU(Q K^T / d_h) / (||.||_F + eps)
    nk = attnspec.infsa.neumann(A_hat, gamma=0.95)     # = attnspec neumann --tokens 128 ...
    print(nk.rho, nk.norm2, nk.invariants["residual"], nk.K_for_target)
    p = attnspec.infsa.perron(A_hat)                   # certified left Perron pair
    lin = attnspec.infsa.linear_infsa(Q, K, V=Q)       # Linear-InfSA, O(N d_h)
    f = attnspec.infsa.fidelity(Q, K)                  # cos(a, Perron / Katz vectors)

Conventions. Tokens are rows: Q, K, V are N x d_h. The affinity Â (N x N, entrywise >= 0) is
``relu``: ReLU(Q K^T / d_h) / (||ReLU(Q K^T / d_h)||_F + eps) (the public code's form) or
``softmax``: the row softmax of Q K^T / sqrt(d_h). gamma is the discount, in (0, 1), with
gamma rho(Â) < 1 certified before any solve. The Neumann kernel is N = (I - gamma Â)^{-1} and
the closure C = N gamma Â (so C V = N gamma Â V, the InfSA output). Perron vectors are
non-negative with unit 2-norm; "left" means Â^T v = rho v. Intervals are (lo, hi) tuples that
contain the exact quantity (outward rounded). Everything is dimensionless but V's units, which
C V keeps.

Errors: ``DataError`` (a ``ValueError``) naming the parameter for gamma outside (0, 1) or
gamma rho(Â) >= 1, eps < 0, a negative or non-square Â, NaN/Inf, shapes that do not fit, work
above the memory budget; ``UsageError`` for an unknown option value; ``ArrayTypeError`` for an
array type that is not converted (``attnspec._arrays``).
"""

import math
import os
from dataclasses import dataclass, field
from typing import Optional, Tuple

import numpy as np

from . import _core
from ._arrays import as_matrix
from ._errors import DataError, UsageError, make
from ._table import table

#: The families ``draw_family`` draws and ``attnspec fidelity --family`` names.
FAMILIES = ("gaussian", "shared-mean", "independent-means")
#: The truncation orders of ``attnspec neumann --orders`` (its default).
ORDERS = (1, 2, 4, 8, 16, 32)


def _real(x, name):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise make(UsageError, "%s must be a number, got %r" % (name, x), name) from None
    return v


def _int(x, name, lo, hi):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not lo <= x <= hi:
        raise make(UsageError, "%s must be an integer in [%d, %d], got %r" % (name, lo, hi, x),
                   name)
    return int(x)


@dataclass(frozen=True)
class Affinity:
    """Â (N x N, >= 0), how it was formed (``kind``), and ||A+||_F before the normalisation
    (relu; 0 for softmax)."""

    A_hat: np.ndarray = field(repr=False)
    kind: str
    frob_plus: float


def affinity(Q, K, kind="relu", eps=1e-6):
    """The InfSA affinity of Q, K (N x d_h each): ``kind`` "relu" (the code's form) or
    "softmax"; ``eps`` >= 0 the Frobenius normalisation's epsilon. One dgemm, O(N^2 d_h); 8 N^2
    bytes, refused above the memory budget (``DataError``, parameter max_bytes)."""
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    d = _core.infsa_affinity(Q, K, str(kind), _real(eps, "eps"))
    return Affinity(A_hat=d["A_hat"], kind=str(kind), frob_plus=d["frob_plus"])


@dataclass(frozen=True)
class Perron:
    """A Perron pair of a non-negative operator B by power iteration with Collatz-Wielandt
    bounds: ``rho`` (a Rayleigh-type estimate) and ``rho_enclosure`` (lo, hi), which contains
    rho(B) rigorously; ``vec`` (>= 0, unit 2-norm; left: B^T v = rho v); ``residual``
    ||B^T v - rho v||_2 (left) or ||B v - rho v||_2; ``gap_ratio`` an estimate of
    |lambda_2| / rho; ``vec_error`` an estimate (not a bound) of sin angle(v, exact);
    ``converged``: the enclosure reached the requested relative width. ``frobenius``: ||A+||_F
    enclosed, for the matrix-free form only."""

    rho: float
    rho_enclosure: Tuple[float, float]
    vec: np.ndarray = field(repr=False)
    residual: float = 0.0
    gap_ratio: float = 0.0
    vec_error: float = 0.0
    iterations: int = 0
    converged: bool = False
    left: bool = True
    frobenius: Optional[Tuple[float, float]] = None


def _perron(d):
    return Perron(rho=d["rho"], rho_enclosure=tuple(d["rho_enclosure"]), vec=d["vec"],
                  residual=d["residual"], gap_ratio=d["gap_ratio"], vec_error=d["vec_error"],
                  iterations=d["iterations"], converged=d["converged"], left=d["left"],
                  frobenius=tuple(d["frobenius"]) if "frobenius" in d else None)


def _perron_options(rel_width, max_iter):
    rel_width = _real(rel_width, "rel_width")
    if not (0 < rel_width < 1):
        raise make(DataError, "rel_width = %r must lie in (0, 1)" % (rel_width,), "rel_width")
    return rel_width, _int(max_iter, "max_iter", 1, 10**7)


def perron(B, left=True, rel_width=1e-10, max_iter=500):
    """The certified Perron pair of a dense B >= 0 (square): the left one (B^T v = rho v, what
    Linear-InfSA approximates) or the right one. Stops when hi - lo <= rel_width * hi or after
    ``max_iter`` steps (then ``converged`` is False; the enclosure still holds). O(N^2) per
    step. ``DataError`` for a non-square, empty, negative or non-finite B."""
    B = as_matrix(B, "B")
    rel_width, max_iter = _perron_options(rel_width, max_iter)
    return _perron(_core.infsa_perron(B, bool(left), rel_width, max_iter))


def perron_relu(Q, K, left=True, rel_width=1e-10, max_iter=500, tile=1024):
    """The certified Perron pair of A+ = ReLU(Q K^T / d_h) without forming it (tiles of
    ``tile`` x ``tile``, O(N d_h + tile^2) memory, O(N^2 d_h) per step), and ||A+||_F enclosed.
    A+ and Â differ by a positive factor: the same vectors, rho scaled by 1 / (||A+||_F + eps)."""
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    rel_width, max_iter = _perron_options(rel_width, max_iter)
    return _perron(_core.infsa_perron_relu(Q, K, bool(left), rel_width, max_iter,
                                           _int(tile, "tile", 1, 2**31 - 1)))


@dataclass(frozen=True)
class Centralities:
    """Centralities of the closure (proofs/infsa_absorbing.md): ``katz_out`` = C 1 (row sums),
    ``katz_in`` = C^T 1, ``expected_steps`` = N 1, ``leak`` R = 1 - gamma Â 1; ``probabilistic``
    when min R >= 0 (then N_ij is the expected number of visits to j from i of an absorbing
    chain); ``left`` and ``right`` the Perron pairs of Â."""

    katz_out: np.ndarray = field(repr=False)
    katz_in: np.ndarray = field(repr=False)
    expected_steps: np.ndarray = field(repr=False)
    leak: np.ndarray = field(repr=False)
    min_leak: float = 0.0
    probabilistic: bool = False
    left: Perron = field(default=None, repr=False)
    right: Perron = field(default=None, repr=False)


def _centralities(d):
    return Centralities(katz_out=d["katz_out"], katz_in=d["katz_in"],
                        expected_steps=d["expected_steps"], leak=d["leak"],
                        min_leak=d["min_leak"], probabilistic=d["probabilistic"],
                        left=_perron(d["left"]), right=_perron(d["right"]))


@dataclass(frozen=True)
class Neumann:
    """The Neumann-kernel analysis of ``attnspec neumann`` for one Â: ``n``, ``gamma``,
    ``frobenius`` ||Â||_F, ``norm2`` (lo, hi) enclosing ||Â||_2, ``rho`` (lo, hi) enclosing
    rho(Â) (the left Perron certificate); ``invariants`` of the computed kernel (min_entry and
    min_diag_minus_1, claimed >= 0 up to entry_tol; commutator ||Â N - N Â||_F; residual
    ||(I - gamma Â) N - I||_F against its LU bound residual_bound); ``truncation`` one row per
    order K: ||N - N_K||_2 (``error``) against the a-priori ``bound``; ``K_for_target`` the
    smallest K whose bound reaches ``target`` (-1 when gamma ||Â||_2 >= 1); ``centralities``;
    ``closure_times_V`` C V (None without V); ``kernel`` N itself (None unless asked)."""

    n: int
    gamma: float
    frobenius: float
    norm2: Tuple[float, float]
    rho: Tuple[float, float]
    invariants: dict = field(repr=False)
    truncation: object = field(repr=False)
    target: float = 0.0
    K_for_target: int = -1
    centralities: Centralities = field(default=None, repr=False)
    closure_times_V: Optional[np.ndarray] = field(default=None, repr=False)
    kernel: Optional[np.ndarray] = field(default=None, repr=False)


def neumann(A_hat, gamma, V=None, *, orders=ORDERS, target=1e-6, kernel=False, report=None):
    """The Neumann kernel N = (I - gamma Â)^{-1} of Â (N x N, >= 0) and what ``attnspec
    neumann`` reports of it: norms, invariants, the truncation table for ``orders`` (K >= 0),
    the K reaching ``target`` (in [1e-300, inf)), centralities and, given V (N x d_v), the
    closure C V = N gamma Â V by solves. ``kernel=True`` also returns N (one more LU). Cost
    O((max K + 6) N^3); refused above the memory budget before allocating. Errors: DataError
    for gamma outside (0, 1) or gamma rho(Â) >= 1 (parameter gamma), a bad Â, V whose row count
    is not N, a bad order (K) or target. ``report=PATH`` also writes the HDF5 report of
    ``attnspec neumann --input F --out PATH`` (group ``neumann``, reports/SCHEMA.md; source
    ``python:attnspec.infsa.neumann``, affinity ``given``), atomically (``OutputError`` for a
    path that cannot be written, nothing left behind); ``attnspec report show|render`` read it."""
    A_hat = as_matrix(A_hat, "A_hat")
    V = np.zeros((0, 0)) if V is None else as_matrix(V, "V")
    orders = [_int(k, "orders", 0, 1000) for k in orders]
    d = _core.infsa_neumann(A_hat, _real(gamma, "gamma"), V, orders, _real(target, "target"),
                            bool(kernel), _report_path(report),
                            "python: attnspec.infsa.neumann(gamma=%r, orders=%r, target=%r)"
                            % (gamma, orders, target))
    trunc = table({"K": [r[0] for r in d["truncation"]], "bound": [r[1] for r in d["truncation"]],
                   "error": [r[2] for r in d["truncation"]]},
                  dtypes={"K": np.int64, "bound": np.float64, "error": np.float64})
    c = _centralities(d["centralities"])
    return Neumann(n=d["n"], gamma=d["gamma"], frobenius=d["frobenius"],
                   norm2=tuple(d["norm2"]), rho=c.left.rho_enclosure,
                   invariants=dict(d["invariants"]), truncation=trunc, target=d["target"],
                   K_for_target=d["K_for_target"], centralities=c,
                   closure_times_V=d["closure_times_V"] if V.size else None,
                   kernel=d["kernel"] if kernel else None)


def closure_times(A_hat, gamma, V, transpose=False):
    """C V = N gamma Â V (``transpose``: C^T V) by one LU of I - gamma Â and solves, never
    forming N: the InfSA output for values V (N x d_v). O(N^3 + N^2 d_v). Errors as ``neumann``."""
    A_hat, V = as_matrix(A_hat, "A_hat"), as_matrix(V, "V")
    return _core.infsa_closure_times(A_hat, _real(gamma, "gamma"), V, bool(transpose))


def centralities(A_hat, gamma):
    """Katz in/out, expected steps, the leak and the Perron pairs of Â (``Centralities``), from
    one LU of I - gamma Â. Errors as ``neumann``."""
    A_hat = as_matrix(A_hat, "A_hat")
    return _centralities(_core.infsa_centralities(A_hat, _real(gamma, "gamma")))


@dataclass(frozen=True)
class LinearInfsa:
    """Linear-InfSA of one head (docs/MATH.md §3, lib/include/attnspec/infsa/linear_infsa.hpp):
    with q~ = q / sqrt(d_h), k~ = k / sqrt(d_h), energies e_i = ||q~_i||, the central query
    ``q_bar`` = sum_i e_i q~_i / (sum e + eps), scores s_j = max(0, q_bar . k~_j), weights
    ``weights`` a_j = s_j / (sum s + eps), and the pooled value ``p`` = gamma sum_j a_j v_j
    (length d_h; every token's output is p). ``sum_e``, ``sum_s``: the two sums;
    ``degenerate``: every s_j is 0 (then p = 0 and a = 0)."""

    p: np.ndarray
    q_bar: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    sum_e: float = 0.0
    sum_s: float = 0.0
    degenerate: bool = False

    def output(self, n_tokens):
        """The N x d_h output the public code returns: p broadcast to every token."""
        return np.broadcast_to(self.p, (int(n_tokens), self.p.shape[0])).copy()


def linear_infsa(Q, K, V, gamma=0.95, eps=1e-6):
    """Linear-InfSA exactly as the library's reference defines it (two sweeps over the tokens,
    O(N d_h) time, O(d_h) state; the weights by a third sweep). Q, K, V are all N x d_h (V of
    Q's shape, as the reference takes it). Errors:
    DataError for mismatched or empty shapes, NaN/Inf, gamma outside (0, 1), eps < 0."""
    Q, K, V = as_matrix(Q, "Q"), as_matrix(K, "K"), as_matrix(V, "V")
    d = _core.infsa_linear(Q, K, V, _real(gamma, "gamma"), _real(eps, "eps"))
    return LinearInfsa(p=d["p"], q_bar=d["q_bar"], weights=d["weights"], sum_e=d["sum_e"],
                       sum_s=d["sum_s"], degenerate=d["degenerate"])


@dataclass(frozen=True)
class Fidelity:
    """How well Linear-InfSA's weights a approximate the vectors of Â (proofs/infsa_fidelity.md):
    cosines with the left and right Perron vectors and the Katz-in and Katz-out centralities
    (NaN when not computed: the Katz ones, and the right one without ``with_right``, in the
    matrix-free form); ``rho_hat`` (lo, hi) enclosing rho(Â); ``frob_plus`` (lo, hi) enclosing
    ||A+||_F; the Perron pairs ``left``, ``right``."""

    cos_left: float
    cos_right: float
    cos_katz_in: float
    cos_katz_out: float
    rho_hat: Tuple[float, float]
    frob_plus: Tuple[float, float]
    matrix_free: bool = False
    left: Perron = field(default=None, repr=False)
    right: Perron = field(default=None, repr=False)


def _fidelity(d):
    return Fidelity(cos_left=d["cos_left"], cos_right=d["cos_right"],
                    cos_katz_in=d["cos_katz_in"], cos_katz_out=d["cos_katz_out"],
                    rho_hat=tuple(d["rho_hat"]), frob_plus=tuple(d["frob_plus"]),
                    matrix_free=d["matrix_free"], left=_perron(d["left"]),
                    right=_perron(d["right"]))


def fidelity(Q, K, gamma=0.95, eps=1e-6, matrix_free=False, with_right=False):
    """The fidelity of one (Q, K): dense (Â, one LU, all four cosines; O(N^3)) or
    ``matrix_free`` (the tiled Perron iteration, never N x N; left cosine, and right with
    ``with_right``). Errors: DataError for bad Q, K, gamma outside (0, 1), eps < 0."""
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    return _fidelity(_core.infsa_fidelity(Q, K, _real(gamma, "gamma"), _real(eps, "eps"),
                                          bool(matrix_free), bool(with_right)))


def fidelity_table(families=FAMILIES, tokens=(256,), d_h=64, heads=1, draws=3, mu=1.0,
                   gamma=0.95, eps=1e-6, seed=20251, matrix_free=False, with_right=False,
                   report=None):
    """The records of ``attnspec fidelity --family F,... --tokens N,... --dh d_h --heads H
    --draws n --mu mu --gamma g --seed S``: for each family, N, draw and head, instance i (in
    that order) draws Q, K with ``draw_family(family, N, d_h, mu, instance_seed(seed, i))``.
    A table (DataFrame or dict of arrays) with columns family, N, head, draw, seed, the four
    cosines, rho_hat_lo, rho_hat_hi, perron_converged, perron_vec_error. Refused before any draw
    above the memory budget (DataError). ``report=PATH`` also writes the HDF5 report of that
    ``attnspec fidelity ... --out PATH`` (group ``fidelity``), atomically."""
    if isinstance(families, str):
        families = [families]
    tokens = [tokens] if isinstance(tokens, (int, np.integer)) else tokens
    rows = _core.infsa_fidelity_table(
        [str(f) for f in families], [_int(n, "tokens", 1, 2**31 - 1) for n in tokens],
        _int(d_h, "d_h", 1, 2**31 - 1), _int(heads, "heads", 1, 2**31 - 1),
        _int(draws, "draws", 1, 2**31 - 1), _real(mu, "mu"), _real(gamma, "gamma"),
        _real(eps, "eps"), _int(seed, "seed", 0, 2**64 - 1), bool(matrix_free),
        bool(with_right), _report_path(report),
        "python: attnspec.infsa.fidelity_table(families=%r, tokens=%r, d_h=%r, heads=%r, "
        "draws=%r, mu=%r, gamma=%r, eps=%r, seed=%r)"
        % (list(families), list(tokens), d_h, heads, draws, mu, gamma, eps, seed))
    cols = {k: [r[k] for r in rows] for k in ("family", "N", "head", "draw", "seed", "cos_left",
                                              "cos_right", "cos_katz_in", "cos_katz_out")}
    cols["rho_hat_lo"] = [r["rho_hat"][0] for r in rows]
    cols["rho_hat_hi"] = [r["rho_hat"][1] for r in rows]
    cols["perron_converged"] = [r["left"]["converged"] for r in rows]
    cols["perron_vec_error"] = [r["left"]["vec_error"] for r in rows]
    return table(cols, dtypes={"family": str, "N": np.int64, "head": np.int64,
                               "draw": np.int64, "seed": np.uint64,
                               "perron_converged": bool})


def _report_path(report):
    """A report path for the library ("" for none)."""
    if report is None:
        return ""
    path = os.fspath(report)
    if not path:
        raise make(UsageError, "report: an empty path", "report")
    return str(path)


def draw_family(family, N, d, mu=1.0, seed=20251):
    """Seeded (Q, K), each N x d, of a family (the data of ``attnspec neumann --family F --mu mu
    --seed S --tokens N --dh d``): "gaussian" (i.i.d. N(0, 1)), "shared-mean" (Q and K share the
    mean mu m, m a random direction of norm sqrt(d)), "independent-means" (independent means of
    strength mu). UsageError for an unknown family."""
    return _core.infsa_draw_family(str(family), _int(N, "N", 1, 2**31 - 1),
                                   _int(d, "d", 1, 2**31 - 1), _real(mu, "mu"),
                                   _int(seed, "seed", 0, 2**64 - 1))


def instance_seed(master, i):
    """The seed of instance ``i`` of a run with master seed ``master`` (every run of the
    library and CLI derives its instances' seeds so)."""
    return _core.instance_seed(_int(master, "master", 0, 2**64 - 1), _int(i, "i", 0, 2**64 - 1))
