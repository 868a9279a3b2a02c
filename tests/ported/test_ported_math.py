"""Math kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_math.py (NVIDIA/numba-cuda).
(frexp/ldexp are in test_ported_misc.py, fma and cbrt in test_ported_intrinsics.py.)

Each kernel is the source's ``math_<name>`` function with ``cuda.grid(1)`` spelled ``global_id(0)``;
the source's ``unary_template``/``binary_template`` (50 points of ``np.linspace`` for each dtype,
``assert_allclose`` with rtol 1e-13 for float64, 1e-6 for float32, 1e-3 otherwise) is ``_unary``/``_binary``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import global_id

from .support import needs

NELEM = 50


# Source: NVIDIA/numba-cuda numba/cuda/tests/cudapy/test_math.py, math_acos (test_math_acos)
@gk.kernel
def math_acos(A, B):
    i = global_id(0)
    B[i] = math.acos(A[i])


# Source: test_math.py, math_asin (test_math_asin)
@gk.kernel
def math_asin(A, B):
    i = global_id(0)
    B[i] = math.asin(A[i])


# Source: test_math.py, math_atan (test_math_atan)
@gk.kernel
def math_atan(A, B):
    i = global_id(0)
    B[i] = math.atan(A[i])


# Source: test_math.py, math_acosh (test_math_acosh)
@gk.kernel
def math_acosh(A, B):
    i = global_id(0)
    B[i] = math.acosh(A[i])


# Source: test_math.py, math_asinh (test_math_asinh)
@gk.kernel
def math_asinh(A, B):
    i = global_id(0)
    B[i] = math.asinh(A[i])


# Source: test_math.py, math_atanh (test_math_atanh)
@gk.kernel
def math_atanh(A, B):
    i = global_id(0)
    B[i] = math.atanh(A[i])


# Source: test_math.py, math_cos (test_math_cos)
@gk.kernel
def math_cos(A, B):
    i = global_id(0)
    B[i] = math.cos(A[i])


# Source: test_math.py, math_sin (test_math_sin)
@gk.kernel
def math_sin(A, B):
    i = global_id(0)
    B[i] = math.sin(A[i])


# Source: test_math.py, math_tan (test_math_tan)
@gk.kernel
def math_tan(A, B):
    i = global_id(0)
    B[i] = math.tan(A[i])


# Source: test_math.py, math_cosh (test_math_cosh)
@gk.kernel
def math_cosh(A, B):
    i = global_id(0)
    B[i] = math.cosh(A[i])


# Source: test_math.py, math_sinh (test_math_sinh)
@gk.kernel
def math_sinh(A, B):
    i = global_id(0)
    B[i] = math.sinh(A[i])


# Source: test_math.py, math_tanh (test_math_tanh)
@gk.kernel
def math_tanh(A, B):
    i = global_id(0)
    B[i] = math.tanh(A[i])


# Source: test_math.py, math_exp (test_math_exp)
@gk.kernel
def math_exp(A, B):
    i = global_id(0)
    B[i] = math.exp(A[i])


# Source: test_math.py, math_exp2 (test_math_exp2)
@gk.kernel
def math_exp2(A, B):
    i = global_id(0)
    B[i] = math.exp2(A[i])


# Source: test_math.py, math_expm1 (test_math_expm1)
@gk.kernel
def math_expm1(A, B):
    i = global_id(0)
    B[i] = math.expm1(A[i])


# Source: test_math.py, math_fabs (test_math_fabs)
@gk.kernel
def math_fabs(A, B):
    i = global_id(0)
    B[i] = math.fabs(A[i])


# Source: test_math.py, math_log (test_math_log)
@gk.kernel
def math_log(A, B):
    i = global_id(0)
    B[i] = math.log(A[i])


# Source: test_math.py, math_log2 (test_math_log2)
@gk.kernel
def math_log2(A, B):
    i = global_id(0)
    B[i] = math.log2(A[i])


# Source: test_math.py, math_log10 (test_math_log10)
@gk.kernel
def math_log10(A, B):
    i = global_id(0)
    B[i] = math.log10(A[i])


# Source: test_math.py, math_log1p (test_math_log1p)
@gk.kernel
def math_log1p(A, B):
    i = global_id(0)
    B[i] = math.log1p(A[i])


# Source: test_math.py, math_sqrt (test_math_sqrt)
@gk.kernel
def math_sqrt(A, B):
    i = global_id(0)
    B[i] = math.sqrt(A[i])


# Source: test_math.py, math_ceil (test_math_ceil)
@gk.kernel
def math_ceil(A, B):
    i = global_id(0)
    B[i] = math.ceil(A[i])


# Source: test_math.py, math_floor (test_math_floor)
@gk.kernel
def math_floor(A, B):
    i = global_id(0)
    B[i] = math.floor(A[i])


# Source: test_math.py, math_trunc (test_math_trunc)
@gk.kernel
def math_trunc(A, B):
    i = global_id(0)
    B[i] = math.trunc(A[i])


# Source: test_math.py, math_degrees (test_math_degrees)
@gk.kernel
def math_degrees(A, B):
    i = global_id(0)
    B[i] = math.degrees(A[i])


# Source: test_math.py, math_radians (test_math_radians)
@gk.kernel
def math_radians(A, B):
    i = global_id(0)
    B[i] = math.radians(A[i])


# Source: test_math.py, math_erf (test_math_erf)
@gk.kernel
def math_erf(A, B):
    i = global_id(0)
    B[i] = math.erf(A[i])


# Source: test_math.py, math_erfc (test_math_erfc)
@gk.kernel
def math_erfc(A, B):
    i = global_id(0)
    B[i] = math.erfc(A[i])


# Source: test_math.py, math_gamma (test_math_gamma)
@gk.kernel
def math_gamma(A, B):
    i = global_id(0)
    B[i] = math.gamma(A[i])


# Source: test_math.py, math_lgamma (test_math_lgamma)
@gk.kernel
def math_lgamma(A, B):
    i = global_id(0)
    B[i] = math.lgamma(A[i])


# Source: test_math.py, math_atan2 (test_math_atan2)
@gk.kernel
def math_atan2(A, B, C):
    i = global_id(0)
    C[i] = math.atan2(A[i], B[i])


# Source: test_math.py, math_hypot (test_math_hypot)
@gk.kernel
def math_hypot(A, B, C):
    i = global_id(0)
    C[i] = math.hypot(A[i], B[i])


# Source: test_math.py, math_pow (test_math_pow)
@gk.kernel
def math_pow(A, B, C):
    i = global_id(0)
    C[i] = math.pow(A[i], B[i])


# Source: test_math.py, math_copysign (test_math_copysign)
@gk.kernel
def math_copysign(A, B, C):
    i = global_id(0)
    C[i] = math.copysign(A[i], B[i])


# Source: test_math.py, math_fmod (test_math_fmod)
@gk.kernel
def math_fmod(A, B, C):
    i = global_id(0)
    C[i] = math.fmod(A[i], B[i])


# Source: test_math.py, math_remainder (test_math_remainder)
@gk.kernel
def math_remainder(A, B, C):
    i = global_id(0)
    C[i] = math.remainder(A[i], B[i])


# Source: test_math.py, math_pow_binop (test_math_pow_binop)
@gk.kernel
def math_pow_binop(A, B, C):
    i = global_id(0)
    C[i] = A[i] ** B[i]


# Source: test_math.py, math_mod_binop (test_math_mod_binop)
@gk.kernel
def math_mod_binop(A, B, C):
    i = global_id(0)
    C[i] = A[i] % B[i]


# Source: test_math.py, math_modf (test_math_modf)
@gk.kernel
def math_modf(A, B, C):
    i = global_id(0)
    B[i], C[i] = math.modf(A[i])


# Source: test_math.py, math_isnan (test_math_isnan)
@gk.kernel
def math_isnan(A, B):
    i = global_id(0)
    B[i] = math.isnan(A[i])


# Source: test_math.py, math_isinf (test_math_isinf)
@gk.kernel
def math_isinf(A, B):
    i = global_id(0)
    B[i] = math.isinf(A[i])


# Source: test_math.py, math_isfinite (test_math_isfinite)
@gk.kernel
def math_isfinite(A, B):
    i = global_id(0)
    B[i] = math.isfinite(A[i])


def _rtol(dt) -> float:
    return {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 1e-6}.get(np.dtype(dt), 1e-3)


def _unary(kernel, npfunc, npdtype, nprestype, start, stop):
    """The source's unary_template: one block of 50 threads over np.linspace(start, stop)."""
    A = np.linspace(start, stop, NELEM).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    kernel[1, NELEM](A, B)
    np.testing.assert_allclose(B, npfunc(A), rtol=_rtol(npdtype))


