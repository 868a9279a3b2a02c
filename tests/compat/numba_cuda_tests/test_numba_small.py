"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/``: ``test_globals.py``,
``test_slicing.py`` and ``test_boolean.py`` (BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda,
Inc.): the kernels and device functions as written there, only the import lines changed; the
unittest methods became pytest functions run on every backend (``test_global_tuple_const`` is
skipped in the source, and run here)."""

import numpy as np

from gpukern.numba import cuda, float32, int32

N = 100


def simple_smem(ary):
    sm = cuda.shared.array(N, int32)
    i = cuda.grid(1)
    if i == 0:
        for j in range(N):
            sm[j] = j
    cuda.syncthreads()
    ary[i] = sm[i]


S0 = 10
S1 = 20


def coop_smem2d(ary):
    i, j = cuda.grid(2)
    sm = cuda.shared.array((S0, S1), float32)
    sm[i, j] = (i + 1) / (j + 1)
    cuda.syncthreads()
    ary[i, j] = sm[i, j]


def test_global_int_const(backend):
    compiled = cuda.jit("void(int32[:])")(simple_smem)
    nelem = 100
    ary = np.empty(nelem, dtype=np.int32)
    compiled[1, nelem](ary)
    assert np.all(ary == np.arange(nelem, dtype=np.int32))


def test_global_tuple_const(backend):
    compiled = cuda.jit("void(float32[:,:])")(coop_smem2d)
    shape = 10, 20
    ary = np.empty(shape, dtype=np.float32)
    compiled[1, shape](ary)
    exp = np.empty_like(ary)
    for i in range(ary.shape[0]):
        for j in range(ary.shape[1]):
            exp[i, j] = float(i + 1) / (j + 1)
    assert np.allclose(ary, exp)


def foo(inp, out):
    for i in range(out.shape[0]):
        out[i] = inp[i]


def copy(inp, out):
    i = cuda.grid(1)
    cufoo(inp[i, :], out[i, :])


def test_slice_as_arg(backend):
    global cufoo
    cufoo = cuda.jit("void(int32[:], int32[:])", device=True)(foo)
    cucopy = cuda.jit("void(int32[:,:], int32[:,:])")(copy)

    inp = np.arange(100, dtype=np.int32).reshape(10, 10)
    out = np.zeros_like(inp)

    cucopy[1, 10](inp, out)
    np.testing.assert_array_equal(out, inp)


def test_assign_empty_slice(backend):
    N = 0
    a = range(N)
    arr = cuda.device_array(len(a))
    arr[:] = cuda.to_device(a)


def boolean_func(A, vertial):
    if vertial:
        A[0] = 123
    else:
        A[0] = 321


def test_boolean(backend):
    func = cuda.jit("void(float64[:], bool_)")(boolean_func)
    A = np.array([0], dtype="float64")
    func[1, 1](A, True)
    assert A[0] == 123
    func[1, 1](A, False)
    assert A[0] == 321
