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

from . import _errors

_PROBE = "_ATTNSPEC_BLAS_PROBE"
# The child imports the parent's extension (its package's folder first on sys.path); only the
# library's refusal of the value (attnspec.UsageError) exits 64.
_ASK = ("import sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import attnspec._core as c\n"
        "from attnspec._errors import UsageError\n"
        "try:\n"
        "    print(c.requested_blas_core())\n"
        "except UsageError as e:\n"
        "    print(e, file=sys.stderr)\n"
        "    sys.exit(64)\n")


def choose_core():
    """(core, reason): the core to load OpenBLAS with (None: leave the choice to OpenBLAS) and
    why. A bad ATTNSPEC_BLAS_CORE (what the CLI refuses with exit 64: not auto, off or a core name,
    or a core this CPU or OpenBLAS build lacks, which would stop the process with SIGILL) raises
    attnspec.UsageError with the CLI's message."""
    if os.environ.get(_PROBE):
        return None, ""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return None, "set by the user: OPENBLAS_CORETYPE=" + os.environ["OPENBLAS_CORETYPE"]
    asked = os.environ.get("ATTNSPEC_BLAS_CORE", "").strip()
    if asked.lower() == "off":
        return None, "detected by OpenBLAS, kept: ATTNSPEC_BLAS_CORE=off"
    env = dict(os.environ, **{_PROBE: "1"})
    try:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run([sys.executable, "-c", _ASK, here], env=env, capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None, "OpenBLAS's choice (the probe for the best core could not run)"
    if out.returncode == 64:
        raise _errors.make(_errors.UsageError, out.stderr.strip().splitlines()[-1],
                           "ATTNSPEC_BLAS_CORE")
    core = out.stdout.strip() if out.returncode == 0 else ""
    if not core:
        return None, "OpenBLAS's choice (no better core known for this CPU)"
    if asked and asked.lower() != "auto":
        return core, "forced by ATTNSPEC_BLAS_CORE=" + core + " (OPENBLAS_CORETYPE for the load)"
    return core, ("chosen by attnspec from the CPU features, as the CLI chooses "
                  "(OPENBLAS_CORETYPE=" + core + " for the load)")


def load_core():
    """Imports attnspec._core with OPENBLAS_CORETYPE set to ``choose_core()`` during the load
    (removed again, so child processes choose for themselves, as the CLI does), and records why
    for ``blas_info()["reason"]``."""
    core, reason = choose_core()
    if core:
        os.environ["OPENBLAS_CORETYPE"] = core
    try:
        from . import _core
    finally:
        if core:
            os.environ.pop("OPENBLAS_CORETYPE", None)
    if reason:
        _core.set_blas_core_reason(reason)
    return _core