def _binary(kernel, npfunc, npdtype, nprestype, start, stop):
    """The source's binary_template: both operands are the same np.linspace array."""
    A = np.linspace(start, stop, NELEM).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    kernel[1, NELEM](A, A, B)
    ref = A.astype(nprestype)  # math functions of integers compute in float64, as the kernel does
    np.testing.assert_allclose(B, npfunc(ref, ref), rtol=_rtol(nprestype))


_U64 = needs("uint64 arrays")
# (element type, result type, default stop) of the source's templates
F32 = pytest.param(np.float32, np.float32, 1, id="float32")
F64 = pytest.param(np.float64, np.float64, 1, id="float64")
I64 = pytest.param(np.int64, np.float64, 50, id="int64")
U64 = pytest.param(np.uint64, np.float64, 50, id="uint64", marks=_U64)
# Every kernel runs on float32; a few also on the source's other templates (each element type is a
# kernel variant to compile, and the corpus must stay fast).
ALL = [F32, F64, I64, U64]
FLOATS = [F32, F64]
ONE = [F32]

_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)
_gamma = np.vectorize(math.gamma)
_lgamma = np.vectorize(math.lgamma)

# (kernel, NumPy function, start, stop (None: the template's), templates)
UNARY = [
    (math_acos, np.arccos, 0, 0, ONE),  # integers: only 0 is in the domain
    (math_asin, np.arcsin, 0, 0, ONE),
    (math_atan, np.arctan, 0, None, ALL),
    (math_acosh, np.arccosh, 1, 2, ONE),
    (math_asinh, np.arcsinh, 0, None, ONE),
    (math_atanh, np.arctanh, 0, 0.9, ONE),
    (math_cos, np.cos, 0, None, ALL),
    (math_sin, np.sin, 0, None, FLOATS),
    (math_tan, np.tan, 0, None, ONE),
    (math_cosh, np.cosh, 0, None, ONE),
    (math_sinh, np.sinh, 0, None, ONE),
    (math_tanh, np.tanh, 0, None, FLOATS),
    (math_exp, np.exp, 0, None, FLOATS),
    (math_exp2, np.exp2, 0, None, ONE),
    (math_expm1, np.expm1, 0, None, ONE),
    (math_fabs, np.fabs, -1, None, ONE),
    (math_log, np.log, 1, None, FLOATS),
    (math_log2, np.log2, 1, None, ONE),
    (math_log10, np.log10, 1, None, ONE),
    (math_log1p, np.log1p, 0, None, ONE),
    (math_sqrt, np.sqrt, 0, None, FLOATS),
    (math_erf, _erf, 0, None, ONE),
    (math_erfc, _erfc, 0, None, ONE),
    (math_degrees, np.degrees, 0, None, ONE),
    (math_radians, np.radians, 0, None, ONE),
    (math_gamma, _gamma, 1, 5, ONE),
]


