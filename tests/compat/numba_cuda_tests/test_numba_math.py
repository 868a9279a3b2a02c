"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_math.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written there, only the import lines
changed; the unittest class's templates became functions and its methods pytest functions run on every
backend.  The float16 template's rtol (1e-3) and the rest as the source has them."""

import math
import sys

import numpy as np
import pytest

from gpukern.numba import cuda, float32, float64, int32, int64, vectorize, void
from gpukern.numba.cuda.np import numpy_support


def math_acos(A, B):
    i = cuda.grid(1)
    B[i] = math.acos(A[i])


def math_asin(A, B):
    i = cuda.grid(1)
    B[i] = math.asin(A[i])


def math_atan(A, B):
    i = cuda.grid(1)
    B[i] = math.atan(A[i])


def math_acosh(A, B):
    i = cuda.grid(1)
    B[i] = math.acosh(A[i])


def math_asinh(A, B):
    i = cuda.grid(1)
    B[i] = math.asinh(A[i])


def math_atanh(A, B):
    i = cuda.grid(1)
    B[i] = math.atanh(A[i])


def math_cos(A, B):
    i = cuda.grid(1)
    B[i] = math.cos(A[i])


def math_sin(A, B):
    i = cuda.grid(1)
    B[i] = math.sin(A[i])


def math_tan(A, B):
    i = cuda.grid(1)
    B[i] = math.tan(A[i])


def math_cosh(A, B):
    i = cuda.grid(1)
    B[i] = math.cosh(A[i])


def math_sinh(A, B):
    i = cuda.grid(1)
    B[i] = math.sinh(A[i])


def math_tanh(A, B):
    i = cuda.grid(1)
    B[i] = math.tanh(A[i])


def math_atan2(A, B, C):
    i = cuda.grid(1)
    C[i] = math.atan2(A[i], B[i])


def math_exp(A, B):
    i = cuda.grid(1)
    B[i] = math.exp(A[i])


def math_exp2(A, B):
    i = cuda.grid(1)
    B[i] = math.exp2(A[i])


def math_erf(A, B):
    i = cuda.grid(1)
    B[i] = math.erf(A[i])


def math_erfc(A, B):
    i = cuda.grid(1)
    B[i] = math.erfc(A[i])


def math_expm1(A, B):
    i = cuda.grid(1)
    B[i] = math.expm1(A[i])


def math_fabs(A, B):
    i = cuda.grid(1)
    B[i] = math.fabs(A[i])


def math_gamma(A, B):
    i = cuda.grid(1)
    B[i] = math.gamma(A[i])


def math_lgamma(A, B):
    i = cuda.grid(1)
    B[i] = math.lgamma(A[i])


def math_log(A, B):
    i = cuda.grid(1)
    B[i] = math.log(A[i])


def math_log2(A, B):
    i = cuda.grid(1)
    B[i] = math.log2(A[i])


def math_log10(A, B):
    i = cuda.grid(1)
    B[i] = math.log10(A[i])


def math_log1p(A, B):
    i = cuda.grid(1)
    B[i] = math.log1p(A[i])


def math_remainder(A, B, C):
    i = cuda.grid(1)
    C[i] = math.remainder(A[i], B[i])


def math_sqrt(A, B):
    i = cuda.grid(1)
    B[i] = math.sqrt(A[i])


def math_hypot(A, B, C):
    i = cuda.grid(1)
    C[i] = math.hypot(A[i], B[i])


def math_pow(A, B, C):
    i = cuda.grid(1)
    C[i] = math.pow(A[i], B[i])


def math_ceil(A, B):
    i = cuda.grid(1)
    B[i] = math.ceil(A[i])


def math_floor(A, B):
    i = cuda.grid(1)
    B[i] = math.floor(A[i])


def math_copysign(A, B, C):
    i = cuda.grid(1)
    C[i] = math.copysign(A[i], B[i])


def math_fmod(A, B, C):
    i = cuda.grid(1)
    C[i] = math.fmod(A[i], B[i])


