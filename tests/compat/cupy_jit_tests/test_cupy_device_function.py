"""Ported from cupy/cupy, ``tests/cupyx_tests/jit_tests/test_device_function.py`` and
``test_cooperative_groups.py`` (MIT, Copyright Preferred Networks, Inc. and Preferred Infrastructure,
Inc.): kernels as written there, ``from cupyx import jit`` became ``from gpukern.cupy import jit``,
the arrays are NumPy's (``cupy`` names NumPy, ``shaped_random`` stands for CuPy's; ``x[:] = -1``
into a uint64 array, which NumPy refuses, is written with the value it gives in CuPy); the test of a
recursive device function, which CuPy expects to fail with ValueError, expects gpukern's refusal."""

import numpy
import numpy as cupy
import pytest

import gpukern as gk
from gpukern.cupy import jit


def shaped_random(shape, dtype, seed):
    return numpy.random.RandomState(seed).randint(0, 10, size=shape).astype(dtype)


def test_device_function(backend):
    @jit.rawkernel()
    def f(x, y, z):
        tid = jit.threadIdx.x
        z[tid] = g(x[tid], y[tid]) + x[tid] + y[tid]

    @jit.rawkernel(device=True)
    def g(x, y):
        x += 1
        y += 1
        return x + y

    x = shaped_random((30,), dtype=numpy.int32, seed=0)
    y = shaped_random((30,), dtype=numpy.int32, seed=1)
    z = shaped_random((30,), dtype=numpy.int32, seed=2)
    f((1,), (30,), (x, y, z))
    assert (z == (x + y + 1) * 2).all()


def test_device_function_duplicated_names(backend):
    @jit.rawkernel()
    def f(x, y, z):
        tid = jit.threadIdx.x
        z[tid] = g(10)(x[tid], y[tid])
        z[tid] += g(20)(x[tid], y[tid])
        z[tid] += g(30)(x[tid], y[tid])

    def g(const):
        @jit.rawkernel(device=True)
        def f(x, y):
            return x + y + const
        return f

    x = shaped_random((30,), dtype=numpy.int32, seed=0)
    y = shaped_random((30,), dtype=numpy.int32, seed=1)
    z = shaped_random((30,), dtype=numpy.int32, seed=2)
    f((1,), (30,), (x, y, z))
    assert (z == (x + y) * 3 + 60).all()


def test_device_function_recursive(backend):
    @jit.rawkernel()
    def f(x, y, z):
        tid = jit.threadIdx.x
        z[tid] = g(x[tid], y[tid])

    @jit.rawkernel(device=True)
    def g(x, y):
        return x + y + g(x, y)

    x = shaped_random((30,), dtype=numpy.int32, seed=0)
    y = shaped_random((30,), dtype=numpy.int32, seed=1)
    z = shaped_random((30,), dtype=numpy.int32, seed=2)
    with pytest.raises(gk.KernelSyntaxError, match="recursion"):
        f((1,), (30,), (x, y, z))


@pytest.mark.finds("syncthreads() under `if tid % (step * 2) == 0:`, which only some threads take: undefined "
                   "behaviour in CUDA (a barrier every thread of the block must reach)", error=gk.BarrierDivergenceError)
def test_device_function_template_recursion(backend):
    @jit.rawkernel()
    def f(x, y):
        tid = jit.threadIdx.x
        y[tid] = x[tid]
        jit.syncthreads()
        g(1)(y)

    def g(step):
        @jit.rawkernel(device=True)
        def f(x):
            if step < 256:
                tid = jit.threadIdx.x
                if tid % (step * 2) == 0:
                    x[tid] += x[tid + step]
                    jit.syncthreads()
                    g(step * 2)(x)
        return f

    x = shaped_random((256,), dtype=numpy.int32, seed=0)
    y = shaped_random((256,), dtype=numpy.int32, seed=1)
    f((1,), (256,), (x, y))
    assert y[0] == x.sum()


def test_device_function_called_once(backend):
    @jit.rawkernel(device=True)
    def g(x):
        x[0] += 1
        return 1

    @jit.rawkernel()
    def f(x):
        x[g(x)] += 1

    x = cupy.array([0, 0])
    f((1,), (1,), (x,))
    numpy.testing.assert_array_equal(x, [1, 1])


