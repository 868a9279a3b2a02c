"""Typing rules (NumPy 2 / NEP 50 promotion, weak literals, variable joins),
identifiers that are reserved in C, and compile / launch errors."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import Array, Const, bool_, float32, float64, global_id, int32, int64, uint32

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def grid_for(n: int, block: int = 32) -> int:
    return max(1, (n + block - 1) // block)


# ---------------------------------------------------------------- weak literals


@gk.kernel
def k_weak_acc(x, out: Array[float64], n: int32):
    i = global_id(0)
    if i == 0:
        acc = 0.0
        for j in range(n):
            acc += x[j]
        out[0] = acc
        acc2 = 0
        for j in range(n):
            acc2 += x[j]
        out[1] = acc2


@SETTINGS
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_weak_float_literal_accumulator_float32(backend, n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    x[0] = 1e8  # makes float32 and float64 accumulation differ
    out = np.zeros(2, np.float64)
    k_weak_acc[1, 1](x, out, n)
    want32 = np.cumsum(x, dtype=np.float32)[-1]  # sequential float32 accumulation
    assert out[0] == np.float64(want32)
    assert out[1] == np.float64(want32)


def test_weak_float_literal_accumulator_float64(backend):
    x = np.array([1e17, 1.0, 1.0, 1.0, -1e17, 0.1], np.float64)
    out = np.zeros(2, np.float64)
    k_weak_acc[1, 1](x, out, x.size)
    want = np.cumsum(x, dtype=np.float64)[-1]
    assert out[0] == want and out[1] == want


@gk.kernel
def k_weak_mul(x: Array[float32], y: Array[float64], out: Array[float64, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = x[i] * 0.1  # float32
        out[1, i] = 0.1 + x[i]  # float32
        out[2, i] = y[i] * 0.1  # float64
        out[3, i] = x[i] * 3  # float32
        out[4, i] = x[i] / 3  # float32
        c = 0.1  # a local only assigned literals is float32
        out[5, i] = c
        out[6, i] = x[i] * y[i]  # float64


def test_weak_literals_keep_float32(backend):
    x = np.array([1.1, 2.2, 3.3, 1e-3, 7.0], np.float32)
    y = np.array([1.1, 2.2, 3.3, 1e-3, 7.0], np.float64)
    out = np.zeros((7, x.size), np.float64)
    k_weak_mul[1, 8](x, y, out, x.size)
    np.testing.assert_array_equal(out[0], (x * 0.1).astype(np.float64))
    np.testing.assert_array_equal(out[1], (0.1 + x).astype(np.float64))
    np.testing.assert_array_equal(out[2], y * 0.1)
    np.testing.assert_array_equal(out[3], (x * 3).astype(np.float64))
    np.testing.assert_allclose(out[4], (x / 3).astype(np.float64), rtol=1e-7)
    assert np.all(out[4] == out[4].astype(np.float32))  # a float32 value
    np.testing.assert_array_equal(out[5], np.full(x.size, np.float64(np.float32(0.1))))
    np.testing.assert_array_equal(out[6], x.astype(np.float64) * y)


@gk.kernel
def k_int_promotion(
    a: Array[int32],
    b: Array[uint32],
    c: Array[int64],
    out: Array[int64, 2],
    fo: Array[float64],
    f: Array[float32],
    n: int32,
):
    i = global_id(0)
    if i < n:
        out[0, i] = a[i] + b[i]  # int64
        out[1, i] = a[i] * b[i]  # int64
        out[2, i] = b[i] - a[i]  # int64
        out[3, i] = a[i] + 1  # int32: wraps
        out[4, i] = b[i] + 1  # uint32: wraps
        out[5, i] = c[i] + b[i]  # int64
        out[6, i] = b[i] * b[i]  # uint32: wraps
        fo[i] = a[i] * f[i]  # float64


@SETTINGS
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_int32_uint32_promote_to_int64(backend, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-(2**31), 2**31, size=n).astype(np.int32)
    b = rng.integers(0, 2**32, size=n).astype(np.uint32)
    c = rng.integers(-(2**40), 2**40, size=n).astype(np.int64)
    f = (rng.standard_normal(n) * 1e5).astype(np.float32)
    a[0], b[0] = 2**31 - 1, 2**32 - 1
    out = np.zeros((7, n), np.int64)
    fo = np.zeros(n, np.float64)
    k_int_promotion[grid_for(n), 32](a, b, c, out, fo, f, n)
    with np.errstate(all="ignore"):
        want = [
            a + b,
            a * b,
            b - a,
            (a + 1).astype(np.int64),
            (b + 1).astype(np.int64),
            c + b,
            (b * b).astype(np.int64),
        ]
    assert (a + b).dtype == np.int64
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[k], w, err_msg=f"row {k}")
    np.testing.assert_array_equal(fo, a * f)


def test_int32_uint32_sum_overflows_32_bits(backend):
    a = np.array([2**31 - 1, -(2**31), -1], np.int32)
    b = np.array([2**32 - 1, 0, 2**32 - 1], np.uint32)
    out = np.zeros((7, 3), np.int64)
    k_int_promotion[1, 4](a, b, np.zeros(3, np.int64), out, np.zeros(3), np.zeros(3, np.float32), 3)
    assert out[0].tolist() == [2**31 - 1 + 2**32 - 1, -(2**31), 2**32 - 2]
    assert out[1].tolist() == [(2**31 - 1) * (2**32 - 1), 0, -(2**32 - 1)]


@gk.kernel
def k_join(a: Array[int32], b: Array[int64], flag: Array[bool_], out: Array[int64, 2], n: int32):
    i = global_id(0)
    if i < n:
        v = a[i]
        if flag[i]:
            v = b[i]
        out[0, i] = v * 65536 * 65536  # v is int64 on both paths: no wrap
        c = 2147483647  # literals only: int32
        c += a[i] - a[i] + 1
        out[1, i] = c
        w = 0
        w = a[i]
        w = w * 65536
        out[2, i] = w  # int32: wraps


def test_variable_type_is_join_of_assignments(backend):
    a = np.array([3, -7, 40000, 1], np.int32)
    b = np.array([5, 2**35, -9, 0], np.int64)
    flag = np.array([False, True, False, True])
    out = np.zeros((3, 4), np.int64)
    k_join[1, 4](a, b, flag, out, 4)
    v = np.where(flag, b, a.astype(np.int64))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[0], v * 65536 * 65536)
        np.testing.assert_array_equal(out[1], np.full(4, -(2**31)))
        np.testing.assert_array_equal(out[2], (a * np.int32(65536)).astype(np.int64))


@gk.kernel
def k_wrap_then_widen(a: Array[uint32], b: Array[int32], out: Array[int64, 2], n: int32):
    i = global_id(0)
    if i < n:
        x = a[i]
        out[0, i] = x * x  # uint32 * uint32 is uint32: wraps, then widens
        out[1, i] = a[i] * a[i]
        out[2, i] = x + 4294967295
        y = x * 65536
        out[3, i] = y
        out[4, i] = int64(x * 3)
        out[5, i] = b[i] * b[i]  # int32 * int32 is int32 (values here do not overflow)
        out[6, i] = int64(b[i]) * b[i] * 65536  # computed in int64


def test_unsigned_wraps_before_widening(backend):
    """uint32 arithmetic wraps at 32 bits before it is widened; signed overflow is undefined
    in the generated C (as in CUDA C), so int32 operands are kept in range here."""
    a = np.array([3, 46341, 50000, 2**32 - 1, 2**31, 1 << 20], np.uint32)
    b = np.array([3, -46340, 40000, 1, -1, 1 << 10], np.int32)
    out = np.zeros((7, a.size), np.int64)
    k_wrap_then_widen[1, 8](a, b, out, a.size)
    with np.errstate(all="ignore"):
        want = [
            a * a,
            a * a,
            a + np.uint32(4294967295),
            a * np.uint32(65536),
            a * np.uint32(3),
            b * b,
            b.astype(np.int64) * b * 65536,
        ]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[k], w.astype(np.int64), err_msg=f"row {k}")
    assert np.all((out[:5] >= 0) & (out[:5] < 2**32))  # every value is a uint32


@gk.kernel
def k_cmp_out_of_range_literal(u: Array[uint32], a: Array[int32], out: Array[bool_, 2], n: int32):
    i = global_id(0)
    if i < n:
        out[0, i] = u[i] > -1
        out[1, i] = u[i] == -1
        out[2, i] = a[i] < 3000000000
        out[3, i] = a[i] != -3000000000


def test_compare_with_out_of_range_python_int(backend):
    # NumPy 2 (NEP 50) compares with a Python int that does not fit the array's type by value
    u = np.array([0, 5, 2**32 - 1], np.uint32)
    a = np.array([-(2**31), 0, 2**31 - 1], np.int32)
    out = np.zeros((4, 3), np.bool_)
    k_cmp_out_of_range_literal[1, 4](u, a, out, 3)
    np.testing.assert_array_equal(out, np.stack([u > -1, u == -1, a < 3000000000, a != -3000000000]))


# ---------------------------------------------------------------- type errors


@gk.kernel
def k_store_float_in_int(a: Array[float32], out: Array[int32]):
    i = global_id(0)
    out[i] = a[i] * 2.0


@gk.kernel
def k_store_floor_in_int(a: Array[float32], out: Array[int32]):
    i = global_id(0)
    out[i] = math.floor(a[i])  # math.floor returns a float, like np.floor


@gk.kernel
def k_store_true_div_in_int(a: Array[int32], out: Array[int32]):
    i = global_id(0)
    out[i] = a[i] / 2  # true division gives float64


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


@pytest.mark.parametrize(
    "kern,args,text",
    [
        (k_store_float_in_int, (np.zeros(4, np.float32), np.zeros(4, np.int32)), "out[i] = a[i] * 2.0"),
        (k_store_floor_in_int, (np.zeros(4, np.float32), np.zeros(4, np.int32)), "out[i] = math.floor"),
        (k_store_true_div_in_int, (np.zeros(4, np.int32), np.zeros(4, np.int32)), "out[i] = a[i] / 2"),
    ],
)
def test_store_float_into_int_array_is_type_error(backend, kern, args, text):
    with pytest.raises(gk.KernelTypeError) as ei:
        kern[1, 4](*args)
    err = ei.value
    assert isinstance(err, gk.CompileError) and isinstance(err, gk.GpukernError)
    assert err.lineno == _line_of(kern.fn, text)
    assert err.filename is not None and err.filename.endswith("test_lang_types.py")
    assert isinstance(err.col, int)
    # the output was not touched
    np.testing.assert_array_equal(args[1], 0)


@gk.kernel
def k_store_cast_ok(a: Array[float32], out: Array[int32], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = int32(a[i] * 2.0)


def test_explicit_cast_makes_the_store_legal(backend):
    a = np.array([1.25, -3.75, 100.5, 0.0], np.float32)
    out = np.zeros(4, np.int32)
    k_store_cast_ok[1, 4](a, out, 4)
    np.testing.assert_array_equal(out, (a * np.float32(2.0)).astype(np.int32))


@gk.kernel
def k_syntax_try(a: Array[float32]):
    i = global_id(0)
    try:
        a[i] = 1.0
    except Exception:
        pass


@gk.kernel
def k_syntax_print(a: Array[float32]):
    i = global_id(0)
    print(a[i], file=None)  # print() works; writing to a file does not


@gk.kernel
def k_syntax_matmul(a: Array[float32]):
    i = global_id(0)
    a[i] = a[i] @ a[i]


@pytest.mark.parametrize("kern", [k_syntax_try, k_syntax_print, k_syntax_matmul])
def test_unsupported_constructs_are_syntax_errors(backend, kern):
    with pytest.raises(gk.KernelSyntaxError) as ei:
        kern[1, 1](np.zeros(1, np.float32))
    assert ei.value.lineno is not None
    lines, start = inspect.getsourcelines(kern.fn)
    assert start < ei.value.lineno < start + len(lines)


# ---------------------------------------------------------------- names reserved in C


@gk.kernel
def k_reserved(kernel: Array[float32], out: Array[float32], double: int32, half: float32):
    i = global_id(0)
    if i < double:
        int = i * 2
        float = kernel[i] * half
        local = int + 1
        register = local * 3
        auto = 1.5
        char = 2
        signed = char - 7
        unsigned = signed * signed
        restrict = 0.25
        private = restrict + auto
        constant = private * 2.0
        template = 4
        new = template + 1
        this = new * 2
        threadIdx = i
        blockIdx = threadIdx + 1
        sqrt = 9.0
        main = sqrt + 1.0
        printf = main
        float4 = 0.5
        uint = 3
        size_t = uint + 1
        barrier_ = 2
        gk_tmp = 1
        __x = 2
        out[i] = (
            float
            + int
            + local
            + register
            + auto
            + char
            + signed
            + unsigned
            + constant
            + this
            + blockIdx
            + printf
            + float4
            + size_t
            + barrier_
            + gk_tmp
            + __x
        )


def test_reserved_c_words_as_names(backend):
    n = 20
    kern = np.linspace(-1, 1, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    k_reserved[1, 32](kern, out, n, 3.0)
    i = np.arange(n)
    int_ = i * 2
    local = int_ + 1
    register = local * 3
    signed = 2 - 7
    unsigned = signed * signed
    constant = (0.25 + 1.5) * 2.0
    this = (4 + 1) * 2
    block_idx = i + 1
    printf = 10.0
    want = (
        kern * np.float32(3.0)
        + int_
        + local
        + register
        + 1.5
        + 2
        + signed
        + unsigned
        + constant
        + this
        + block_idx
        + printf
        + 0.5
        + 4
        + 2
        + 1
        + 2
    )
    np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("lang", ["cuda", "opencl"])
def test_reserved_names_renamed_in_source(lang):
    src = k_reserved.source(Array[float32], Array[float32], int32, float32, backend=lang)
    src = "\n".join(line.split("//")[0] for line in src.splitlines())  # drop the Python-line comments
    for pattern in (
        r"\bkernel\b",
        r"\bhalf\b",
        r"\bint double\b",
        r"\bint int\b",
        r"\bfloat float\b",
        r"\bint local\b",
        r"\bfloat auto\b",
        r"\bint this\b",
        r"\bint new\b",
    ):
        assert re.search(pattern, src) is None, pattern


# ---------------------------------------------------------------- launch errors


@gk.kernel
def k_launch(a: Array[float32], b: Array[int32, 2], n: int32, K: Const[int], F: Const[bool]):
    i = global_id(0)
    if i < n and F:
        a[i] = a[i] + K + b[0, 0]


def _good_args():
    return [np.zeros(4, np.float32), np.zeros((2, 2), np.int32), 4, 2, True]


def test_good_launch_runs(backend):
    args = _good_args()
    args[1][0, 0] = 5
    k_launch[1, 4](*args)
    np.testing.assert_array_equal(args[0], np.full(4, 7.0, np.float32))


def test_a_strided_numpy_argument_is_written_back(backend):
    """Once refused: a non-contiguous NumPy array goes in as a contiguous copy and comes back."""
    args = _good_args()
    args[1][0, 0] = 5
    base = np.zeros(8, np.float32)
    args[0] = base[::2]
    k_launch[1, 4](*args)
    np.testing.assert_array_equal(base, np.tile([7.0, 0.0], 4))


@pytest.mark.parametrize(
    "case",
    [
        "too_few",
        "too_many",
        "dtype",
        "ndim",
        "not_array",
        "const_float_for_int",
        "const_int_for_bool",
        "scalar_float_for_int",
        "scalar_overflow",
    ],
)
def test_launch_errors(backend, case):
    args = _good_args()
    if case == "too_few":
        args = args[:-1]
    elif case == "too_many":
        args = args + [1]
    elif case == "dtype":
        args[0] = np.zeros(4, np.float64)
    elif case == "ndim":
        args[1] = np.zeros(4, np.int32)
    elif case == "not_array":
        args[0] = [0.0, 0.0, 0.0, 0.0]
    elif case == "const_float_for_int":
        args[3] = 2.5
    elif case == "const_int_for_bool":
        args[4] = 1
    elif case == "scalar_float_for_int":
        args[2] = 4.5
    elif case == "scalar_overflow":
        args[2] = 2**40
    with pytest.raises(gk.LaunchError):
        k_launch[1, 4](*args)


@pytest.mark.parametrize(
    "grid,block", [(0, 4), (1, 0), (-1, 4), ((2, 0), (4, 1)), (1, (4, -2)), ((1, 1, 1, 1), 4), (1.5, 4), (1, "4")]
)
def test_bad_grid_or_block(backend, grid, block):
    with pytest.raises(gk.LaunchError):
        k_launch[grid, block](*_good_args())


def test_block_too_large(backend):
    too_many = gk.get_backend().max_group + 1
    with pytest.raises(gk.LaunchError):
        k_launch[1, too_many](*_good_args())


def test_calling_kernel_without_config(backend):
    with pytest.raises(gk.LaunchError):
        k_launch(*_good_args())
