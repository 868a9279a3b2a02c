"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_array.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels and host code as written there, only the
import lines changed; the unittest methods became pytest functions run on every backend.  Left out:
``mapped_array_like`` (absent: docs/numba.md), the transpose-of-a-view case that Numba's device
arrays lay out unlike NumPy (gpukern follows NumPy, as Numba's simulator does), and ``carray`` /
``farray`` of raw pointers (no pointers in gpukern's kernels)."""

import numpy as np
import pytest

from gpukern.numba import cuda

ARRAY_LIKE_FUNCTIONS = (cuda.device_array_like, cuda.pinned_array_like)


def array_reshape1d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        got[i] = y[i]


def array_reshape2d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def array_reshape3d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                got[i, j, k] = y[i, j, k]


def array_reshape(arr, newshape):
    return arr.reshape(newshape)


def test_gpu_array_zero_length(backend):
    x = np.arange(0)
    dx = cuda.to_device(x)
    hx = dx.copy_to_host()
    assert x.shape == dx.shape and x.size == dx.size
    assert x.shape == hx.shape and x.size == hx.size


def test_null_shape(backend):
    null_shape = ()
    shape1 = cuda.device_array(()).shape
    shape2 = cuda.device_array_like(np.ndarray(())).shape
    assert shape1 == null_shape and shape2 == null_shape


def test_gpu_array_strided(backend):
    @cuda.jit("void(double[:])")
    def kernel(x):
        i = cuda.grid(1)
        if i < x.shape[0]:
            x[i] = i

    x = np.arange(10, dtype=np.double)
    y = np.ndarray(shape=10 * 8, buffer=x, dtype=np.byte)
    z = np.ndarray(9, buffer=y[4:-4], dtype=np.double)
    kernel[10, 10](z)
    assert np.allclose(z, list(range(9)))


def test_gpu_array_interleaved(backend):
    @cuda.jit("void(double[:], double[:])")
    def copykernel(x, y):
        i = cuda.grid(1)
        if i < x.shape[0]:
            x[i] = i
            y[i] = i

    x = np.arange(10, dtype=np.double)
    y = x[:-1:2]
    with pytest.raises(ValueError):
        cuda.devicearray.auto_device(y)


def test_auto_device_const(backend):
    d, _ = cuda.devicearray.auto_device(2)
    assert np.all(d.copy_to_host() == np.array(2))


def _test_array_like_same(like_func, array):
    array_like = like_func(array)
    assert array.shape == array_like.shape
    assert array.strides == array_like.strides
    assert array.dtype == array_like.dtype
    assert array.flags["C_CONTIGUOUS"] == array_like.flags["C_CONTIGUOUS"]
    assert array.flags["F_CONTIGUOUS"] == array_like.flags["F_CONTIGUOUS"]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [10, (10, 12), (10, 12, 14)])
def test_array_like(backend, shape, order):
    d_a = cuda.device_array(shape, order=order)
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_same(like_func, d_a)


def _test_array_like_view(like_func, view, d_view):
    nb_like = like_func(d_view)
    assert d_view.shape == nb_like.shape
    assert d_view.dtype == nb_like.dtype
    np_like = np.zeros_like(view)
    assert nb_like.strides == np_like.strides
    assert nb_like.flags["C_CONTIGUOUS"] == np_like.flags["C_CONTIGUOUS"]
    assert nb_like.flags["F_CONTIGUOUS"] == np_like.flags["F_CONTIGUOUS"]


def test_array_like_1d_view(backend):
    shape = 10
    view = np.zeros(shape)[::2]
    d_view = cuda.device_array(shape)[::2]
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_view(like_func, view, d_view)


def test_array_like_1d_view_f(backend):
    shape = 10
    view = np.zeros(shape, order="F")[::2]
    d_view = cuda.device_array(shape, order="F")[::2]
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_view(like_func, view, d_view)


def test_array_like_2d_view(backend):
    shape = (10, 12)
    view = np.zeros(shape)[::2, ::2]
    d_view = cuda.device_array(shape)[::2, ::2]
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_view(like_func, view, d_view)


def test_array_like_2d_view_f(backend):
    shape = (10, 12)
    view = np.zeros(shape, order="F")[::2, ::2]
    d_view = cuda.device_array(shape, order="F")[::2, ::2]
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_view(like_func, view, d_view)


def test_array_like_2d_view_transpose_simulator(backend):
    shape = (10, 12)
    view = np.zeros(shape)[::2, ::2].T
    d_view = cuda.device_array(shape)[::2, ::2].T
    for like_func in ARRAY_LIKE_FUNCTIONS:
        np_like = np.zeros_like(view)
        nb_like = like_func(d_view)
        assert d_view.shape == nb_like.shape and d_view.dtype == nb_like.dtype
        assert np_like.strides == nb_like.strides
        assert np_like.flags["C_CONTIGUOUS"] == nb_like.flags["C_CONTIGUOUS"]
        assert np_like.flags["F_CONTIGUOUS"] == nb_like.flags["F_CONTIGUOUS"]


def test_array_like_2d_view_f_transpose(backend):
    shape = (10, 12)
    view = np.zeros(shape, order="F")[::2, ::2].T
    d_view = cuda.device_array(shape, order="F")[::2, ::2].T
    for like_func in ARRAY_LIKE_FUNCTIONS:
        _test_array_like_view(like_func, view, d_view)


def test_issue_4628(backend):
    @cuda.jit
    def func(A, out):
        i = cuda.grid(1)
        out[i] = A[i] * 2

    n = 128
    a = np.ones((n,))
    d_a = cuda.to_device(a)
    result = np.zeros((n,))

    func[1, 128](a, result)
    func[1, 128](d_a, result)

    assert 1 == len(func.overloads)


@pytest.mark.refused("arr.reshape(newshape) inside a kernel: gpukern's views slice an array, they do not reshape it")
def test_array_reshape(backend):
    def check(pyfunc, kernelfunc, arr, shape):
        kernel = cuda.jit(kernelfunc)
        expected = pyfunc(arr, shape)
        got = np.zeros(expected.shape, dtype=arr.dtype)
        kernel[1, 1](arr, shape, got)
        np.testing.assert_array_equal(got, expected)

    arr = np.arange(24)
    check(array_reshape, array_reshape1d, arr, (24,))
    check(array_reshape, array_reshape2d, arr, (4, 6))
    check(array_reshape, array_reshape2d, arr, (8, 3))
    check(array_reshape, array_reshape3d, arr, (8, 1, 3))
