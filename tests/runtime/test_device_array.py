"""Device arrays' NumPy-like surface (issue 33): reshape and ravel share the memory, copy stays on
the device, indexing, astype and fill read or write through the host; on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk


@gk.kernel
def add_one(a: gk.Array[gk.float32, 2]):
    a[gk.thread_idx.y, gk.thread_idx.x] += 1


def test_reshape_is_a_view_a_kernel_writes_through(backend):
    d = gk.to_device(np.arange(12, dtype=np.float32))
    v = d.reshape(3, 4)
    assert v.shape == (3, 4) and d.reshape((2, -1)).shape == (2, 6) and v.ravel().shape == (12,)
    add_one[1, (4, 3)](v)
    np.testing.assert_array_equal(d.get(), np.arange(12) + 1)
    np.testing.assert_array_equal(v.get(), (np.arange(12) + 1).reshape(3, 4))


@pytest.mark.parametrize("shape", [(5, -1), (-1, -1), (13,), (2.0, 6), (-2, -6)])
def test_a_reshape_that_does_not_fit_says_so(shape):
    d = gk.to_device(np.zeros(12, np.float32))
    with pytest.raises(gk.LaunchError, match="reshape"):
        d.reshape(*shape)


def test_copy_astype_indexing_fill_and_iteration(backend):
    host = np.arange(10, dtype=np.float32) * 1.5
    d = gk.to_device(host)
    c = d.copy()
    c[0] = 100
    assert d[0] == 0 and c[0] == 100 and c.backend is d.backend
    assert isinstance(d[3], np.float32) and d[3] == 4.5
    np.testing.assert_array_equal(d[2:5], host[2:5])
    d[2:4] = [7, 8]
    np.testing.assert_array_equal(d.get()[:5], [0, 1.5, 7, 8, 6])
    i = d.astype(np.int64)
    assert i.dtype == np.int64 and i.tolist()[:5] == [0, 1, 7, 8, 6]
    assert [float(v) for v in d][:2] == [0.0, 1.5] and len(list(d)) == 10
    d.fill(2.5)
    assert (d.get() == 2.5).all() and np.asarray(d).dtype == np.float32


def test_a_view_of_an_unwritten_array_is_still_checked(on_simulator):
    """gk.empty's elements are unwritten until a launch writes them, also through a reshape."""

    @gk.kernel
    def read(a: gk.Array[gk.float32, 2], out: gk.Array[gk.float32]):
        out[0] = a[1, 1]

    e = gk.empty(12, np.float32)
    with pytest.raises(gk.UninitializedReadError):
        read[1, 1](e.reshape(3, 4), np.zeros(1, np.float32))
