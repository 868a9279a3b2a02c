"""``from gpukern.cupy import jit``: CuPy JIT kernels launched as CuPy launches them,
``kernel((grid,), (block,), (args...), shared_mem=n)``, on every backend (issue 32).  The kernels
are written for these tests in CuPy's spelling."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern.cupy import jit
from gpukern.numba import cuda


@jit.rawkernel()
def grid_stride_copy(x, y, size):
    tid = jit.threadIdx.x + jit.blockIdx.x * jit.blockDim.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


@jit.rawkernel()
def reverse_in_shared(x, y, size):
    s = jit.shared_memory(np.float32, 64)
    t = jit.threadIdx.x
    s[t] = x[t]
    jit.syncthreads()
    y[t] = s[size - 1 - t]


@jit.rawkernel()
def doubled_through_dynamic_shared(x, y):
    s = jit.shared_memory(np.float32, None)
    t = jit.grid(1)
    s[t] = x[t] * 2
    jit.syncthreads()
    y[t] = s[t] + jit.laneid() * 0 + jit.warpsize * 0


@jit.rawkernel()
def histogram(data, bins):
    i = jit.grid(1)
    if i < data.size:
        jit.atomic_add(bins, data[i], np.int32(1))


def test_a_cupy_jit_program_runs_on_every_backend(backend):
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    grid_stride_copy((2,), (64,), (x, y, np.int32(300)))
    np.testing.assert_array_equal(y, x)

    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    reverse_in_shared((1,), (64,), (x, y, np.int32(64)))
    np.testing.assert_array_equal(y, x[::-1])

    doubled_through_dynamic_shared((1,), (64,), (x, y), shared_mem=64 * 4)
    np.testing.assert_array_equal(y, 2 * x)

    data = np.random.default_rng(2).integers(0, 5, 500).astype(np.int32)
    bins = np.zeros(5, np.int32)
    histogram[4, 128](data, bins)  # CuPy's newer spelling too
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=5))


def test_cupy_names_are_gpukerns_own_definitions():
    assert jit.syncthreads is gk.barrier and jit.atomic_add is gk.atomic_add and jit.threadIdx is gk.thread_idx
    assert type(jit.grid) is type(cuda.grid) and type(jit.shared_memory).__module__ == "gpukern.language.compat"
    assert isinstance(grid_stride_copy.kernel, gk.Kernel)


def test_cupy_launch_mistakes_are_launch_errors():
    with pytest.raises(gk.LaunchError, match="args must be a tuple"):
        grid_stride_copy((1,), (32,), [np.zeros(4, np.float32)])
    with pytest.raises(gk.KernelTypeError, match="mode"):
        jit.rawkernel(mode="numpy")


@cuda.jit
def fill_index(out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = i


def test_forall_covers_n_threads(backend):
    out = np.full(300, -1, np.int32)
    fill_index.forall(300)(out, 300)
    np.testing.assert_array_equal(out, np.arange(300))
    fill_index.forall(5, tpb=64)(out, 5)
    with pytest.raises(gk.LaunchError, match="forall"):
        fill_index.forall(-1)


@jit.rawkernel()
def strided_sum(x, out, n):
    tid = jit.grid(1)
    acc = 0.0
    for i in jit.range(tid, n, jit.gridsize(1), unroll=4):  # unroll: a hint to the C compiler
        acc += x[i]
    out[tid] = acc


def test_jit_range_loops_as_range(backend):
    x = np.arange(100, dtype=np.float64)
    out = np.zeros(32, np.float64)
    strided_sum((1,), (32,), (x, out, np.int32(100)))
    np.testing.assert_array_equal(out, [x[t::32].sum() for t in range(32)])
