"""``gk.grid_sync()``: a barrier of the whole grid (cooperative groups' ``this_grid().sync()``).

The simulator runs every thread of the grid in step, so the barrier is exact there: it orders every
access before it before every access after it, in every block, and it checks that every live thread
arrives.  OpenCL has no such barrier: the kernel runs in phases, a launch from one grid barrier to
the next, each thread saving and restoring its values (``codegen.phases``).  CUDA launches the
kernel cooperatively (tests marked gpu)."""

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


def test_rows_in_sequence(backend):
    m = np.zeros((48, 64), np.int32)
    sequential_rows[2, 32](m)
    assert (m == np.arange(48, dtype=np.int32)[:, None]).all()


def test_without_it_the_blocks_race(on_simulator):
    m = np.zeros((8, 64), np.int32)
    with pytest.raises(gk.DataRaceError, match="grid_sync"):
        sequential_rows_unsynced[2, 32](m)


def test_orders_global_memory_across_blocks(backend):
    x = np.zeros(256, np.int64)
    out = np.zeros(256, np.int64)
    two_phase[4, 64](x, out)
    np.testing.assert_array_equal(out, (255 - np.arange(256)) * 2)


def test_under_a_branch_on_the_block_is_refused():
    with pytest.raises(gk.BarrierDivergenceError, match=r"grid_sync\(\) is inside an if"):
        per_block_sync.source(np.zeros(64, np.int32))


def test_threads_that_returned_still_arrive(backend):
    """A kernel's early return is structured (a flag): the thread still arrives for its block."""
    x = np.zeros(64, np.int32)
    first_thread_returns[2, 32](x, 64)
    assert x[32] == 0 and (np.delete(x, 32) == 2).all()
    assert "returned = true;" in first_thread_returns.source(x, 64, backend="cuda")


@gk.kernel
def phases_keep_everything(a, b, out, steps: gk.int32):
    """Across each grid barrier a thread keeps its scalars (a loop counter, an accumulator, a
    parameter it changed), its local() array and, with its block, a shared() array; barriers sit
    in a for loop, a while loop and an if on a launch value."""
    i = gk.global_id(0)
    t = gk.thread_idx.x
    n = a.shape[0]
    tile = gk.shared(gk.float64, 64)
    mine = gk.local(gk.float64, 3)
    acc = 0.0
    for s in range(steps):
        if i < n:
            tile[t] = a[i] * (s + 1)
            mine[s % 3] = a[(i + 7) % n]
            b[i] = 0.5 * (a[i] + a[(i + 1) % n])
        gk.grid_sync()
        if i < n:
            a[i] = b[i]
            acc += tile[t] + mine[s % 3]
        gk.grid_sync()
    k = 0
    while k < steps:
        k += 1
        steps -= 1
        if steps % 2 == 0:
            gk.grid_sync()
            if i < n:
                acc += a[(i + 3) % n]
            gk.grid_sync()
    if i < n:
        out[i] = acc + k


def test_phases_keep_every_value(backend):
    n = 300
    a0 = np.random.default_rng(0).random(n)
    a, b, out = a0.copy(), np.zeros(n), np.zeros(n)
    phases_keep_everything[5, 64](a, b, out, 5)
    gk.set_backend("sim")
    try:
        wa, wb, wout = a0.copy(), np.zeros(n), np.zeros(n)
        phases_keep_everything[5, 64](wa, wb, wout, 5)
    finally:
        gk.set_backend(None)
    np.testing.assert_array_equal(out, wout)
    np.testing.assert_array_equal(a, wa)
    assert (wout != 0).all()


def test_opencl_runs_it_in_phases():
    src = sequential_rows.source(np.zeros((4, 64), np.int32), backend="opencl")
    assert "gk_phase[1] = 1;" in src and "bool gk_resuming = gk_resume != 0;" in src and "return;" in src
    assert "gk_saved" in phases_keep_everything.source(np.zeros(8), np.zeros(8), np.zeros(8), 2, backend="opencl")


@gk.func
def sync_inside():
    gk.grid_sync()


@gk.kernel
def grid_sync_in_func(x):
    x[gk.global_id(0)] = 1
    sync_inside()


@gk.kernel
def grid_sync_with_dynamic_shared(x):
    buf = gk.dynamic_shared(gk.float32)
    buf[gk.thread_idx.x] = x[gk.global_id(0)]
    gk.grid_sync()
    x[gk.global_id(0)] = buf[gk.thread_idx.x]


@pytest.mark.parametrize(
    ("k", "text"),
    [
        (grid_sync_in_func, r"grid_sync\(\) in a @func cannot be compiled to opencl"),
        (grid_sync_with_dynamic_shared, r"cannot use dynamic_shared\(\) on opencl"),
    ],
)
def test_opencl_refuses_what_phases_cannot_hold(k, text):
    with pytest.raises(gk.CompileError, match=text) as e:
        k.source(np.zeros(64, np.float32), backend="opencl")
    assert e.value.loc is not None
    assert "grid_sync" in k.source(np.zeros(64, np.float32), backend="cuda")


def test_cuda_source_calls_the_grid_barrier():
    src = sequential_rows.source(np.zeros((4, 64), np.int32), backend="cuda")
    assert "gk_grid_sync();" in src and "__device__ unsigned int gk_grid_state[2];" in src


def test_numba_and_cupy_groups_are_the_same_barrier(backend):
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


@gk.func
def scaled(v: gk.float64) -> gk.float64:
    acc = v * 2.0  # the same name as the kernel's saved local: declared here as usual
    return acc


@gk.kernel
def phased_with_a_func(x, out):
    i = gk.global_id(0)
    acc = scaled(x[i])
    gk.grid_sync()
    out[i] = acc + x[(i + 1) % x.shape[0]]


def test_a_funcs_locals_are_its_own_in_a_phased_kernel(backend):
    x = np.arange(64, dtype=np.float64)
    out = np.zeros(64)
    phased_with_a_func[2, 32](x, out)
    np.testing.assert_array_equal(out, 2 * x + np.roll(x, -1))


@gk.kernel
def odd_sized_arrays(x, out):
    """Shared and local arrays of 12 and 6 bytes beside others: each is saved and restored alone
    (a copy of its record's padding would run past its end into the next array)."""
    i = gk.global_id(0)
    t = gk.thread_idx.x
    a = gk.shared(gk.float32, 3)
    b = gk.shared(gk.float32, 32)
    c = gk.local(gk.int16, 3)
    d = gk.local(gk.int16, 4)
    if t < 3:
        a[t] = x[i] + 100
    b[t] = x[i]
    c[t % 3] = gk.int16(t)
    d[t % 4] = gk.int16(2 * t)
    gk.grid_sync()
    out[i] = b[t] + a[t % 3] + c[t % 3] + d[t % 4]


def test_arrays_of_any_size_keep_their_neighbours(backend):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    odd_sized_arrays[2, 32](x, out)
    t = np.arange(64) % 32
    block = np.arange(64) // 32 * 32
    np.testing.assert_array_equal(out, x + (x[block + t % 3] + 100) + t + 2 * t)  # each thread its own c, d
    if backend == "opencl":
        src = odd_sized_arrays.source(np.zeros(64, np.float32), np.zeros(64, np.float32), backend="opencl")
        assert "k < 12;" in src and "k < 6;" in src
