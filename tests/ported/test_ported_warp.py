"""Warp-level kernels ported from Numba-CUDA: numba/cuda/tests/cudapy/test_warp_ops.py, the syncwarp
kernels of test_sync.py and laneid/warpsize of test_intrinsics.py (NVIDIA/numba-cuda).

Spelling: ``cuda.shfl_sync`` -> ``gk.shfl_sync`` (likewise ``_up``, ``_down``, ``_xor``),
``cuda.all_sync``/``any_sync``/``ballot_sync``/``match_any_sync`` -> ``gk.vote_all``/``vote_any``/``ballot``/
``match_any``, ``cuda.syncwarp`` -> ``gk.syncwarp``, ``cuda.activemask()`` -> ``gk.activemask()``,
``cuda.laneid`` -> ``gk.lane_id()``, ``cuda.warpsize`` -> ``gk.warp_size()``, ``cuda.grid(1)`` -> ``global_id(0)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import global_id, int32, shared, thread_idx

from .support import needs

_WARP = needs("warp intrinsics")
_WARP_SHARED = needs("warp intrinsics (syncwarp)")


# Source: test_warp_ops.py, useful_syncwarp (test_useful_syncwarp)
@gk.kernel
def useful_syncwarp(ary):
    i = global_id(0)
    if i == 0:
        ary[0] = 42
    gk.syncwarp(0xFFFFFFFF)
    ary[i] = ary[0]


# Source: test_warp_ops.py, use_shfl_sync_idx (test_shfl_sync_idx)
@gk.kernel
def use_shfl_sync_idx(ary, idx):
    i = global_id(0)
    val = gk.shfl_sync(0xFFFFFFFF, i, idx)
    ary[i] = val


# Source: test_warp_ops.py, use_shfl_sync_up (test_shfl_sync_up)
@gk.kernel
def use_shfl_sync_up(ary, delta):
    i = global_id(0)
    val = gk.shfl_up_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


# Source: test_warp_ops.py, use_shfl_sync_down (test_shfl_sync_down)
@gk.kernel
def use_shfl_sync_down(ary, delta):
    i = global_id(0)
    val = gk.shfl_down_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


# Source: test_warp_ops.py, use_shfl_sync_xor (test_shfl_sync_xor)
@gk.kernel
def use_shfl_sync_xor(ary, xor):
    i = global_id(0)
    val = gk.shfl_xor_sync(0xFFFFFFFF, i, xor)
    ary[i] = val


# Source: test_warp_ops.py, use_shfl_sync_with_val (test_shfl_sync_types)
@gk.kernel
def use_shfl_sync_with_val(ary, into):
    i = global_id(0)
    val = gk.shfl_sync(0xFFFFFFFF, into, 0)
    ary[i] = val


# Source: test_warp_ops.py, use_vote_sync_all (test_vote_sync_all)
@gk.kernel
def use_vote_sync_all(ary_in, ary_out):
    i = global_id(0)
    pred = gk.vote_all(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


# Source: test_warp_ops.py, use_vote_sync_any (test_vote_sync_any)
@gk.kernel
def use_vote_sync_any(ary_in, ary_out):
    i = global_id(0)
    pred = gk.vote_any(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


# Source: test_warp_ops.py, use_vote_sync_eq (test_vote_sync_eq): `cuda.eq_sync`
@gk.kernel
def use_vote_sync_eq(ary_in, ary_out):
    i = global_id(0)
    pred = gk.eq_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


# Source: test_warp_ops.py, use_vote_sync_ballot (test_vote_sync_ballot)
@gk.kernel
def use_vote_sync_ballot(ary):
    i = thread_idx.x
    ballot = gk.ballot(0xFFFFFFFF, True)
    ary[i] = ballot


# Source: test_warp_ops.py, use_match_any_sync (test_match_any_sync)
@gk.kernel
def use_match_any_sync(ary_in, ary_out):
    i = global_id(0)
    ballot = gk.match_any(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot


# Source: test_warp_ops.py, use_match_all_sync (test_match_all_sync): `ballot, pred = cuda.match_all_sync(...)`
@gk.kernel
def use_match_all_sync(ary_in, ary_out):
    i = global_id(0)
    ballot, pred = gk.match_all(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot if pred else 0


# Source: test_warp_ops.py, use_independent_scheduling (test_independent_scheduling)
@gk.kernel
def use_independent_scheduling(arr):
    i = thread_idx.x
    if i % 4 == 0:
        ballot = gk.ballot(0x11111111, True)
    elif i % 4 == 1:
        ballot = gk.ballot(0x22222222, True)
    elif i % 4 == 2:
        ballot = gk.ballot(0x44444444, True)
    else:  # the source's last branch is `elif i % 4 == 3`, which is always true there
        ballot = gk.ballot(0x88888888, True)
    arr[i] = ballot


# Source: test_warp_ops.py, test_activemask (use_activemask)
@gk.kernel
def use_activemask(x):
    i = global_id(0)
    if (i % 2) == 0:
        x[i] = gk.activemask()
    else:
        x[i] = gk.activemask()


# Source: test_warp_ops.py, test_lanemask_lt (use_lanemask_lt): `cuda.lanemask_lt()`
@gk.kernel
def use_lanemask_lt(x):
    i = global_id(0)
    x[i] = gk.lanemask_lt()


# Source: test_intrinsics.py, simple_laneid (test_simple_laneid)
@gk.kernel
def simple_laneid(ary):
    i = global_id(0)
    ary[i] = gk.lane_id()


# Source: test_intrinsics.py, simple_warpsize (test_simple_warpsize)
@gk.kernel
def simple_warpsize(ary):
    ary[0] = gk.warp_size()


# Source: test_sync.py, useless_syncwarp (test_useless_syncwarp)
@gk.kernel
def useless_syncwarp(ary):
    i = global_id(0)
    gk.syncwarp()
    ary[i] = i


# Source: test_sync.py, useless_syncwarp_with_mask (test_useless_syncwarp_with_mask)
@gk.kernel
def useless_syncwarp_with_mask(ary):
    i = global_id(0)
    gk.syncwarp(0xFFFF)
    ary[i] = i


# Source: test_sync.py, coop_syncwarp (test_coop_syncwarp)
@gk.kernel
def coop_syncwarp(res):
    sm = shared(int32, 32)
    i = global_id(0)

    sm[i] = i
    gk.syncwarp()

    if i < 16:
        sm[i] = sm[i] + sm[i + 16]
        gk.syncwarp(0xFFFF)

    if i < 8:
        sm[i] = sm[i] + sm[i + 8]
        gk.syncwarp(0xFF)

    if i < 4:
        sm[i] = sm[i] + sm[i + 4]
        gk.syncwarp(0xF)

    if i < 2:
        sm[i] = sm[i] + sm[i + 2]
        gk.syncwarp(0x3)

    if i == 0:
        res[0] = sm[0] + sm[1]


@_WARP
def test_useful_syncwarp(backend):
    ary = np.empty(32, dtype=np.int32)
    useful_syncwarp[1, 32](ary)
    np.testing.assert_array_equal(ary, np.full(32, 42))


@_WARP
def test_shfl_sync_idx(backend):
    ary = np.empty(32, dtype=np.int32)
    use_shfl_sync_idx[1, 32](ary, np.int32(4))
    np.testing.assert_array_equal(ary, np.full(32, 4))


@_WARP
def test_shfl_sync_up(backend):
    delta = 4
    ary = np.empty(32, dtype=np.int32)
    exp = np.arange(32, dtype=np.int32)
    exp[delta:] -= delta
    use_shfl_sync_up[1, 32](ary, np.int32(delta))
    np.testing.assert_array_equal(ary, exp)


@_WARP
def test_shfl_sync_down(backend):
    delta = 4
    ary = np.empty(32, dtype=np.int32)
    exp = np.arange(32, dtype=np.int32)
    exp[:-delta] += delta
    use_shfl_sync_down[1, 32](ary, np.int32(delta))
    np.testing.assert_array_equal(ary, exp)


@_WARP
def test_shfl_sync_xor(backend):
    ary = np.empty(32, dtype=np.int32)
    use_shfl_sync_xor[1, 32](ary, np.int32(16))
    np.testing.assert_array_equal(ary, np.arange(32, dtype=np.int32) ^ 16)


@_WARP
@pytest.mark.parametrize(
    "val",
    [np.int32(-1), np.int64(1 << 42), np.float32(np.pi), np.float64(np.pi)],
    ids=["int32", "int64", "float32", "float64"],
)
def test_shfl_sync_types(backend, val):
    ary = np.empty(32, dtype=val.dtype)
    use_shfl_sync_with_val[1, 32](ary, val)
    np.testing.assert_array_equal(ary, np.full(32, val))


@_WARP
def test_vote_sync_all(backend):
    ary_in = np.ones(32, dtype=np.int32)
    ary_out = np.empty(32, dtype=np.int32)
    use_vote_sync_all[1, 32](ary_in, ary_out)
    assert np.all(ary_out == int(ary_in.all()))
    ary_in[-1] = 0
    use_vote_sync_all[1, 32](ary_in, ary_out)
    assert np.all(ary_out == int(ary_in.all()))


@_WARP
def test_vote_sync_any(backend):
    ary_in = np.zeros(32, dtype=np.int32)
    ary_out = np.empty(32, dtype=np.int32)
    use_vote_sync_any[1, 32](ary_in, ary_out)
    assert np.all(ary_out == int(ary_in.any()))
    ary_in[2] = ary_in[5] = 1
    use_vote_sync_any[1, 32](ary_in, ary_out)
    assert np.all(ary_out == int(ary_in.any()))


@_WARP
def test_vote_sync_eq(backend):
    ary_in = np.zeros(32, dtype=np.int32)
    ary_out = np.empty(32, dtype=np.int32)
    use_vote_sync_eq[1, 32](ary_in, ary_out)
    assert np.all(ary_out == 1)


@_WARP
def test_vote_sync_ballot(backend):
    ary = np.empty(32, dtype=np.uint32)
    use_vote_sync_ballot[1, 32](ary)
    np.testing.assert_array_equal(ary, np.full(32, 0xFFFFFFFF, np.uint32))


@_WARP
def test_match_any_sync(backend):
    nelem = 10
    ary_in = np.arange(nelem, dtype=np.int32) % 2
    ary_out = np.empty(nelem, dtype=np.int32)
    exp = [sum(1 << j for j in range(nelem) if ary_in[j] == ary_in[i]) for i in range(nelem)]
    use_match_any_sync[1, nelem](ary_in, ary_out)
    np.testing.assert_array_equal(ary_out, exp)


@_WARP
def test_match_all_sync(backend):
    ary_in = np.zeros(10, dtype=np.int32)
    ary_out = np.empty(10, dtype=np.int32)
    use_match_all_sync[1, 10](ary_in, ary_out)
    np.testing.assert_array_equal(ary_out, np.full(10, 0b1111111111))


@_WARP
def test_independent_scheduling(backend):
    arr = np.empty(32, dtype=np.uint32)
    use_independent_scheduling[1, 32](arr)
    exp = [sum(1 << j for j in range(32) if j % 4 == i % 4) for i in range(32)]
    np.testing.assert_array_equal(arr, np.array(exp, np.uint32))


@_WARP
def test_activemask(backend):
    out = np.zeros(32, dtype=np.uint32)
    use_activemask[1, 32](out)
    exp = [sum(1 << j for j in range(32) if j % 2 == i % 2) for i in range(32)]
    np.testing.assert_array_equal(out, np.array(exp, np.uint32))


@_WARP
def test_lanemask_lt(backend):
    out = np.zeros(32, dtype=np.uint32)
    use_lanemask_lt[1, 32](out)
    np.testing.assert_array_equal(out, np.array([(1 << i) - 1 for i in range(32)], np.uint32))


@_WARP
def test_simple_laneid(backend):
    ary = np.zeros(64, dtype=np.int32)
    simple_laneid[1, 64](ary)
    np.testing.assert_array_equal(ary, np.arange(64) % 32)


@_WARP
def test_simple_warpsize(backend):
    ary = np.zeros(1, dtype=np.int32)
    simple_warpsize[1, 1](ary)
    assert ary[0] == 32


@_WARP_SHARED
@pytest.mark.parametrize("kernel", [useless_syncwarp, useless_syncwarp_with_mask])
def test_useless_syncwarp(backend, kernel):
    ary = np.empty(10, dtype=np.int32)
    kernel[1, 10](ary)
    np.testing.assert_array_equal(ary, np.arange(10))


@_WARP_SHARED
def test_coop_syncwarp(backend):
    res = np.zeros(1, dtype=np.int32)
    coop_syncwarp[1, 32](res)
    assert res[0] == sum(range(32))
