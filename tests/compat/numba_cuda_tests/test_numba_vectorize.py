"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_vectorize.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation): the ``TestCUDAVectorize`` cases as written there, each ``vector_add``
made by both ``cuda.vectorize`` and ``numba.vectorize(target="cuda")``, only the imports changed.  Left
out: the cases that need CuPy's own arrays and streams (``test_1d_async``, ``test_reduce_async``,
``test_manual_transfer``, ``test_ufunc_output_2d``) and the mock of the driver's copies
(``TestCUDAVectorizeNoTransfer``; its last case is kept with ``cuda.to_device`` data); sizes scaled
down for the simulator where marked."""

from collections import namedtuple
from functools import partial
from itertools import product

import numpy as np

from gpukern.numba import cuda, vectorize as numba_vectorize
from gpukern.numba.cuda import vectorize as cuda_vectorize
from gpukern.numba.cuda.types import int32, float32, float64

signatures = [
    int32(int32, int32),
    float32(float32, float32),
    float64(float64, float64),
]

dtypes = (np.float64, np.float32, np.int32)

orders = ("C", "F")

input_sizes = (8, 100, 2**10 + 1)

vectorize_funcs = [cuda_vectorize, partial(numba_vectorize, target="cuda")]

N = 10001  # scaled: 1000001 in the source


def test_scalar(backend):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        a = 1.2
        b = 2.3
        c = vector_add(a, b)
        assert c == a + b


def test_1d(backend):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        for ty in dtypes:
            data = np.array(np.random.random(N), dtype=ty)
            expected = np.add(data, data)
            actual = vector_add(data, data)
            np.testing.assert_allclose(expected, actual)
            assert actual.dtype == ty


def test_nd(backend):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        for nd, dtype, order in product(range(1, 8), dtypes, orders):
            shape = (4,) * nd
            data = np.random.random(shape).astype(dtype)
            data2 = np.array(data.T, order=order)

            expected = data + data2
            actual = vector_add(data, data2)
            np.testing.assert_allclose(expected, actual)
            assert actual.dtype == dtype


def test_output_arg(backend):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        A = np.arange(10, dtype=np.float32)
        B = np.arange(10, dtype=np.float32)

        expected = A + B
        actual = np.empty_like(A)
        vector_add(A, B, out=actual)

        np.testing.assert_allclose(expected, actual)
        assert expected.dtype == actual.dtype


def test_reduce(backend):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        dtype = np.int32

        for n in input_sizes:
            x = np.arange(n, dtype=dtype)
            expected = np.add.reduce(x)
            actual = vector_add.reduce(x)
            np.testing.assert_allclose(expected, actual)
            assert dtype == actual.dtype


def check_tuple_arg(a, b):
    for vectorize in vectorize_funcs:

        @vectorize(signatures)
        def vector_add(a, b):
            return a + b

        r = vector_add(a, b)
        np.testing.assert_equal(np.asarray(a) + np.asarray(b), r)


def test_tuple_arg(backend):
    a = (1.0, 2.0, 3.0)
    b = (4.0, 5.0, 6.0)
    check_tuple_arg(a, b)


def test_namedtuple_arg(backend):
    Point = namedtuple("Point", ("x", "y", "z"))
    a = Point(x=1.0, y=2.0, z=3.0)
    b = Point(x=4.0, y=5.0, z=6.0)
    check_tuple_arg(a, b)


def test_tuple_of_array_arg(backend):
    arr = np.arange(10, dtype=np.int32)
    a = (arr, arr + 1)
    b = (arr + 2, arr + 2)
    check_tuple_arg(a, b)


def test_tuple_of_namedtuple_arg(backend):
    Point = namedtuple("Point", ("x", "y", "z"))
    a = (Point(x=1.0, y=2.0, z=3.0), Point(x=1.5, y=2.5, z=3.5))
    b = (Point(x=4.0, y=5.0, z=6.0), Point(x=4.5, y=5.5, z=6.5))
    check_tuple_arg(a, b)


def test_namedtuple_of_array_arg(backend):
    xs1 = np.arange(10, dtype=np.int32)
    ys1 = xs1 + 2
    xs2 = np.arange(10, dtype=np.int32) * 2
    ys2 = xs2 + 1
    Points = namedtuple("Points", ("xs", "ys"))
    a = Points(xs=xs1, ys=ys1)
    b = Points(xs=xs2, ys=ys2)
    check_tuple_arg(a, b)


def test_name_attribute(backend):
    for vectorize in vectorize_funcs:

        @vectorize("f8(f8)")
        def bar(x):
            return x**2

        assert bar.__name__ == "bar"


def test_vectorize_with_device_data_no_transfer(backend):
    noise = np.random.randn(1, 3, 64, 64).astype(np.float32)
    device_noise = cuda.to_device(noise)
    for vectorize in vectorize_funcs:
        # Define and call a ufunc with data on the device
        @vectorize(["float32(float32)"])
        def func(noise):
            return noise + 1.0

        result = func(device_noise)

        # Verify the result is still on the device and has the right shape
        assert result.shape == device_noise.shape
        np.testing.assert_allclose(result.copy_to_host(), noise + 1.0)  # (added: its values)
