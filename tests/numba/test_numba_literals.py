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
    assert out[0] == exact and out[1] == 2.0**40  # float64 sums; int64 doubling


def test_gpukerns_own_literals_stay_narrow():
    src = gk.kernel(tenths).source(np.zeros(2))
    assert "float c = " in src and "int big = " in src
    assert "double c = " in cuda.jit(tenths).source(np.zeros(2))


def test_cupy_keeps_pythons_widths():
    assert "double c = " in jit.rawkernel()(tenths).kernel.source(np.zeros(2))
