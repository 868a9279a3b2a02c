"""Ported from cupy/cupy, ``tests/cupyx_tests/jit_tests/test_raw.py`` (MIT, Copyright Preferred
Networks, Inc. and Preferred Infrastructure, Inc.).

Kernels as written there; the import line ``from cupyx import jit`` became ``from gpukern.cupy import
jit`` and the host arrays are NumPy's (``cupy`` names NumPy below, ``shaped_random`` stands for
``cupy.testing.shaped_random``), so the cases run on every backend.  The unittest class became
pytest functions; CuPy's own error-type checks (``test_raw_grid_invalid*``, ``test_error_msg``) are
left out: gpukern raises its own errors there."""

import numpy
import numpy as cupy
import pytest

import gpukern as gk

from gpukern.cupy import jit


def shaped_random(shape, dtype, seed):
    """Stands for cupy.testing.shaped_random: small values of the dtype, fixed by the seed."""
    rng = numpy.random.RandomState(seed)
    if numpy.dtype(dtype) == numpy.bool_:
        return rng.randint(0, 2, size=shape).astype(dtype)
    return rng.randint(0, 10, size=shape).astype(dtype)


def test_raw_grid_1D(backend):
    @jit.rawkernel()
    def f(arr1, arr2):
        x = jit.grid(1)
        if x < arr1.size:
            arr2[x] = arr1[x]

    x = cupy.arange(10)
    y = cupy.empty_like(x)
    f((1,), (10,), (x, y))
    assert (x == y).all()


def test_raw_grid_2D(backend):
    @jit.rawkernel()
    def f(arr1, arr2, n, m):
        x, y = jit.grid(2)
        if x < n and y < m:
            arr2[x, y] = arr1[x, y]

    x = cupy.arange(20).reshape(4, 5)
    y = cupy.empty_like(x)
    f((1,), (4, 5), (x, y, x.shape[0], x.shape[1]))
    assert (x == y).all()


