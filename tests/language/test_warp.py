"""Warp intrinsics on every backend against a NumPy model of CUDA's semantics (written here, per
thread, independently of gpukern.semantics.warp); the simulator's mask faults; OpenCL's refusals."""

from __future__ import annotations

import numpy as np
import pytest
from compilers import needs_opencl
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, Const, bool_, float32, float64, int32, uint32

FULL = 0xFFFFFFFF
DTYPES = [np.int32, np.uint32, np.int64, np.float32, np.float64]


# ---------------------------------------------------------------- the model (CUDA's definition)
def source_lane(mode: str, lane: int, b: int, width: int, n: int = 32) -> int:
    """The lane a shuffle reads in a warp of ``n`` lanes, per the CUDA Programming Guide and PTX's
    shfl.sync (which reads the low 5 bits of b: a delta of 33 is a delta of 1; log2(n) bits of a
    wavefront of 64, ``tests/sim/test_wave64.py``)."""
    b %= n
    start = lane - lane % width
    if mode == "idx":
        return start + b % width
    if mode == "up":
        return lane - b if lane - b >= start else lane
    if mode == "down":
        return lane + b if lane + b < start + width else lane
    j = lane ^ b  # xor: later segments are out of reach
    return j if j < start + width else lane


def model_shuffle(mode: str, vals: np.ndarray, b: np.ndarray, width: int, tpb: int) -> np.ndarray:
    out = vals.copy()
    for g in range(len(vals)):
        lane = (g % tpb) % 32
        out[g] = vals[g - lane + source_lane(mode, lane, int(b[g]), width)]
    return out


def warps(n: int, tpb: int) -> list[list[int]]:
    """The global thread numbers of each warp (32 consecutive threads of a block)."""
    return [list(range(s, min(s + 32, (s // tpb + 1) * tpb))) for b in range(0, n, tpb) for s in range(b, b + tpb, 32)]


def bits(threads: list[int], tpb: int) -> int:
    """The mask of these threads' lanes."""
    return sum(1 << (g % tpb % 32) for g in threads)


# ---------------------------------------------------------------- kernels
MODES = ["idx", "up", "down", "xor"]


@gk.kernel
def shuffles(vals, b: Array[uint32], out, W: Const[int]):
    """Row k of out: mode MODES[k] with the lane operand b[i] and width W."""
    i = gk.global_id(0)
    out[0, i] = gk.shfl_sync(FULL, vals[i], b[i], width=W)
    out[1, i] = gk.shfl_up_sync(FULL, vals[i], b[i], width=W)
    out[2, i] = gk.shfl_down_sync(FULL, vals[i], b[i], width=W)
    out[3, i] = gk.shfl_xor_sync(FULL, vals[i], b[i], width=W)


def check_shuffles(vals: np.ndarray, b: np.ndarray, width: int, nblocks: int, tpb: int, what: str) -> None:
    out = np.zeros((4, len(vals)), vals.dtype)
    shuffles[nblocks, tpb](vals, b.astype(np.uint32), out, width)
    for k, mode in enumerate(MODES):
        np.testing.assert_array_equal(out[k], model_shuffle(mode, vals, b, width, tpb), err_msg=f"{mode} {what}")


def values(rng: np.random.Generator, dtype: type, n: int) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [32, 4])
def test_shuffles(backend, dtype, width):
    """Lane operands 0..39: past the warp too, where PTX reads b's low 5 bits."""
    rng = np.random.default_rng(7)
    tpb, nblocks = 64, 3
    n = tpb * nblocks
    check_shuffles(values(rng, dtype, n), rng.integers(0, 40, n), width, nblocks, tpb, backend)


@settings(deadline=None, max_examples=30)
@given(st.data())
def test_shuffles_property(data):
    """Any width and lane operand (up to 2**32 - 1), in blocks of 1 to 3 warps, on every backend,
    against the model (a 32- and a 64-bit type: test_shuffles has them all)."""
    width = data.draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    dtype = data.draw(st.sampled_from([np.int32, np.float64]))
    tpb, nblocks = 32 * data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    n = tpb * nblocks
    b = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 64), min_size=n, max_size=n)))
    vals = values(np.random.default_rng(data.draw(st.integers(0, 99))), dtype, n)
    for backend in gk.available_backends():
        gk.set_backend(backend)
        try:
            check_shuffles(vals, b, width, nblocks, tpb, backend)
        finally:
            gk.set_backend(None)


