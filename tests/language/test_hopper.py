"""sm_90's mbarriers and TMA copies (gpukern.language.hopper): results on the simulator and on an
sm_90 GPU against NumPy (a box's zeros outside the array, swizzled layouts, a ring of stages
whose parity flips), each misuse the simulator reports at its line, and the refusals."""

from __future__ import annotations

import re

import numpy as np
import pytest
from compilers import need_sm90, needs_nvcc
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, Const, float16, float32, int32
from gpukern.backends.cuda_compile import nvcc_compile
from gpukern.semantics import tma


@gk.kernel
def copy_boxes(a: Array[float32, 2], out: Array[float32, 2], BR: Const[int], BC: Const[int]):
    """Each block copies one BR x BC box of a (zeros past its edges) into the same place of out."""
    tile = gk.shared(float32, (BR, BC))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (BR, BC))
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    r0 = gk.block_idx.y * BR
    c0 = gk.block_idx.x * BC
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        gk.tma_load(tile[0, 0], amap, (r0, c0), bars[0])
    gk.mbarrier_wait(bars[0], 0)
    for k in range(t, BR * BC, gk.block_dim.x):
        out[r0 + k // BC, c0 + k % BC] = tile[k // BC, k % BC]


@pytest.mark.parametrize("shape, box", [((40, 68), (16, 32)), ((33, 12), (8, 4)), ((64, 64), (64, 16))])
def test_a_box_past_the_edges_reads_zeros(backend, shape, box):
    need_sm90(backend, "TMA")
    a = np.random.default_rng(1).random(shape).astype(np.float32) + 1
    grid = (-(-shape[1] // box[1]), -(-shape[0] // box[0]))
    out = gk.to_device(np.full((grid[1] * box[0], grid[0] * box[1]), -1, np.float32))
    copy_boxes[grid, 128](gk.to_device(a), out, *box)
    want = np.zeros(out.shape, np.float32)
    want[: shape[0], : shape[1]] = a
    np.testing.assert_array_equal(out.get(), want)


def test_each_launch_copies_from_its_own_array(backend):
    """Launches after the first take the plan (on CUDA): each array its own descriptor, kept."""
    need_sm90(backend, "TMA")
    rng = np.random.default_rng(3)
    arrays = [gk.to_device(rng.random((32, 64)).astype(np.float32)) for _ in range(3)]
    launch = copy_boxes[(2, 2), 128]
    for a in arrays + arrays[:1]:
        out = gk.to_device(np.zeros((32, 64), np.float32))
        launch(a, out, 16, 32)
        np.testing.assert_array_equal(out.get(), a.get())


def test_rows_not_a_multiple_of_16_bytes_are_refused(backend):
    """As the driver refuses them (cuTensorMapEncodeTiled's global strides), before anything runs."""
    need_sm90(backend, "TMA")
    out = gk.to_device(np.zeros((48, 96), np.float32))
    with pytest.raises(gk.LaunchError, match=r"'a' \(shape \(40, 70\)\) has rows of 280 bytes"):
        copy_boxes[(3, 3), 128](gk.to_device(np.ones((40, 70), np.float32)), out, 16, 32)


@gk.kernel
def swizzled(a: Array[float16, 2], out: Array[float16, 2]):
    """A 16 x 64 box of halves, 128-byte swizzled: element (r, c) lies where gk.swizzle128 says."""
    tile = gk.shared(float16, 16 * 64)
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (16, 64), swizzle=128)
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        gk.tma_load(tile[0], amap, (16 * gk.block_idx.x, 0), bars[0])
    gk.mbarrier_wait(bars[0], 0)
    for k in range(t, 16 * 64, gk.block_dim.x):
        r = k // 64
        c = k % 64
        out[16 * gk.block_idx.x + r, c] = tile[gk.swizzle128(r, c, 64, 8)]


def test_a_128_byte_swizzle_is_the_layout_wgmma_reads(backend):
    need_sm90(backend, "TMA")
    a = (np.arange(32 * 64) % 2011).astype(np.float16).reshape(32, 64)
    out = gk.to_device(np.zeros_like(a))
    swizzled[2, 128](gk.to_device(a), out)
    np.testing.assert_array_equal(out.get(), a)


def test_the_swizzles_are_xors_of_chunks():
    """32, 64, 128 bytes: the 16-byte chunk bits XORed with 1, 2, 3 row bits (PTX's tensor swizzle modes)."""
    byte = np.arange(4096)
    for mode, bits in ((32, 1), (64, 2), (128, 3)):
        moved = tma.swizzle(byte, mode)
        assert sorted(moved) == list(byte)  # a permutation
        chunk, row = (byte >> 4) & 7, (byte >> 7) & 7
        np.testing.assert_array_equal((moved >> 4) & 7, chunk ^ (row & ((1 << bits) - 1)))
        np.testing.assert_array_equal(moved & ~np.int64(0x70), byte & ~np.int64(0x70))


@gk.kernel
def ring(a: Array[float32, 2], sums: Array[float32], STAGES: Const[int]):
    """Column sums of a (k x 32), 8 rows a box, through a ring of STAGES boxes: stage s's barrier is
    waited for with parity (k // STAGES) % 2, then refilled after a barrier()."""
    tiles = gk.shared(float32, (STAGES, 8, 32))
    bars = gk.shared(gk.mbarrier, STAGES)
    amap = gk.tensor_map(a, (8, 32))
    t = gk.thread_idx.x
    n = a.shape[0] // 8
    if t < STAGES:
        gk.mbarrier_init(bars[t], 1)
    gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        for s in range(STAGES):
            if s < n:
                gk.mbarrier_arrive_expect_tx(bars[s], gk.box_bytes(amap))
                gk.tma_load(tiles[s, 0, 0], amap, (8 * s, 0), bars[s])
    acc = float32(0)
    for k in range(n):
        s = k % STAGES
        gk.mbarrier_wait(bars[s], (k // STAGES) % 2)
        if t < 32:
            for r in range(8):
                acc += tiles[s, r, t]
        gk.barrier()  # every thread has read stage s: it may be refilled
        if t == 0 and k + STAGES < n:
            gk.mbarrier_arrive_expect_tx(bars[s], gk.box_bytes(amap))
            gk.tma_load(tiles[s, 0, 0], amap, (8 * (k + STAGES), 0), bars[s])
    if t < 32:
        sums[t] = acc


@pytest.mark.parametrize("stages, rows", [(2, 80), (3, 72), (4, 16)])
def test_a_ring_of_stages_flips_parity(backend, stages, rows):
    need_sm90(backend, "TMA")
    a = np.random.default_rng(stages).integers(-50, 50, (rows, 32)).astype(np.float32)
    sums = gk.to_device(np.zeros(32, np.float32))
    ring[1, 64](gk.to_device(a), sums, stages)
    np.testing.assert_array_equal(sums.get(), a.sum(axis=0))


@gk.kernel
def specialized(a: Array[float32, 2], sums: Array[float32], STAGES: Const[int], EMPTY: Const[int]):
    """Warp specialization: thread 32 (the producer warp's) fills a ring of stages and waits for
    them to be emptied; warp 0 (the consumers) waits for each to be filled, sums it, and arrives on
    its empty barrier (EMPTY arrivals a phase: 32, one per consumer)."""
    tiles = gk.shared(float32, (STAGES, 8, 32))
    full = gk.shared(gk.mbarrier, STAGES)
    empty = gk.shared(gk.mbarrier, STAGES)
    amap = gk.tensor_map(a, (8, 32))
    t = gk.thread_idx.x
    n = a.shape[0] // 8
    if t == 0:
        for s in range(STAGES):
            gk.mbarrier_init(full[s], 1)
            gk.mbarrier_init(empty[s], EMPTY)
    gk.fence_mbarrier_init()
    gk.barrier()
    if t >= 32:  # the producer warp
        if t == 32:
            for k in range(n):
                s = k % STAGES
                if k >= STAGES:
                    gk.mbarrier_wait(empty[s], (k // STAGES - 1) % 2)  # emptied
                gk.mbarrier_arrive_expect_tx(full[s], gk.box_bytes(amap))
                gk.tma_load(tiles[s, 0, 0], amap, (8 * k, 0), full[s])
    else:  # the consumers
        acc = float32(0)
        for k in range(n):
            s = k % STAGES
            gk.mbarrier_wait(full[s], (k // STAGES) % 2)
            for r in range(8):
                acc += tiles[s, r, t]
            gk.mbarrier_arrive(empty[s])
        sums[t] = acc


@pytest.mark.parametrize("stages, rows", [(2, 80), (3, 64)])
def test_a_producer_and_its_consumers_run_side_by_side(backend, stages, rows):
    """The two sides of the if wait on each other: the simulator runs them taking turns."""
    need_sm90(backend, "TMA")
    a = np.random.default_rng(stages).integers(-50, 50, (rows, 32)).astype(np.float32)
    sums = gk.to_device(np.zeros(32, np.float32))
    specialized[1, 64](gk.to_device(a), sums, stages, 32)
    np.testing.assert_array_equal(sums.get(), a.sum(axis=0))


def test_consumers_that_never_empty_a_stage_are_a_deadlock():
    """33 arrivals expected, 32 consumers: the producer's wait can never pass (a GPU hangs)."""
    a = np.ones((40, 32), np.float32)
    faults = gk.sanitize(specialized[1, 64], a, np.zeros(32, np.float32), 2, 33)
    assert [type(f) for f in faults] == [gk.BarrierDivergenceError]
    assert faults[0].loc.lineno == line_of(specialized, "# emptied")
    assert "phase 0 still expects 1 arrival(s)" in str(faults[0]) and "would hang" in str(faults[0])


@gk.kernel
def scale_through_tma(a: Array[float32, 2], out: Array[float32, 2], WAIT: Const[bool]):
    """Each block loads a 16 x 32 box of a, doubles it in shared memory and stores it with TMA into
    the same place of out (past out's edges nothing is written); then it reuses the tile."""
    tile = gk.shared(float32, (16, 32))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (16, 32))
    omap = gk.tensor_map(out, (16, 32))
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    r0 = gk.block_idx.y * 16
    c0 = gk.block_idx.x * 32
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        gk.tma_load(tile[0, 0], amap, (r0, c0), bars[0])
    gk.mbarrier_wait(bars[0], 0)
    v0 = tile[t // 32, t % 32] * 2
    v1 = tile[t // 32 + 8, t % 32] * 2
    gk.barrier()
    tile[t // 32, t % 32] = v0
    tile[t // 32 + 8, t % 32] = v1
    gk.fence_proxy_async()  # the tile's writes seen by the TMA unit
    gk.barrier()
    if t == 0:
        gk.tma_store(omap, (r0, c0), tile[0, 0])
        gk.tma_store_commit()
        if WAIT:
            gk.tma_store_wait(0, read=True)
    gk.barrier()
    tile[t // 32, t % 32] = 0.0  # reused


def test_a_tma_store_writes_only_inside_the_array(backend):
    need_sm90(backend, "TMA")
    a = np.random.default_rng(5).random((40, 68)).astype(np.float32)
    out = gk.to_device(np.full((40, 68), -1, np.float32))
    scale_through_tma[(3, 3), 256](gk.to_device(a), out, True)
    np.testing.assert_array_equal(out.get(), a * 2)


def test_a_tile_written_while_a_tma_store_reads_it_is_a_race():
    a = np.ones((16, 32), np.float32)
    faults = gk.sanitize(scale_through_tma[1, 256], a, np.zeros((16, 32), np.float32), False)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(scale_through_tma, "# reused")
    assert "may still be reading: that thread's tma_store_wait(read=True)" in str(faults[0])
    assert gk.sanitize(scale_through_tma[1, 256], a, np.zeros((16, 32), np.float32), True) == []


@gk.kernel
def one_warpgroup_multiplies(a: Array[gk.float16, 2], c: Array[float32, 2]):
    """Warpgroup 1 of 2 stages A (64 x 64, swizzled) and multiplies it by itself transposed; warpgroup
    0 does nothing: a branch on the warpgroup's number around wgmma (warp specialization)."""
    s = gk.shared(gk.float16, 4096)
    t = gk.thread_idx.x
    if t // 128 == 1:
        for e in range(t - 128, 4096, 128):
            s[gk.swizzle128(e // 64, e % 64, 64, 8)] = a[e // 64, e % 64]
    gk.barrier()
    if t // 128 == 1:
        acc = gk.fragment("accumulator", 64, 64, 16, float32)
        gk.fill_fragment(acc, 0.0)
        for kk in gk.unroll(range(0, 64, 16)):
            acc = gk.wgmma(acc, s, kk, s, kk)
        gk.wgmma_commit()
        gk.wgmma_wait(0)
        gk.store_matrix(c, (0, 0), acc)


def test_a_branch_on_the_warpgroup_number_keeps_wgmma(backend):
    need_sm90(backend, "TMA")
    a = (np.random.default_rng(7).integers(-4, 4, (64, 64))).astype(np.float16)
    c = gk.to_device(np.zeros((64, 64), np.float32))
    one_warpgroup_multiplies[1, 256](gk.to_device(a), c)
    np.testing.assert_array_equal(c.get(), a.astype(np.float64) @ a.astype(np.float64).T)


def test_a_branch_that_splits_a_warpgroup_is_refused():
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import Array, float32\n\n@gk.kernel\n"
        "def k(c: Array[float32, 2]):\n    s = gk.shared(gk.float16, 4096)\n"
        "    acc = gk.fragment('accumulator', 64, 64, 16, float32)\n"
        "    if gk.thread_idx.x // 64 == 0:\n        acc = gk.wgmma(acc, s, 0, s, 0)\n"
    )
    with pytest.raises(gk.KernelTypeError, match="(?s)warpgroup-collective.*thread_idx.x // 128"):
        k.source(Array[float32, 2])


# ---------------------------------------------------------------- what the simulator reports
@gk.kernel
def misuse(a: Array[float32, 2], out: Array[float32, 2], bug: Const[int]):
    tile = gk.shared(float32, (16, 32))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (16, 32))
    t = gk.thread_idx.x
    if t == 0 and bug != 1:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    if bug != 2:
        gk.barrier()
    if t == 0 and bug != 3:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap) + (4 if bug == 4 else 0))  # expect
        gk.tma_load(tile[0, 0], amap, (0, 0), bars[0])
    if bug == 5:
        gk.mbarrier_arrive(bars[0])  # arrive
    if bug != 6:
        gk.mbarrier_wait(bars[0], 0)  # wait
    out[t // 32, t % 32] = tile[t // 32, t % 32]  # read


@pytest.mark.parametrize(
    "bug, error, at, says",
    [
        (1, gk.UninitializedReadError, "# expect", r"uses mbarrier bars\[0\], which no thread has initialised"),
        (2, gk.DataRaceError, "# wait", r"before a barrier\(\) after block \(0, 0, 0\), thread \(0, 0, 0\) init"),
        (3, gk.BarrierDivergenceError, "# wait", r"phase 0 still expects 1 arrival\(s\) and 0 byte\(s\).*would hang"),
        (4, gk.BarrierDivergenceError, "# wait", r"still expects 0 arrival\(s\) and 4 byte\(s\)"),
        (5, gk.BarrierDivergenceError, "# arrive", r"128 thread\(s\) arrive at mbarrier bars\[0\], whose phase 1"),
        (6, gk.DataRaceError, "# read", r"reads 'tile' element .* before it has waited for that phase"),
    ],
)
def test_each_misuse_is_reported_at_its_line(bug, error, at, says):
    a = np.ones((16, 32), np.float32)
    faults = gk.sanitize(misuse[1, 128], a, np.zeros((4, 32), np.float32), bug)
    assert faults, "nothing reported"
    assert type(faults[0]) is error, faults
    assert faults[0].loc.lineno == line_of(misuse, at)
    assert re.search(says, str(faults[0])), str(faults[0])
    assert gk.sanitize(misuse[1, 128], a, np.zeros((4, 32), np.float32), 0) == []


@gk.kernel
def two_barrier_arrays(a: Array[float32, 2], out: Array[float32, 2], wait_second: Const[int]):
    """Two copies into one shared array, completing on barriers of two arrays (attention's Q and K)."""
    tile = gk.shared(float32, (32, 32))
    first = gk.shared(gk.mbarrier, 1)
    second = gk.shared(gk.mbarrier, 2)
    amap = gk.tensor_map(a, (16, 32))
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(first[0], 1)
        gk.mbarrier_init(second[1], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(first[0], gk.box_bytes(amap))
        gk.tma_load(tile[0, 0], amap, (0, 0), first[0])
        gk.mbarrier_arrive_expect_tx(second[1], gk.box_bytes(amap))
        gk.tma_load(tile[16, 0], amap, (16, 0), second[1])
    gk.mbarrier_wait(first[0], 0)
    out[t // 32, t % 32] = tile[t // 32, t % 32]  # the first copy's
    if wait_second:
        gk.mbarrier_wait(second[1], 0)
    out[16 + t // 32, t % 32] = tile[16 + t // 32, t % 32]  # the second's


def test_copies_completing_on_barriers_of_two_arrays():
    """Each element remembers its own barrier's array: a read of the first copy after waiting for
    ``first[0]`` is in order (element 0 is not taken for ``second[0]``'s), a read of the second
    before waiting for ``second[1]`` is reported naming it."""
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros((32, 32), np.float32)
    assert gk.sanitize(two_barrier_arrays[1, 512], a, out, 1) == []
    np.testing.assert_array_equal(out, a)
    faults = gk.sanitize(two_barrier_arrays[1, 512], a, out, 0)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert "mbarrier second[1]" in str(faults[0])
    assert faults[0].loc.lineno == line_of(two_barrier_arrays, "# the second")


@gk.kernel
def past_the_end(a: Array[float32, 2], out: Array[float32]):
    tile = gk.shared(float32, (8, 32))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (16, 32))
    if gk.thread_idx.x == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        gk.tma_load(tile[0, 0], amap, (0, 0), bars[0])  # too small


def test_a_box_larger_than_its_tile_is_out_of_bounds():
    faults = gk.sanitize(past_the_end[1, 32], np.ones((16, 32), np.float32), np.zeros(1, np.float32))
    assert [type(f) for f in faults] == [gk.OutOfBoundsError]
    assert "runs past the end of 'tile' (256 elements)" in str(faults[0])
    assert faults[0].loc.lineno == line_of(past_the_end, "# too small")


# ---------------------------------------------------------------- refusals
@gk.kernel
def barriers_only(out: Array[float32]):
    bars = gk.shared(gk.mbarrier, 2)  # declared, never used  # noqa: F841
    out[0] = 1.0


def test_a_declaration_alone_is_refused_where_there_are_no_mbarriers():
    with pytest.raises(gk.CompileError, match="cannot be compiled to opencl") as e:
        barriers_only.source(Array[float32], backend="opencl")
    assert e.value.loc.lineno == line_of(barriers_only, "declared, never used")
    assert "__shared__ unsigned long long bars[2];" in barriers_only.source(Array[float32])  # (8-byte aligned)


def test_other_dialects_refuse():
    for dialect in ("opencl", "hip"):
        with pytest.raises(gk.CompileError, match=f"cannot be compiled to {dialect}: it needs NVIDIA sm_90's"):
            copy_boxes.source(Array[float32, 2], Array[float32, 2], 16, 32, backend=dialect)


@pytest.mark.parametrize(
    "body, match",
    [
        ("x = bars[0]", "holds mbarriers, which are not read or written as numbers"),
        ("bars[0] = 1", "holds mbarriers, which are not read or written as numbers"),
        ("gk.mbarrier_init(tile[0, 0], 1)", r"takes an mbarrier as an element of a shared array of them"),
        ("gk.mbarrier_init(bars[0], 2**20)", "is an integer from 0 to 1048575"),
        ("m = gk.tensor_map(a, (16, 300))", r"each of a box's sizes is 1 to 256 elements"),
        ("m = gk.tensor_map(a, (16, 3))", "a multiple of 16 bytes; 3 elements are 12"),
        ("m = gk.tensor_map(a, (16, 64), swizzle=128)", "at most 128 bytes; 64 elements are 256"),
        ("m = gk.tensor_map(a, (16, 32), swizzle=48)", "swizzle is one of 0, 32, 64, 128"),
        ("m = gk.tensor_map(tile, (16, 32))", "describes one of the kernel's array arguments as a whole"),
        ("gk.tma_load(tile[0, 0], gk.tensor_map(a, (16, 32)), (0,), bars[0])", "as 2 coordinates"),
        ("gk.tma_load(a[0, 0], gk.tensor_map(a, (16, 32)), (0, 0), bars[0])", "between a global array and a shared"),
    ],
)
def test_refusals(body, match):
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import Array, float32\n\n@gk.kernel\n"
        "def k(a: Array[float32, 2]):\n"
        "    tile = gk.shared(float32, (16, 32))\n    bars = gk.shared(gk.mbarrier, 1)\n"
        f"    {body}\n"
    )
    with pytest.raises(gk.KernelTypeError, match=match):
        k.source(Array[float32, 2])


def test_the_cuda_names_the_ptx():
    src = ring.source(Array[float32, 2], Array[float32], 2)
    assert "const __grid_constant__ gk_tensor_map a_map" in src
    assert "gk_tma_load_2d(&tiles[s][0][0], &a_map, 0, (int)(8LL * (k + 2LL)), &bars[s]);" in src
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    assert "__shared__ __align__(1024) unsigned long long bars[2];" in src


@needs_nvcc
def test_the_cuda_compiles_for_sm90():
    for k, args in ((ring, (Array[float32, 2], Array[float32], 3)), (swizzled, (Array[float16, 2], Array[float16, 2]))):
        assert nvcc_compile(k.source(*args), "sm_90")


def test_tensor_maps_are_parameters_after_their_array():
    v = copy_boxes.specialise(Array[float32, 2], Array[float32, 2], 16, 32)
    kinds = [(p.kind, p.name, p.arg_index) for p in v.kernel_params]
    assert kinds[:3] == [("array", "a", 0), ("shape", "a", 0), ("tensor_map", "a_map", 0)]
    assert v.kernel_params[2].map.box == (16, 32) and v.kernel_params[2].map.array.name == "a"


# ---------------------------------------------------------------- plain bulk copies
@gk.kernel
def bulk_double(a: Array[float32], out: Array[float32], N: Const[int], OFFSET: int32):
    """Each block copies N elements of a (from its N-element chunk on, plus OFFSET) into shared memory
    with one bulk copy, doubles them and writes them back to out with a bulk store."""
    buf = gk.shared(float32, N)
    bars = gk.shared(gk.mbarrier, 1)
    t = gk.thread_idx.x
    base = gk.block_idx.x * N
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], N * 4)
        gk.bulk_load(buf[0], a[base + OFFSET], N, bars[0])  # load
    gk.mbarrier_wait(bars[0], 0)
    v = buf[t] * 2
    gk.barrier()
    buf[t] = v
    gk.fence_proxy_async()
    gk.barrier()
    if t == 0:
        gk.bulk_store(out[base], buf[0], N)
        gk.tma_store_commit()
        gk.tma_store_wait(0)


def test_bulk_copies_move_contiguous_elements(backend):
    need_sm90(backend, "TMA")
    a = np.random.default_rng(2).random(3 * 64).astype(np.float32)
    out = gk.to_device(np.zeros(3 * 64, np.float32))
    bulk_double[3, 64](gk.to_device(a), out, 64, 0)
    np.testing.assert_array_equal(out.get(), a * 2)
    if backend == "sim":
        assert gk.sanitize(bulk_double[3, 64], a, np.zeros(3 * 64, np.float32), 64, 0) == []


@gk.kernel
def bulk_refill(a: Array[float32], out: Array[float32], N: Const[int], EARLY: Const[bool]):
    """Two of a's N-element chunks through one shared buffer: thread 0 starts the second copy once
    every thread has read the first (EARLY: before, a race on a GPU)."""
    buf = gk.shared(float32, N)
    bars = gk.shared(gk.mbarrier, 1)
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
        gk.mbarrier_arrive_expect_tx(bars[0], N * 4)
        gk.bulk_load(buf[0], a[0], N, bars[0])
    gk.barrier()
    gk.mbarrier_wait(bars[0], 0)
    v = buf[t]
    if not EARLY:
        gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], N * 4)
        gk.bulk_load(buf[0], a[N], N, bars[0])  # refill
    out[t] = v
    gk.mbarrier_wait(bars[0], 1)
    out[N + t] = buf[t]


@pytest.mark.parametrize("threads", [64, 32])
def test_a_bulk_copy_over_elements_others_still_read_is_reported(threads):
    """(64 threads: as many as the copy's elements, which the race tracker once took for one element a
    thread, finding nothing.)"""
    a = np.arange(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    assert gk.sanitize(bulk_refill[1, 64], a, out, 64, False) == []
    faults = gk.sanitize(bulk_refill[1, threads], a, out, 64, True)
    assert [type(f) for f in faults][:1] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(bulk_refill, "# refill") and "read it" in str(faults[0])


def test_a_misaligned_bulk_copy_is_reported():
    faults = gk.sanitize(bulk_double[2, 32], np.ones(80, np.float32), np.zeros(64, np.float32), 32, 2)
    assert [type(f) for f in faults][:1] == [gk.MisalignedAccessError]
    assert faults[0].loc.lineno == line_of(bulk_double, "# load")
    assert "multiples of 16 bytes" in str(faults[0])


def test_a_bulk_copy_past_the_array_is_reported():
    faults = gk.sanitize(bulk_double[2, 32], np.ones(64, np.float32), np.zeros(64, np.float32), 32, 4)
    assert [type(f) for f in faults][:1] == [gk.OutOfBoundsError]
    assert "run past the end of 'a'" in str(faults[0])


def test_a_bulk_copy_of_a_size_off_16_bytes_is_refused():
    with pytest.raises(gk.KernelTypeError, match="positive multiple of 16 bytes: 3 elements of 4 bytes are 12"):
        bulk_double.source(Array[float32], Array[float32], 3, int32)


def test_bulk_copies_spell_the_ptx():
    src = bulk_double.source(Array[float32], Array[float32], 64, int32)
    assert "gk_bulk_load(&buf[0], &a[base + OFFSET], 64u * 4u, &bars[0]);" in src
    assert "gk_bulk_store(&out[base], &buf[0], 64u * 4u);" in src
    # every barrier() of a kernel with copies fences the async proxy first: the threads' shared reads
    # and writes before it are ordered before a copy after it (a refill of a buffer just read)
    barriers = [line for line in src.splitlines() if "__syncthreads();" in line]
    assert len(barriers) == 3
    fenced = 'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory"); __syncthreads();'
    assert all(fenced in b for b in barriers)
    plain = [line for line in copy_free_barrier.source(Array[float32]).splitlines() if "__syncthreads();" in line]
    assert plain and not any("fence.proxy" in line for line in plain)


@gk.kernel
def copy_free_barrier(a: Array[float32]):
    """A barrier in a kernel without copies or wgmma: no proxy fence."""
    s = gk.shared(float32, 32)
    s[gk.thread_idx.x] = a[gk.thread_idx.x]
    gk.barrier()
    a[gk.thread_idx.x] = s[31 - gk.thread_idx.x]


@needs_nvcc
def test_nvcc_compiles_bulk_copies():
    nvcc_compile(bulk_double.source(Array[float32], Array[float32], 64, int32, line_directives=True), "sm_90")


def test_a_box_off_a_16_byte_column_is_reported():
    """On the H200 a TMA box whose first column is not on a 16-byte boundary stops the kernel with an
    illegal instruction (measured: columns 1, 2, 6 and -2 of float32 rows did, 4, 8 and 12 did not)."""
    a = np.ones((40, 68), np.float32)
    faults = gk.sanitize(copy_boxes[(1, 1), 128], a, np.zeros((48, 96), np.float32), 16, 32)
    assert faults == []
    k = load_kernel(_SHIFTED)
    faults = gk.sanitize(k[1, 32], a, 2)
    assert [type(f) for f in faults] == [gk.MisalignedAccessError]
    assert "column 2 of the array, byte 8 of its row" in str(faults[0])
    assert gk.sanitize(k[1, 32], a, 4) == []


_SHIFTED = """
import gpukern as gk
from gpukern import Array, float32, int32

@gk.kernel
def k(a: Array[float32, 2], c: int32):
    tile = gk.shared(float32, (4, 32))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (4, 32))
    if gk.thread_idx.x == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.barrier()
    if gk.thread_idx.x == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        gk.tma_load(tile[0, 0], amap, (0, c), bars[0])
    gk.mbarrier_wait(bars[0], 0)
"""
