"""Atomic kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_atomics.py (NVIDIA/numba-cuda).

The source builds its kernels from device-function templates (``atomic_binary_1dim_shared`` and
friends) that take the atomic, the shared array's type and shape and an index cast as arguments, and
declare the shared array inside the device function. Most kernels here were written when gpukern
refused ``shared()`` in a ``@func``: each is the template with the source's arguments written in
(``cuda.atomic.add`` -> ``atomic_add``, ``cuda.shared.array(32, uint32)`` -> ``shared(uint32, 32)``,
``cuda.syncthreads()`` -> ``barrier()``, ``cuda.grid(1)`` -> ``global_id(0)``). The last section keeps
the source's structure: the templates are ``@gk.func`` helpers declaring the shared array, called by
the kernels with the atomic and the cast as arguments. Each test computes what the source asserts
with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import (
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_dec,
    atomic_exch,
    atomic_inc,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_sub,
    atomic_xor,
    barrier,
    block_idx,
    float32,
    float64,
    global_id,
    shared,
    thread_idx,
    uint32,
    uint64,
)

from .support import needs, rng

# ---------------------------------------------------------------- 1-D shared arrays, 32 threads


# Source: test_atomics.py, atomic_add = atomic_binary_1dim_shared(ary, ary, 1, uint32, 32, cuda.atomic.add, ...)
# (test_atomic_add)
@gk.kernel
def atomic_add_1d(ary):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 0
    barrier()
    bin = ary[tid] % 32
    atomic_add(sm, bin, 1)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_add_wrap (neg_idx=True: the index is taken % 32 again) (test_atomic_add)
@gk.kernel
def atomic_add_wrap(ary):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 0
    barrier()
    bin = ary[tid] % 32
    bin = bin % 32
    atomic_add(sm, bin, 1)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_add_float (float32, index cast with int()) (test_atomic_add_float)
@gk.kernel
def atomic_add_float(ary):
    tid = thread_idx.x
    sm = shared(float32, 32)
    sm[tid] = 0.0
    barrier()
    bin = int(ary[tid] % 32)
    atomic_add(sm, bin, 1.0)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_sub (test_atomic_sub)
@gk.kernel
def atomic_sub_1d(ary):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 0
    barrier()
    bin = ary[tid] % 32
    atomic_sub(sm, bin, 1)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_sub_float (test_atomic_sub_float)
@gk.kernel
def atomic_sub_float(ary):
    tid = thread_idx.x
    sm = shared(float32, 32)
    sm[tid] = 0.0
    barrier()
    bin = int(ary[tid] % 32)
    atomic_sub(sm, bin, 1.0)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_add_double (idx: int64[:], float64 shared) (test_atomic_add_double)
@gk.kernel
def atomic_add_double(idx, ary):
    tid = thread_idx.x
    sm = shared(float64, 32)
    sm[tid] = 0.0
    barrier()
    bin = idx[tid] % 32
    atomic_add(sm, bin, 1.0)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_sub_double (test_atomic_sub_double)
@gk.kernel
def atomic_sub_double(idx, ary):
    tid = thread_idx.x
    sm = shared(float64, 32)
    sm[tid] = 0.0
    barrier()
    bin = idx[tid] % 32
    atomic_sub(sm, bin, 1.0)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_and (initializer 1) (test_atomic_and)
@gk.kernel
def atomic_and_1d(ary, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 1
    barrier()
    bin = ary[tid] % 32
    atomic_and(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_or (test_atomic_or)
@gk.kernel
def atomic_or_1d(ary, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 0
    barrier()
    bin = ary[tid] % 32
    atomic_or(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_xor (test_atomic_xor)
@gk.kernel
def atomic_xor_1d(ary, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = 0
    barrier()
    bin = ary[tid] % 32
    atomic_xor(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_inc32 = atomic_binary_1dim_shared2(..., uint32, 32, cuda.atomic.inc, ...)
# (test_atomic_inc_32)
@gk.kernel
def atomic_inc32(ary, idx, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = ary[tid]
    barrier()
    bin = idx[tid] % 32
    atomic_inc(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_dec32 (test_atomic_dec_32)
@gk.kernel
def atomic_dec32(ary, idx, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = ary[tid]
    barrier()
    bin = idx[tid] % 32
    atomic_dec(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_inc64 (uint64 shared, index cast with int()) (test_atomic_inc_64)
@gk.kernel
def atomic_inc64(ary, idx, op2):
    tid = thread_idx.x
    sm = shared(gk.uint64, 32)
    sm[tid] = ary[tid]
    barrier()
    bin = int(idx[tid] % 32)
    atomic_inc(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_exch (test_atomic_exch)
@gk.kernel
def atomic_exch_1d(ary, idx, op2):
    tid = thread_idx.x
    sm = shared(uint32, 32)
    sm[tid] = ary[tid]
    barrier()
    bin = idx[tid] % 32
    atomic_exch(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


def _hist(idx, dtype, step):
    gold = np.zeros(32, dtype=dtype)
    for i in idx:
        gold[int(i) % 32] += step
    return gold


@pytest.mark.parametrize("kernel", [atomic_add_1d, atomic_add_wrap])
def test_atomic_add(backend, kernel):
    ary = rng(0).integers(0, 32, 32).astype(np.uint32)
    orig = ary.copy()
    kernel[1, 32](ary)
    np.testing.assert_array_equal(ary, _hist(orig, np.uint32, 1))


def test_atomic_add_float(backend):
    ary = rng(1).integers(0, 32, 32).astype(np.float32)
    orig = ary.copy()
    atomic_add_float[1, 32](ary)
    np.testing.assert_array_equal(ary, _hist(orig, np.float32, 1))


def test_atomic_sub(backend):
    ary = rng(2).integers(0, 32, 32).astype(np.uint32)
    orig = ary.copy()
    atomic_sub_1d[1, 32](ary)
    np.testing.assert_array_equal(ary, (np.uint32(0) - _hist(orig, np.uint32, 1)).astype(np.uint32))


def test_atomic_sub_float(backend):
    ary = rng(3).integers(0, 32, 32).astype(np.float32)
    orig = ary.copy()
    atomic_sub_float[1, 32](ary)
    np.testing.assert_array_equal(ary, -_hist(orig, np.float32, 1))


@pytest.mark.parametrize("kernel, sign", [(atomic_add_double, 1.0), (atomic_sub_double, -1.0)])
def test_atomic_add_sub_double(backend, kernel, sign):
    idx = rng(4).integers(0, 32, 32).astype(np.int64)
    ary = np.zeros(32, np.float64)
    kernel[1, 32](idx, ary)
    np.testing.assert_array_equal(ary, _hist(idx, np.float64, sign))


@pytest.mark.parametrize(
    "kernel, init, op",
    [(atomic_and_1d, 1, np.bitwise_and), (atomic_or_1d, 0, np.bitwise_or), (atomic_xor_1d, 0, np.bitwise_xor)],
)
def test_atomic_bitwise_shared(backend, kernel, init, op):
    rand_const = np.uint32(rng(5).integers(500))
    ary = rng(6).integers(0, 32, 32).astype(np.uint32)
    gold = np.full(32, init, np.uint32)
    for i in ary:
        gold[i] = op(gold[i], rand_const)
    kernel[1, 32](ary, rand_const)
    np.testing.assert_array_equal(ary, gold)


def _inc(orig, rconst):
    return np.where(orig >= rconst, 0, orig + 1)


def _dec(orig, rconst):
    return np.where(orig == 0, rconst, np.where(orig > rconst, rconst, orig - 1))


@pytest.mark.parametrize("kernel, ref", [(atomic_inc32, _inc), (atomic_dec32, _dec)])
def test_atomic_inc_dec_32(backend, kernel, ref):
    # Source: inc_dec_1dim_setup + check_inc_index / check_dec_index
    rconst = np.uint32(rng(7).integers(32))
    ary = rng(8).integers(0, 32, 32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    orig = ary.copy()
    kernel[1, 32](ary, idx, rconst)
    np.testing.assert_array_equal(ary, ref(orig, rconst))


@needs("uint64 arrays and atomics")
def test_atomic_inc_64(backend):
    rconst = np.uint64(rng(7).integers(32))
    ary = rng(8).integers(0, 32, 32).astype(np.uint64)
    idx = np.arange(32, dtype=np.uint64)
    orig = ary.copy()
    atomic_inc64[1, 32](ary, idx, rconst)
    np.testing.assert_array_equal(ary, _inc(orig, rconst))


def test_atomic_exch(backend):
    rand_const = np.uint32(rng(9).integers(50, 100))
    ary = rng(10).integers(0, 32, 32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    atomic_exch_1d[1, 32](ary, idx, rand_const)
    np.testing.assert_array_equal(ary, np.full(32, rand_const, np.uint32))


# ---------------------------------------------------------------- 2-D shared arrays, block (4, 8)


# Source: test_atomics.py, atomic_add2 = atomic_binary_2dim_shared(ary, 1, uint32, (4, 8), cuda.atomic.add, ...)
# (test_atomic_add2): `bin = (tx, ty)` is written as the index tuple of the atomic
@gk.kernel
def atomic_add2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_add(sm, (tx, ty), 1)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_add2_wrap (neg_idx=True: bin = (bin[0] % 4, bin[1] % 8)) (test_atomic_add2)
@gk.kernel
def atomic_add2_wrap(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    bin = (tx, ty)
    bin = (bin[0] % 4, bin[1] % 8)
    atomic_add(sm, bin, 1)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_add3 (the y index cast to uint64) (test_atomic_add3)
@gk.kernel
def atomic_add3(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_add(sm, (tx, gk.uint64(ty)), 1)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_add_float_2 (test_atomic_add_float_2)
@gk.kernel
def atomic_add_float_2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(float32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_add(sm, (tx, ty), 1.0)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_add_double_2 (test_atomic_add_double_2)
@gk.kernel
def atomic_add_double_2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(float64, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_add(sm, (tx, ty), 1.0)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_sub2 (test_atomic_sub2)
@gk.kernel
def atomic_sub2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_sub(sm, (tx, ty), 1)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_sub_double_2 (test_atomic_sub_double_2)
@gk.kernel
def atomic_sub_double_2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(float64, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_sub(sm, (tx, ty), 1.0)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_and2 (test_atomic_and2)
@gk.kernel
def atomic_and2(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_and(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_or2 (test_atomic_or2)
@gk.kernel
def atomic_or2(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_or(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_xor2 (test_atomic_xor2)
@gk.kernel
def atomic_xor2(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_xor(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_inc2_32 (test_atomic_inc2_32)
@gk.kernel
def atomic_inc2_32(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_inc(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_dec2_32 (test_atomic_dec2_32)
@gk.kernel
def atomic_dec2_32(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(uint32, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_dec(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_exch3 (uint64 shared) (test_atomic_exch3)
@gk.kernel
def atomic_exch3(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(gk.uint64, (4, 8))
    sm[tx, ty] = ary[tx, ty]
    barrier()
    atomic_exch(sm, (tx, ty), op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


def _ary2(seed, dtype):
    return rng(seed).integers(0, 32, 32).astype(dtype).reshape(4, 8)


@pytest.mark.parametrize(
    "kernel, dtype, delta",
    [
        (atomic_add2, np.uint32, 1),
        (atomic_add2_wrap, np.uint32, 1),
        pytest.param(atomic_add3, np.uint32, 1, marks=needs("uint64 casts")),
        (atomic_add_float_2, np.float32, 1),
        (atomic_add_double_2, np.float64, 1),
        (atomic_sub2, np.uint32, -1),
        (atomic_sub_double_2, np.float64, -1),
    ],
)
def test_atomic_add_sub_2d(backend, kernel, dtype, delta):
    ary = _ary2(11, dtype)
    orig = ary.copy()
    kernel[1, (4, 8)](ary)
    np.testing.assert_array_equal(ary, (orig + dtype(delta) if delta > 0 else orig - dtype(1)).astype(dtype))


@pytest.mark.parametrize(
    "kernel, op", [(atomic_and2, np.bitwise_and), (atomic_or2, np.bitwise_or), (atomic_xor2, np.bitwise_xor)]
)
def test_atomic_bitwise_2d(backend, kernel, op):
    rand_const = np.uint32(rng(12).integers(500))
    ary = _ary2(13, np.uint32)
    orig = ary.copy()
    kernel[1, (4, 8)](ary, rand_const)
    np.testing.assert_array_equal(ary, op(orig, rand_const))


@pytest.mark.parametrize("kernel, ref", [(atomic_inc2_32, _inc), (atomic_dec2_32, _dec)])
def test_atomic_inc_dec_2d(backend, kernel, ref):
    rconst = np.uint32(rng(14).integers(32))
    ary = _ary2(15, np.uint32)
    orig = ary.copy()
    kernel[1, (4, 8)](ary, rconst)
    np.testing.assert_array_equal(ary, ref(orig, rconst))


@needs("uint64 arrays and atomics")
def test_atomic_exch3(backend):
    rand_const = np.uint64(rng(16).integers(50, 100))
    ary = _ary2(17, np.uint64)
    atomic_exch3[1, (4, 8)](ary, rand_const)
    np.testing.assert_array_equal(ary, np.full((4, 8), rand_const, np.uint64))


# ---------------------------------------------------------------- global arrays


# Source: test_atomics.py, atomic_add_double_global = atomic_binary_1dim_global(ary, idx, 32, 1.0, ...)
# (test_atomic_add_double_global)
@gk.kernel
def atomic_add_double_global(idx, ary):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_add(ary, bin, 1.0)


# Source: test_atomics.py, atomic_sub_double_global (test_atomic_sub_double_global)
@gk.kernel
def atomic_sub_double_global(idx, ary):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_sub(ary, bin, 1.0)


# Source: test_atomics.py, atomic_and_global (test_atomic_and_global)
@gk.kernel
def atomic_and_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_and(ary, bin, op2)


# Source: test_atomics.py, atomic_or_global (test_atomic_or_global)
@gk.kernel
def atomic_or_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_or(ary, bin, op2)


# Source: test_atomics.py, atomic_xor_global (test_atomic_xor_global)
@gk.kernel
def atomic_xor_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_xor(ary, bin, op2)


# Source: test_atomics.py, atomic_inc_global (test_atomic_inc_global_32)
@gk.kernel
def atomic_inc_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_inc(ary, bin, op2)


# Source: test_atomics.py, atomic_dec_global (test_atomic_dec_global_32)
@gk.kernel
def atomic_dec_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_dec(ary, bin, op2)


# Source: test_atomics.py, atomic_exch_global (test_atomic_exch_global)
@gk.kernel
def atomic_exch_global(idx, ary, op2):
    tid = thread_idx.x
    bin = int(idx[tid] % 32)
    atomic_exch(ary, bin, op2)


# Source: test_atomics.py, atomic_add_double_global_2 = atomic_binary_2dim_global(ary, 1, cuda.atomic.add, ...)
# (test_atomic_add_double_global_2)
@gk.kernel
def atomic_add_double_global_2(ary):
    tx = thread_idx.x
    ty = thread_idx.y
    atomic_add(ary, (tx, ty), 1)


# Source: test_atomics.py, atomic_and_global_2 (test_atomic_and_global_2)
@gk.kernel
def atomic_and_global_2(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    atomic_and(ary, (tx, ty), op2)


# Source: test_atomics.py, atomic_inc_global_2 (test_atomic_inc_global_2_32)
@gk.kernel
def atomic_inc_global_2(ary, op2):
    tx = thread_idx.x
    ty = thread_idx.y
    atomic_inc(ary, (tx, ty), op2)


@pytest.mark.parametrize("kernel, sign", [(atomic_add_double_global, 1.0), (atomic_sub_double_global, -1.0)])
def test_atomic_double_global(backend, kernel, sign):
    idx = rng(18).integers(0, 32, 32).astype(np.int64)
    ary = np.zeros(32, np.float64)
    kernel[1, 32](idx, ary)
    np.testing.assert_array_equal(ary, _hist(idx, np.float64, sign))


@pytest.mark.parametrize(
    "kernel, op",
    [(atomic_and_global, np.bitwise_and), (atomic_or_global, np.bitwise_or), (atomic_xor_global, np.bitwise_xor)],
)
def test_atomic_bitwise_global(backend, kernel, op):
    rand_const = np.int32(rng(19).integers(500))
    idx = rng(20).integers(0, 32, 32).astype(np.int32)
    ary = rng(21).integers(0, 32, 32).astype(np.int32)
    gold = ary.copy()
    for i in idx:
        gold[i] = op(gold[i], rand_const)
    kernel[1, 32](idx, ary, rand_const)
    np.testing.assert_array_equal(ary, gold)


@pytest.mark.parametrize("kernel, ref", [(atomic_inc_global, _inc), (atomic_dec_global, _dec)])
def test_atomic_inc_dec_global(backend, kernel, ref):
    rconst = np.uint32(rng(22).integers(32))
    ary = rng(23).integers(0, 32, 32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    orig = ary.copy()
    kernel[1, 32](idx, ary, rconst)
    np.testing.assert_array_equal(ary, ref(orig, rconst))


def test_atomic_exch_global(backend):
    rand_const = np.uint32(rng(24).integers(50, 100))
    idx = np.arange(32, dtype=np.uint32)
    ary = rng(25).integers(0, 32, 32).astype(np.uint32)
    atomic_exch_global[1, 32](idx, ary, rand_const)
    np.testing.assert_array_equal(ary, np.full(32, rand_const, np.uint32))


def test_atomic_add_double_global_2(backend):
    ary = _ary2(26, np.float64)
    orig = ary.copy()
    atomic_add_double_global_2[1, (4, 8)](ary)
    np.testing.assert_array_equal(ary, orig + 1)


def test_atomic_and_global_2(backend):
    rand_const = np.uint32(rng(27).integers(500))
    ary = _ary2(28, np.uint32)
    orig = ary.copy()
    atomic_and_global_2[1, (4, 8)](ary, rand_const)
    np.testing.assert_array_equal(ary, orig & rand_const)


@pytest.mark.parametrize("dtype", [np.uint32, pytest.param(np.uint64, marks=needs("uint64 arrays and atomics"))])
def test_atomic_inc_global_2(backend, dtype):
    rconst = dtype(rng(29).integers(32))
    ary = _ary2(30, dtype)
    orig = ary.copy()
    atomic_inc_global_2[1, (4, 8)](ary, rconst)
    np.testing.assert_array_equal(ary, _inc(orig, rconst))


# ---------------------------------------------------------------- min / max


# Source: test_atomics.py, gen_atomic_extreme_funcs('cuda.atomic.max') -> atomic (test_atomic_max_*)
@gk.kernel
def atomic_max_2d(res, ary):
    tx = thread_idx.x
    bx = block_idx.x
    atomic_max(res, 0, ary[tx, bx])


# Source: test_atomics.py, gen_atomic_extreme_funcs('cuda.atomic.min') -> atomic (test_atomic_min_*)
@gk.kernel
def atomic_min_2d(res, ary):
    tx = thread_idx.x
    bx = block_idx.x
    atomic_min(res, 0, ary[tx, bx])


# Source: test_atomics.py, atomic_max_double_normalizedindex (ary[tx, uint64(bx)])
@gk.kernel
def atomic_max_double_normalizedindex(res, ary):
    tx = thread_idx.x
    bx = block_idx.x
    atomic_max(res, 0, ary[tx, gk.uint64(bx)])


# Source: test_atomics.py, atomic_max_double_oneindex (test_atomic_max_double_oneindex)
@gk.kernel
def atomic_max_double_oneindex(res, ary):
    tx = thread_idx.x
    atomic_max(res, 0, ary[tx])


# Source: test_atomics.py, atomic_min_double_oneindex (test_atomic_min_double_oneindex)
@gk.kernel
def atomic_min_double_oneindex(res, ary):
    tx = thread_idx.x
    atomic_min(res, 0, ary[tx])


# Source: test_atomics.py, atomic_max_double_shared (test_atomic_max_double_shared)
@gk.kernel
def atomic_max_double_shared(res, ary):
    tid = thread_idx.x
    smary = shared(float64, 32)
    smary[tid] = ary[tid]
    smres = shared(float64, 1)
    if tid == 0:
        smres[0] = res[0]
    barrier()
    atomic_max(smres, 0, smary[tid])
    barrier()
    if tid == 0:
        res[0] = smres[0]


# Source: test_atomics.py, atomic_min_double_shared (test_atomic_min_double_shared)
@gk.kernel
def atomic_min_double_shared(res, ary):
    tid = thread_idx.x
    smary = shared(float64, 32)
    smary[tid] = ary[tid]
    smres = shared(float64, 1)
    if tid == 0:
        smres[0] = res[0]
    barrier()
    atomic_min(smres, 0, smary[tid])
    barrier()
    if tid == 0:
        res[0] = smres[0]


# Source: test_atomics.py, gen_atomic_extreme_funcs('cuda.atomic.nanmax') -> atomic (test_atomic_nanmax_*)
@gk.kernel
def atomic_nanmax_2d(res, ary):
    tx = thread_idx.x
    bx = block_idx.x
    gk.atomic_nanmax(res, 0, ary[tx, bx])


EXTREME_TYPES = [
    pytest.param(np.int32, -65535, id="int32"),
    pytest.param(np.uint32, 0, id="uint32"),
    pytest.param(np.int64, -65535, id="int64"),
    pytest.param(np.uint64, 0, id="uint64", marks=needs("uint64 arrays and atomics")),
    pytest.param(np.float32, -65535, id="float32"),
    pytest.param(np.float64, -65535, id="float64"),
]


@pytest.mark.parametrize("dtype, lo", EXTREME_TYPES)
def test_atomic_max(backend, dtype, lo):
    # Source: check_atomic_max (32 blocks of 32 threads; the source's grid, here 8 x 8 to keep it quick)
    vals = rng(31).integers(lo, 65535, (8, 8)).astype(dtype)
    res = np.zeros(1, dtype)
    atomic_max_2d[8, 8](res, vals)
    np.testing.assert_array_equal(res, [np.max(vals)])


@pytest.mark.parametrize("dtype, lo", EXTREME_TYPES)
def test_atomic_min(backend, dtype, lo):
    vals = rng(32).integers(lo, 65535, (8, 8)).astype(dtype)
    res = np.array([65535], dtype)
    atomic_min_2d[8, 8](res, vals)
    np.testing.assert_array_equal(res, [np.min(vals)])


@needs("uint64 casts")
def test_atomic_max_double_normalizedindex(backend):
    vals = rng(33).integers(0, 65535, (8, 8)).astype(np.float64)
    res = np.zeros(1, np.float64)
    atomic_max_double_normalizedindex[8, 8](res, vals)
    np.testing.assert_array_equal(res, [np.max(vals)])


@pytest.mark.parametrize(
    "kernel, init, ref",
    [
        (atomic_max_double_oneindex, 0.0, np.max),
        (atomic_min_double_oneindex, 128.0, np.min),
        (atomic_max_double_shared, 0.0, np.max),
        (atomic_min_double_shared, 128.0, np.min),
    ],
)
def test_atomic_extreme_double(backend, kernel, init, ref):
    vals = rng(34).integers(0, 128, 32).astype(np.float64)
    res = np.array([init])
    kernel[1, 32](res, vals)
    np.testing.assert_array_equal(res, [ref(vals)])


@pytest.mark.parametrize("kernel", [atomic_max_2d, atomic_min_2d])
def test_atomic_minmax_nan(backend, kernel):
    # Source: _test_atomic_minmax_nan_location / _nan_val: a NaN in memory stays, a NaN value changes nothing
    vals = rng(35).integers(0, 128, (1, 1)).astype(np.float64)
    res = np.array([np.nan])
    kernel[1, 1](res, vals)
    assert np.isnan(res[0])
    res = rng(36).integers(0, 128, 1).astype(np.float64)
    gold = res.copy()
    kernel[1, 1](res, np.full((1, 1), np.nan))
    np.testing.assert_array_equal(res, gold)


def test_atomic_nanmax(backend):
    vals = rng(37).integers(-65535, 65535, (8, 8)).astype(np.float64)
    vals[1::2] = np.nan
    res = np.zeros(1, np.float64)
    atomic_nanmax_2d[8, 8](res, vals)
    np.testing.assert_array_equal(res, [np.nanmax(vals)])


# ---------------------------------------------------------------- returned old values


# Source: test_atomics.py, test_atomic_add_returns_old (kernel: x[1] = cuda.atomic.add(x, 0, 1))
@gk.kernel
def add_returns_old(x):
    x[1] = atomic_add(x, 0, 1)


# Source: test_atomics.py, test_atomic_max_returns_no_replace / _nan_in_array (x[1] = cuda.atomic.max(x, 0, 1))
@gk.kernel
def max_returns_old_1(x):
    x[1] = atomic_max(x, 0, 1)


# Source: test_atomics.py, test_atomic_max_returns_old_replace (x[1] = cuda.atomic.max(x, 0, 10))
@gk.kernel
def max_returns_old_10(x):
    x[1] = atomic_max(x, 0, 10)


# Source: test_atomics.py, test_atomic_max_returns_old_nan_val (x[1] = cuda.atomic.max(x, 0, np.nan))
@gk.kernel
def max_returns_old_nan(x):
    x[1] = atomic_max(x, 0, np.nan)


# Source: test_atomics.py, test_atomic_min_returns_old_no_replace / _nan_in_array (cuda.atomic.min(x, 0, 11))
@gk.kernel
def min_returns_old_11(x):
    x[1] = atomic_min(x, 0, 11)


# Source: test_atomics.py, test_atomic_min_returns_old_replace (x[1] = cuda.atomic.min(x, 0, 10))
@gk.kernel
def min_returns_old_10(x):
    x[1] = atomic_min(x, 0, 10)


# Source: test_atomics.py, test_atomic_min_returns_old_nan_val (x[1] = cuda.atomic.min(x, 0, np.nan))
@gk.kernel
def min_returns_old_nan(x):
    x[1] = atomic_min(x, 0, np.nan)


@pytest.mark.parametrize(
    "kernel, initial",
    [
        (add_returns_old, 10.0),
        (max_returns_old_1, 10.0),
        (max_returns_old_10, 1.0),
        (max_returns_old_1, np.nan),
        (max_returns_old_nan, 10.0),
        (min_returns_old_11, 10.0),
        (min_returns_old_10, 11.0),
        (min_returns_old_11, np.nan),
        (min_returns_old_nan, 11.0),
    ],
)
def test_atomic_returns_old(backend, kernel, initial):
    # Source: _test_atomic_returns_old
    x = np.zeros(2, dtype=np.float32)
    x[0] = initial
    kernel[1, 1](x)
    if np.isnan(initial):
        assert np.isnan(x[1])
    else:
        assert x[1] == np.float32(initial)


# ---------------------------------------------------------------- compare and swap


# Source: test_atomics.py, atomic_cas_1dim (test_atomic_cas_1dim & co.): `gid < res.size`
@gk.kernel
def atomic_cas_1dim(res, old, ary, fill_val):
    gid = global_id(0)
    if gid < res.size:
        old[gid] = atomic_cas(res, gid, fill_val, ary[gid])


# Source: test_atomics.py, atomic_cas_2dim: `gid = cuda.grid(2)` indexes with the tuple (test_atomic_cas_2dim)
@gk.kernel
def atomic_cas_2dim(res, old, ary, fill_val):
    gid = (global_id(0), global_id(1))
    if gid[0] < res.shape[0] and gid[1] < res.shape[1]:
        old[gid] = atomic_cas(res, gid, fill_val, ary[gid])


# Source: test_atomics.py, atomic_compare_and_swap: `cuda.atomic.compare_and_swap(res[gid:], ...)`
@gk.kernel
def atomic_compare_and_swap(res, old, ary, fill_val):
    gid = global_id(0)
    if gid < res.size:
        old[gid] = gk.atomic_compare_and_swap(res[gid:], fill_val, ary[gid])


def _check_cas(kernel, fill, unfill, dtype, ndim=1):
    """The source's check_cas: half of res holds `fill` (swapped for ary), half `unfill` (kept)."""
    g = rng(38)
    res = np.asarray([fill] * 50 + [unfill] * 50, dtype=dtype)
    g.shuffle(res)
    if ndim == 2:
        res.shape = (10, -1)
    out = np.zeros_like(res)
    ary = g.integers(1, 10, res.shape).astype(res.dtype)
    expect_res = np.where(res == fill, ary, res)
    expect_out = res.copy()
    if ndim == 1:
        kernel[10, 10](res, out, ary, dtype(fill))
    else:
        kernel[(10, 10), (10, 10)](res, out, ary, dtype(fill))
    np.testing.assert_array_equal(res, expect_res)
    np.testing.assert_array_equal(out, expect_out)


