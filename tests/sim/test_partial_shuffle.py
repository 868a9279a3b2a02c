"""A variable set on some lanes only and then shuffled (``if lane == 0: v = x`` and
``shfl_sync(mask, v, 0)``, CuPy's own test_shfl): accepted, since each lane reads the source lane's
value only; the simulator checks that the source lane did set it."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk


@gk.kernel
def broadcast(a, b, src):
    lane = gk.thread_idx.x & 31
    if lane == 0:
        value = a
    value = gk.shfl_sync(0xFFFFFFFF, value, src)
    b[gk.thread_idx.x] = value


@gk.kernel
def read_before(a, b):
    lane = gk.thread_idx.x & 31
    if lane == 0:
        value = a
    b[gk.thread_idx.x] = value + 1  # not a shuffle: every lane reads its own, unset on most


def test_the_set_lane_broadcasts(backend):
    b = np.zeros(64, np.int64)
    broadcast[1, 64](np.int64(7), b, 0)
    assert (b == 7).all()


def test_reading_an_unset_lane_is_reported(on_simulator):
    with pytest.raises(gk.UninitializedReadError, match="reads 'value' from lane 3.*never assigned"):
        broadcast[1, 32](np.int64(7), np.zeros(32, np.int64), 3)


def test_other_reads_are_still_refused():
    with pytest.raises(gk.KernelTypeError, match="'value' may be used before it is assigned"):
        read_before.source(np.int64(1), np.zeros(32, np.int64))


def test_c_declares_it_zero():
    assert "long long value = 0;" in broadcast.source(np.int64(1), np.zeros(32, np.int64), 0)


@gk.kernel(unbound="check")
def by_cases(arr):
    i = gk.thread_idx.x
    if i % 4 == 0:
        v = 1
    elif i % 4 == 1:
        v = 2
    elif i % 4 == 2:
        v = 4
    elif i % 4 == 3:
        v = 8
    arr[i] = v  # every thread took one branch: the compiler cannot prove it, the simulator sees it


@gk.kernel(unbound="check")
def by_three_cases(arr):
    i = gk.thread_idx.x
    if i % 4 == 0:
        v = 1
    elif i % 4 == 1:
        v = 2
    elif i % 4 == 2:
        v = 4
    arr[i] = v


def test_unbound_check_runs_what_every_thread_assigns(backend):
    arr = np.zeros(32, np.int32)
    by_cases[1, 32](arr)
    np.testing.assert_array_equal(arr, np.tile([1, 2, 4, 8], 8))


def test_unbound_check_reports_the_thread_that_did_not(on_simulator):
    with pytest.raises(gk.UninitializedReadError, match=r"thread \(3, 0, 0\) reads 'v', which no path it took"):
        by_three_cases[1, 32](np.zeros(32, np.int32))


def test_unbound_error_is_the_default():
    with pytest.raises(gk.KernelTypeError, match="'v' may be used before it is assigned"):
        gk.kernel(by_cases.fn).source(np.zeros(32, np.int32))
