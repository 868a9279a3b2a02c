"""``round(x, ndigits)`` (issue 32; a Numba test ported in tests/ported waited on it): Numba's algorithm
in float64 on every backend, ``ndigits`` a constant or known at run time, of either sign, past 1e22."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, float64, int32, kernel


@kernel
def rounded(x: Array[float64], y: Array[float32], o64: Array[float64], o32: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < x.shape[0]:
        o64[i] = round(x[i], n)
        o32[i] = round(y[i], n)


@kernel
def rounded_by_a_constant(x: Array[float64], out: Array[float64]):
    out[0] = round(x[0], 2)
    out[1] = round(2.675, 2)  # a constant: the same algorithm


def reference(x: float, nd: int) -> float:
    """Scale by ten to the ndigits in float64 (two factors past 1e22), round half to even, scale back;
    an overflowing scale leaves x; a negative ndigits divides."""
    if math.isinf(x) or math.isnan(x):
        return x
    if nd >= 0:
        p1, p2 = (10.0 ** (nd - 22), 1e22) if nd > 22 else (10.0**nd, 1.0)
        y = (x * p1) * p2
        return x if math.isinf(y) else (float(np.rint(y)) / p2) / p1
    p1 = 10.0 ** (-nd)
    return float(np.rint(x / p1)) * p1


X = np.array([2.675, 1.005, -3.14159, 1234.5678, 0.5, 1.5, 2.5, np.inf, np.nan, 1e300, -0.0, 1.23456789e15])


@pytest.mark.parametrize("nd", [2, 0, -2, 1, 3, -1, 22, 23, 25, -25])
def test_round_to_digits_on_every_backend(backend, nd):
    with np.errstate(over="ignore"):  # 1e300 becomes inf in float32
        y = X.astype(np.float32)
        o64, o32 = np.zeros_like(X), np.zeros_like(y)
        rounded[1, 16](X, y, o64, o32, np.int32(nd))
        want32 = np.array([reference(float(v), nd) for v in y]).astype(np.float32)
    np.testing.assert_array_equal(o64, [reference(float(v), nd) for v in X])
    np.testing.assert_array_equal(o32, want32)


def test_a_constant_ndigits_and_the_documented_difference_from_python(backend):
    out = np.zeros(2)
    rounded_by_a_constant[1, 1](np.array([1.005]), out)
    assert out.tolist() == [reference(1.005, 2), 2.68] and round(2.675, 2) == 2.67  # Python's is decimal


@kernel
def rounded_integer(a: Array[gk.int64], n: int32):
    a[0] = round(a[0], n)


def test_an_integer_takes_ndigits_0_only():
    with pytest.raises(gk.KernelTypeError, match="of an integer in a kernel takes ndigits 0"):
        rounded_integer.source(np.zeros(1, np.int64), 1)
