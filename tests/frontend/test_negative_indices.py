"""The compile option ``negative_indices``: ``"error"`` (gpukern's default: an index below 0 is out of
bounds, and the simulator says so) or ``"wrap"`` (NumPy's and Numba's rule, the Numba layer's: it
counts from the end, once).  An index that can never be negative costs nothing under "wrap"."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk


def shifted(a, out, n):
    i = gk.global_id(0)
    s = gk.shared(gk.float64, 8)
    if i < 8:
        s[i] = i * 10
    gk.barrier()
    if i < a.size:
        row = a[i // 4]  # a view: its own length counts
        out[i] = a[i // 4, (i % 4) - n] + a[-1, -1] + s[-2] + row[-1]


wrap = gk.kernel(negative_indices="wrap")(shifted)
constant_negative = gk.kernel(shifted)


@gk.kernel
def error(a, out, n):
    i = gk.global_id(0)
    out[i] = a[i // 4, (i % 4) - n]


def test_wrap_counts_from_the_end(backend):
    a = np.arange(8.0).reshape(2, 4)
    out = np.zeros(8)
    wrap[1, 8](a, out, 2)
    i = np.arange(8)
    np.testing.assert_array_equal(out, a[i // 4, (i % 4) - 2] + a[-1, -1] + 60 + a[i // 4, -1])


def test_error_reports_the_negative_index(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"index \(0, -2\)"):
        error[1, 8](np.arange(8.0).reshape(2, 4), np.zeros(8), 2)


def test_constant_negative_index_is_refused_where_it_is_out_of_bounds():
    with pytest.raises(gk.KernelTypeError, match="index -2 is out of bounds"):
        constant_negative.source(np.zeros((2, 4)), np.zeros(8), 2)


def test_wrapping_once_then_out_of_bounds_is_reported(on_simulator):
    @gk.kernel(negative_indices="wrap")
    def twice(a, out, n):
        i = gk.global_id(0)
        out[i] = a[i - n]

    with pytest.raises(gk.OutOfBoundsError, match=r"index \(-2,\)"):
        twice[1, 4](np.arange(4.0), np.zeros(4), 6)


def test_never_negative_indices_cost_nothing():
    src = wrap.source(np.zeros((2, 4)), np.zeros(8), 2)
    assert "out[i] =" in src  # the thread's index: no select
    assert "< 0LL ?" in src  # (i % 4) - n may be negative
    assert "s[6]" in src and "a_shape0 - 1LL" in src  # constants: folded


def test_the_numba_layer_wraps():
    from gpukern.numba import cuda

    @cuda.jit
    def last(a, out):
        out[0] = a[-1]
        out[1] = a[cuda.grid(1) - 1]

    gk.set_backend("sim")
    try:
        out = np.zeros(2)
        last[1, 1](np.arange(5.0), out)
        assert list(out) == [4.0, 4.0]
    finally:
        gk.set_backend(None)


def test_bad_option_is_refused():
    with pytest.raises(gk.GpukernError, match="negative_indices"):
        gk.kernel(negative_indices="clamp")(shifted)
