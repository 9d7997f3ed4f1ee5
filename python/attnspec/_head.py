"""Attention heads and their exact Jacobians (docs/MATH.md §1-2, SC Thm 3.3)."""

import numbers

import numpy as np

from . import _core, _interrupt
from ._arrays import as_library_matrix, as_vector
from ._errors import DataError, UsageError, make

#: ``jacobian(..., form="auto")`` returns a dense array up to this many bytes (and within the
#: memory budget, ``attnspec.memory_limit()``), an operator above.
DENSE_AUTO_BYTES = 256 * 2**20

_WRT = ("weights", "input")


def check_wrt(wrt):
    if wrt not in _WRT:
        raise make(UsageError, "wrt must be 'weights' or 'input', got %r" % (wrt,), "wrt")


class Head:
    """One attention head on its input, in the paper's convention (docs/MATH.md §2)::

        Q = X W_Q + 1 b_Q^T,  K = X W_K + 1 b_K^T,  V = X W_V + 1 b_V^T
        A = softmax_rows(s Q K^T) V                              (N x d)

    Tokens are rows: ``X`` is N x D (N tokens of width D), ``W_Q``, ``W_K``, ``W_V`` are D x d
    (PyTorch's ``nn.Linear.weight`` is d x D: pass its transpose), the biases have length d or
    are None (the bias-free form of the paper), ``s`` is the logit scale (None means 1, the
    paper's default; BERT-style heads use 1/sqrt(d)). Arrays follow the rules of
    ``attnspec._arrays`` (float64 used as is, float32/float16 upcast; integer, complex, object
    arrays and GPU tensors refused). A shape that does not fit raises ``DataError`` (a
    ``ValueError``) naming the argument, its shape and the expected one; NaN/Inf too.

    No copy: a float64 array (or CPU tensor) that is C- or F-contiguous is the head's storage
    itself (``layout`` gives the addresses the library reads); the head keeps it alive. Change
    it afterwards and the head changes with it (every computation validates its input again,
    so a NaN written later is refused then). A strided view or an upcast is copied once; the
    biases (d values) are always copied.
    """

    __slots__ = ("_h",)

    def __init__(self, X, W_Q, W_K, W_V, b_Q=None, b_K=None, b_V=None, s=None):
        X = as_library_matrix(X, "X")
        W = [as_library_matrix(w, n) for w, n in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"))]
        N, D = X.shape
        d = W[0].shape[1]
        for w, n in zip(W, ("W_Q", "W_K", "W_V")):
            if w.shape != (D, d):
                raise make(DataError, "%s has shape %s, expected (%d, %d) (D = %d from X of "
                           "shape %s, d = %d from W_Q)" % (n, w.shape, D, d, D, X.shape, d), n)
        b = []
        for v, n in ((b_Q, "b_Q"), (b_K, "b_K"), (b_V, "b_V")):
            if v is not None:
                v = as_vector(v, n)
                if v.shape != (d,):
                    raise make(DataError, "%s has shape %s, expected (%d,) (d = %d from W_Q)"
                               % (n, v.shape, d, d), n)
            b.append(v)
        if s is None:
            s = 1.0
        if isinstance(s, bool) or not isinstance(s, numbers.Real):
            raise make(DataError, "s must be a positive real number, got %r" % (s,), "s")
        s = float(s)
        if not (np.isfinite(s) and s > 0):
            raise make(DataError, "s = %r must be finite and > 0" % (s,), "s")
        self._h = _core.Head(X, W[0], W[1], W[2], b[0], b[1], b[2], s)

    @classmethod
    def _wrap(cls, core_head):
        obj = cls.__new__(cls)
        obj._h = core_head
        return obj

    layout = property(lambda self: self._h.layout,
                      doc="{'X'|'W_Q'|'W_K'|'W_V': (data address, row stride, column stride)}: "
                          "where the library reads each matrix (strides in elements)")
    X = property(lambda self: self._h.X, doc="X (N x D), a copy")
    W_Q = property(lambda self: self._h.W_Q, doc="W_Q (D x d), a copy")
    W_K = property(lambda self: self._h.W_K, doc="W_K (D x d), a copy")
    W_V = property(lambda self: self._h.W_V, doc="W_V (D x d), a copy")
    b_Q = property(lambda self: self._h.b_Q, doc="b_Q (d,), or None")
    b_K = property(lambda self: self._h.b_K, doc="b_K (d,), or None")
    b_V = property(lambda self: self._h.b_V, doc="b_V (d,), or None")
    s = property(lambda self: self._h.s, doc="the logit scale s")
    N = property(lambda self: self._h.N, doc="tokens N")
    D = property(lambda self: self._h.D, doc="model width D")
    d = property(lambda self: self._h.d, doc="head width d")

    def __repr__(self):
        biases = "with biases" if self._h.b_Q is not None or self._h.b_K is not None or \
            self._h.b_V is not None else "bias-free"
        return "Head(N=%d, D=%d, d=%d, s=%.6g, %s)" % (self.N, self.D, self.d, self.s, biases)

    def forward(self):
        """The head's output A = softmax_rows(s Q K^T) V, N x d."""
        return _core.forward(self._h)

    def jacobian(self, wrt="weights", form="auto"):
        """The exact Jacobian of vec(A); see ``attnspec.jacobian``."""
        return jacobian(self, wrt, form)

    def spectrum(self, svd="auto", certify="auto", wrt="weights"):
        """sigma_max, sigma_min and kappa of this head's Jacobian; see ``attnspec.spectrum``."""
        from ._spectrum import spectrum
        return spectrum(self, svd=svd, certify=certify, wrt=wrt)


class JacobianOperator:
    """J (``wrt="weights"``, N d x 3 D d) or J_X (``wrt="input"``, N d x N D) of a head as a
    matrix-free operator: ``matvec`` (J x), ``rmatvec`` (J^T y), ``matmat``, ``rmatmat``,
    ``shape``, ``dtype`` (float64), so ``scipy.sparse.linalg.aslinearoperator(op)`` and
    ``svds(op)`` take it. Each product costs O(N^2 d + N D d) and never forms J. Vectors are
    column-major vecs (``M.reshape(-1, order="F")``) of: the output A (N x d) for the rows; for
    the columns of J, [vec dW_Q; vec dW_K; vec dW_V] (each D x d), of J_X, vec dX (N x D). The
    operator holds its own copy of the head's forward state."""

    def __init__(self, head, wrt="weights"):
        if not isinstance(head, Head):
            raise TypeError("JacobianOperator: head must be an attnspec.Head, got %s"
                            % type(head).__name__)
        check_wrt(wrt)
        self.wrt = wrt
        self._op = _core.JacobianOperator(head._h, wrt)
        self.shape = (self._op.rows, self._op.cols)
        self.dtype = np.dtype(np.float64)

    def __repr__(self):
        return "JacobianOperator(%s, shape=%s)" % (self.wrt, self.shape)

    def _vector(self, x, n, what):
        a = np.asarray(x, dtype=np.float64)
        if a.shape not in ((n,), (n, 1)):
            raise make(DataError, "%s: x has shape %s, expected (%d,)" % (what, a.shape, n), "x")
        return a.reshape(n)

    def matvec(self, x):
        """J x for x of length shape[1]: a vector of length shape[0]."""
        return self._op.matvec(self._vector(x, self.shape[1], "matvec"))

    def rmatvec(self, y):
        """J^T y for y of length shape[0]: a vector of length shape[1]."""
        return self._op.rmatvec(self._vector(y, self.shape[0], "rmatvec"))

    def matmat(self, X):
        """J X, column by column (X: shape[1] x k)."""
        return self._op.matmat(np.asarray(X, dtype=np.float64))

    def rmatmat(self, Y):
        """J^T Y, column by column (Y: shape[0] x k)."""
        return self._op.rmatmat(np.asarray(Y, dtype=np.float64))

    def __matmul__(self, x):
        x = np.asarray(x)
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)

    def to_dense(self):
        """J as a dense array, column by column (J e_j); costly: for checks on small heads."""
        return self.matmat(np.eye(self.shape[1]))


