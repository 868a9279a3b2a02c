"""The simulator's race checks and syncwarp(): it orders memory among the lanes it syncs (CUDA's
__syncwarp is a memory barrier among the participating threads), directly or through other lanes,
and nothing else -- races across warps, with lanes outside its mask, or before it are still reported.
Also: reads made before a barrier are ordered by it, whenever they are examined."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, int32, shared, thread_idx

FULL = 0xFFFFFFFF


@gk.kernel
def neighbours(vals: Array[int32], out: Array[int32], step: int32):
    """Each lane reads the element of the lane ``step`` further on, written before a syncwarp()."""
    s = shared(int32, 64)
    t = thread_idx.x
    s[t] = vals[t]
    gk.syncwarp()
    out[t] = s[(t // 32) * 32 + (t + step) % 32] if step < 32 else s[(t + step) % 64]


def test_syncwarp_orders_a_warps_shared_exchange(on_simulator):
    vals = np.arange(64, dtype=np.int32) * 3
    out = np.zeros(64, np.int32)
    neighbours[1, 64](vals, out, 5)
    lanes = np.arange(64)
    np.testing.assert_array_equal(out, vals[(lanes // 32) * 32 + (lanes + 5) % 32])


def test_syncwarp_does_not_order_other_warps(on_simulator):
    """The same exchange across the two warps of the block: a race, syncwarp() or not."""
    with pytest.raises(gk.DataRaceError, match="shared array 's'.*put a barrier\\(\\) between") as e:
        neighbours[1, 64](np.arange(64, dtype=np.int32), np.zeros(64, np.int32), 32)
    assert {t[0] // 32 for _, t in e.value.threads} == {0, 1}  # one thread of each warp


@gk.kernel
def no_sync(vals: Array[int32], out: Array[int32]):
    s = shared(int32, 32)
    t = thread_idx.x
    s[t] = vals[t]
    out[t] = s[(t + 1) % 32]


def test_without_syncwarp_a_race(on_simulator):
    with pytest.raises(gk.DataRaceError, match="or a syncwarp\\(\\) whose mask has both lanes|put a barrier"):
        no_sync[1, 32](np.arange(32, dtype=np.int32), np.zeros(32, np.int32))


@gk.kernel
def half_mask(vals: Array[int32], out: Array[int32], src: int32):
    """Lanes 0..15 sync among themselves only; lane 0 reads lane src's element."""
    s = shared(int32, 32)
    t = thread_idx.x
    s[t] = vals[t]
    if t < 16:
        gk.syncwarp(0xFFFF)
    if t == 0:
        out[0] = s[src]


def test_a_lane_outside_the_mask_is_not_ordered(on_simulator):
    vals = np.arange(32, dtype=np.int32) + 100
    out = np.zeros(1, np.int32)
    half_mask[1, 32](vals, out, 9)
    assert out[0] == 109
    with pytest.raises(
        gk.DataRaceError, match="read by block \\(0, 0, 0\\), thread \\(0, 0, 0\\).*thread \\(20, 0, 0\\)"
    ):
        half_mask[1, 32](vals, out, 20)


@gk.kernel
def relay(out: Array[int32], first: int32):
    """Lane 1 writes; lanes 0 and 1 sync (if ``first``), then lanes 0 and 2: lane 2 reads it, ordered
    through lane 0."""
    s = shared(int32, 4)
    t = thread_idx.x
    if t == 1:
        s[0] = 7
    if t < 2 and first != 0:
        gk.syncwarp(0x3)
    if t == 0 or t == 2:
        gk.syncwarp(0x5)
    if t == 2:
        out[0] = s[0]


def test_ordered_through_another_lane(on_simulator):
    out = np.zeros(1, np.int32)
    relay[1, 32](out, 1)
    assert out[0] == 7
    with pytest.raises(gk.DataRaceError, match="thread \\(2, 0, 0\\).*thread \\(1, 0, 0\\) wrote it"):
        relay[1, 32](out, 0)


@gk.kernel
def readers_then_writer(vals: Array[int32], out: Array[int32], sync: int32):
    """Every lane reads s[0]; then (after a syncwarp, if ``sync``) lane 0 overwrites it."""
    s = shared(int32, 32)
    t = thread_idx.x
    s[t] = vals[t]
    gk.syncwarp()
    out[t] = s[0]
    if sync != 0:
        gk.syncwarp()
    if t == 0:
        s[0] = -1


def test_many_readers_then_a_writer(on_simulator):
    vals = np.arange(32, dtype=np.int32) + 5
    out = np.zeros(32, np.int32)
    readers_then_writer[1, 32](vals, out, 1)
    np.testing.assert_array_equal(out, np.full(32, 5))
    with pytest.raises(gk.DataRaceError, match="written by .*thread \\(0, 0, 0\\).* read it"):
        readers_then_writer[1, 32](vals, out, 0)


@gk.kernel
def publish(a: Array[int32], out: Array[int32]):
    """Global memory too: lane 0 of each warp publishes, the warp reads after syncwarp()."""
    i = gk.global_id(0)
    if i % 32 == 0:
        a[i // 32] = i + 1
    gk.syncwarp()
    out[i] = a[i // 32]


def test_syncwarp_orders_global_memory(on_simulator):
    a, out = np.zeros(4, np.int32), np.zeros(128, np.int32)
    publish[2, 64](a, out)
    np.testing.assert_array_equal(out, np.repeat(np.arange(4) * 32 + 1, 32))


def test_sanitize_under_syncwarp():
    """gk.sanitize collects the same race (across warps) and nothing for the ordered exchange."""
    assert gk.sanitize(neighbours[1, 64], np.arange(64, dtype=np.int32), np.zeros(64, np.int32), 3) == []
    faults = gk.sanitize(neighbours[1, 64], np.arange(64, dtype=np.int32), np.zeros(64, np.int32), 32)
    assert [type(f) for f in faults] == [gk.DataRaceError]


# ---------------------------------------------------------------- reads before a barrier
@gk.kernel
def rotate(g: Array[int32]):
    """Each thread reads its neighbour's element, waits at the barrier, then writes its own."""
    t = gk.global_id(0)
    x = g[(t + 1) % g.shape[0]]
    gk.barrier()
    g[t] = x


def test_reads_before_a_barrier_are_ordered_by_it(on_simulator):
    """The reads of a global array are examined only when a write follows, but in the epoch they
    were made in (filed at the barrier), so the barrier orders them before the writes."""
    g = np.arange(64, dtype=np.int32)
    rotate[1, 64](g)
    np.testing.assert_array_equal(g, np.roll(np.arange(64), -1))
    with pytest.raises(gk.DataRaceError, match="threads of different blocks are ordered only by a grid_sync"):
        rotate[2, 32](np.arange(64, dtype=np.int32))