def math_modf(A, B, C):
    i = cuda.grid(1)
    B[i], C[i] = math.modf(A[i])


def math_isnan(A, B):
    i = cuda.grid(1)
    B[i] = math.isnan(A[i])


def math_isinf(A, B):
    i = cuda.grid(1)
    B[i] = math.isinf(A[i])


def math_isfinite(A, B):
    i = cuda.grid(1)
    B[i] = math.isfinite(A[i])


def math_degrees(A, B):
    i = cuda.grid(1)
    B[i] = math.degrees(A[i])


def math_radians(A, B):
    i = cuda.grid(1)
    B[i] = math.radians(A[i])


def math_trunc(A, B):
    i = cuda.grid(1)
    B[i] = math.trunc(A[i])


def math_pow_binop(A, B, C):
    i = cuda.grid(1)
    C[i] = A[i] ** B[i]


def math_mod_binop(A, B, C):
    i = cuda.grid(1)
    C[i] = A[i] % B[i]


# ---------------------------------------------------------------- the source's templates


def unary_template(func, npfunc, npdtype, nprestype, start, stop):
    nelem = 50
    A = np.linspace(start, stop, nelem).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    arytype = numpy_support.from_dtype(npdtype)[::1]
    restype = numpy_support.from_dtype(nprestype)[::1]
    cfunc = cuda.jit((arytype, restype))(func)
    cfunc[1, nelem](A, B)
    if npdtype == np.float64:
        rtol = 1e-13
    elif npdtype == np.float32:
        rtol = 1e-6
    else:
        rtol = 1e-3
    np.testing.assert_allclose(npfunc(A), B, rtol=rtol)


def unary_float16(func, npfunc, start=0, stop=1):
    unary_template(func, npfunc, np.float16, np.float16, start, stop)


def unary_float32(func, npfunc, start=0, stop=1):
    unary_template(func, npfunc, np.float32, np.float32, start, stop)


def unary_float64(func, npfunc, start=0, stop=1):
    unary_template(func, npfunc, np.float64, np.float64, start, stop)


def unary_int64(func, npfunc, start=0, stop=50):
    unary_template(func, npfunc, np.int64, np.float64, start, stop)


def unary_uint64(func, npfunc, start=0, stop=50):
    unary_template(func, npfunc, np.uint64, np.float64, start, stop)


def unary_all(func, npfunc, start=None, stop=None, istart=None, istop=None):
    f = {} if start is None else {"start": start}
    f |= {} if stop is None else {"stop": stop}
    i = {} if istart is None else {"start": istart}
    i |= {} if istop is None else {"stop": istop}
    unary_float32(func, npfunc, **f)
    unary_float64(func, npfunc, **f)
    unary_int64(func, npfunc, **i)
    unary_uint64(func, npfunc, **i)


def unary_bool_special_values(func, npfunc, npdtype, npmtype):
    fi = np.finfo(npdtype)
    denorm = fi.tiny / 4
    A = np.array([0.0, denorm, fi.tiny, 0.5, 1.0, fi.max, np.inf, np.nan], dtype=npdtype)
    B = np.empty_like(A, dtype=np.int32)
    cfunc = cuda.jit((npmtype[::1], int32[::1]))(func)
    cfunc[1, A.size](A, B)
    np.testing.assert_array_equal(B, npfunc(A))
    cfunc[1, A.size](-A, B)
    np.testing.assert_array_equal(B, npfunc(-A))


def unary_bool_template(func, npfunc, npdtype, npmtype, start, stop):
    nelem = 50
    A = np.linspace(start, stop, nelem).astype(npdtype)
    B = np.empty(A.shape, dtype=np.int32)
    iarytype = npmtype[::1]
    oarytype = int32[::1]
    cfunc = cuda.jit((iarytype, oarytype))(func)
    cfunc[1, nelem](A, B)
    np.testing.assert_allclose(npfunc(A), B)


