"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_cooperative_groups.py``
(BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written, only the
import line changed.  The checks of Numba's overload internals (``overload.cooperative``, cudadevrt
linking) and the external-code test are left out; ``max_cooperative_grid_blocks`` needs CUDA's
occupancy calculator (the source skips it on Numba's simulator; here a GPU test)."""

import numpy as np
import pytest

from gpukern.numba import cuda, int32


@cuda.jit
def this_grid(A):
    cuda.cg.this_grid()
    A[0] = 1.0


@cuda.jit
def sync_group(A):
    g = cuda.cg.this_grid()
    g.sync()
    A[0] = 1.0


@cuda.jit
def no_sync(A):
    A[0] = cuda.grid(1)


def sequential_rows(M):
    # The grid writes rows one at a time. Each thread reads an element from
    # the previous row written by its "opposite" thread.
    #
    # A failure to sync the grid at each row would result in an incorrect
    # result as some threads could run ahead of threads in other blocks, or
    # fail to see the update to the previous row from their opposite thread.

    col = cuda.grid(1)
    g = cuda.cg.this_grid()

    rows = M.shape[0]
    cols = M.shape[1]

    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


def test_this_grid(backend):
    A = np.full(1, fill_value=np.nan)
    this_grid[1, 1](A)
    assert not np.isnan(A[0]), "Value was not set"


def test_sync_group(backend):
    A = np.full(1, fill_value=np.nan)
    sync_group[1, 1](A)
    assert not np.isnan(A[0]), "Value was not set"


def test_no_sync(backend):
    A = np.full(1, fill_value=np.nan)
    no_sync[1, 1](A)
    assert A[0] == 0


def test_sync_at_matrix_row(backend):
    shape = (128, 128)  # scaled: the source's (1024, 1024) on a GPU, (32, 32) on Numba's simulator
    A = np.zeros(shape, dtype=np.int32)
    blockdim = 32
    griddim = A.shape[1] // blockdim

    c_sequential_rows = cuda.jit((int32[:, ::1],))(sequential_rows)
    c_sequential_rows[griddim, blockdim](A)

    reference = np.tile(np.arange(shape[0]), (shape[1], 1)).T
    np.testing.assert_equal(A, reference)


@pytest.mark.gpu
def test_max_cooperative_grid_blocks():
    # The maximum number of blocks will vary based on the device so we
    # can't test for an expected value, but we can check that the function
    # doesn't error, and that varying the number of dimensions of the block
    # whilst keeping the total number of threads constant doesn't change
    # the maximum to validate some of the logic.
    import gpukern as gk

    gk.set_backend("cuda")
    try:
        sig = (int32[:, ::1],)
        c_sequential_rows = cuda.jit(sig)(sequential_rows)
        overload = c_sequential_rows.overloads[sig]
        blocks1d = overload.max_cooperative_grid_blocks(256)
        blocks2d = overload.max_cooperative_grid_blocks((16, 16))
        blocks3d = overload.max_cooperative_grid_blocks((16, 4, 4))
        assert blocks1d == blocks2d
        assert blocks1d == blocks3d
    finally:
        gk.set_backend(None)
