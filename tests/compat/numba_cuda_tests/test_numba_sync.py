"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_sync.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.).

Kernels as written there; only the import line changed.  The unittest class became pytest functions
run on every backend; the checks of the generated PTX (``inspect_asm``) are left out."""

import numpy as np

from gpukern.numba import cuda, int32, float32


def useless_syncthreads(ary):
    i = cuda.grid(1)
    cuda.syncthreads()
    ary[i] = i


def useless_syncwarp(ary):
    i = cuda.grid(1)
    cuda.syncwarp()
    ary[i] = i


def useless_syncwarp_with_mask(ary):
    i = cuda.grid(1)
    cuda.syncwarp(0xFFFF)
    ary[i] = i


def coop_syncwarp(res):
    sm = cuda.shared.array(32, int32)
    i = cuda.grid(1)

    sm[i] = i
    cuda.syncwarp()

    if i < 16:
        sm[i] = sm[i] + sm[i + 16]
        cuda.syncwarp(0xFFFF)

    if i < 8:
        sm[i] = sm[i] + sm[i + 8]
        cuda.syncwarp(0xFF)

    if i < 4:
        sm[i] = sm[i] + sm[i + 4]
        cuda.syncwarp(0xF)

    if i < 2:
        sm[i] = sm[i] + sm[i + 2]
        cuda.syncwarp(0x3)

    if i == 0:
        res[0] = sm[0] + sm[1]


def simple_smem(ary):
    N = 100
    sm = cuda.shared.array(N, int32)
    i = cuda.grid(1)
    if i == 0:
        for j in range(N):
            sm[j] = j
    cuda.syncthreads()
    ary[i] = sm[i]


def coop_smem2d(ary):
    i, j = cuda.grid(2)
    sm = cuda.shared.array((10, 20), float32)
    sm[i, j] = (i + 1) / (j + 1)
    cuda.syncthreads()
    ary[i, j] = sm[i, j]


def dyn_shared_memory(ary):
    i = cuda.grid(1)
    sm = cuda.shared.array(0, float32)
    sm[i] = i * 2
    cuda.syncthreads()
    ary[i] = sm[i]


def use_threadfence(ary):
    ary[0] += 123
    cuda.threadfence()
    ary[0] += 321


def use_threadfence_block(ary):
    ary[0] += 123
    cuda.threadfence_block()
    ary[0] += 321


def use_threadfence_system(ary):
    ary[0] += 123
    cuda.threadfence_system()
    ary[0] += 321


def use_syncthreads_count(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_count(ary_in[i])


def use_syncthreads_and(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_and(ary_in[i])


def use_syncthreads_or(ary_in, ary_out):
    i = cuda.grid(1)
    ary_out[i] = cuda.syncthreads_or(ary_in[i])


def _test_useless(kernel):
    compiled = cuda.jit("void(int32[::1])")(kernel)
    nelem = 10
    ary = np.empty(nelem, dtype=np.int32)
    exp = np.arange(nelem, dtype=np.int32)
    compiled[1, nelem](ary)
    np.testing.assert_equal(ary, exp)


def test_useless_syncthreads(backend):
    _test_useless(useless_syncthreads)


def test_useless_syncwarp(backend):
    _test_useless(useless_syncwarp)


def test_useless_syncwarp_with_mask(backend):
    _test_useless(useless_syncwarp_with_mask)


def test_coop_syncwarp(backend):
    expected = 496
    compiled = cuda.jit("void(int32[::1])")(coop_syncwarp)
    res = np.zeros(1, dtype=np.int32)
    compiled[1, 32](res)
    np.testing.assert_equal(expected, res[0])


def test_simple_smem(backend):
    compiled = cuda.jit("void(int32[::1])")(simple_smem)
    nelem = 100
    ary = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary)
    assert np.all(ary == np.arange(nelem, dtype=np.int32))


def test_coop_smem2d(backend):
    compiled = cuda.jit("void(float32[:,::1])")(coop_smem2d)
    shape = 10, 20
    ary = np.empty(shape, dtype=np.float32)
    compiled[1, shape](ary)
    exp = np.empty_like(ary)
    for i in range(ary.shape[0]):
        for j in range(ary.shape[1]):
            exp[i, j] = (i + 1) / (j + 1)
    assert np.allclose(ary, exp)


def test_dyn_shared_memory(backend):
    compiled = cuda.jit("void(float32[::1])")(dyn_shared_memory)
    shape = 50
    ary = np.empty(shape, dtype=np.float32)
    compiled[1, shape, 0, ary.size * 4](ary)
    assert np.all(ary == 2 * np.arange(ary.size, dtype=np.int32))


def _test_fence(kernel):
    compiled = cuda.jit((int32[:],))(kernel)
    ary = np.zeros(10, dtype=np.int32)
    compiled[1, 1](ary)
    assert ary[0] == 123 + 321


def test_threadfence(backend):
    _test_fence(use_threadfence)


def test_threadfence_block(backend):
    _test_fence(use_threadfence_block)


def test_threadfence_system(backend):
    _test_fence(use_threadfence_system)


def _test_syncthreads_count(in_dtype):
    compiled = cuda.jit(use_syncthreads_count)
    ary_in = np.ones(72, dtype=in_dtype)
    ary_out = np.zeros(72, dtype=np.int32)
    ary_in[31] = 0
    ary_in[42] = 0
    compiled[1, 72](ary_in, ary_out)
    assert np.all(ary_out == 70)


def test_syncthreads_count(backend):
    for dtype in (np.int32, np.int16, np.int64):
        _test_syncthreads_count(dtype)


def test_syncthreads_and(backend):
    for in_dtype in (np.int32, np.int16, np.int64):
        compiled = cuda.jit(use_syncthreads_and)
        nelem = 100
        ary_in = np.ones(nelem, dtype=in_dtype)
        ary_out = np.zeros(nelem, dtype=np.int32)
        compiled[1, nelem](ary_in, ary_out)
        assert np.all(ary_out == 1)
        ary_in[31] = 0
        compiled[1, nelem](ary_in, ary_out)
        assert np.all(ary_out == 0)


def test_syncthreads_or(backend):
    for in_dtype in (np.int32, np.int16, np.int64):
        compiled = cuda.jit(use_syncthreads_or)
        nelem = 100
        ary_in = np.zeros(nelem, dtype=in_dtype)
        ary_out = np.zeros(nelem, dtype=np.int32)
        compiled[1, nelem](ary_in, ary_out)
        assert np.all(ary_out == 0)
        ary_in[31] = 1
        compiled[1, nelem](ary_in, ary_out)
        assert np.all(ary_out == 1)
