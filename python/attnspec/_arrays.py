"""How attnspec takes arrays: numpy arrays, CPU torch tensors and nested sequences.

Rules (docs/python.md, "Arrays"):

* floating types are used as float64: float64 as is, float32 and float16 (and torch's bfloat16)
  upcast, which is exact; longer floats (float128) are refused, a cast would round them;
* integer, boolean, complex, string and object arrays are refused (``ArrayTypeError``), as are
  tensors on a GPU (move them to the CPU first);
* the number of dimensions must be the one expected (2 for a matrix, 1 for a bias) and no array
  may be empty (``DataError``, naming the argument and its shape);
* NaN and Inf are refused (``DataError``, naming the argument and the first index).

Copies: a float64 array (or CPU tensor) passes through these checks without a copy (torch tensors
share their memory through ``Tensor.numpy()``); an upcast makes one. ``spectrum(matrix)`` and
``Head`` (X, W_Q, W_K, W_V) then hand the library the caller's buffer itself when it is C- or
F-contiguous (``as_library_matrix``); a strided view is copied once (to F order). A ``Head``
copies only its biases (d values).
"""

import numpy as np

from ._errors import ArrayTypeError, DataError, make


def _to_numpy(x, name, to_host=False):
    """``x`` as a numpy array (a CPU tensor shares its memory). A tensor on another device is
    refused, or copied to the host with ``to_host`` (attnspec.testing: a kernel's output is
    checked where the reference is computed)."""
    mod = type(x).__module__ or ""
    if mod.startswith("torch") and hasattr(x, "device") and hasattr(x, "detach"):
        if x.device.type != "cpu" and to_host:
            x = x.detach().cpu()
        elif x.device.type != "cpu":
            raise make(ArrayTypeError,
                       "%s: a tensor on device '%s'; attnspec computes on the CPU: pass "
                       "%s.cpu()" % (name, x.device, name), name)
        x = x.detach()
        if str(x.dtype) == "torch.bfloat16":  # numpy has no bfloat16
            x = x.double()
        return x.numpy()
    return np.asarray(x)


def as_array(x, name, ndim):
    """``x`` as a float64 numpy array of ``ndim`` dimensions, by the rules above."""
    a = _to_numpy(x, name)
    if a.dtype.kind != "f":
        raise make(ArrayTypeError,
                   "%s: dtype %s is not a floating type (expected float64; float32 and float16 "
                   "are upcast)" % (name, a.dtype), name)
    if a.dtype.itemsize > 8:
        raise make(ArrayTypeError,
                   "%s: dtype %s would be rounded to float64; cast it yourself" % (name, a.dtype),
                   name)
    if a.ndim != ndim:
        what = "matrix" if ndim == 2 else "vector"
        raise make(DataError, "%s: expected a %d-D array (a %s), got shape %s"
                   % (name, ndim, what, a.shape), name)
    if a.size == 0:
        raise make(DataError, "%s: empty array (shape %s)" % (name, a.shape), name)
    a = a.astype(np.float64, copy=False)
    finite = np.isfinite(a)
    if not finite.all():
        first = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise make(DataError, "%s holds NaN or Inf (first at index %s, value %r)"
                   % (name, first if ndim > 1 else first[0], float(a[first])), name)
    return a


def as_matrix(x, name):
    """A 2-D float64 array (see the module's rules)."""
    return as_array(x, name, 2)


def as_vector(x, name):
    """A 1-D float64 array (see the module's rules)."""
    return as_array(x, name, 1)


def as_library_matrix(x, name):
    """``as_matrix``, then C- or F-contiguous as the library reads it without a copy: a strided
    view (a slice with steps, a transpose of a strided view, a broadcast) is copied to F order,
    the one case copied besides an upcast."""
    a = as_matrix(x, name)
    if not (a.flags.f_contiguous or a.flags.c_contiguous):
        a = np.asfortranarray(a)
    return a
