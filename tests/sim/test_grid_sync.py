"""``gk.grid_sync()``: a barrier of the whole grid (cooperative groups' ``this_grid().sync()``).

The simulator runs every thread of the grid in step, so the barrier is exact there: it orders every
access before it before every access after it, in every block, and it checks that every live thread
arrives.
OpenCL has no such barrier and refuses it; CUDA launches the kernel cooperatively (tests marked gpu)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk


@gk.kernel
def sequential_rows(m):
    col = gk.global_id(0)
    for row in range(1, m.shape[0]):
        m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
        gk.grid_sync()


@gk.kernel
def sequential_rows_unsynced(m):
    col = gk.global_id(0)
    for row in range(1, m.shape[0]):
        m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1


@gk.kernel
def two_phase(x, out):
    i = gk.global_id(0)
    n = gk.grid_dim.x * gk.block_dim.x
    x[i] = i * 2
    gk.grid_sync()
    out[i] = x[n - 1 - i]  # written by another block before the grid's barrier


@gk.kernel
def per_block_sync(x):
    if gk.block_idx.x == 0:
        gk.grid_sync()
    x[gk.global_id(0)] = 1


@gk.kernel
def first_thread_returns(x, n):
    i = gk.global_id(0)
    if gk.thread_idx.x == 0 and gk.block_idx.x == 1:
        return
    x[i] = 1
    gk.grid_sync()
    x[i] = 2


def test_rows_in_sequence(on_simulator):
    m = np.zeros((48, 64), np.int32)
    sequential_rows[2, 32](m)
    assert (m == np.arange(48, dtype=np.int32)[:, None]).all()


def test_without_it_the_blocks_race(on_simulator):
    m = np.zeros((8, 64), np.int32)
    with pytest.raises(gk.DataRaceError, match="grid_sync"):
        sequential_rows_unsynced[2, 32](m)


def test_orders_global_memory_across_blocks(on_simulator):
    x = np.zeros(256, np.int64)
    out = np.zeros(256, np.int64)
    two_phase[4, 64](x, out)
    np.testing.assert_array_equal(out, (255 - np.arange(256)) * 2)


def test_under_a_branch_on_the_block_is_refused():
    with pytest.raises(gk.BarrierDivergenceError, match=r"grid_sync\(\) is inside an if"):
        per_block_sync.source(np.zeros(64, np.int32))


def test_threads_that_returned_still_arrive(on_simulator):
    """A kernel's early return is structured (a flag): the thread still arrives for its block."""
    x = np.zeros(64, np.int32)
    first_thread_returns[2, 32](x, 64)
    assert x[32] == 0 and (np.delete(x, 32) == 2).all()
    assert "returned = true;" in first_thread_returns.source(x, 64, backend="cuda")


def test_opencl_refuses_it_at_its_line():
    with pytest.raises(gk.CompileError, match="grid_sync.*no barrier across work-groups") as e:
        sequential_rows.source(np.zeros((4, 64), np.int32), backend="opencl")
    assert e.value.loc is not None and "gk.grid_sync()" in e.value.loc.source_line()


def test_cuda_source_calls_the_grid_barrier():
    src = sequential_rows.source(np.zeros((4, 64), np.int32), backend="cuda")
    assert "gk_grid_sync();" in src and "__device__ unsigned int gk_grid_state[2];" in src


def test_numba_and_cupy_groups_are_the_same_barrier(on_simulator):
    from gpukern.cupy import jit
    from gpukern.numba import cuda

    @cuda.jit
    def numba_rows(m):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        for row in range(1, m.shape[0]):
            m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
            g.sync()

    @jit.rawkernel()
    def cupy_rows(m):
        col = jit.grid(1)
        for row in range(1, m.shape[0]):
            m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
            jit.cg.this_grid().sync()

    for k in (numba_rows, cupy_rows):
        m = np.zeros((16, 64), np.int32)
        k[2, 32](m)
        assert (m == np.arange(16, dtype=np.int32)[:, None]).all()


@pytest.mark.gpu
def test_on_cuda_a_cooperative_launch():
    gk.set_backend("cuda")
    try:
        m = np.zeros((1024, 1024), np.int32)
        sequential_rows[32, 32](m)
        assert (m == np.arange(1024, dtype=np.int32)[:, None]).all()
        x = np.zeros(1 << 16, np.int64)
        out = np.zeros_like(x)
        two_phase[256, 256](x, out)
        np.testing.assert_array_equal(out, (x.size - 1 - np.arange(x.size)) * 2)
        with pytest.raises(gk.LaunchError, match="resident"):
            two_phase[1 << 16, 1024](np.zeros(1 << 26, np.int64), np.zeros(1 << 26, np.int64))
    finally:
        gk.set_backend(None)
