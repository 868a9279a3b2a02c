"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_atomics.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels and device functions as written there,
only the import line changed.  The unittest class became pytest functions run on every backend (a
part of its cases); the checks of the generated PTX (``inspect_asm``) are left out."""

from textwrap import dedent

import numpy as np
import pytest

from gpukern.numba import cuda, uint32, uint64, float32, float64


@cuda.jit(device=True)
def atomic_cast_to_uint64(num):
    return uint64(num)


@cuda.jit(device=True)
def atomic_cast_to_int(num):
    return int(num)


@cuda.jit(device=True)
def atomic_cast_none(num):
    return num


@cuda.jit(device=True)
def atomic_binary_1dim_shared(ary, idx, op2, ary_dtype, ary_nelements,
                              binop_func, cast_func, initializer,
                              neg_idx):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = initializer
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def atomic_binary_1dim_shared2(ary, idx, op2, ary_dtype, ary_nelements,
                               binop_func, cast_func):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def atomic_binary_2dim_shared(ary, op2, ary_dtype, ary_shape,
                              binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm = cuda.shared.array(ary_shape, ary_dtype)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary_shape[0], bin[1] % ary_shape[1])
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


@cuda.jit(device=True)
def atomic_binary_2dim_global(ary, op2, binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary.shape[0], bin[1] % ary.shape[1])
    binop_func(ary, bin, op2)


@cuda.jit(device=True)
def atomic_binary_1dim_global(ary, idx, ary_nelements, op2,
                              binop_func, neg_idx):
    tid = cuda.threadIdx.x
    bin = int(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(ary, bin, op2)


def atomic_add(ary):
    atomic_binary_1dim_shared(ary, ary, 1, uint32, 32,
                              cuda.atomic.add, atomic_cast_none, 0, False)


def atomic_add_wrap(ary):
    atomic_binary_1dim_shared(ary, ary, 1, uint32, 32,
                              cuda.atomic.add, atomic_cast_none, 0, True)


def atomic_add2(ary):
    atomic_binary_2dim_shared(ary, 1, uint32, (4, 8),
                              cuda.atomic.add, atomic_cast_none, False)


def atomic_add2_wrap(ary):
    atomic_binary_2dim_shared(ary, 1, uint32, (4, 8),
                              cuda.atomic.add, atomic_cast_none, True)


def atomic_add3(ary):
    atomic_binary_2dim_shared(ary, 1, uint32, (4, 8),
                              cuda.atomic.add, atomic_cast_to_uint64, False)


def atomic_add_float(ary):
    atomic_binary_1dim_shared(ary, ary, 1.0, float32, 32,
                              cuda.atomic.add, atomic_cast_to_int, 0.0, False)


def atomic_add_float_2(ary):
    atomic_binary_2dim_shared(ary, 1.0, float32, (4, 8),
                              cuda.atomic.add, atomic_cast_none, False)


def atomic_add_double(idx, ary):
    atomic_binary_1dim_shared(ary, idx, 1.0, float64, 32,
                              cuda.atomic.add, atomic_cast_none, 0.0, False)


def atomic_add_double_global(idx, ary):
    atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.add, False)


def atomic_add_double_global_2(ary):
    atomic_binary_2dim_global(ary, 1, cuda.atomic.add, atomic_cast_none, False)


def atomic_sub(ary):
    atomic_binary_1dim_shared(ary, ary, 1, uint32, 32,
                              cuda.atomic.sub, atomic_cast_none, 0, False)


def atomic_sub_double_2(ary):
    atomic_binary_2dim_shared(ary, 1.0, float64, (4, 8),
                              cuda.atomic.sub, atomic_cast_none, False)


def atomic_and(ary, op2):
    atomic_binary_1dim_shared(ary, ary, op2, uint32, 32,
                              cuda.atomic.and_, atomic_cast_none, 1, False)


def atomic_and_global(idx, ary, op2):
    atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.and_, False)


def atomic_or2(ary, op2):
    atomic_binary_2dim_shared(ary, op2, uint32, (4, 8),
                              cuda.atomic.or_, atomic_cast_none, False)


def atomic_or_global(idx, ary, op2):
    atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.or_, False)


def atomic_xor3(ary, op2):
    atomic_binary_2dim_shared(ary, op2, uint32, (4, 8),
                              cuda.atomic.xor, atomic_cast_to_uint64, False)


def atomic_xor_global_2(ary, op2):
    atomic_binary_2dim_global(ary, op2, cuda.atomic.xor,
                              atomic_cast_none, False)


def atomic_inc32(ary, idx, op2):
    atomic_binary_1dim_shared2(ary, idx, op2, uint32, 32,
                               cuda.atomic.inc, atomic_cast_none)


def atomic_dec2_32(ary, op2):
    atomic_binary_2dim_shared(ary, op2, uint32, (4, 8),
                              cuda.atomic.dec, atomic_cast_none, False)


def atomic_exch(ary, idx, op2):
    atomic_binary_1dim_shared2(ary, idx, op2, uint32, 32,
                               cuda.atomic.exch, atomic_cast_none)


def gen_atomic_extreme_funcs(func):

    fns = dedent("""
    def atomic(res, ary):
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        {func}(res, 0, ary[tx, bx])

    def atomic_double_normalizedindex(res, ary):
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        {func}(res, 0, ary[tx, uint64(bx)])

    def atomic_double_oneindex(res, ary):
        tx = cuda.threadIdx.x
        {func}(res, 0, ary[tx])

    def atomic_double_shared(res, ary):
        tid = cuda.threadIdx.x
        smary = cuda.shared.array(32, float64)
        smary[tid] = ary[tid]
        smres = cuda.shared.array(1, float64)
        if tid == 0:
            smres[0] = res[0]
        cuda.syncthreads()
        {func}(smres, 0, smary[tid])
        cuda.syncthreads()
        if tid == 0:
            res[0] = smres[0]
    """).format(func=func)
    ld = {}
    exec(fns, {'cuda': cuda, 'float64': float64, 'uint64': uint64}, ld)
    return (ld['atomic'], ld['atomic_double_normalizedindex'],
            ld['atomic_double_oneindex'], ld['atomic_double_shared'])


(atomic_max, atomic_max_double_normalizedindex, atomic_max_double_oneindex,
 atomic_max_double_shared) = gen_atomic_extreme_funcs('cuda.atomic.max')
(atomic_min, atomic_min_double_normalizedindex, atomic_min_double_oneindex,
 atomic_min_double_shared) = gen_atomic_extreme_funcs('cuda.atomic.min')


def atomic_compare_and_swap(res, old, ary, fill_val):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.compare_and_swap(res[gid:], fill_val, ary[gid])


def atomic_cas_1dim(res, old, ary, fill_val):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


def atomic_cas_2dim(res, old, ary, fill_val):
    gid = cuda.grid(2)
    if gid[0] < res.shape[0] and gid[1] < res.shape[1]:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)


def _histogram(orig, dtype, op=lambda g, i: g.__setitem__(i, g[i] + 1)):
    gold = np.zeros(32, dtype=dtype)
    for i in range(orig.size):
        op(gold, orig[i])
    return gold


def test_atomic_add(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    ary_wrap = ary.copy()
    orig = ary.copy()
    cuda.jit('void(uint32[:])')(atomic_add)[1, 32](ary)
    cuda.jit('void(uint32[:])')(atomic_add_wrap)[1, 32](ary_wrap)
    gold = _histogram(orig, np.uint32)
    assert np.all(ary == gold)
    assert np.all(ary_wrap == gold)


def test_atomic_add2(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    ary_wrap = ary.copy()
    orig = ary.copy()
    cuda.jit('void(uint32[:,:])')(atomic_add2)[1, (4, 8)](ary)
    cuda.jit('void(uint32[:,:])')(atomic_add2_wrap)[1, (4, 8)](ary_wrap)
    assert np.all(ary == orig + 1)
    assert np.all(ary_wrap == orig + 1)


def test_atomic_add3(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(uint32[:,:])')(atomic_add3)[1, (4, 8)](ary)
    assert np.all(ary == orig + 1)


def test_atomic_add_float(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.float32)
    orig = ary.copy().astype(np.intp)
    cuda.jit('void(float32[:])')(atomic_add_float)[1, 32](ary)
    assert np.all(ary == _histogram(orig, np.uint32))


def test_atomic_add_float_2(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.float32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(float32[:,:])')(atomic_add_float_2)[1, (4, 8)](ary)
    assert np.all(ary == orig + 1)


def test_atomic_add_double(backend):
    idx = np.random.randint(0, 32, size=32, dtype=np.int64)
    ary = np.zeros(32, np.float64)
    cuda.jit('void(int64[:], float64[:])')(atomic_add_double)[1, 32](idx, ary)
    np.testing.assert_equal(ary, _histogram(idx, np.uint32))


def test_atomic_add_double_global(backend):
    idx = np.random.randint(0, 32, size=32, dtype=np.int64)
    ary = np.zeros(32, np.float64)
    cuda.jit('void(int64[:], float64[:])')(atomic_add_double_global)[1, 32](idx, ary)
    np.testing.assert_equal(ary, _histogram(idx, np.uint32))


def test_atomic_add_double_global_2(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.float64).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(float64[:,:])')(atomic_add_double_global_2)[1, (4, 8)](ary)
    np.testing.assert_equal(ary, orig + 1)


def test_atomic_sub(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    orig = ary.copy()
    cuda.jit('void(uint32[:])')(atomic_sub)[1, 32](ary)
    gold = _histogram(orig, np.uint32, lambda g, i: g.__setitem__(i, g[i] - np.uint32(1)))
    assert np.all(ary == gold)


def test_atomic_sub_double_2(backend):
    ary = np.random.randint(0, 32, size=32).astype(np.float64).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(float64[:,:])')(atomic_sub_double_2)[1, (4, 8)](ary)
    np.testing.assert_equal(ary, orig - 1)


def test_atomic_and(backend):
    rand_const = np.random.randint(500)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    orig = ary.copy()
    cuda.jit('void(uint32[:], uint32)')(atomic_and)[1, 32](ary, rand_const)
    gold = ary.copy()
    for i in range(orig.size):
        gold[orig[i]] &= rand_const
    assert np.all(ary == gold)


def test_atomic_and_global(backend):
    rand_const = np.random.randint(500)
    idx = np.random.randint(0, 32, size=32, dtype=np.int32)
    ary = np.random.randint(0, 32, size=32, dtype=np.int32)
    gold = ary.copy()
    cuda.jit('void(int32[:], int32[:], int32)')(atomic_and_global)[1, 32](idx, ary, rand_const)
    for i in range(idx.size):
        gold[idx[i]] &= rand_const
    np.testing.assert_equal(ary, gold)


def test_atomic_or2(backend):
    rand_const = np.random.randint(500)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(uint32[:,:], uint32)')(atomic_or2)[1, (4, 8)](ary, rand_const)
    assert np.all(ary == orig | rand_const)


def test_atomic_or_global(backend):
    rand_const = np.random.randint(500)
    idx = np.random.randint(0, 32, size=32, dtype=np.int32)
    ary = np.random.randint(0, 32, size=32, dtype=np.int32)
    gold = ary.copy()
    cuda.jit('void(int32[:], int32[:], int32)')(atomic_or_global)[1, 32](idx, ary, rand_const)
    for i in range(idx.size):
        gold[idx[i]] |= rand_const
    np.testing.assert_equal(ary, gold)


def test_atomic_xor3(backend):
    rand_const = np.random.randint(500)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(uint32[:,:], uint32)')(atomic_xor3)[1, (4, 8)](ary, rand_const)
    assert np.all(ary == orig ^ rand_const)


def test_atomic_xor_global_2(backend):
    rand_const = np.random.randint(500)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit('void(uint32[:,:], uint32)')(atomic_xor_global_2)[1, (4, 8)](ary, rand_const)
    np.testing.assert_equal(ary, orig ^ rand_const)


def test_atomic_inc32(backend):
    rconst = np.random.randint(32, dtype=np.uint32)
    rary = np.random.randint(0, 32, size=32).astype(np.uint32)
    ary_idx = np.arange(32, dtype=np.uint32)
    orig = rary.copy()
    cuda.jit('void(uint32[:], uint32[:], uint32)')(atomic_inc32)[1, 32](rary, ary_idx, rconst)
    assert np.all(rary == np.where(orig >= rconst, 0, orig + 1))


def test_atomic_dec2_32(backend):
    rconst = np.random.randint(32, dtype=np.uint32)
    rary = np.random.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = rary.copy()
    cuda.jit('void(uint32[:,:], uint32)')(atomic_dec2_32)[1, (4, 8)](rary, rconst)
    assert np.all(rary == np.where((orig == 0) | (orig > rconst), rconst, orig - 1))


def test_atomic_exch(backend):
    rconst = np.random.randint(32, dtype=np.uint32)
    ary = np.random.randint(0, 32, size=32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    cuda.jit('void(uint32[:], uint32[:], uint32)')(atomic_exch)[1, 32](ary, idx, rconst)
    assert np.all(ary == rconst)


def _test_extreme(kernel, op, dtype, shape, launch):
    vals = np.random.randint(0, 65535, size=shape).astype(dtype)
    res = np.zeros(1, dtype)
    cuda.jit(kernel)[launch](res, vals)
    assert res[0] == op(vals)


@pytest.mark.refused("made by exec() of a string: gpukern reads a kernel's source, which Python does not keep")
def test_atomic_max(backend):
    vals = np.random.randint(0, 65535, size=(32, 32)).astype(np.int32)
    res = np.zeros(1, np.int32)
    cuda.jit('void(int32[:], int32[:,:])')(atomic_max)[32, 32](res, vals)
    assert res[0] == np.max(vals)


@pytest.mark.refused("made by exec() of a string: gpukern reads a kernel's source, which Python does not keep")
def test_atomic_min_double_normalizedindex(backend):
    vals = np.random.randint(0, 65535, size=(32, 32)).astype(np.float64)
    res = np.array([65535], np.float64)
    cuda.jit('void(float64[:], float64[:,:])')(atomic_min_double_normalizedindex)[32, 32](res, vals)
    np.testing.assert_equal(res[0], np.min(vals))


@pytest.mark.refused("made by exec() of a string: gpukern reads a kernel's source, which Python does not keep")
def test_atomic_max_double_shared(backend):
    vals = np.random.randint(0, 32, size=32).astype(np.float64)
    res = np.zeros(1, np.float64)
    cuda.jit('void(float64[:], float64[:])')(atomic_max_double_shared)[1, 32](res, vals)
    np.testing.assert_equal(res[0], np.max(vals))


def test_atomic_compare_and_swap(backend):
    n = 100
    res = np.random.randint(0, 2, size=n).astype(np.int32)
    fill = np.int32(1)
    ary = np.random.randint(-5, 5, size=n).astype(np.int32)
    expect = np.where(res == fill, ary, res)
    gold = res.copy()
    old = np.zeros_like(res)
    cuda.jit(atomic_compare_and_swap)[10, 10](res, old, ary, fill)
    np.testing.assert_array_equal(res, expect)
    np.testing.assert_array_equal(old, gold)


def test_atomic_cas_1dim(backend):
    n = 100
    res = np.random.randint(0, 2, size=n).astype(np.uint64)
    fill = np.uint64(1)
    ary = np.random.randint(0, 10, size=n).astype(np.uint64)
    expect = np.where(res == fill, ary, res)
    gold = res.copy()
    old = np.zeros_like(res)
    cuda.jit(atomic_cas_1dim)[10, 10](res, old, ary, fill)
    np.testing.assert_array_equal(res, expect)
    np.testing.assert_array_equal(old, gold)


def test_atomic_cas_2dim(backend):
    shape = (10, 10)
    res = np.random.randint(0, 2, size=shape).astype(np.int64)
    fill = np.int64(1)
    ary = np.random.randint(-5, 5, size=shape).astype(np.int64)
    expect = np.where(res == fill, ary, res)
    gold = res.copy()
    old = np.zeros_like(res)
    cuda.jit(atomic_cas_2dim)[(1, 1), shape](res, old, ary, fill)
    np.testing.assert_array_equal(res, expect)
    np.testing.assert_array_equal(old, gold)
