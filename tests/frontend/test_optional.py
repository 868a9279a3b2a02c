"""Python's optional value: a device function returning None on some paths and a number on others,
``x = None`` then a number, ``is None`` / ``is not None`` -- on every backend; the simulator reports
a None used as a number at its line (Python and Numba raise TypeError there)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of

import gpukern as gk
from gpukern import Array, float64, int32


@gk.func
def bucket(x: float64, n: int32):
    if x < 0:
        return None
    b = int32(x)
    if b >= n:
        return  # a bare return is None too
    return b


@gk.func
def positive(x: float64):
    if x > 0:
        return x * 2  # falling off the end returns None


@gk.kernel
def buckets(x: Array[float64], out: Array[int32], n: int32):
    i = gk.global_id(0)
    r = bucket(x[i], n)
    same = r  # a copy may be None too
    if same is None:
        out[i] = -1
    else:
        out[i] = same * 10
    if positive(x[i]) is not None:
        out[i] += 1000


@gk.kernel
def none_then_number(x: Array[float64], out: Array[float64]):
    i = gk.global_id(0)
    best = None
    for k in range(3):
        if x[i] * k > 1.5:
            best = x[i] * k
    out[i] = -1.0 if best is None else best


def test_optional_results(backend):
    x = np.array([1.5, -2.0, 3.7, 12.0, 0.0, 9.99])
    out = np.zeros(6, np.int32)
    buckets[1, 6](x, out, 10)
    want = [-1 if v < 0 or int(v) >= 10 else int(v) * 10 for v in x]
    np.testing.assert_array_equal(out, np.array(want) + 1000 * (x > 0))
    got = np.zeros(6)
    none_then_number[1, 6](x, got)
    np.testing.assert_array_equal(got, [max((v * k for k in range(3) if v * k > 1.5), default=-1.0) for v in x])


@gk.kernel
def uses_none(x: Array[float64], out: Array[int32], n: int32):
    i = gk.global_id(0)
    r = bucket(x[i], n)
    out[i] = r + 1  # None + 1


@gk.kernel
def uses_result(x: Array[float64], out: Array[int32], n: int32):
    i = gk.global_id(0)
    out[i] = bucket(x[i], n) * 2  # the call's None


def test_a_none_used_as_a_number_is_reported_at_its_line(on_simulator):
    x = np.array([1.0, 2.0, -1.0, 3.0])
    out = np.zeros(4, np.int32)
    with pytest.raises(gk.UninitializedReadError, match=r"thread \(2, 0, 0\) uses 'r' as a number where it is None"):
        uses_none[1, 4](x, out, 10)
    faults = gk.sanitize(uses_result[1, 4], x, out, 10)
    assert [type(f) for f in faults] == [gk.UninitializedReadError]
    assert faults[0].loc.lineno == line_of(uses_result, "# the call's None")
    assert "the result of bucket() as a number where it is None (bucket() returned None)" in str(faults[0])
    assert "Test it with 'is None' first" in str(faults[0])
    assert gk.sanitize(uses_none[1, 4], np.array([1.0, 2.0, 3.0, 4.0]), out, 10) == []  # never None: clean
    np.testing.assert_array_equal(out, [2, 3, 4, 5])


def test_the_c_returns_the_pair():
    src = buckets.source(Array[float64], Array[int32], int32)
    assert "bool v1;" in src and "return gk_tuple_int32_bool{0, false};" in src
    assert "if (!same_is_set)" in src


@gk.func
def tuple_or_none(x: float64):
    if x < 0:
        return None
    return x, x


@gk.kernel
def takes_tuple(x: Array[float64]):
    i = gk.global_id(0)
    t = tuple_or_none(x[i])
    x[i] = t[0]


@gk.kernel
def is_between_numbers(x: Array[float64]):
    i = gk.global_id(0)
    if x[i] is x[0]:
        x[i] = 0.0


@gk.kernel
def number_is_never_none(x: Array[float64], out: Array[int32]):
    i = gk.global_id(0)
    out[i] = 1 if x[i] is None else 2


def test_what_is_refused_and_what_is_known():
    with pytest.raises(gk.KernelTypeError, match="must return one number on the others, not a tuple"):
        takes_tuple.source(Array[float64])
    with pytest.raises(gk.KernelSyntaxError, match="'is' compares with None only"):
        is_between_numbers.source(Array[float64])
    assert "out[i] = 2;" in number_is_never_none.source(Array[float64], Array[int32])