@gk.kernel
def votes(pred: Array[bool_], keys: Array[int32], out: Array[uint32, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.ballot(FULL, pred[i])
    out[i, 1] = uint32(gk.vote_all(FULL, pred[i]))
    out[i, 2] = uint32(gk.any_sync(FULL, pred[i]))
    out[i, 3] = gk.activemask()
    out[i, 4] = gk.match_any_sync(FULL, keys[i])
    out[i, 5] = uint32(gk.lane_id() + 100 * gk.warp_size())


@pytest.mark.parametrize("tpb", [64, 48, 7])
def test_votes_ballot_match(backend, tpb):
    """Full and partial last warps (48: a warp of 16; 7: a block of one short warp)."""
    rng = np.random.default_rng(tpb)
    nblocks = 3
    n = tpb * nblocks
    pred = rng.random(n) < 0.5
    pred[:tpb] = True  # the first block's warps vote all true
    keys = rng.integers(0, 3, n).astype(np.int32)
    out = np.zeros((n, 6), np.uint32)
    votes[nblocks, tpb](pred, keys, out)
    want = np.zeros_like(out)
    for w in warps(n, tpb):
        ballot = bits([g for g in w if pred[g]], tpb)
        for g in w:
            want[g] = [
                ballot,
                all(pred[w]),
                any(pred[w]),
                bits(w, tpb),
                bits([h for h in w if keys[h] == keys[g]], tpb),
                (g % tpb) % 32 + 3200,
            ]
    np.testing.assert_array_equal(out, want)


@gk.kernel
def match_floats(keys, out: Array[uint32]):
    i = gk.global_id(0)
    out[i] = gk.match_any(FULL, keys[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_match_any_compares_bits(backend, dtype):
    """NaN matches the same NaN, -0.0 does not match 0.0 (CUDA compares the values' bits)."""
    pool = [0.0, -0.0, np.nan, 1.5, -np.inf] if np.dtype(dtype).kind == "f" else [0, -1, 2**40, 7, -(2**40)]
    keys = np.array(pool, dtype)[np.random.default_rng(5).integers(0, 5, 64)]
    out = np.zeros(64, np.uint32)
    match_floats[2, 32](keys, out)
    bits = keys.view(np.uint32 if keys.itemsize == 4 else np.uint64)
    want = [sum(1 << h % 32 for h in range(g - g % 32, g - g % 32 + 32) if bits[h] == bits[g]) for g in range(64)]
    np.testing.assert_array_equal(out, want)


@gk.kernel
def uni_match_all(pred: Array[bool_], keys, out: Array[uint32, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.lanemask_lt()
    out[i, 1] = uint32(gk.eq_sync(FULL, pred[i]))
    lanes, same = gk.match_all(FULL, keys[i])
    out[i, 2] = lanes
    out[i, 3] = uint32(same)
    if gk.lane_id() < 16:
        m, p = gk.match_all_sync(0xFFFF, keys[i])
    else:
        m, p = gk.match_all_sync(0xFFFF0000, keys[i])
    out[i, 4] = m + uint32(p) * 7


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
@pytest.mark.parametrize("tpb", [64, 48, 7])
def test_lanemask_eq_sync_match_all(on_simulator, tpb, dtype):
    """Warps whose predicate / keys agree or not, full and partial (the second half-warp matches in
    half of the warps); match_all's lanes are those of the mask taking part. (Half-warps with their
    own masks: the simulator; test_match_all_every_backend has the full mask.)"""
    rng = np.random.default_rng(tpb)
    nblocks = 3
    n = tpb * nblocks
    pred = rng.random(n) < 0.5
    keys = rng.integers(0, 2, n).astype(dtype)
    for w in warps(n, tpb)[::2]:  # every other warp agrees
        pred[w], keys[w] = pred[w[0]], keys[w[0]]
    for w in warps(n, tpb)[1::2]:  # the others agree in their second half, where it exists
        keys[[g for g in w if g % tpb % 32 >= 16]] = -1
    out = np.zeros((n, 5), np.uint32)
    uni_match_all[nblocks, tpb](pred, keys, out)
    check_uni_match_all(pred, keys, out, tpb, halves=True)


def check_uni_match_all(pred: np.ndarray, keys: np.ndarray, out: np.ndarray, tpb: int, halves: bool) -> None:
    want = np.zeros_like(out)
    for w in warps(len(pred), tpb):
        all_same = len({keys[g] for g in w}) == 1
        for g in w:
            lane = g % tpb % 32
            half = [h for h in w if (h % tpb % 32 < 16) == (lane < 16)]
            half_same = len({keys[h] for h in half}) == 1
            want[g, :4] = [(1 << lane) - 1, len({pred[h] for h in w}) == 1, bits(w, tpb) if all_same else 0, all_same]
            want[g, 4] = bits(half, tpb) + 7 if half_same else 0
    cols = 5 if halves else 4
    np.testing.assert_array_equal(out[:, :cols], want[:, :cols])


@gk.kernel
def uni_match_all_full(pred: Array[bool_], keys, out: Array[uint32, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.lanemask_lt()
    out[i, 1] = uint32(gk.eq_sync(FULL, pred[i]))
    r = gk.match_all(FULL, keys[i])
    out[i, 2] = r[0]
    out[i, 3] = uint32(r[1])


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32])
@pytest.mark.parametrize("tpb", [64, 48])
def test_match_all_every_backend(backend, tpb, dtype):
    rng = np.random.default_rng(tpb + 1)
    n = tpb * 2
    pred = rng.random(n) < 0.5
    keys = rng.integers(0, 2, n).astype(dtype)
    for w in warps(n, tpb)[::2]:
        pred[w], keys[w] = pred[w[0]], keys[w[0]]
    out = np.zeros((n, 5), np.uint32)
    uni_match_all_full[2, tpb](pred, keys, out)
    check_uni_match_all(pred, keys, out, tpb, halves=False)


@gk.kernel
def runtime_width(vals, b: Array[uint32], out, w: int32):
    i = gk.global_id(0)
    out[0, i] = gk.shfl_sync(FULL, vals[i], b[i], w)
    out[1, i] = gk.shfl_up_sync(FULL, vals[i], b[i], width=w)
    out[2, i] = gk.shfl_down_sync(FULL, vals[i], b[i], width=w)
    out[3, i] = gk.shfl_xor_sync(FULL, vals[i], b[i], width=w)


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_runtime_width(backend, dtype):
    """A width known only at launch: the same lanes as a compile-time one (CUDA takes it as it is;
    the simulator and OpenCL's emulation compute the source lane with it)."""
    rng = np.random.default_rng(11)
    tpb, nblocks = 64, 2
    n = tpb * nblocks
    vals, b = values(rng, dtype, n), rng.integers(0, 40, n)
    for width in (1, 2, 4, 8, 16, 32):
        out = np.zeros((4, n), vals.dtype)
        runtime_width[nblocks, tpb](vals, b.astype(np.uint32), out, width)
        for k, mode in enumerate(MODES):
            np.testing.assert_array_equal(out[k], model_shuffle(mode, vals, b, width, tpb), err_msg=f"{mode} {width}")


@pytest.mark.parametrize("width", [0, 3, 64, -32])
def test_runtime_width_fault(on_simulator, width):
    vals = np.ones(32, np.int32)
    with pytest.raises(gk.WarpMaskError, match=f"lane 0 .* passes width {width}: .*power of 2 from 1 to 32"):
        runtime_width[1, 32](vals, np.zeros(32, np.uint32), np.zeros((4, 32), np.int32), width)
    faults = gk.sanitize(runtime_width[1, 32], vals, np.zeros(32, np.uint32), np.zeros((4, 32), np.int32), width)
    assert {type(f) for f in faults} == {gk.WarpMaskError}


@gk.kernel
def partial_shuffles(vals: Array[float32], out: Array[float32, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.shfl_up_sync(FULL, vals[i], 1)
    out[i, 1] = gk.shfl_xor_sync(FULL, vals[i], 1)
    out[i, 2] = gk.shfl_sync(FULL, vals[i], 3, 4)  # width as the 4th argument, as CUDA allows
    out[i, 3] = gk.shfl_down_sync(FULL, vals[i], 2, width=2)


def test_partial_last_warp(backend):
    """A block of 48: the second warp has 16 lanes; shuffles among lanes that exist are exact."""
    tpb, nblocks = 48, 2
    n = tpb * nblocks
    vals = np.arange(n, dtype=np.float32) * 1.5
    out = np.zeros((n, 4), np.float32)
    partial_shuffles[nblocks, tpb](vals, out)
    ones = np.ones(n, np.int64)
    for col, (mode, b, w) in enumerate([("up", 1, 32), ("xor", 1, 32), ("idx", 3, 4), ("down", 2, 2)]):
        np.testing.assert_array_equal(out[:, col], model_shuffle(mode, vals, ones * b, w, tpb))


@gk.kernel
def rows_2d(vals: Array[int32, 2], out: Array[int32, 2]):
    x, y = gk.thread_idx.x, gk.thread_idx.y
    out[y, x] = gk.shfl_xor_sync(FULL, vals[y, x], 16) * 100 + gk.lane_id()


def test_warps_of_a_2d_block(backend):
    """Warps are formed from the linear thread index (x fastest): in a 16 x 6 block, lane ^ 16 is
    the thread one row up or down, and the last warp's row pair is whole."""
    vals = np.arange(6 * 16, dtype=np.int32).reshape(6, 16)
    out = np.zeros_like(vals)
    rows_2d[1, (16, 6)](vals, out)
    linear = np.arange(96).reshape(6, 16)
    np.testing.assert_array_equal(out, (linear ^ 16) * 100 + linear % 32)


@gk.kernel
def half_warp(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    lane = gk.lane_id()
    out[i] = -1
    if lane < 16:
        v = gk.shfl_down_sync(0xFFFF, vals[i], 3, width=16)
        out[i] = v + gk.shfl_sync(0xFFFF, vals[i], 15 - lane) * 1000 + int32(gk.ballot(0xFFFF, v > 0)) * 0
    else:
        out[i] = int32(gk.activemask() >> 16)


def test_divergent_mask(backend):
    """A shuffle among the lanes of a branch, with their mask; activemask in the other branch
    (OpenCL: every thread calls each op, those of the branch taking part: frontend.predication)."""
    n = 64
    vals = np.arange(n, dtype=np.int32) + 1
    out = np.zeros(n, np.int32)
    half_warp[1, n](vals, out)
    want = np.empty(n, np.int32)
    for g in range(n):
        lane = g % 32
        if lane < 16:
            want[g] = vals[g - lane + source_lane("down", lane, 3, 16)] + vals[g - lane + 15 - lane] * 1000
        else:
            want[g] = 0xFFFF
    np.testing.assert_array_equal(out, want)


@gk.kernel
def tail_uniform_sum(vals: Array[float64], out: Array[float64], n: int32):
    i = gk.global_id(0)
    v = vals[i] if i < n else 0.0
    for off in gk.unroll(range(5)):
        v += gk.shfl_xor_sync(FULL, v, 16 >> off)
    out[i] = v


def test_butterfly_sum_every_backend(backend):
    """Every lane of each warp gets the warp's sum (float64, exact for these integers)."""
    n = 96
    vals = np.arange(n, dtype=np.float64)
    out = np.zeros(n)
    tail_uniform_sum[3, 32](vals, out, n)
    np.testing.assert_array_equal(out, np.repeat(vals.reshape(-1, 32).sum(axis=1), 32))


@gk.kernel
def small_types(flags: Array[bool_], out: Array[bool_]):
    i = gk.global_id(0)
    out[i] = gk.shfl_xor_sync(FULL, flags[i], 1)
    gk.syncwarp()
    gk.syncwarp(mask=FULL)


def test_bool_travels_as_int32(backend):
    flags = np.arange(64) % 3 == 0
    out = np.zeros(64, bool)
    small_types[2, 32](flags, out)
    np.testing.assert_array_equal(out, flags.reshape(-1, 2)[:, ::-1].reshape(-1))


# ---------------------------------------------------------------- the simulator's mask faults
@gk.kernel
def inactive_named(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    if gk.lane_id() < 16:
        out[i] = gk.shfl_sync(FULL, vals[i], 0)


@gk.kernel
def masks_disagree(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    m = uint32(0xFFFF) if gk.lane_id() < 16 else uint32(FULL)
    out[i] = gk.shfl_xor_sync(m, vals[i], 1)


@gk.kernel
def own_lane_missing(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    out[i] = int32(gk.ballot(0xFFFF, vals[i] > 0))


@gk.kernel
def match_all_outsider(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    if gk.lane_id() < 16:
        out[i] = int32(gk.match_all(FULL, vals[i])[1])


@gk.kernel
def eq_sync_own_lane(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    out[i] = int32(gk.eq_sync(0xFFFF, vals[i] > 0))


@gk.kernel
def reads_outsider(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    if gk.lane_id() < 16:
        out[i] = gk.shfl_down_sync(0xFFFF, vals[i], 8)


@gk.kernel
def reads_past_block(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    out[i] = gk.shfl_down_sync(FULL, vals[i], 4)


@gk.kernel
def disjoint_groups(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    m = uint32(0xFFFF) if gk.lane_id() < 16 else uint32(0xFFFF0000)
    out[i] = gk.shfl_xor_sync(m, vals[i], 1)


FAULTS = [
    (inactive_named, 32, "names lane 16", (0, 16)),
    (masks_disagree, 32, "pass different masks", (16, 0)),
    (own_lane_missing, 32, "leaves out the lane itself", (16,)),
    (reads_outsider, 32, "reads lane 16 of its warp", (8,)),
    (match_all_outsider, 32, "match_all\\(\\): .*names lane 16", (0, 16)),
    (eq_sync_own_lane, 32, "eq_sync\\(\\): .*leaves out the lane itself", (16,)),
    (reads_past_block, 40, "reads lane 8 of its warp", (36,)),
]


@pytest.mark.parametrize("k, tpb, text, threads", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_mask_faults(on_simulator, k, tpb, text, threads):
    vals = np.ones(tpb, np.int32)
    with pytest.raises(gk.WarpMaskError, match=text) as e:
        k[1, tpb](vals, np.zeros(tpb, np.int32))
    assert isinstance(e.value, gk.KernelFault)
    assert [t[0] for _, t in e.value.threads] == list(threads)
    assert e.value.loc is not None and e.value.kernel == k.__name__


def test_disjoint_groups_are_not_a_fault(backend):
    """Two half-warps, each with its own mask, as CUDA allows (OpenCL: emulated, the same values)."""
    vals = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    disjoint_groups[1, 64](vals, out)
    np.testing.assert_array_equal(out, vals ^ 1)


@gk.kernel
def two_faults(vals: Array[int32], out: Array[int32]):
    i = gk.global_id(0)
    if gk.lane_id() < 16:
        out[i] = gk.shfl_sync(FULL, vals[i], 0)
    m = uint32(0xFFFF) if gk.lane_id() < 16 else uint32(FULL)
    out[i] += int32(gk.vote_any(m, vals[i] > 0))


def test_sanitize_collects_warp_faults():
    faults = gk.sanitize(two_faults[2, 32], np.ones(64, np.int32), np.zeros(64, np.int32))
    assert [type(f) for f in faults] == [gk.WarpMaskError, gk.WarpMaskError]
    assert [f.lineno for f in faults] == [line_of(two_faults, "shfl_sync"), line_of(two_faults, "vote_any")]
    assert "names lane 16" in faults[0].message and "different masks" in faults[1].message


def test_profile_counts_no_warp_traffic():
    """Shuffles touch no memory: the profile is that of the loads and stores alone."""
    n = 96
    vals, out = np.arange(n, dtype=np.float64), np.zeros(n)
    report = gk.profile(tail_uniform_sum[3, 32], vals, out, n)
    t = report.total
    assert t.global_load_bytes == n * 8 and t.global_store_bytes == n * 8
    np.testing.assert_array_equal(out, np.repeat(vals.reshape(-1, 32).sum(axis=1), 32))


# ---------------------------------------------------------------- OpenCL: the emulation's refusals
@gk.func
def shuffled(v: float32) -> float32:
    return gk.shfl_xor_sync(FULL, v, 1)


@gk.kernel
def in_func(vals: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    out[i] = shuffled(vals[i])


@gk.kernel
def after_return(vals: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i >= n:
        return
    out[i] = gk.shfl_xor_sync(FULL, vals[i], 1)


@gk.kernel
def return_in_loop(vals: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    for k in range(n):
        out[i] += gk.shfl_xor_sync(FULL, vals[i], 1)  # the threads that returned before miss it
        if i == k:
            return


@gk.kernel
def return_after(vals: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    x = gk.shfl_xor_sync(FULL, vals[i], 1)  # before any thread returns
    if i >= n:
        return
    out[i] = x


@gk.kernel
def in_select(vals: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    out[i] = gk.shfl_xor_sync(0xFFFF, vals[i], 1) if gk.lane_id() < 16 else vals[i]


@gk.kernel
def vote_loop(vals: Array[float32], out: Array[float32]):
    i = gk.global_id(0)
    x = vals[i]
    while gk.vote_any(FULL, x > 1.0):
        x = x * 0.5
    out[i] = x


def test_vote_in_a_loop_condition(on_simulator):
    """Each warp halves its values until none of its lanes is above 1 (warps leave at different
    iterations: the loop is divergent across the block, uniform within each warp)."""
    vals = np.array([2.0**k for k in np.random.default_rng(3).integers(0, 9, 96)], np.float32)
    out = np.zeros_like(vals)
    vote_loop[1, 96](vals, out)
    rounds = np.repeat([int(np.log2(w.max())) for w in vals.reshape(3, 32)], 32)
    np.testing.assert_array_equal(out, vals / 2.0**rounds)


@pytest.mark.parametrize(
    "k, args, text, line",
    [
        (in_func, 2, "in a @func", None),
        (vote_loop, 2, "inside a while loop \\(line {}\\)", "while gk.vote_any"),
        (in_select, 2, "inside a conditional expression \\(line {}\\)", "if gk.lane_id() < 16 else"),
    ],
)
def test_opencl_refuses_what_it_cannot_emulate(k, args, text, line):
    """Without sub-groups, warp ops are work-group barriers: every thread must call them, which
    predication cannot arrange in a @func, a while loop of per-thread trips or a conditional
    expression."""
    arrays = [np.zeros(64, np.float32)] * 2
    text = text.format(line_of(k, line)) if line else text
    with pytest.raises(gk.CompileError, match=text) as e:
        k.source(*arrays, *([64] if args == 3 else []), backend="opencl")
    assert "sub-groups of 32" in e.value.message and e.value.loc is not None
    assert "_sync(" in k.source(*arrays, *([64] if args == 3 else []), backend="cuda")  # CUDA runs it


@gk.kernel
def branches(vals: Array[int32], out: Array[uint32], n: int32):
    """Each quarter of a warp votes, shuffles and matches among itself in its own branch, with
    nested ifs, a loop of a uniform count and an else; threads past n return first."""
    i = gk.global_id(0)
    if i >= n:
        return
    lane = gk.lane_id()
    q = lane // 8
    m = uint32(0xFF) << uint32(8 * q)
    r = uint32(0)
    if q == 0:
        r = gk.ballot(m, vals[i] % 2 == 0)
    elif q == 1:
        for k in range(3):
            if (lane % 8) // 2 <= k:  # pairs of lanes: each shuffles with its partner
                r += uint32(gk.shfl_xor_sync(gk.activemask(), vals[i], 1)) << uint32(8 * k)
    else:
        x = vals[i] % 3
        if q == 2:
            r = gk.match_any_sync(m, x) | (uint32(gk.vote_all(m, x < 3)) << uint32(31))
        else:
            gk.syncwarp(m)
            r = gk.activemask()
    out[i] = r


def test_warp_ops_under_thread_dependent_branches(backend):
    """CUDA's independent thread scheduling lets part of a warp call a warp op; OpenCL's emulation
    calls each op in every thread, predicated (frontend.predication): the simulator's results."""
    rng = np.random.default_rng(5)
    vals = rng.integers(0, 5, 128).astype(np.int32)
    n = 120
    out = np.zeros(128, np.uint32)
    branches[1, 128](vals, out, n)
    gk.set_backend("sim")
    try:
        want = np.zeros(128, np.uint32)
        branches[1, 128](vals, want, n)
    finally:
        gk.set_backend(None)
    np.testing.assert_array_equal(out, want)
    lanes = np.arange(128) % 32
    assert (want[(lanes >= 24) & (np.arange(128) < 96)] == 0xFF000000).all()  # activemask of the 4th quarter
    assert (want[120:] == 0).all()  # returned
    pairs = (lanes >= 8) & (lanes < 16) & (np.arange(128) < 96)
    assert (want[pairs] & 0xFF == vals[np.arange(128) ^ 1][pairs] * ((lanes[pairs] % 8) // 2 <= 0)).all()


def test_predicated_opencl_reads_as_c():
    """The OpenCL C of the predicated kernel: a flag per branch, each op called by every thread."""
    code = branches.source(Array[int32], Array[uint32], int32, backend="opencl")
    assert "taking_part" in code and "gk_warp_active(" in code and "returned" in code
    assert "_sync(" in branches.source(Array[int32], Array[uint32], int32, backend="cuda")  # CUDA: as written


@pytest.mark.parametrize("k", [half_warp, inactive_named, after_return, return_in_loop])
def test_kernels_once_refused_on_opencl_run_there(k):
    """Warp ops under a branch or after a return only some threads take: OpenCL compiles them now."""
    dt = np.float32 if k in (after_return, return_in_loop) else np.int32
    args = [np.zeros(64, dt)] * 2 + ([64] if k in (after_return, return_in_loop) else [])
    assert "gk_warp_" in k.source(*args, backend="opencl")


def test_a_return_after_the_warp_ops_takes_no_thread_from_them(backend):
    """Every thread reaches a warp op that comes before the returns (outside any loop around
    them), so OpenCL's emulation compiles it; it was refused as if the op came after the return."""
    vals, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    return_after[1, 64](vals, out, 40)
    np.testing.assert_array_equal(out, np.where(np.arange(64) < 40, vals[np.arange(64) ^ 1], 0))
    assert "barrier" in return_after.source(vals, out, 40, backend="opencl")


@needs_opencl
def test_a_block_no_gpu_takes_warns_on_a_cpu_device():
    """PoCL runs 2048-thread blocks; a CUDA GPU refuses them: the launch says so at the kernel's line."""
    dev = gk.get_backend("opencl")
    if dev.max_group <= 1024:
        pytest.skip(f"the device allows only {dev.max_group} work-items per group")
    out = np.zeros(2048, np.int32)
    with pytest.warns(gk.KernelWarning, match="a CUDA GPU allows at most 1024") as seen:
        lanes[1, 2048](out, backend="opencl")
    assert seen[0].filename.endswith("test_warp.py")
    np.testing.assert_array_equal(out, np.arange(2048) % 32)


@gk.kernel
def lanes(out: Array[int32]):
    out[gk.global_id(0)] = gk.lane_id()


@needs_opencl
def test_opencl_group_limit():
    gk.set_backend("opencl")
    try:
        dev = gk.get_backend("opencl")
        if dev.max_group <= 1024:
            pytest.skip(f"the device allows only {dev.max_group} work-items per group")
        n = 2048
        with pytest.raises(gk.LaunchError, match="at most 1024"):
            tail_uniform_sum[1, n](np.zeros(n), np.zeros(n), n)
    finally:
        gk.set_backend(None)


# ---------------------------------------------------------------- typing
@pytest.mark.parametrize(
    "body, error, text",
    [
        ("gk.shfl_sync(FULL, x, 1, width=3)", gk.KernelTypeError, "power of 2"),
        ("gk.shfl_sync(FULL, x, 1, width=1.0 * n)", gk.KernelTypeError, "width must be an integer"),
        ("gk.eq_sync(FULL)", gk.KernelTypeError, "takes 2 argument"),
        ("gk.lanemask_lt(1)", gk.KernelTypeError, "takes 0 argument"),
        ("gk.shfl_sync(1.5, x, 1)", gk.KernelTypeError, "mask must be an integer"),
        ("gk.shfl_sync(FULL, x, 1.0 * n)", gk.KernelTypeError, "src_lane must be an integer"),
        ("gk.shfl_sync(FULL, x, 1, size=4)", gk.KernelSyntaxError, "only width="),
        ("gk.shfl_sync(FULL, x)", gk.KernelTypeError, "needs src_lane"),
        ("gk.ballot(FULL)", gk.KernelTypeError, "takes 2 argument"),
        ("gk.shfl_sync(2**33, x, 1)", gk.KernelTypeError, "fits in 32 bits"),
    ],
)
def test_typing_errors(on_simulator, body, error, text):
    k = load_kernel(
        "import gpukern as gk\n"
        "from gpukern import Array, float32, int32\n"
        "FULL = 0xFFFFFFFF\n"
        "@gk.kernel\n"
        "def k(a: Array[float32], n: int32):\n"
        "    x = a[0]\n"
        f"    a[0] = {body}\n"
    )
    with pytest.raises(error, match=text) as e:
        k[1, 32](np.zeros(4, np.float32), 4)
    assert e.value.lineno == 7


def test_outside_a_kernel():
    with pytest.raises(gk.GpukernError, match="only be used inside"):
        gk.shfl_sync(FULL, 1.0, 0)
    assert gk.all_sync is gk.vote_all and gk.ballot_sync is gk.ballot and gk.match_any_sync is gk.match_any
    assert gk.match_all_sync is gk.match_all
