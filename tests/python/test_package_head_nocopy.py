"""A Head reads the caller's arrays in place (docs/python.md, "Arrays" and "Copies"): the
addresses the library reads are the caller's, for C- and F-ordered numpy arrays and CPU torch
tensors; the head keeps them alive; a strided view or an upcast is copied once; C and F order
give the same numbers."""
import gc

import numpy as np
import pytest

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")


def arrays(order, seed=3, N=7, D=5, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    W = [rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3)]
    conv = np.asfortranarray if order == "F" else np.ascontiguousarray
    return conv(X), [conv(w) for w in W]


def expected_strides(a):
    return (a.strides[0] // 8, a.strides[1] // 8)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_head_reads_numpy_arrays_in_place(order):
    X, W = arrays(order)
    h = attnspec.Head(X, *W)
    lay = h.layout
    for name, a in zip(("X", "W_Q", "W_K", "W_V"), [X] + W):
        address, row_stride, col_stride = lay[name]
        assert address == a.ctypes.data, name  # the library reads the caller's buffer
        assert (row_stride, col_stride) == expected_strides(a), name


def test_c_and_f_order_heads_give_the_same_numbers():
    (Xc, Wc), (Xf, Wf) = arrays("C"), arrays("F")
    hc, hf = attnspec.Head(Xc, *Wc), attnspec.Head(Xf, *Wf)
    # The forward and the dense J: the same products on the same values, bit for bit.
    assert np.array_equal(hc.forward(), hf.forward())
    assert np.array_equal(hc.jacobian(form="dense"), hf.jacobian(form="dense"))
    # The certified spectrum: equal values, enclosures that meet.
    sc, sf = hc.spectrum(), hf.spectrum()
    for a, b in ((sc.sigma_max, sf.sigma_max), (sc.sigma_min, sf.sigma_min),
                 (sc.kappa, sf.kappa)):
        assert a.lo <= b.hi and b.lo <= a.hi
        assert abs(a.value - b.value) <= 1e-12 * abs(a.value)
    # A head built from owned copies (the arrays' values in a fresh buffer) agrees too.
    ho = attnspec.Head(Xc.copy(order="F"), *[w.copy(order="F") for w in Wc])
    assert np.array_equal(ho.forward(), hc.forward())


def test_the_head_keeps_the_arrays_alive():
    X, W = arrays("C")
    A = attnspec.Head(X, *W).forward()
    h = attnspec.Head(X, *W)
    address = h.layout["X"][0]
    del X, W
    gc.collect()
    _ = [np.full((7, 5), 1e300) for _ in range(50)]  # reuse freed memory if it were freed
    assert h.layout["X"][0] == address
    assert np.array_equal(h.forward(), A)


def test_writing_the_callers_array_changes_the_head_and_a_nan_is_refused_then():
    X, W = arrays("F")
    h = attnspec.Head(X, *W)
    A = h.forward()
    X[0, 0] += 1.0
    assert not np.array_equal(h.forward(), A)  # no copy: the head sees the change
    X[0, 0] = np.nan
    with pytest.raises(attnspec.DataError, match="NaN"):
        h.forward()


def test_a_strided_view_and_an_upcast_are_copied_once_with_the_same_numbers():
    X, W = arrays("F")
    big = np.zeros((X.shape[0], 2 * X.shape[1]), order="F")
    big[:, ::2] = X
    view = big[:, ::2]
    assert not (view.flags.c_contiguous or view.flags.f_contiguous)
    hv, hx = attnspec.Head(view, *W), attnspec.Head(X, *W)
    assert hv.layout["X"][0] != view.ctypes.data and hv.layout["X"][0] != big.ctypes.data
    assert np.array_equal(hv.forward(), hx.forward())
    W32 = [w.astype(np.float32) for w in W]
    h32 = attnspec.Head(X, *W32)
    assert h32.layout["W_Q"][0] != W32[0].ctypes.data
    assert h32.layout["X"][0] == X.ctypes.data


def test_a_float64_torch_tensor_is_read_in_place_in_either_order():
    torch = pytest.importorskip("torch", reason="torch is not installed in this venv "
                                "(ATTNSPEC_PY_TORCH=1 bash scripts/python-env.sh)")
    X, W = arrays("C")
    Xt = torch.from_numpy(X)                                   # C order (contiguous)
    Wt = [torch.from_numpy(np.ascontiguousarray(w.T)).t() for w in W]  # F order (a .t() view)
    h = attnspec.Head(Xt, *Wt)
    assert h.layout["X"][0] == Xt.data_ptr()
    for name, t in zip(("W_Q", "W_K", "W_V"), Wt):
        assert h.layout[name][0] == t.data_ptr(), name
        assert h.layout[name][1:] == tuple(t.stride()), name
    assert np.array_equal(h.forward(), attnspec.Head(X, *W).forward())
