"""Device functions (@gk.func): scalars, return values, calls between helpers,
global / shared / local array arguments, specialisation on argument types."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    barrier,
    block_idx,
    bool_,
    float32,
    float64,
    global_id,
    int32,
    int64,
    local,
    shared,
    thread_idx,
    uint32,
)

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def grid_for(n: int, block: int = 32) -> int:
    return max(1, (n + block - 1) // block)


# ---------------------------------------------------------------- scalar helpers


@gk.func
def sq(x):
    return x * x


@gk.func
def norm2(a, b):
    return math.sqrt(sq(a) + sq(b))


@gk.func
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@gk.func
def ipow(b, e):
    r = 1
    for _ in range(e):
        r *= b
    return r


@gk.func
def poly3(x):
    # three levels of calls
    return sq(x) * x + 2.0 * sq(x) + clamp(x, -1.0, 1.0)


@gk.kernel
def k_scalar_funcs(
    a: Array[float32], b: Array[float32], e: Array[int32], out: Array[float32, 2], iout: Array[int64, 2], n: int32
):
    i = global_id(0)
    if i < n:
        out[0, i] = sq(a[i])
        out[1, i] = norm2(a[i], b[i])
        out[2, i] = clamp(a[i], -0.5, 0.75)
        out[3, i] = poly3(a[i])
        out[4, i] = clamp(b[i], a[i], a[i] + 1.0)
        iout[0, i] = ipow(e[i], 3)
        iout[1, i] = ipow(int64(e[i]), 9)
        iout[2, i] = sq(uint32(e[i]) * 1000)  # uint32: wraps
        iout[3, i] = sq(int64(e[i]) * 1000)  # int64: exact
        iout[4, i] = clamp(e[i], 0, 5)


@SETTINGS
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_scalar_helpers_return_values(backend, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, size=n).astype(np.float32)
    b = rng.uniform(-2, 2, size=n).astype(np.float32)
    e = rng.integers(-100, 100, size=n).astype(np.int32)
    e[0] = 99
    out = np.zeros((5, n), np.float32)
    iout = np.zeros((5, n), np.int64)
    k_scalar_funcs[grid_for(n), 32](a, b, e, out, iout, n)
    f = np.float32
    np.testing.assert_allclose(out[0], a * a, rtol=1e-6)
    np.testing.assert_allclose(out[1], np.sqrt(a * a + b * b), rtol=2e-6)
    np.testing.assert_array_equal(out[2], np.clip(a, f(-0.5), f(0.75)))
    np.testing.assert_allclose(out[3], a * a * a + f(2.0) * a * a + np.clip(a, -1, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[4], np.where(b < a, a, np.where(b > a + f(1.0), a + f(1.0), b)))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(iout[0], (e * e * e).astype(np.int64))  # int32 arithmetic
        np.testing.assert_array_equal(iout[1], e.astype(np.int64) ** 9)
        u = e.astype(np.uint32) * np.uint32(1000)
        np.testing.assert_array_equal(iout[2], (u * u).astype(np.int64))
    np.testing.assert_array_equal(iout[3], (e.astype(np.int64) * 1000) ** 2)
    np.testing.assert_array_equal(iout[4], np.clip(e, 0, 5))


@gk.kernel
def k_specialise(
    i32: Array[int32],
    f32: Array[float32],
    f64: Array[float64],
    o_i: Array[int64],
    o_f: Array[float64],
    o_d: Array[float64],
    n: int32,
):
    i = global_id(0)
    if i < n:
        o_i[i] = sq(i32[i])  # int32 variant (wraps)
        o_f[i] = sq(f32[i])  # float32 variant
        o_d[i] = sq(f64[i])  # float64 variant


def test_same_helper_specialised_per_type(backend):
    i32 = np.array([3, 46340, -40000, 7], np.int32)  # squares fit in int32 (signed overflow is undefined)
    f32 = np.array([0.1, 1.1, 3.3, 1e-3], np.float32)
    f64 = f32.astype(np.float64)
    o_i, o_f, o_d = np.zeros(4, np.int64), np.zeros(4), np.zeros(4)
    k_specialise[1, 4](i32, f32, f64, o_i, o_f, o_d, 4)
    np.testing.assert_array_equal(o_f, (f32 * f32).astype(np.float64))
    np.testing.assert_array_equal(o_d, f64 * f64)
    assert not np.array_equal(o_f, o_d)  # the float32 and float64 variants really differ
    np.testing.assert_array_equal(o_i, (i32 * i32).astype(np.int64))
    assert (i32 * i32).dtype == np.int32
    src = k_specialise.source(i32, f32, f64, o_i, o_f, o_d, 4, backend="opencl")
    assert src.count("sq") >= 3


# ---------------------------------------------------------------- helpers with arrays


@gk.func
def put(arr, i, v):
    arr[i] = v


@gk.func
def put2(arr, r, c, v):
    if r < arr.shape[0] and c < arr.shape[1]:
        arr[r, c] = v


@gk.func
def row_sum(arr, r):
    s = 0.0
    for c in range(arr.shape[1]):
        s += arr[r, c]
    return s


@gk.func
def gid():
    return global_id(0)


@gk.kernel
def k_global_array_helpers(a: Array[float32, 2], sums: Array[float32], mark: Array[int32, 2], n: int32):
    i = gid()
    if i < n:
        put(sums, i, row_sum(a, i))
        put2(mark, i, 0, i)
        put2(mark, i, 1, i * 2)
        put2(mark, i, 2, -1)  # column out of range: not written


@SETTINGS
@given(rows=st.integers(1, 50), cols=st.integers(1, 9), seed=st.integers(0, 2**32 - 1))
def test_helpers_with_global_arrays(backend, rows, cols, seed):
    a = (np.random.default_rng(seed).integers(-50, 50, size=(rows, cols)) / 4).astype(np.float32)
    sums = np.zeros(rows, np.float32)
    mark = np.full((rows, 2), 7, np.int32)
    k_global_array_helpers[grid_for(rows), 32](a, sums, mark, rows)
    np.testing.assert_array_equal(sums, a.sum(axis=1))
    np.testing.assert_array_equal(mark, np.stack([np.arange(rows), 2 * np.arange(rows)], axis=1))


@gk.func
def stage(buf, t, v):
    buf[t] = v


@gk.func
def rotate_read(buf, t, bs):
    return buf[(t + 1) % bs]


@gk.func
def block_reduce(buf, t, bs):
    s = bs // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2
    return buf[0]


@gk.kernel
def k_shared_helpers(a: Array[float32], rot: Array[float32], sums: Array[float32], n: int32, BS: Const[int]):
    buf = shared(float32, BS)
    t = thread_idx.x
    i = block_idx.x * BS + t
    stage(buf, t, a[i] if i < n else 0.0)
    barrier()
    r = rotate_read(buf, t, BS)
    barrier()
    total = block_reduce(buf, t, BS)
    if i < n:
        rot[i] = r
    if t == 0:
        sums[block_idx.x] = total


@SETTINGS
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_helpers_with_shared_arrays(backend, n, seed):
    bs = 32
    blocks = grid_for(n, bs)
    a = (np.random.default_rng(seed).integers(-64, 64, size=n) / 8).astype(np.float32)
    rot, sums = np.zeros(n, np.float32), np.zeros(blocks, np.float32)
    k_shared_helpers[blocks, bs](a, rot, sums, n, bs)
    padded = np.zeros(blocks * bs, np.float32)
    padded[:n] = a
    blk = padded.reshape(blocks, bs)
    np.testing.assert_array_equal(rot, np.roll(blk, -1, axis=1).ravel()[:n])
    np.testing.assert_array_equal(sums, blk.sum(axis=1))


@gk.func
def local_fill(tmp, m, base):
    for j in range(m):
        tmp[j] = base + j * j


@gk.func
def local_dot(tmp, other, m):
    s = int64(0)
    for j in range(m):
        s += tmp[j] * other[j]
    return s


@gk.kernel
def k_local_helpers(base: Array[int32], out: Array[int64], n: int32, M: Const[int]):
    t1 = local(int32, M)
    t2 = local(int32, M)
    i = global_id(0)
    if i < n:
        local_fill(t1, M, base[i])
        local_fill(t2, M, -base[i])
        put(t2, 0, 5)
        out[i] = local_dot(t1, t2, M)


@pytest.mark.parametrize("M", [3, 6])
def test_helpers_with_local_arrays(backend, M):
    base = np.arange(-10, 30, 3, dtype=np.int32)
    out = np.zeros(base.size, np.int64)
    k_local_helpers[1, 32](base, out, base.size, M)
    j = np.arange(M, dtype=np.int64)
    t1 = base[:, None].astype(np.int64) + j * j
    t2 = -base[:, None].astype(np.int64) + j * j
    t2[:, 0] = 5
    np.testing.assert_array_equal(out, (t1 * t2).sum(axis=1))


# ---------------------------------------------------------------- side effects and short-circuit


@gk.func
def take_ticket(counter):
    return atomic_add(counter, 0, 1)


@gk.func
def bump(counts, k, i):
    counts[k, i] += 1
    return True


@gk.kernel
def k_short_circuit(
    a: Array[int32],
    counts: Array[int32, 2],
    res: Array[bool_, 2],
    tickets: Array[int32],
    counter: Array[int32],
    n: int32,
):
    i = global_id(0)
    if i < n:
        # the helper is only called when the left operand does not decide the result
        res[0, i] = a[i] > 0 and bump(counts, 0, i)
        res[1, i] = a[i] > 0 or bump(counts, 1, i)
        if a[i] % 2 == 0 and bump(counts, 2, i) and a[i] > 2:
            res[2, i] = True
        tickets[i] = take_ticket(counter)


def test_short_circuit_with_side_effecting_helpers(backend):
    a = np.array([-3, -2, -1, 0, 1, 2, 3, 4, 5, 6], np.int32)
    n = a.size
    counts = np.zeros((3, n), np.int32)
    res = np.zeros((3, n), np.bool_)
    tickets = np.full(n, -1, np.int32)
    counter = np.zeros(1, np.int32)
    k_short_circuit[1, 16](a, counts, res, tickets, counter, n)
    np.testing.assert_array_equal(counts[0], a > 0)
    np.testing.assert_array_equal(counts[1], ~(a > 0))
    np.testing.assert_array_equal(counts[2], a % 2 == 0)
    np.testing.assert_array_equal(res[0], a > 0)
    np.testing.assert_array_equal(res[1], np.ones(n, bool))
    np.testing.assert_array_equal(res[2], (a % 2 == 0) & (a > 2))
    np.testing.assert_array_equal(np.sort(tickets), np.arange(n))
    assert counter[0] == n


# ---------------------------------------------------------------- errors in helpers


@gk.func
def recurse(x):
    if x <= 0:
        return 0
    return recurse(x - 1) + 1


@gk.kernel
def k_recursive(out: Array[int32]):
    i = global_id(0)
    out[i] = recurse(i)


def test_recursion_is_a_compile_error(backend):
    with pytest.raises(gk.CompileError):
        k_recursive[1, 4](np.zeros(4, np.int32))


@gk.func
def bad_store(arr, v):
    arr[0] = v * 0.5


@gk.kernel
def k_bad_store(out: Array[int32], x: Array[float32]):
    bad_store(out, x[0])


def test_type_error_inside_helper_points_at_helper(backend):
    with pytest.raises(gk.KernelTypeError) as ei:
        k_bad_store[1, 1](np.zeros(1, np.int32), np.zeros(1, np.float32))
    lines, start = inspect.getsourcelines(bad_store.__wrapped__)
    assert ei.value.lineno == start + 2


def test_helper_is_plain_python_outside_kernels():
    assert sq(3.0) == 9.0
    assert clamp(5, 0, 3) == 3 and ipow(2, 10) == 1024
