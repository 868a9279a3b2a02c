"""Ported from rapidsai/cudf (Apache-2.0, Copyright (c) 2018-2020, NVIDIA CORPORATION): the Numba-CUDA
kernels of ``python/cudf/cudf/utils/cudautils.py`` and the ``@njit`` device functions of
``python/cudf/cudf/utils/utils.py`` they call (cuDF 0.14-0.16, 2020), as written, with ``numba``
imports changed to ``gpukern.numba``.  The host functions around them that need cuDF's columns are
left out; each test launches a kernel as its host function does (``forall``) and checks it
against NumPy.  Application code: cuDF's own kernels for masks, diffs, rounding, searches and
rolling-window sizes."""

from math import floor, isinf, isnan

import numpy as np
import pytest

import gpukern as gk

from gpukern.numba import cuda, njit

mask_dtype = np.dtype(np.int32)
mask_bitsize = mask_dtype.itemsize * 8


@njit
def mask_get(mask, pos):
    return (mask[pos // mask_bitsize] >> (pos % mask_bitsize)) & 1


@njit
def check_equals_float(a, b):
    return (
        a == b
        or (isnan(a) and isnan(b))
        or ((isinf(a) and a < 0) and (isinf(b) and b < 0))
        or ((isinf(a) and a > 0) and (isinf(b) and b > 0))
    )


@njit
def rint(x):
    """Round to the nearest integer.

    Returns
    -------
    The nearest integer, as a float.
    """
    y = floor(x)
    r = x - y

    if r > 0.5:
        y += 1.0
    if r == 0.5:
        r = y - 2.0 * floor(0.5 * y)
        if r == 1.0:
            y += 1.0
    return y


@njit
def check_equals_int(a, b):
    return a == b


@cuda.jit
def gpu_expand_mask_bits(bits, out):
    """Expand each bits in bitmask *bits* into an element in out.
    This is a flexible kernel that can be launch with any number of blocks
    and threads.
    """
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        if i < bits.size * mask_bitsize:
            out[i] = mask_get(bits, i)


@cuda.jit
def gpu_diff(in_col, out_col, out_mask, N):
    """Calculate the difference between values at positions i and i - N in an
    array and store the output in a new array.
    """
    i = cuda.grid(1)

    if N > 0:
        if i < in_col.size:
            out_col[i] = in_col[i] - in_col[i - N]
            out_mask[i] = True
        if i < N:
            out_mask[i] = False
    else:
        if i <= (in_col.size + N):
            out_col[i] = in_col[i] - in_col[i - N]
            out_mask[i] = True
        if i >= (in_col.size + N) and i < in_col.size:
            out_mask[i] = False


@cuda.jit
def gpu_round(in_col, out_col, decimal):
    i = cuda.grid(1)
    f = 10 ** decimal

    if i < in_col.size:
        ret = in_col[i] * f
        ret = rint(ret)
        tmp = ret / f
        out_col[i] = tmp


@cuda.jit
def gpu_mark_found_int(arr, val, out, not_found):
    i = cuda.grid(1)
    if i < arr.size:
        if check_equals_int(arr[i], val):
            out[i] = i
        else:
            out[i] = not_found


@cuda.jit
def gpu_mark_found_float(arr, val, out, not_found):
    i = cuda.grid(1)
    if i < arr.size:
        if check_equals_float(arr[i], val):
            out[i] = i
        else:
            out[i] = not_found


@cuda.jit
def gpu_mark_gt(arr, val, out, not_found):
    i = cuda.grid(1)
    if i < arr.size:
        if arr[i] > val:
            out[i] = i
        else:
            out[i] = not_found


@cuda.jit
def gpu_mark_lt(arr, val, out, not_found):
    i = cuda.grid(1)
    if i < arr.size:
        if arr[i] < val:
            out[i] = i
        else:
            out[i] = not_found


@cuda.jit
def gpu_window_sizes_from_offset(arr, window_sizes, offset):
    i = cuda.grid(1)
    j = i
    if i < arr.size:
        while j > -1:
            if (arr[i] - arr[j]) >= offset:
                break
            j -= 1
        window_sizes[i] = i - j


@cuda.jit
def gpu_grouped_window_sizes_from_offset(
    arr, window_sizes, group_starts, offset
):
    i = cuda.grid(1)
    j = i
    if i < arr.size:
        while j > (group_starts[i] - 1):
            if (arr[i] - arr[j]) >= offset:
                break
            j -= 1
        window_sizes[i] = i - j


RNG = np.random.default_rng(7)


def test_expand_mask_bits(backend):
    bits = RNG.integers(-2**31, 2**31, size=4, dtype=np.int64).astype(np.int32)
    out = np.zeros(100, np.bool_)
    gpu_expand_mask_bits.forall(min(1024, out.size))(bits, out)
    want = [(int(bits[i // 32]) >> (i % 32)) & 1 for i in range(100)]
    np.testing.assert_array_equal(out, np.array(want, bool))


def test_diff(backend):
    col = RNG.integers(0, 100, size=50).astype(np.float64)
    N = 3
    out = np.zeros_like(col)
    mask = np.zeros(col.size, np.bool_)
    gpu_diff.forall(col.size)(col, out, mask, N)  # i < N reads in_col[i - N]: Numba's negative index, from the end
    np.testing.assert_array_equal(out[N:], col[N:] - col[:-N])
    np.testing.assert_array_equal(mask, np.arange(col.size) >= N)


@pytest.mark.finds("with N < 0, `if i <= (in_col.size + N)` lets thread size + N read in_col[size]: one past "
                   "the end (its result is masked afterwards, but the read is out of bounds)",
                   error=gk.OutOfBoundsError, on=("sim",))
def test_diff_backwards(backend):
    col = RNG.integers(0, 100, size=50).astype(np.float64)
    N = -4
    out = np.zeros_like(col)
    mask = np.zeros(col.size, np.bool_)
    gpu_diff.forall(col.size)(col, out, mask, N)
    np.testing.assert_array_equal(out[:N], col[:N] - col[-N:])
    np.testing.assert_array_equal(mask[: col.size + N], True)
    np.testing.assert_array_equal(mask[col.size + N:], False)


def test_round(backend):
    col = RNG.normal(size=200) * 100
    for decimal in (0, 2):
        out = np.zeros_like(col)
        gpu_round.forall(col.size)(col, out, decimal)
        np.testing.assert_allclose(out, np.round(col, decimal), rtol=1e-12, atol=1e-12)


def test_mark_found(backend):
    arr = RNG.integers(0, 5, size=64)
    out = np.zeros_like(arr)
    gpu_mark_found_int.forall(arr.size)(arr, 3, out, arr.size)
    np.testing.assert_array_equal(out, np.where(arr == 3, np.arange(arr.size), arr.size))
    f = np.array([1.0, np.nan, -np.inf, np.inf, 2.0, np.nan])
    for val in (np.nan, -np.inf, 2.0):
        out = np.zeros(f.size, np.int64)
        gpu_mark_found_float.forall(f.size)(f, val, out, f.size)
        same = (f == val) | (np.isnan(f) & np.isnan(val))
        np.testing.assert_array_equal(out, np.where(same, np.arange(f.size), f.size))


def test_mark_gt_lt(backend):
    arr = RNG.normal(size=77)
    out = np.zeros(arr.size, np.int64)
    gpu_mark_gt.forall(arr.size)(arr, 0.5, out, arr.size)
    np.testing.assert_array_equal(out, np.where(arr > 0.5, np.arange(arr.size), arr.size))
    gpu_mark_lt.forall(arr.size)(arr, -0.5, out, arr.size)
    np.testing.assert_array_equal(out, np.where(arr < -0.5, np.arange(arr.size), arr.size))


def _window_sizes(arr, offset, starts):
    out = []
    for i in range(arr.size):
        j = i
        while j > starts[i] - 1 and arr[i] - arr[j] < offset:
            j -= 1
        out.append(i - j)
    return np.array(out)


def test_window_sizes_from_offset(backend):
    arr = np.cumsum(RNG.integers(1, 5, size=60)).astype(np.int64)
    sizes = cuda.device_array(shape=(arr.shape), dtype="int32")
    gpu_window_sizes_from_offset.forall(arr.size)(arr, sizes, 7)
    np.testing.assert_array_equal(sizes.copy_to_host(), _window_sizes(arr, 7, np.zeros(arr.size, int)))


def test_grouped_window_sizes_from_offset(backend):
    arr = np.cumsum(RNG.integers(1, 5, size=60)).astype(np.int64)
    starts = np.repeat([0, 20, 45], [20, 25, 15]).astype(np.int32)
    sizes = cuda.device_array(shape=(arr.shape), dtype="int32")
    gpu_grouped_window_sizes_from_offset.forall(arr.size)(arr, sizes, starts, 7)
    np.testing.assert_array_equal(sizes.copy_to_host(), _window_sizes(arr, 7, starts))
