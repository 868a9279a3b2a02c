"""Warp-level matrix multiply-accumulate (``gk.fragment``, ``gk.mma``): GEMMs against NumPy on every
backend that has the matrix units (the simulator, CUDA), OpenCL's refusal, the refusals at compile
time, races through fragment loads, and the CUDA C compiling with NVRTC for sm_80 and sm_90.

Tolerance (``gpukern.semantics.mma.tolerance``): against the float64 product of the inputs as the
fragments hold them (float16/bfloat16 exact, float32 rounded to TF32), each element within
``2 (K/k + k) 2**-23 (|A| @ |B|)``: one float32 rounding per mma step, and up to k more where the
hardware accumulates in its own order.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from compilers import needs_nvrtc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matrix_inputs import inputs

import gpukern as gk
from gpukern import Array, bfloat16, float16, float32, int32
from gpukern.backends import nvrtc
from gpukern.semantics import mma as mma_ops


def _skip_opencl(backend):
    if backend == "opencl":
        pytest.skip("OpenCL has no matrix units in gpukern (test_opencl_refuses)")


# ---------------------------------------------------------------- kernels
@gk.kernel
def tile16(a: Array[float16, 2], b: Array[float16, 2], c: Array[float32, 2]):
    fa = gk.fragment("a", 16, 16, 16, gk.float16)
    fb = gk.fragment("b", 16, 16, 16, gk.float16, layout="row")
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    gk.load_matrix(fa, a, (0, 0))
    gk.load_matrix(fb, b, (0, 0))
    acc = gk.mma(fa, fb, acc)
    gk.store_matrix(c, (0, 0), acc)


def make_gemm(T, k):
    """C = A @ B, M and N multiples of 32, K of k: 4 warps a block, each a 16x16 tile of the block's
    32x32, A's and B's tiles staged in shared memory; T the input type (float32: TF32)."""

    @gk.kernel
    def gemm(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2]):
        t = gk.thread_idx.x
        warp = t // 32
        wr = warp // 2
        wc = warp % 2
        row0 = gk.block_idx.y * 32
        col0 = gk.block_idx.x * 32
        As = gk.shared(T, (32, k))
        Bs = gk.shared(T, (k, 32))
        fa = gk.fragment("a", 16, 16, k, T)
        fb = gk.fragment("b", 16, 16, k, T)
        acc = gk.fragment("accumulator", 16, 16, k, gk.float32)
        gk.fill_fragment(acc, 0.0)
        for kk in range(0, a.shape[1], k):
            for e in range(t, 32 * k, 128):
                As[e // k, e % k] = a[row0 + e // k, kk + e % k]
                Bs[e // 32, e % 32] = b[kk + e // 32, col0 + e % 32]
            gk.barrier()
            gk.load_matrix(fa, As, (wr * 16, 0))
            gk.load_matrix(fb, Bs, (0, wc * 16))
            acc = gk.mma(fa, fb, acc)
            gk.barrier()
        gk.store_matrix(c, (row0 + wr * 16, col0 + wc * 16), acc)

    return gemm


GEMMS = {"float16": make_gemm(float16, 16), "bfloat16": make_gemm(bfloat16, 16), "tf32": make_gemm(float32, 8)}


def check(c: np.ndarray, ra: np.ndarray, rb: np.ndarray, k: int) -> None:
    exact = ra @ rb
    tol = mma_ops.tolerance(np.abs(ra), np.abs(rb), k)
    bad = np.abs(c - exact) > tol
    assert not bad.any(), f"{bad.sum()} elements off, worst {np.abs(c - exact).max()}"


# ---------------------------------------------------------------- results
def test_single_warp_tile(backend):
    _skip_opencl(backend)
    a, b, ra, rb = inputs("float16", 16, 16, 16)
    c = np.zeros((16, 16), np.float32)
    tile16[1, 32](a, b, c)
    check(c, ra, rb, 16)


@pytest.mark.parametrize("kind", list(GEMMS))
def test_tiled_gemm(backend, kind):
    _skip_opencl(backend)
    k = 8 if kind == "tf32" else 16
    a, b, ra, rb = inputs(kind, 64, 64, 64)
    c = np.zeros((64, 64), np.float32)
    GEMMS[kind][(2, 2), 128](a, b, c)
    check(c, ra, rb, k)
    if kind == "tf32":  # against the float32 inputs themselves: TF32's 10 mantissa bits
        full = a.astype(np.float64) @ b.astype(np.float64)
        assert np.all(np.abs(c - full) <= 2.0**-10 * (np.abs(a) @ np.abs(b)))


def test_tf32_rounding_is_cvt_rna():
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 1 + 2**-12, np.inf, -np.inf], np.float32)
    want = np.array([1 + 2**-10, 1 + 4 * 2**-10 / 2, -(1 + 2**-10), 1.0, np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(mma_ops.to_tf32(x), want)  # ties away from zero
    assert np.isnan(mma_ops.to_tf32(np.array([np.nan], np.float32)))[0]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(list(GEMMS)),
    mb=st.integers(1, 2),
    nb=st.integers(1, 2),
    ks=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_gemm_property(backend, kind, mb, nb, ks, seed):
    _skip_opencl(backend)
    k = 8 if kind == "tf32" else 16
    m, n, kdim = 32 * mb, 32 * nb, 16 * ks
    a, b, ra, rb = inputs(kind, m, n, kdim, seed)
    c = np.zeros((m, n), np.float32)
    GEMMS[kind][(nb, mb), 128](a, b, c)
    check(c, ra, rb, k)


def test_mma_sync_and_col_layout(on_simulator):
    @gk.kernel
    def k_(a: Array[float16, 2], bt: Array[float16, 2], c0: Array[float32, 2], d: Array[float32, 2]):
        fa = gk.fragment("a", 32, 8, 16, gk.float16)
        fb = gk.fragment("b", 32, 8, 16, gk.float16, layout="col")  # B stored transposed: bt is B.T
        fc = gk.fragment("accumulator", 32, 8, 16, gk.float32)
        fd = gk.fragment("accumulator", 32, 8, 16, gk.float32)
        gk.load_matrix(fa, a, (0, 0))
        gk.load_matrix(fb, bt, (0, 0))
        gk.load_matrix(fc, c0, (0, 0))
        gk.mma_sync(fd, fa, fb, fc)
        gk.store_matrix(d, (0, 0), fd)

    a, b, ra, rb = inputs("float16", 32, 8, 16)
    c0 = np.random.default_rng(1).standard_normal((32, 8)).astype(np.float32)
    d = np.zeros((32, 8), np.float32)
    k_[1, 32](a, np.ascontiguousarray(b.T), c0, d)
    np.testing.assert_allclose(d, ra @ rb + c0, rtol=0, atol=1e-5)


def every_move(T, shape, la: str, lb: str, staged: bool, fill_a: bool):
    """One warp: A's fragment (layout ``la``, or ``fill_a``: filled with 0.5) and B's (``lb``) from
    global memory or (``staged``) from shared copies, the accumulator loaded from C0 (global, or
    shared where ``staged``), D = A @ B + C0 by ``mma_sync`` into another accumulator, stored to D
    (through shared memory where ``staged``): every way a fragment moves and is set, for one shape
    and type; a 'col' operand comes as its transpose."""
    m, n, k = shape

    @gk.kernel
    def moves_all(a: Array[T, 2], b: Array[T, 2], c0: Array[float32, 2], d: Array[float32, 2]):
        fa = gk.fragment("a", m, n, k, T, layout=la)
        fb = gk.fragment("b", m, n, k, T, layout=lb)
        fc = gk.fragment("accumulator", m, n, k, float32)
        fd = gk.fragment("accumulator", m, n, k, float32)
        if staged:  # (a compile-time choice)
            sa = gk.shared(T, (32, 32))
            sb = gk.shared(T, (32, 32))
            sc = gk.shared(float32, (32, 32))
            for e in range(gk.thread_idx.x, 1024, 32):
                sa[e // 32, e % 32] = a[e // 32, e % 32]
                sb[e // 32, e % 32] = b[e // 32, e % 32]
                sc[e // 32, e % 32] = c0[e // 32, e % 32]
            gk.barrier()
            gk.load_matrix(fa, sa, (0, 0))
            gk.load_matrix(fb, sb, (0, 0))
            gk.load_matrix(fc, sc, (0, 0))
        else:
            gk.load_matrix(fa, a, (0, 0))
            gk.load_matrix(fb, b, (0, 0))
            gk.load_matrix(fc, c0, (0, 0))
        if fill_a:
            gk.fill_fragment(fa, 0.5)
        gk.mma_sync(fd, fa, fb, fc)
        if staged:
            gk.barrier()
            gk.store_matrix(sc, (0, 0), fd)
            gk.barrier()
            for e in range(gk.thread_idx.x, m * n, 32):
                d[e // n, e % n] = sc[e // n, e % n]
        else:
            gk.store_matrix(d, (0, 0), fd)

    return moves_all


MOVES = (
    [
        (kind, shape, la, lb, staged, fill_a)
        for kind, shapes in (("float16", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]), ("bfloat16", [(16, 16, 16)]))
        for shape in shapes
        for la, lb in (("row", "row"), ("col", "col"), ("row", "col"))
        for staged in (False, True)
        for fill_a in (False,)
    ]
    + [(kind, (16, 16, 16), "row", "row", staged, True) for kind in ("float16", "bfloat16") for staged in (False, True)]
    + [
        ("tf32", (16, 16, 8), la, lb, staged, fill_a)
        for la in ("row", "col")
        for lb in ("row", "col")
        for staged in (False, True)
        for fill_a in (False, True)
    ]
)


@pytest.mark.parametrize("kind, shape, la, lb, staged, fill_a", MOVES)
def test_every_fragment_move_matches_numpy(backend, kind, shape, la, lb, staged, fill_a):
    """Each shape, type, layout and memory of a fragment's load, fill, mma_sync and store, on
    every backend with matrix units (on CUDA: wmma, or gpukern's TF32 code, whose register layout
    only such a run checks), against NumPy within the documented tolerance."""
    _skip_opencl(backend)
    m, n, k = shape
    T = {"float16": float16, "bfloat16": bfloat16, "tf32": float32}[kind]
    rng = np.random.default_rng(zlib.crc32(repr((kind, shape, la, lb, staged, fill_a)).encode()))
    a32, b32 = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    if kind == "bfloat16":
        a, b = bfloat16.bits(a32), bfloat16.bits(b32)
        va, vb = bfloat16.floats(a), bfloat16.floats(b)
    elif kind == "float16":
        a, b = a32.astype(np.float16), b32.astype(np.float16)
        va, vb = a.astype(np.float32), b.astype(np.float32)
    else:
        a, b = a32, b32
        va, vb = mma_ops.to_tf32(a), mma_ops.to_tf32(b)
    # the tiles the fragments hold: a 'col' operand's array is its transpose
    ta = (va.T if la == "col" else va)[:m, :k].astype(np.float64)
    tb = (vb.T if lb == "col" else vb)[:k, :n].astype(np.float64)
    if fill_a:
        ta = np.full((m, k), 0.5)
    c0 = rng.standard_normal((32, 32)).astype(np.float32)
    d = np.full((32, 32), np.nan, np.float32)
    every_move(T, shape, la, lb, staged, fill_a)[1, 32](a, b, c0, d)
    want = ta @ tb + c0[:m, :n]
    tol = mma_ops.tolerance(np.abs(ta), np.abs(tb), k, np.abs(c0[:m, :n]))
    assert np.all(np.abs(d[:m, :n] - want) <= tol), np.abs(d[:m, :n] - want).max()
    assert np.isnan(d[m:, :]).all() and np.isnan(d[:, n:]).all()  # nothing written beyond the tile


# ---------------------------------------------------------------- the simulator's checks
def test_race_between_fragment_load_and_shared_write(on_simulator):
    @gk.kernel
    def racy(a: Array[float16, 2], c: Array[float32, 2]):
        t = gk.thread_idx.x
        s = gk.shared(gk.float16, (16, 16))
        fa = gk.fragment("a", 16, 16, 16, gk.float16)
        fb = gk.fragment("b", 16, 16, 16, gk.float16)
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        for e in range(t, 256, 64):
            s[e // 16, e % 16] = a[e // 16, e % 16]
        # no barrier: warp 1 reads what warp 0 writes
        gk.load_matrix(fa, s, (0, 0))
        gk.load_matrix(fb, s, (0, 0))
        gk.fill_fragment(acc, 0.0)
        acc = gk.mma(fa, fb, acc)
        if t < 32:
            c[0, t % 16] = 0.0
        gk.store_matrix(c, (0, 16 * (t // 32)), acc)

    a = np.ones((16, 16), np.float16)
    with pytest.raises(gk.DataRaceError):
        racy[1, 64](a, np.zeros((16, 32), np.float32))


def test_partial_warp_is_reported(on_simulator):
    with pytest.raises(gk.WarpMaskError, match="warp-collective"):
        tile16[1, 16](np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32))


@pytest.mark.parametrize("threads", [16, 48])
def test_sanitize_collects_partial_warps(threads):
    """gk.sanitize goes on after a fault: a partial warp (16 threads; 48, whose second warp is
    half; its two warps also race storing one tile, reported too) is reported, and the run does not
    stop with an internal error."""
    a, b = np.ones((16, 16), np.float16), np.ones((16, 16), np.float16)
    faults = gk.sanitize(tile16[1, threads], a, b, np.zeros((16, 16), np.float32))
    assert any(isinstance(f, gk.WarpMaskError) and "partial" in str(f) for f in faults)
    assert any(isinstance(f, gk.DataRaceError) for f in faults) == (threads == 48)


@gk.kernel
def per_lane_corner(a: Array[float16, 2], c: Array[float32, 2]):
    fa = gk.fragment("a", 16, 16, 16, gk.float16)
    fb = gk.fragment("b", 16, 16, 16, gk.float16)
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    gk.fill_fragment(fb, 1.0)
    gk.load_matrix(fa, a, (gk.thread_idx.x // 16 * 16, 0))  # two corners in one warp
    acc = gk.mma(fa, fb, acc)
    gk.store_matrix(c, (0, 0), acc)


@gk.kernel
def per_lane_fill(c: Array[float32, 2]):
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, gk.thread_idx.x + 1)
    gk.store_matrix(c, (0, 0), acc)


def test_operands_must_be_the_same_across_the_warp(on_simulator):
    """CUDA takes a fragment load's pointer and a fill's value as one for the warp: lanes that
    disagree are reported (the simulator used to give each lane its own)."""
    with pytest.raises(gk.WarpMaskError, match="tile's corner.*differs between lanes"):
        per_lane_corner[1, 32](np.ones((32, 16), np.float16), np.zeros((16, 16), np.float32))
    with pytest.raises(gk.WarpMaskError, match="value differs between lanes"):
        per_lane_fill[1, 32](np.zeros((16, 16), np.float32))
    c = np.full((16, 16), np.nan, np.float32)
    per_lane_fill[1, 32](c, check=False)  # unchecked: the warp's first lane's value, everywhere
    assert (c == 1).all()


def test_out_of_bounds_tile(on_simulator):
    with pytest.raises(gk.OutOfBoundsError):
        tile16[1, 32](np.zeros((8, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32))


# ---------------------------------------------------------------- refusals
def _source(fn, *types):
    return gk.kernel(fn).source(*types, backend="cuda")


KINDS = ["a", "b"]  # a module constant that is no string


def test_a_fragment_read_before_it_is_set_is_refused():
    """Like a local read before its assignment: an mma or store_matrix of a fragment that some
    path to it neither loads, fills nor computes (GPU registers hold garbage there)."""

    def never_set(a: Array[float16, 2], c: Array[float32, 2]):
        fa = gk.fragment("a", 16, 16, 16, gk.float16)
        fb = gk.fragment("b", 16, 16, 16, gk.float16)
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        gk.load_matrix(fa, a, (0, 0))
        gk.load_matrix(fb, a, (0, 0))
        acc = gk.mma(fa, fb, acc)
        gk.store_matrix(c, (0, 0), acc)

    with pytest.raises(gk.KernelTypeError, match="fragment 'acc' may be read by mma") as e:
        _source(never_set, Array[float16, 2], Array[float32, 2])
    assert e.value.loc.lineno == never_set.__code__.co_firstlineno + 6

    def one_branch(c: Array[float32, 2], flag: int32):  # the same in every thread: no divergence
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        if flag > 0:
            gk.fill_fragment(acc, 1.0)
        gk.store_matrix(c, (0, 0), acc)

    with pytest.raises(gk.KernelTypeError, match="fragment 'acc' may be read by store_matrix"):
        _source(one_branch, Array[float32, 2], int32)

    def in_a_loop(c: Array[float32, 2], n: int32):  # the loop may run no time
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        for _ in range(n):
            gk.fill_fragment(acc, 1.0)
        gk.store_matrix(c, (0, 0), acc)

    with pytest.raises(gk.KernelTypeError, match="fragment 'acc' may be read"):
        _source(in_a_loop, Array[float32, 2], int32)

    def both_branches(c: Array[float32, 2], flag: int32):
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        if flag > 0:
            gk.fill_fragment(acc, 1.0)
        else:
            gk.load_matrix(acc, c, (0, 0))
        gk.store_matrix(c, (0, 0), acc)

    assert "store_matrix_sync" in _source(both_branches, Array[float32, 2], int32)


def test_refuses_shape_type_and_divergence():
    def bad_shape(c: Array[float32, 2]):
        fa = gk.fragment("a", 16, 16, 8, gk.float16)  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="no matrix unit computes"):
        _source(bad_shape, Array[float32, 2])

    def bad_type(c: Array[float32, 2]):
        fa = gk.fragment("a", 16, 16, 16, gk.int8)  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="not supported"):
        _source(bad_type, Array[float32, 2])

    def bad_acc(c: Array[float32, 2]):
        f = gk.fragment("accumulator", 16, 16, 16, gk.float16)  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="float32"):
        _source(bad_acc, Array[float32, 2])

    def diverges(c: Array[float32, 2]):
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        if gk.thread_idx.x < 16:
            gk.fill_fragment(acc, 1.0)
        gk.store_matrix(c, (0, 0), acc)

    with pytest.raises(gk.KernelTypeError, match="warp-collective") as e:
        _source(diverges, Array[float32, 2])
    assert e.value.loc.lineno == diverges.__code__.co_firstlineno + 3

    def wrong_array(a: Array[float32, 2]):
        fa = gk.fragment("a", 16, 16, 16, gk.float16)
        gk.load_matrix(fa, a, (0, 0))

    with pytest.raises(gk.KernelTypeError, match="needs a float16 array"):
        _source(wrong_array, Array[float32, 2])

    def alias_chosen_at_run_time(c: Array[float32, 2]):  # (a second name of a fragment: test_fragment_names.py)
        acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        acc2 = gk.fragment("accumulator", 16, 16, 16, gk.float32)
        other = acc
        for _ in range(2):
            other = acc2  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="which tile it names depend on the path"):
        _source(alias_chosen_at_run_time, Array[float32, 2])

    def runtime_layout(c: Array[float32, 2], lay: int32):
        fa = gk.fragment("a", 16, 16, 16, gk.float16, layout=lay)  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="layout must be a string known at compile time"):
        _source(runtime_layout, Array[float32, 2], int32)  # it was silently 'row'

    def listed_kind(c: Array[float32, 2]):
        fa = gk.fragment(KINDS, 16, 16, 16, gk.float16)  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="kind must be a string"):
        _source(listed_kind, Array[float32, 2])  # it was an internal TypeError (unhashable list)

    def reused_name(c: Array[float32, 2]):
        for _ in range(2):
            f = gk.fragment("accumulator", 16, 16, 16, gk.float32)
            gk.fill_fragment(f, 1.0)
            gk.store_matrix(c, (0, 0), f)
        f = 2.0  # noqa: F841

    with pytest.raises(gk.KernelTypeError, match="'f'"):
        _source(reused_name, Array[float32, 2])  # it declared a fragment and a float f in one C scope


def test_opencl_refuses():
    with pytest.raises(gk.CompileError, match="cl_intel_subgroup_matrix_multiply_accumulate"):
        tile16.source(Array[float16, 2], Array[float16, 2], Array[float32, 2], backend="opencl")


def test_opencl_backend_refuses(backend):
    if backend != "opencl":
        pytest.skip("the OpenCL backend's refusal")
    with pytest.raises(gk.CompileError, match="matrix"):
        tile16[1, 32](np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32))


# ---------------------------------------------------------------- CUDA C
SIGS = {
    "float16": (Array[float16, 2], Array[float16, 2], Array[float32, 2]),
    "bfloat16": (Array[bfloat16, 2], Array[bfloat16, 2], Array[float32, 2]),
    "tf32": (Array[float32, 2], Array[float32, 2], Array[float32, 2]),
}


@pytest.mark.parametrize("kind", list(GEMMS))
def test_cuda_source(kind):
    src = GEMMS[kind].source(*SIGS[kind], backend="cuda")
    assert "__align__(32)" in src  # wmma's tiles in shared memory
    if kind == "tf32":  # gpukern's own: two mma.sync.m16n8k8, inputs rounded as the simulator does
        assert "gk_tf32_mma(acc, fa, fb, acc);" in src and "mma.sync.aligned.m16n8k8.row.col.f32.tf32" in src
        assert "cvt.rna.tf32.f32" in src and "wmma::" not in src
    else:
        assert "#include <mma.h>" in src and "wmma::mma_sync(acc, fa, fb, acc);" in src
    if kind == "bfloat16":
        assert "(const __nv_bfloat16*)&" in src and "__nv_bfloat16" in src
    # one Python line per statement
    assert all(line.count("  // ") <= 1 for line in src.splitlines())


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kind", list(GEMMS))
def test_cuda_compiles(kind, arch):
    src = GEMMS[kind].variant(SIGS[kind]).source("cuda", line_directives=True)
    assert nvrtc.library().compile(src, arch)


def test_capability_table():
    t = gk.types.FragmentType("a", 16, 16, 16, float16, "row")
    assert mma_ops.capability([t])[0] == 70
    assert mma_ops.capability([gk.types.FragmentType("a", 16, 16, 8, float32, "row")])[0] == 80


@pytest.mark.parametrize("space", ["shared", "global"])
@pytest.mark.parametrize(
    "t",
    [
        gk.types.FragmentType(use, m, n, k, elem, layout if use != "accumulator" else None)
        for name, elem in (("float16", float16), ("bfloat16", bfloat16), ("float32", float32))
        for (m, n, k) in mma_ops.FRAGMENT_SHAPES[name]
        for use in ("a", "b", "accumulator")
        for layout in ("row", "col")
        if not (use == "accumulator" and layout == "col")
    ],
    ids=repr,
)
def test_moves_cover_every_element_once(t, space):
    """Whatever instructions a fragment moves in (ldmatrix rows, the mma layout's pairs or single
    elements), together they touch every element of the stored tile exactly once, and a lane's
    run of elements stays inside one stored row."""
    stored = (t.cols, t.rows) if t.layout == "col" else (t.rows, t.cols)
    seen = np.zeros(stored, np.int64)
    for rows, cols, width in mma_ops.moves(t, space):
        assert rows.shape == cols.shape == (32,)
        for r, c in zip(rows, cols):
            if r < 0:
                continue
            assert c + width <= stored[1]
            seen[r, c : c + width] += 1
    assert (seen == 1).all()


def test_moves_are_the_hardware_instructions():
    """The shapes the profiler counts, as an H100 runs wmma (benchmarks/profile_vs_ncu.py): one
    ldmatrix.x4 (16 bytes a lane) for a 16x16 float16 tile in shared memory but four 32-bit pairs
    for a bfloat16 one, four 64-bit moves for a 16x16 accumulator, eight rows of single elements
    for the 8x32 one; gpukern's own TF32 code: one ldmatrix.x4 of 8 x 4 blocks for a 16x8 tile in
    shared memory whose rows run along k ('row' a, 'col' b), four 32-bit moves (single elements, as
    mma.m16n8k8 holds them) for the others and from global memory."""
    half_a = gk.types.FragmentType("a", 16, 16, 16, float16, "row")
    assert [w for _, _, w in mma_ops.moves(half_a, "shared")] == [8]
    bf16_a = gk.types.FragmentType("a", 16, 16, 16, bfloat16, "row")
    assert [w for _, _, w in mma_ops.moves(bf16_a, "shared")] == [2, 2, 2, 2]
    wide = gk.types.FragmentType("accumulator", 8, 32, 16, float32)
    assert [(int(r[0]), w) for r, _, w in mma_ops.moves(wide, "global")] == [(r, 1) for r in range(8)]
    acc = gk.types.FragmentType("accumulator", 16, 16, 16, float32)
    assert [w for _, _, w in mma_ops.moves(acc, "global")] == [2, 2, 2, 2]
    tf32_a = gk.types.FragmentType("a", 16, 16, 8, float32, "row")
    moves = mma_ops.moves(tf32_a, "global")
    assert [w for _, _, w in moves] == [1, 1, 1, 1]
    rows, cols, _ = moves[0]  # mma.m16n8k8's a0: lane (g, t) holds row g, column t
    assert list(rows[:8]) == [0, 0, 0, 0, 1, 1, 1, 1] and list(cols[:8]) == [0, 1, 2, 3, 0, 1, 2, 3]
    widths = {}
    for use, layout in (("a", "row"), ("a", "col"), ("b", "row"), ("b", "col"), ("accumulator", None)):
        for space in ("global", "shared"):
            t = gk.types.FragmentType(use, 16, 16, 8, float32, layout)
            widths[use, layout, space] = [w for *_, w in mma_ops.moves(t, space)]
    assert widths["a", "row", "shared"] == widths["b", "col", "shared"] == [4]  # one ldmatrix: k along rows
    assert widths["a", "col", "shared"] == widths["b", "col", "global"] == [1] * 4  # an element a lane
    assert widths["b", "row", "shared"] == widths["b", "row", "global"] == [2, 2]  # columns 2g, 2g + 1
    assert widths["accumulator", None, "global"] == [4, 4]  # columns 4t..4t + 3 of rows g, g + 8


@pytest.mark.parametrize("use, layout", [("a", "row"), ("a", "col"), ("b", "row"), ("b", "col"), ("accumulator", None)])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_tf32_moves_are_the_registers_of_each_lane(use, layout, space):
    """gpukern's TF32 code moves every element of a tile once, each by the lane whose register holds
    it (mma_ops.tf32_lanes, the layout the C helpers implement); an ldmatrix by a lane that gives
    the address of a whole 16-byte row (another lane receives it): then every element once."""
    t = gk.types.FragmentType(use, 16, 16, 8, float32, layout)
    moved = []
    for rows, cols, width in mma_ops.moves(t, space):
        for lane in range(32):
            if rows[lane] >= 0:
                for e in range(width):  # stored (row, column) back to the fragment's (row, column)
                    r, c = int(rows[lane]), int(cols[lane]) + e
                    moved.append((lane, (c, r) if layout == "col" else (r, c)))
    cells = sorted(cell for _, cell in moved)
    assert cells == sorted((r, c) for r in range(t.rows) for c in range(t.cols))  # each element once
    if not mma_ops.by_ldmatrix(t, space):
        held = {(lane, (int(r[lane]), int(c[lane]))) for r, c in mma_ops.tf32_lanes(use) for lane in range(32)}
        assert set(moved) == held


def test_global_tiles_must_be_32_byte_aligned_at_launch():
    """wmma's loads and stores need 256-bit aligned tiles: a global array a fragment is loaded
    from or stored to needs 32 bytes in the variant's alignments, which the CUDA launch checks of
    foreign arrays as it does for vector reads (a LaunchError there instead of a misaligned-address
    fault; that check is not run here, without a GPU); staged shared tiles are not launch arguments."""
    sig = tile16.signature_of((np.zeros((16, 16), np.float16),) * 2 + (np.zeros((16, 16), np.float32),))
    assert tile16.variant(sig).vector_alignment == {"a": 32, "b": 32, "c": 32}
    staged = GEMMS["float16"]
    sig = staged.signature_of(
        (np.zeros((32, 16), np.float16), np.zeros((16, 32), np.float16), np.zeros((32, 32), np.float32))
    )
    assert staged.variant(sig).vector_alignment == {"c": 32}


@gk.kernel
def from_odd_rows(a: Array[float16, 2], c: Array[float32, 2]):
    s = gk.shared(gk.float16, (16, 17))  # rows of 34 bytes: not a multiple of 16
    for e in range(gk.thread_idx.x, 256, 32):
        s[e // 16, e % 16] = a[e // 16, e % 16]
    gk.barrier()
    fa = gk.fragment("a", 16, 16, 16, gk.float16)
    fb = gk.fragment("b", 16, 16, 16, gk.float16)
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    gk.fill_fragment(fb, 1.0)
    gk.load_matrix(fa, s, (0, 0))
    acc = gk.mma(fa, fb, acc)
    gk.store_matrix(c, (0, 0), acc)


def test_misaligned_tile_is_reported(on_simulator):
    """wmma needs a tile's rows 16 bytes apart (and its start 32-byte aligned): a 16 x 17 half
    array is refused as docs/language.md says, with the numbers."""
    with pytest.raises(gk.MisalignedAccessError, match="rows 17 elements apart"):
        from_odd_rows[1, 32](np.ones((16, 16), np.float16), np.zeros((16, 16), np.float32))


@gk.func
def tile_into(c: Array[float32, 2]):
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 1.0)
    gk.store_matrix(c, (0, 0), acc)


def test_a_call_with_fragment_operations_is_warp_collective_too():
    """A @func holding fragment operations, called under a thread-dependent branch, is refused at
    the call as the operations themselves would be (it compiled, and only the simulator caught it)."""

    def calls(c: Array[float32, 2]):
        if gk.thread_idx.x < 16:
            tile_into(c)

    with pytest.raises(gk.KernelTypeError, match=r"tile_into\(\) \(which has fragment operations\) inside an if"):
        _source(calls, Array[float32, 2])

    def uniform(c: Array[float32, 2]):
        tile_into(c)

    assert "tile_into" in _source(uniform, Array[float32, 2])
