"""``Kernel.resident_blocks``: how many blocks of a launch the device runs at once (CUDA's occupancy
calculator), the grid of a persistent kernel; other backends refuse clearly."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32


@gk.kernel
def scale(a: Array[float32], n: int):
    """A grid-stride loop: any grid covers the array."""
    for i in range(gk.block_idx.x * gk.block_dim.x + gk.thread_idx.x, n, gk.grid_dim.x * gk.block_dim.x):
        a[i] *= 2


@gk.kernel
def pairs(a: Array[float32]):
    """Clusters of 2 blocks, 48 KiB of dynamic shared memory each."""
    gk.cluster_dims(2)
    buf = gk.dynamic_shared(float32)
    buf[gk.thread_idx.x] = a[gk.thread_idx.x]
    gk.cluster_barrier()
    a[gk.thread_idx.x] = buf[gk.thread_idx.x] + 1


def test_the_simulator_says_to_choose_the_grid(on_simulator):
    with pytest.raises(gk.BackendError, match="occupancy calculator can.*choose the grid from the work"):
        scale.resident_blocks(Array[float32], 0, block=256)


def test_bad_sizes_are_refused(on_simulator):
    with pytest.raises(gk.LaunchError, match="shared is the dynamic shared bytes"):
        scale.resident_blocks(Array[float32], 0, block=256, shared=-1)
    with pytest.raises(gk.LaunchError, match="block must be"):
        scale.resident_blocks(Array[float32], 0, block=0)


@pytest.mark.gpu
def test_cuda_counts_blocks_and_whole_clusters():
    gk.set_backend("cuda")
    try:
        b = gk.get_backend()
        sms = b.driver.attribute("MULTIPROCESSOR_COUNT")
        small, big = (scale.resident_blocks(Array[float32], 0, block=t) for t in (128, 1024))
        assert small % sms == 0 and big % sms == 0 and small > big >= sms  # (2048 threads a multiprocessor)
        a = gk.to_device(np.ones(1 << 20, np.float32))
        scale[small // 4, 128](a, 1 << 20)  # (a grid of that many blocks runs)
        assert float(a.get().sum()) == 2 * (1 << 20)
        if b.arch == "sm_90":
            whole = pairs.resident_blocks(Array[float32], block=128, shared=48 * 1024)
            alone = pairs.resident_blocks(Array[float32], block=128, shared=200 * 1024)  # (one block a multiprocessor)
            assert whole % 2 == 0 and alone % 2 == 0 and sms >= alone and whole > alone > 0
    finally:
        gk.set_backend(None)


def test_numba_overloads_say_what_a_cooperative_grid_may_have(on_simulator):
    """``dispatcher.overloads[sig].max_cooperative_grid_blocks`` is ``resident_blocks`` (the corpus
    checks it on a GPU); on the simulator, which runs a grid-synchronising launch of any size, the
    largest grid."""
    from gpukern.numba import cuda, int32

    @cuda.jit
    def grid_rows(m):
        cuda.cg.this_grid().sync()
        m[0, 0] = 1

    sig = (int32[:, ::1],)
    assert grid_rows.overloads[sig].max_cooperative_grid_blocks(256) == 2**31 - 1
    with pytest.raises(gk.BackendError, match="cannot say how many blocks of grid_rows run at once"):
        grid_rows.resident_blocks(np.zeros((2, 2), np.int32), block=256)  # (gk.Kernel's own: no guess)
    with pytest.raises(KeyError, match="a tuple of argument types"):
        grid_rows.overloads["void(int32[:, ::1])"]