def _cases(table):
    for kernel, npfunc, start, stop, templates in table:
        for t in templates:
            dt, rt, default_stop = t.values
            yield pytest.param(
                kernel,
                npfunc,
                dt,
                rt,
                start,
                default_stop if stop is None else stop,
                id=f"{kernel.__name__}-{t.id}",
                marks=t.marks,
            )


@pytest.mark.parametrize("kernel, npfunc, dt, rt, start, stop", list(_cases(UNARY)))
def test_unary(backend, kernel, npfunc, dt, rt, start, stop):
    _unary(kernel, npfunc, dt, rt, start, stop)


@pytest.mark.parametrize("dt", [np.float32])
@pytest.mark.parametrize("kernel, npfunc", [(math_ceil, np.ceil), (math_floor, np.floor), (math_trunc, np.trunc)])
def test_rounding(backend, kernel, npfunc, dt):
    # Source: test_math_ceil / test_math_floor / test_math_trunc (float templates, start -1 .. 1)
    _unary(kernel, npfunc, dt, dt, -1, 1)


@needs("math.lgamma")
@pytest.mark.parametrize("dt", [np.float64])
def test_lgamma(backend, dt):
    _unary(math_lgamma, _lgamma, dt, dt, 1, 5)


BINARY = [
    (math_atan2, np.arctan2, ALL),
    (math_hypot, np.hypot, FLOATS),
    (math_pow, np.power, [F32, I64]),
    (math_copysign, np.copysign, ONE),
    (math_fmod, np.fmod, ONE),
    (math_pow_binop, np.power, FLOATS),
    (math_mod_binop, np.mod, ONE),
]


