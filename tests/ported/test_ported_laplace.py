"""Laplace/heat-equation kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_laplace.py and
numba/cuda/tests/doc_examples/test_laplace.py (NVIDIA/numba-cuda).

Spelling: ``@cuda.jit(device=True)`` -> ``@gk.func``, ``cuda.shared.array(SM_SIZE, dtype=float64)`` ->
``shared(float64, SM_SIZE)``, ``cuda.syncthreads()`` -> ``barrier()``, ``i, j = cuda.grid(2)`` ->
``i = global_id(0)``, ``j = global_id(1)``. Sizes are the source's simulator sizes.
"""

from __future__ import annotations

import numpy as np

import gpukern as gk
from gpukern import barrier, block_idx, float64, global_id, shared, thread_idx

from .support import gap

tpb = 4  # the source's simulator size
SM_SIZE = tpb, tpb


# Source: cudapy/test_laplace.py, test_laplace_small (get_max)
@gk.func
def get_max(a, b):
    if a > b:
        return a
    else:
        return b


# Source: cudapy/test_laplace.py, test_laplace_small (jocabi_relax_core)
@gk.kernel
def jocabi_relax_core(A, Anew, error):
    err_sm = shared(float64, SM_SIZE)

    ty = thread_idx.x
    tx = thread_idx.y
    bx = block_idx.x
    by = block_idx.y

    n = A.shape[0]
    m = A.shape[1]

    i = global_id(0)
    j = global_id(1)

    err_sm[ty, tx] = 0
    if j >= 1 and j < n - 1 and i >= 1 and i < m - 1:
        Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
        err_sm[ty, tx] = Anew[j, i] - A[j, i]

    barrier()

    # max-reduce err_sm vertically
    t = tpb // 2
    while t > 0:
        if ty < t:
            err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty + t, tx])
        t //= 2
        barrier()

    # max-reduce err_sm horizontally
    t = tpb // 2
    while t > 0:
        if tx < t and ty == 0:
            err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty, tx + t])
        t //= 2
        barrier()

    if tx == 0 and ty == 0:
        error[by, bx] = err_sm[0, 0]


def _relax_reference(A):
    """One Jacobi step of the interior and each block's largest change, in NumPy."""
    Anew = A.copy()
    Anew[1:-1, 1:-1] = 0.25 * (A[1:-1, 2:] + A[1:-1, :-2] + A[:-2, 1:-1] + A[2:, 1:-1])
    diff = np.zeros_like(A)
    diff[1:-1, 1:-1] = Anew[1:-1, 1:-1] - A[1:-1, 1:-1]
    nb = A.shape[0] // tpb
    err = diff.reshape(nb, tpb, nb, tpb).max(axis=(1, 3))  # err[by, bx] over rows j and columns i
    return Anew, err


def test_laplace_small(backend):
    # The source's loop: relax until the error is below tol, swapping A and Anew (iter_max 20 there)
    NN = NM = 8
    A = np.zeros((NN, NM))
    A[:, 0] = 1.0
    Anew = A.copy()
    ref = A.copy()
    griddim = (NN // tpb, NM // tpb)
    error_grid = np.zeros(griddim)
    for _ in range(6):
        jocabi_relax_core[griddim, (tpb, tpb)](A, Anew, error_grid)
        ref_new, ref_err = _relax_reference(ref)
        np.testing.assert_allclose(Anew, ref_new, rtol=1e-15)
        np.testing.assert_allclose(error_grid, ref_err, rtol=1e-15)
        A, Anew, ref = Anew, A, ref_new


# Source: doc_examples/test_laplace.py, test_ex_laplace (solve_heat_equation): a grid-wide sync each step
@gk.kernel
def solve_heat_equation(buf_0, buf_1, timesteps, k):
    i = global_id(0)

    if i >= len(buf_0):
        return

    grid = gk.this_grid()

    for step in range(timesteps):
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0

        curr_temp = data[i]

        if i == 0:
            next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
        elif i == len(data) - 1:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
        else:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])

        next_data[i] = next_temp

        grid.sync()


@gap(
    "grid-wide synchronisation (cuda.cg.this_grid().sync()); and `data = buf_0` / `data = buf_1` bound in the "
    "two branches of an if and used after it, which gpukern refuses (which array a name stands for must not "
    "depend on the path taken)"
)
def test_ex_laplace(backend):
    size = 101
    data = np.zeros(size)
    data[50] = 10000
    buf_1 = np.zeros_like(data)
    solve_heat_equation[1, size](data, buf_1, 100, 0.25)
    np.testing.assert_allclose(buf_1.sum(), 10000)