@pytest.mark.parametrize(
    "dtype, fill, unfill",
    [
        (np.int32, -99, -1),
        (np.int64, -45, -1),
        (np.uint32, 77, 3),
        pytest.param(np.uint64, 77, 3, marks=needs("uint64 arrays and atomics")),
    ],
)
def test_atomic_cas_1dim(backend, dtype, fill, unfill):
    _check_cas(atomic_cas_1dim, fill, unfill, dtype)


def test_atomic_cas_2dim(backend):
    _check_cas(atomic_cas_2dim, -99, -1, np.int32, ndim=2)


def test_atomic_compare_and_swap(backend):
    _check_cas(atomic_compare_and_swap, -99, -1, np.int32)


# ---------------------------------------------------------------- the source's templates, as @funcs
# The source's own structure: a device function that declares the shared array and does the atomic,
# called by the kernel with the atomic, the shared array's type and shape and the index cast as
# arguments (a @func or an intrinsic passed to a @func is a compile-time value there, as in Numba).
# Two departures, both forced: a number passed to a @func is a run-time value, so the 1-D template's
# shape is written in (`shared(ary_dtype, 32)`; the 2-D one's `(4, 8)` is a tuple, a compile-time
# value); and its type is gpukern's (int32 for a literal), so the values stored into the uint32 or
# float32 array are passed typed (`uint32(1)`), where Numba converts them on the store.


