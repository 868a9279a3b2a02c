"""Memory: shared and local arrays, barriers, supersteps, N-D arrays and .shape,
device arrays, copy-back of written arrays, and the six atomics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    atomic_cas,
    atomic_exch,
    atomic_max,
    atomic_min,
    atomic_sub,
    barrier,
    block_dim,
    block_idx,
    float32,
    global_id,
    int32,
    int64,
    local,
    shared,
    superstep,
    thread_idx,
    uint32,
)

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ATOMIC_DTYPES = [np.int32, np.uint32, np.float32]


def grid_for(n: int, block: int) -> int:
    return max(1, (n + block - 1) // block)


# ---------------------------------------------------------------- shared memory


@gk.kernel
def k_block_reverse(a: Array[float32], out: Array[float32], n: int32, BS: Const[int]):
    buf = shared(float32, BS)
    t = thread_idx.x
    i = block_idx.x * BS + t
    buf[t] = a[i] if i < n else -1.0
    barrier()
    if i < n:
        out[i] = buf[BS - 1 - t]


@pytest.mark.parametrize("bs", [8, 32])
@SETTINGS
@given(blocks=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_shared_block_reversal(backend, bs, blocks, seed):
    n = blocks * bs
    a = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    k_block_reverse[blocks, bs](a, out, n, bs)
    np.testing.assert_array_equal(out, a.reshape(blocks, bs)[:, ::-1].ravel())


@gk.kernel
def k_block_sum(a, partial, n: int32, BS: Const[int]):
    buf = shared(float32, BS)
    t = thread_idx.x
    i = block_idx.x * BS + t
    buf[t] = a[i] if i < n else 0.0
    barrier()
    s = BS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2
    if t == 0:
        partial[block_idx.x] = buf[0]


@gk.kernel
def k_block_sum_int(a: Array[int32], partial: Array[int32], n: int32, BS: Const[int]):
    buf = shared(int32, BS)
    t = thread_idx.x
    i = block_idx.x * block_dim.x + t
    buf[t] = a[i] if i < n else 0
    barrier()
    for lvl in range(LOG_BS_MAX):
        s = BS >> (lvl + 1)
        if s > 0 and t < s:
            buf[t] += buf[t + s]
        barrier()
    if t == 0:
        partial[block_idx.x] = buf[0]


LOG_BS_MAX = 10


@pytest.mark.parametrize("bs", [16, 64])
@SETTINGS
@given(n=st.integers(1, 400), seed=st.integers(0, 2**32 - 1))
def test_shared_tree_reduction(backend, bs, n, seed):
    rng = np.random.default_rng(seed)
    blocks = grid_for(n, bs)
    a = rng.integers(-1000, 1000, size=n).astype(np.int32)
    partial = np.zeros(blocks, np.int32)
    k_block_sum_int[blocks, bs](a, partial, n, bs)
    padded = np.zeros(blocks * bs, np.int32)
    padded[:n] = a
    np.testing.assert_array_equal(partial, padded.reshape(blocks, bs).sum(axis=1))
    af = (a / 8).astype(np.float32)  # exact in float32 whatever the order
    pf = np.zeros(blocks, np.float32)
    k_block_sum[blocks, bs](af, pf, n, bs)
    padded_f = np.zeros(blocks * bs, np.float32)
    padded_f[:n] = af
    np.testing.assert_array_equal(pf, padded_f.reshape(blocks, bs).sum(axis=1))


@gk.kernel
def k_shared_2d_transpose(a: Array[float32, 2], out: Array[float32, 2], T: Const[int]):
    tile = shared(float32, (T, T + 1))
    tx = thread_idx.x
    ty = thread_idx.y
    r = block_idx.y * T + ty
    c = block_idx.x * T + tx
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]
    barrier()
    r2 = block_idx.x * T + ty
    c2 = block_idx.y * T + tx
    if r2 < out.shape[0] and c2 < out.shape[1]:
        out[r2, c2] = tile[tx, ty]


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_shared_2d_tile_transpose(backend, rows, cols, seed):
    T = 8
    a = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros((cols, rows), np.float32)
    k_shared_2d_transpose[(grid_for(cols, T), grid_for(rows, T)), (T, T)](a, out, T)
    np.testing.assert_array_equal(out, a.T)


# ---------------------------------------------------------------- supersteps


@gk.kernel
def k_superstep_smooth(a: Array[float32], out: Array[float32], STEPS: Const[int], BS: Const[int]):
    buf = shared(float32, BS)
    nxt = shared(float32, BS)
    t = thread_idx.x
    i = block_idx.x * BS + t
    with superstep():
        buf[t] = a[i]
    for _ in range(STEPS):
        with superstep():
            left = buf[t - 1] if t > 0 else buf[t]
            right = buf[t + 1] if t < BS - 1 else buf[t]
            nxt[t] = left + buf[t] + right
        with superstep():
            buf[t] = nxt[t]
    out[i] = buf[t]


def np_smooth(a, steps, bs):
    x = a.reshape(-1, bs).copy()
    for _ in range(steps):
        left = np.concatenate([x[:, :1], x[:, :-1]], axis=1)
        right = np.concatenate([x[:, 1:], x[:, -1:]], axis=1)
        x = left + x + right
    return x.ravel()


@pytest.mark.parametrize("steps", [1, 3])
def test_superstep_smoothing(backend, steps):
    bs, blocks = 16, 3
    a = np.random.default_rng(steps).integers(-8, 8, size=bs * blocks).astype(np.float32)
    out = np.zeros_like(a)
    k_superstep_smooth[blocks, bs](a, out, steps, bs)
    np.testing.assert_array_equal(out, np_smooth(a, steps, bs))


# ---------------------------------------------------------------- local per-thread arrays


@gk.kernel
def k_local(a: Array[int32, 2], out: Array[int32, 2], rows: int32, L: Const[int]):
    tmp = local(int32, L)
    pre = local(int64, (2, L))
    i = global_id(0)
    if i < rows:
        for j in range(L):
            tmp[j] = a[i, j] * (j + 1)
        # in-place reversal of the private array
        for j in range(L // 2):
            tmp[j], tmp[L - 1 - j] = tmp[L - 1 - j], tmp[j]
        # prefix sums in a 2-D private array
        run = int64(0)
        for j in range(L):
            run += tmp[j]
            pre[0, j] = run
            pre[1, j] = run * 2
        for j in range(L):
            out[i, j] = tmp[j]
            out[i, L + j] = int32(pre[1, j] - pre[0, j])


@pytest.mark.parametrize("L", [4, 7])
@SETTINGS
@given(rows=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_local_arrays_are_per_thread(backend, L, rows, seed):
    a = np.random.default_rng(seed).integers(-100, 100, size=(rows, L)).astype(np.int32)
    out = np.zeros((rows, 2 * L), np.int32)
    k_local[grid_for(rows, 32), 32](a, out, rows, L)
    tmp = (a * np.arange(1, L + 1, dtype=np.int32))[:, ::-1]
    np.testing.assert_array_equal(out[:, :L], tmp)
    np.testing.assert_array_equal(out[:, L:], np.cumsum(tmp, axis=1))


# ---------------------------------------------------------------- N-D arrays


@gk.kernel
def k_2d(a: Array[float32, 2], out: Array[float32, 2], shp: Array[int64]):
    r = global_id(1)
    c = global_id(0)
    if r == 0 and c == 0:
        shp[0] = a.shape[0]
        shp[1] = a.shape[1]
    if r < a.shape[0] and c < a.shape[1]:
        out[c, r] = a[r, c] * 2.0 + a[r][c]


@SETTINGS
@given(rows=st.integers(1, 30), cols=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_2d_arrays_and_shape(backend, rows, cols, seed):
    a = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros((cols, rows), np.float32)
    shp = np.zeros(2, np.int64)
    k_2d[(grid_for(cols, 8), grid_for(rows, 8)), (8, 8)](a, out, shp)
    np.testing.assert_array_equal(shp, [rows, cols])
    np.testing.assert_array_equal(out, (a * np.float32(2.0) + a).T)


@gk.kernel
def k_3d(a: Array[int32, 3], out: Array[int32, 3], sums: Array[int64, 2], shp: Array[int64]):
    i = global_id(0)
    if i == 0:
        shp[0] = a.shape[0]
        shp[1] = a.shape[1]
        shp[2] = a.shape[2]
    if i < a.shape[0]:
        for j in range(a.shape[1]):
            s = int64(0)
            for k in range(a.shape[2]):
                out[i, j, k] = a[i, j, k] + a[i][j][a.shape[2] - 1 - k]
                s += a[i, j, k]
            sums[i, j] = s


@SETTINGS
@given(shape=st.tuples(st.integers(1, 20), st.integers(1, 6), st.integers(1, 7)), seed=st.integers(0, 2**32 - 1))
def test_3d_arrays_and_shape(backend, shape, seed):
    a = np.random.default_rng(seed).integers(-(2**30), 2**30, size=shape).astype(np.int32)
    out = np.zeros(shape, np.int32)
    sums = np.zeros(shape[:2], np.int64)
    shp = np.zeros(3, np.int64)
    k_3d[grid_for(shape[0], 16), 16](a, out, sums, shp)
    np.testing.assert_array_equal(shp, shape)
    np.testing.assert_array_equal(out, a + a[:, :, ::-1])
    np.testing.assert_array_equal(sums, a.astype(np.int64).sum(axis=2))


@gk.kernel
def k_3d_geometry(out: Array[int32, 3]):
    x = global_id(0)
    y = global_id(1)
    z = global_id(2)
    if z < out.shape[0] and y < out.shape[1] and x < out.shape[2]:
        out[z, y, x] = z * 10000 + y * 100 + x


def test_3d_launch_fills_3d_array(backend):
    shape = (5, 7, 9)
    out = np.full(shape, -1, np.int32)
    k_3d_geometry[(3, 2, 3), (4, 4, 2)](out)
    z, y, x = np.indices(shape)
    np.testing.assert_array_equal(out, z * 10000 + y * 100 + x)


# ---------------------------------------------------------------- device arrays and copy-back


@gk.kernel
def k_axpy(a: Array[float32], x: Array[float32], y: Array[float32], out: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = a[0] * x[i] + y[i]


@gk.kernel
def k_scale_inplace(x: Array[float32], s: float32, n: int32):
    i = global_id(0)
    if i < n:
        x[i] = x[i] * s


def test_device_arrays_across_launches(backend):
    n = 100
    rng = np.random.default_rng(0)
    x_h = rng.integers(-50, 50, size=n).astype(np.float32)
    y_h = rng.integers(-50, 50, size=n).astype(np.float32)
    x = gk.to_device(x_h)
    y_h0 = y_h.copy()
    y = gk.to_device(y_h)
    a = gk.to_device(np.array([2.0], np.float32))
    out = gk.empty(n, np.float32)
    assert out.shape == (n,) and out.dtype == np.float32
    k_axpy[grid_for(n, 32), 32](a, x, y, out, n)
    k_scale_inplace[grid_for(n, 32), 32](out, 0.5, n)
    k_axpy[grid_for(n, 32), 32](a, out, out, y, n)  # y = 3 * out, on the device
    z = gk.zeros(n, np.float32)
    np.testing.assert_array_equal(z.get(), np.zeros(n, np.float32))
    k_axpy[grid_for(n, 32), 32](a, z, x, z, n)  # z = 0*2 + x
    want_out = (2 * x_h + y_h) * np.float32(0.5)
    np.testing.assert_array_equal(out.get(), want_out)
    np.testing.assert_array_equal(y.get(), 3 * want_out)
    np.testing.assert_array_equal(x.get(), x_h)
    np.testing.assert_array_equal(z.get(), x_h)
    np.testing.assert_array_equal(np.asarray(out), want_out)
    # the host arrays the device arrays were made from are not touched by device work
    np.testing.assert_array_equal(y_h, y_h0)


def test_device_arrays_2d_and_int(backend):
    a_h = np.arange(24, dtype=np.int32).reshape(4, 6)
    a = gk.to_device(a_h)
    out = gk.zeros((4, 6), np.int32)
    sums = gk.empty((4, 6), np.int64)
    shp = gk.zeros(3, np.int64)
    # reuse the 3-D kernel with a 1-deep array view by passing 3-D device arrays
    a3 = gk.to_device(a_h.reshape(4, 6, 1))
    out3 = gk.zeros((4, 6, 1), np.int32)
    k_3d[1, 8](a3, out3, sums, shp)
    np.testing.assert_array_equal(out3.get().reshape(4, 6), 2 * a_h)
    np.testing.assert_array_equal(sums.get(), a_h.astype(np.int64))
    np.testing.assert_array_equal(shp.get(), [4, 6, 1])
    assert a.get().shape == (4, 6) and out.get().sum() == 0


def test_inputs_unchanged_outputs_copied_back(backend):
    n = 50
    a = np.array([3.0], np.float32)
    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.linspace(2, 3, n).astype(np.float32)
    x0, y0 = x.copy(), y.copy()
    x.flags.writeable = False  # an input the kernel only reads may be read-only
    out = np.zeros(n, np.float32)
    k_axpy[grid_for(n, 16), 16](a, x, y, out, n)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_allclose(out, np.float32(3.0) * x0 + y0, rtol=1e-6, atol=1e-6)
    # an array that is both read and written is copied back
    k_scale_inplace[grid_for(n, 16), 16](y, -2.0, n)
    np.testing.assert_array_equal(y, y0 * np.float32(-2.0))


# ---------------------------------------------------------------- atomics


@gk.kernel
def k_histogram(x: Array[int32], hist, weight, n: int32):
    i = global_id(0)
    if i < n:
        atomic_add(hist, x[i], weight[i])


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
@SETTINGS
@given(n=st.integers(1, 600), bins=st.integers(1, 20), seed=st.integers(0, 2**32 - 1))
def test_atomic_add_histogram(backend, dtype, n, bins, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, bins, size=n).astype(np.int32)
    weight = rng.integers(0, 5, size=n).astype(dtype)
    if dtype == np.float32:
        weight = weight / np.float32(2)  # halves: exact in any order
    hist = np.zeros(bins, dtype)
    k_histogram[grid_for(n, 64), 64](x, hist, weight, n)
    want = np.zeros(bins, np.float64)
    np.add.at(want, x, weight.astype(np.float64))
    np.testing.assert_array_equal(hist, want.astype(dtype))


@gk.kernel
def k_tickets(counter, tickets, n: int32):
    i = global_id(0)
    if i < n:
        tickets[i] = atomic_add(counter, 0, 1)


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_add_returns_unique_tickets(backend, dtype):
    n = 1000
    counter = np.zeros(1, dtype)
    tickets = np.full(n, 7777, dtype)
    k_tickets[grid_for(n, 128), 128](counter, tickets, n)
    assert counter[0] == n
    np.testing.assert_array_equal(np.sort(tickets), np.arange(n, dtype=dtype))


@gk.kernel
def k_sub(counter, olds, v, n: int32):
    i = global_id(0)
    if i < n:
        olds[i] = atomic_sub(counter, 0, v[i])


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_sub(backend, dtype):
    n = 400
    v = np.ones(n, dtype) * dtype(3)
    counter = np.array([1000], dtype)
    olds = np.zeros(n, dtype)
    k_sub[grid_for(n, 64), 64](counter, olds, v, n)
    with np.errstate(all="ignore"):
        final = np.array([1000], dtype) - dtype(3) * dtype(n)  # uint32 wraps below zero
    assert counter[0] == final[0]
    with np.errstate(all="ignore"):
        want_olds = np.array(1000, dtype) - np.arange(n).astype(dtype) * dtype(3)
    np.testing.assert_array_equal(np.sort(olds), np.sort(want_olds))


@gk.kernel
def k_minmax(x, lo, hi, olds_lo, n: int32):
    i = global_id(0)
    if i < n:
        olds_lo[i] = atomic_min(lo, 0, x[i])
        atomic_max(hi, 0, x[i])
        atomic_min(lo, 1 + i % 3, x[i])
        atomic_max(hi, 1 + i % 3, x[i])


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
@SETTINGS
@given(n=st.integers(1, 500), seed=st.integers(0, 2**32 - 1))
def test_atomic_min_max(backend, dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.uint32:
        x = rng.integers(0, 2**32, size=n).astype(dtype)  # above 2**31: unsigned comparison
    elif dtype == np.int32:
        x = rng.integers(-(2**31), 2**31, size=n).astype(dtype)
    else:
        x = (rng.standard_normal(n) * 1000).astype(dtype)
    if np.dtype(dtype).kind == "f":
        init_lo, init_hi = np.float32(np.inf), np.float32(-np.inf)
    else:
        init_lo, init_hi = np.iinfo(dtype).max, np.iinfo(dtype).min
    lo = np.full(4, init_lo, dtype)
    hi = np.full(4, init_hi, dtype)
    olds = np.zeros(n, dtype)
    k_minmax[grid_for(n, 64), 64](x, lo, hi, olds, n)
    assert lo[0] == x.min() and hi[0] == x.max()
    for r in range(3):
        sel = x[np.arange(n) % 3 == r]
        assert lo[1 + r] == (sel.min() if sel.size else init_lo)
        assert hi[1 + r] == (sel.max() if sel.size else init_hi)
    # every old value is the initial value or one of the inputs, and >= the final minimum
    assert np.all(np.isin(olds, np.append(x, init_lo)))
    assert np.all(olds >= x.min())
    assert np.any(olds == init_lo)


@gk.kernel
def k_exch(cell, vals, olds, n: int32):
    i = global_id(0)
    if i < n:
        olds[i] = atomic_exch(cell, 0, vals[i])


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_exch(backend, dtype):
    n = 400
    vals = (np.arange(n) + 1).astype(dtype)
    if dtype == np.float32:
        vals = vals + np.float32(0.25)
    cell = np.array([dtype(7)], dtype) if dtype != np.uint32 else np.array([2**32 - 1], dtype)
    init = cell[0]
    olds = np.zeros(n, dtype)
    k_exch[grid_for(n, 64), 64](cell, vals, olds, n)
    # the old values and the final value are a permutation of the initial value and all written values
    np.testing.assert_array_equal(np.sort(np.append(olds, cell[0])), np.sort(np.append(vals, init)))


@gk.kernel
def k_cas_counter(counter, got, n: int32):
    i = global_id(0)
    if i < n:
        # the classic CAS loop: a failed CAS returns the value to retry with (a plain re-read
        # could be served from a non-coherent cache on a GPU and spin forever)
        old = atomic_add(counter, 0, 0)
        while True:
            seen = atomic_cas(counter, 0, old, old + 1)
            if seen == old:
                got[i] = old
                break
            old = seen


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_cas_counter(backend, dtype):
    n = 300
    counter = np.array([5], dtype)
    got = np.zeros(n, dtype)
    k_cas_counter[grid_for(n, 64), 64](counter, got, n)
    assert counter[0] == 5 + n
    np.testing.assert_array_equal(np.sort(got), np.arange(5, 5 + n).astype(dtype))


@gk.kernel
def k_cas_once(cell, cmp, vals, olds, n: int32):
    i = global_id(0)
    if i < n:
        olds[i] = atomic_cas(cell, i, cmp[i], vals[i])


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_cas_swaps_only_on_match(backend, dtype):
    cell = np.array([1, 2, 3, 4, 5, 6], dtype)
    cmp = np.array([1, 0, 3, 9, 5, 7], dtype)
    vals = np.array([10, 20, 30, 40, 50, 60], dtype)
    olds = np.zeros(6, dtype)
    orig = cell.copy()
    k_cas_once[1, 8](cell, cmp, vals, olds, 6)
    np.testing.assert_array_equal(olds, orig)
    np.testing.assert_array_equal(cell, np.where(orig == cmp, vals, orig))


@gk.kernel
def k_hist2d(x: Array[int32], y: Array[int32], h: Array[int32, 2], n: int32):
    i = global_id(0)
    if i < n:
        atomic_add(h, (x[i], y[i]), 1)


def test_atomic_with_tuple_index_on_2d(backend):
    rng = np.random.default_rng(3)
    n = 700
    x = rng.integers(0, 5, size=n).astype(np.int32)
    y = rng.integers(0, 7, size=n).astype(np.int32)
    h = np.zeros((5, 7), np.int32)
    k_hist2d[grid_for(n, 64), 64](x, y, h, n)
    want = np.zeros((5, 7), np.int32)
    np.add.at(want, (x, y), 1)
    np.testing.assert_array_equal(h, want)


@gk.kernel
def k_shared_hist(x: Array[int32], hist, lo, hi, vals, n: int32, BINS: Const[int], BS: Const[int]):
    sh = shared(uint32, BINS)
    smin = shared(float32, 1)
    smax = shared(int32, 1)
    t = thread_idx.x
    i = block_idx.x * BS + t
    if t < BINS:
        sh[t] = 0
    if t == 0:
        smin[0] = 1e30
        smax[0] = -2147483647
    barrier()
    if i < n:
        atomic_add(sh, x[i], 1)
        atomic_min(smin, 0, vals[i])
        atomic_max(smax, 0, x[i])
        atomic_sub(sh, x[i], 2)
        atomic_add(sh, x[i], 2)
    barrier()
    if t < BINS:
        atomic_add(hist, t, sh[t])
    if t == 0:
        atomic_min(lo, 0, smin[0])
        atomic_max(hi, 0, smax[0])
        sh[0] = atomic_exch(sh, 0, sh[0])
        atomic_cas(smax, 0, -7, 0)


@SETTINGS
@given(n=st.integers(1, 500), seed=st.integers(0, 2**32 - 1))
def test_atomics_on_shared_arrays(backend, n, seed):
    rng = np.random.default_rng(seed)
    bins, bs = 8, 64
    x = rng.integers(0, bins, size=n).astype(np.int32)
    vals = (rng.standard_normal(n) * 100).astype(np.float32)
    hist = np.zeros(bins, np.uint32)
    lo = np.array([np.inf], np.float32)
    hi = np.array([-(2**31)], np.int32)
    k_shared_hist[grid_for(n, bs), bs](x, hist, lo, hi, vals, n, bins, bs)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=bins).astype(np.uint32))
    assert lo[0] == vals.min()
    assert hi[0] == x.max()


# ---------------------------------------------------------------- size, len, min/max of several
@gk.kernel
def sizes(a: Array[float32, 2], out: Array[int64], v: Array[float32]):
    s = shared(float32, (4, 8))
    t = global_id(0)
    if t == 0:
        out[0] = a.size  # the product of the shape, read from the launch
        out[1] = len(a)  # the first dimension, as Python's
        out[2] = s.size  # a constant
        out[3] = len(s)
        out[4] = a.ndim
    if t < v.shape[0]:
        v[t] = min(v[t], 2.0, float32(t) - 5.0) + max(v[t], -1.0, float32(t), 0.5)


def test_size_and_len_of_arrays_and_min_max_of_several_arguments(backend):
    """``a.size`` and ``len(a)`` as NumPy and Python have them; ``min``/``max`` of three or more
    numbers pairwise from the left (the first wins ties and NaN)."""
    a = np.ones((3, 5), np.float32)
    out = np.zeros(5, np.int64)
    v = np.array([3.0, -2.0, np.nan, 0.25, 7.0, 1.0], np.float32)
    want = v.copy()
    for t in range(len(v)):
        x = v[t]
        want[t] = min(min(x, np.float32(2.0)), np.float32(t) - 5) + max(max(x, np.float32(-1.0)), np.float32(t), 0.5)
    sizes[1, 8](a, out, v)
    assert out.tolist() == [15, 3, 32, 4, 2]
    np.testing.assert_array_equal(v, want)


@gk.kernel
def count_range(out: Array[int32], start: gk.uint32, stop: int32, step: gk.uint32):
    c = 0
    for i in range(start, stop, step):
        c += 1
    out[0] = c


@pytest.mark.parametrize("start, stop, step", [(3, -5, 2), (3, 20, 2), (0, 2**31 - 1, 2**30), (4_000_000_000, 7, 1)])
def test_range_with_mixed_int32_and_uint32_bounds_counts_as_python(backend, start, stop, step):
    out = np.zeros(1, np.int32)
    count_range[1, 1](out, np.uint32(start), stop, np.uint32(step))
    assert out[0] == len(range(start, stop, step))
