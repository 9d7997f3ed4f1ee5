"""attnspec: certified spectra of attention Jacobians, from numpy (docs/python.md).

The same C++ library as the ``attnspec`` command line, so the same numbers::

    import numpy as np, attnspec
    rng = np.random.default_rng(0)
    X = rng.standard_normal((16, 32))
    W = [rng.standard_normal((32, 8)) / np.sqrt(32) for _ in range(3)]
    head = attnspec.Head(X, *W, s=1 / np.sqrt(8))
    sp = attnspec.spectrum(head)                 # kappa(J) of the weight Jacobian
    print(sp.kappa.value, sp.kappa.lo, sp.kappa.hi, sp.method)
    J = attnspec.jacobian(head)                  # dense J (N d x 3 D d) when it fits
    ds = attnspec.datasets.load("minilm-l6")     # a trained model's heads
    print(attnspec.spectrum(ds.head(0, 0, 0)).kappa)
    print(attnspec.checks.run("thm3.5").verdicts)  # theorem checks (attnspec verify)
    Q, K = attnspec.infsa.draw_family("gaussian", N=64, d=16)
    nk = attnspec.infsa.neumann(attnspec.infsa.affinity(Q, K).A_hat, gamma=0.9)  # InfSA
    r = attnspec.reports.read("reports/reference/verify.h5")  # reports (attnspec report)
    a = attnspec.analyze(torch_model, inputs)    # every head of a PyTorch model (models.py)

Conventions: docs/MATH.md (tokens are rows, column-major vec, kappa strict and nz); what the
enclosures mean: docs/accuracy.md. Errors are ``attnspec.Error`` subclasses (``DataError`` and
``UsageError`` are also ``ValueError``).
"""

from ._blas import load_core as _load_core

_core = _load_core()  # before any submodule: OpenBLAS loads with the CLI's core (_blas.py)

from . import checks, datasets, infsa, models, reports, testing  # noqa: E402
from ._errors import (ArrayTypeError, DataError, Error, InputNotFoundError, InternalError,
                      OutputError, ResourceError, UnavailableError, UsageError)
from ._head import DENSE_AUTO_BYTES, Head, JacobianOperator, jacobian
from ._spectrum import FULL_UPTO, Estimate, Kappa, Spectrum, spectrum
from .models import analyze

#: The version of the library and package (the CMake project's version).
__version__ = _core.__version__


def blas_info():
    """The BLAS that runs under the library, as ``attnspec info`` prints it: ``library``,
    ``core`` (the OpenBLAS kernels), ``reason`` (why that core), ``cpu``, ``threads``,
    ``detected`` (OpenBLAS's own choice) and ``best`` (the best core of this build for the CPU;
    the package loads OpenBLAS with it, as the CLI does, unless ATTNSPEC_BLAS_CORE=off or
    OPENBLAS_CORETYPE is set)."""
    return _core.blas_info()


def memory_limit():
    """The memory budget in bytes (default: half the physical memory, as the CLI's
    ``--max-memory``): work whose estimate exceeds it is refused before allocating
    (``DataError``)."""
    return _core.memory_limit_bytes()


def set_memory_limit(nbytes):
    """Sets the process-wide memory budget in bytes (0 < nbytes < inf)."""
    _core.set_memory_limit_bytes(float(nbytes))


__all__ = [
    "__version__", "analyze", "models", "Head", "JacobianOperator", "jacobian", "spectrum", "Spectrum", "Estimate",
    "Kappa", "blas_info", "datasets", "checks", "infsa", "reports", "testing", "memory_limit",
    "set_memory_limit",
    "Error", "UsageError", "DataError", "ArrayTypeError", "InputNotFoundError",
    "UnavailableError", "InternalError", "ResourceError", "OutputError", "DENSE_AUTO_BYTES",
    "FULL_UPTO",
]