def unary_bool_all(func, npfunc):
    unary_template(func, npfunc, np.float32, np.float32, 0, 1)
    unary_template(func, npfunc, np.float64, np.float64, 0, 1)
    unary_template(func, npfunc, np.int32, np.int32, 0, 49)
    unary_template(func, npfunc, np.int64, np.int64, 0, 49)
    unary_bool_special_values(func, npfunc, np.float32, float32)
    unary_bool_special_values(func, npfunc, np.float64, float64)


def binary_template(func, npfunc, npdtype, nprestype, start, stop):
    nelem = 50
    A = np.linspace(start, stop, nelem).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    arytype = numpy_support.from_dtype(npdtype)[::1]
    restype = numpy_support.from_dtype(nprestype)[::1]
    cfunc = cuda.jit((arytype, arytype, restype))(func)
    cfunc[1, nelem](A, A, B)
    np.testing.assert_allclose(npfunc(A, A), B)


def binary_floats(func, npfunc, start=0, stop=1):
    binary_template(func, npfunc, np.float32, np.float32, start, stop)
    binary_template(func, npfunc, np.float64, np.float64, start, stop)


def binary_ints(func, npfunc, start=0, stop=50):
    binary_template(func, npfunc, np.int64, np.float64, start, stop)
    binary_template(func, npfunc, np.uint64, np.float64, start, stop)


# ---------------------------------------------------------------- the source's tests

UNARY = [  # (kernel, reference, float range, integer range), as the source's methods give them
    (math_acos, np.arccos, (None, None), (0, 0)),
    (math_asin, np.arcsin, (None, None), (0, 0)),
    (math_atan, np.arctan, (None, None), (None, None)),
    (math_acosh, np.arccosh, (1, 2), (1, 2)),
    (math_asinh, np.arcsinh, (None, None), (None, None)),
    (math_atanh, np.arctanh, (0, 0.9), (0, 0.9)),
    (math_cos, np.cos, (None, None), (None, None)),
    (math_sin, np.sin, (None, None), (None, None)),
    (math_tan, np.tan, (None, None), (None, None)),
    (math_cosh, np.cosh, (None, None), (None, None)),
    (math_sinh, np.sinh, (None, None), (None, None)),
    (math_tanh, np.tanh, (None, None), (None, None)),
    (math_exp, np.exp, (None, None), (None, None)),
    (math_exp2, np.exp2, (None, None), (None, None)),
    (math_expm1, np.expm1, (None, None), (None, None)),
    (math_fabs, np.fabs, (-1, None), (-1, None)),
    (math_log, np.log, (1, None), (1, None)),
    (math_log2, np.log2, (1, None), (1, None)),
    (math_log10, np.log10, (1, None), (1, None)),
    (math_log1p, np.log1p, (None, None), (None, None)),
    (math_sqrt, np.sqrt, (None, None), (None, None)),
    (math_ceil, np.ceil, (None, None), (None, None)),
    (math_floor, np.floor, (None, None), (None, None)),
]


