"""The OpenBLAS core the extension loads with, chosen as the CLI chooses it (docs/blas.md).

OpenBLAS picks its kernels once, when it loads; Debian 12's OpenBLAS does not recognise some
newer CPUs and falls back to its generic Prescott kernels. The CLI then re-executes itself with
OPENBLAS_CORETYPE set to the best core the library carries for the CPU's features
(``select_blas_kernels``); a Python process cannot re-execute, so ``choose_core`` asks a short
child process (``blas_info()["best"]``) before the extension loads and sets OPENBLAS_CORETYPE for
the load only. The same core as the CLI means the same BLAS kernels, hence the CLI's numbers to
the bit where the same code runs. ``ATTNSPEC_BLAS_CORE=off`` keeps OpenBLAS's own choice, a core
name forces it, and a user's OPENBLAS_CORETYPE is left alone; ``attnspec.blas_info()`` says what
runs and why.
"""

import os
import subprocess
import sys

_PROBE = "_ATTNSPEC_BLAS_PROBE"


def choose_core():
    """The core to load OpenBLAS with, or None to leave the choice to OpenBLAS."""
    if os.environ.get(_PROBE) or os.environ.get("OPENBLAS_CORETYPE"):
        return None
    asked = os.environ.get("ATTNSPEC_BLAS_CORE", "").strip()
    if asked.lower() == "off":
        return None
    if asked and asked.lower() != "auto":
        return asked
    env = dict(os.environ, **{_PROBE: "1"})
    try:
        out = subprocess.run([sys.executable, "-c",
                              "import attnspec._core as c; print(c.blas_info()['best'])"],
                             env=env, capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    best = out.stdout.strip()
    return best or None


def load_core():
    """Imports attnspec._core with OPENBLAS_CORETYPE set to ``choose_core()`` during the load
    (removed again, so child processes choose for themselves, as the CLI does)."""
    core = choose_core()
    if core:
        os.environ["OPENBLAS_CORETYPE"] = core
    try:
        from . import _core
    finally:
        if core:
            os.environ.pop("OPENBLAS_CORETYPE", None)
    return _core
