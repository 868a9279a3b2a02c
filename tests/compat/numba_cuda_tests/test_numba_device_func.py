"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_device_func.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation): the device-function cases as written, only the import lines changed
(``numba.jit`` is ``gpukern.numba.jit``; ``cp`` the stand-in of device arrays).  The cases that link CUDA
C sources (``declare_device``, ``CUSource``) or inspect LLVM/PTX are left out: docs/numba.md lists
``declare_device`` as not supported."""

from types import ModuleType

import numpy as np

import cupy_standin as cp
from gpukern.numba import cuda, jit


def test_use_add2f(backend):
    @cuda.jit("float32(float32, float32)", device=True)
    def add2f(a, b):
        return a + b

    def use_add2f(ary):
        i = cuda.grid(1)
        ary[i] = add2f(ary[i], ary[i])

    compiled = cuda.jit("void(float32[:])")(use_add2f)

    nelem = 10
    ary = np.arange(nelem, dtype=np.float32)
    exp = ary + ary
    compiled[1, nelem](ary)
    assert np.all(ary == exp), (ary, exp)


def test_indirect_add2f(backend):
    @cuda.jit("float32(float32, float32)", device=True)
    def add2f(a, b):
        return a + b

    @cuda.jit("float32(float32, float32)", device=True)
    def indirect(a, b):
        return add2f(a, b)

    def indirect_add2f(ary):
        i = cuda.grid(1)
        ary[i] = indirect(ary[i], ary[i])

    compiled = cuda.jit("void(float32[:])")(indirect_add2f)

    nelem = 10
    ary = np.arange(nelem, dtype=np.float32)
    exp = ary + ary
    compiled[1, nelem](ary)
    assert np.all(ary == exp), (ary, exp)


def _check_cpu_dispatcher(add):
    @cuda.jit
    def add_kernel(ary):
        i = cuda.grid(1)
        ary[i] = add(ary[i], 1)

    ary = np.arange(10)
    expect = ary + 1
    add_kernel[1, ary.size](ary)
    np.testing.assert_equal(expect, ary)


def test_cpu_dispatcher(backend):
    @jit
    def add(a, b):
        return a + b

    _check_cpu_dispatcher(add)


def test_cpu_dispatcher_other_module(backend):
    @jit
    def add(a, b):
        return a + b

    mymod = ModuleType(name="mymod")
    mymod.add = add
    del add

    @cuda.jit
    def add_kernel(ary):
        i = cuda.grid(1)
        ary[i] = mymod.add(ary[i], 1)

    ary = np.arange(10)
    expect = ary + 1
    add_kernel[1, ary.size](ary)
    np.testing.assert_equal(expect, ary)


def test_device_casting(backend):
    @cuda.jit("int32(int32, int32, int32, int32)", device=True)
    def rgba(r, g, b, a):
        return (
            ((r & 0xFF) << 16)
            | ((g & 0xFF) << 8)
            | ((b & 0xFF) << 0)
            | ((a & 0xFF) << 24)
        )

    @cuda.jit
    def rgba_caller(x, channels):
        x[0] = rgba(channels[0], channels[1], channels[2], channels[3])

    x = cp.asarray([1], dtype=np.int32)
    channels = cp.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)

    rgba_caller[1, 1](x, channels)

    assert 0x04010203 == x.get()[0]


def test_kernel_called_as_device_function(backend):
    # the shape of the source's test_declared_in_called_function, without the linked CUDA C:
    # a function under plain @cuda.jit called from a kernel is a device function in Numba
    @cuda.jit
    def device_func(x):
        return x * 2

    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = device_func(x[i]) + device_func(x[i] + i)

    x = np.arange(10, dtype=np.int32)
    r = np.empty_like(x)

    kernel[1, 32](r, x)

    np.testing.assert_equal(r, x * 4 + np.arange(10) * 2)
