"""A local only Python literals are assigned is Python's int64 or float64 in Numba's and CuPy's
kernels (``Rules.literals = "wide"``), int32/float32 in gpukern's own (the GPU's natural widths)."""

from __future__ import annotations

import numpy as np

import gpukern as gk
from gpukern.cupy import jit
from gpukern.numba import cuda


def tenths(out):
    c = 0
    for _ in range(10):
        c += 0.1
    out[0] = c
    big = 1
    for _ in range(40):
        big *= 2
    out[1] = big


def test_numba_keeps_pythons_widths(backend):
    out = np.zeros(2)
    cuda.jit(tenths)[1, 1](out)
    exact = sum(0.1 for _ in range(10))
    # float64 sums (float32 ones end 1.2e-7 from 1; CUDA gave 1.0, Python 1 - 1.1e-16); int64 doubling
    assert abs(out[0] - exact) <= 2e-16 and out[1] == 2.0**40


def test_gpukerns_own_literals_stay_narrow():
    src = gk.kernel(tenths).source(np.zeros(2))
    assert "float c = " in src and "int big = " in src
    assert "double c = " in cuda.jit(tenths).source(np.zeros(2))


def test_cupy_keeps_pythons_widths():
    assert "double c = " in jit.rawkernel()(tenths).kernel.source(np.zeros(2))


def casts(x, out):
    out[0] = float(x[0]) / 3
    out[1] = int(x[0]) * 2**40
    z = complex(x[0], 1 / 3)
    out[2] = z.imag


def test_python_type_names_are_pythons_widths_in_numba(backend):
    x, out = np.array([1.0], np.float32), np.zeros(3)
    cuda.jit(casts)[1, 1](x, out)
    assert out[0] == 1 / 3 and out[1] == 2.0**40 and out[2] == 1 / 3  # float64, int64, complex128

    @gk.kernel
    def narrow(x, out):
        out[0] = float(x[0]) / 3
        z = complex(x[0], 1 / 3)
        out[2] = z.imag

    narrow[1, 1](x, out)
    assert out[0] == np.float32(1) / np.float32(3) and out[2] == np.float32(1 / 3)  # gpukern's: float32
