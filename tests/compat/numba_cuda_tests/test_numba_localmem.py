"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_localmem.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written, only the import line
changed; the checks of PTX and of Numba's typing internals are left out (the kernels still run)."""

import numpy as np

from gpukern.numba import cuda, int32, complex128, void
from gpukern.numba import types


def culocal(A, B):
    C = cuda.local.array(1000, dtype=int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def culocalcomplex(A, B):
    C = cuda.local.array(100, dtype=complex128)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def culocal1tuple(A, B):
    C = cuda.local.array((5,), dtype=int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def test_local_array(backend):
    jculocal = cuda.jit((int32[:], int32[:]))(culocal)
    A = np.arange(1000, dtype="int32")
    B = np.zeros_like(A)
    jculocal[1, 1](A, B)
    assert np.all(A == B)


def test_local_array_1_tuple(backend):
    jculocal = cuda.jit("void(int32[:], int32[:])")(culocal1tuple)
    A = np.arange(5, dtype="int32")
    B = np.zeros_like(A)
    jculocal[1, 1](A, B)
    assert np.all(A == B)


def test_local_array_complex(backend):
    sig = "void(complex128[:], complex128[:])"
    jculocalcomplex = cuda.jit(sig)(culocalcomplex)
    A = (np.arange(100, dtype="complex128") - 1) / 2j
    B = np.zeros_like(A)
    jculocalcomplex[1, 1](A, B)
    assert np.all(A == B)


def test_numba_dtype(backend):
    @cuda.jit(void(int32[::1]))
    def f(x):
        l = cuda.local.array(10, dtype=int32)
        l[0] = x[0]
        x[0] = l[0]

    x = np.array([7], np.int32)
    f[1, 1](x)
    assert x[0] == 7


def test_numpy_dtype(backend):
    @cuda.jit(void(int32[::1]))
    def f(x):
        l = cuda.local.array(10, dtype=np.int32)
        l[0] = x[0]
        x[0] = l[0]

    x = np.array([7], np.int32)
    f[1, 1](x)
    assert x[0] == 7


def test_string_dtype(backend):
    @cuda.jit(void(int32[::1]))
    def f(x):
        l = cuda.local.array(10, dtype="int32")
        l[0] = x[0]
        x[0] = l[0]

    x = np.array([7], np.int32)
    f[1, 1](x)
    assert x[0] == 7


def _check_local_array_size_fp16(shape, expected, ty):
    @cuda.jit
    def s(a):
        arr = cuda.local.array(shape, dtype=ty)
        a[0] = arr.size

    result = np.zeros(1, dtype=np.float16)
    s[1, 1](result)
    assert result[0] == expected


def test_issue_fp16_support(backend):
    _check_local_array_size_fp16(2, 2, types.float16)
    _check_local_array_size_fp16(2, 2, np.float16)
