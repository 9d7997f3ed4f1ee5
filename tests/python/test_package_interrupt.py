"""Ctrl-C in a long call (python/attnspec/_interrupt.py): KeyboardInterrupt within a second of
the signal, the library's work stopped at its next check point, no file left by an interrupted
analysis, and the next call runs normally."""
import os
import signal
import threading
import time

import numpy as np
import pytest

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")
from attnspec import _core, _interrupt  # noqa: E402


def _interrupt_after(seconds):
    sent = {}

    def fire():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Timer(seconds, fire)
    t.start()
    return sent


def _long_head():
    rng = np.random.default_rng(5)
    N, D, d = 128, 256, 32  # J is 4096 x 24576: about 2 s on 2 cores
    X = rng.standard_normal((N, D))
    W = [rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3)]
    return attnspec.Head(X, *W, s=1 / np.sqrt(d))


def test_ctrl_c_in_a_spectrum_raises_at_once_and_stops_the_work():
    head = _long_head()
    t0 = time.monotonic()
    attnspec.spectrum(head, svd="extremal")
    alone = time.monotonic() - t0
    assert alone > 1.0, "the call must outlast the signal (%.2f s)" % alone
    sent = _interrupt_after(0.3 * alone)
    with pytest.raises(KeyboardInterrupt):
        attnspec.spectrum(head, svd="extremal")
    raised = time.monotonic()
    assert raised - sent["t"] < 1.0
    assert _core.interrupt_requested()
    _interrupt.settle()  # the worker ends at its next check point
    # stopped by a check point: without them it runs to the end ("finished")
    assert _interrupt.outcomes[-1] == "stopped"
    assert not _core.interrupt_requested()
    assert attnspec.spectrum(head, svd="extremal").kappa.value > 1  # the next call works


def test_ctrl_c_in_a_check_run_stops_it():
    sent = _interrupt_after(0.3)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        attnspec.checks.run("thm3.4", trials=100000, threads=2)
    assert time.monotonic() - sent["t"] < 1.0
    _interrupt.settle()
    assert _interrupt.outcomes[-1] == "stopped"
    assert time.monotonic() - t0 < 10


def test_interrupted_analysis_leaves_no_file(tmp_path):
    ds = attnspec.datasets.load("minilm-l6")
    hs = [ds.head(0, h, 0) for h in range(12)]
    w = {}
    for n in "QKV":
        w["W_" + n] = np.hstack([getattr(h, "W_" + n) for h in hs])
        w["b_" + n] = np.concatenate([getattr(h, "b_" + n) for h in hs])
    hidden = [[ds.head(0, 0, s).X for s in range(len(ds.sentences))]]
    kept = tmp_path / "model.h5"
    _interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        attnspec.models.analyze_arrays([w], hidden, 12, threads=2, progress=False,
                                       keep_model_file=kept)
    _interrupt.settle()
    assert _interrupt.outcomes[-1] == "stopped"
    assert list(tmp_path.iterdir()) == []
