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
