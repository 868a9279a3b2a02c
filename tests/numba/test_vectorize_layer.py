"""gpukern.numba.vectorize: ``numba.vectorize(target="cuda")`` / ``cuda.vectorize`` (the numba-cuda
port is ``tests/compat/numba_cuda_tests/test_numba_vectorize.py``): signature choice, broadcasting,
device arrays in and out, ``out=``, the CPU target, and each misuse a clear ``gk.GpukernError``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern.numba import cuda, float32, float64, int32, vectorize


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"], target="cuda")
def discriminant(a, b, c):
    return math.sqrt(b**2 - 4 * a * c)


@cuda.jit(float32(float32, float32), device=True)
def scaled(x, y):
    return x * y + 1


@vectorize([float32(float32, float32)], target="cuda")
def via_device_function(x, y):
    return scaled(x, y)


def test_signatures_broadcasting_and_device_arrays(backend):
    rng = np.random.default_rng(0)
    a, c = rng.random(300).astype(np.float32), rng.random(300).astype(np.float32)
    b = (rng.random(300) + 10).astype(np.float32)
    got = discriminant(a, b, c)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.sqrt(b.astype(np.float64) ** 2 - 4 * a * c), rtol=1e-6)
    # a float64 array picks the float64 signature; a Python number beside arrays adapts to them
    wide = discriminant(a.astype(np.float64), b, 0.5)
    assert wide.dtype == np.float64
    np.testing.assert_allclose(wide, np.sqrt(b.astype(np.float64) ** 2 - 2 * a.astype(np.float64)))
    # broadcasting: a row against a column; a device array in gives a device array back
    rows = via_device_function(np.arange(4, dtype=np.float32)[:, None], cuda.to_device(np.ones(3, np.float32) * 2))
    assert isinstance(rows, gk.DeviceArray) and rows.shape == (4, 3)
    np.testing.assert_array_equal(rows.copy_to_host(), np.arange(4, dtype=np.float32)[:, None] * 2 + 1 + 0 * np.ones(3))
    out = cuda.device_array((4, 3), np.float32)
    assert via_device_function(np.ones((4, 3), np.float32), 3.0, out=out) is out
    np.testing.assert_array_equal(out.copy_to_host(), np.full((4, 3), 4.0, np.float32))


def test_the_cpu_target_is_numpys_vectorize():
    f = vectorize(["float64(float64)"])(lambda x: x * 2 + 1)
    np.testing.assert_array_equal(f(np.arange(4.0)), np.arange(4.0) * 2 + 1)


@pytest.mark.parametrize(
    "make, call, message",
    [
        (lambda: vectorize(target="cuda")(lambda x: x), None, r"give its signatures"),
        (lambda: vectorize(["f8(f8)"], target="gpu")(lambda x: x), None, r"target 'cuda', 'cpu' or 'parallel'"),
        (lambda: vectorize(["f8(f8)", "f8(f8, f8)"], target="cuda")(lambda x: x), None, r"different numbers"),
        (lambda: vectorize(["f8(float32[:])"], target="cuda")(lambda x: x), None, r"scalar types"),
        (lambda: vectorize(["i4(i4, i4)"], target="cuda")(lambda a, b: a + b),
         lambda f: f(np.ones(3), np.ones(3)), r"no signature takes arguments of \(float64, float64\)"),
        (lambda: vectorize(["i4(i4, i4)"], target="cuda")(lambda a, b: a + b),
         lambda f: f(np.ones(3, np.int32), np.ones(4, np.int32)), r"do not broadcast"),
        (lambda: vectorize(["i4(i4, i4)"], target="cuda")(lambda a, b: a + b),
         lambda f: f(np.ones(3, np.int32)), r"takes 2 argument"),
        (lambda: discriminant, lambda f: f(*[np.ones(3, np.float32)] * 3, out=np.zeros(4, np.float32)),
         r"out is float32\[4\], the result float32\[3\]"),
    ],
)
def test_misuse_is_a_clear_error(make, call, message):
    with pytest.raises(gk.GpukernError, match=message):
        f = make()
        if call is not None:
            call(f)


def test_signature_objects():
    sig = float64(int32, float32)
    assert repr(sig) == "float64(int32, float32)" and sig.args == (int32, float32)
    assert float32(2.5) == np.float32(2.5)
    with pytest.raises(TypeError, match="converts one value"):
        float32(1, 2)


def test_reduce_compiles_once(backend):
    """``f.reduce`` keeps its reduction (and the kernels compiled for it) across calls."""
    add = vectorize(["int32(int32, int32)"], target="cuda")(_add)
    assert add.reduce(np.arange(10, dtype=np.int32)) == 45
    first = add._reduce
    assert add.reduce(np.arange(20, dtype=np.int32)) == 190 and add._reduce is first
    assert len(first._kernels) == 1


def _add(a, b):
    return a + b
