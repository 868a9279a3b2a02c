"""Thread-block clusters (gpukern.language.cluster): cluster_dims, cluster_rank/size, cluster_barrier
and distributed shared memory (peer).  Results on the simulator and on an sm_90 GPU against NumPy,
each misuse the simulator reports at its line, the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from compilers import need_sm90, needs_nvcc
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, Const, float32, int32
from gpukern.backends.cuda_compile import nvcc_compile


@gk.kernel
def cluster_sums(a: Array[float32], out: Array[float32], CLUSTER: Const[int], SYNC: Const[bool], LAST: Const[bool]):
    """Each block puts its 128 elements of a in shared memory; the block of rank 0 of each cluster adds
    the cluster's blocks' through distributed shared memory (SYNC: after a cluster barrier; LAST: a
    cluster barrier keeps the peers until they are read)."""
    gk.cluster_dims(CLUSTER)
    part = gk.shared(float32, 128)
    t = gk.thread_idx.x
    b = gk.block_idx.x
    gk.cluster_barrier()  # every block of the cluster has started
    part[t] = a[b * 128 + t]
    if SYNC:
        gk.cluster_barrier()
    if gk.cluster_rank() == 0:
        acc = float32(0)
        for r in range(gk.cluster_size()):
            acc += gk.peer(part, r)[t]  # read the peers
        out[(b // CLUSTER) * 128 + t] = acc
    if LAST:
        gk.cluster_barrier()


@pytest.mark.parametrize("cluster, blocks", [(2, 4), (4, 8)])
def test_a_cluster_adds_its_blocks_through_distributed_shared_memory(backend, cluster, blocks):
    need_sm90(backend, "clusters")
    a = np.random.default_rng(cluster).integers(-50, 50, blocks * 128).astype(np.float32)
    out = gk.to_device(np.zeros(blocks // cluster * 128, np.float32))
    cluster_sums[blocks, 128](gk.to_device(a), out, cluster, True, True)
    np.testing.assert_array_equal(out.get(), a.reshape(-1, cluster, 128).sum(axis=1).ravel())
    if backend == "sim":
        assert gk.sanitize(cluster_sums[blocks, 128], a, np.zeros(blocks // cluster * 128, np.float32),
                           cluster, True, True) == []  # fmt: skip


def test_reading_a_peer_before_a_cluster_barrier_is_a_race():
    a = np.ones(4 * 128, np.float32)
    faults = gk.sanitize(cluster_sums[4, 128], a, np.zeros(256, np.float32), 2, False, True)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(cluster_sums, "# read the peers")
    assert "'part'" in str(faults[0])


def test_a_peer_read_with_no_cluster_barrier_after_it_may_find_the_block_gone():
    a = np.ones(4 * 128, np.float32)
    faults = gk.sanitize(cluster_sums[4, 128], a, np.zeros(256, np.float32), 2, True, False)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(cluster_sums, "# read the peers")
    assert "may have exited" in str(faults[0])


@gk.kernel
def rotate(a: Array[int32], out: Array[int32], STARTED: Const[bool] = True):
    """Each block writes its 64 elements into the next block's shared memory (round its cluster of 4),
    once every block of the cluster has started (STARTED: a cluster barrier says so)."""
    gk.cluster_dims(2, 2)
    buf = gk.shared(int32, 64)
    t = gk.thread_idx.x
    b = gk.block_idx.x + gk.block_idx.y * gk.grid_dim.x
    n = gk.cluster_size()
    if STARTED:
        gk.cluster_barrier()
    gk.peer(buf, (gk.cluster_rank() + 1) % n)[t] = a[b * 64 + t]  # the next block's
    gk.cluster_barrier()
    out[b * 64 + t] = buf[t]


def test_blocks_write_each_others_shared_memory(backend):
    need_sm90(backend, "clusters")
    a = np.arange(16 * 64, dtype=np.int32)
    out = gk.to_device(np.zeros_like(a))
    rotate[(4, 4), 64](gk.to_device(a), out)
    got = out.get().reshape(4, 4, 64)  # [by, bx, t]
    blocks = a.reshape(4, 4, 64)
    for by in range(4):
        for bx in range(4):
            rank = bx % 2 + (by % 2) * 2
            src = (rank - 1) % 4  # the block that wrote into this one
            sy, sx = by - by % 2 + src // 2, bx - bx % 2 + src % 2
            np.testing.assert_array_equal(got[by, bx], blocks[sy, sx])


def test_a_peer_written_before_the_first_cluster_barrier_may_not_have_started():
    """CUDA's programming guide: a cluster's blocks are known to run only after a cluster barrier (its
    DSMEM example begins with cluster.sync()); on the H200 a kernel writing peers before it failed to
    launch ("unspecified launch failure", examples/rowwise.py at clusters of 4, session 18)."""
    a = np.arange(16 * 64, dtype=np.int32)
    assert gk.sanitize(rotate[(4, 4), 64], a, np.zeros_like(a), True) == []
    faults = gk.sanitize(rotate[(4, 4), 64], a, np.zeros_like(a), False)
    assert [type(f) for f in faults] == [gk.DataRaceError]
    assert faults[0].loc.lineno == line_of(rotate, "# the next block's")
    assert "may not have started" in str(faults[0]) and "before the cluster's first cluster_barrier()" in str(faults[0])


def test_the_cuda_source_spells_the_ptx():
    src = cluster_sums.source(Array[float32], Array[float32], 2, True, True)
    for text in ("__cluster_dims__(2, 1, 1)", "mapa.u64", "barrier.cluster.arrive.release.aligned",
                 "%%cluster_ctarank", "(*gk_peer(&part[t], (unsigned int)r))"):  # fmt: skip
        assert text in src, text


@needs_nvcc
def test_nvcc_compiles_it_for_sm_90():
    nvcc_compile(rotate.source(Array[int32], Array[int32], line_directives=True), "sm_90")


def test_a_grid_of_part_of_a_cluster_is_refused_at_launch():
    with pytest.raises(gk.LaunchError, match=r"not a whole number of clusters of \(2, 1, 1\)"):
        cluster_sums[3, 128](np.ones(3 * 128, np.float32), np.zeros(256, np.float32), 2, True, True)


_HEADER = "import gpukern as gk\nfrom gpukern import Array, int32\n"


@pytest.mark.parametrize(
    "body, match",
    [
        ("gk.cluster_dims(4, 8)", "at most 16 blocks"),
        ("gk.cluster_dims(0)", "positive integers"),
        ("x = gk.peer(out, 1)[0]", "takes one of the kernel's shared arrays"),
        ("x = gk.peer(buf, 9)[0]", "rank in its cluster is 0 to 1"),
        ("if gk.cluster_rank() == 0: gk.cluster_barrier()", "cluster_barrier"),
        ("if gk.block_idx.x // 3 == 0: gk.cluster_barrier()", "depends on the thread"),  # (3: not whole clusters)
        ("if gk.block_idx.x % 2 == 0: gk.cluster_barrier()", "depends on the thread"),
    ],
)
def test_bad_uses_are_refused_at_the_line(body, match):
    src = f"""{_HEADER}
