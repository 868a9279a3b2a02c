"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_libdevice.py``
(BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda, Inc.): the three kernels that check
libdevice functions' values (a tuple of one type, a tuple of two, a scalar), as written, only the
import lines changed.  Left out: the generated compilation test of every libdevice function, which
reads Numba's internal table (``numba.cuda.libdevicefuncs``) and its PTX (``compile_ptx``)."""

import numpy as np

from gpukern.numba import cuda
from gpukern.numba.cuda import libdevice


def use_sincos(s, c, x):
    i = cuda.grid(1)

    if i < len(x):
        sr, cr = libdevice.sincos(x[i])
        s[i] = sr
        c[i] = cr


def use_frexp(frac, exp, x):
    i = cuda.grid(1)

    if i < len(x):
        fracr, expr = libdevice.frexp(x[i])
        frac[i] = fracr
        exp[i] = expr


def use_sad(r, x, y, z):
    i = cuda.grid(1)

    if i < len(x):
        r[i] = libdevice.sad(x[i], y[i], z[i])


def test_sincos(backend):
    # Tests return of a UniTuple from a libdevice function
    arr = np.arange(100, dtype=np.float64)
    sres = np.zeros_like(arr)
    cres = np.zeros_like(arr)

    cufunc = cuda.jit(use_sincos)
    cufunc[4, 32](sres, cres, arr)

    np.testing.assert_allclose(np.cos(arr), cres)
    np.testing.assert_allclose(np.sin(arr), sres)


def test_frexp(backend):
    # Test return of a Tuple from a libdevice function
    arr = np.linspace(start=1.0, stop=10.0, num=100, dtype=np.float64)
    fracres = np.zeros_like(arr)
    expres = np.zeros(shape=arr.shape, dtype=np.int32)

    cufunc = cuda.jit(use_frexp)
    cufunc[4, 32](fracres, expres, arr)

    frac_expect, exp_expect = np.frexp(arr)

    np.testing.assert_array_equal(frac_expect, fracres)
    np.testing.assert_array_equal(exp_expect, expres)


def test_sad(backend):
    # Test return of a scalar from a libdevice function
    x = np.arange(0, 200, 2)
    y = np.arange(50, 150)
    z = np.arange(15, 115)
    r = np.zeros_like(x)

    cufunc = cuda.jit(use_sad)
    cufunc[4, 32](r, x, y, z)

    np.testing.assert_array_equal(np.abs(x - y) + z, r)
