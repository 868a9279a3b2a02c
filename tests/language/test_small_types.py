"""8- and 16-bit integers and uint64 against NumPy 2, on every backend (docs/language.md, "Types").

Each operator on edge values of each type is tests/semantics/test_ops.py's (it walks the tables over
every type); here: promotion of mixed operands and of literals (NEP 50), wrap-around through
whole expressions (C computes narrow integers in int), scalar parameters and their ranges,
shared and local arrays, casts, math typing (NumPy's loops: int8 in float16, int16 in float32),
bit functions on the value's width, and atomics.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import (
    Array,
    float16,
    float32,
    global_id,
    int8,
    int16,
    int32,
    int64,
    local,
    shared,
    thread_idx,
    uint8,
    uint16,
    uint64,
)
from gpukern import testing as gkt

NARROW = (int8, uint8, int16, uint16)
MIXED = (int8, uint8, int16, uint16, int32, uint64, int64, float16, float32)


def edge_values(dt: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values of ``dt``: the type's extremes and values around zero, then random ones (for
    32/64-bit signed types small ones: their overflow is undefined in C, docs/language.md)."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return rng.uniform(-100, 100, n).astype(dt)
    info = np.iinfo(dt)
    if dt.kind == "i" and dt.itemsize >= 4:
        return rng.integers(-1000, 1000, n, dtype=dt, endpoint=True)
    edges = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3] + ([-1, -2, -3] if dt.kind == "i" else [])
    rest = rng.integers(info.min, info.max, n - len(edges), dtype=dt, endpoint=True)
    return np.concatenate([np.array(edges, dt), rest])


@gk.kernel
def mixed(a, b, out):
    i = global_id(0)
    if i < out.shape[0]:
        out[i] = (a[i] + b[i]) // 3 - a[i] * b[i]


@pytest.mark.parametrize("ta", MIXED, ids=lambda t: t.name)
@pytest.mark.parametrize("tb", NARROW + (uint64,), ids=lambda t: t.name)
def test_mixed_operands_promote_and_wrap_like_numpy(backend, ta, tb):
    """``(a + b) // 3 - a * b`` on two arrays of any two types: the kernel computes in NumPy's
    result type, wrapping there (``int8 + int8`` wraps in int8; ``int8 + uint8`` is int16;
    ``uint64 + int64`` is float64), exactly as NumPy does."""
    rng = np.random.default_rng(len(ta.name) * 31 + len(tb.name))
    a, b = edge_values(ta.dtype, 64, rng), rng.permutation(edge_values(tb.dtype, 64, rng))
    with np.errstate(all="ignore"):
        want = (a + b) // 3 - a * b
    if want.dtype.kind == "i" and want.dtype.itemsize >= 4:  # signed 32/64-bit overflow is undefined in C
        exact = (a.astype(object) + b.astype(object)) // 3 - a.astype(object) * b.astype(object)
        assert (want.astype(object) == exact).all()
    out = np.zeros(64, want.dtype)
    mixed[1, 64](a, b, out)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(out, want, rtol=2e-3 if want.dtype == np.float16 else 1e-6)
    else:
        np.testing.assert_array_equal(out, want)


@gk.kernel
def with_literals(a: Array[int8], out: Array[int8], big: Array[gk.bool_], neg: Array[int8]):
    i = global_id(0)
    out[i] = a[i] + 1  # int8: 127 + 1 wraps to -128
    big[i] = a[i] * 2 > 100  # the product wraps in int8 before the comparison
    neg[i] = -a[i]  # -(-128) is -128


def test_literals_take_the_narrow_type(backend):
    """A Python literal is weak (NEP 50): ``int8_value + 1`` is int8 and wraps there."""
    a = np.array([127, -128, 0, 60, 51, 100, -1, -100], np.int8)
    out, big, neg = np.zeros_like(a), np.zeros(8, bool), np.zeros_like(a)
    with_literals[1, 8](a, out, big, neg)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, a + 1)
        np.testing.assert_array_equal(big, a * 2 > 100)
        np.testing.assert_array_equal(neg, -a)
    assert (a + 1).dtype == np.int8 and out[0] == -128 and not big[5]  # 100 * 2 wraps to -56


def test_literal_out_of_the_types_range_is_an_error():
    """NumPy 2 raises OverflowError for ``int8_value + 300``; the kernel is a KernelTypeError at the line."""
    with pytest.raises(OverflowError):
        np.int8(1) + 300

    @gk.kernel
    def k(a: Array[int8], out: Array[int8]):
        i = global_id(0)
        out[i] = a[i] + 300

    with pytest.raises(gk.KernelTypeError, match="300 does not fit in int8") as e:
        k.source(np.zeros(1, np.int8), np.zeros(1, np.int8))
    assert e.value.loc is not None and "a[i] + 300" in e.value.loc.source_line()

    @gk.kernel
    def u(a: Array[uint64], out: Array[uint64]):
        out[0] = a[0] + -1

    with pytest.raises(gk.KernelTypeError, match="-1 does not fit in uint64"):
        u.source(np.zeros(1, np.uint64), np.zeros(1, np.uint64))


@gk.kernel
def compare_mixed(a: Array[int8], b: Array[uint8], c: Array[uint64], d: Array[int64], out: Array[gk.bool_, 2]):
    i = global_id(0)
    out[0, i] = a[i] < b[i]  # int16
    out[1, i] = c[i] > d[i]  # float64, as NumPy
    out[2, i] = a[i] == b[i]
    out[3, i] = c[i] >= 2**63


def test_mixed_signed_unsigned_comparisons(backend):
    a = np.array([-1, -128, 127, 0, 5, -5], np.int8)
    b = np.array([255, 0, 127, 0, 4, 251], np.uint8)
    c = np.array([2**64 - 1, 2**63, 0, 5, 2**63 - 1, 1], np.uint64)
    d = np.array([-1, 2**62, 0, -5, 2**62, 2], np.int64)
    out = np.zeros((4, 6), bool)
    compare_mixed[1, 6](a, b, c, d, out)
    want = np.array([a < b, c > d, a == b, c >= 2**63])
    np.testing.assert_array_equal(out, want)


@gk.kernel
def uint64_ops(a: Array[uint64], b: Array[uint64], out: Array[uint64, 2], n: uint64):
    i = global_id(0)
    out[0, i] = a[i] + b[i]
    out[1, i] = a[i] * b[i]
    out[2, i] = a[i] // b[i]
    out[3, i] = a[i] % b[i]
    out[4, i] = a[i] >> 63
    out[5, i] = a[i] - n
    out[6, i] = max(a[i], b[i])
    out[7, i] = ~a[i]


def test_uint64_above_int64(backend):
    """uint64 values at and above 2**63: arithmetic wraps modulo 2**64, division and
    comparison are unsigned, and a scalar parameter takes every value up to 2**64 - 1."""
    a = np.array([2**64 - 1, 2**63, 2**63 + 5, 7, 0, 2**40], np.uint64)
    b = np.array([2, 3, 2**63, 2**64 - 1, 1, 2**30], np.uint64)
    n = 2**64 - 1
    out = np.zeros((8, 6), np.uint64)
    uint64_ops[1, 6](a, b, out, n)
    with np.errstate(all="ignore"):
        want = [a + b, a * b, a // b, a % b, a >> np.uint64(63), a - np.uint64(n), np.maximum(a, b), ~a]
    np.testing.assert_array_equal(out, np.array(want))
    with pytest.raises(gk.LaunchError, match="does not fit in uint64"):
        uint64_ops[1, 6](a, b, out, -1)
    with pytest.raises(gk.LaunchError, match="does not fit in uint64"):
        uint64_ops[1, 6](a, b, out, 2**64)


@pytest.mark.parametrize("t", NARROW + (uint64,), ids=lambda t: t.name)
def test_scalar_parameters_convert_with_range_checks(backend, t):
    """A scalar parameter of a narrow type takes every integer in its range, from Python or
    NumPy; one outside is a LaunchError naming the argument, never a wrapped value."""

    @gk.kernel
    def k(out: Array[t], x: t):
        out[global_id(0)] = x

    info = np.iinfo(t.dtype)
    out = np.zeros(1, t.dtype)
    for v in (int(info.min), int(info.max), 1, t.dtype.type(info.max)):
        k[1, 1](out, v)
        assert out[0] == v and out.dtype == t.dtype
    for bad in (int(info.min) - 1, int(info.max) + 1):
        with pytest.raises(gk.LaunchError, match=f"argument 'x' = {bad} does not fit in {t.name}"):
            k[1, 1](out, bad)
    with pytest.raises(gk.LaunchError, match="must be an integer"):
        k[1, 1](out, 1.5)


@pytest.mark.parametrize("t", NARROW, ids=lambda t: t.name)
def test_shared_and_local_arrays(backend, t):
    """Shared and local arrays of narrow types: a block reverses its values through shared memory
    and each thread sums a local array of them (in the type, wrapping)."""

    @gk.kernel
    def k(a: Array[t], out: Array[t], sums: Array[t]):
        s = shared(t, 64)
        mine = local(t, 4)
        j = thread_idx.x
        s[j] = a[global_id(0)]
        gk.barrier()
        out[global_id(0)] = s[63 - j]
        for q in range(4):
            mine[q] = s[(j + q) % 64]
        total = mine[0]
        for q in range(1, 4):
            total += mine[q]
        sums[global_id(0)] = total

    rng = np.random.default_rng(3)
    a = edge_values(t.dtype, 128, rng)
    out, sums = np.zeros_like(a), np.zeros_like(a)
    k[2, 64](a, out, sums)
    blocks = a.reshape(2, 64)
    np.testing.assert_array_equal(out, blocks[:, ::-1].reshape(-1))
    with np.errstate(all="ignore"):
        want = sum(np.roll(blocks, -q, axis=1) for q in range(1, 4)) + blocks
    assert want.dtype == t.dtype
    np.testing.assert_array_equal(sums, want.reshape(-1))


@gk.kernel
def casts(a: Array[int32], f: Array[float32], o8: Array[int8, 2], ou16: Array[uint16, 2], oh: Array[float16]):
    i = global_id(0)
    o8[0, i] = int8(a[i])  # wraps, as astype
    o8[1, i] = int8(f[i])
    ou16[0, i] = uint16(a[i])
    ou16[1, i] = uint16(int8(a[i]))  # sign-extended, then wrapped
    oh[i] = float16(int8(a[i]))


def test_casts_wrap_like_astype(backend):
    a = np.array([0, 127, 128, -129, 255, 65535, 65536, -1, 2**31 - 1, -(2**31)], np.int32)
    f = np.array([0.0, 1.9, -1.9, 127.0, -128.0, 100.5, -0.5, 3.0, 42.0, -7.0], np.float32)
    o8, ou16, oh = np.zeros((2, 10), np.int8), np.zeros((2, 10), np.uint16), np.zeros(10, np.float16)
    casts[1, 10](a, f, o8, ou16, oh)
    np.testing.assert_array_equal(o8, [a.astype(np.int8), f.astype(np.int8)])
    np.testing.assert_array_equal(ou16, [a.astype(np.uint16), a.astype(np.int8).astype(np.uint16)])
    np.testing.assert_array_equal(oh, a.astype(np.int8).astype(np.float16))


@pytest.mark.parametrize(
    "t, x", [(int8, 12), (uint8, 12), (int16, 100), (uint16, 100), (uint64, 100)], ids=lambda v: str(v)
)
def test_math_functions_compute_in_numpys_float(backend, t, x):
    """``math.exp`` of an integer computes in the float NumPy's loop uses: int8 and uint8 in float16
    (exp(12) overflows to inf), int16 and uint16 in float32 (exp(100) overflows), uint64 in
    float64 (finite) -- the kernel's value, stored in a float64 array, says which."""

    @gk.kernel
    def k(a: Array[t], out: Array[gk.float64]):
        out[global_id(0)] = math.exp(a[global_id(0)])

    a = np.array([x, 1], t.dtype)
    out = np.zeros(2, np.float64)
    k[1, 2](a, out)
    with np.errstate(over="ignore"):
        want = np.exp(a)
    assert want.dtype == gk.types.math_float(t).dtype
    assert math.isinf(want[0]) == (t != uint64)
    assert math.isinf(out[0]) == math.isinf(want[0])
    np.testing.assert_allclose(out[1], want[1], rtol=1e-3)


