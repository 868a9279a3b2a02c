"""``vload``/``vstore`` of 2-byte elements (float16, bfloat16, int16, uint16), 2, 4 or 8 at a time:
the bits moved as one vector, each element made a value as a plain read makes it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import gpukern as gk
from gpukern import global_id, vload, vstore

TYPES = [np.float16, ml_dtypes.bfloat16, np.int16, np.uint16]


def _data(dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    x[:4] = [np.inf, -np.inf, -0.0, 65504.0]
    return x.astype(dtype)


@gk.kernel
def k_scale(x, y, W: gk.Const[int]):
    i = global_id(0) * W
    if i < len(x):
        v = vload(x, i, W)
        if W == 2:
            vstore(y, i, (v[1] * 2, v[0] + 1))
        if W == 4:
            vstore(y, i, (v[3] * 2, v[2] + 1, v[1], v[0] - 3))
        if W == 8:
            vstore(y, i, (v[7] * 2, v[6] + 1, v[5], v[4] - 3, v[3], v[2], v[1] * 3, v[0]))


def _expected(x: np.ndarray, w: int) -> np.ndarray:
    """The kernel's result as NumPy computes it, element by element in the kernel's value type."""
    value = np.float32 if x.dtype == ml_dtypes.bfloat16 else x.dtype.type
    v = x.reshape(-1, w).astype(value)
    two, one, three = value(2), value(1), value(3)
    with np.errstate(all="ignore"):  # (int16 and uint16 wrap, as C's do after the integer promotion)
        if w == 2:
            cols = [v[:, 1] * two, v[:, 0] + one]
        elif w == 4:
            cols = [v[:, 3] * two, v[:, 2] + one, v[:, 1], v[:, 0] - three]
        else:
            cols = [v[:, 7] * two, v[:, 6] + one, v[:, 5], v[:, 4] - three, v[:, 3], v[:, 2], v[:, 1] * three, v[:, 0]]
        return np.stack(cols, axis=1).astype(x.dtype).reshape(-1)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("w", [2, 4, 8])
def test_vectors_of_2_byte_elements(backend, dtype, w):
    n = 64 * w
    x = _data(dtype, n, w)
    y = np.zeros(n, dtype)
    with np.errstate(over="ignore"):
        k_scale[2, 32](x, y, w)
    np.testing.assert_array_equal(y.view(np.uint16), _expected(x, w).view(np.uint16))


def test_the_c_moves_words_of_bits():
    src = k_scale.source(np.zeros(16, ml_dtypes.bfloat16), np.zeros(16, ml_dtypes.bfloat16), 8)
    assert "reinterpret_cast<const uint4*>" in src and "make_uint4(" in src and "<< 16" in src
    src = k_scale.source(np.zeros(16, np.float16), np.zeros(16, np.float16), 8, backend="opencl")
    assert "vload8(0, (const __global ushort*)" in src and "vstore8((ushort8)(" in src


@gk.kernel
def k_odd(x, y):
    v = vload(x, 3 + global_id(0) * 0, 8)
    y[0] = v[0]


def test_misaligned_16_bit_vectors_are_found(on_simulator):
    with pytest.raises(gk.MisalignedAccessError):
        k_odd[1, 1](np.zeros(16, np.float16), np.zeros(1, np.float16))


@pytest.mark.parametrize(
    "dtype, w, message",
    [(np.float32, 8, "16 bytes at most"), (np.int8, 2, "2-, 4- or 8-byte elements"), (np.float16, 3, "2, 4 or 8")],
)
def test_refusals(dtype, w, message):
    with pytest.raises(gk.KernelTypeError, match=message):
        k_scale.source(np.zeros(16, dtype), np.zeros(16, dtype), w)