@gk.kernel
def k(out: Array[int32]):
    gk.cluster_dims(2)
    buf = gk.shared(int32, 32)
    {body}
    out[0] = 1
"""
    with pytest.raises(gk.GpukernError, match=match) as e:
        load_kernel(src).source(Array[int32])
    assert e.value.loc.lineno == src.splitlines().index(f"    {body}") + 1


@gk.kernel
def cluster_rows(a: Array[float32, 2], out: Array[float32, 2]):
    """A persistent kernel: each cluster of 2 blocks loops over rows (its number's, then every
    (the grid's clusters)-th), its blocks adding their halves of a row through distributed shared memory.
    The loop's bounds differ between clusters but not within one: its cluster_barrier()s are accepted."""
    gk.cluster_dims(2)
    sums = gk.shared(float32, (2, 2))  # (a set per row parity: a fast block's next row writes the other)
    t = gk.thread_idx.x
    rank = gk.block_idx.x % 2
    gk.cluster_barrier()
    k = 0
    for row in range(gk.block_idx.x // 2, a.shape[0], gk.grid_dim.x // 2):
        if t == 0:
            for r in range(2):
                gk.peer(sums, r)[k % 2, rank] = a[row, rank]
        gk.cluster_barrier()
        if t == 0:
            out[row, rank] = sums[k % 2, 0] + sums[k % 2, 1]
        k += 1


def test_a_cluster_barrier_in_a_loop_over_clusters_is_accepted(on_simulator):
    a = np.random.default_rng(4).random((7, 2)).astype(np.float32)
    out = gk.to_device(np.zeros_like(a))
    cluster_rows[6, 32](gk.to_device(a), out)  # (3 clusters for 7 rows)
    np.testing.assert_allclose(out.get(), np.repeat(a.sum(axis=1, keepdims=True), 2, axis=1), rtol=1e-6)
    assert gk.sanitize(cluster_rows[6, 32], a, np.zeros_like(a)) == []


@gk.kernel
def far_peer(out: Array[int32], R: int32):
    gk.cluster_dims(2)
    buf = gk.shared(int32, 32)
    buf[gk.thread_idx.x] = 1
    gk.cluster_barrier()
    out[gk.block_idx.x * 32 + gk.thread_idx.x] = gk.peer(buf, R)[gk.thread_idx.x]  # rank R
    gk.cluster_barrier()


def test_a_rank_outside_the_cluster_is_reported():
    assert gk.sanitize(far_peer[2, 32], np.zeros(64, np.int32), 1) == []
    faults = gk.sanitize(far_peer[2, 32], np.zeros(64, np.int32), 2)
    assert [type(f) for f in faults] == [gk.OutOfBoundsError]
    assert faults[0].loc.lineno == line_of(far_peer, "# rank R")
    assert "rank 2 of its cluster, which has 2 blocks" in str(faults[0])


def test_other_dialects_refuse():
    for dialect in ("opencl", "hip"):
        with pytest.raises(gk.CompileError, match=r"cannot be compiled to " + dialect):
            rotate.source(Array[int32], Array[int32], backend=dialect)


# ---------------------------------------------------------------- TMA multicast
@gk.kernel
def multicast_rows(a: Array[float32, 2], out: Array[float32, 2], MASK: Const[int]):
    """The block of rank 0 of each cluster of 2 loads one 8 x 32 box of a, multicast into both blocks'
    tiles (MASK); each block copies its tile into its own rows of out."""
    gk.cluster_dims(2)
    tile = gk.shared(float32, (8, 32))
    bars = gk.shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (8, 32))
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.cluster_barrier()  # every block's barrier initialised before the copies
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bars[0], gk.box_bytes(amap))
        if gk.cluster_rank() == 0:
            gk.tma_load(tile[0, 0], amap, (8 * (gk.block_idx.x // 2), 0), bars[0], multicast=MASK)
    gk.mbarrier_wait(bars[0], 0)  # landed
    for r in range(8):
        out[gk.block_idx.x * 8 + r, t] = tile[r, t]


def test_a_multicast_box_lands_in_every_block_of_the_mask(backend):
    need_sm90(backend, "clusters")
    a = np.random.default_rng(3).random((16, 32)).astype(np.float32)
    out = gk.to_device(np.zeros((32, 32), np.float32))
    multicast_rows[4, 32](gk.to_device(a), out, 0b11)
    np.testing.assert_array_equal(out.get(), np.repeat(a.reshape(2, 8, 32), 2, axis=0).reshape(32, 32))
    if backend == "sim":
        assert gk.sanitize(multicast_rows[4, 32], a, np.zeros((32, 32), np.float32), 0b11) == []


def test_a_block_left_out_of_the_mask_waits_forever():
    a = np.ones((16, 32), np.float32)
    faults = gk.sanitize(multicast_rows[4, 32], a, np.zeros((32, 32), np.float32), 0b01)
    assert [type(f) for f in faults][:1] == [gk.BarrierDivergenceError]  # (then: its tile is never written)
    assert faults[0].loc.lineno == line_of(multicast_rows, "# landed")
    assert "would hang" in str(faults[0])


def test_a_mask_past_the_cluster_is_reported():
    a = np.ones((16, 32), np.float32)
    faults = gk.sanitize(multicast_rows[4, 32], a, np.zeros((32, 32), np.float32), 0b111)
    assert gk.OutOfBoundsError in [type(f) for f in faults]
    assert "its cluster has 2 blocks" in str(next(f for f in faults if isinstance(f, gk.OutOfBoundsError)))


def test_multicast_spells_the_ptx():
    src = multicast_rows.source(Array[float32, 2], Array[float32, 2], 3)
    assert "multicast::cluster" in src and "gk_tma_load_mc_2d(" in src and "(unsigned short)(3u)" in src


@needs_nvcc
def test_nvcc_compiles_multicast():
    nvcc_compile(multicast_rows.source(Array[float32, 2], Array[float32, 2], 3, line_directives=True), "sm_90")


# ---------------------------------------------------------------- store_async
@gk.kernel
def swap_halves(a: Array[float32], out: Array[float32], MODE: Const[int] = 0):
    """Each block of a pair stores its four elements into the other's shared memory by store_async
    (two pieces of two), completing on the other's mbarrier, and writes what it received.  MODE 1
    reads before waiting; 2 never waits (nor reads); 3 stores one piece into its own memory; 4 stores a
    piece into the peer's memory but completes it on its own mbarrier."""
    gk.cluster_dims(2)
    got = gk.shared(float32, 4)
    bars = gk.shared(gk.mbarrier, 1)
    t = gk.thread_idx.x
    rank = gk.cluster_rank()
    other = 1 - rank
    if t == 0:
        gk.mbarrier_init(bars[0], 1)
        gk.fence_mbarrier_init()
    gk.cluster_barrier()
    if t == 0:
        if MODE != 2:
            gk.mbarrier_arrive_expect_tx(bars[0], 16)
        gk.store_async(gk.peer(got, other)[0], (a[rank * 4], a[rank * 4 + 1]), gk.peer(bars, other)[0])
        if MODE == 3:
            gk.store_async(got[2], (a[rank * 4 + 2], a[rank * 4 + 3]), bars[0])  # own
        elif MODE == 4:  # (the data to the peer, the bytes counted on this block's barrier)
            gk.store_async(gk.peer(got, other)[2], (a[rank * 4 + 2], a[rank * 4 + 3]), gk.peer(bars, rank)[0])
        else:
            gk.store_async(gk.peer(got, other)[2], (a[rank * 4 + 2], a[rank * 4 + 3]), gk.peer(bars, other)[0])
    if MODE == 1 and t < 4:
        out[gk.block_idx.x * 4 + t] = got[t]  # early
    if MODE != 2:
        gk.mbarrier_wait(bars[0], 0)
    if MODE == 0 and t < 4:
        out[gk.block_idx.x * 4 + t] = got[t]


def test_store_async_fills_a_peers_shared_memory(backend):
    need_sm90(backend, "clusters")
    a = np.arange(8, dtype=np.float32) + 1
    out = gk.to_device(np.zeros(8, np.float32))
    swap_halves[2, 32](gk.to_device(a), out)
    np.testing.assert_array_equal(out.get(), np.r_[a[4:], a[:4]])
    if backend == "sim":
        assert gk.sanitize(swap_halves[2, 32], a, np.zeros(8, np.float32)) == []


@pytest.mark.parametrize(
    "mode, fault, words",
    [
        (1, gk.DataRaceError, "before it has waited for that phase"),
        (2, gk.DataRaceError, "never waits for phase 0"),
        (4, gk.OutOfBoundsError, "store_async's mbarrier is in the block it stores into"),
    ],
)
def test_store_async_misuses_are_reported(mode, fault, words):
    faults = gk.sanitize(swap_halves[2, 32], np.ones(8, np.float32), np.zeros(8, np.float32), mode)
    assert [type(f) for f in faults][:1] == [fault] and words in str(faults[0])


def test_store_async_completes_in_the_block_it_stores_into():
    """(A store into the block itself, completing on its own barrier, is fine: each block then gets 8
    of the 16 bytes it waits for from its peer and 8 from itself.)"""
    faults = gk.sanitize(swap_halves[2, 32], np.ones(8, np.float32), np.zeros(8, np.float32), 3)
    assert faults == []


_STORE_HEADER = "import gpukern as gk\nfrom gpukern import Array, float32, float64\n"


@pytest.mark.parametrize(
    "body, match",
    [
        ("gk.store_async(gk.peer(buf, 1)[0], (x, x, x), gk.peer(bars, 1)[0])", "1, 2 or 4 elements of 4 bytes"),
        ("gk.store_async(gk.peer(buf, 1)[0], x, bars[0])", "reach both through peer"),
        ("gk.store_async(out[0], x, bars[0])", "stores into an element of a shared array"),
        ("gk.store_async(gk.peer(buf, 1)[0], x, gk.peer(buf, 1)[1])", "takes an mbarrier as an element"),
        ("gk.store_async(gk.peer(wide, 1)[0], (y, y, y, y), gk.peer(bars, 1)[0])", "not 4 of float64"),
    ],
)
def test_store_async_is_refused_at_the_line(body, match):
    src = f"""{_STORE_HEADER}
@gk.kernel
def k(out: Array[float32]):
    gk.cluster_dims(2)
    buf = gk.shared(float32, 8)
    wide = gk.shared(float64, 8)
    bars = gk.shared(gk.mbarrier, 1)
    x = out[1]
    y = float64(x)
    {body}
"""
    with pytest.raises(gk.KernelTypeError, match=match) as e:
        load_kernel(src).source(Array[float32])
    assert e.value.loc.lineno == src.splitlines().index(f"    {body}") + 1


def test_store_async_spells_the_ptx_and_its_waits_acquire_at_cluster_scope():
    src = swap_halves.source(Array[float32], Array[float32], 0)
    for text in (
        "gk_st_async(&got[0], (unsigned int)other, &bars[0], a[rank * 4], a[rank * 4 + 1]);",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes",
        "mapa.shared::cluster.u32",
        "gk_mbar_wait_cluster(&bars[0], 0u);",
    ):
        assert text in src, text
    plain = multicast_rows.source(Array[float32, 2], Array[float32, 2], 3)  # (no store_async: the CTA's waits)
    assert "gk_mbar_wait(&" in plain and "gk_mbar_wait_cluster(&" not in plain


@needs_nvcc
def test_nvcc_compiles_store_async():
    nvcc_compile(swap_halves.source(Array[float32], Array[float32], 0, line_directives=True), "sm_90")


def test_store_async_is_refused_by_other_dialects():
    with pytest.raises(gk.CompileError, match="cannot be compiled to opencl"):
        swap_halves.source(Array[float32], Array[float32], 0, backend="opencl")