def test_raw_grid_3D(backend):
    @jit.rawkernel()
    def f(arr1, arr2, k, m, n):
        x, y, z = jit.grid(3)
        if x < k and y < m and z < n:
            arr2[x, y, z] = arr1[x, y, z]

    l, m, n = (2, 3, 4)
    x = cupy.arange(24).reshape(l, m, n)
    y = cupy.empty_like(x)
    f(((l+1)//2, (m+1)//2, (n+1)//2), (2, 2, 2), (x, y, l, m, n))
    assert (x == y).all()


def test_raw_one_thread(backend):
    @jit.rawkernel()
    def f(x, y):
        y[0] = x[0]

    x = cupy.array([10], dtype=numpy.int32)
    y = cupy.array([20], dtype=numpy.int32)
    f((1,), (1,), (x, y))
    assert int(y[0]) == 10


def test_raw_elementwise_single_op(backend):
    @jit.rawkernel()
    def f(x, y):
        tid = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
        y[tid] = x[tid]

    x = shaped_random((30,), dtype=numpy.int32, seed=0)
    y = shaped_random((30,), dtype=numpy.int32, seed=1)
    f((5,), (6,), (x, y))
    assert bool((x == y).all())


def test_raw_elementwise_loop(backend):
    @jit.rawkernel()
    def f(x, y, size):
        tid = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
        ntid = jit.blockDim.x * jit.gridDim.x
        for i in range(tid, size, ntid):
            y[i] = x[i]

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    f((5,), (6,), (x, y, numpy.uint32(1024)))
    assert bool((x == y).all())


def test_raw_multidimensional_array(backend):
    @jit.rawkernel()
    def f(x, y, n_row, n_col):
        tid = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
        ntid = jit.blockDim.x * jit.gridDim.x
        size = n_row * n_col
        for i in range(tid, size, ntid):
            i_row = i // n_col
            i_col = i % n_col
            y[i_row, i_col] = x[i_row, i_col]

    n, m = numpy.uint32(12), numpy.uint32(13)
    x = shaped_random((n, m), dtype=numpy.int32, seed=0)
    y = shaped_random((n, m), dtype=numpy.int32, seed=1)
    f((5,), (6,), (x, y, n, m))
    assert bool((x == y).all())


def test_raw_multidimensional_array_with_attr(backend):
    @jit.rawkernel()
    def f(x, y):
        tid = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
        ntid = jit.blockDim.x * jit.gridDim.x
        n_col = x.size // len(x)
        for i in range(tid, x.size, ntid):
            i_row = i // n_col
            i_col = i % n_col
            y[i_row, i_col] = x[i_row, i_col]

    n, m = numpy.uint32(12), numpy.uint32(13)
    x = shaped_random((n, m), dtype=numpy.int32, seed=0)
    y = shaped_random((n, m), dtype=numpy.int32, seed=1)
    f((5,), (6,), (x, y))
    assert bool((x == y).all())


def test_raw_ndim(backend):
    @jit.rawkernel()
    def f(x, y):
        y[0] = x.ndim

    x = cupy.empty((1, 1, 1, 1, 1, 1, 1), dtype=numpy.int32)
    y = cupy.zeros((1,), dtype=numpy.int64)
    f((1,), (1,), (x, y))
    assert y.item() == 7


def test_raw_0dim_array(backend):
    @jit.rawkernel()
    def f(x, y):
        y[()] = x[()]

    x = shaped_random((), dtype=numpy.int32, seed=0)
    y = shaped_random((), dtype=numpy.int32, seed=1)
    f((1,), (1,), (x, y))
    assert bool((x == y).all())


def test_min(backend):
    @jit.rawkernel()
    def f(x, y, z, r):
        tid = jit.blockDim.x * jit.blockIdx.x + jit.threadIdx.x
        r[tid] = min(x[tid], y[tid], z[tid])

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    z = shaped_random((1024,), dtype=numpy.int32, seed=2)
    r = shaped_random((1024,), dtype=numpy.int32, seed=3)
    f((8,), (128,), (x, y, z, r))
    expected = cupy.minimum(x, cupy.minimum(y, z))
    assert bool((r == expected).all())


def test_max(backend):
    @jit.rawkernel()
    def f(x, y, z, r):
        tid = jit.blockDim.x * jit.blockIdx.x + jit.threadIdx.x
        r[tid] = max(x[tid], y[tid], z[tid])

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    z = shaped_random((1024,), dtype=numpy.int32, seed=2)
    r = shaped_random((1024,), dtype=numpy.int32, seed=3)
    f((8,), (128,), (x, y, z, r))
    expected = cupy.maximum(x, cupy.maximum(y, z))
    assert bool((r == expected).all())


def test_syncthreads(backend):
    @jit.rawkernel()
    def f(x, y, buf):
        tid = jit.threadIdx.x + jit.threadIdx.y * jit.blockDim.x
        ntid = jit.blockDim.x * jit.blockDim.y
        buf[tid] = x[ntid - tid - 1]
        jit.syncthreads()
        y[tid] = buf[ntid - tid - 1]

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    buf = shaped_random((1024,), dtype=numpy.int32, seed=2)
    f((1,), (32, 32), (x, y, buf))
    assert bool((x == y).all())


def test_syncwarp(backend):
    @jit.rawkernel()
    def f(x):
        laneId = jit.threadIdx.x & 0x1f
        if laneId < 16:
            x[laneId] = 1
        else:
            x[laneId] = 2
        jit.syncwarp()

    x = cupy.zeros((32,), dtype=numpy.int32)
    y = cupy.ones_like(x)
    f((1,), (32,), (x,))
    y[16:] += 1
    assert bool((x == y).all())


@pytest.mark.finds("lanes 0..m-1 call syncwarp with mask m, which leaves out lane 0: undefined behaviour", error=gk.WarpMaskError, on=("sim",))
def test_syncwarp_mask(backend):
    @jit.rawkernel()
    def f(x, m):
        laneId = jit.threadIdx.x & 0x1f
        if laneId < m:
            x[laneId] = 1
            jit.syncwarp(mask=m)

    for mask in (2, 4, 8, 16, 32):
        x = cupy.zeros((32,), dtype=numpy.int32)
        y = cupy.zeros_like(x)
        f((1,), (32,), (x, mask))
        y[:mask] += 1
        assert bool((x == y).all())


def test_shared_memory_static(backend):
    @jit.rawkernel()
    def f(x, y):
        tid = jit.threadIdx.x
        ntid = jit.blockDim.x
        bid = jit.blockIdx.x
        i = tid + bid * ntid

        smem = jit.shared_memory(numpy.int32, 32)
        smem[tid] = x[i]
        jit.syncthreads()
        y[i] = smem[ntid - tid - 1]

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    f((32,), (32,), (x, y))
    expected = x.reshape(32, 32)[:, ::-1].ravel()
    assert bool((y == expected).all())


def test_shared_memory_dynamic(backend):
    @jit.rawkernel()
    def f(x, y):
        tid = jit.threadIdx.x
        ntid = jit.blockDim.x
        bid = jit.blockIdx.x
        i = tid + bid * ntid

        smem = jit.shared_memory(numpy.int32, None)
        smem[tid] = x[i]
        jit.syncthreads()
        y[i] = smem[ntid - tid - 1]

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    f((32,), (32,), (x, y), shared_mem=128)
    expected = x.reshape(32, 32)[:, ::-1].ravel()
    assert bool((y == expected).all())


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.uint32, numpy.uint64, numpy.float16, numpy.float32, numpy.float64])
def test_atomic_add(backend, dtype):
    @jit.rawkernel()
    def f(x, index, out):
        tid = jit.blockDim.x * jit.blockIdx.x + jit.threadIdx.x
        jit.atomic_add(out, index[tid], x[tid])

    x = shaped_random((1024,), dtype=dtype, seed=0)
    index = shaped_random(
        (1024,), dtype=numpy.bool_, seed=1).astype(numpy.int32)
    out = cupy.zeros((2,), dtype=dtype)
    f((32,), (32,), (x, index, out))

    expected = cupy.zeros((2,), dtype=dtype)
    numpy.add.at(expected, index, x)
    tol = 3e-2 if dtype == numpy.float16 else 1e-5
    numpy.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


