"""Ctrl-C during a long library call (docs/python.md, "Long calls").

A C++ call holds no Python frame where a KeyboardInterrupt could land until it returns. So the
main thread runs a long call in a worker thread and waits for it in short slices: Ctrl-C then
raises KeyboardInterrupt at once (within 0.05 s of the signal being handled), and the library is
asked to stop (``request_interrupt``): the worker ends at its next check point (every matrix-free
Jacobian product, every Gram block column, every instance of a check run; a LAPACK call in
progress finishes first) and its result is dropped. Nothing is written by an interrupted call:
reports are written by separate calls, atomically. The next call waits for such a worker to end,
then clears the request. Calls from other threads run directly (Ctrl-C reaches the main thread
only).
"""

import threading

from . import _core

_cancelled = []  # (done event, result box) of interrupted calls whose worker may still run
#: How the workers of interrupted calls ended, oldest first (settle() appends): "stopped" (at a
#: check point), "finished" (the call completed before reaching one; its result was dropped) or
#: "failed: <error>".
outcomes = []


def settle():
    """Waits for the workers of interrupted calls, then clears the interrupt request."""
    while _cancelled:
        done, box = _cancelled.pop(0)
        done.wait()
        err = box.get("error")
        if err is None:
            outcomes.append("finished")
        elif isinstance(err, RuntimeError) and str(err).startswith("interrupted"):
            outcomes.append("stopped")
        else:
            outcomes.append("failed: %s" % err)
    _core.clear_interrupt()


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, interruptible by Ctrl-C as described above."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    settle()
    box = {}
    # An Event, not Thread.join: a join that KeyboardInterrupt breaks can leave the thread marked
    # as stopped while it still runs (CPython 3.11), and settle() would not wait for it.
    done = threading.Event()

    def work():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: B036 (handed to the caller below)
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=work, name="attnspec-call", daemon=True).start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        _core.request_interrupt()
        _cancelled.append((done, box))
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
