"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_operator.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written there, only the import lines
changed; the unittest methods became pytest functions run on every backend.  Left out: the tests that
read Numba's PTX (``inspect_lto_ptx``)."""

import itertools
import operator

import numpy as np
import pytest

from gpukern.numba import cuda
from gpukern.numba.core.types import f2, b1  # noqa: F401 - as the source imports them


def simple_fp16_div_scalar(ary, a, b):
    ary[0] = a / b


def simple_fp16add(ary, a, b):
    ary[0] = a + b


def simple_fp16_iadd(ary, a):
    ary[0] += a


def simple_fp16_isub(ary, a):
    ary[0] -= a


def simple_fp16_imul(ary, a):
    ary[0] *= a


def simple_fp16_idiv(ary, a):
    ary[0] /= a


def simple_fp16sub(ary, a, b):
    ary[0] = a - b


def simple_fp16mul(ary, a, b):
    ary[0] = a * b


def simple_fp16neg(ary, a):
    ary[0] = -a


def simple_fp16abs(ary, a):
    ary[0] = abs(a)


def simple_fp16_gt(ary, a, b):
    ary[0] = a > b


def simple_fp16_ge(ary, a, b):
    ary[0] = a >= b


def simple_fp16_lt(ary, a, b):
    ary[0] = a < b


def simple_fp16_le(ary, a, b):
    ary[0] = a <= b


def simple_fp16_eq(ary, a, b):
    ary[0] = a == b


def simple_fp16_ne(ary, a, b):
    ary[0] = a != b


@cuda.jit("b1(f2, f2)", device=True)
def hlt_func_1(x, y):
    return x < y


@cuda.jit("b1(f2, f2)", device=True)
def hlt_func_2(x, y):
    return x < y


def multiple_hcmp_1(r, a, b, c):
    # float16 predicates used in two separate functions
    r[0] = hlt_func_1(a, b) and hlt_func_2(b, c)


def multiple_hcmp_2(r, a, b, c):
    # The same float16 predicate used in the caller and callee
    r[0] = hlt_func_1(a, b) and b < c


def multiple_hcmp_3(r, a, b, c):
    # Different float16 predicates used in the caller and callee
    r[0] = hlt_func_1(a, b) and c >= b


def multiple_hcmp_4(r, a, b, c):
    # The same float16 predicates used twice in a function
    r[0] = a < b and b < c


def multiple_hcmp_5(r, a, b, c):
    # Different float16 predicates used in a function
    r[0] = a < b and c >= b


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)


def operator_template(op):
    @cuda.jit
    def foo(a, b):
        i = 0
        a[i] = op(a[i], b[i])

    a = np.ones(1)
    b = np.ones(1)
    res = a.copy()
    foo[1, 1](res, b)

    np.testing.assert_equal(res, op(a, b))


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv])
def test_operator(backend, op):
    operator_template(op)


BINARY = (simple_fp16add, simple_fp16sub, simple_fp16mul, simple_fp16_div_scalar)
BINARY_OPS = (operator.add, operator.sub, operator.mul, operator.truediv)
COMPARE = (simple_fp16_gt, simple_fp16_ge, simple_fp16_lt, simple_fp16_le, simple_fp16_eq, simple_fp16_ne)
COMPARE_OPS = (operator.gt, operator.ge, operator.lt, operator.le, operator.eq, operator.ne)
MULTIPLE = (multiple_hcmp_1, multiple_hcmp_2, multiple_hcmp_3, multiple_hcmp_4, multiple_hcmp_5)


def test_fp16_binary(backend):
    for fn, op in zip(BINARY, BINARY_OPS):
        kernel = cuda.jit("void(f2[:], f2, f2)")(fn)
        got = np.zeros(1, dtype=np.float16)
        arg1 = np.random.random(1).astype(np.float16)
        arg2 = np.random.random(1).astype(np.float16)
        kernel[1, 1](got, arg1[0], arg2[0])
        expected = op(arg1, arg2)
        np.testing.assert_allclose(got, expected)


def test_mixed_fp16_binary_arithmetic(backend):
    types = (np.int8, np.int16, np.int32, np.int64, np.float32, np.float64)
    for (fn, op), ty in itertools.product(zip(BINARY, BINARY_OPS), types):
        kernel = cuda.jit(fn, lto=True)
        arg1 = np.random.random(1).astype(np.float16)
        arg2 = (np.random.random(1) * 100).astype(ty)
        res_ty = np.result_type(np.float16, ty)
        got = np.zeros(1, dtype=res_ty)
        kernel[1, 1](got, arg1[0], arg2[0])
        expected = op(arg1, arg2)
        np.testing.assert_allclose(got, expected)


def test_fp16_inplace_binary(backend):
    functions = (simple_fp16_iadd, simple_fp16_isub, simple_fp16_imul, simple_fp16_idiv)
    ops = (operator.iadd, operator.isub, operator.imul, operator.itruediv)
    for fn, op in zip(functions, ops):
        kernel = cuda.jit("void(f2[:], f2)")(fn)
        got = np.random.random(1).astype(np.float16)
        expected = got.copy()
        arg = np.random.random(1).astype(np.float16)[0]
        kernel[1, 1](got, arg)
        op(expected, arg)
        np.testing.assert_allclose(got, expected)


def test_fp16_unary(backend):
    for fn, op in zip((simple_fp16neg, simple_fp16abs), (operator.neg, operator.abs)):
        kernel = cuda.jit("void(f2[:], f2)")(fn)
        got = np.zeros(1, dtype=np.float16)
        arg1 = np.random.random(1).astype(np.float16)
        kernel[1, 1](got, arg1[0])
        expected = op(arg1)
        np.testing.assert_allclose(got, expected)


def test_fp16_comparison(backend):
    for fn, op in zip(COMPARE, COMPARE_OPS):
        kernel = cuda.jit("void(b1[:], f2, f2)")(fn)
        got = np.zeros(1, dtype=np.bool_)
        arg1 = np.random.random(1).astype(np.float16)
        arg2 = np.random.random(1).astype(np.float16)
        kernel[1, 1](got, arg1[0], arg2[0])
        expected = op(arg1, arg2)
        assert got[0] == expected


def test_mixed_fp16_comparison(backend):
    types = (np.int8, np.int16, np.int32, np.int64, np.float32, np.float64)
    for (fn, op), ty in itertools.product(zip(COMPARE, COMPARE_OPS), types):
        kernel = cuda.jit(fn)
        got = np.zeros(1, dtype=np.bool_)
        arg1 = np.random.random(1).astype(np.float16)
        arg2 = (np.random.random(1) * 100).astype(ty)
        kernel[1, 1](got, arg1[0], arg2[0])
        expected = op(arg1, arg2)
        assert got[0] == expected


@pytest.mark.parametrize("arg3, truth", [(4.0, True), (1.0, False)])
def test_multiple_float16_comparisons(backend, arg3, truth):
    for fn in MULTIPLE:
        compiled = cuda.jit("void(b1[:], f2, f2, f2)")(fn)
        ary = np.zeros(1, dtype=np.bool_)
        compiled[1, 1](ary, np.float16(2.0), np.float16(3.0), np.float16(arg3))
        assert ary[0] == truth
