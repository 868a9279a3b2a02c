"""The simulator's 64-lane wavefronts (AMD CDNA's): warp intrinsics against a NumPy model of n lanes
(per thread, independently of gpukern.semantics.warp: test_warp's shuffle model and warps here)
at 32 and at 64 lanes, the warp example at both, and each report of code that assumes 32 lanes
(``gk.WarpWidthError``) at its line -- with kernels written for any width reported by none."""

from __future__ import annotations

import re

import numpy as np
import pytest
from kernel_source import line_of, load_example
from language.test_warp import source_lane  # the model of a shuffle, at n lanes

import gpukern as gk
from gpukern import Array, Const, bool_, float32, int32, uint32, uint64

LANES = [32, 64]


@pytest.fixture
def lanes64(monkeypatch):
    monkeypatch.setenv("GPUKERN_SIM_LANES", "64")


# ---------------------------------------------------------------- n lanes to a warp (the shuffle model: test_warp's)
def warps_of(count: int, tpb: int, n: int) -> list[list[int]]:
    """The global thread numbers of each warp: n consecutive threads of a block, the last partial."""
    starts = [s for b in range(0, count, tpb) for s in range(b, b + tpb, n)]
    return [list(range(s, min(s + n, (s // tpb + 1) * tpb))) for s in starts]


@gk.kernel
def shuffles(vals, b: Array[uint32], out, W: Const[int]):
    i = gk.global_id(0)
    out[0, i] = gk.shfl_sync(-1, vals[i], b[i], width=W)
    out[1, i] = gk.shfl_up_sync(-1, vals[i], b[i], width=W)
    out[2, i] = gk.shfl_down_sync(-1, vals[i], b[i], width=W)
    out[3, i] = gk.shfl_xor_sync(-1, vals[i], b[i], width=W)


@gk.kernel
def whole_warp(vals, b: Array[uint32], out):
    i = gk.global_id(0)
    out[i] = gk.shfl_sync(-1, vals[i], b[i], width=gk.warp_size())


@pytest.mark.parametrize("n", LANES)
@pytest.mark.parametrize("width", ["warp", 16, 4])
def test_shuffles_at_either_width(n, width):
    """Lane operands 0..69: past the warp too, where the lane operand's low bits are read."""
    rng = np.random.default_rng(n)
    tpb, nblocks = 128, 2
    count = tpb * nblocks
    vals = rng.standard_normal(count)
    b = rng.integers(0, 70, count)
    w = n if width == "warp" else width
    out = np.zeros((4, count))
    assert gk.sanitize(shuffles[nblocks, tpb], vals, b.astype(np.uint32), out, w, lanes=n) == []
    for k, mode in enumerate(["idx", "up", "down", "xor"]):
        want = [vals[g - g % tpb % n + source_lane(mode, g % tpb % n, int(b[g]), w, n)] for g in range(count)]
        np.testing.assert_array_equal(out[k], want, err_msg=f"{mode}, {n} lanes, width {w}")
    if width == "warp":
        got = np.zeros(count)
        assert gk.sanitize(whole_warp[nblocks, tpb], vals, b.astype(np.uint32), got, lanes=n) == []
        np.testing.assert_array_equal(got, out[0])


@gk.kernel
def votes(pred: Array[bool_], keys: Array[int32], out: Array[uint64, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.ballot(-1, pred[i])
    out[i, 1] = uint64(gk.vote_all(-1, pred[i]))
    out[i, 2] = uint64(gk.any_sync(-1, pred[i]))
    out[i, 3] = gk.activemask()
    out[i, 4] = gk.match_any_sync(-1, keys[i])
    out[i, 5] = uint64(gk.lane_id() + 1000 * gk.warp_size())
    out[i, 6] = uint64(gk.popc(gk.ballot(-1, pred[i])))


@pytest.mark.parametrize("n", LANES)
@pytest.mark.parametrize("tpb", [128, 96, 7])
def test_votes_ballot_match_at_either_width(n, tpb):
    """Whole warps, a partial last warp (96 = 64 + 32 at 64 lanes) and a block of one short warp."""
    rng = np.random.default_rng(tpb + n)
    nblocks = 2
    count = tpb * nblocks
    pred = rng.random(count) < 0.5
    keys = rng.integers(0, 3, count).astype(np.int32)
    out = np.zeros((count, 7), np.uint64)
    assert gk.sanitize(votes[nblocks, tpb], pred, keys, out, lanes=n) == []
    want = np.zeros_like(out)
    for w in warps_of(count, tpb, n):
        ballot = sum(1 << (g % tpb % n) for g in w if pred[g])
        for g in w:
            same = sum(1 << (h % tpb % n) for h in w if keys[h] == keys[g])
            want[g] = [ballot, all(pred[w]), any(pred[w]), sum(1 << (h % tpb % n) for h in w), same,
                       g % tpb % n + 1000 * n, bin(ballot).count("1")]  # fmt: skip
    np.testing.assert_array_equal(out, want)


@gk.kernel
def shared_through_syncwarp(out: Array[int32], sync: Const[bool]):
    buf = gk.shared(int32, 64)
    lane = gk.lane_id()
    buf[lane] = lane * 3
    if sync:
        gk.syncwarp()
    out[lane] = buf[(lane + 40) % gk.warp_size()]


def test_syncwarp_orders_the_whole_wavefront():
    """Lane 0 reads what lane 40 wrote: ordered by a syncwarp of the wavefront, a race without one."""
    out = np.zeros(64, np.int32)
    assert gk.sanitize(shared_through_syncwarp[1, 64], out, True, lanes=64) == []
    np.testing.assert_array_equal(out, (np.arange(64) + 40) % 64 * 3)
    faults = gk.sanitize(shared_through_syncwarp[1, 64], out, False, lanes=64)
    assert [type(f) for f in faults] == [gk.DataRaceError]


def test_the_warp_example_at_either_width(monkeypatch):
    """examples/reduce_warp.py says warp_size() and -1, never 32: right at 32 and at 64 lanes, and
    nothing reported at 64."""
    example = load_example("reduce_warp")
    x = np.random.default_rng(0).standard_normal(5000).astype(np.float32)
    for n in LANES:
        partial = np.zeros(8, np.float32)
        assert gk.sanitize(example.block_sum[8, 128], x, partial, len(x), 128, lanes=n) == []
        assert abs(partial.astype(np.float64).sum() - x.astype(np.float64).sum()) < 1e-3
        monkeypatch.setenv("GPUKERN_SIM_LANES", str(n))
        assert example.main(["--size", "20011", "--block", "64", "--backend", "sim", "--repeat", "1"]) == 0


# ---------------------------------------------------------------- what assumes 32 lanes
@gk.kernel
def sum32(x: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    v = x[i]
    off = 16
    while off > 0:
        v += gk.shfl_down_sync(-1, v, off)  # offsets
        off //= 2
    if gk.lane_id() == 0:
        out[i // gk.warp_size()] = v


@gk.kernel
def mask32(x: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    out[i] = gk.shfl_xor_sync(0xFFFFFFFF, x[i], 1)  # mask


@gk.kernel
def width32(x: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    out[i] = gk.shfl_xor_sync(-1, x[i], 1, 32)  # width


@gk.kernel
def loop32(x: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    s = float32(0)
    for k in range(32):
        s += gk.shfl_sync(-1, x[i], k)  # loop
    out[i] = s


@gk.kernel
def ballot32(x: Array[float32], out: Array[uint32]):
    i = gk.global_id(0)
    out[i] = gk.ballot(-1, x[i] > 0)  # ballot


@gk.kernel
def lanes_by_hand(x: Array[float32], out: Array[float32], how: Const[int]):
    t = gk.thread_idx.x
    v = gk.shfl_xor_sync(-1, x[t], 1)
    if how == 0:
        if t % 32 == 0:  # % 32
            out[t] = v
    elif how == 1:
        if gk.lane_id() == 0:
            out[t // 32] = v  # // 32
    elif how == 2:
        lane = t & 31  # & 31
        out[t] = v + lane
    elif how == 3:
        if gk.lane_id() == 0:
            out[t >> 5] = v  # >> 5
    else:
        w = t
        if w < 32:  # < 32
            out[t] = v


@gk.kernel
def tiles(x: Array[float32], out: Array[float32]):
    t = gk.thread_idx.x
    out[t] = x[t // 32 * 32 + t % 32]  # 32 is a tile's width here: no warp intrinsic


@pytest.mark.parametrize(
    "kernel, args, marker, says",
    [
        (sum32, (), "# offsets", r"offsets that reach 32 lanes only.*start from warp_size\(\) // 2"),
        (mask32, (), "# mask", r"lane 32.*passes mask 0x00000000ffffffff, which names lanes 0-31 only"),
        (width32, (), "# width", r"width 32 shuffles within halves of the wavefront: write width=warp_size\(\)"),
        (loop32, (), "# loop", r"read each of lanes 0-31 and none above.*loop to warp_size\(\)"),
        (ballot32, (), "# ballot", r"ballot\(\) is 0x[0-9a-f]{16}.*converted to uint32, its lanes 32-63 are lost"),
        (lanes_by_hand, (0,), "# % 32", r"computes a lane number with % 32, a 32-lane warp's: write lane_id\(\)"),
        (lanes_by_hand, (1,), "# // 32", r"computes a warp number with // 32.*write // warp_size\(\)"),
        (lanes_by_hand, (2,), "# & 31", r"computes a lane number with & 31"),
        (lanes_by_hand, (3,), "# >> 5", r"computes a warp number with >> 5"),
        (lanes_by_hand, (4,), "# < 32", r"compares a thread or lane number with 32.*compare with warp_size\(\)"),
    ],
)
def test_what_assumes_32_lanes_is_reported_at_its_line(kernel, args, marker, says):
    x = np.random.default_rng(1).standard_normal(128).astype(np.float32)
    out = np.zeros(128, np.uint32 if kernel is ballot32 else np.float32)
    assert gk.sanitize(kernel[1, 128], x, out.copy(), *args, lanes=32) == []  # right on 32-lane warps
    faults = gk.sanitize(kernel[1, 128], x, out.copy(), *args, lanes=64)
    assert [type(f) for f in faults] == [gk.WarpWidthError], faults
    assert faults[0].loc.lineno == line_of(kernel, marker)
    assert str(faults[0]).count("with 64-lane wavefronts") == 1
    assert re.search(says, str(faults[0])), str(faults[0])


def test_a_plain_launch_raises_it(lanes64):
    x = np.ones(128, np.float32)
    with pytest.raises(gk.WarpWidthError, match="offsets that reach 32 lanes only"):
        sum32[1, 128](x, np.zeros(2, np.float32), backend="sim")
    assert "64-lane wavefronts" in gk.get_backend("sim").device_name()


def test_32_as_a_tile_is_not_a_warp():
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    assert gk.sanitize(tiles[1, 128], x, out, lanes=64) == []
    np.testing.assert_array_equal(out, x)


@gk.kernel
def constants(out: Array[uint64]):
    i = gk.global_id(0)
    out[i] = gk.shfl_sync(-1, uint64(i), 0, 64) + gk.warp_size()


def test_the_language_at_64_lanes(lanes64):
    """warp_size() is 64, a width of 64 is a constant that fits, masks and ballots are uint64; at 32
    lanes (the compiled languages') a width of 64 is refused as CUDA refuses it."""
    out = np.zeros(128, np.uint64)
    constants[1, 128](out, backend="sim")
    np.testing.assert_array_equal(out, np.arange(128) // 64 * 64 + 64)
    with pytest.raises(gk.KernelTypeError, match="power of 2 from 1 to 32"):
        constants.source(Array[uint64])


def test_tensor_core_fragments_stay_at_32(lanes64):
    example = load_example("matmul_tensorcore")
    a = np.ones((16, 16), np.float16)
    with pytest.raises(gk.LaunchError, match="laid out over warps of 32 lanes;.*run it at 32 lanes"):
        example.hgemm[1, 32](a, a, np.zeros((16, 16), np.float32), 16, 16, 16, backend="sim")


def test_a_width_other_than_32_or_64_is_refused(monkeypatch):
    with pytest.raises(gk.LaunchError, match="lanes=48"):
        gk.sanitize(sum32[1, 64], np.ones(64, np.float32), np.zeros(1, np.float32), lanes=48)
    monkeypatch.setenv("GPUKERN_SIM_LANES", "16")
    with pytest.raises(gk.BackendError, match="GPUKERN_SIM_LANES='16'"):
        sum32[1, 64](np.ones(64, np.float32), np.zeros(1, np.float32), backend="sim")


def test_a_64_lane_variant_has_no_c():
    """The compiled languages' warps are 32 lanes: a variant made for the simulator's wavefronts is
    the simulator's only."""
    v = sum32.variant(sum32.signature_of((np.ones(64, np.float32), np.zeros(1, np.float32))), 64)
    with pytest.raises(gk.CompileError, match="64-lane wavefronts .* no C dialect runs"):
        v.source("cuda")
    assert v.program.lanes == 64
