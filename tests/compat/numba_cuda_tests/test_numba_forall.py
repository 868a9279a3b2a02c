"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_forall.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written there, only the import line
changed; the unittest methods became pytest functions run on every backend.  A negative count is a
``gk.LaunchError`` here (Numba's is a ``ValueError`` with its own message)."""

import numpy as np
import pytest

import gpukern as gk
from gpukern.numba import cuda


@cuda.jit
def foo(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_forall_1(backend):
    arr = np.arange(11)
    orig = arr.copy()
    foo.forall(arr.size)(arr)
    np.testing.assert_array_almost_equal(arr, orig + 1)


def test_forall_2(backend):
    @cuda.jit("void(float32, float32[:], float32[:])")
    def bar(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    x = np.arange(13, dtype=np.float32)
    y = np.arange(13, dtype=np.float32)
    oldy = y.copy()
    a = 1.234
    bar.forall(y.size)(a, x, y)
    np.testing.assert_array_almost_equal(y, a * x + oldy, decimal=3)


def test_forall_no_work(backend):
    arr = np.arange(11)
    foo.forall(0)(arr)


def test_forall_negative_work(backend):
    with pytest.raises(gk.LaunchError, match="count of threads"):
        foo.forall(-1)