# Source: test_atomics.py, atomic_cast_none / atomic_cast_to_int / atomic_cast_to_uint64 (device functions)
@gk.func
def atomic_cast_none(num):
    return num


@gk.func
def atomic_cast_to_int(num):
    return int(num)


@gk.func
def atomic_cast_to_uint64(num):
    return uint64(num)


# Source: test_atomics.py, atomic_binary_1dim_shared (a device function declaring the shared array)
@gk.func
def atomic_binary_1dim_shared(ary, idx, op2, ary_dtype, ary_nelements, binop_func, cast_func, initializer, neg_idx):
    tid = thread_idx.x
    sm = shared(ary_dtype, 32)
    sm[tid] = initializer
    barrier()
    bin = cast_func(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(sm, bin, op2)
    barrier()
    ary[tid] = sm[tid]


# Source: test_atomics.py, atomic_binary_2dim_shared (a device function declaring the shared array)
@gk.func
def atomic_binary_2dim_shared(ary, op2, ary_dtype, ary_shape, binop_func, y_cast_func, neg_idx):
    tx = thread_idx.x
    ty = thread_idx.y
    sm = shared(ary_dtype, ary_shape)
    sm[tx, ty] = ary[tx, ty]
    barrier()
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary_shape[0], bin[1] % ary_shape[1])
    binop_func(sm, bin, op2)
    barrier()
    ary[tx, ty] = sm[tx, ty]


