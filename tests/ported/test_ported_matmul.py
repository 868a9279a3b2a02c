"""Matrix-multiplication kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_matmul.py and
numba/cuda/tests/doc_examples/test_matmul.py (NVIDIA/numba-cuda).

Spelling: ``cuda.shared.array(shape=(tpb, tpb), dtype=float32)`` -> ``shared(float32, (tpb, tpb))``,
``cuda.syncthreads()`` -> ``barrier()``, ``x, y = cuda.grid(2)`` -> ``x = global_id(0)``, ``y = global_id(1)``.
Sizes are the source's simulator sizes.
"""

from __future__ import annotations

import numpy as np

import gpukern as gk
from gpukern import barrier, block_dim, block_idx, float32, global_id, grid_dim, shared, thread_idx

bpg, tpb = 2, 8  # the source's sizes under its simulator
n = bpg * tpb
SM_SIZE = (tpb, tpb)


# Source: cudapy/test_matmul.py, test_cuda_matmul (cu_square_matrix_mul)
@gk.kernel
def cu_square_matrix_mul(A, B, C):
    sA = shared(float32, SM_SIZE)
    sB = shared(float32, (tpb, tpb))

    tx = thread_idx.x
    ty = thread_idx.y
    bx = block_idx.x
    by = block_idx.y
    bw = block_dim.x
    bh = block_dim.y

    x = tx + bx * bw
    y = ty + by * bh

    acc = float32(0)  # forces all the math to be f32
    for i in range(bpg):
        if x < n and y < n:
            sA[ty, tx] = A[y, tx + i * tpb]
            sB[ty, tx] = B[ty + i * tpb, x]

        barrier()

        if x < n and y < n:
            for j in range(tpb):
                acc += sA[ty, j] * sB[j, tx]

        barrier()

        if x < n and y < n:
            C[y, x] = acc


def test_cuda_matmul(backend):
    g = np.random.default_rng(42)
    A = g.random((n, n)).astype(np.float32)
    B = g.random((n, n)).astype(np.float32)
    C = np.empty_like(A)
    cu_square_matrix_mul[(bpg, bpg), (tpb, tpb)](A, B, C)
    np.testing.assert_allclose(C, np.dot(A, B), rtol=1e-5)


# Source: doc_examples/test_matmul.py, test_matmul (matmul)
@gk.kernel
def matmul(A, B, C):
    i = global_id(0)
    j = global_id(1)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.0
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


TPB = 16


# Source: doc_examples/test_matmul.py, test_matmul (fast_matmul)
@gk.kernel
def fast_matmul(A, B, C):
    sA = shared(float32, (TPB, TPB))
    sB = shared(float32, (TPB, TPB))

    x = global_id(0)
    y = global_id(1)

    tx = thread_idx.x
    ty = thread_idx.y
    bpg = grid_dim.x  # blocks per grid

    tmp = float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        barrier()

        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        barrier()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def _blocks(shape, tpb):
    return tuple(-(-s // t) for s, t in zip(shape, tpb))


def test_matmul_simple(backend):
    x_h = np.arange(16).reshape([4, 4]).astype(np.float64)
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])
    matmul[_blocks(z_h.shape, (16, 16)), (16, 16)](x_h, y_h, z_h)
    np.testing.assert_array_equal(z_h, x_h @ y_h)


def test_fast_matmul_square(backend):
    x_h = np.arange(16).reshape([4, 4]).astype(np.float64)
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])
    fast_matmul[_blocks(z_h.shape, (TPB, TPB)), (TPB, TPB)](x_h, y_h, z_h)
    np.testing.assert_array_equal(z_h, x_h @ y_h)


def test_fast_matmul_nonsquare(backend):
    x_h = np.arange(115).reshape([5, 23]).astype(np.float64)
    y_h = np.ones([23, 7])
    z_h = np.zeros([5, 7])
    grid = (-(-max(x_h.shape[1], y_h.shape[1]) // TPB), -(-max(x_h.shape[0], y_h.shape[0]) // TPB))
    fast_matmul[grid, (TPB, TPB)](x_h, y_h, z_h)
    np.testing.assert_array_equal(z_h, x_h @ y_h)
