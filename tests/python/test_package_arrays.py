"""How the package takes arrays (docs/python.md, "Arrays" and "Copies"), and the threads= and
progress= of spectrum: the matrix the library reads is the caller's buffer, the results do not
depend on the thread count, progress reaches the callback. The CLI is the `cli` fixture."""
import numpy as np
import pytest

from cli_support import num, run_cli

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")


def minilm_w_q():
    return attnspec.datasets.load("minilm-l6").head(0, 0, 0).W_Q


def test_an_f_contiguous_matrix_is_read_in_place_with_the_clis_bits(cli):
    W = np.asfortranarray(minilm_w_q())
    sp = attnspec.spectrum(W)
    assert sp.raw["data_address"] == W.ctypes.data  # the library read the caller's buffer
    assert sp.raw["transposed"] is False
    ref = run_cli(cli, "cond", "--dataset", "minilm-l6:0:0", "--no-report")["matrices"][0]
    assert ref["weight"] == "W_Q"
    assert (sp.rows, sp.cols) == (ref["rows"], ref["cols"])
    assert sp.kappa.value == num(ref["kappa_strict"]["value"])
    assert (sp.kappa.lo, sp.kappa.hi) == tuple(num(v) for v in ref["kappa_strict"]["enclosure"])
    assert list(sp.singular_values) == [num(v) for v in ref["sigma"]]


def test_a_c_contiguous_matrix_is_read_in_place_as_its_transpose():
    F = np.asfortranarray(minilm_w_q())
    C = np.ascontiguousarray(F)
    sf, sc = attnspec.spectrum(F), attnspec.spectrum(C)
    assert sc.raw["data_address"] == C.ctypes.data and sc.raw["transposed"] is True
    assert (sc.rows, sc.cols) == C.shape  # the caller's shape, not the transpose's
    # The same singular values: each enclosure meets the other's.
    for a, b in ((sf.sigma_max, sc.sigma_max), (sf.sigma_min, sc.sigma_min),
                 (sf.kappa, sc.kappa)):
        assert a.lo <= b.hi and b.lo <= a.hi
        assert abs(a.value - b.value) <= 1e-13 * a.value


def test_a_float64_torch_tensor_is_read_in_place():
    torch = pytest.importorskip("torch", reason="torch is not installed in this venv "
                                "(ATTNSPEC_PY_TORCH=1 bash scripts/python-env.sh)")
    T = torch.from_numpy(np.asfortranarray(minilm_w_q()))
    sp = attnspec.spectrum(T)
    assert sp.raw["data_address"] == T.data_ptr()


def test_a_strided_view_and_an_upcast_are_copied_and_give_the_same_numbers():
    W = np.asfortranarray(minilm_w_q())
    big = np.zeros((W.shape[0], 2 * W.shape[1]), order="F")
    big[:, ::2] = W
    view = big[:, ::2]  # neither C- nor F-contiguous
    sv, sw = attnspec.spectrum(view), attnspec.spectrum(W)
    assert sv.raw["data_address"] != view.ctypes.data
    assert sv.kappa == sw.kappa and list(sv.singular_values) == list(sw.singular_values)
    s32 = attnspec.spectrum(W.astype(np.float32))
    assert s32.raw["data_address"] != W.ctypes.data


def test_threads_keep_the_enclosures_and_bad_counts_are_refused():
    h = attnspec.datasets.load("minilm-l6").head(2, 1, 0)
    one = attnspec.spectrum(h, threads=1)
    two = attnspec.spectrum(h, threads=2)
    # OpenBLAS splits its products by thread count: the last bits may differ (measured: kappa
    # 69985.75359981004 against ...0998), each enclosure still holds the exact value.
    for a, b in ((one.kappa, two.kappa), (one.sigma_min, two.sigma_min),
                 (one.sigma_max, two.sigma_max)):
        assert a.lo <= b.hi and b.lo <= a.hi
        assert abs(a.value - b.value) <= 1e-12 * a.value
    W = np.asfortranarray(minilm_w_q())
    assert attnspec.spectrum(W, threads=1).kappa == attnspec.spectrum(W, threads=2).kappa
    for bad in (0, -1, 1.5, True, 5000):
        with pytest.raises(attnspec.UsageError, match="threads"):
            attnspec.spectrum(W, threads=bad)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # boom, below
def test_progress_reaches_the_callback_stage_by_stage(capsys):
    h = attnspec.datasets.load("minilm-l6").head(0, 0, 0)
    seen = []
    sp = attnspec.spectrum(h, progress=lambda *a: seen.append(a))
    assert sp.kappa.value > 1
    stages = [s for s, *_ in seen]
    assert stages, "no progress report"
    for stage, done, total, unit, left in seen:
        assert 0 <= done <= total and isinstance(unit, str)
    # Each stage ends with done == total (operator_spectrum.hpp's promise).
    for stage in set(stages):
        last = [r for r in seen if r[0] == stage][-1]
        assert last[1] == last[2], last
    attnspec.spectrum(h, progress=True)
    err = capsys.readouterr().err
    assert "attnspec.spectrum: [" in err
    # A raising callback does not end the solve.
    def boom(*a):
        raise RuntimeError("callback failed")
    assert attnspec.spectrum(h, progress=boom).kappa == sp.kappa
    with pytest.raises(attnspec.UsageError, match="progress"):
        attnspec.spectrum(h, progress="yes")
    with pytest.raises(attnspec.UsageError, match="progress"):
        attnspec.spectrum(np.eye(3), progress=True)


class _FakeCudaTensor:
    """Stands in for a torch tensor on a GPU: its module is torch's, .cpu() gives a host copy."""

    __module__ = "torch.fake"

    class _Device:
        def __init__(self, kind):
            self.type = kind

        def __str__(self):
            return self.type

    def __init__(self, a, kind="cuda"):
        self._a, self.device, self.dtype = a, self._Device(kind), a.dtype
        self.copied = []

    def detach(self):
        return self

    def cpu(self):
        self.copied.append(True)
        return _FakeCudaTensor(self._a.copy(), "cpu")

    def numpy(self):
        assert self.device.type == "cpu", "numpy() of a device tensor"
        return self._a


def test_testing_copies_gpu_tensors_to_the_host_where_the_api_refuses_them():
    from attnspec import testing
    q, k, v = testing.stress_case("gaussian", seed=3, shape=(8, 4), dtype="fp64")
    out, _ = testing.baseline_attention(q, k, v, dtype="fp64")
    fake = _FakeCudaTensor(np.asarray(out))
    r = testing.check_attention_output(fake, q, k, v, dtype="fp64")
    assert fake.copied and r.verdict == "pass"
    with pytest.raises(attnspec.ArrayTypeError, match="cuda"):
        attnspec.spectrum(_FakeCudaTensor(np.eye(3)))