# Source: test_atomics.py, atomic_add (test_atomic_add)
@gk.kernel
def atomic_add_template(ary):
    atomic_binary_1dim_shared(ary, ary, uint32(1), uint32, 32, atomic_add, atomic_cast_none, uint32(0), False)


# Source: test_atomics.py, atomic_add_float_wrap (test_atomic_add_float)
@gk.kernel
def atomic_add_float_wrap_template(ary):
    atomic_binary_1dim_shared(ary, ary, float32(1.0), float32, 32, atomic_add, atomic_cast_to_int, float32(0.0), True)


# Source: test_atomics.py, atomic_and (test_atomic_and)
@gk.kernel
def atomic_and_template(ary, op2):
    atomic_binary_1dim_shared(ary, ary, op2, uint32, 32, atomic_and, atomic_cast_none, uint32(1), False)


# Source: test_atomics.py, atomic_add2_wrap (test_atomic_add2)
@gk.kernel
def atomic_add2_wrap_template(ary):
    atomic_binary_2dim_shared(ary, uint32(1), uint32, (4, 8), atomic_add, atomic_cast_none, True)


# Source: test_atomics.py, atomic_sub3 (test_atomic_sub3)
@gk.kernel
def atomic_sub3_template(ary):
    atomic_binary_2dim_shared(ary, uint32(1), uint32, (4, 8), atomic_sub, atomic_cast_to_uint64, False)


