"""Expressions of the kernel language against NumPy: arithmetic, division, powers,
bitwise ops, comparisons, logic, casts, math functions, thread geometry, constants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import (
    Array,
    Const,
    block_dim,
    block_idx,
    bool_,
    float32,
    float64,
    global_id,
    grid_dim,
    int32,
    int64,
    thread_idx,
    uint32,
)

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BLOCK = 32
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32]
INT_DTYPES = [np.int32, np.int64, np.uint32]

# module-level compile-time constants
MOD_K = 13
MOD_F = 0.5
MOD_FLAG = False


def grid_for(n: int, block: int = BLOCK) -> int:
    return max(1, (n + block - 1) // block)


def rand_array(rng: np.random.Generator, dtype, n: int, full: bool = True) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if full:
            return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
        lo = 0 if dtype.kind == "u" else -1000
        return rng.integers(lo, 1000, size=n, dtype=dtype, endpoint=True)
    return (rng.standard_normal(n) * 100).astype(dtype)


def assert_close(got, want, dtype, rtol=None):
    dtype = np.dtype(dtype)
    assert got.dtype == want.dtype or np.dtype(got.dtype) == dtype
    if dtype.kind == "f":
        if rtol is None:
            rtol = 2e-6 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- arithmetic


@gk.kernel
def k_arith(a, b, add, sub, mul, neg, n: int32):
    i = global_id(0)
    if i < n:
        add[i] = a[i] + b[i]
        sub[i] = a[i] - b[i]
        mul[i] = a[i] * b[i]
        neg[i] = -a[i]


@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_add_sub_mul_neg_wraparound(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rand_array(rng, dtype, n), rand_array(rng, dtype, n)
    outs = [np.zeros(n, dtype) for _ in range(4)]
    a0, b0 = a.copy(), b.copy()
    k_arith[grid_for(n), BLOCK](a, b, *outs, n)
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, -a]
    for got, w in zip(outs, want):
        assert_close(got, w, dtype)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_int32_wraparound_edges(backend):
    imax, imin = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    a = np.array([imax, imin, imin, imax, 65536, -1], np.int32)
    b = np.array([1, -1, 1, imax, 65536, imin], np.int32)
    outs = [np.zeros(6, np.int32) for _ in range(4)]
    k_arith[1, 8](a, b, *outs, 6)
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b, -a]
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


@gk.kernel
def k_divmod(a, b, fd, md, n: int32):
    i = global_id(0)
    if i < n:
        fd[i] = a[i] // b[i]
        md[i] = a[i] % b[i]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1), small=st.booleans())
def test_int_floordiv_mod_vs_numpy(backend, dtype, n, seed, small):
    rng = np.random.default_rng(seed)
    a = rand_array(rng, dtype, n, full=not small)
    if np.dtype(dtype).kind == "u":
        b = rng.integers(0, 20, size=n).astype(dtype)
    else:
        b = rng.integers(-20, 20, size=n, endpoint=True).astype(dtype)
    if not small:
        b[::3] = rand_array(rng, dtype, n)[::3]
    b[::5] = 0  # integer x // 0 and x % 0 give 0, like NumPy
    if np.dtype(dtype).kind == "i":
        b[(a == np.iinfo(dtype).min) & (b == -1)] = 1  # INT_MIN // -1 traps in C
    fd, md = np.zeros(n, dtype), np.zeros(n, dtype)
    k_divmod[grid_for(n), BLOCK](a, b, fd, md, n)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fd, np.floor_divide(a, b))
        np.testing.assert_array_equal(md, np.remainder(a, b))


def test_int32_negative_floordiv_mod_table(backend):
    vals = np.array([-7, -6, -1, 0, 1, 6, 7], np.int32)
    a, b = np.meshgrid(vals, np.array([-3, -2, -1, 0, 1, 2, 3], np.int32))
    a, b = a.ravel().copy(), b.ravel().copy()
    fd, md = np.zeros_like(a), np.zeros_like(a)
    k_divmod[grid_for(a.size), BLOCK](a, b, fd, md, a.size)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fd, np.floor_divide(a, b))
        np.testing.assert_array_equal(md, np.remainder(a, b))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_floordiv_mod_extremes(backend, dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if np.dtype(dtype).kind == "u":
        pairs = [(hi, hi), (hi - 1, hi), (5, hi), (hi, 2), (hi, 0), (0, hi), (hi, 1), (7, hi - 1)]
    else:
        pairs = [(lo, -1), (lo, 1), (lo, lo), (hi, lo), (lo, hi), (hi, -1), (-1, lo), (lo, 0), (lo, 2), (lo + 1, -2)]
    a = np.array([p[0] for p in pairs], dtype)
    b = np.array([p[1] for p in pairs], dtype)
    fd, md = np.zeros_like(a), np.zeros_like(a)
    k_divmod[1, 16](a, b, fd, md, a.size)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fd, np.floor_divide(a, b))
        np.testing.assert_array_equal(md, np.remainder(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floordiv_mod_inexact_quotient(backend, dtype):
    # 1.0 // 0.1 is 9.0 in Python and NumPy (floor(1.0 / 0.1) would be 10.0)
    a = np.array([1.0, -1.0, 7.0, 0.7, 1e10, 5.5, -0.0], dtype)
    b = np.array([0.1, 0.1, -0.7, 0.1, 3.3, -2.0, 3.0], dtype)
    fd, md = np.zeros_like(a), np.zeros_like(a)
    k_divmod[1, 8](a, b, fd, md, a.size)
    np.testing.assert_array_equal(fd, np.floor_divide(a, b))
    np.testing.assert_allclose(md, np.remainder(a, b), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_float_floordiv_mod_vs_numpy(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a = (rng.integers(-1000, 1000, size=n) / 4).astype(dtype)
    b = rng.integers(1, 20, size=n) * rng.choice([-1, 1], size=n) / 2
    b = b.astype(dtype)
    fd, md = np.zeros(n, dtype), np.zeros(n, dtype)
    k_divmod[grid_for(n), BLOCK](a, b, fd, md, n)
    np.testing.assert_array_equal(fd, np.floor_divide(a, b))
    np.testing.assert_allclose(md, np.remainder(a, b), rtol=1e-6, atol=1e-6)
    # Python semantics: the remainder has the sign of the divisor
    assert np.all((md == 0) | (np.sign(md) == np.sign(b)))


@gk.kernel
def k_truediv(a, b, out, n: int32):
    i = global_id(0)
    if i < n:
        out[i] = a[i] / b[i]


@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_true_division_ints_give_float64(backend, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-(2**31), 2**31 - 1, size=n, dtype=np.int32)
    b = rng.integers(1, 2**31 - 1, size=n, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), size=n)
    b = b.astype(np.int32)
    out = np.zeros(n, np.float64)
    k_truediv[grid_for(n), BLOCK](a, b, out, n)
    # a float64 quotient: exact to double rounding, which float32 could not give
    np.testing.assert_allclose(out, a / b, rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_true_division_floats(backend, dtype):
    rng = np.random.default_rng(1)
    a = rand_array(rng, dtype, 50)
    b = rand_array(rng, dtype, 50)
    b[b == 0] = 1
    out = np.zeros(50, dtype)
    k_truediv[2, BLOCK](a, b, out, 50)
    assert_close(out, a / b, dtype)


@gk.kernel
def k_int_div_literal(a: Array[int32], out: Array[float64], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = a[i] / 3


def test_true_division_by_int_literal(backend):
    a = np.arange(-20, 20, dtype=np.int32)
    out = np.zeros(a.size, np.float64)
    k_int_div_literal[2, BLOCK](a, out, a.size)
    np.testing.assert_allclose(out, a / 3, rtol=1e-15)


# ---------------------------------------------------------------- powers


@gk.kernel
def k_pow_float(x, y, out: Array[float64, 2], n: int32):
    i = global_id(0)
    if i < n:
        v = x[i]
        out[0, i] = v**2
        out[1, i] = v**3
        out[2, i] = v**0
        out[3, i] = v**-1
        out[4, i] = v**0.5
        out[5, i] = v ** y[i]
        out[6, i] = x[i] ** 2
        out[7, i] = v**1.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@SETTINGS
@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_float_powers(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 10, size=n).astype(dtype)
    y = rng.uniform(-3, 3, size=n).astype(dtype)
    out = np.zeros((8, n), np.float64)
    k_pow_float[grid_for(n), BLOCK](x, y, out, n)
    want = [x**2, x**3, x**0, x**-1.0, x**0.5, x**y, x**2, x**1.5]
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    for row, w in zip(out, want):
        assert w.dtype == dtype  # NEP 50: weak literal exponents keep the base's type
        np.testing.assert_allclose(row, w.astype(np.float64), rtol=rtol)


@gk.kernel
def k_pow_int(a, e, out_sq, out_cube, out_var, out_half: Array[float64], n: int32):
    i = global_id(0)
    if i < n:
        v = a[i]
        out_sq[i] = v**2
        out_cube[i] = a[i] ** 3
        out_var[i] = v ** e[i]
        out_half[i] = v**0.5


@pytest.mark.parametrize("dtype", INT_DTYPES)
@SETTINGS
@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_int_powers_wrap_like_numpy(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a = rand_array(rng, dtype, n, full=False)
    a[: n // 2] = rand_array(rng, dtype, n)[: n // 2]  # some that overflow
    e = rng.integers(0, 12, size=n).astype(dtype)
    outs = [np.zeros(n, dtype) for _ in range(3)]
    half = np.zeros(n, np.float64)
    k_pow_int[grid_for(n), BLOCK](a, e, *outs, half, n)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outs[0], a**2)
        np.testing.assert_array_equal(outs[1], a**3)
        np.testing.assert_array_equal(outs[2], np.power(a, e))
        np.testing.assert_allclose(half, np.power(a.astype(np.float64), 0.5), rtol=1e-14, equal_nan=True)


# ---------------------------------------------------------------- bitwise


@gk.kernel
def k_bits(a, b, s, shl, shr, band, bor, bxor, inv, n: int32):
    i = global_id(0)
    if i < n:
        shl[i] = a[i] << s[i]
        shr[i] = a[i] >> s[i]
        band[i] = a[i] & b[i]
        bor[i] = a[i] | b[i]
        bxor[i] = a[i] ^ b[i]
        inv[i] = ~a[i]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_shifts_and_bitwise(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rand_array(rng, dtype, n), rand_array(rng, dtype, n)
    bits = np.dtype(dtype).itemsize * 8
    s = rng.integers(0, bits, size=n).astype(dtype)
    outs = [np.zeros(n, dtype) for _ in range(6)]
    k_bits[grid_for(n), BLOCK](a, b, s, *outs, n)
    want = [a << s, a >> s, a & b, a | b, a ^ b, ~a]
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


@gk.kernel
def k_shift_literal(a: Array[int32], out: Array[int32], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = ((a[i] << 3) >> 1) ^ (a[i] & 0xFF) | 0x100


def test_shift_by_literal(backend):
    a = np.array([-(2**31), -5, -1, 0, 1, 12345, 2**28, 2**31 - 1], np.int32)
    out = np.zeros_like(a)
    k_shift_literal[1, 8](a, out, a.size)
    np.testing.assert_array_equal(out, ((a << 3) >> 1) ^ (a & 0xFF) | 0x100)


# ---------------------------------------------------------------- comparisons and logic


@gk.kernel
def k_compare(a, b, out: Array[bool_, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = a[i] < b[i]
        out[1, i] = a[i] <= b[i]
        out[2, i] = a[i] > b[i]
        out[3, i] = a[i] >= b[i]
        out[4, i] = a[i] == b[i]
        out[5, i] = a[i] != b[i]


def _compare_want(a, b):
    return np.stack([a < b, a <= b, a > b, a >= b, a == b, a != b])


@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_comparisons(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rand_array(rng, dtype, n, full=False), rand_array(rng, dtype, n, full=False)
    b[::3] = a[::3]
    out = np.zeros((6, n), np.bool_)
    k_compare[grid_for(n), BLOCK](a, b, out, n)
    np.testing.assert_array_equal(out, _compare_want(a, b))


def test_compare_int32_with_uint32_by_value(backend):
    # NumPy compares int32 and uint32 as int64: -1 < 1u is True (C would say False)
    a = np.array([-1, -(2**31), 5, 7, 0], np.int32)
    b = np.array([1, 2**32 - 1, 5, 3, 2**31], np.uint32)
    out = np.zeros((6, 5), np.bool_)
    k_compare[1, 8](a, b, out, 5)
    np.testing.assert_array_equal(out, _compare_want(a, b))


def test_compare_int32_with_float32_in_float64(backend):
    # int32 vs float32 promotes to float64: 16777217 > 16777216.0 (float32 would say equal)
    a = np.array([16777217, 16777216, -16777217, 3], np.int32)
    b = np.array([16777216.0, 16777216.0, -16777216.0, 3.5], np.float32)
    out = np.zeros((6, 4), np.bool_)
    k_compare[1, 8](a, b, out, 4)
    np.testing.assert_array_equal(out, _compare_want(a, b))


def test_compare_nan(backend):
    a = np.array([np.nan, 1.0, np.nan, np.inf], np.float32)
    b = np.array([1.0, np.nan, np.nan, np.inf], np.float32)
    out = np.zeros((6, 4), np.bool_)
    k_compare[1, 8](a, b, out, 4)
    np.testing.assert_array_equal(out, _compare_want(a, b))


@gk.kernel
def k_chained(x, lo, hi, out: Array[bool_, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = lo[i] <= x[i] < hi[i]
        out[1, i] = lo[i] < x[i] < hi[i] < 50
        out[2, i] = 0 <= x[i] <= 10
        out[3, i] = lo[i] == x[i] != hi[i]


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_chained_comparisons(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 60, size=n).astype(dtype)
    lo = rng.integers(-20, 60, size=n).astype(dtype)
    hi = rng.integers(-20, 60, size=n).astype(dtype)
    lo[::4] = x[::4]
    out = np.zeros((4, n), np.bool_)
    k_chained[grid_for(n), BLOCK](x, lo, hi, out, n)
    want = np.stack(
        [
            (lo <= x) & (x < hi),
            (lo < x) & (x < hi) & (hi < 50),
            (0 <= x) & (x <= 10),
            (lo == x) & (x != hi),
        ]
    )
    np.testing.assert_array_equal(out, want)


@gk.kernel
def k_logic(a: Array[int32], b: Array[float32], f: Array[bool_], out: Array[bool_, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = a[i] > 0 and b[i] > 0
        out[1, i] = a[i] > 0 or b[i] > 0
        out[2, i] = not a[i] > 0
        out[3, i] = not (a[i] > 0 and b[i] < 0.5) or f[i]
        out[4, i] = f[i] and not (a[i] % 2 == 0 or b[i] > 1.0)
        out[5, i] = not f[i]
        out[6, i] = not a[i]
        out[7, i] = bool_(b[i]) and bool_(a[i])


@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_and_or_not(backend, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=n).astype(np.int32)
    b = rng.integers(-4, 5, size=n).astype(np.float32) / 2
    f = rng.integers(0, 2, size=n).astype(np.bool_)
    out = np.zeros((8, n), np.bool_)
    k_logic[grid_for(n), BLOCK](a, b, f, out, n)
    want = np.stack(
        [
            (a > 0) & (b > 0),
            (a > 0) | (b > 0),
            ~(a > 0),
            ~((a > 0) & (b < 0.5)) | f,
            f & ~((a % 2 == 0) | (b > 1.0)),
            ~f,
            a == 0,
            (b != 0) & (a != 0),
        ]
    )
    np.testing.assert_array_equal(out, want)


@gk.kernel
def k_ternary(a, b, out, out2: Array[float64], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = a[i] if a[i] > b[i] else b[i] * 2
        out2[i] = a[i] if i % 2 == 0 else 0.25


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_ternary(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rand_array(rng, dtype, n, full=False), rand_array(rng, dtype, n, full=False)
    out, out2 = np.zeros(n, dtype), np.zeros(n, np.float64)
    k_ternary[grid_for(n), BLOCK](a, b, out, out2, n)
    assert_close(out, np.where(a > b, a, b * 2), dtype)
    idx = np.arange(n)
    want2 = np.where(idx % 2 == 0, a.astype(np.float64), 0.25)
    np.testing.assert_allclose(out2, want2, rtol=1e-7 if dtype == np.float32 else 0)


@gk.kernel
def k_unary(a, neg, inv, pos, n: int32):
    i = global_id(0)
    if i < n:
        neg[i] = -a[i]
        inv[i] = ~a[i]
        pos[i] = +a[i]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_unary_minus_invert(backend, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, 5, info.max // 2], dtype)
    outs = [np.zeros_like(a) for _ in range(3)]
    k_unary[1, 8](a, *outs, a.size)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outs[0], -a)
    np.testing.assert_array_equal(outs[1], ~a)
    np.testing.assert_array_equal(outs[2], a)


# ---------------------------------------------------------------- casts


@gk.kernel
def k_casts(
    x: Array[float64],
    j: Array[int32],
    f32: Array[float32],
    i32: Array[int32],
    u32: Array[uint32],
    i64: Array[int64],
    f64: Array[float64],
    b: Array[bool_],
    pint: Array[int32],
    pfloat: Array[float64],
    wrap: Array[int64],
    n: int32,
):
    i = global_id(0)
    if i < n:
        f32[i] = float32(x[i])
        i32[i] = int32(x[i])
        u32[i] = uint32(j[i])
        i64[i] = int64(x[i] * 1000.0)
        f64[i] = float64(float32(x[i]))
        b[i] = bool_(j[i])
        pint[i] = int(x[i])
        pfloat[i] = float(x[i])
        wrap[i] = int(x[i]) + 2147483647


@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_casts(backend, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1e6, 1e6, size=n)
    x[::4] = np.trunc(x[::4])
    j = rng.integers(-5, 5, size=n).astype(np.int32)
    j[::3] = rng.integers(-(2**31), 2**31, size=len(j[::3]))
    outs = dict(
        f32=np.zeros(n, np.float32),
        i32=np.zeros(n, np.int32),
        u32=np.zeros(n, np.uint32),
        i64=np.zeros(n, np.int64),
        f64=np.zeros(n, np.float64),
        b=np.zeros(n, np.bool_),
        pint=np.zeros(n, np.int32),
        pfloat=np.zeros(n, np.float64),
        wrap=np.zeros(n, np.int64),
    )
    k_casts[grid_for(n), BLOCK](x, j, *outs.values(), n)
    np.testing.assert_array_equal(outs["f32"], x.astype(np.float32))
    np.testing.assert_array_equal(outs["i32"], x.astype(np.int32))  # truncation toward zero
    np.testing.assert_array_equal(outs["u32"], j.astype(np.uint32))  # wraps
    np.testing.assert_array_equal(outs["i64"], (x * 1000.0).astype(np.int64))
    np.testing.assert_array_equal(outs["f64"], x.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(outs["b"], j != 0)
    np.testing.assert_array_equal(outs["pint"], x.astype(np.int32))
    # float(x) means float32: the value is rounded to float32
    np.testing.assert_array_equal(outs["pfloat"], x.astype(np.float32).astype(np.float64))
    # int(x) means int32: adding a weak literal stays int32 and wraps
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outs["wrap"], (x.astype(np.int32) + np.int32(2147483647)).astype(np.int64))


# ---------------------------------------------------------------- math functions

UNARY_MATH = ["sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "erf", "log2", "atan"]
NP_EQUIV = {"fabs": np.fabs, "erf": np.vectorize(math.erf, otypes=[np.float64]), "atan": np.arctan}


@gk.kernel
def k_math(x, y, out, n: int32):
    i = global_id(0)
    if i < n:
        v = x[i]
        w = y[i]
        out[0, i] = math.sqrt(v)
        out[1, i] = math.exp(v)
        out[2, i] = math.log(v)
        out[3, i] = math.sin(v)
        out[4, i] = math.cos(v)
        out[5, i] = math.tan(v)
        out[6, i] = math.tanh(v)
        out[7, i] = math.floor(v * 3.0 - 4.0)
        out[8, i] = math.ceil(v * 3.0 - 4.0)
        out[9, i] = math.fabs(v - 1.0)
        out[10, i] = math.erf(v - 1.0)
        out[11, i] = math.log2(v)
        out[12, i] = math.atan(v)
        out[13, i] = math.pow(v, w)
        out[14, i] = math.atan2(v - 1.0, w)
        out[15, i] = math.hypot(v, w)


def _math_want(x, y):
    dt = x.dtype
    c = lambda v: dt.type(v)  # noqa: E731
    erf = NP_EQUIV["erf"]
    return [
        np.sqrt(x),
        np.exp(x),
        np.log(x),
        np.sin(x),
        np.cos(x),
        np.tan(x),
        np.tanh(x),
        np.floor(x * c(3.0) - c(4.0)),
        np.ceil(x * c(3.0) - c(4.0)),
        np.fabs(x - c(1.0)),
        erf((x - c(1.0)).astype(np.float64)).astype(dt),
        np.log2(x),
        np.arctan(x),
        np.power(x, y),
        np.arctan2(x - c(1.0), y),
        np.hypot(x, y),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@SETTINGS
@given(n=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_math_functions(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 1.5, size=n).astype(dtype)
    y = rng.uniform(-2.0, 2.0, size=n).astype(dtype)
    out = np.zeros((16, n), dtype)
    k_math[grid_for(n), BLOCK](x, y, out, n)
    rtol, atol = (2e-5, 1e-6) if dtype == np.float32 else (1e-12, 1e-14)
    for k, w in enumerate(_math_want(x, y)):
        np.testing.assert_allclose(out[k], w, rtol=rtol, atol=atol, err_msg=f"row {k}")


@gk.kernel
def k_math_int(j: Array[int32], out: Array[float64, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = math.sqrt(j[i])
        out[1, i] = math.log(j[i])
        out[2, i] = math.sin(j[i])
        out[3, i] = math.floor(j[i]) / 3


def test_math_of_ints_computes_in_float64(backend):
    j = np.array([1, 2, 3, 7, 1000003, 2**31 - 1, 99991], np.int32)
    out = np.zeros((4, j.size), np.float64)
    k_math_int[1, 8](j, out, j.size)
    jf = j.astype(np.float64)
    for k, w in enumerate([np.sqrt(jf), np.log(jf), np.sin(jf), np.floor(jf) / 3]):
        np.testing.assert_allclose(out[k], w, rtol=1e-14, err_msg=f"row {k}")


@gk.kernel
def k_isnan(x, out: Array[bool_, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = math.isnan(x[i])
        out[1, i] = math.isinf(x[i])
        out[2, i] = math.isfinite(x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_isnan_isinf_isfinite(backend, dtype):
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -0.0, np.finfo(dtype).max], dtype)
    out = np.zeros((3, x.size), np.bool_)
    k_isnan[1, 8](x, out, x.size)
    np.testing.assert_array_equal(out, np.stack([np.isnan(x), np.isinf(x), np.isfinite(x)]))


@gk.kernel
def k_abs_min_max(a, b, c, o_abs, o_min, o_max, o_min3, o_max3, n: int32):
    i = global_id(0)
    if i < n:
        o_abs[i] = abs(a[i])
        o_min[i] = min(a[i], b[i])
        o_max[i] = max(a[i], b[i])
        o_min3[i] = min(a[i], b[i], c[i])
        o_max3[i] = max(c[i], a[i], b[i])


def _py_min(a, b):
    return np.where(b < a, b, a)  # Python: min(a, b) is a unless b < a


def _py_max(a, b):
    return np.where(b > a, b, a)


@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_abs_min_max(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    a, b, c = (rand_array(rng, dtype, n) for _ in range(3))
    if np.dtype(dtype).kind == "i":
        a[0] = np.iinfo(dtype).min  # abs wraps like NumPy
    outs = [np.zeros(n, dtype) for _ in range(5)]
    k_abs_min_max[grid_for(n), BLOCK](a, b, c, *outs, n)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outs[0], np.abs(a))
    np.testing.assert_array_equal(outs[1], np.minimum(a, b))
    np.testing.assert_array_equal(outs[2], np.maximum(a, b))
    np.testing.assert_array_equal(outs[3], np.minimum(np.minimum(a, b), c))
    np.testing.assert_array_equal(outs[4], np.maximum(np.maximum(a, b), c))


def test_min_max_nan_python_semantics(backend):
    a = np.array([np.nan, 1.0, np.nan, 2.0], np.float32)
    b = np.array([1.0, np.nan, np.nan, 3.0], np.float32)
    c = np.array([0.0, 0.0, 0.0, 0.0], np.float32)
    outs = [np.zeros(4, np.float32) for _ in range(5)]
    k_abs_min_max[1, 8](a, b, c, *outs, 4)
    np.testing.assert_array_equal(outs[1], _py_min(a, b))
    np.testing.assert_array_equal(outs[2], _py_max(a, b))


@gk.kernel
def k_min_mixed(a: Array[int32], b: Array[float32], out: Array[float64], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = min(a[i], b[i]) + max(a[i], 0.5)


def test_min_max_mixed_types_promote(backend):
    a = np.array([16777217, -3, 5, 0], np.int32)
    b = np.array([2e7, -2.5, 4.5, 0.25], np.float32)
    out = np.zeros(4, np.float64)
    k_min_mixed[1, 8](a, b, out, 4)
    # int32 with float32 promotes to float64, so 16777217 is exact
    want = np.minimum(a.astype(np.float64), b.astype(np.float64)) + np.maximum(a.astype(np.float64), 0.5)
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- thread geometry

NCOLS = 15


@gk.kernel
def k_geometry(out: Array[int32, 2]):
    gx = global_id(0)
    gy = global_id(1)
    gz = global_id(2)
    row = (gz * (grid_dim.y * block_dim.y) + gy) * (grid_dim.x * block_dim.x) + gx
    out[row, 0] = thread_idx.x
    out[row, 1] = thread_idx.y
    out[row, 2] = thread_idx.z
    out[row, 3] = block_idx.x
    out[row, 4] = block_idx.y
    out[row, 5] = block_idx.z
    out[row, 6] = block_dim.x
    out[row, 7] = block_dim.y
    out[row, 8] = block_dim.z
    out[row, 9] = grid_dim.x
    out[row, 10] = grid_dim.y
    out[row, 11] = grid_dim.z
    out[row, 12] = gx
    out[row, 13] = gy
    out[row, 14] = gz


def expected_geometry(grid, block):
    grid = (tuple(grid) + (1, 1))[:3]
    block = (tuple(block) + (1, 1))[:3]
    GX, GY, GZ = (g * b for g, b in zip(grid, block))
    gz, gy, gx = np.meshgrid(np.arange(GZ), np.arange(GY), np.arange(GX), indexing="ij")
    gx, gy, gz = gx.ravel(), gy.ravel(), gz.ravel()
    cols = [
        gx % block[0],
        gy % block[1],
        gz % block[2],
        gx // block[0],
        gy // block[1],
        gz // block[2],
        *(np.full_like(gx, b) for b in block),
        *(np.full_like(gx, g) for g in grid),
        gx,
        gy,
        gz,
    ]
    return np.stack(cols, axis=1).astype(np.int32)


@pytest.mark.parametrize(
    "grid,block",
    [(3, 4), ((5,), (7,)), ((2, 3), (4, 2)), ((3, 1), (1, 5)), ((2, 2, 3), (3, 2, 2)), ((1, 3, 2), (2, 1, 4))],
)
def test_thread_geometry(backend, grid, block):
    want = expected_geometry(
        grid if isinstance(grid, tuple) else (grid,), block if isinstance(block, tuple) else (block,)
    )
    out = np.full((want.shape[0], NCOLS), -1, np.int32)
    k_geometry[grid, block](out)
    np.testing.assert_array_equal(out, want)


@SETTINGS
@given(
    grid=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3)),
    block=st.tuples(st.integers(1, 5), st.integers(1, 4), st.integers(1, 3)),
)
def test_thread_geometry_random_3d(backend, grid, block):
    want = expected_geometry(grid, block)
    out = np.full((want.shape[0], NCOLS), -1, np.int32)
    k_geometry[grid, block](out)
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- compile-time constants


@gk.kernel
def k_const(a: Array[float32], out: Array[float32], n: int32, S: Const[int], NEG: Const[bool], F: Const[float]):
    i = global_id(0)
    if i < n:
        if NEG:
            out[i] = -a[i] * S * 7777.0
        else:
            out[i] = a[i] * S + F + 5555.0


@pytest.mark.parametrize(
    "S,NEG,F", [(1, False, 0.5), (3, False, 0.5), (3, True, 0.0), (-2, True, 1.25), (5, False, -2.0)]
)
def test_const_specialisation(backend, S, NEG, F):
    a = np.linspace(-4, 4, 40).astype(np.float32)
    out = np.zeros(40, np.float32)
    k_const[2, BLOCK](a, out, 40, S, NEG, F)
    if NEG:
        want = -a * np.float32(S) * np.float32(7777.0)
    else:
        want = a * np.float32(S) + np.float32(F) + np.float32(5555.0)
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("lang", ["cuda", "opencl"])
def test_const_branch_is_folded(lang):
    a = np.zeros(4, np.float32)
    src_t = k_const.source(a, a, 4, 3, True, 0.5, backend=lang)
    src_f = k_const.source(a, a, 4, 3, False, 0.5, backend=lang)
    assert "7777" in src_t and "5555" not in src_t
    assert "5555" in src_f and "7777" not in src_f
    assert src_t != k_const.source(a, a, 4, 4, True, 0.5, backend=lang)


@gk.kernel
def k_const_loop(out: Array[int32], N: Const[int]):
    i = global_id(0)
    acc = 0
    for j in range(N):
        acc += j * i
    out[i] = acc


@pytest.mark.parametrize("N", [0, 1, 4, 9])
def test_const_loop_bound(backend, N):
    out = np.full(16, -1, np.int32)
    k_const_loop[2, 8](out, N)
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.int32) * sum(range(N)))


@gk.kernel
def k_module_consts(a: Array[float32], out: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        if MOD_FLAG:
            out[i] = 999.0
        else:
            out[i] = a[i] * MOD_K + MOD_F


def test_module_level_constants(backend):
    a = np.arange(10, dtype=np.float32) - 3
    out = np.zeros_like(a)
    k_module_consts[1, 16](a, out, 10)
    np.testing.assert_allclose(out, a * np.float32(MOD_K) + np.float32(MOD_F), rtol=1e-6)
    src = k_module_consts.source(a, a, 10, backend="opencl")
    assert "999" not in src  # folded: MOD_FLAG is False
    assert "double" not in src  # weak constants keep float32


@gk.kernel
def k_infer_scalars(a, out, s, f):
    i = global_id(0)
    out[i] = a[i] * s + f


def test_unannotated_scalars_specialise_like_numpy(backend):
    a = np.arange(8, dtype=np.int32)
    # Python int -> int64: int32 * int64 is int64, no wrap
    out = np.zeros(8, np.int64)
    k_infer_scalars[1, 8](a, out, 2**33, 1)
    np.testing.assert_array_equal(out, a.astype(np.int64) * 2**33 + 1)
    # Python float -> float64
    outf = np.zeros(8, np.float64)
    k_infer_scalars[1, 8](a, outf, 0.1, 1e-9)
    np.testing.assert_allclose(outf, a * np.float64(0.1) + 1e-9, rtol=1e-15)
    # NumPy scalars keep their dtype: int32 * int32 wraps
    outw = np.zeros(8, np.int64)
    k_infer_scalars[1, 8](a, outw, np.int32(2**30), np.int32(0))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(outw, (a * np.int32(2**30)).astype(np.int64))


# ---------------------------------------------------------------- and / or on non-bool operands


@gk.kernel
def k_and_or_values(a: Array[int32], b: Array[int32], out: Array[int32, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = a[i] or 5
        out[1, i] = a[i] and b[i]
        x = a[i] or b[i]
        out[2, i] = x


def test_and_or_on_ints_give_python_values_or_a_compile_error(backend):
    # Python's `x or y` is x if x else y (not a bool); a compiler that does not support
    # that may reject it, but must not silently store a bool
    a = np.array([0, 3, -2, 0], np.int32)
    b = np.array([7, 0, 4, 0], np.int32)
    out = np.full((3, 4), -99, np.int32)
    try:
        k_and_or_values[1, 4](a, b, out, 4)
    except (gk.KernelTypeError, gk.KernelSyntaxError):
        return
    want = [[int(x or 5) for x in a], [int(x and y) for x, y in zip(a, b)], [int(x or y) for x, y in zip(a, b)]]
    np.testing.assert_array_equal(out, want)
