"""The sanitizer corpus: buggy kernels the simulator must flag, and correct ones it must not.

Used by ``tests/sim/test_sanitizer_corpus.py`` (the simulator's side) and
``benchmarks/sanitizer_vs_sim.py`` (the same kernels under NVIDIA's compute-sanitizer).

Every buggy kernel marks the line its fault must be reported at with a comment (``# BUG``
unless the case names another marker); ``Buggy.line`` finds it, so no line number is written
down.  Each case builds its launch and arguments afresh (``build()``): small deterministic
data, tiny grids.  Arrays made with ``gk.empty`` live on the current backend, and a case that
needs an earlier launch (a producer filling a buffer) makes it in ``build()`` too, so the
launch returned is the one under test.  Float data holds small integers, so every sum is exact
in any order and outputs compare equal on every backend.

Fault classes are named, not imported: some of them are new (``UninitializedReadError``,
``IndexOverflowError``) and this module must import where they do not exist yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from kernel_source import line_of

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    barrier,
    block_dim,
    block_idx,
    float32,
    global_id,
    grid_dim,
    int32,
    int64,
    kernel,
    local,
    shared,
    superstep,
    thread_idx,
    uint32,
    unroll,
    vload,
    vstore,
)

# compute-sanitizer tools; NONE: no tool is meant to see this kind of bug
RACECHECK, MEMCHECK, INITCHECK, SYNCCHECK, NONE = "racecheck", "memcheck", "initcheck", "synccheck", "none"
TOOLS = (RACECHECK, MEMCHECK, INITCHECK, SYNCCHECK)

# bug categories
SHARED_RACE = "shared race"
SHARED_ATOMIC = "shared atomic vs plain access"
GLOBAL_RACE = "global race"
GLOBAL_ATOMIC = "global atomic vs plain access"
UNINIT_SHARED = "uninitialised shared read"
UNINIT_LOCAL = "uninitialised local read"
UNINIT_GLOBAL = "uninitialised global read"
OOB = "out of bounds"
DIVERGENCE = "divergent barrier"
OVERFLOW = "index overflow"
MISALIGNED = "misaligned vector access"
CATEGORIES = (
    SHARED_RACE,
    SHARED_ATOMIC,
    GLOBAL_RACE,
    GLOBAL_ATOMIC,
    UNINIT_SHARED,
    UNINIT_LOCAL,
    UNINIT_GLOBAL,
    OOB,
    DIVERGENCE,
    OVERFLOW,
    MISALIGNED,
)


class Setup(NamedTuple):
    """A launch ready to run: ``launch(*args)``; ``expected`` maps argument positions to the
    values those arguments must hold afterwards (correct kernels only)."""

    launch: Any
    args: tuple[Any, ...]
    expected: dict[int, np.ndarray] | None = None


@dataclass(frozen=True)
class Buggy:
    """A kernel with one bug: the fault class and line the simulator must report."""

    name: str
    category: str
    fault: type[gk.KernelFault]
    where: Any  # the kernel or @func holding the marked line
    build: Callable[[], Setup]
    tool: str  # the compute-sanitizer tool that should, in principle, find it (or NONE)
    static: bool = False  # rejected by gpukern's static checks before it runs
    marker: str = "# BUG"
    note: str = ""

    @property
    def line(self) -> int:
        return line_of(self.where, self.marker)


@dataclass(frozen=True)
class Correct:
    """A correct kernel: nothing may be reported, and its outputs must equal NumPy's."""

    name: str
    category: str
    build: Callable[[], Setup]


def ints(n: int, seed: int, lo: int = -4, hi: int = 5) -> np.ndarray:
    """``n`` small integers as float32: sums of them are exact in any order."""
    return np.random.default_rng(seed).integers(lo, hi, n).astype(np.float32)


def bins(n: int, seed: int, nbins: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, nbins, n).astype(np.int32)


def f32(n: Any) -> np.ndarray:
    return np.zeros(n, np.float32)


# ==================================================================== buggy kernels
# ---------------------------------------------------------------- shared-memory races


@kernel
def last_writer_wins(x: Array[float32], y: Array[float32]):
    """Every thread stores into one shared slot, meaning 'any one of them will do'."""
    s = shared(float32, 1)
    t = thread_idx.x
    s[0] = x[block_idx.x * block_dim.x + t]  # BUG: 64 threads write s[0] at once
    barrier()
    if t == 0:
        y[block_idx.x] = s[0]


