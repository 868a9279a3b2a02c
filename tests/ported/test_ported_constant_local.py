"""Constant- and local-memory kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_constmem.py and
test_localmem.py (NVIDIA/numba-cuda).

Spelling: ``C = cuda.const.array_like(CONST1D)`` then ``C[i]`` -> the module-level NumPy array read
directly, ``CONST1D[i]`` (gpukern makes it constant memory); ``cuda.local.array(s, t)`` -> ``local(t, s)``;
``i, j = cuda.grid(2)`` -> ``i = global_id(0)``, ``j = global_id(1)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import global_id, int32, local, thread_idx

from .support import needs

CONST_EMPTY = np.array([])
CONST1D = np.arange(10, dtype=np.float64) / 2.0
CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))
CONST3D = (np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j
CONST3BYTES = np.arange(3, dtype=np.uint8)
CONST_RECORD = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", float), ("y", int)])


# Source: test_constmem.py, cuconst (test_const_array)
@gk.kernel
def cuconst(A):
    i = global_id(0)

    # +1 or it'll be loaded & stored as a u32
    A[i] = CONST1D[i] + 1.0


# Source: test_constmem.py, cuconstEmpty (test_const_empty)
@gk.kernel
def cuconstEmpty(A):
    i = global_id(0)
    A[i] = len(CONST_EMPTY)


# Source: test_constmem.py, cuconst2d (test_const_array_2d): CONST2D is a Fortran-order array
@gk.kernel
def cuconst2d(A):
    i = global_id(0)
    j = global_id(1)
    A[i, j] = CONST2D[i, j]


# Source: test_constmem.py, cuconst3d (test_const_array_3d): a complex64 table
@gk.kernel
def cuconst3d(A):
    i = thread_idx.x
    j = thread_idx.y
    k = thread_idx.z
    A[i, j, k] = CONST3D[i, j, k]


# Source: test_constmem.py, cuconstAlign (test_const_align): a uint8 table beside a float64 one
@gk.kernel
def cuconstAlign(z):
    i = global_id(0)
    z[i] = CONST3BYTES[i] + CONST1D[i]


# Source: test_constmem.py, cuconstRec (test_const_record): a table of records
@gk.kernel
def cuconstRec(A, B):
    i = global_id(0)
    A[i] = CONST_RECORD[i]["x"]
    B[i] = CONST_RECORD[i]["y"]


def test_const_array(backend):
    A = np.zeros_like(CONST1D)
    cuconst[2, 5](A)
    np.testing.assert_array_equal(A, CONST1D + 1)


def test_const_empty(backend):
    A = np.full(1, fill_value=-1, dtype=np.int64)
    cuconstEmpty[1, 1](A)
    np.testing.assert_array_equal(A, [len(CONST_EMPTY)])


def test_const_array_2d(backend):
    A = np.zeros_like(CONST2D, order="C")
    cuconst2d[(2, 2), (5, 5)](A)
    np.testing.assert_array_equal(A, CONST2D)


@needs("complex64")
def test_const_array_3d(backend):
    A = np.zeros_like(CONST3D, order="C")
    cuconst3d[1, (5, 5, 5)](A)
    np.testing.assert_array_equal(A, CONST3D)


@needs("uint8")
def test_const_align(backend):
    A = np.full(3, fill_value=np.nan, dtype=float)
    cuconstAlign[1, 3](A)
    np.testing.assert_array_equal(A, CONST3BYTES + CONST1D[:3])


@needs("record dtypes")
def test_const_record(backend):
    A = np.zeros(2, dtype=float)
    B = np.zeros(2, dtype=int)
    cuconstRec[2, 1](A, B)
    np.testing.assert_array_equal(A, CONST_RECORD["x"])
    np.testing.assert_array_equal(B, CONST_RECORD["y"])


# Source: test_localmem.py, culocal (test_local_array): a 1000-element local array
@gk.kernel
def culocal(A, B):
    C = local(int32, 1000)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


# Source: test_localmem.py, culocal1tuple (test_local_array_1_tuple): the shape as a 1-tuple
@gk.kernel
def culocal1tuple(A, B):
    C = local(int32, (5,))
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


# Source: test_localmem.py, culocalcomplex (test_local_array_complex)
@gk.kernel
def culocalcomplex(A, B):
    C = local(gk.complex128, 100)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


# Source: test_localmem.py, test_numpy_dtype (f): `cuda.local.array(10, dtype=np.int32)`
@gk.kernel
def local_numpy_dtype(x):
    l = local(np.int32, 10)  # noqa: E741 (the source's name)
    l[0] = x[0]
    x[0] = l[0]


# Source: test_localmem.py, _check_local_array_size_fp16 (test_issue_fp16_support)
@gk.kernel
def local_size_fp16(a):
    arr = local(gk.float16, 2)
    a[0] = arr.size


@pytest.mark.parametrize("kernel, n", [(culocal, 1000), (culocal1tuple, 5)])
def test_local_array(backend, kernel, n):
    A = np.arange(n, dtype="int32")
    B = np.zeros_like(A)
    kernel[1, 1](A, B)
    np.testing.assert_array_equal(A, B)


@needs("complex128")
def test_local_array_complex(backend):
    A = (np.arange(100, dtype="complex128") - 1) / 2j
    B = np.zeros_like(A)
    culocalcomplex[1, 1](A, B)
    np.testing.assert_array_equal(A, B)


def test_local_numpy_dtype(backend):
    x = np.array([7], dtype=np.int32)
    local_numpy_dtype[1, 1](x)
    assert x[0] == 7


@needs("float16")
def test_local_size_fp16(backend):
    result = np.zeros(1, dtype=np.float16)
    local_size_fp16[1, 1](result)
    assert result[0] == 2