def test_bit_functions_on_the_values_width():
    """popc/clz/ffs/brev count on the type's own width, like CUDA's on 32 and 64 bits (every
    backend against these host forms: tests/semantics/test_ops.py::test_math)."""
    assert gk.popc(np.int8(-1)) == 8 and gk.popc(np.uint16(0xFFFF)) == 16 and gk.popc(np.uint64(2**64 - 1)) == 64
    assert gk.clz(np.uint8(1)) == 7 and gk.clz(np.int16(1)) == 15 and gk.clz(np.uint64(1)) == 63
    assert gk.ffs(np.int8(-128)) == 8 and gk.ffs(np.uint16(0x8000)) == 16 and gk.ffs(np.uint64(2**63)) == 64
    assert gk.brev(np.uint8(1)) == 128 and gk.brev(np.int16(1)) == -(2**15) and gk.brev(np.uint64(1)) == 2**63


@gk.kernel
def u64_atomics(acc: Array[uint64], values: Array[uint64], old: Array[uint64]):
    i = global_id(0)
    old[i] = gk.atomic_add(acc, 0, values[i])
    gk.atomic_max(acc, 1, values[i])
    gk.atomic_min(acc, 2, values[i])
    gk.atomic_xor(acc, 3, values[i])
    s = shared(uint64, 1)
    if thread_idx.x == 0:
        s[0] = 0
    gk.barrier()
    gk.atomic_or(s, 0, values[i])
    gk.barrier()
    if thread_idx.x == 0:
        gk.atomic_exch(acc, 4 + gk.block_idx.x, s[0])


