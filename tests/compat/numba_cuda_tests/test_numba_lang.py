"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_lang.py`` and
``test_iterators.py`` (BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as
written there, only the import lines changed; the unittest methods became pytest functions run on
every backend."""

import numpy as np

from gpukern.numba import cuda
from gpukern.numba.cuda import float64

# ---------------------------------------------------------------- test_lang.py


def test_enumerate(backend):
    tup = (1.0, 2.5, 3.0)

    @cuda.jit("void(float64[:])")
    def foo(a):
        for i, v in enumerate(tup):
            a[i] = v

    a = np.zeros(len(tup))
    foo[1, 1](a)
    assert np.all(a == tup)


def test_zip(backend):
    t1 = (1, 2, 3)
    t2 = (4.5, 5.6, 6.7)

    @cuda.jit("void(float64[:])")
    def foo(a):
        c = 0
        for i, j in zip(t1, t2):
            c += i + j
        a[0] = c

    a = np.zeros(1)
    foo[1, 1](a)
    b = np.array(t1)
    c = np.array(t2)
    assert np.all(a == (b + c).sum())


def test_issue_872(backend):
    @cuda.jit("void(float64[:,:])")
    def cuda_kernel_api_in_multiple_blocks(ary):
        for i in range(2):
            tx = cuda.threadIdx.x
        for j in range(3):
            ty = cuda.threadIdx.y
        sm = cuda.shared.array((2, 3), float64)
        sm[tx, ty] = 1.0
        ary[tx, ty] = sm[tx, ty]

    a = np.zeros((2, 3))
    cuda_kernel_api_in_multiple_blocks[1, (2, 3)](a)


# ---------------------------------------------------------------- test_iterators.py


def test_iterators_enumerate(backend):
    @cuda.jit
    def enumerator(x, error):
        count = 0

        for i, v in enumerate(x):
            if count != i:
                error[0] = 1
            if v != x[i]:
                error[0] = 2

            count += 1

        if count != len(x):
            error[0] = 3

    x = np.asarray((10, 9, 8, 7, 6))
    error = np.zeros(1, dtype=np.int32)

    enumerator[1, 1](x, error)
    assert error[0] == 0


def _test_twoarg_function(f):
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    error = np.zeros(1, dtype=np.int32)

    f[1, 1](x, y, error)
    assert error[0] == 0


def test_iterators_zip(backend):
    @cuda.jit
    def zipper(x, y, error):
        i = 0

        for xv, yv in zip(x, y):
            if xv != x[i]:
                error[0] = 1
            if yv != y[i]:
                error[0] = 2

            i += 1

        if i != len(x):
            error[0] = 3

    _test_twoarg_function(zipper)


def test_enumerate_zip(backend):
    @cuda.jit
    def enumerator_zipper(x, y, error):
        count = 0

        for i, (xv, yv) in enumerate(zip(x, y)):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3

            count += 1

        if count != len(x):
            error[0] = 4

    _test_twoarg_function(enumerator_zipper)


def test_zip_enumerate(backend):
    @cuda.jit
    def zipper_enumerator(x, y, error):
        count = 0

        for (i, xv), yv in zip(enumerate(x), y):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3

            count += 1

        if count != len(x):
            error[0] = 4

    _test_twoarg_function(zipper_enumerator)
