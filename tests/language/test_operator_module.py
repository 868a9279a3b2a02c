"""Python's ``operator`` module in a kernel: ``operator.add(a, b)`` means ``a + b`` (one meaning: the
front end lowers it as the operator), and so for every arithmetic, bitwise, comparison and unary one."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, float64, int64

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.iadd, operator.imul, operator.lt, operator.le, operator.eq, operator.ne,
          operator.ge, operator.gt]  # fmt: skip
BITS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift, operator.ixor]
UNARY = [operator.neg, operator.pos, operator.abs, operator.not_]


def make(op):
    @gk.kernel
    def k(a: Array[float64], b: Array[float64], out: Array[float64]):
        i = gk.global_id(0)
        out[i] = op(a[i], b[i])

    return k


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.__name__)
def test_binary_operator_functions_are_the_operators(backend, op):
    a = np.array([1.5, -2.0, 7.0, 3.0])
    b = np.array([0.5, 3.0, 2.0, 3.0])
    out = np.zeros(4)
    make(op)[1, 4](a, b, out)
    np.testing.assert_allclose(out, [float(op(x, y)) for x, y in zip(a, b)])


@pytest.mark.parametrize("op", BITS, ids=lambda o: o.__name__)
def test_bitwise_operator_functions(backend, op):
    @gk.kernel
    def k(a: Array[int64], b: Array[int64], out: Array[int64]):
        i = gk.global_id(0)
        out[i] = op(a[i], b[i])

    a, b, out = np.array([12, 7, -5, 1 << 20]), np.array([3, 1, 2, 4]), np.zeros(4, np.int64)
    k[1, 4](a, b, out)
    np.testing.assert_array_equal(out, [op(int(x), int(y)) for x, y in zip(a, b)])


@pytest.mark.parametrize("op", UNARY, ids=lambda o: o.__name__)
def test_unary_operator_functions(backend, op):
    @gk.kernel
    def k(a: Array[float64], out: Array[float64]):
        i = gk.global_id(0)
        out[i] = op(a[i])

    a, out = np.array([1.5, -2.0, 0.0]), np.zeros(3)
    k[1, 3](a, out)
    np.testing.assert_array_equal(out, [float(op(x)) for x in a])


def test_an_operator_function_takes_its_operands_count():
    @gk.kernel
    def k(a: Array[float64]):
        a[0] = operator.add(a[0])

    with pytest.raises(gk.KernelTypeError, match="operator.add"):
        k.source(np.zeros(1))


@gk.kernel
def numpy_named(a: Array[float64], b: Array[float64], out: Array[float64], lt: Array[gk.bool_]):
    i = gk.global_id(0)
    out[i] = np.subtract(np.multiply(a[i], b[i]), np.negative(b[i]))
    lt[i] = np.less(a[i], b[i])


def test_numpys_operator_ufuncs_are_the_operators(backend):
    a, b = np.array([1.5, -2.0, 3.0]), np.array([2.0, 0.5, 3.0])
    out, lt = np.zeros(3), np.zeros(3, bool)
    numpy_named[1, 3](a, b, out, lt)
    np.testing.assert_array_equal(out, a * b + b)
    np.testing.assert_array_equal(lt, a < b)


@gk.kernel
def whole(x: Array[float32], y: Array[float32], r: Array[float32], s: Array[float32]):
    np.sin(x, r)  # every element, by the calling thread (NumPy's ufunc with an output array)
    np.add(x, y, out=s)
    np.multiply(s, 2.0, s)


def test_a_ufunc_into_an_output_array_computes_every_element(backend):
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    y = np.ones(7, np.float32)
    r, s = np.zeros(7, np.float32), np.zeros(7, np.float32)
    whole[1, 1](x, y, r, s)
    np.testing.assert_allclose(r, np.sin(x), rtol=1e-6)
    np.testing.assert_array_equal(s, (x + y) * 2)


def test_a_ufunc_into_a_2d_array_is_refused():
    @gk.kernel
    def k(m: Array[float32, 2], out: Array[float32, 2]):
        np.sin(m, out)

    with pytest.raises(gk.KernelTypeError, match="takes 1-D arrays"):
        k.source(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32))