def test_uint64_atomics_under_contention(backend):
    """Every thread of two blocks updates the same uint64 elements: the sum wraps modulo 2**64,
    max and min compare unsigned (values above 2**63 are the largest), on global and shared arrays."""
    rng = np.random.default_rng(1)
    values = rng.integers(0, 2**64 - 1, 128, dtype=np.uint64, endpoint=True)
    values[:4] = [2**64 - 1, 2**63, 1, 0]
    acc = np.array([5, 0, 2**64 - 1, 0, 0, 0], np.uint64)
    old = np.zeros(128, np.uint64)
    u64_atomics[2, 64](acc, values, old)
    with np.errstate(over="ignore"):
        total = np.uint64(5) + values.sum(dtype=np.uint64)
    assert acc[0] == total and acc[1] == values.max() and acc[2] == values.min()
    assert acc[3] == np.bitwise_xor.reduce(values)
    assert acc[4] == np.bitwise_or.reduce(values[:64]) and acc[5] == np.bitwise_or.reduce(values[64:])
    # the old values returned are the running sums of one order of the additions: each old value
    # plus its addend is the next thread's old value, or the total
    with np.errstate(over="ignore"):
        assert sorted([5, *(old + values).tolist()]) == sorted([*old.tolist(), int(total)])


# ---------------------------------------------------------------- property tests
@gk.kernel
def poly(a, b, out):
    i = global_id(0)
    if i < out.shape[0]:
        x = a[i]
        out[i] = x * x - (b[i] << 3) + (x ^ b[i]) // 5 - x % 7


@settings(deadline=None, max_examples=25)
@given(st.data())
def test_narrow_arithmetic_matches_numpy_on_any_values(data):
    """Arbitrary values of any narrow or unsigned 64-bit type (wrapping everywhere, as NumPy's),
    on every backend, through ``gpukern.testing``."""
    t = data.draw(st.sampled_from(NARROW + (uint64,)))
    n = data.draw(gkt.sizes(1, 300))
    cfg = data.draw(gkt.launch_configs(n, extra_blocks=1))
    values = gkt.arrays(t.dtype, n)
    a, b = data.draw(values), data.draw(values)

    def reference(a, b, out):
        with np.errstate(all="ignore"):
            return {"out": a * a - _shl(b, 3) + (a ^ b) // t.dtype.type(5) - a % t.dtype.type(7)}

    gkt.assert_kernel_matches(lambda a, b, out: poly[cfg](a, b, out), reference, [a, b, np.zeros(n, t.dtype)])


def _shl(x: np.ndarray, k: int) -> np.ndarray:
    """``x << k`` wrapping in x's type (NumPy's own)."""
    return np.left_shift(x, x.dtype.type(k))
