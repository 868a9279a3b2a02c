"""Raw kernels ported from CuPy's JIT tests: tests/cupyx_tests/jit_tests/test_raw.py (cupy/cupy).

Spelling: ``@jit.rawkernel()`` -> ``@gk.kernel``; ``jit.threadIdx.x`` -> ``thread_idx.x`` (likewise
``blockIdx``, ``blockDim``, ``gridDim``); ``jit.grid(1)`` -> ``global_id(0)``, ``x, y = jit.grid(2)`` ->
``x = global_id(0)``, ``y = global_id(1)``; ``jit.syncthreads()`` -> ``barrier()``; ``jit.syncwarp`` ->
``gk.syncwarp``; ``jit.shared_memory(numpy.int32, 32)`` -> ``shared(int32, 32)`` and
``jit.shared_memory(numpy.int32, None)`` -> ``gk.dynamic_shared(int32)``; ``jit.atomic_add`` -> ``atomic_add``;
``jit.shfl_*_sync`` -> ``gk.shfl_*_sync``. A launch ``f((grid,), (block,), (args...))`` is
``f[grid, block](args...)``; ``shared_mem=128`` is the launch's third item. ``testing.shaped_random`` inputs
are NumPy random integers.

Not ported: test_shfl (CuPy's own comment calls it invalid Python: ``value`` is assigned on lane 0 only;
gpukern refuses reading a local that may be unassigned, by design), and the tests of CuPy's error messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import atomic_add, barrier, block_dim, block_idx, global_id, grid_dim, int32, shared, thread_idx

from .support import needs

_WARP = needs("warp intrinsics")


def _random(shape, dtype, seed):
    """Stands for cupy.testing.shaped_random: small random values of the dtype."""
    return np.random.default_rng(seed).integers(0, 10, shape).astype(dtype)


# Source: cupy test_raw.py, TestRaw.test_raw_grid_1D (f)
@gk.kernel
def raw_grid_1d(arr1, arr2):
    x = global_id(0)
    if x < arr1.size:
        arr2[x] = arr1[x]


# Source: cupy test_raw.py, TestRaw.test_raw_grid_2D (f)
@gk.kernel
def raw_grid_2d(arr1, arr2, n, m):
    x = global_id(0)
    y = global_id(1)
    if x < n and y < m:
        arr2[x, y] = arr1[x, y]


# Source: cupy test_raw.py, TestRaw.test_raw_grid_3D (f)
@gk.kernel
def raw_grid_3d(arr1, arr2, k, m, n):
    x = global_id(0)
    y = global_id(1)
    z = global_id(2)
    if x < k and y < m and z < n:
        arr2[x, y, z] = arr1[x, y, z]


# Source: cupy test_raw.py, TestRaw.test_raw_one_thread (f)
@gk.kernel
def raw_one_thread(x, y):
    y[0] = x[0]


# Source: cupy test_raw.py, TestRaw.test_raw_elementwise_single_op (f)
@gk.kernel
def raw_elementwise_single_op(x, y):
    tid = thread_idx.x + block_dim.x * block_idx.x
    y[tid] = x[tid]


# Source: cupy test_raw.py, TestRaw.test_raw_elementwise_loop (f); also test_raw_grid_block_interface
@gk.kernel
def raw_elementwise_loop(x, y, size):
    tid = thread_idx.x + block_dim.x * block_idx.x
    ntid = block_dim.x * grid_dim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


# Source: cupy test_raw.py, TestRaw.test_raw_multidimensional_array (f)
@gk.kernel
def raw_multidimensional_array(x, y, n_row, n_col):
    tid = thread_idx.x + block_dim.x * block_idx.x
    ntid = block_dim.x * grid_dim.x
    size = n_row * n_col
    for i in range(tid, size, ntid):
        i_row = i // n_col
        i_col = i % n_col
        y[i_row, i_col] = x[i_row, i_col]


# Source: cupy test_raw.py, TestRaw.test_raw_multidimensional_array_with_attr (f)
@gk.kernel
def raw_multidimensional_array_with_attr(x, y):
    tid = thread_idx.x + block_dim.x * block_idx.x
    ntid = block_dim.x * grid_dim.x
    n_col = x.size // len(x)
    for i in range(tid, x.size, ntid):
        i_row = i // n_col
        i_col = i % n_col
        y[i_row, i_col] = x[i_row, i_col]


# Source: cupy test_raw.py, TestRaw.test_raw_ndim (f): a 7-dimensional array
@gk.kernel
def raw_ndim(x, y):
    y[0] = x.ndim


# Source: cupy test_raw.py, TestRaw.test_raw_0dim_array (f)
@gk.kernel
def raw_0dim_array(x, y):
    y[()] = x[()]


# Source: cupy test_raw.py, TestRaw.test_min (f)
@gk.kernel
def raw_min(x, y, z, r):
    tid = block_dim.x * block_idx.x + thread_idx.x
    r[tid] = min(x[tid], y[tid], z[tid])


# Source: cupy test_raw.py, TestRaw.test_max (f)
@gk.kernel
def raw_max(x, y, z, r):
    tid = block_dim.x * block_idx.x + thread_idx.x
    r[tid] = max(x[tid], y[tid], z[tid])


# Source: cupy test_raw.py, TestRaw.test_syncthreads (f): a global buffer between two barrier-separated phases
@gk.kernel
def raw_syncthreads(x, y, buf):
    tid = thread_idx.x + thread_idx.y * block_dim.x
    ntid = block_dim.x * block_dim.y
    buf[tid] = x[ntid - tid - 1]
    barrier()
    y[tid] = buf[ntid - tid - 1]


# Source: cupy test_raw.py, TestRaw.test_shared_memory_static (f)
@gk.kernel
def raw_shared_memory_static(x, y):
    tid = thread_idx.x
    ntid = block_dim.x
    bid = block_idx.x
    i = tid + bid * ntid

    smem = shared(int32, 32)
    smem[tid] = x[i]
    barrier()
    y[i] = smem[ntid - tid - 1]


# Source: cupy test_raw.py, TestRaw.test_shared_memory_dynamic (f)
@gk.kernel
def raw_shared_memory_dynamic(x, y):
    tid = thread_idx.x
    ntid = block_dim.x
    bid = block_idx.x
    i = tid + bid * ntid

    smem = gk.dynamic_shared(int32)
    smem[tid] = x[i]
    barrier()
    y[i] = smem[ntid - tid - 1]


# Source: cupy test_raw.py, TestRaw.test_atomic_add (f)
@gk.kernel
def raw_atomic_add(x, index, out):
    tid = block_dim.x * block_idx.x + thread_idx.x
    atomic_add(out, index[tid], x[tid])


def test_raw_grid_1d(backend):
    x = np.arange(10)
    y = np.empty_like(x)
    raw_grid_1d[1, 10](x, y)
    np.testing.assert_array_equal(x, y)


def test_raw_grid_2d(backend):
    x = np.arange(20).reshape(4, 5)
    y = np.empty_like(x)
    raw_grid_2d[1, (4, 5)](x, y, x.shape[0], x.shape[1])
    np.testing.assert_array_equal(x, y)


def test_raw_grid_3d(backend):
    l, m, n = (2, 3, 4)  # noqa: E741 (the source's names)
    x = np.arange(24).reshape(l, m, n)
    y = np.zeros_like(x)
    raw_grid_3d[((l + 1) // 2, (m + 1) // 2, (n + 1) // 2), (2, 2, 2)](x, y, l, m, n)
    np.testing.assert_array_equal(x, y)


def test_raw_one_thread(backend):
    x = np.array([10], dtype=np.int32)
    y = np.array([20], dtype=np.int32)
    raw_one_thread[1, 1](x, y)
    assert y[0] == 10


def test_raw_elementwise_single_op(backend):
    x = _random((30,), np.int32, 0)
    y = _random((30,), np.int32, 1)
    raw_elementwise_single_op[5, 6](x, y)
    np.testing.assert_array_equal(x, y)


def test_raw_elementwise_loop(backend):
    # also test_raw_grid_block_interface, which launches the same kernel as f[5, 6]
    x = _random((1024,), np.int32, 0)
    y = _random((1024,), np.int32, 1)
    raw_elementwise_loop[5, 6](x, y, np.uint32(1024))
    np.testing.assert_array_equal(x, y)


def test_raw_multidimensional_array(backend):
    n, m = np.uint32(12), np.uint32(13)
    x = _random((n, m), np.int32, 0)
    y = _random((n, m), np.int32, 1)
    raw_multidimensional_array[5, 6](x, y, n, m)
    np.testing.assert_array_equal(x, y)


def test_raw_multidimensional_array_with_attr(backend):
    x = _random((12, 13), np.int32, 0)
    y = _random((12, 13), np.int32, 1)
    raw_multidimensional_array_with_attr[5, 6](x, y)
    np.testing.assert_array_equal(x, y)


def test_raw_ndim(backend):
    x = np.empty((1, 1, 1, 1, 1, 1, 1), dtype=np.int32)
    y = np.zeros((1,), dtype=np.int64)
    raw_ndim[1, 1](x, y)
    assert y[0] == x.ndim


def test_raw_0dim_array(backend):
    x = np.array(_random((), np.int32, 0))
    y = np.array(_random((), np.int32, 1))
    raw_0dim_array[1, 1](x, y)
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("kernel, ref", [(raw_min, np.minimum), (raw_max, np.maximum)])
def test_min_max(backend, kernel, ref):
    x, y, z, r = (_random((256,), np.int32, s) for s in range(4))  # 1024 in the source
    kernel[2, 128](x, y, z, r)
    np.testing.assert_array_equal(r, ref(x, ref(y, z)))


def test_syncthreads(backend):
    x = _random((1024,), np.int32, 0)
    y = _random((1024,), np.int32, 1)
    buf = _random((1024,), np.int32, 2)
    raw_syncthreads[1, (32, 32)](x, y, buf)
    np.testing.assert_array_equal(x, y)


def test_shared_memory_static(backend):
    x = _random((1024,), np.int32, 0)
    y = _random((1024,), np.int32, 1)
    raw_shared_memory_static[32, 32](x, y)
    np.testing.assert_array_equal(y, x.reshape(32, 32)[:, ::-1].ravel())


@needs("dynamic shared memory")
def test_shared_memory_dynamic(backend):
    x = _random((1024,), np.int32, 0)
    y = _random((1024,), np.int32, 1)
    raw_shared_memory_dynamic[32, 32, 128](x, y)
    np.testing.assert_array_equal(y, x.reshape(32, 32)[:, ::-1].ravel())


@pytest.mark.parametrize(
    "dtype",
    [
        np.int32,
        np.uint32,
        pytest.param(np.uint64, marks=needs("uint64 arrays and atomics")),
        pytest.param(np.float16, marks=needs("float16 (and its atomic_add)")),
        np.float32,
        np.float64,
    ],
)
def test_atomic_add(backend, dtype):
    x = _random((1024,), dtype, 0)
    index = np.random.default_rng(1).integers(0, 2, 1024).astype(np.int32)
    out = np.zeros((2,), dtype=dtype)
    raw_atomic_add[32, 32](x, index, out)
    expected = np.zeros((2,), dtype=dtype)
    np.add.at(expected, index, x)
    if dtype == np.float16:  # atomics add in any order: each of the n - 1 sums rounds by up to half an ulp
        exact, sums = np.zeros(2), np.zeros(2)
        np.add.at(exact, index, x.astype(np.float64))
        np.add.at(sums, index, np.abs(x.astype(np.float64)))
        bound = (np.bincount(index, minlength=2) - 1) * 2.0**-11 * sums
        assert (np.abs(out.astype(np.float64) - exact) <= bound).all(), (out, exact)
        return
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- warp-level


# Source: cupy test_raw.py, TestRaw.test_syncwarp (f)
@gk.kernel
def raw_syncwarp(x):
    laneId = thread_idx.x & 0x1F
    if laneId < 16:
        x[laneId] = 1
    else:
        x[laneId] = 2
    gk.syncwarp()


# Source: cupy test_raw.py, TestRaw.test_syncwarp_mask (f)
@gk.kernel
def raw_syncwarp_mask(x, m):
    laneId = thread_idx.x & 0x1F
    if laneId < m:
        x[laneId] = 1
        gk.syncwarp(mask=m)


# Source: cupy test_raw.py, TestRaw.test_shfl_width (f)
@gk.kernel
def raw_shfl_width(a, b, w):
    laneId = thread_idx.x & 0x1F
    value = gk.shfl_sync(0xFFFFFFFF, b[thread_idx.x], 0, width=w)
    b[laneId] = value


N = 5


# Source: cupy test_raw.py, TestRaw.test_shfl_up (f)
@gk.kernel
def raw_shfl_up(a):
    value = gk.shfl_up_sync(0xFFFFFFFF, a[thread_idx.x], N)
    a[thread_idx.x] = value


# Source: cupy test_raw.py, TestRaw.test_shfl_down (f)
@gk.kernel
def raw_shfl_down(a):
    value = gk.shfl_down_sync(0xFFFFFFFF, a[thread_idx.x], N)
    a[thread_idx.x] = value


# Source: cupy test_raw.py, TestRaw.test_shfl_xor (f_shfl_xor)
@gk.kernel
def raw_shfl_xor(a):
    laneId = thread_idx.x & 0x1F
    value = 31 - laneId
    i = 16
    while i >= 1:
        value += gk.shfl_xor_sync(0xFFFFFFFF, value, i)
        i //= 2
    a[thread_idx.x] = value


@_WARP
def test_syncwarp(backend):
    x = np.zeros((32,), dtype=np.int32)
    raw_syncwarp[1, 32](x)
    y = np.ones_like(x)
    y[16:] += 1
    np.testing.assert_array_equal(x, y)


@_WARP
@pytest.mark.parametrize("mask", [2, 4, 8, 16, 32])
def test_syncwarp_mask(backend, mask):
    x = np.zeros((32,), dtype=np.int32)
    raw_syncwarp_mask[1, 32](x, np.int32(mask))
    y = np.zeros_like(x)
    y[:mask] += 1
    np.testing.assert_array_equal(x, y)


@_WARP
def test_shfl_width(backend):
    for w in (2, 4, 8, 16, 32):
        b = np.arange(32, dtype=np.int32)
        raw_shfl_width[1, 32](np.int32(100), b, np.int32(w))
        # each lane gets lane 0 of its w-lane segment (the expectation is made afresh for each width:
        # carried over from the last one, as the port had it, it has the wrong length after w = 2)
        c = np.arange(32, dtype=np.int32)
        c[c % w != 0] = c[c % w == 0].repeat(w - 1)
        np.testing.assert_array_equal(b, c)


SHFL_TYPES = [
    np.int32,
    np.uint32,
    np.int64,
    pytest.param(np.uint64, marks=needs("uint64 arrays")),
    np.float32,
    np.float64,
]


@_WARP
@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_shfl_up(backend, dtype):
    a = np.arange(32, dtype=dtype)
    raw_shfl_up[1, 32](a)
    np.testing.assert_array_equal(a, np.array(list(range(N)) + list(range(32 - N)), dtype=dtype))


@_WARP
@pytest.mark.parametrize("dtype", SHFL_TYPES)
def test_shfl_down(backend, dtype):
    a = np.arange(32, dtype=dtype)
    raw_shfl_down[1, 32](a)
    np.testing.assert_array_equal(a, np.array(list(range(N, 32)) + [32 - N + i for i in range(N)], dtype=dtype))


@_WARP
def test_shfl_xor(backend):
    a = np.arange(32, dtype=np.int32)
    b = a.copy()
    raw_shfl_xor[1, 32](a)
    np.testing.assert_array_equal(a, np.full(32, b.sum()))