def test_thread_block_group(backend):
    @jit.rawkernel()
    def test_thread_block(x):
        g = jit.cg.this_thread_block()
        if g.thread_rank() == 0:
            x[0] += 101
        if g.thread_rank() == 1:
            x[1] = g.size()
        # test dim3
        if g.thread_rank() == 2:
            g_idx = g.group_index()
            x[2], x[3], x[4] = g_idx.x, g_idx.y, g_idx.z
        if g.thread_rank() == 3:
            t_idx = g.thread_index()
            x[5], x[6], x[7] = t_idx.x, t_idx.y, t_idx.z
        if g.thread_rank() == 4:
            g_dim = g.group_dim()
            x[8], x[9], x[10] = g_dim.x, g_dim.y, g_dim.z
        g.sync()

    x = cupy.empty((16,), dtype=cupy.int64)
    x[:] = -1
    test_thread_block[1, 32](x)
    assert x[0] == 100
    assert x[1] == 32
    assert (x[2], x[3], x[4]) == (0, 0, 0)
    assert (x[5], x[6], x[7]) == (3, 0, 0)
    assert (x[8], x[9], x[10]) == (32, 1, 1)
    assert (x[11:] == -1).all()


def test_thread_block_group_cu116_new_APIs(backend):
    @jit.rawkernel()
    def test_thread_block(x):
        g = jit.cg.this_thread_block()
        if g.thread_rank() == 0:
            x[0] = g.num_threads()
        if g.thread_rank() == 1:
            d_th = g.dim_threads()
            x[1], x[2], x[3] = d_th.x, d_th.y, d_th.z
        g.sync()

    x = cupy.empty((16,), dtype=cupy.int64)
    x[:] = -1
    test_thread_block[1, 32](x)
    assert x[0] == 32
    assert (x[1], x[2], x[3]) == (32, 1, 1)
    assert (x[4:] == -1).all()


def test_grid_group(backend):
    @jit.rawkernel()
    def test_grid(x):
        g = jit.cg.this_grid()
        if g.thread_rank() == 0:
            x[0] = g.is_valid()
        if g.thread_rank() == 1:
            x[1] = g.size()
        if g.thread_rank() == 32:  # on the 2nd group
            # Note: this is not yet possible...
            # x[2], x[3], x[4] == g.group_dim()
            g_dim = g.group_dim()
            x[2], x[3], x[4] = g_dim.x, g_dim.y, g_dim.z
        g.sync()  # this should just work!

    x = cupy.empty((16,), dtype=cupy.uint64)
    x[:] = numpy.uint64(2**64 - 1)  # CuPy's x[:] = -1, which NumPy refuses for uint64
    test_grid[2, 32](x)
    assert x[0] == 1
    assert x[1] == 64
    assert (x[2], x[3], x[4]) == (2, 1, 1)
    assert (x[5:] == 2**64-1).all()


def test_grid_group_cu116_new_APIs(backend):
    @jit.rawkernel()
    def test_grid(x):
        g = jit.cg.this_grid()
        if g.thread_rank() == 1:
            x[1] = g.num_threads()
        if g.thread_rank() == 32:
            g_dim = g.dim_blocks()
            x[2], x[3], x[4] = g_dim.x, g_dim.y, g_dim.z
        if g.thread_rank() == 33:  # on the 2nd block
            x[5] = g.block_rank()
        if g.thread_rank() == 2:
            x[6] = g.num_blocks()
        if g.thread_rank() == 34:  # on the 2nd block
            b_idx = g.block_index()
            x[7], x[8], x[9] = b_idx.x, b_idx.y, b_idx.z
        g.sync()  # this should just work!

    x = cupy.empty((16,), dtype=cupy.uint64)
    x[:] = numpy.uint64(2**64 - 1)  # CuPy's x[:] = -1, which NumPy refuses for uint64
    test_grid[2, 32](x)
    assert x[1] == 64
    assert (x[2], x[3], x[4]) == (2, 1, 1)
    assert x[5] == 1
    assert x[6] == 2
    assert (x[7], x[8], x[9]) == (1, 0, 0)
    assert (x[10:] == 2**64-1).all()