def test_raw_grid_block_interface(backend):
    @jit.rawkernel()
    def f(x, y, size):
        tid = jit.threadIdx.x + jit.blockDim.x * jit.blockIdx.x
        ntid = jit.blockDim.x * jit.gridDim.x
        for i in range(tid, size, ntid):
            y[i] = x[i]

    x = shaped_random((1024,), dtype=numpy.int32, seed=0)
    y = shaped_random((1024,), dtype=numpy.int32, seed=1)
    f[5, 6](x, y, numpy.uint32(1024))
    assert bool((x == y).all())


DTYPES = [numpy.int32, numpy.uint32, numpy.int64, numpy.uint64, numpy.float32, numpy.float64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_shfl(backend, dtype):
    @jit.rawkernel()
    def f(a, b):
        laneId = jit.threadIdx.x & 0x1f
        if laneId == 0:
            value = a
        value = jit.shfl_sync(0xffffffff, value, 0)
        b[laneId] = value

    a = dtype(100)
    b = cupy.empty((32,), dtype=dtype)
    f[1, 32](a, b)
    assert (b == a * cupy.ones((32,), dtype=dtype)).all()


def test_shfl_width(backend):
    @jit.rawkernel()
    def f(a, b, w):
        laneId = jit.threadIdx.x & 0x1f
        value = jit.shfl_sync(0xffffffff, b[jit.threadIdx.x], 0, width=w)
        b[laneId] = value

    c = cupy.arange(32, dtype=cupy.int32)
    for w in (2, 4, 8, 16, 32):
        a = cupy.int32(100)
        b = cupy.arange(32, dtype=cupy.int32)
        f[1, 32](a, b, w)
        c[c % w != 0] = c[c % w == 0]
        assert (b == c).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_shfl_up(backend, dtype):
    N = 5

    @jit.rawkernel()
    def f(a):
        value = jit.shfl_up_sync(0xffffffff, a[jit.threadIdx.x], N)
        a[jit.threadIdx.x] = value

    a = cupy.arange(32, dtype=dtype)
    f[1, 32](a)
    expected = [i for i in range(N)] + [i for i in range(32-N)]
    assert (a == cupy.asarray(expected, dtype=dtype)).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_shfl_down(backend, dtype):
    N = 5

    @jit.rawkernel()
    def f(a):
        value = jit.shfl_down_sync(0xffffffff, a[jit.threadIdx.x], N)
        a[jit.threadIdx.x] = value

    a = cupy.arange(32, dtype=dtype)
    f[1, 32](a)
    expected = [i for i in range(N, 32)] + [(32-N+i) for i in range(N)]
    assert (a == cupy.asarray(expected, dtype=dtype)).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_shfl_xor(backend, dtype):
    @jit.rawkernel()
    def f_shfl_xor(a):
        laneId = jit.threadIdx.x & 0x1f
        value = 31 - laneId
        i = 16
        while i >= 1:
            value += jit.shfl_xor_sync(0xffffffff, value, i)
            i //= 2
        a[jit.threadIdx.x] = value

    a = cupy.arange(32, dtype=dtype)
    b = a.copy()
    f_shfl_xor[1, 32](a)
    assert (a == b.sum() * cupy.ones(32, dtype=dtype)).all()