def jacobian(head, wrt="weights", form="auto"):
    """The exact Jacobian of the head's output vec(A) (column-major vec, N d entries), at the
    head's weights (SC Thm 3.3, docs/MATH.md §1-2; derivatives never with respect to biases):

    * ``wrt="weights"``: J = [J_Q, J_K, J_V], N d x 3 D d, columns vec dW_Q, vec dW_K, vec dW_V
      (each D x d, column-major);
    * ``wrt="input"``: J_X, N d x N D, columns vec dX.

    ``form``: "dense" (a numpy array; ``DataError`` when it would exceed the memory budget,
    before allocating), "operator" (a ``JacobianOperator``), or "auto" (dense up to
    ``DENSE_AUTO_BYTES`` = 256 MiB and the budget, an operator above). Closed forms (route (a)
    of proofs/jacobian_routes.md), the same code ``attnspec jacobian --store-j`` runs.
    """
    if not isinstance(head, Head):
        raise TypeError("jacobian: head must be an attnspec.Head, got %s" % type(head).__name__)
    check_wrt(wrt)
    if form not in ("auto", "dense", "operator"):
        raise make(UsageError, "form must be 'auto', 'dense' or 'operator', got %r" % (form,),
                   "form")
    budget = _core.memory_limit_bytes()
    if form == "auto":
        nbytes = _core.jacobian_bytes(head._h, wrt)
        form = "dense" if nbytes <= min(DENSE_AUTO_BYTES, budget) else "operator"
    if form == "dense":
        return _interrupt.call(_core.jacobian_dense, head._h, wrt, budget)
    return JacobianOperator(head, wrt)