def test_atomic_add_template(backend):
    ary = rng(0).integers(0, 32, 32).astype(np.uint32)
    orig = ary.copy()
    atomic_add_template[1, 32](ary)
    np.testing.assert_array_equal(ary, _hist(orig, np.uint32, 1))


def test_atomic_add_float_wrap_template(backend):
    ary = rng(1).integers(0, 32, 32).astype(np.float32)
    orig = ary.copy()
    atomic_add_float_wrap_template[1, 32](ary)
    np.testing.assert_array_equal(ary, _hist(orig, np.float32, 1))


def test_atomic_and_template(backend):
    rand_const = np.uint32(rng(5).integers(500))
    ary = rng(6).integers(0, 32, 32).astype(np.uint32)
    gold = np.ones(32, np.uint32)
    for i in ary:
        gold[i] &= rand_const
    atomic_and_template[1, 32](ary, rand_const)
    np.testing.assert_array_equal(ary, gold)


@pytest.mark.parametrize("kernel, delta", [(atomic_add2_wrap_template, 1), (atomic_sub3_template, -1)])
def test_atomic_2dim_templates(backend, kernel, delta):
    ary = rng(11).integers(0, 32, 32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    kernel[1, (4, 8)](ary)
    np.testing.assert_array_equal(ary, (orig.astype(np.int64) + delta).astype(np.uint32))