@pytest.mark.parametrize("func, npfunc, fr, ir", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_math_unary(backend, func, npfunc, fr, ir):
    unary_all(func, npfunc, *fr, *ir)


@pytest.mark.parametrize("name, start, istart", [("erf", 0, 0), ("erfc", 0, 0), ("gamma", 0.1, 1), ("lgamma", 0.1, 1)])
def test_math_special_functions(backend, name, start, istart):
    fn = getattr(math, name)

    @vectorize
    def ufunc(x):
        return fn(x)

    kern = globals()[f"math_{name}"]
    unary_float32(kern, ufunc, start=start)
    unary_float64(kern, ufunc, start=start)
    unary_int64(kern, ufunc, start=istart)
    unary_uint64(kern, ufunc, start=istart)


def test_math_fp16(backend):
    unary_float16(math_sin, np.sin)
    unary_float16(math_cos, np.cos)
    unary_float16(math_exp, np.exp)
    unary_float16(math_log, np.log, start=1)
    unary_float16(math_log2, np.log2, start=1)
    unary_float16(math_log10, np.log10, start=1)
    unary_float16(math_fabs, np.fabs, start=-1)
    unary_float16(math_sqrt, np.sqrt)
    unary_float16(math_ceil, np.ceil)
    unary_float16(math_floor, np.floor)
    if sys.version_info >= (3, 11):
        unary_float16(math_exp2, np.exp2)


def test_math_fp16_trunc(backend):
    unary_float16(math_trunc, np.trunc)


def test_math_atan2(backend):
    binary_floats(math_atan2, np.arctan2)
    binary_ints(math_atan2, np.arctan2)


def test_math_remainder(backend):
    binary_floats(math_remainder, np.remainder, start=1e-11)
    binary_ints(math_remainder, np.remainder, start=1)


def test_math_remainder_0_0(backend):
    @cuda.jit(void(float64[::1], int64, int64))
    def test_0_0(r, x, y):
        r[0] = math.remainder(x, y)

    r = np.zeros(1, np.float64)
    test_0_0[1, 1](r, 0, 0)
    assert np.isnan(r[0])


def test_math_hypot(backend):
    binary_floats(math_hypot, np.hypot)
    binary_ints(math_hypot, np.hypot)


def pow_template_int32(npdtype):
    nelem = 50
    A = np.linspace(0, 25, nelem).astype(npdtype)
    B = np.arange(nelem, dtype=np.int32)
    C = np.empty_like(A)
    arytype = numpy_support.from_dtype(npdtype)[::1]
    cfunc = cuda.jit((arytype, int32[::1], arytype))(math_pow)
    cfunc[1, nelem](A, B, C)
    np.testing.assert_allclose(np.power(A, B).astype(npdtype), C, rtol=1e-6)


def test_math_pow(backend):
    binary_floats(math_pow, np.power)
    pow_template_int32(np.float32)
    pow_template_int32(np.float64)


def test_math_pow_binop(backend):
    binary_floats(math_pow_binop, np.power)


def test_math_ceil_floor_trunc(backend):
    unary_float64(math_trunc, np.trunc)
    unary_float32(math_trunc, np.trunc)
    unary_int64(math_trunc, np.trunc)
    unary_uint64(math_trunc, np.trunc)


def test_math_copysign(backend):
    binary_floats(math_copysign, np.copysign, start=-1)


def test_math_modf(backend):
    def modf_template_nan(dtype, arytype):
        A = np.array([np.nan], dtype=dtype)
        B = np.zeros_like(A)
        C = np.zeros_like(A)
        cfunc = cuda.jit((arytype, arytype, arytype))(math_modf)
        cfunc[1, len(A)](A, B, C)
        assert np.isnan(B) and np.isnan(C)

    def modf_template_compare(A, dtype, arytype):
        A = A.astype(dtype)
        B = np.zeros_like(A)
        C = np.zeros_like(A)
        cfunc = cuda.jit((arytype, arytype, arytype))(math_modf)
        cfunc[1, len(A)](A, B, C)
        D, E = np.modf(A)
        assert np.array_equal(B, D) and np.array_equal(C, E)

    for dtype, arytype in ((np.float32, float32[:]), (np.float64, float64[:])):
        modf_template_compare(np.linspace(0, 10, 50), dtype=dtype, arytype=arytype)
        modf_template_compare(np.array([np.inf, -np.inf]), dtype=dtype, arytype=arytype)
        modf_template_nan(dtype=dtype, arytype=arytype)


def test_math_fmod(backend):
    binary_floats(math_fmod, np.fmod, start=1)


def test_math_mod_binop(backend):
    binary_floats(math_mod_binop, np.fmod, start=1)


@pytest.mark.parametrize("func, npfunc", [(math_isnan, np.isnan), (math_isinf, np.isinf), (math_isfinite, np.isfinite)])
def test_math_classify(backend, func, npfunc):
    unary_bool_all(func, npfunc)


@pytest.mark.parametrize("func, npfunc", [(math_degrees, np.degrees), (math_radians, np.radians)])
def test_math_degrees_radians(backend, func, npfunc):
    unary_template(func, npfunc, np.float32, np.float32, 0, 1)
    unary_template(func, npfunc, np.float64, np.float64, 0, 1)
