"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_reduction.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation): ``cuda.Reduce`` / ``cuda.reduce`` of lambdas as written there, only the
import line changed (``cp`` is the stand-in making gpukern device arrays); the larger sizes of the
source's list are scaled down for the simulator where marked."""

import numpy as np

import cupy_standin as cp
from gpukern.numba import cuda

# Avoid recompilation of the sum_reduce function by keeping it at global scope
sum_reduce = cuda.Reduce(lambda a, b: a + b)


def _sum_reduce(n):
    A = np.arange(n, dtype=np.float64) + 1
    expect = A.sum()
    got = sum_reduce(A)
    assert expect == got


def test_sum_reduce(backend):
    test_sizes = [1, 15, 16, 17, 127, 128, 129, 1023, 1024, 1025, 1536, 34567]  # scaled: without 1048576...
    for n in test_sizes:
        _sum_reduce(n)


def test_empty_array_host(backend):
    A = np.arange(0, dtype=np.float64) + 1
    expect = A.sum()
    got = sum_reduce(A)
    assert expect == got


def test_empty_array_device(backend):
    A = np.arange(0, dtype=np.float64) + 1
    dA = cp.asarray(A)
    expect = A.sum()
    got = sum_reduce(dA)
    assert expect == got


def test_prod_reduce(backend):
    prod_reduce = cuda.reduce(lambda a, b: a * b)
    A = np.arange(64, dtype=np.float64) + 1
    expect = A.prod()
    got = prod_reduce(A, init=1)
    np.testing.assert_allclose(expect, got)


def test_max_reduce(backend):
    max_reduce = cuda.Reduce(lambda a, b: max(a, b))
    A = np.arange(3717, dtype=np.float64) + 1
    expect = A.max()
    got = max_reduce(A, init=0)
    assert expect == got


def test_non_identity_init(backend):
    init = 3
    A = np.arange(10, dtype=np.float64) + 1
    expect = A.sum() + init
    got = sum_reduce(A, init=init)
    assert expect == got


def test_result_on_device(backend):
    A = np.arange(10, dtype=np.float64) + 1
    got = cp.zeros(1, dtype=np.float64)
    expect = A.sum()
    res = sum_reduce(A, res=got)
    assert res is None
    assert expect == got.get()[0]
