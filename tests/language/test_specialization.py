"""Warp specialization (gpukern.language.specialization): named barriers, elect_one, setmaxnreg, and
the ordering mbarriers and named barriers give between warps (gpukern.sim.ordering).  Results on the
simulator and on an sm_90 GPU against NumPy, each misuse the simulator reports at its line, the CUDA
source nvcc compiles for sm_90a, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from compilers import need_sm90, needs_nvcc
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, Const, float32, int32
from gpukern.backends.cuda_compile import nvcc_compile


@gk.kernel
def ws_sums(a: Array[float32, 2], out: Array[float32], STAGES: Const[int], EARLY: Const[bool], SYNC: Const[bool]):
    """Column sums of a (rows a multiple of 8, 128 columns) by a warp-specialized block of three
    warpgroups: warpgroup 0 gives registers up and one elected thread fills a ring of STAGES boxes of
    8 x 128 with TMA; warpgroups 1 and 2 take registers, each thread sums 4 rows of one column of every
    box and arrives on the stage's empty barrier (EARLY: before reading it, a bug), then the two halves
    combine through shared memory behind a named barrier of the 256 consumers (SYNC)."""
    gk.launch_bounds(384, 1)
    tiles = gk.shared(float32, (STAGES, 8, 128))
    part = gk.shared(float32, 256)
    full = gk.shared(gk.mbarrier, STAGES)
    empty = gk.shared(gk.mbarrier, STAGES)
    amap = gk.tensor_map(a, (8, 128))
    t = gk.thread_idx.x
    n = a.shape[0] // 8
    if t == 0:
        for s in range(STAGES):
            gk.mbarrier_init(full[s], 1)
            gk.mbarrier_init(empty[s], 256)
        gk.fence_mbarrier_init()
    gk.barrier()
    if t // 128 == 0:  # the producer warpgroup
        gk.setmaxnreg_dec(40)
        if t // 32 == 0:
            if gk.elect_one():
                for k in range(n):
                    s = k % STAGES
                    if k >= STAGES:
                        gk.mbarrier_wait(empty[s], (k // STAGES - 1) % 2)
                    gk.mbarrier_arrive_expect_tx(full[s], gk.box_bytes(amap))
                    gk.tma_load(tiles[s, 0, 0], amap, (8 * k, 0), full[s])  # refill
    else:  # the consumers
        gk.setmaxnreg_inc(232)
        c = t - 128
        col = c % 128
        half = c // 128
        acc = float32(0)
        for k in range(n):
            s = k % STAGES
            gk.mbarrier_wait(full[s], (k // STAGES) % 2)
            if EARLY:
                gk.mbarrier_arrive(empty[s])
            for r in range(4):
                acc += tiles[s, half * 4 + r, col]
            if not EARLY:
                gk.mbarrier_arrive(empty[s])
        part[c] = acc
        if SYNC:
            gk.named_barrier(1, 256)
        if half == 0:
            out[col] = part[col] + part[col + 128]  # combine


@pytest.mark.parametrize("stages, rows", [(2, 48), (3, 64)])
def test_a_producer_warpgroup_and_two_consumer_warpgroups(backend, stages, rows):
    need_sm90(backend, "named barriers, elect or TMA")
    a = np.random.default_rng(rows).integers(-50, 50, (rows, 128)).astype(np.float32)
    out = gk.to_device(np.zeros(128, np.float32))
    ws_sums[1, 384](gk.to_device(a), out, stages, False, True)
    np.testing.assert_array_equal(out.get(), a.sum(axis=0))
    if backend == "sim":
        assert gk.sanitize(ws_sums[1, 384], a, np.zeros(128, np.float32), stages, False, True) == []


def test_a_stage_released_before_it_is_read_is_a_race_with_its_refill():
    """The consumers arrive on the empty barrier before reading the stage: the producer, which waited
    for that arrival, may refill the stage before they read it."""
    a = np.ones((48, 128), np.float32)
    faults = gk.sanitize(ws_sums[1, 384], a, np.zeros(128, np.float32), 2, True, True)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(ws_sums, "# refill")
    assert "'tiles'" in str(faults[0]) and "read it" in str(faults[0])


@gk.kernel
def ring_sums(a: Array[float32, 2], out: Array[float32], EARLY: Const[bool]):
    """Column sums of a (rows a multiple of 8, 128 columns) by one warpgroup that reads a ring of two
    TMA stages; thread 0, one of the readers, refills a stage once every thread has arrived on its
    empty barrier (attention's refill, without a producer warp).  EARLY: arrive before reading."""
    tiles = gk.shared(float32, (2, 8, 128))
    full = gk.shared(gk.mbarrier, 2)
    empty = gk.shared(gk.mbarrier, 2)
    amap = gk.tensor_map(a, (8, 128))
    t = gk.thread_idx.x
    n = a.shape[0] // 8
    if t == 0:
        for s in range(2):
            gk.mbarrier_init(full[s], 1)
            gk.mbarrier_init(empty[s], 128)
        gk.fence_mbarrier_init()
    gk.barrier()
    acc = float32(0)
    for k in range(n):
        if t == 0:
            for j in range(0 if k == 0 else k + 1, min(k + 2, n)):
                if j >= 2:
                    gk.mbarrier_wait(empty[j % 2], (j // 2 - 1) % 2)
                gk.mbarrier_arrive_expect_tx(full[j % 2], gk.box_bytes(amap))
                gk.tma_load(tiles[j % 2, 0, 0], amap, (8 * j, 0), full[j % 2])  # refill by a reader
        gk.mbarrier_wait(full[k % 2], (k // 2) % 2)
        if EARLY:
            gk.mbarrier_arrive(empty[k % 2])
        for r in range(8):
            acc += tiles[k % 2, r, t]
        if not EARLY:
            gk.mbarrier_arrive(empty[k % 2])
    out[t] = acc


def test_a_reader_refills_once_its_warp_mates_have_arrived():
    """Thread 0 refills a stage that lanes 1-31 of its own warp read: their arrivals, which it waited
    for, order their reads before the copy (the simulator keeps what a thread knows of its own warp
    apart from its own clock); arriving before reading stays a race."""
    a = np.random.default_rng(5).integers(-50, 50, (48, 128)).astype(np.float32)
    out = np.zeros(128, np.float32)
    assert gk.sanitize(ring_sums[1, 128], a, out, False) == []
    np.testing.assert_array_equal(out, a.sum(axis=0))
    faults = gk.sanitize(ring_sums[1, 128], a, out, True)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(ring_sums, "# refill by a reader")


def test_shared_memory_between_warpgroups_needs_the_named_barrier():
    a = np.ones((16, 128), np.float32)
    faults = gk.sanitize(ws_sums[1, 384], a, np.zeros(128, np.float32), 2, False, False)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(ws_sums, "# combine")


def test_the_cuda_source_spells_the_ptx():
    src = ws_sums.source(Array[float32, 2], Array[float32], 2, False, True)
    for text in ("bar.sync %0, %1;", "elect.sync _|p", "setmaxnreg.dec.sync.aligned.u32 40;",
                 "setmaxnreg.inc.sync.aligned.u32 232;", "gk_named_sync(1u, 256u);"):  # fmt: skip
        assert text in src, text


@needs_nvcc
def test_nvcc_compiles_it_for_sm_90a():
    nvcc_compile(ws_sums.source(Array[float32, 2], Array[float32], 2, False, True, line_directives=True), "sm_90a")


# ---------------------------------------------------------------- named barriers
@gk.kernel
def handoff(out: Array[int32], COUNT: Const[int], WARPS: Const[int]):
    """Warp 0 writes, arrives at barrier 2 without waiting; warps 1.. wait there and read (COUNT
    threads expected of the WARPS warps that come)."""
    buf = gk.shared(int32, 32)
    t = gk.thread_idx.x
    if t < 32:
        buf[t] = t * 3
        gk.named_barrier_arrive(2, COUNT)
    elif t < 32 * WARPS:
        gk.named_barrier(2, COUNT)  # wait
        out[t - 32] = buf[t % 32]


def test_a_producer_arrives_and_consumers_wait(backend):
    need_sm90(backend, "named barriers, elect or TMA")
    out = gk.to_device(np.zeros(64, np.int32))
    handoff[1, 96](out, 96, 3)
    np.testing.assert_array_equal(out.get(), np.tile(np.arange(32) * 3, 2))
    if backend == "sim":
        assert gk.sanitize(handoff[1, 96], np.zeros(64, np.int32), 96, 3) == []


def test_a_count_no_threads_reach_is_a_deadlock():
    faults = gk.sanitize(handoff[1, 96], np.zeros(64, np.int32), 128, 3)
    assert [type(f) for f in faults] == [gk.BarrierDivergenceError]
    assert faults[0].loc.lineno == line_of(handoff, "# wait")
    assert "96 of its 128 threads have arrived" in str(faults[0]) and "would hang" in str(faults[0])


@gk.kernel
def bystander(out: Array[int32], READ: Const[bool]):
    """Warp 0 writes, arrives at barrier 2; warp 1 waits there (a count of 64) and reads; warp 2 takes
    no part and, with READ, reads too."""
    buf = gk.shared(int32, 32)
    t = gk.thread_idx.x
    if t < 32:
        buf[t] = t * 3
        gk.named_barrier_arrive(2, 64)
    elif t < 64:
        gk.named_barrier(2, 64)
        out[t - 32] = buf[t % 32]
    elif READ:
        out[t - 32] = buf[t % 32]  # unordered


def test_a_warp_outside_the_barrier_reading_is_a_race():
    """The named barrier orders the two warps that meet at it, not a third."""
    assert gk.sanitize(bystander[1, 96], np.zeros(64, np.int32), False) == []
    faults = gk.sanitize(bystander[1, 96], np.zeros(64, np.int32), True)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(bystander, "# unordered")


@gk.kernel
def half_warp(out: Array[int32]):
    t = gk.thread_idx.x
    if t < 16:
        gk.named_barrier(1, 32)  # half a warp
    out[t] = t


def test_half_a_warp_at_a_named_barrier_is_reported():
    faults = gk.sanitize(half_warp[1, 32], np.zeros(32, np.int32))
    assert [type(f) for f in faults][:1] == [gk.BarrierDivergenceError]
    assert faults[0].loc.lineno == line_of(half_warp, "# half a warp")
    assert "of the same warp" in str(faults[0])


@gk.kernel
def elected(out: Array[int32]):
    t = gk.thread_idx.x
    if t % 3 == 1:
        if gk.elect_one():
            out[t // 32] = t


def test_elect_one_picks_the_lowest_thread_that_executes_it(backend):
    need_sm90(backend, "named barriers, elect or TMA")
    out = gk.to_device(np.full(4, -1, np.int32))
    elected[1, 128](out)
    np.testing.assert_array_equal(out.get(), [1, 34, 64, 97])


# ---------------------------------------------------------------- refusals
_HEADER = "import gpukern as gk\nfrom gpukern import Array, int32\n"

@pytest.mark.parametrize(
    "body, match",
    [
        ("gk.named_barrier(0, 64)", "a named barrier is 1 to 15"),
        ("gk.named_barrier(16, 64)", "a named barrier is 1 to 15"),
        ("gk.named_barrier(1, 48)", "a multiple of 32 threads from 32 to 1024, not 48"),
        ("gk.named_barrier(1, 1.5)", "thread count is an integer"),
        ("gk.setmaxnreg_inc(250)", "24 to 256 registers, a multiple of 8, not 250"),
        ("gk.setmaxnreg_dec(t)", "takes a compile-time register count"),
        ("x = gk.elect_one(1)", "takes"),
    ],
)
def test_bad_operands_are_refused_at_the_line(body, match):
    src = f"""{_HEADER}
@gk.kernel
def k(out: Array[int32]):
    t = gk.thread_idx.x
    {body}
    out[t] = 1
"""
    k = load_kernel(src)
    with pytest.raises(gk.KernelTypeError, match=match) as e:
        k.source(Array[int32])
    assert e.value.loc.lineno == src.splitlines().index(f"    {body}") + 1


def test_setmaxnreg_in_part_of_a_warpgroup_is_refused():
    src = f"""{_HEADER}
@gk.kernel
def k(out: Array[int32]):
    t = gk.thread_idx.x
    if t < 64:
        gk.setmaxnreg_dec(40)
    out[t] = 1
"""
    with pytest.raises(gk.KernelTypeError, match="warpgroup"):
        load_kernel(src).source(Array[int32])


def test_other_dialects_refuse():
    for dialect in ("opencl", "hip"):
        with pytest.raises(gk.CompileError, match=r"named barriers \(named_barrier, named_barrier_arrive\) cannot"):
            handoff.source(Array[int32], 96, 3, backend=dialect)
        with pytest.raises(gk.CompileError, match=r"elect_one\(\) cannot be compiled"):
            elected.source(Array[int32], backend=dialect)


@gk.kernel
def odd_block(out: Array[int32]):
    """48 threads: warp 1 has 16; both warps count as 32 at a named barrier of 64."""
    buf = gk.shared(int32, 48)
    t = gk.thread_idx.x
    buf[t] = t
    gk.named_barrier(1, 64)
    out[gk.block_idx.x * 48 + t] = buf[47 - t]


def test_a_partial_last_warp_counts_as_a_warp():
    out = np.zeros(2 * 48, np.int32)
    assert gk.sanitize(odd_block[2, 48], out) == []
    np.testing.assert_array_equal(out, np.tile(np.arange(47, -1, -1), 2))
