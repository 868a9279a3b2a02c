"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/``: ``test_nondet.py``,
``test_py2_div_issue.py`` and ``test_frexp_ldexp.py`` (BSD-2-Clause, Copyright NVIDIA Corporation and
Anaconda, Inc.): the kernels as written there, only the import lines changed (``cupy`` as
``cupy_standin``); the unittest methods became pytest functions run on every backend."""

import math

import cupy_standin as cp
import numpy as np
import pytest

from gpukern.numba import cuda
from gpukern.numba.cuda import config, float32, int32, void
from gpukern.numba.types import float64


def generate_input(n):
    A = cp.array(np.arange(n * n).reshape(n, n), dtype=np.float32)
    B = cp.array(np.arange(n) + 0, dtype=A.dtype)
    return A, B


def test_for_pre(backend):
    @cuda.jit(void(float32[:, :], float32[:, :], float32[:]))
    def diagproduct(c, a, b):
        startX, startY = cuda.grid(2)
        gridX = cuda.gridDim.x * cuda.blockDim.x
        gridY = cuda.gridDim.y * cuda.blockDim.y
        height = c.shape[0]
        width = c.shape[1]

        for x in range(startX, width, (gridX)):
            for y in range(startY, height, (gridY)):
                c[y, x] = a[y, x] * b[x]

    N = 8

    dA, dB = generate_input(N)
    dF = cp.empty(dA.shape, dtype=dA.dtype)

    blockdim = (32, 8)
    griddim = (1, 1)

    diagproduct[griddim, blockdim](dF, dA, dB)

    E = np.dot(
        dA.get() if not config.ENABLE_CUDASIM else dA,
        np.diag(dB.get() if not config.ENABLE_CUDASIM else dB),
    )
    np.testing.assert_array_almost_equal(dF.get() if not config.ENABLE_CUDASIM else dF, E)


def test_py2_div_issue(backend):
    @cuda.jit(void(float32[:], float32[:], float32[:], int32))
    def preCalc(y, yA, yB, numDataPoints):
        i = cuda.grid(1)
        # k is unused, but may be part of the trigger for the bug this
        # tests for.
        k = i % numDataPoints  # noqa: F841

        ans = float32(1.001 * float32(i))

        y[i] = ans
        yA[i] = ans * 1.0
        yB[i] = ans / 1.0

    numDataPoints = 15

    y = np.zeros(numDataPoints, dtype=np.float32)
    yA = np.zeros(numDataPoints, dtype=np.float32)
    yB = np.zeros(numDataPoints, dtype=np.float32)
    preCalc[1, 15](y, yA, yB, numDataPoints)

    assert np.all(y == yA)
    assert np.all(y == yB)


def simple_frexp(aryx, aryexp, arg):
    aryx[0], aryexp[0] = math.frexp(arg)


def simple_ldexp(aryx, arg, exp):
    aryx[0] = math.ldexp(arg, exp)


@pytest.mark.parametrize("nptype, nbtype", [(np.float32, float32), (np.float64, float64)], ids=["f4", "f8"])
def test_frexp(backend, nptype, nbtype):
    compiled = cuda.jit(void(nbtype[:], int32[:], nbtype))(simple_frexp)
    arg = 3.1415
    aryx = np.zeros(1, dtype=nptype)
    aryexp = np.zeros(1, dtype=np.int32)
    compiled[1, 1](aryx, aryexp, arg)
    np.testing.assert_array_equal(aryx, nptype(0.785375))
    assert aryexp == 2

    arg = np.inf
    compiled[1, 1](aryx, aryexp, arg)
    np.testing.assert_array_equal(aryx, nptype(np.inf))
    assert aryexp == 0  # np.frexp gives -1

    arg = np.nan
    compiled[1, 1](aryx, aryexp, arg)
    np.testing.assert_array_equal(aryx, nptype(np.nan))
    assert aryexp == 0  # np.frexp gives -1


@pytest.mark.parametrize("nptype, nbtype", [(np.float32, float32), (np.float64, float64)], ids=["f4", "f8"])
def test_ldexp(backend, nptype, nbtype):
    compiled = cuda.jit(void(nbtype[:], nbtype, int32))(simple_ldexp)
    arg = 0.785375
    exp = 2
    aryx = np.zeros(1, dtype=nptype)
    compiled[1, 1](aryx, arg, exp)
    np.testing.assert_array_equal(aryx, nptype(3.1415))

    arg = np.inf
    compiled[1, 1](aryx, arg, exp)
    np.testing.assert_array_equal(aryx, nptype(np.inf))

    arg = np.nan
    compiled[1, 1](aryx, arg, exp)
    np.testing.assert_array_equal(aryx, nptype(np.nan))
