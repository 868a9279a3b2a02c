"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/``: ``test_idiv.py``,
``test_freevar.py``, ``test_constmem.py``, ``test_minmax.py`` and ``test_powi.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the kernels as written there, only the import lines
changed (``cp``: the stand-in making gpukern device arrays).  The checks of PTX (``inspect_asm``) are
left out; ``specialize`` (compile for these arguments now) is dropped, as gpukern compiles at the
first launch anyway."""

import math

import numpy as np
import pytest

import cupy_standin as cp
from gpukern.numba import cuda, void, float32, float64, int8, int32, complex64


# ---------------------------------------------------------------- test_idiv.py
def test_inplace_div(backend):
    @cuda.jit(void(float32[:, :], int32, int32))
    def div(grid, l_x, l_y):
        for x in range(l_x):
            for y in range(l_y):
                grid[x, y] /= 2.0

    grid = cp.asarray(np.ones((2, 2), dtype=np.float32))
    div[1, 1](grid, 2, 2)
    assert np.all(grid.get() == 0.5)


def test_inplace_div_double(backend):
    @cuda.jit(void(float64[:, :], int32, int32))
    def div_double(grid, l_x, l_y):
        for x in range(l_x):
            for y in range(l_y):
                grid[x, y] /= 2.0

    grid = cp.asarray(np.ones((2, 2), dtype=np.float64))
    div_double[1, 1](grid, 2, 2)
    assert np.all(grid.get() == 0.5)


# ---------------------------------------------------------------- test_freevar.py
def test_freevar(backend):
    size = 1024
    nbtype = float32

    @cuda.jit("(float32[::1], intp)")
    def foo(A, i):
        "Dummy function"
        sdata = cuda.shared.array(
            size,  # size is freevar
            dtype=nbtype,
        )  # nbtype is freevar
        sdata[i] = A[i] + 1  # (the source reads sdata[i] unset: here it is set first, to compare)
        A[i] = sdata[i]

    A = np.arange(2, dtype="float32")
    foo[1, 1](A, 0)
    assert A[0] == 1


# ---------------------------------------------------------------- test_constmem.py
CONST_EMPTY = np.array([])
CONST1D = np.arange(10, dtype=np.float64) / 2.0
CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))
CONST3D = (np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j
CONST3BYTES = np.arange(3, dtype=np.uint8)

CONST_RECORD = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", float), ("y", int)])
CONST_RECORD_ALIGN = np.array(
    [(1, 2, 3, 0xDEADBEEF, 8), (4, 5, 6, 0xBEEFDEAD, 10)],
    dtype=np.dtype(
        dtype=[
            ("a", np.uint8),
            ("b", np.uint8),
            ("x", np.uint8),
            ("y", np.uint32),
            ("z", np.uint8),
        ],
        align=True,
    ),
)


def cuconstEmpty(A):
    C = cuda.const.array_like(CONST_EMPTY)
    i = cuda.grid(1)
    A[i] = len(C)


def cuconst(A):
    C = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)

    # +1 or it'll be loaded & stored as a u32
    A[i] = C[i] + 1.0


def cuconst2d(A):
    C = cuda.const.array_like(CONST2D)
    i, j = cuda.grid(2)
    A[i, j] = C[i, j]


def cuconst3d(A):
    C = cuda.const.array_like(CONST3D)
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    k = cuda.threadIdx.z
    A[i, j, k] = C[i, j, k]


def cuconstRec(A, B):
    C = cuda.const.array_like(CONST_RECORD)
    i = cuda.grid(1)
    A[i] = C[i]["x"]
    B[i] = C[i]["y"]


def cuconstRecAlign(A, B, C, D, E):
    Z = cuda.const.array_like(CONST_RECORD_ALIGN)
    i = cuda.grid(1)
    A[i] = Z[i]["a"]
    B[i] = Z[i]["b"]
    C[i] = Z[i]["x"]
    D[i] = Z[i]["y"]
    E[i] = Z[i]["z"]


def cuconstAlign(z):
    a = cuda.const.array_like(CONST3BYTES)
    b = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)
    z[i] = a[i] + b[i]


def test_const_array(backend):
    sig = (float64[:],)
    jcuconst = cuda.jit(sig)(cuconst)
    A = np.zeros_like(CONST1D)
    jcuconst[2, 5](A)
    assert np.all(A == CONST1D + 1)


def test_const_empty(backend):
    jcuconstEmpty = cuda.jit("void(int64[:])")(cuconstEmpty)
    A = np.full(1, fill_value=-1, dtype=np.int64)
    jcuconstEmpty[1, 1](A)
    assert np.all(A == 0)


def test_const_align(backend):
    jcuconstAlign = cuda.jit("void(float64[:])")(cuconstAlign)
    A = np.full(3, fill_value=np.nan, dtype=float)
    jcuconstAlign[1, 3](A)
    assert np.all(A == (CONST3BYTES + CONST1D[:3]))


def test_const_array_2d(backend):
    sig = (int32[:, :],)
    jcuconst2d = cuda.jit(sig)(cuconst2d)
    A = np.zeros_like(CONST2D, order="C")
    jcuconst2d[(2, 2), (5, 5)](A)
    assert np.all(A == CONST2D)


def test_const_array_3d(backend):
    sig = (complex64[:, :, :],)
    jcuconst3d = cuda.jit(sig)(cuconst3d)
    A = np.zeros_like(CONST3D, order="F")
    jcuconst3d[1, (5, 5, 5)](A)
    assert np.all(A == CONST3D)


def test_const_record(backend):
    A = np.zeros(2, dtype=float)
    B = np.zeros(2, dtype=int)
    jcuconst = cuda.jit(cuconstRec)
    jcuconst[2, 1](A, B)
    np.testing.assert_allclose(A, CONST_RECORD["x"])
    np.testing.assert_allclose(B, CONST_RECORD["y"])


def test_const_record_align(backend):
    A = np.zeros(2, dtype=np.float64)
    B = np.zeros(2, dtype=np.float64)
    C = np.zeros(2, dtype=np.float64)
    D = np.zeros(2, dtype=np.float64)
    E = np.zeros(2, dtype=np.float64)
    jcuconst = cuda.jit(cuconstRecAlign)
    jcuconst[2, 1](A, B, C, D, E)
    np.testing.assert_allclose(A, CONST_RECORD_ALIGN["a"])
    np.testing.assert_allclose(B, CONST_RECORD_ALIGN["b"])
    np.testing.assert_allclose(C, CONST_RECORD_ALIGN["x"])
    np.testing.assert_allclose(D, CONST_RECORD_ALIGN["y"])
    np.testing.assert_allclose(E, CONST_RECORD_ALIGN["z"])


# ---------------------------------------------------------------- test_minmax.py
def builtin_max(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(max(A[i], B[i]))


def builtin_min(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(min(A[i], B[i]))


@pytest.mark.parametrize("dtype_left,dtype_right", [(np.float64, np.float64), (np.float32, np.float64),
                                                    (np.float64, np.float32), (np.float32, np.float32)])
def test_minmax(backend, dtype_left, dtype_right):
    for kernel, numpy_equivalent in ((builtin_max, np.maximum), (builtin_min, np.minimum)):
        kernel = cuda.jit(kernel)
        n = 5
        c = np.zeros(n, dtype=np.float64)
        a = np.arange(n, dtype=dtype_left) + 0.5
        b = np.full(n, fill_value=2, dtype=dtype_right)
        kernel[1, c.shape](a, b, c)
        np.testing.assert_allclose(c, numpy_equivalent(a, b))


# ---------------------------------------------------------------- test_powi.py
def cu_mat_power(A, power, power_A):
    y, x = cuda.grid(2)

    m, n = power_A.shape
    if x >= n or y >= m:
        return

    power_A[y, x] = math.pow(A[y, x], int32(power))


def cu_mat_power_binop(A, power, power_A):
    y, x = cuda.grid(2)

    m, n = power_A.shape
    if x >= n or y >= m:
        return

    power_A[y, x] = A[y, x] ** power


def vec_pow(r, x, y):
    i = cuda.grid(1)

    if i < len(r):
        r[i] = pow(x[i], y[i])


def vec_pow_binop(r, x, y):
    i = cuda.grid(1)

    if i < len(r):
        r[i] = x[i] ** y[i]


def vec_pow_inplace_binop(r, x):
    i = cuda.grid(1)

    if i < len(r):
        r[i] **= x[i]


def random_complex(N):
    np.random.seed(123)
    return np.random.random(1) + np.random.random(1) * 1j


def test_powi(backend):
    dec = cuda.jit(void(float64[:, :], int8, float64[:, :]))
    kernel = dec(cu_mat_power)
    power = 2
    A = np.arange(10, dtype=np.float64).reshape(2, 5)
    Aout = np.empty_like(A)
    kernel[1, A.shape](A, power, Aout)
    assert np.allclose(Aout, A**power)


def test_powi_binop(backend):
    dec = cuda.jit(void(float64[:, :], int8, float64[:, :]))
    kernel = dec(cu_mat_power_binop)
    power = 2
    A = np.arange(10, dtype=np.float64).reshape(2, 5)
    Aout = np.empty_like(A)
    kernel[1, A.shape](A, power, Aout)
    assert np.allclose(Aout, A**power)


def _test_cpow(dtype, func, rtol=1.0e-7):
    N = 32
    x = random_complex(N).astype(dtype)
    y = random_complex(N).astype(dtype)
    r = np.zeros_like(x)

    cfunc = cuda.jit(func)
    cfunc[1, N](r, x, y)
    np.testing.assert_allclose(r, x**y, rtol=rtol)

    # Checks special cases
    x = np.asarray([0.0j, 1.0j], dtype=dtype)
    y = np.asarray([0.0j, 1.0], dtype=dtype)
    r = np.zeros_like(x)

    cfunc[1, 2](r, x, y)
    np.testing.assert_allclose(r, x**y, rtol=rtol)


def test_cpow_complex64_pow(backend):
    _test_cpow(np.complex64, vec_pow, rtol=3.0e-7)


def test_cpow_complex128_binop(backend):
    _test_cpow(np.complex128, vec_pow_binop)


def test_cpow_complex128_inplace_binop(backend):
    N = 32
    x = random_complex(N).astype(np.complex128)
    y = random_complex(N).astype(np.complex128)
    r = x**y
    cfunc = cuda.jit(vec_pow_inplace_binop)
    cfunc[1, N](x, y)
    np.testing.assert_allclose(x, r, rtol=3.0e-7)
