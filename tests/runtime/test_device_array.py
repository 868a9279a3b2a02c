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


@gk.kernel
def mark(a: gk.Array[gk.float32, 2]):
    """Adds 1 + 10 row + col to each element of a 2-D array, wherever its memory lies."""
    i, j = gk.global_id(1), gk.global_id(0)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] += 1 + 10 * i + j


VIEWS = {
    "rows": np.s_[2:5],
    "one row kept 2-D": np.s_[1:2, :],
    "columns": np.s_[:, 3:7],
    "strided, reversed": np.s_[::2, ::-3],
    "ellipsis": np.s_[..., 1:3],
    "a block": np.s_[3:7, 2:9],
    "a new axis": np.s_[4, None, 1:6],
}


@pytest.mark.parametrize("key", VIEWS.values(), ids=VIEWS.keys())
def test_a_slice_is_a_view_a_kernel_writes_through(backend, key):
    """``d[key]`` shares ``d``'s memory as Numba's and CuPy's device arrays do: a kernel's writes
    to it land in ``d``, whether the device addresses it directly or the launch stages it."""
    host = np.random.default_rng(0).random((9, 12), dtype=np.float32)
    d = gk.to_device(host)
    view = d[key]
    want = host.copy()
    part = want[key]
    assert view.shape == part.shape and isinstance(view, gk.DeviceArray)
    part += 1 + 10 * np.arange(part.shape[0])[:, None] + np.arange(part.shape[1])
    mark[gk.grid_for(view.shape, (8, 8)), (8, 8)](view)
    np.testing.assert_array_equal(d.get(), want)
    np.testing.assert_array_equal(view.get(), want[key])
    np.testing.assert_array_equal(view.copy().get(), want[key])


def test_elements_and_index_arrays_are_read_as_numpy_reads_them(backend):
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = gk.to_device(host)
    assert d[2, 3] == 15 and isinstance(d[2, 3], np.float32) and d[-1][-1] == 23 and d[1][2] == 8
    np.testing.assert_array_equal(d[host > 20], [21, 22, 23])  # a mask: a host copy, as NumPy copies
    np.testing.assert_array_equal(d[[0, 3]], host[[0, 3]])
    col = d[:, 1]
    col[2] = -1  # through the view, into d
    assert d[2, 1] == -1 and col[2] == -1
    with pytest.raises(gk.LaunchError, match="out of bounds"):
        d[4, 0]


def test_copies_between_views_of_one_array_are_numpys(backend):
    host = np.arange(10, dtype=np.float32)
    d = gk.to_device(host)
    d[0:6].copy_to(d[2:8])  # overlapping: as NumPy's d[2:8] = d[0:6]
    host[2:8] = host[0:6].copy()
    np.testing.assert_array_equal(d.get(), host)
    d[::2].copy_to(d[1::2])
    host[1::2] = host[::2]
    np.testing.assert_array_equal(d.get(), host)


def test_what_a_strided_view_cannot_do_says_what_to_write_instead(backend):
    d = gk.to_device(np.zeros((4, 6), np.float32))
    view = d[:, ::2]
    assert view.staged
    with pytest.raises(gk.LaunchError, match=r"copy\(\)"):
        view.reshape(12)
    with pytest.raises(gk.LaunchError, match="synchronous get"):
        view.get_async()
    with pytest.raises(gk.InteropError, match=r"\.copy\(\)"):
        view.__dlpack__()

    @gk.kernel
    def both(a: gk.Array[gk.float32, 2], b: gk.Array[gk.float32, 2]):
        a[0, 0] = b[0, 1]

    with pytest.raises(gk.LaunchError, match="share one device array's memory"):
        both[1, 1](view, d)


def test_a_kernel_writing_through_a_view_marks_those_elements_written(on_simulator):
    """The simulator's written flags of a contiguous view are its array's: what a kernel wrote
    through ``e[4:8]`` reads as written through ``e``, the rest still as unwritten."""

    @gk.kernel
    def fill(a: gk.Array[gk.float32]):
        a[gk.global_id(0)] = 1.0

    @gk.kernel
    def read(a: gk.Array[gk.float32], at: gk.int32, out: gk.Array[gk.float32]):
        out[0] = a[at]

    e = gk.empty(12, np.float32)
    fill[1, 4](e[4:8])
    out = np.zeros(1, np.float32)
    read[1, 1](e, 5, out)
    assert out[0] == 1.0
    with pytest.raises(gk.UninitializedReadError):
        read[1, 1](e, 3, out)


def test_a_transpose_is_a_view_a_kernel_writes_through(backend):
    host = np.random.default_rng(1).random((5, 7), dtype=np.float32)
    d = gk.to_device(host)
    t = d.T
    assert t.shape == (7, 5) and d.transpose(1, 0).shape == (7, 5) and d.transpose().T.shape == (5, 7)
    mark[gk.grid_for(t.shape, (8, 8)), (8, 8)](t)
    want = host.T + (1 + 10 * np.arange(7)[:, None] + np.arange(5)).astype(np.float32)
    np.testing.assert_array_equal(d.get(), want.T)
    np.testing.assert_array_equal(t.get(), want)
    with pytest.raises(gk.LaunchError, match="axes don't match"):
        d.transpose(0)
