"""Kernels ported from smaller Numba-CUDA test files (NVIDIA/numba-cuda, numba/cuda/tests/cudapy/):
test_frexp_ldexp.py, test_complex_kernel.py, test_mandel.py, test_minmax.py, test_print.py and
test_record_dtype.py.

Spelling: ``cuda.grid(1)`` -> ``global_id(0)``; ``@cuda.jit(device=True)`` -> ``@gk.func``; NumPy scalar
types used as constructors in a kernel (``np.complex64(re, im)``, ``float64(x)``) -> gpukern's types
(``gk.complex64(re, im)``, ``float64(x)``); ``print`` and ``math.*`` unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import float64, global_id

from .support import needs

# ---------------------------------------------------------------- test_frexp_ldexp.py


# Source: test_frexp_ldexp.py, simple_frexp (test_frexp_f4, test_frexp_f8)
@gk.kernel
def simple_frexp(aryx, aryexp, arg):
    aryx[0], aryexp[0] = math.frexp(arg)


# Source: test_frexp_ldexp.py, simple_ldexp (test_ldexp_f4, test_ldexp_f8)
@gk.kernel
def simple_ldexp(aryx, arg, exp):
    aryx[0] = math.ldexp(arg, exp)


@needs("math.frexp (tuple results)")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_frexp(backend, dt):
    aryx = np.zeros(1, dtype=dt)
    aryexp = np.zeros(1, dtype=np.int32)
    simple_frexp[1, 1](aryx, aryexp, dt(3.1415))
    m, e = math.frexp(float(dt(3.1415)))
    np.testing.assert_array_equal(aryx, [dt(m)])
    assert aryexp[0] == e
    for special in (np.inf, np.nan):  # the source: the value itself and exponent 0 (np.frexp gives -1)
        simple_frexp[1, 1](aryx, aryexp, dt(special))
        np.testing.assert_array_equal(aryx, [dt(special)])
        assert aryexp[0] == 0


@needs("math.ldexp")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_ldexp(backend, dt):
    aryx = np.zeros(1, dtype=dt)
    for arg in (0.785375, np.inf, np.nan):
        simple_ldexp[1, 1](aryx, dt(arg), np.int32(2))
        np.testing.assert_array_equal(aryx, [np.ldexp(dt(arg), 2)])


# ---------------------------------------------------------------- test_complex_kernel.py


# Source: test_complex_kernel.py, test_cuda_complex_arg (foo)
@gk.kernel
def complex_arg(a, b):
    i = global_id(0)
    a[i] += b


# Source: test_complex_kernel.py, test_numpy_complex_constructor_two_args (foo, dtype = np.complex64)
@gk.kernel
def complex_constructor(out, real, imag):
    i = global_id(0)
    if i < out.size:
        out[i] = gk.complex64(real[i], imag[i])


@needs("complex128")
def test_cuda_complex_arg(backend):
    a = np.arange(5, dtype=np.complex128)
    a0 = a.copy()
    complex_arg[1, a.shape[0]](a, np.complex128(2j))
    np.testing.assert_allclose(a, a0 + 2j)


@needs("complex64")
def test_complex_constructor_two_args(backend):
    real = np.array([1.5, -2.0, 0.0], dtype=np.float32)
    imag = np.array([-3.25, 4.0, 0.5], dtype=np.float32)
    out = np.empty(real.size, dtype=np.complex64)
    complex_constructor[1, real.size](out, real, imag)
    np.testing.assert_allclose(out, real + 1j * imag)


# ---------------------------------------------------------------- test_mandel.py


# Source: test_mandel.py, test_mandel (mandel, a device function)
@gk.func
def mandel(tid, min_x, max_x, min_y, max_y, width, height, iters):
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height

    x = tid % width
    y = tid / width

    real = min_x + x * pixel_size_x
    imag = min_y + y * pixel_size_y

    c = complex(real, imag)
    z = 0.0j

    for i in range(iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return iters


# The source only compiles mandel for (uint32, float64 x 4, uint32 x 3); this kernel runs it per pixel.
@gk.kernel
def mandel_kernel(out, min_x, max_x, min_y, max_y, width, height, iters):
    tid = gk.uint32(global_id(0))
    if tid < width * height:
        out[tid] = mandel(tid, min_x, max_x, min_y, max_y, width, height, iters)


def _mandel_reference(tid, min_x, max_x, min_y, max_y, width, height, iters):
    x, y = tid % width, tid / width
    c = complex(min_x + x * (max_x - min_x) / width, min_y + y * (max_y - min_y) / height)
    z = 0j
    for i in range(iters):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag >= 4:
            return i
    return iters


@needs("complex128 values")
def test_mandel(backend):
    width, height, iters = 8, 6, 20
    args = (-2.0, 1.0, -1.0, 1.0, np.uint32(width), np.uint32(height), np.uint32(iters))
    out = np.zeros(width * height, dtype=np.uint32)
    mandel_kernel[2, 32](out, *args)
    expected = [_mandel_reference(t, -2.0, 1.0, -1.0, 1.0, width, height, iters) for t in range(width * height)]
    np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------- test_minmax.py


# Source: test_minmax.py, builtin_max (test_minmax)
@gk.kernel
def builtin_max(A, B, C):
    i = global_id(0)

    if i >= len(C):
        return

    C[i] = float64(max(A[i], B[i]))


# Source: test_minmax.py, builtin_min (test_minmax)
@gk.kernel
def builtin_min(A, B, C):
    i = global_id(0)

    if i >= len(C):
        return

    C[i] = float64(min(A[i], B[i]))


@pytest.mark.parametrize("kernel, ref", [(builtin_max, np.maximum), (builtin_min, np.minimum)])
@pytest.mark.parametrize(
    "dtype_left, dtype_right",
    [(np.float64, np.float64), (np.float32, np.float64), (np.float64, np.float32), (np.float32, np.float32)],
)
def test_minmax(backend, kernel, ref, dtype_left, dtype_right):
    n = 5
    c = np.zeros(n, dtype=np.float64)
    a = np.arange(n, dtype=dtype_left) + 0.5
    b = np.full(n, fill_value=2, dtype=dtype_right)
    kernel[1, n](a, b, c)
    np.testing.assert_allclose(c, ref(a, b))


# ---------------------------------------------------------------- test_print.py


# Source: test_print.py, cuhello_usecase (test_cuhello)
@gk.kernel
def cuhello():
    i = global_id(0)
    print(i, 999)
    print(-42)


# Source: test_print.py, printstring_usecase (test_string)
@gk.kernel
def printstring():
    i = global_id(0)
    print(i, "hop!", 999)


@needs("print()")
def test_cuhello(backend, capfd):
    cuhello[2, 3]()
    gk.synchronize()
    lines = [line.strip() for line in capfd.readouterr().out.splitlines()]
    assert sorted(lines) == sorted(["-42"] * 6 + [f"{i} 999" for i in range(6)])


@needs("print()")
def test_printstring(backend, capfd):
    printstring[1, 3]()
    gk.synchronize()
    lines = [line.strip() for line in capfd.readouterr().out.splitlines()]
    assert sorted(lines) == [f"{i} hop! 999" for i in range(3)]


# ---------------------------------------------------------------- test_record_dtype.py

recordtype = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", (np.uint8, 5))], align=True)
plainrecord = np.dtype([("a", np.float64), ("b", np.int32)], align=True)


# Source: test_record_dtype.py, set_a (test_set_a)
@gk.kernel
def set_a(ary, i, v):
    ary[i].a = v


# Source: test_record_dtype.py, set_b (test_set_b)
@gk.kernel
def set_b(ary, i, v):
    ary[i].b = v


def _sample(dtype):
    ary = np.zeros(3, dtype=dtype)
    for i in range(ary.size):
        x = i + 1
        ary[i]["a"] = x / 2
        ary[i]["b"] = x
    return ary


@needs("record dtypes")
@pytest.mark.parametrize("kernel, field, value", [(set_a, "a", 3.1415), (set_b, "b", np.int32(123))])
def test_set_field_plain(backend, kernel, field, value):
    # The source's _test_set_equal, on a record of plain numeric fields only
    for i in range(3):
        got = _sample(plainrecord)
        expect = got.copy()
        expect[i][field] = value
        kernel[1, 1](got, np.int64(i), value)
        assert np.all(expect == got)


@needs("record dtypes with complex64 and sub-array fields")
def test_set_a_recordtype(backend):
    # The source's own record type: besides a and b, a complex64 field and a (uint8, 5) sub-array
    got = _sample(recordtype)
    expect = got.copy()
    expect[1]["a"] = 3.1415
    set_a[1, 1](got, np.int64(1), 3.1415)
    assert np.all(expect == got)