@kernel
def rotate_no_barrier(x: Array[float32], y: Array[float32], B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    s[t] = x[i]
    y[i] = s[(t + 1) % B]  # BUG: no barrier between the neighbour's store and this read


@kernel
def reverse_barrier_misplaced(x: Array[float32], y: Array[float32], B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    barrier()  # meant to sit between the store and the read
    s[t] = x[i]
    y[i] = s[B - 1 - t]  # BUG: read with no barrier after the other thread's store


@kernel
def tree_sum_no_inner_barrier(x: Array[float32], out: Array[float32], B: Const[int]):
    buf = shared(float32, B)
    t = thread_idx.x
    buf[t] = x[block_idx.x * B + t]
    barrier()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # BUG: the previous halving step may not be finished
        s //= 2
    if t == 0:
        out[block_idx.x] = buf[0]


@kernel
def tiles_one_barrier(x: Array[float32], y: Array[float32], n_tiles: int32, B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    acc = 0.0
    for k in range(n_tiles):
        s[t] = x[k * B + t]  # BUG: overwrites the tile a neighbour may still be reading
        barrier()
        acc += s[(t + 1) % B]
    y[t] = acc


@kernel
def scan_in_place(x: Array[float32], y: Array[float32], B: Const[int]):
    """Hillis-Steele scan without double buffering."""
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    s[t] = x[i]
    barrier()
    d = 1
    while d < B:
        if t >= d:
            s[t] += s[t - d]  # BUG: thread t - d updates s[t - d] in this same step
        barrier()
        d *= 2
    y[i] = s[t]


# ---------------------------------------------------------------- shared atomics against plain accesses


@kernel
def shared_hist_read_early(v: Array[int32], hist: Array[int32], BINS: Const[int]):
    h = shared(int32, BINS)
    t = thread_idx.x
    if t < BINS:
        h[t] = 0
    barrier()
    atomic_add(h, v[block_idx.x * block_dim.x + t], 1)
    if t < BINS:
        hist[block_idx.x * BINS + t] = h[t]  # BUG: other threads' atomics may still be coming


@kernel
def shared_hist_zero_unordered(v: Array[int32], hist: Array[int32], BINS: Const[int]):
    h = shared(int32, BINS)
    t = thread_idx.x
    if t < BINS:
        h[t] = 0
    atomic_add(h, v[block_idx.x * block_dim.x + t], 1)  # BUG: not ordered after the zeroing stores
    barrier()
    if t < BINS:
        hist[block_idx.x * BINS + t] = h[t]


# ---------------------------------------------------------------- global-memory races


@kernel
def everyone_stores_a0(a: Array[float32]):
    a[0] = float32(thread_idx.x)  # BUG: 64 threads store one element


@kernel
def read_other_blocks_output(x: Array[float32], a: Array[float32], y: Array[float32]):
    i = global_id(0)
    a[i] = x[i]
    y[i] = a[(i + 32) % 128]  # BUG: written by another block, unordered within a launch


@kernel
def handoff_between_blocks(x: Array[float32], a: Array[float32], y: Array[float32]):
    t = thread_idx.x
    if block_idx.x == 0:
        a[t] = 2.0 * x[t]
    if block_idx.x == 1:
        y[t] = a[t] + 1.0  # BUG: nothing orders block 0's stores before block 1's reads


@kernel
def global_rotate_no_barrier(x: Array[float32], a: Array[float32], y: Array[float32], B: Const[int]):
    t = thread_idx.x
    base = block_idx.x * B
    a[base + t] = x[base + t]
    y[base + t] = a[base + (t + 1) % B]  # BUG: same block, but no barrier between store and read


@kernel
def barrier_across_blocks(x: Array[float32], a: Array[float32], y: Array[float32], n: int32, B: Const[int]):
    i = global_id(0)
    a[i] = x[i]
    barrier()
    y[i] = a[(i + B) % n]  # BUG: a barrier orders the threads of one block, not blocks


@kernel
def smooth_in_place(x: Array[float32], n: int32):
    i = global_id(0)
    if i < n - 1:
        x[i] = 0.5 * (x[i] + x[i + 1])  # BUG: thread i + 1 overwrites x[i + 1] meanwhile


# ---------------------------------------------------------------- global atomics against plain accesses


@kernel
def global_hist_read_early(v: Array[int32], hist: Array[int32], snapshot: Array[int32], BINS: Const[int]):
    i = global_id(0)
    atomic_add(hist, v[i], 1)
    if i < BINS:
        snapshot[i] = hist[i]  # BUG: other threads' atomics on hist[i] are not finished


@kernel
def count_with_reset(flags: Array[int32], count: Array[int32]):
    i = global_id(0)
    if i == 0:
        count[0] = 0
    if flags[i] != 0:
        atomic_add(count, 0, 1)  # BUG: thread 0's reset is not ordered before the other atomics


# ---------------------------------------------------------------- uninitialised reads


@kernel
def half_filled_shared(x: Array[float32], y: Array[float32]):
    s = shared(float32, 64)
    t = thread_idx.x
    if t < 32:
        s[t] = x[t]
    barrier()
    y[t] = s[63 - t]  # BUG: s[32:] was never written


@kernel
def shared_hist_not_zeroed(v: Array[int32], hist: Array[int32], BINS: Const[int]):
    h = shared(int32, BINS)
    t = thread_idx.x
    atomic_add(h, v[block_idx.x * block_dim.x + t], 1)  # BUG: shared memory is not zeroed for us
    barrier()
    if t < BINS:
        hist[block_idx.x * BINS + t] = h[t]


@kernel
def stencil_missing_right_halo(x: Array[float32], y: Array[float32], B: Const[int]):
    tile = shared(float32, B + 2)
    t = thread_idx.x
    i = block_idx.x * B + t
    tile[t + 1] = x[i]
    if t == 0:
        tile[0] = x[i - 1] if i > 0 else 0.0
    barrier()  # the right halo, tile[B + 1], was never loaded
    y[i] = tile[t] + tile[t + 1] + tile[t + 2]  # BUG: thread B - 1 reads tile[B + 1]


@kernel
def local_partly_filled(x: Array[float32], y: Array[float32], K: Const[int]):
    r = local(float32, 4)
    i = global_id(0)
    for k in range(K):
        r[k] = x[4 * i + k]
    acc = 0.0
    for k in range(4):
        acc += r[k]  # BUG: only K = 3 of the 4 entries were filled
    y[i] = acc


@kernel
def add_bias(x: Array[float32], bias: Array[float32], y: Array[float32]):
    i = global_id(0)
    y[i] = x[i] + bias[i]  # BUG: bias comes from gk.empty and nothing filled it


@kernel
def fill_first_half(x: Array[float32], tmp: Array[float32], n: int32):
    i = global_id(0)
    if i < n // 2:  # the producer's bug (meant: i < n); it shows in the consumer
        tmp[i] = 2.0 * x[i]


@kernel
def fill_all(x: Array[float32], tmp: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        tmp[i] = 2.0 * x[i]


@kernel
def consume_scratch(tmp: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i] = tmp[i] + 1.0  # READ: uninitialised where the producer left tmp unwritten


# ---------------------------------------------------------------- out of bounds


@kernel
def backward_diff(x: Array[float32], y: Array[float32]):
    i = global_id(0)
    y[i] = x[i] - x[i - 1]  # BUG: thread 0 reads x[-1]


@kernel
def scale_no_tail_guard(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    y[i] = 2.0 * x[i]  # BUG: no `if i < n`: the last block runs past the end


@kernel
def shift_into_tile(x: Array[float32], y: Array[float32], B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    s[t + 1] = x[i]  # BUG: off by one: thread B - 1 writes s[B]
    barrier()
    y[i] = s[t]


@kernel
def add_one_2d(x: Array[float32, 2], y: Array[float32, 2]):
    r = thread_idx.y
    c = thread_idx.x
    y[r, c] = x[r, c] + 1.0  # BUG: the block is 8 wide, the arrays 6


@kernel
def shift_right(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i + 1] = x[i]  # BUG: thread n - 1 writes y[n]


@kernel
def local_overrun(x: Array[float32], y: Array[float32], m: int32):
    r = local(float32, 4)
    i = global_id(0)
    for k in range(m):
        r[k] = x[i] + float32(k)  # BUG: m = 5 entries into a local array of 4
    y[i] = r[0] + r[3]


@kernel
def shared_backward_diff(x: Array[float32], y: Array[float32], B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    s[t] = x[i]
    barrier()
    y[i] = s[t] - s[t - 1]  # BUG: thread 0 reads s[-1]


@kernel
def copy_grid_stride_inclusive(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    stride = grid_dim.x * block_dim.x
    while i <= n:
        y[i] = x[i]  # BUG: `<=` lets one thread touch x[n]
        i += stride


# ---------------------------------------------------------------- divergent barriers


@kernel
def barrier_in_branch(x: Array[float32]):
    t = thread_idx.x
    if t < 16:
        barrier()  # BUG: half of each block never gets here
    x[global_id(0)] += 1.0


@kernel
def barrier_in_data_loop(x: Array[float32], y: Array[float32]):
    i = global_id(0)
    v = x[i]
    while v > 1.0:
        v *= 0.5
        barrier()  # BUG: each thread loops a data-dependent number of times
    y[i] = v


@kernel
def barrier_after_break(x: Array[float32], y: Array[float32], steps: int32):
    i = global_id(0)
    acc = 0.0
    for k in range(steps):
        if x[i] < float32(k):
            break
        acc += x[i]
        barrier()  # BUG: threads that broke out of the loop do not arrive
    y[i] = acc


@gk.func
def bump_after_sync(x, i):
    if thread_idx.x < 16:
        return
    barrier()  # BUG: threads 0-15 returned from this function and never arrive
    x[i] += 1.0


@kernel
def call_sync_helper(x: Array[float32]):
    bump_after_sync(x, global_id(0))


# ---------------------------------------------------------------- index overflow


@kernel
def window_gather(x: Array[float32], y: Array[float32], n: int32, row0: int32):
    """y[t] = x[row * n + t]: a window of a large logical matrix, indexed in int32."""
    t = thread_idx.x
    row = row0 + block_idx.x
    y[t] = x[row * n + t]  # BUG: row * n passes 2**31 and wraps


@kernel
def record_gather(x: Array[float32], y: Array[float32], base: uint32):
    """y[t] = the first field of record base + t, 16 fields a record, counted in uint32."""
    t = thread_idx.x
    y[t] = x[(base + uint32(t)) * 16]  # BUG: the record offset wraps at 2**32


# ---------------------------------------------------------------- misaligned vector accesses


@kernel
def vec_copy_offset(x: Array[float32], y: Array[float32]):
    t = thread_idx.x
    a, b, c, d = vload(x, 4 * t + 1, 4)  # BUG: float4 load at an odd element
    vstore(y, 4 * t, (a, b, c, d))


@kernel
def vec_store_shared_offset(x: Array[float32], y: Array[float32]):
    s = shared(float32, 4 * 32 + 4)
    t = thread_idx.x
    v = x[t]
    vstore(s, 4 * t + 2, (v, v, v, v))  # BUG: float4 store two elements past a boundary
    barrier()
    y[t] = s[4 * t + 2]


# ---------------------------------------------------------------- builders of the buggy launches


def _last_writer_wins() -> Setup:
    return Setup(last_writer_wins[2, 64], (ints(128, 1), f32(2)))


def _rotate_no_barrier() -> Setup:
    return Setup(rotate_no_barrier[2, 64], (ints(128, 2), f32(128), 64))


def _reverse_barrier_misplaced() -> Setup:
    return Setup(reverse_barrier_misplaced[2, 64], (ints(128, 3), f32(128), 64))


def _tree_sum_no_inner_barrier() -> Setup:
    return Setup(tree_sum_no_inner_barrier[2, 64], (ints(128, 4), f32(2), 64))


def _tiles_one_barrier() -> Setup:
    return Setup(tiles_one_barrier[1, 64], (ints(192, 5), f32(64), 3, 64))


def _scan_in_place() -> Setup:
    return Setup(scan_in_place[2, 64], (ints(128, 6), f32(128), 64))


def _shared_hist_read_early() -> Setup:
    return Setup(shared_hist_read_early[2, 64], (bins(128, 7, 8), np.zeros(16, np.int32), 8))


def _shared_hist_zero_unordered() -> Setup:
    return Setup(shared_hist_zero_unordered[2, 64], (bins(128, 8, 8), np.zeros(16, np.int32), 8))


def _everyone_stores_a0() -> Setup:
    return Setup(everyone_stores_a0[1, 64], (f32(1),))


def _read_other_blocks_output() -> Setup:
    return Setup(read_other_blocks_output[4, 32], (ints(128, 9), f32(128), f32(128)))


def _handoff_between_blocks() -> Setup:
    return Setup(handoff_between_blocks[2, 32], (ints(32, 10), f32(32), f32(32)))


def _global_rotate_no_barrier() -> Setup:
    return Setup(global_rotate_no_barrier[2, 64], (ints(128, 11), f32(128), f32(128), 64))


def _barrier_across_blocks() -> Setup:
    return Setup(barrier_across_blocks[2, 32], (ints(64, 12), f32(64), f32(64), 64, 32))


def _smooth_in_place() -> Setup:
    return Setup(smooth_in_place[2, 32], (ints(64, 13), 64))


def _global_hist_read_early() -> Setup:
    return Setup(global_hist_read_early[2, 32], (bins(64, 14, 8), np.zeros(8, np.int32), np.zeros(8, np.int32), 8))


def _count_with_reset() -> Setup:
    flags = (np.arange(64) % 3 == 1).astype(np.int32)  # threads 1, 4, 7... of both blocks count
    return Setup(count_with_reset[2, 32], (flags, np.full(1, 99, np.int32)))


def _half_filled_shared() -> Setup:
    return Setup(half_filled_shared[1, 64], (ints(64, 15), f32(64)))


def _shared_hist_not_zeroed() -> Setup:
    return Setup(shared_hist_not_zeroed[2, 64], (bins(128, 16, 8), np.zeros(16, np.int32), 8))


def _stencil_missing_right_halo() -> Setup:
    return Setup(stencil_missing_right_halo[2, 32], (ints(64, 17), f32(64), 32))


def _local_partly_filled() -> Setup:
    return Setup(local_partly_filled[1, 32], (ints(128, 18), f32(32), 3))


def _add_bias() -> Setup:
    return Setup(add_bias[2, 32], (ints(64, 19), gk.empty(64, np.float32), f32(64)))


def _consume_half_filled() -> Setup:
    x, tmp = ints(64, 20), gk.empty(64, np.float32)
    fill_first_half[2, 32](x, tmp, 64)
    return Setup(consume_scratch[2, 32], (tmp, f32(64), 64))


def _backward_diff() -> Setup:
    return Setup(backward_diff[2, 32], (ints(64, 21), f32(64)))


def _scale_no_tail_guard() -> Setup:
    return Setup(scale_no_tail_guard[4, 32], (ints(100, 22), f32(100), 100))


def _shift_into_tile() -> Setup:
    return Setup(shift_into_tile[2, 32], (ints(64, 23), f32(64), 32))


def _add_one_2d() -> Setup:
    return Setup(add_one_2d[1, (8, 8)], (ints(48, 24).reshape(8, 6), np.zeros((8, 6), np.float32)))


def _shift_right() -> Setup:
    return Setup(shift_right[2, 32], (ints(64, 25), f32(64), 64))


def _local_overrun() -> Setup:
    return Setup(local_overrun[1, 32], (ints(32, 26), f32(32), 5))


def _shared_backward_diff() -> Setup:
    return Setup(shared_backward_diff[2, 32], (ints(64, 27), f32(64), 32))


def _copy_grid_stride_inclusive() -> Setup:
    return Setup(copy_grid_stride_inclusive[2, 32], (ints(100, 28), f32(100), 100))


def _barrier_in_branch() -> Setup:
    return Setup(barrier_in_branch[2, 32], (f32(64),))


def _barrier_in_data_loop() -> Setup:
    return Setup(barrier_in_data_loop[2, 32], (ints(64, 29, 0, 9), f32(64)))


def _barrier_after_break() -> Setup:
    return Setup(barrier_after_break[2, 32], (ints(64, 30, 0, 5), f32(64), 4))


def _call_sync_helper() -> Setup:
    return Setup(call_sync_helper[2, 32], (f32(64),))


def _window_gather_wraps_in_bounds() -> Setup:
    # 4096 * 2**20 = 2**32 wraps to 0: x[t], in bounds, so only the overflow check can see it
    return Setup(window_gather[1, 32], (ints(32, 31), f32(32), 2**20, 4096))


def _window_gather_wraps_negative() -> Setup:
    # 2048 * 2**20 = 2**31 wraps to -2**31: out of bounds too, but the overflow comes first
    return Setup(window_gather[1, 32], (ints(32, 32), f32(32), 2**20, 2048))


def _record_gather() -> Setup:
    # (2**28 + t) * 16 = 2**32 + 16 t wraps to 16 t: in bounds
    return Setup(record_gather[1, 32], (ints(16 * 32, 33), f32(32), 2**28))


def _vec_copy_offset() -> Setup:
    return Setup(vec_copy_offset[1, 32], (ints(4 * 32 + 4, 34), f32(4 * 32)))


def _vec_store_shared_offset() -> Setup:
    return Setup(vec_store_shared_offset[1, 32], (ints(32, 35), f32(32)))


RACE, UNINIT, OVER, OUT, MIS, DIV = (
    gk.DataRaceError,
    gk.UninitializedReadError,
    gk.IndexOverflowError,
    gk.OutOfBoundsError,
    gk.MisalignedAccessError,
    gk.BarrierDivergenceError,
)

BUGGY: list[Buggy] = [
    # shared races
    Buggy("shared_write_write", SHARED_RACE, RACE, last_writer_wins, _last_writer_wins, RACECHECK),
    Buggy("shared_read_without_barrier", SHARED_RACE, RACE, rotate_no_barrier, _rotate_no_barrier, RACECHECK),
    Buggy(
        "shared_barrier_misplaced", SHARED_RACE, RACE, reverse_barrier_misplaced, _reverse_barrier_misplaced, RACECHECK
    ),
    Buggy(
        "shared_reduction_missing_barrier",
        SHARED_RACE,
        RACE,
        tree_sum_no_inner_barrier,
        _tree_sum_no_inner_barrier,
        RACECHECK,
    ),
    Buggy("shared_tile_reuse_one_barrier", SHARED_RACE, RACE, tiles_one_barrier, _tiles_one_barrier, RACECHECK),
    Buggy("shared_scan_in_place", SHARED_RACE, RACE, scan_in_place, _scan_in_place, RACECHECK),
    # shared atomics against plain accesses
    Buggy(
        "shared_atomic_then_plain_read", SHARED_ATOMIC, RACE, shared_hist_read_early, _shared_hist_read_early, RACECHECK
    ),
    Buggy(
        "shared_plain_store_then_atomic",
        SHARED_ATOMIC,
        RACE,
        shared_hist_zero_unordered,
        _shared_hist_zero_unordered,
        RACECHECK,
    ),
    # global races: racecheck looks at shared memory only
    Buggy("global_all_store_one_element", GLOBAL_RACE, RACE, everyone_stores_a0, _everyone_stores_a0, NONE),
    Buggy(
        "global_read_other_blocks_store", GLOBAL_RACE, RACE, read_other_blocks_output, _read_other_blocks_output, NONE
    ),
    Buggy(
        "global_read_after_write_across_blocks",
        GLOBAL_RACE,
        RACE,
        handoff_between_blocks,
        _handoff_between_blocks,
        NONE,
    ),
    Buggy("global_same_block_no_barrier", GLOBAL_RACE, RACE, global_rotate_no_barrier, _global_rotate_no_barrier, NONE),
    Buggy(
        "global_barrier_does_not_order_blocks", GLOBAL_RACE, RACE, barrier_across_blocks, _barrier_across_blocks, NONE
    ),
    Buggy("global_in_place_stencil", GLOBAL_RACE, RACE, smooth_in_place, _smooth_in_place, NONE),
    # global atomics against plain accesses
    Buggy("global_atomic_then_plain_read", GLOBAL_ATOMIC, RACE, global_hist_read_early, _global_hist_read_early, NONE),
    Buggy("global_plain_store_then_atomic", GLOBAL_ATOMIC, RACE, count_with_reset, _count_with_reset, NONE),
    # uninitialised reads: initcheck looks at global memory only
    Buggy("uninit_shared_half_written", UNINIT_SHARED, UNINIT, half_filled_shared, _half_filled_shared, NONE),
    Buggy(
        "uninit_shared_hist_not_zeroed",
        UNINIT_SHARED,
        UNINIT,
        shared_hist_not_zeroed,
        _shared_hist_not_zeroed,
        NONE,
        note="the first read is an atomic's: a read-modify-write of an element nothing wrote",
    ),
    Buggy(
        "uninit_shared_missing_halo",
        UNINIT_SHARED,
        UNINIT,
        stencil_missing_right_halo,
        _stencil_missing_right_halo,
        NONE,
    ),
    Buggy("uninit_local_partly_filled", UNINIT_LOCAL, UNINIT, local_partly_filled, _local_partly_filled, NONE),
    Buggy("uninit_global_empty_never_written", UNINIT_GLOBAL, UNINIT, add_bias, _add_bias, INITCHECK),
    Buggy(
        "uninit_global_producer_wrote_half",
        UNINIT_GLOBAL,
        UNINIT,
        consume_scratch,
        _consume_half_filled,
        INITCHECK,
        marker="# READ",
        note="an earlier launch filled only half of the gk.empty buffer",
    ),
    # out of bounds
    Buggy("oob_negative_index", OOB, OUT, backward_diff, _backward_diff, MEMCHECK),
    Buggy("oob_tail_without_guard", OOB, OUT, scale_no_tail_guard, _scale_no_tail_guard, MEMCHECK),
    Buggy(
        "oob_shared_tile_off_by_one",
        OOB,
        OUT,
        shift_into_tile,
        _shift_into_tile,
        MEMCHECK,
        note="memcheck may miss it: s[B] can still lie inside the block's shared memory",
    ),
    Buggy(
        "oob_2d_dimension",
        OOB,
        OUT,
        add_one_2d,
        _add_one_2d,
        MEMCHECK,
        note="most bad (r, c) still land inside the allocation; only the last row's leave it",
    ),
    Buggy("oob_write_past_end", OOB, OUT, shift_right, _shift_right, MEMCHECK),
    Buggy(
        "oob_local_array",
        OOB,
        OUT,
        local_overrun,
        _local_overrun,
        MEMCHECK,
        note="a local array overrun may stay inside the thread's stack frame",
    ),
    Buggy("oob_shared_negative", OOB, OUT, shared_backward_diff, _shared_backward_diff, MEMCHECK),
    Buggy(
        "oob_grid_stride_inclusive_bound", OOB, OUT, copy_grid_stride_inclusive, _copy_grid_stride_inclusive, MEMCHECK
    ),
    # divergent barriers
    Buggy("barrier_in_thread_branch", DIVERGENCE, DIV, barrier_in_branch, _barrier_in_branch, SYNCCHECK, static=True),
    Buggy(
        "barrier_in_data_dependent_loop",
        DIVERGENCE,
        DIV,
        barrier_in_data_loop,
        _barrier_in_data_loop,
        SYNCCHECK,
        static=True,
    ),
    Buggy(
        "barrier_after_thread_dependent_break",
        DIVERGENCE,
        DIV,
        barrier_after_break,
        _barrier_after_break,
        SYNCCHECK,
        static=True,
    ),
    Buggy(
        "barrier_after_early_return_in_func",
        DIVERGENCE,
        DIV,
        bump_after_sync,
        _call_sync_helper,
        SYNCCHECK,
        static=True,
    ),
    # index overflow
    Buggy("overflow_int32_wraps_in_bounds", OVERFLOW, OVER, window_gather, _window_gather_wraps_in_bounds, NONE),
    Buggy(
        "overflow_int32_wraps_negative",
        OVERFLOW,
        OVER,
        window_gather,
        _window_gather_wraps_negative,
        MEMCHECK,
        note="the wrapped index is out of bounds too: the overflow must be reported first",
    ),
    Buggy("overflow_uint32_wraps_in_bounds", OVERFLOW, OVER, record_gather, _record_gather, NONE),
    # misaligned vector accesses
    Buggy("misaligned_global_vload", MISALIGNED, MIS, vec_copy_offset, _vec_copy_offset, MEMCHECK),
    Buggy("misaligned_shared_vstore", MISALIGNED, MIS, vec_store_shared_offset, _vec_store_shared_offset, MEMCHECK),
]


# ==================================================================== kernels with two bugs


@kernel
def race_and_uninit(x: Array[float32], a: Array[float32], y: Array[float32]):
    s = shared(float32, 64)
    t = thread_idx.x
    a[0] = x[t]  # BUG-1: every thread stores a[0]
    if t < 32:
        s[t] = x[t]
    barrier()
    y[t] = s[63 - t]  # BUG-2: s[32:] was never written


@kernel
def two_bad_reads(x: Array[float32], y: Array[float32]):
    i = global_id(0)
    left = x[i - 1]  # BUG-1: thread 0 reads x[-1]
    right = x[i + 1]  # BUG-2: the last thread reads x[n]
    y[i] = right - left


@dataclass(frozen=True)
class Multi:
    """A kernel with several bugs: ``gk.sanitize`` must report each (class, marker)."""

    name: str
    where: Any
    build: Callable[[], Setup]
    faults: tuple[tuple[type[gk.KernelFault], str], ...]

    def expected(self) -> list[tuple[type[gk.KernelFault], int]]:
        return [(cls, line_of(self.where, marker)) for cls, marker in self.faults]


MULTI: list[Multi] = [
    Multi(
        "global_race_and_uninit_shared",
        race_and_uninit,
        lambda: Setup(race_and_uninit[1, 64], (ints(64, 40), f32(1), f32(64))),
        ((RACE, "# BUG-1"), (UNINIT, "# BUG-2")),
    ),
    Multi(
        "two_out_of_bounds_reads",
        two_bad_reads,
        lambda: Setup(two_bad_reads[2, 32], (ints(64, 41), f32(64))),
        ((OUT, "# BUG-1"), (OUT, "# BUG-2")),
    ),
]


# ==================================================================== correct kernels


@kernel
def block_sum(x: Array[float32], out: Array[float32], n: int32, B: Const[int]):
    buf = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    buf[t] = x[i] if i < n else 0.0
    barrier()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2
    if t == 0:
        out[block_idx.x] = buf[0]


@kernel
def scan_double_buffered(x: Array[float32], y: Array[float32], n: int32, B: Const[int]):
    """Inclusive Hillis-Steele scan of each block: each step reads one buffer, writes the other."""
    buf = shared(float32, (2, B))
    t = thread_idx.x
    i = block_idx.x * B + t
    buf[0, t] = x[i] if i < n else 0.0
    barrier()
    src = 0
    d = 1
    while d < B:
        v = buf[src, t]
        if t >= d:
            v += buf[src, t - d]
        buf[1 - src, t] = v
        barrier()
        src = 1 - src
        d *= 2
    if i < n:
        y[i] = buf[src, t]


@kernel
def scan_blelloch(x: Array[float32], y: Array[float32], sums: Array[float32], B: Const[int]):
    """Exclusive Blelloch scan of each block (up-sweep, then down-sweep), and each block's total."""
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    s[t] = x[i]
    barrier()
    d = 1
    while d < B:
        k = (t + 1) * 2 * d - 1
        if k < B:
            s[k] += s[k - d]
        barrier()
        d *= 2
    if t == 0:
        sums[block_idx.x] = s[B - 1]
        s[B - 1] = 0.0
    barrier()
    d = B // 2
    while d > 0:
        k = (t + 1) * 2 * d - 1
        if k < B:
            left = s[k - d]
            s[k - d] = s[k]
            s[k] += left
        barrier()
        d //= 2
    y[i] = s[t]


@kernel
def matmul_tiled(a: Array[float32], b: Array[float32], c: Array[float32], n: int32, T: Const[int]):
    ta = shared(float32, (T, T))
    tb = shared(float32, (T, T))
    tx = thread_idx.x
    ty = thread_idx.y
    row = block_idx.y * T + ty
    col = block_idx.x * T + tx
    acc = 0.0
    for k0 in range(0, n, T):
        ta[ty, tx] = a[row * n + k0 + tx] if row < n and k0 + tx < n else 0.0
        tb[ty, tx] = b[(k0 + ty) * n + col] if k0 + ty < n and col < n else 0.0
        barrier()  # the tiles are loaded
        for k in range(T):
            acc += ta[ty, k] * tb[k, tx]
        barrier()  # everyone is done with them before the next load
    if row < n and col < n:
        c[row * n + col] = acc


@kernel
def tiles_double_buffered(x: Array[float32], y: Array[float32], n_tiles: int32, B: Const[int]):
    """The fix of tiles_one_barrier: alternate two buffers, one barrier per step."""
    buf = shared(float32, (2, B))
    t = thread_idx.x
    buf[0, t] = x[t]
    barrier()
    acc = 0.0
    for k in range(n_tiles):
        cur = k % 2
        if k + 1 < n_tiles:
            buf[1 - cur, t] = x[(k + 1) * B + t]  # the next tile, into the buffer not being read
        acc += buf[cur, (t + 1) % B]
        barrier()  # the next step overwrites the buffer read in this one
    y[t] = acc


@kernel
def hist_global(v: Array[int32], hist: Array[int32], n: int32):
    i = global_id(0)
    stride = grid_dim.x * block_dim.x
    while i < n:
        atomic_add(hist, v[i], 1)
        i += stride


@kernel
def hist_shared(v: Array[int32], hist: Array[int32], n: int32, BINS: Const[int]):
    h = shared(int32, BINS)
    t = thread_idx.x
    i = global_id(0)
    if t < BINS:
        h[t] = 0
    barrier()
    if i < n:
        atomic_add(h, v[i], 1)
    barrier()
    if t < BINS:
        atomic_add(hist, t, h[t])


@kernel
def saxpy_grid_stride(a: float32, x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    stride = grid_dim.x * block_dim.x
    while i < n:
        y[i] = a * x[i] + y[i]
        i += stride


@kernel
def stencil3(x: Array[float32], y: Array[float32], n: int32, B: Const[int]):
    tile = shared(float32, B + 2)
    t = thread_idx.x
    i = block_idx.x * B + t
    tile[t + 1] = x[i] if i < n else 0.0
    if t == 0:
        tile[0] = x[i - 1] if i > 0 and i - 1 < n else 0.0
    if t == B - 1:
        tile[B + 1] = x[i + 1] if i + 1 < n else 0.0
    barrier()
    if i < n:
        y[i] = tile[t] + 2.0 * tile[t + 1] + tile[t + 2]


@kernel
def transpose_padded(x: Array[float32, 2], y: Array[float32, 2], T: Const[int]):
    tile = shared(float32, (T, T + 1))  # the extra column is never read: it staggers the banks
    tx = thread_idx.x
    ty = thread_idx.y
    r = block_idx.y * T + ty
    c = block_idx.x * T + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    barrier()
    r2 = block_idx.x * T + ty
    c2 = block_idx.y * T + tx
    if r2 < y.shape[0] and c2 < y.shape[1]:
        y[r2, c2] = tile[tx, ty]


@kernel
def square_plus_one(x: Array[float32], scratch: Array[float32], y: Array[float32], n: int32):
    """Each thread reads back only what it wrote itself into a gk.empty scratch array."""
    i = global_id(0)
    if i < n:
        scratch[i] = x[i] * x[i]
        y[i] = scratch[i] + 1.0


@kernel
def hashed_lookup(keys: Array[int32], table: Array[float32], y: Array[float32]):
    """A multiplicative hash that wraps on purpose, reduced by %, & and >> before indexing."""
    i = global_id(0)
    h = uint32(keys[i]) * 2654435761
    h = h ^ (h >> 16)
    y[i] = table[h % 64] + table[h & 63] + table[h >> 26]


@kernel
def compact_positive(x: Array[float32], out: Array[float32], counts: Array[int32], B: Const[int]):
    """Keep each block's positive values, in order: a block-level prefix sum of keep-flags."""
    flags = shared(int32, (2, B))
    t = thread_idx.x
    i = block_idx.x * B + t
    v = x[i]
    keep = 1 if v > 0.0 else 0
    flags[0, t] = keep
    barrier()
    src = 0
    d = 1
    while d < B:
        s = flags[src, t]
        if t >= d:
            s += flags[src, t - d]
        flags[1 - src, t] = s
        barrier()
        src = 1 - src
        d *= 2
    if keep == 1:
        out[block_idx.x * B + flags[src, t] - 1] = v
    if t == B - 1:
        counts[block_idx.x] = flags[src, t]


@kernel
def global_rotate(x: Array[float32], a: Array[float32], y: Array[float32], B: Const[int]):
    """The fix of global_rotate_no_barrier: a barrier orders one block's global accesses."""
    t = thread_idx.x
    base = block_idx.x * B
    a[base + t] = x[base + t]
    barrier()
    y[base + t] = a[base + (t + 1) % B]


@kernel
def weighted_quads(x: Array[float32], w: Array[float32], y: Array[float32], n: int32):
    """Aligned float4 loads and stores, and a local array filled before it is read."""
    r = local(float32, 4)
    i = global_id(0)
    if i < n:
        v = vload(x, 4 * i, 4)
        for k in unroll(range(4)):
            r[k] = v[k] * w[k]
        vstore(y, 4 * i, (r[0] + r[1] + r[2] + r[3], r[0], r[1] + r[2], r[3]))


@kernel
def window_gather64(x: Array[float32], y: Array[float32], n: int32, row0: int32, base: int64):
    """The fix of window_gather: the flat index is computed in int64."""
    t = thread_idx.x
    row = int64(row0 + block_idx.x)
    y[t] = x[row * n + t - base]


@kernel
def total_sum(x: Array[int32], total: Array[int32], n: int32, B: Const[int]):
    """A block reduction in shared memory, then one atomic per block."""
    buf = shared(int32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    buf[t] = x[i] if i < n else 0
    barrier()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2
    if t == 0:
        atomic_add(total, 0, buf[0])


@kernel
def reverse_superstep(x: Array[float32], y: Array[float32], B: Const[int]):
    s = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    with superstep():
        s[t] = x[i]
    y[i] = s[B - 1 - t]


# ---------------------------------------------------------------- builders of the correct launches


def _block_sum() -> Setup:
    x = ints(200, 50)
    want = np.add.reduceat(np.append(x, np.zeros(56, np.float32)), np.arange(0, 256, 64))
    return Setup(block_sum[4, 64], (x, f32(4), 200, 64), {1: want})


def _scan_double_buffered() -> Setup:
    x = ints(100, 51)
    want = np.concatenate([np.cumsum(x[k : k + 32]) for k in range(0, 100, 32)]).astype(np.float32)
    return Setup(scan_double_buffered[4, 32], (x, f32(100), 100, 32), {1: want})


def _scan_blelloch() -> Setup:
    x = ints(128, 52).reshape(2, 64)
    inclusive = np.cumsum(x, axis=1)
    want = (inclusive - x).reshape(-1).astype(np.float32)
    return Setup(scan_blelloch[2, 64], (x.reshape(-1), f32(128), f32(2), 64), {1: want, 2: inclusive[:, -1]})


def _matmul_tiled() -> Setup:
    n = 20
    a, b = ints(n * n, 53, -3, 4), ints(n * n, 54, -3, 4)
    want = (a.reshape(n, n) @ b.reshape(n, n)).reshape(-1)
    return Setup(matmul_tiled[(3, 3), (8, 8)], (a, b, f32(n * n), n, 8), {2: want})


def _tiles_double_buffered() -> Setup:
    x = ints(192, 55)
    want = np.roll(x.reshape(3, 64), -1, axis=1).sum(axis=0)
    return Setup(tiles_double_buffered[1, 64], (x, f32(64), 3, 64), {1: want})


def _hist_global() -> Setup:
    v = bins(300, 56, 16)
    return Setup(hist_global[2, 64], (v, np.zeros(16, np.int32), 300), {1: np.bincount(v, minlength=16)})


def _hist_shared() -> Setup:
    v = bins(150, 57, 16)
    return Setup(hist_shared[3, 64], (v, np.zeros(16, np.int32), 150, 16), {1: np.bincount(v, minlength=16)})


def _saxpy_grid_stride() -> Setup:
    x, y = ints(300, 58), ints(300, 59)
    return Setup(saxpy_grid_stride[2, 32], (np.float32(2.0), x, y, 300), {2: 2 * x + y})


def _stencil3() -> Setup:
    x = ints(100, 60)
    p = np.pad(x, 1)
    return Setup(stencil3[4, 32], (x, f32(100), 100, 32), {1: p[:-2] + 2 * p[1:-1] + p[2:]})


def _transpose_padded() -> Setup:
    x = ints(20 * 13, 61).reshape(20, 13)
    return Setup(transpose_padded[(2, 3), (8, 8)], (x, np.zeros((13, 20), np.float32), 8), {1: x.T})


def _square_plus_one() -> Setup:
    x = ints(60, 62)
    return Setup(square_plus_one[2, 32], (x, gk.empty(60, np.float32), f32(60), 60), {1: x * x, 2: x * x + 1})


def _producer_then_consumer() -> Setup:
    x, tmp = ints(64, 63), gk.empty(64, np.float32)
    fill_all[2, 32](x, tmp, 64)  # the earlier launch fills every element of the gk.empty buffer
    return Setup(consume_scratch[2, 32], (tmp, f32(64), 64), {1: 2 * x + 1})


def _hashed_lookup() -> Setup:
    keys = np.random.default_rng(64).integers(0, 2**31 - 1, 64).astype(np.int32)
    table = ints(64, 65)
    h = keys.astype(np.uint32) * np.uint32(2654435761)
    h ^= h >> np.uint32(16)
    want = table[h % 64] + table[h & 63] + table[h >> 26]
    return Setup(hashed_lookup[2, 32], (keys, table, f32(64)), {2: want})


def _compact_positive() -> Setup:
    x = ints(96, 66).reshape(3, 32)
    out = np.zeros((3, 32), np.float32)
    counts = np.zeros(3, np.int32)
    for b, row in enumerate(x):
        kept = row[row > 0]
        out[b, : len(kept)] = kept
        counts[b] = len(kept)
    return Setup(
        compact_positive[3, 32], (x.reshape(-1), f32(96), np.zeros(3, np.int32), 32), {1: out.reshape(-1), 2: counts}
    )


def _global_rotate() -> Setup:
    x = ints(128, 67)
    want = np.roll(x.reshape(2, 64), -1, axis=1).reshape(-1)
    return Setup(global_rotate[2, 64], (x, f32(128), f32(128), 64), {1: x, 2: want})


def _weighted_quads() -> Setup:
    x, w = ints(4 * 40, 68).reshape(40, 4), ints(4, 69)
    r = x * w
    want = np.stack([r.sum(axis=1), r[:, 0], r[:, 1] + r[:, 2], r[:, 3]], axis=1).reshape(-1)
    return Setup(weighted_quads[2, 32], (x.reshape(-1), w, f32(4 * 40), 40), {2: want})


def _window_gather64() -> Setup:
    x = ints(32, 70)
    return Setup(window_gather64[1, 32], (x, f32(32), 2**20, 4096, np.int64(2**32)), {1: x})


def _total_sum() -> Setup:
    x = np.random.default_rng(71).integers(-100, 100, 300).astype(np.int32)
    return Setup(total_sum[5, 64], (x, np.zeros(1, np.int32), 300, 64), {1: np.array([x.sum()], np.int32)})


def _reverse_superstep() -> Setup:
    x = ints(128, 72)
    return Setup(reverse_superstep[2, 64], (x, f32(128), 64), {1: x.reshape(2, 64)[:, ::-1].reshape(-1)})


CORRECT: list[Correct] = [
    Correct("tree_reduction", "shared reduction", _block_sum),
    Correct("scan_hillis_steele_double_buffered", "shared scan", _scan_double_buffered),
    Correct("scan_blelloch", "shared scan", _scan_blelloch),
    Correct("matmul_tiled_two_barriers", "shared tiles", _matmul_tiled),
    Correct("tiles_double_buffered_one_barrier", "shared tiles", _tiles_double_buffered),
    Correct("histogram_global_atomics", "atomics only", _hist_global),
    Correct("histogram_shared_atomics", "atomics only", _hist_shared),
    Correct("saxpy_grid_stride", "grid-stride loop", _saxpy_grid_stride),
    Correct("stencil_with_halo", "shared tiles", _stencil3),
    Correct("transpose_padded_tile", "shared tiles", _transpose_padded),
    Correct("empty_scratch_same_thread", "gk.empty written before read", _square_plus_one),
    Correct("empty_filled_by_earlier_launch", "gk.empty written before read", _producer_then_consumer),
    Correct("uint32_hash_reduced_before_index", "wrapping arithmetic", _hashed_lookup),
    Correct("block_compaction_prefix_sum", "shared scan", _compact_positive),
    Correct("global_exchange_after_barrier", "global memory in one block", _global_rotate),
    Correct("aligned_vectors_and_local_array", "vector access", _weighted_quads),
    Correct("int64_index_of_large_matrix", "wide index arithmetic", _window_gather64),
    Correct("reduction_then_one_atomic_per_block", "atomics only", _total_sum),
    Correct("superstep_exchange", "shared exchange", _reverse_superstep),
]


def by_name(name: str) -> Buggy | Correct:
    """The case called ``name`` (buggy or correct)."""
    for case in (*BUGGY, *CORRECT):
        if case.name == name:
            return case
    raise KeyError(name)