def _bcases():
    for kernel, npfunc, templates in BINARY:
        for t in templates:
            dt, rt, stop = t.values
            yield pytest.param(kernel, npfunc, dt, rt, stop, id=f"{kernel.__name__}-{t.id}", marks=t.marks)


@pytest.mark.parametrize("kernel, npfunc, dt, rt, stop", list(_bcases()))
def test_binary(backend, kernel, npfunc, dt, rt, stop):
    # the source starts fmod/mod at 1 (a zero divisor gives nan); the others at 0
    start = 1 if kernel in (math_fmod, math_mod_binop) else 0
    _binary(kernel, npfunc, dt, rt, start, stop)


@pytest.mark.parametrize("dt", [np.float64])
def test_remainder(backend, dt):
    # Source: test_math_remainder: its inputs include 0 and negative divisors
    A = np.linspace(-5, 5, NELEM).astype(dt)
    B = np.roll(A, 7) + dt(0.25)
    C = np.empty_like(A)
    math_remainder[1, NELEM](A, B, C)
    expected = np.array([math.remainder(a, b) for a, b in zip(A.tolist(), B.tolist())])
    np.testing.assert_allclose(C, expected.astype(dt), rtol=_rtol(dt), atol=1e-6)


@needs("math.modf (tuple results)")
@pytest.mark.parametrize("dt", [np.float64])
def test_modf(backend, dt):
    A = np.linspace(-3, 3, NELEM).astype(dt)
    B = np.empty_like(A)
    C = np.empty_like(A)
    math_modf[1, NELEM](A, B, C)
    frac, whole = np.modf(A)
    np.testing.assert_equal(B, frac)
    np.testing.assert_equal(C, whole)


@pytest.mark.parametrize("dt", [np.float32])
@pytest.mark.parametrize(
    "kernel, npfunc", [(math_isnan, np.isnan), (math_isinf, np.isinf), (math_isfinite, np.isfinite)]
)
def test_bool_special_values(backend, kernel, npfunc, dt):
    # Source: unary_bool_special_values: 0, a subnormal, tiny, 0.5, 1, max, inf, nan, and their negations
    fi = np.finfo(dt)
    A = np.array([0.0, fi.tiny / 4, fi.tiny, 0.5, 1.0, fi.max, np.inf, np.nan], dtype=dt)
    B = np.empty_like(A, dtype=np.int32)
    kernel[1, A.size](A, B)
    np.testing.assert_array_equal(B, npfunc(A))
    kernel[1, A.size](-A, B)
    np.testing.assert_array_equal(B, npfunc(-A))


@pytest.mark.parametrize("dt", [np.int32])
@pytest.mark.parametrize("kernel, npfunc", [(math_isnan, np.isnan)])
def test_bool_integers(backend, kernel, npfunc, dt):
    # Source: unary_bool_template_int32/int64 (integers are never nan or inf)
    A = np.linspace(0, 49, NELEM).astype(dt)
    B = np.empty(A.shape, dtype=np.int32)
    kernel[1, NELEM](A, B)
    np.testing.assert_allclose(B, npfunc(A))


@needs("float16")
@pytest.mark.parametrize("kernel, npfunc, start", [(math_sin, np.sin, 0), (math_sqrt, np.sqrt, 0)])
def test_fp16(backend, kernel, npfunc, start):
    # Source: test_math_fp16 (unary_template_float16, rtol 1e-3)
    _unary(kernel, npfunc, np.float16, np.float16, start, 1)
