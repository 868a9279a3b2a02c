"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_casting.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation and Anaconda, Inc.): the device functions as written there, only the
import lines changed; the unittest methods became pytest functions run on every backend.  Left out:
the tests that read Numba's PTX of a device function (``compile_ptx(..., device=True)``)."""

import itertools

import numpy as np

from gpukern.numba import cuda
from gpukern.numba.core import types
from gpukern.numba.core.types import f2, i1, i2, i4, i8, u1, u2, u4, u8  # noqa: F401 - as the source imports them
from gpukern.numba.types import float16, float32  # noqa: F401


def native_cast(x):
    return float(x)


def to_int8(x):
    return np.int8(x)


def to_int16(x):
    return np.int16(x)


def to_int32(x):
    return np.int32(x)


def to_int64(x):
    return np.int64(x)


def to_uint8(x):
    return np.uint8(x)


def to_uint16(x):
    return np.uint16(x)


def to_uint32(x):
    return types.uint32(x)


def to_uint64(x):
    return types.uint64(x)


def to_float16(x):
    # When division and operators on float16 types are supported, this should
    # be changed to match the implementation in to_float32.
    return np.float16(x) * np.float16(0.5)


def to_float32(x):
    return np.float32(x) / np.float32(2)


def to_float64(x):
    return np.float64(x) / np.float64(2)


def to_complex64(x):
    return np.complex64(x)


def to_complex128(x):
    return np.complex128(x)


def cuda_int_literal_to_float16(x):
    # Note that we need to use `2` and not `np.float16(2)` to ensure that this
    # types as a literal int and not a const float16.
    return cuda.fp16.hmul(np.float16(x), 2)


def reference_int_literal_to_float16(x):
    return np.float16(x) * np.float16(2)


def cuda_float_literal_to_float16(x):
    # Note that `2.5` types as a const float64 and not a literal float, but
    # this case is provided in case that changes in future.
    return cuda.fp16.hmul(np.float16(x), 2.5)


def reference_float_literal_to_float16(x):
    return np.float16(x) * np.float16(2.5)


def _create_wrapped(pyfunc, intype, outtype):
    wrapped_func = cuda.jit(device=True)(pyfunc)

    @cuda.jit
    def cuda_wrapper_fn(arg, res):
        res[0] = wrapped_func(arg[0])

    def wrapper_fn(arg):
        argarray = np.zeros(1, dtype=intype)
        argarray[0] = arg
        resarray = np.zeros(1, dtype=outtype)
        cuda_wrapper_fn[1, 1](argarray, resarray)
        return resarray[0]

    return wrapper_fn


def test_float_to_int(backend):
    pyfuncs = (to_int8, to_int16, to_int32, to_int64)
    totys = (np.int8, np.int16, np.int32, np.int64)
    fromtys = (np.float16, np.float32, np.float64)
    for pyfunc, toty in zip(pyfuncs, totys):
        for fromty in fromtys:
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            assert cfunc(12.3) == pyfunc(12.3)
            assert cfunc(12.3) == int(12.3)
            assert cfunc(-12.3) == pyfunc(-12.3)
            assert cfunc(-12.3) == int(-12.3)


def test_float_to_uint(backend):
    pyfuncs = (to_int8, to_int16, to_int32, to_int64)
    totys = (np.uint8, np.uint16, np.uint32, np.uint64)
    fromtys = (np.float16, np.float32, np.float64)
    for pyfunc, toty in zip(pyfuncs, totys):
        for fromty in fromtys:
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            assert cfunc(12.3) == pyfunc(12.3)
            assert cfunc(12.3) == int(12.3)


def test_int_to_float(backend):
    pyfuncs = (to_float16, to_float32, to_float64)
    totys = (np.float16, np.float32, np.float64)
    for pyfunc, toty in zip(pyfuncs, totys):
        cfunc = _create_wrapped(pyfunc, np.int64, toty)
        assert cfunc(321) == pyfunc(321)


def test_literal_to_float16(backend):
    cudafuncs = (cuda_int_literal_to_float16, cuda_float_literal_to_float16)
    hostfuncs = (reference_int_literal_to_float16, reference_float_literal_to_float16)
    for cudafunc, hostfunc in zip(cudafuncs, hostfuncs):
        cfunc = _create_wrapped(cudafunc, np.float16, np.float16)
        assert cfunc(321) == hostfunc(321)


def test_float_to_float(backend):
    pyfuncs = (to_float16, to_float32, to_float64)
    tys = (np.float16, np.float32, np.float64)
    for (pyfunc, fromty), toty in itertools.product(zip(pyfuncs, tys), tys):
        cfunc = _create_wrapped(pyfunc, fromty, toty)
        np.testing.assert_allclose(cfunc(12.3), toty(12.3) / toty(2), rtol=0.0003)
        np.testing.assert_allclose(cfunc(-12.3), toty(-12.3) / toty(2), rtol=0.0003)


def test_float_to_complex(backend):
    pyfuncs = (to_complex64, to_complex128)
    totys = (np.complex64, np.complex128)
    fromtys = (np.float16, np.float32, np.float64)
    for pyfunc, toty in zip(pyfuncs, totys):
        for fromty in fromtys:
            cfunc = _create_wrapped(pyfunc, fromty, toty)
            np.testing.assert_allclose(cfunc(3.21), pyfunc(fromty(3.21)))
            np.testing.assert_allclose(cfunc(-3.21), pyfunc(fromty(-3.21)) + 0j)
