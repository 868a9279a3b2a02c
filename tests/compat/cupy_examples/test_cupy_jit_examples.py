"""Ported from cupy/cupy's JIT examples, ``examples/jit/elmentwise_op.py``, ``reduction_simple.py`` and
``reduction_atomic.py`` (MIT, Copyright Preferred Networks, Inc. and Preferred Infrastructure, Inc.).

Kernels as written there; ``from cupyx import jit`` became ``from gpukern.cupy import jit`` and the
arrays are NumPy's (``cupy`` names NumPy below: ``cupy.float32`` and ``cupy.uint32`` are NumPy's
types in CuPy too).  Each script became a pytest function, its printed comparison an assertion;
sizes are scaled down where marked ``# scaled``."""

import numpy
import numpy as cupy

from gpukern.cupy import jit


@jit.rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


@jit.rawkernel()
def reduction_simple(x, y, size):
    tid = jit.threadIdx.x
    ntid = jit.blockDim.x

    value = cupy.float32(0)
    for i in range(tid, size, ntid):
        value += x[i]

    smem = jit.shared_memory(cupy.float32, 1024)
    smem[tid] = value

    jit.syncthreads()

    if tid == cupy.uint32(0):
        value = cupy.float32(0)
        for i in range(ntid):
            value += smem[i]
        y[0] = value


@jit.rawkernel()
def reduction_atomic(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.blockDim.x * jit.gridDim.x

    value = cupy.float32(0)
    for i in range(tid, size, ntid):
        value += x[i]

    smem = jit.shared_memory(cupy.float32, 1024)
    smem[jit.threadIdx.x] = value

    jit.syncthreads()

    if jit.threadIdx.x == cupy.uint32(0):
        value = cupy.float32(0)
        for i in range(jit.blockDim.x):
            value += smem[i]
        jit.atomic_add(y, 0, value)


def normal(size):
    return numpy.random.default_rng(0).normal(size=size).astype(numpy.float32)


def test_elementwise_op(backend):
    size = cupy.uint32(2 ** 16)  # scaled
    x = normal((size,))
    y = cupy.empty((size,), dtype=cupy.float32)

    elementwise_copy((128,), (1024,), (x, y, size))
    assert (x == y).all()

    y = cupy.empty((size,), dtype=cupy.float32)
    elementwise_copy[128, 1024](x, y, size)
    assert (x == y).all()


def test_reduction_simple(backend):
    size = cupy.uint32(2 ** 16)  # scaled
    x = normal((size,))
    y = cupy.empty((1,), dtype=cupy.float32)

    reduction_simple[1, 1024](x, y, size)
    numpy.testing.assert_allclose(y[0], x.sum(dtype=numpy.float64), rtol=1e-4)


def test_reduction_atomic(backend):
    size = cupy.uint32(2 ** 16)  # scaled
    x = normal((size,))
    y = cupy.zeros((1,), dtype=cupy.float32)  # the example's cupy.empty: the atomic adds need a zero start

    reduction_atomic[8, 1024](x, y, size)  # scaled: 64 blocks
    numpy.testing.assert_allclose(y[0], x.sum(dtype=numpy.float64), rtol=1e-4)
