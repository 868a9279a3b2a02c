"""Python the ported Numba-CUDA and CuPy kernels write that gpukern took on late: ``n.bit_count()``,
zero-length constant tables, tuple locals and tuple indices, shapes as tuples, 0-D and N-D arrays,
NumPy reductions of constant tables, and tables of records -- on every backend, against Python
and NumPy, with the refusals around them."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, int32, int64, kernel

# ---------------------------------------------------------------- n.bit_count()


@kernel
def bit_counts(out: Array[int64], a: gk.int32, b: gk.uint32, c: gk.int8, d: gk.int64):
    out[0] = a.bit_count()
    out[1] = b.bit_count()
    out[2] = c.bit_count()
    out[3] = d.bit_count()
    out[4] = (-5).bit_count()  # a literal: Python's int method
    w = 7  # a literal-only local
    out[5] = (w * a).bit_count()
    out[6] = int32(-(2**31)).bit_count()  # a typed constant


@pytest.mark.parametrize(
    "a, b, c, d", [(-7, 0xFFFFFFFF, -128, -(2**63)), (2**31 - 1, 0, 127, 2**40 + 3), (0, 5, -1, -1)]
)
def test_bit_count_is_pythons_on_every_backend(backend, a, b, c, d):
    out = np.full(7, -1, np.int64)
    bit_counts[1, 1](out, np.int32(a), np.uint32(b), np.int8(c), np.int64(d))
    wa = np.int32(np.int64(a) * 7)  # int32 arithmetic wraps
    want = [abs(a).bit_count(), b.bit_count(), abs(c).bit_count(), abs(d).bit_count(), 2, abs(int(wa)).bit_count(), 1]
    assert out.tolist() == want
    assert [np.int32(a).bit_count(), np.int8(c).bit_count(), np.int64(d).bit_count()] == [want[0], want[2], want[3]]


def test_bit_count_refusals(on_simulator):
    @kernel
    def of_float(out: Array[int64], x: gk.float32):
        out[0] = x.bit_count()

    with pytest.raises(gk.KernelTypeError, match=r"\.bit_count\(\) takes an integer, not float32") as e:
        of_float[1, 1](np.zeros(1, np.int64), np.float32(1))
    assert e.value.loc.lineno is not None

    @kernel
    def with_args(out: Array[int64], x: gk.int32):
        out[0] = x.bit_count(2)

    with pytest.raises(gk.KernelTypeError, match=r"bit_count\(\) takes 0 argument"):
        with_args[1, 1](np.zeros(1, np.int64), np.int32(1))


# ---------------------------------------------------------------- zero-length constant tables

EMPTY = np.array([])
EMPTY_ROWS = np.zeros((0, 3), np.int32)


@kernel
def empty_lengths(out: Array[int64]):
    out[0] = len(EMPTY)
    out[1] = EMPTY_ROWS.shape[0]
    out[2] = EMPTY_ROWS.shape[1]
    out[3] = EMPTY_ROWS.size


@kernel
def empty_read(out: Array[gk.float64], i: int32):
    out[0] = EMPTY[i]


def test_zero_length_tables_have_their_shape(backend):
    out = np.full(4, -1, np.int64)
    empty_lengths[1, 1](out)
    assert out.tolist() == [0, 0, 3, 0]


def test_reading_a_zero_length_table_is_out_of_bounds(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"constant array 'EMPTY' of shape \(0,\)"):
        empty_read[1, 1](np.zeros(1), np.int32(0))


def test_zero_length_table_constant_index_is_refused(on_simulator):
    @kernel
    def at_zero(out: Array[gk.float64]):
        out[0] = EMPTY[0]

    with pytest.raises(gk.KernelTypeError, match="index 0 is out of bounds for dimension 0 of size 0"):
        at_zero[1, 1](np.zeros(1))
