"""The simulator's memory path: atomics in race tracking, vector accesses as one access each,
launches beyond memory, index values in messages, and atomics applied one lane at a time."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of

import gpukern as gk
from gpukern import (
    Array,
    atomic_add,
    atomic_max,
    barrier,
    float32,
    global_id,
    int32,
    int64,
    kernel,
    local,
    shared,
    thread_idx,
    uint32,
    vload,
    vstore,
)

pytestmark = pytest.mark.usefixtures("on_simulator")  # every test here runs on the simulator


# ---------------------------------------------------------------- atomics in race tracking
@kernel
def atomic_then_read(out: Array[float32]):
    s = shared(float32, 32)
    t = thread_idx.x
    s[t] = 0.0
    barrier()
    atomic_add(s, 0, 1.0)  # ATOMIC
    out[t] = s[0]  # READ


@kernel
def store_then_read(out: Array[float32]):
    s = shared(float32, 32)
    t = thread_idx.x
    s[t] = 0.0
    barrier()
    if t == 3:
        s[0] = 1.0  # STORE
    out[t] = s[0]  # READ


def test_atomic_then_plain_read_without_barrier_is_a_race_naming_both_lines():
    with pytest.raises(gk.DataRaceError) as info:
        atomic_then_read[1, 32](np.zeros(32, np.float32))
    e = info.value
    assert e.lineno == line_of(atomic_then_read, "# READ")
    msg = str(e)
    assert f"line {line_of(atomic_then_read, '# ATOMIC')}" in msg and f"line {e.lineno}" in msg
    assert "'s'[0]" in msg and "atomically" in msg and "block (0, 0, 0), thread (" in msg and "barrier()" in msg


def test_plain_store_then_read_is_the_same_race():
    with pytest.raises(gk.DataRaceError) as info:
        store_then_read[1, 32](np.zeros(32, np.float32))
    assert info.value.lineno == line_of(store_then_read, "# READ")
    assert f"line {line_of(store_then_read, '# STORE')}" in str(info.value)


@kernel
def write_then_atomic(out: Array[float32]):
    s = shared(float32, 32)
    t = thread_idx.x
    s[t] = 0.0  # WRITE
    atomic_add(s, 0, 1.0)  # ATOMIC
    barrier()
    out[t] = s[t]


@kernel
def read_then_atomic(out: Array[float32]):
    s = shared(float32, 32)
    t = thread_idx.x
    s[t] = 1.0
    barrier()
    x = s[0]  # READ
    atomic_add(s, 0, x)  # ATOMIC
    barrier()
    out[t] = s[t]


@kernel
def atomic_then_write(out: Array[float32]):
    s = shared(float32, 32)
    t = thread_idx.x
    s[t] = 0.0
    barrier()
    atomic_add(s, 5, 1.0)  # ATOMIC
    s[t] = 2.0  # WRITE
    barrier()
    out[t] = s[t]


@pytest.mark.parametrize(
    ("k", "now", "before", "words"),
    [
        (write_then_atomic, "# ATOMIC", "# WRITE", "wrote it"),
        (read_then_atomic, "# ATOMIC", "# READ", "read it"),
        (atomic_then_write, "# WRITE", "# ATOMIC", "updated it atomically"),
    ],
)
def test_atomic_and_plain_access_of_one_element_race(k, now, before, words):
    with pytest.raises(gk.DataRaceError) as info:
        k[1, 32](np.zeros(32, np.float32))
    e = info.value
    assert e.lineno == line_of(k, now)
    assert words in str(e) and f"line {line_of(k, before)}" in str(e)


@kernel
def atomics_only(out: Array[float32], counts: Array[int32]):
    s = shared(float32, 4)
    c = shared(int32, 32)
    t = thread_idx.x
    if t < 4:
        s[t] = 0.0
    c[t] = 0
    barrier()
    atomic_add(s, 0, 1.0)  # every thread, one element: atomics never race with atomics
    atomic_add(s, t % 4, 2.0)
    atomic_add(c, t, 1)  # then the thread reads its own element: no other thread touched it
    counts[t] = c[t] + atomic_add(c, t, 1)
    barrier()
    out[t] = s[t % 4]


def test_atomics_alone_are_not_races():
    out, counts = np.zeros(32, np.float32), np.zeros(32, np.int32)
    atomics_only[1, 32](out, counts)
    np.testing.assert_array_equal(out, np.tile([32.0 + 16.0, 16.0, 16.0, 16.0], 8))
    np.testing.assert_array_equal(counts, np.full(32, 2))


# ---------------------------------------------------------------- vectors: one access each, still checked
@kernel
def vector_pairs_collide(out: Array[float32]):
    s = shared(float32, 64)
    t = thread_idx.x
    vstore(s, 4 * (t // 2), (1.0, 2.0, 3.0, 4.0))  # VSTORE: threads 2j and 2j+1 write one float4
    barrier()
    out[t] = s[t]


@kernel
def scalar_write_vector_read(out: Array[float32]):
    s = shared(float32, 64)
    t = thread_idx.x
    s[t] = 1.0
    v = vload(s, 4 * (t % 8), 4)  # VLOAD: reads elements other threads just wrote
    out[t] = v[0]


def test_vector_accesses_join_race_tracking():
    with pytest.raises(gk.DataRaceError) as info:
        vector_pairs_collide[1, 32](np.zeros(32, np.float32))
    assert info.value.lineno == line_of(vector_pairs_collide, "# VSTORE") and "same statement" in str(info.value)
    with pytest.raises(gk.DataRaceError) as info:
        scalar_write_vector_read[1, 32](np.zeros(32, np.float32))
    assert info.value.lineno == line_of(scalar_write_vector_read, "# VLOAD")


@kernel
def shared_vector_at(out: Array[float32], i: int32):
    s = shared(float32, (2, 8))
    t = thread_idx.x
    s[t // 8, t % 8] = float32(t)
    barrier()
    v = vload(s, (1, i), 4)  # VLOAD
    out[t] = v[3]


def test_shared_vector_past_the_row_is_out_of_bounds_and_misaligned_is_caught():
    out = np.zeros(16, np.float32)
    shared_vector_at[1, 16](out, 4)
    np.testing.assert_array_equal(out, np.full(16, 15.0))
    with pytest.raises(gk.OutOfBoundsError) as info:
        shared_vector_at[1, 16](out, 8)  # elements (1, 8) .. (1, 11) of a (2, 8) array
    assert info.value.lineno == line_of(shared_vector_at, "# VLOAD")
    assert "vector access of 4 elements at index (1, 8)" in str(info.value) and "(dimension 1)" in str(info.value)
    with pytest.raises(gk.MisalignedAccessError, match="starts at element 10"):
        shared_vector_at[1, 16](out, 2)


@kernel
def store4(y: Array[float32], n: int32):
    i = global_id(0) * 4
    if i < n:
        vstore(y, i, (1.0, 2.0, 3.0, 4.0))  # VSTORE


def test_global_vector_store_past_the_end_is_out_of_bounds():
    y = np.zeros(10, np.float32)
    with pytest.raises(gk.OutOfBoundsError) as info:
        store4[1, 4](y, 12)  # the third thread's float4 would write elements 8..11
    e = info.value
    assert e.lineno == line_of(store4, "# VSTORE") and "at index (8,)" in str(e) and "thread (2, 0, 0)" in str(e)
    assert not y.any()  # nothing was written: the check comes before the data moves


# ---------------------------------------------------------------- memory beyond the machine
@kernel
def big_local(out: Array[float32]):
    r = local(float32, (1 << 20,))  # LOCAL
    r[0] = float32(global_id(0))
    out[global_id(0)] = r[0]


def test_local_arrays_beyond_memory_are_a_launch_error_saying_how_much():
    out = np.zeros(1 << 20, np.float32)
    with pytest.raises(gk.LaunchError) as info:
        big_local[4096, 256](out)  # 2^20 floats per thread times 2^20 threads: 4 TiB
    msg = str(info.value)
    assert "big_local" in msg and f"line {line_of(big_local, '# LOCAL')}" in msg and "'r'" in msg
    assert "5.0 TiB" in msg and "1,048,576 threads" in msg  # and a byte an element: was it written?
    with pytest.raises(gk.LaunchError) as info:
        big_local[4096, 256](out, check=False)
    assert "4.0 TiB" in str(info.value)


@kernel
def tiny(out: Array[float32]):
    out[0] = 1.0


def test_grids_beyond_memory_are_a_launch_error():
    with pytest.raises(gk.LaunchError) as info:
        tiny[(2**31 - 1, 2**31 - 1), 1024](np.zeros(1, np.float32), backend="sim")
    assert "tiny" in str(info.value) and "grid of" in str(info.value) and "needs" in str(info.value)


def test_tracking_copies_in_flight_goes_through_the_memory_guard():
    """The in-flight tracking of asynchronous copies keeps 8 bytes per element of each array a
    copy touches: allocated through the guard, beyond memory it is a LaunchError naming the array
    (an array of 2^40 elements, a view of one element, so that nothing else allocates)."""
    from types import SimpleNamespace

    from gpukern.sim.access import Memory
    from gpukern.sim.asynchronous import AsyncCopies

    huge = np.broadcast_to(np.zeros(1, np.float32), (1 << 40,))
    copies = AsyncCopies(SimpleNamespace(lanes=32))
    with pytest.raises(gk.LaunchError, match=r"asynchronous copies of array 'src' needs 8\.0 TiB"):
        copies.flight(Memory("src", "global", huge, huge.shape))


# ---------------------------------------------------------------- indices as the kernel computed them
@kernel
def put_u32(x: Array[float32], i: uint32):
    x[i] = 1.0


@kernel
def put_i64(x: Array[float32], i: int64):
    x[i] = 1.0


def test_out_of_bounds_indices_are_reported_with_their_true_value():
    x = np.zeros(4, np.float32)
    with pytest.raises(gk.OutOfBoundsError, match=r"index \(2147483649,\) is out of bounds"):
        put_u32[1, 1](x, 2147483649)
    with pytest.raises(gk.OutOfBoundsError, match=r"index \(4294967297,\) is out of bounds"):
        put_i64[1, 1](x, 2**32 + 1)
    with pytest.raises(gk.OutOfBoundsError, match=r"index \(-1,\) is out of bounds"):
        put_i64[1, 1](x, -1)


# ---------------------------------------------------------------- atomics: one lane at a time
@kernel
def add_all(x: Array[float32], olds: Array[float32], v: float32):
    olds[global_id(0)] = atomic_add(x, 0, v)


@kernel
def max_all(x: Array[int32], olds: Array[int32], vals: Array[int32]):
    i = global_id(0)
    olds[i] = atomic_max(x, 0, vals[i])


@pytest.mark.parametrize("threads", [10, 100])  # within the vectorised rounds, and past them
def test_float_atomics_round_each_update_as_a_gpu_does(threads):
    big = np.float32(2**24)  # 2^24 + 1 rounds back to 2^24 in float32: each +1 is lost
    x, olds = np.array([big], np.float32), np.zeros(threads, np.float32)
    add_all[1, threads](x, olds, 1.0)
    assert x[0] == big and (olds == big).all()
    x[0] = 0.5
    add_all[1, threads](x, olds, 1.0)  # exact sums: every lane sees the one before it
    np.testing.assert_array_equal(olds, 0.5 + np.arange(threads))
    assert x[0] == 0.5 + threads


def test_atomic_max_returns_the_running_maximum_in_lane_order():
    vals = np.random.default_rng(0).integers(-1000, 1000, 64).astype(np.int32)
    x, olds = np.array([-5000], np.int32), np.zeros(64, np.int32)
    max_all[1, 64](x, olds, vals)
    running = np.maximum.accumulate(np.concatenate([[-5000], vals]))
    np.testing.assert_array_equal(olds, running[:-1])
    assert x[0] == running[-1]
