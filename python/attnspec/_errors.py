"""The exceptions of attnspec, one class per class of the library's exit codes (README, "Exit codes").

Every failure the library reports is an ``attnspec.Error`` carrying the message the CLI prints,
``code`` (the exit code ``attnspec`` would exit with) and ``parameter`` (the library's name of the
parameter at fault, "" when the error is about data). The subclasses also derive from the builtin
exception a Python caller expects, so ``except ValueError`` catches bad input as usual.
"""


class Error(Exception):
    """Base of every attnspec exception. ``code``: the CLI's exit code; ``parameter``: the name of
    the parameter at fault ("" when none)."""

    code = 70
    parameter = ""


class UsageError(Error, ValueError):
    """An option or argument value the library does not accept (exit code 64)."""

    code = 64


class DataError(Error, ValueError):
    """Bad input data: wrong shapes, NaN/Inf, parameters out of range, or a problem refused before
    allocating because its estimate exceeds the memory budget (exit code 65)."""

    code = 65


class ArrayTypeError(Error, TypeError):
    """An array of a type attnspec does not convert: integer, boolean, complex or object dtype, a
    tensor on a GPU (exit code 65 in the CLI's terms)."""

    code = 65


class InputNotFoundError(Error, FileNotFoundError):
    """An input file or named dataset missing or unreadable (exit code 66)."""

    code = 66


class UnavailableError(Error, RuntimeError):
    """A service not available in this build or on this machine: the GPU backend (69, 72)."""

    code = 69


class InternalError(Error, RuntimeError):
    """An internal error: a bug, please report it (exit code 70)."""

    code = 70


class ResourceError(Error, MemoryError):
    """The system could not provide the memory the computation needed (exit code 71)."""

    code = 71


class OutputError(Error, OSError):
    """An output that cannot be created, or an I/O error while reading or writing (73, 74)."""

    code = 73


_BY_CODE = {64: UsageError, 65: DataError, 66: InputNotFoundError, 69: UnavailableError,
            70: InternalError, 71: ResourceError, 72: UnavailableError, 73: OutputError,
            74: OutputError}


def from_library(code, message, parameter=""):
    """The exception for an attnspec::Error (called by the extension's translator)."""
    cls = _BY_CODE.get(int(code), Error)
    exc = cls(message)
    exc.code = int(code)
    exc.parameter = parameter
    return exc


def make(cls, message, parameter=""):
    """An exception of class ``cls`` raised by the Python layer, with its parameter name."""
    exc = cls(message)
    exc.parameter = parameter
    return exc
