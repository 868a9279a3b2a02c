"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_sm_creation.py``
(BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written there, only the
import lines changed; the unittest methods became pytest functions run on every backend.  The invalid
shapes raise ``TypingError`` (``gpukern.numba.core.errors``: ``gk.KernelTypeError``) when the kernel is
compiled with its signature, as in Numba; Numba's own message texts and typing annotations are left
out, as is the extension-API struct type."""

import numpy as np
import pytest

import gpukern as gk
from gpukern.numba import cuda
from gpukern.numba.core.errors import TypingError
from gpukern.numba.cuda import float32, int32

GLOBAL_CONSTANT = 5
GLOBAL_CONSTANT_2 = 6
GLOBAL_CONSTANT_TUPLE = 5, 6


def udt_global_constants(A):
    sa = cuda.shared.array(shape=GLOBAL_CONSTANT, dtype=float32)
    i = cuda.grid(1)
    A[i] = sa[i]


def udt_global_build_tuple(A):
    sa = cuda.shared.array(shape=(GLOBAL_CONSTANT, GLOBAL_CONSTANT_2), dtype=float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def udt_global_constant_tuple(A):
    sa = cuda.shared.array(shape=GLOBAL_CONSTANT_TUPLE, dtype=float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def udt_invalid_1(A):
    sa = cuda.shared.array(shape=A[0], dtype=float32)
    i = cuda.grid(1)
    A[i] = sa[i]


def udt_invalid_2(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def udt_invalid_3(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=float32)
    i = cuda.grid(1)
    A[i] = sa[i, 0]


def getarg():
    return np.array(100, dtype=np.float32, ndmin=1)


def getarg2():
    return getarg().reshape(1, 1)


UNWRITTEN = "the kernel copies shared memory no thread has written (the source's test reads whatever it holds)"


@pytest.mark.finds(UNWRITTEN, error=gk.UninitializedReadError, on=("sim",))
def test_global_constants(backend):
    udt = cuda.jit((float32[:],))(udt_global_constants)
    udt[1, 1](getarg())


@pytest.mark.finds(UNWRITTEN, error=gk.UninitializedReadError, on=("sim",))
def test_global_build_tuple(backend):
    udt = cuda.jit((float32[:, :],))(udt_global_build_tuple)
    udt[1, 1](getarg2())


@pytest.mark.finds(UNWRITTEN, error=gk.UninitializedReadError, on=("sim",))
def test_global_constant_tuple(backend):
    udt = cuda.jit((float32[:, :],))(udt_global_constant_tuple)
    udt[1, 1](getarg2())


@pytest.mark.parametrize(
    "sig, fn",
    [((float32[:],), udt_invalid_1), ((float32[:, :],), udt_invalid_2), ((int32[:],), udt_invalid_1),
     ((int32[:],), udt_invalid_3)],  # fmt: skip
    ids=["invalid_1", "invalid_2", "invalid_3", "invalid_4"],
)
def test_invalid(backend, sig, fn):
    with pytest.raises(TypingError):
        cuda.jit(sig)(fn)
