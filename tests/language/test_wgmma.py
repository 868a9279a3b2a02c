"""Warpgroup matrix multiply-accumulate (``gk.wgmma``, sm_90): products against NumPy on the simulator
and on an sm_90 GPU (float16, bfloat16, TF32; B row-major and K-major; n from 8 to 256; two
warpgroups a block), the swizzled layout's helper against the hardware's addressing, the
asynchronous reads and accumulators in flight as races, the refusals, and the CUDA C (sm_90a).

Tolerance: ``gpukern.semantics.mma.tolerance`` of the inputs as the matrix units take them (float16 and
bfloat16 exact, float32 rounded to TF32 by the simulator; an H100 truncates to TF32, within the same
bound's TF32 term: the TF32 cases compare against the float32 inputs within TF32's 10 bits).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from compilers import needs_nvrtc
from matrix_inputs import inputs

import gpukern as gk
from gpukern import Array, bfloat16, float16, float32, int32
from gpukern.backends import nvrtc
from gpukern.backends.cuda_compile import kernel_arch
from gpukern.semantics import mma as mma_ops
from gpukern.semantics import tma as tma_ops
from gpukern.semantics import wgmma as wgmma_ops

KINDS = {"float16": float16, "bfloat16": bfloat16, "tf32": float32}


def _need_wgmma(backend):
    """wgmma runs on the simulator and on sm_90 GPUs; OpenCL refuses it (test_opencl_refuses)."""
    if backend == "opencl":
        pytest.skip("OpenCL has no matrix units in gpukern")
    if backend == "cuda" and getattr(gk.get_backend(), "arch", None) != "sm_90":
        pytest.skip("wgmma needs an sm_90 GPU")


def make_product(T, n: int, row_major_b: bool | str, fresh: bool = False):
    """C (128 x n) = A (128 x K) @ B (K x n), K one 128-byte row of A's atoms (64 halves, 32 floats):
    two warpgroups, each its 64 rows of A, B shared; the operands staged with gk.swizzle128 (B
    row-major in a tile n wide, or ``"panels"``: in panels 64 wide and K tall, or transposed; ``fresh``:
    the accumulator never filled, its first k step ``accumulate=False``)."""
    panels = row_major_b == "panels"
    chunk = 16 // T.itemsize
    ks = 8 * chunk
    fk = wgmma_ops.K["float32" if T == float32 else T.name]
    b_tile = 128 * ks  # where B's tile starts in the shared array (1024-byte aligned)

    @gk.kernel
    def product(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2]):
        s = gk.dynamic_shared(T)
        t = gk.thread_idx.x
        for e in range(t, 128 * ks, 256):
            s[gk.swizzle128(e // ks, e % ks, ks, chunk)] = a[e // ks, e % ks]
        for e in range(t, ks * n, 256):
            r = e // n
            q = e % n
            if panels:  # panel q // 64: what a TMA box of ks x 64 lays down
                s[b_tile + (q // 64) * ks * 64 + gk.swizzle128(r, q % 64, 64, chunk)] = b[r, q]
            elif row_major_b:
                s[b_tile + gk.swizzle128(r, q, n, chunk)] = b[r, q]
            else:  # stored transposed: row q, column r of an n x ks tile
                s[b_tile + gk.swizzle128(q, r, ks, chunk)] = b[r, q]
        gk.barrier()
        wg = t // 128
        acc = gk.fragment("accumulator", 64, n, fk, float32)
        if not fresh:
            gk.fill_fragment(acc, 0.0)
        for kk in gk.unroll(range(0, ks, fk)):
            if fresh:
                acc = gk.wgmma(acc, s, wg * 64 * ks + kk, s, b_tile + kk, accumulate=kk > 0)
            elif panels:
                acc = gk.wgmma(acc, s, wg * 64 * ks + kk, s, b_tile + kk * 64, b_panel=ks)
            elif row_major_b:
                acc = gk.wgmma(acc, s, wg * 64 * ks + kk, s, b_tile + kk * n, b_width=n)
            else:
                acc = gk.wgmma(acc, s, wg * 64 * ks + kk, s, b_tile + kk)
        gk.wgmma_commit()
        gk.wgmma_wait(0)
        gk.store_matrix(c, (wg * 64, 0), acc)

    product.shared_bytes = (128 * ks + ks * n) * T.itemsize
    product.k = ks
    return product


CASES = [
    ("float16", 256, True),
    ("float16", 64, False),
    ("float16", 8, False),
    ("bfloat16", 128, True),
    ("bfloat16", 16, False),
    ("float16", 128, "panels"),
    ("bfloat16", 192, "panels"),
    ("tf32", 256, False),
    ("tf32", 40, False),
]


@pytest.mark.parametrize("kind, n, row_major_b", CASES + [("bfloat16", 64, "fresh"), ("tf32", 32, "fresh")])
def test_wgmma_matches_numpy(backend, kind, n, row_major_b):
    """(``fresh``: an accumulator never filled, set by its first wgmma: ``accumulate=False``, PTX's scale-d 0;
    on the simulator it holds NaN before, on a GPU garbage: either would show.)"""
    _need_wgmma(backend)
    T = KINDS[kind]
    fresh = row_major_b == "fresh"
    kern = make_product(T, n, False if fresh else row_major_b, fresh)
    a, b, ra, rb = inputs(kind, 128, n, kern.k, seed=n)
    c = np.full((128, n), np.nan, np.float32)
    kern[1, 256, kern.shared_bytes](a, b, c)
    if kind == "tf32" and backend == "cuda":  # the hardware truncates to TF32: against the float32 inputs
        full = a.astype(np.float64) @ b.astype(np.float64)
        assert (np.abs(c - full) <= 2.0**-9 * (np.abs(a).astype(np.float64) @ np.abs(b))).all()
    else:
        exact = ra @ rb
        tol = mma_ops.tolerance(np.abs(ra), np.abs(rb), wgmma_ops.K["float32" if kind == "tf32" else kind])
        assert (np.abs(c - exact) <= tol).all(), f"worst {np.nanmax(np.abs(c - exact))}"


@pytest.mark.parametrize("itemsize", [2, 4])
def test_swizzle128_is_where_wgmma_reads_a_k_major_operand(itemsize):
    """gk.swizzle128 (the copies' helper) puts each element of a tile one atom wide where the
    hardware's addressing (wgmma_ops.tile: byte addresses, swizzled) reads it, for every start a k
    step takes within the atom's row."""
    per_row, chunk, k = 128 // itemsize, 16 // itemsize, 16 if itemsize == 2 else 8
    for c0 in range(0, per_row, k):
        got = wgmma_ops.tile(c0, itemsize, 64, k, wgmma_ops.b_strides(None, None, itemsize))
        want = gk.swizzle128(np.arange(64)[:, None], c0 + np.arange(k)[None, :], per_row, chunk)
        assert (got == want).all()


@pytest.mark.parametrize("itemsize", [2, 4])
@pytest.mark.parametrize("width_atoms", [1, 2, 4])
def test_swizzle128_is_where_wgmma_reads_a_row_major_b(itemsize, width_atoms):
    """The same for a row-major B in a tile ``width_atoms`` atoms wide, k steps down its rows; and
    the layout is a permutation of the tile: every element once."""
    per_row, chunk, k = 128 // itemsize, 16 // itemsize, 16 if itemsize == 2 else 8
    width = per_row * width_atoms
    cols = np.arange(width)[None, :]
    for r0 in range(0, 32, k):
        got = wgmma_ops.tile(r0 * width, itemsize, k, width, wgmma_ops.b_strides(width, None, itemsize))
        want = gk.swizzle128(r0 + np.arange(k)[:, None], cols, width, chunk)
        assert (got == want).all()
    tile = gk.swizzle128(np.arange(32)[:, None], cols, width, chunk)
    assert sorted(tile.ravel().tolist()) == list(range(32 * width))


@pytest.mark.parametrize("panels", [1, 2, 4])
@pytest.mark.parametrize("rows", [16, 64, 128])
def test_a_row_major_b_in_panels_is_what_tma_boxes_lay_out(panels, rows):
    """B in panels (``b_panel=rows``): column panel p of the tile holds columns 64 p .. 64 p + 63 as a
    TMA box (rows x 64 halves, 128-byte swizzle) lands them, panel p at element 64 rows p
    (``semantics.tma.swizzle`` of the box's row-major bytes); wgmma's addressing reads exactly that,
    for every k step down the panel."""
    width = 64 * panels
    r = np.arange(rows)[:, None]
    c = np.arange(width)[None, :]
    landed = (c // 64) * rows * 64 + tma_ops.swizzle((r * 64 + c % 64) * 2, 128) // 2
    assert sorted(landed.ravel().tolist()) == list(range(rows * width))
    for r0 in range(0, rows, 16):
        got = wgmma_ops.tile(r0 * 64, 2, 16, width, wgmma_ops.b_strides(None, rows, 2))
        assert (got == landed[r0 : r0 + 16]).all()


# ---------------------------------------------------------------- in flight
@gk.func
def stage(s: Array[float16, 1], a: Array[float16, 2]):
    """A 64 x 64 float16 ``a`` into ``s[0:4096]`` in swizzled atoms (one atom wide: an A, or a B
    stored n x k), by a warpgroup's 128 threads; the caller's barrier() follows."""
    for e in range(gk.thread_idx.x, 64 * 64, 128):
        s[gk.swizzle128(e // 64, e % 64, 64, 8)] = a[e // 64, e % 64]


def make_stream(stages: int, pending: int):
    """A warpgroup multiplies k steps staged in ``stages`` stages, each refilled right after the
    wgmma_wait(pending) that follows the step before's wgmma: the refilled stage's wgmma has landed
    where ``pending < stages``; else its reads may still be in flight (a race)."""

    @gk.kernel
    def stream(a: Array[float16, 2], b: Array[float16, 2], c: Array[float32, 2]):
        s = gk.dynamic_shared(float16)
        t = gk.thread_idx.x
        acc = gk.fragment("accumulator", 64, 8, 16, float32)
        gk.fill_fragment(acc, 0.0)
        steps = a.shape[1] // 16
        for step in range(steps):
            gk.barrier()  # every warp is past its wait: a barrier orders threads, not the matrix units
            base = (step % stages) * 4608  # A's 64 rows of 64, B's 8 rows (n x k): 1024-byte aligned
            for e in range(t, 64 * 16, 128):
                s[base + gk.swizzle128(e // 16, e % 16, 64, 8)] = a[e // 16, step * 16 + e % 16]
            for e in range(t, 16 * 8, 128):
                s[base + 4096 + gk.swizzle128(e % 8, e // 8, 64, 8)] = b[step * 16 + e // 8, e % 8]
            gk.barrier()
            acc = gk.wgmma(acc, s, base, s, base + 4096)
            gk.wgmma_commit()
            gk.wgmma_wait(pending)
        gk.wgmma_wait(0)
        gk.store_matrix(c, (0, 0), acc)

    return stream


def test_a_stage_refilled_while_wgmma_reads_it_is_a_race(on_simulator):
    a, b, ra, rb = inputs("float16", 64, 8, 64)
    for stages, pending in ((1, 0), (2, 1), (3, 2)):
        c = np.zeros((64, 8), np.float32)
        make_stream(stages, pending)[1, 128, stages * 9216](a, b, c)
        assert (np.abs(c - ra @ rb) <= mma_ops.tolerance(np.abs(ra), np.abs(rb), 16)).all()
    for stages, pending in ((1, 1), (2, 2)):
        with pytest.raises(gk.DataRaceError, match=r"while the wgmma\(\) started by .* reads it \(before its"):
            make_stream(stages, pending)[1, 128, stages * 9216](a, b, c)


@gk.kernel
def read_too_early(a: Array[float16, 2], c: Array[float32, 2]):
    s = gk.dynamic_shared(float16)
    stage(s, a)
    gk.barrier()
    acc = gk.fragment("accumulator", 64, 64, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 0, s, 0)
    gk.wgmma_commit()
    gk.store_matrix(c, (0, 0), acc)  # before wgmma_wait: the accumulator is not done


def test_an_accumulator_stored_before_its_wait_is_a_race(on_simulator):
    a = np.ones((64, 64), np.float16)
    with pytest.raises(gk.DataRaceError, match=r"accumulator 'acc': store_matrix\(\) uses it .* wgmma\(\) at line \d+"):
        read_too_early[1, 128, 8192](a, np.zeros((64, 64), np.float32))


# ---------------------------------------------------------------- refusals
def test_a_partial_warpgroup_is_reported(on_simulator):
    kern = make_product(float16, 64, True)
    a, b, _, _ = inputs("float16", 128, 64, 64)
    with pytest.raises(gk.WarpMaskError, match="not a multiple of 128"):
        kern[1, 192, kern.shared_bytes](a, b, np.zeros((128, 64), np.float32))


def test_a_partial_warpgroup_is_reported_to_sanitize_too():
    """Under gk.sanitize the run goes on after the report: blocks of 32 to 192 threads (not whole
    warpgroups) are reported, not a Python error."""
    kern = make_product(float16, 64, True)
    a, b, _, _ = inputs("float16", 128, 64, 64)
    for threads in (32, 96, 192):
        faults = gk.sanitize(kern[1, threads, kern.shared_bytes], a, b, np.zeros((128, 64), np.float32))
        assert any(isinstance(e, gk.WarpMaskError) for e in faults), threads


@gk.kernel
def per_warp_offset(a: Array[float16, 2], c: Array[float32, 2]):
    s = gk.dynamic_shared(float16)
    stage(s, a)
    gk.barrier()
    acc = gk.fragment("accumulator", 64, 8, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, (gk.thread_idx.x // 32 % 2) * 16, s, 0)  # warps 1 and 3 another k step
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), acc)


def test_operands_must_be_the_same_across_the_warpgroup(on_simulator):
    a = np.ones((64, 64), np.float16)
    with pytest.raises(gk.WarpMaskError, match="A offset differs between the warps of a warpgroup"):
        per_warp_offset[1, 128, 8192](a, np.zeros((64, 8), np.float32))


@gk.func
def own_accumulator(s: Array[float16, 1], c: Array[float32, 2]):
    acc = gk.fragment("accumulator", 64, 8, 16, float32)  # the caller's has the same name
    gk.fill_fragment(acc, 1.0)
    gk.store_matrix(c, (0, 0), acc)


@gk.kernel
def func_while_in_flight(a: Array[float16, 2], c: Array[float32, 2], d: Array[float32, 2]):
    s = gk.dynamic_shared(float16)
    stage(s, a)
    gk.barrier()
    acc = gk.fragment("accumulator", 64, 8, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 0, s, 0)
    gk.wgmma_commit()
    own_accumulator(s, d)  # another accumulator: no race with the one in flight
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), acc)


def test_a_functions_own_accumulator_is_not_the_one_in_flight(on_simulator):
    a = np.ones((64, 64), np.float16)
    c, d = np.full((64, 8), np.nan, np.float32), np.full((64, 8), np.nan, np.float32)
    func_while_in_flight[1, 128, 8192](a, c, d)
    assert (d == 1.0).all() and (c == 16.0).all()  # the caller's: ones times ones over k = 16


@gk.func
def product_once(s: Array[float16, 1], c: Array[float32, 2]):
    acc = gk.fragment("accumulator", 64, 8, 16, float32)  # a new accumulator every call
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 0, s, 0)
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), acc)


@gk.kernel
def products_in_a_loop(a: Array[float16, 2], c: Array[float32, 2], times: int32):
    s = gk.dynamic_shared(float16)
    stage(s, a)
    gk.barrier()
    for _ in range(times):
        product_once(s, c)


def test_accumulators_waited_for_are_forgotten(on_simulator, monkeypatch):
    """The simulator keeps an accumulator with a wgmma in flight until its wait: a func's own,
    made anew each call, is not kept after (nothing grows with the calls)."""
    from gpukern.sim import mma as sim_mma

    kept = []
    wait = sim_mma.Fragments.wgmma_wait

    def recording(self, s, m):
        wait(self, s, m)
        kept.append(len(self.pending))

    monkeypatch.setattr(sim_mma.Fragments, "wgmma_wait", recording)
    a = np.ones((64, 64), np.float16)
    c = np.zeros((64, 8), np.float32)
    products_in_a_loop[1, 128, 8192](a, c, 5)
    assert (c == 16.0).all() and kept == [0] * 5  # (one wgmma: k = 16 of ones)


@gk.kernel
def misplaced(a: Array[float16, 2], c: Array[float32, 2], at: int32):
    s = gk.dynamic_shared(float16)
    for e in range(gk.thread_idx.x, 64 * 64, 128):
        s[e] = a[e // 64, e % 64]
    gk.barrier()
    acc = gk.fragment("accumulator", 64, 8, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, at, s, 0)
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), acc)


def test_a_misplaced_operand_is_reported(on_simulator):
    a = np.ones((64, 64), np.float16)
    misplaced[1, 128, 8192](a, np.zeros((64, 8), np.float32), 16)  # 32 bytes on: the next k step
    with pytest.raises(gk.MisalignedAccessError, match="starts 16 bytes into its atom"):
        misplaced[1, 128, 8192](a, np.zeros((64, 8), np.float32), 8)
    with pytest.raises(gk.MisalignedAccessError, match="starts 128 bytes into its atom"):
        misplaced[1, 128, 8192](a, np.zeros((64, 8), np.float32), 64)


def _refused(body: str, match: str, tmp: pathlib.Path) -> None:
    src = (
        "import gpukern as gk\nfrom gpukern import Array, float16, float32\n"
        "@gk.kernel\ndef k(a: Array[float16, 2], g: Array[float32, 2]):\n"
        "    s = gk.dynamic_shared(float16)\n    t = gk.dynamic_shared(float32)\n"
        "    acc = gk.fragment('accumulator', 64, 64, 16, float32)\n"
        "    gk.fill_fragment(acc, 0.0)\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )
    import importlib.util

    path = tmp / "refused_kernel.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("refused_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(gk.KernelTypeError, match=match):
        mod.k.source(Array[float16, 2], Array[float32, 2], backend="cuda")


@pytest.mark.parametrize(
    "body, match",
    [
        ("acc = gk.wgmma(acc, a, 0, s, 0)", "reads its A from a 1-D shared array"),
        ("acc = gk.wgmma(acc, s, 0, t, 0)", "operands of one type, not float16 and float32"),
        ("acc = gk.wgmma(acc, t, 0, t, 0)", "steps k by 8"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_width=0)", "b_width is B's tile width"),
        ("acc = gk.wgmma(acc, s, 0.5, s, 0)", "cannot become int32"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_width=32)", "a multiple of 64 elements"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_width=g.shape[0])", "b_width is B's tile width"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_width=64, b_panel=64)", "either in a tile b_width wide or in panels"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_panel=12)", "b_panel \\(12\\) is the rows of each of B's panels"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, accumulate=g.shape[0] > 0)", "accumulate is True or False known at"),
        ("acc = gk.wgmma(acc, s, 0, s, 0, accumulate=1)", "accumulate is True or False known at"),
        # b_width=None: as left out (the error after it is reached)
        ("acc = gk.wgmma(acc, s, 0, s, 0, b_width=None)\nx = acc[32]", "a thread holds 32 elements"),
        (
            "f = gk.fragment('accumulator', 16, 16, 16, float32)\n"
            "gk.fill_fragment(f, 0.0)\nf = gk.wgmma(f, s, 0, s, 0)",
            "warpgroup's accumulator",
        ),
        ("gk.load_matrix(acc, g, (0, 0))", "wgmma\\(\\) computes it"),
        (
            "fa = gk.fragment('a', 16, 16, 16, float16)\nfb = gk.fragment('b', 16, 16, 16, float16)\n"
            "gk.load_matrix(fa, a, (0, 0))\ngk.load_matrix(fb, a, (0, 0))\nacc = gk.mma(fa, fb, acc)",
            "computed by wgmma",
        ),
        ("f = gk.fragment('accumulator', 64, 12, 16, float32)", "no matrix unit computes"),
        ("gk.wgmma_wait(8)", "a constant from 0 to 7"),
        ("if gk.thread_idx.x < 64:\n    acc = gk.wgmma(acc, s, 0, s, 0)", "depends on the thread"),
    ],
)
def test_refusals(body, match, tmp_path):
    _refused(body, match, tmp_path)


@pytest.mark.parametrize("layout", ["b_width=64", "b_panel=64"])
def test_tf32_b_is_k_major_only(tmp_path, layout):
    _refused(
        "acc2 = gk.fragment('accumulator', 64, 64, 8, float32)\ngk.fill_fragment(acc2, 0.0)\n"
        f"acc2 = gk.wgmma(acc2, t, 0, t, 0, {layout})",
        "K-major only",
        tmp_path,
    )


def test_opencl_refuses():
    kern = make_product(float16, 64, True)
    with pytest.raises(gk.CompileError, match="matrix multiply-accumulate unit"):
        kern.source(Array[float16, 2], Array[float16, 2], Array[float32, 2], backend="opencl")


@gk.kernel
def barrier_then_commit(x: Array[float32]):
    gk.barrier()
    gk.wgmma_commit()


def test_opencl_refuses_at_the_warpgroup_statement_in_its_words():
    """Not at an earlier barrier (which a wgmma kernel fences), nor in the words of fragments."""
    with pytest.raises(gk.CompileError, match=r"gk.wgmma\(\) and its commit and wait") as e:
        barrier_then_commit.source(Array[float32], backend="opencl")
    assert "wgmma_commit" in str(e.value) and "sm_90a" in str(e.value)


# ---------------------------------------------------------------- CUDA C
@pytest.mark.parametrize("kind, n, row_major_b", CASES)
def test_cuda_source(kind, n, row_major_b):
    T = KINDS[kind]
    kern = make_product(T, n, row_major_b)
    src = kern.source(Array[T, 2], Array[T, 2], Array[float32, 2], backend="cuda")
    ptx = {"float16": "f16", "bfloat16": "bf16", "tf32": "tf32"}[kind]
    k = 8 if kind == "tf32" else 16
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptx}.{ptx}" in src
    assert "__align__(1024)" in src  # the swizzled atoms' alignment
    # writes -> the matrix units: the barrier fences the async proxy first (the spelling TMA kernels' barriers use)
    assert 'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory"); __syncthreads();' in src
    assert 'gk_wg_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;' in src
    # the unrolled k steps are one run of wgmma's: fenced once, before the first
    body = src[src.index('extern "C" __global__') :]
    assert body.count("gk_wg_fence();") == 1
    # the product's K (one 128-byte row: 64 16-bit elements, 32 floats) in steps of the wgmma's k
    steps = (32 if kind == "tf32" else 64) // k
    assert body.count(f"{'gk_wgmma_' + ptx}_n{n}{'_t' if row_major_b else ''}(acc, ") == steps
    assert all(line.count("  // ") <= 1 for line in src.splitlines())  # one Python line per statement


@needs_nvrtc
@pytest.mark.parametrize("kind, n, row_major_b", CASES)
def test_cuda_compiles_for_sm90a(kind, n, row_major_b):
    T = KINDS[kind]
    src = (
        make_product(T, n, row_major_b)
        .variant((Array[T, 2], Array[T, 2], Array[float32, 2]))
        .source("cuda", line_directives=True)
    )
    assert nvrtc.library().compile(src, "sm_90a")


@needs_nvrtc
@pytest.mark.parametrize("kind", ["bfloat16", "tf32"])
def test_accumulate_false_is_scale_d_zero(kind):
    """``accumulate=False`` on the first k step: the helper's predicate p is set from its last
    argument (0 there, 1 after), the fill is not needed, and NVRTC compiles it for sm_90a."""
    T = KINDS[kind]
    var = make_product(T, 32, False, True).variant((Array[T, 2], Array[T, 2], Array[float32, 2]))
    src = var.source("cuda")
    body = src[src.index('extern "C" __global__') :]
    calls = [line.split("//")[0] for line in body.splitlines() if "gk_wgmma_" in line]
    assert calls[0].rstrip().endswith(", 0);") and all(c.rstrip().endswith(", 1);") for c in calls[1:])
    assert "gk_wg_fill" not in body and "setp.ne.b32 p, %" in src
    assert nvrtc.library().compile(var.source("cuda", line_directives=True), "sm_90a")


def test_capability():
    t = gk.types.FragmentType("accumulator", 64, 256, 16, float32, None)
    assert mma_ops.lowering(t) == wgmma_ops.LOWERING and mma_ops.capability([t]) == mma_ops.WARPGROUP
    assert mma_ops.moves(t, "global")[0][2] == 2  # 64-bit stores of the accumulator's pairs


def test_profiler_counts_no_instruction_for_wgmma_operands():
    """The matrix units read a wgmma's operands themselves: the profiler counts the staging's
    shared stores and the accumulator's global stores, no shared load."""
    kern = make_product(float16, 64, True)
    a, b, _, _ = inputs("float16", 128, 64, 64)
    rep = gk.profile(kern[1, 256, kern.shared_bytes], a, b, np.zeros((128, 64), np.float32))
    total = rep.total
    assert total.shared_load_elems == 0
    assert total.shared_store_elems == 128 * 64 + 64 * 64
    assert total.global_store_elems == 128 * 64


@gk.kernel
def vote_then_wgmma(a: Array[float16, 2], c: Array[float32, 2], flag: Array[int32, 1]):
    s = gk.dynamic_shared(float16)
    stage(s, a)
    any_nonzero = gk.syncthreads_or(a[0, gk.thread_idx.x % 64] != 0.0)  # a barrier that votes
    acc = gk.fragment("accumulator", 64, 8, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 0, s, 0)
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), acc)
    flag[0] = 1 if any_nonzero else 0


def test_block_vote_is_fenced_and_a_wait_alone_needs_sm90():
    src = vote_then_wgmma.source(Array[float16, 2], Array[float32, 2], Array[int32, 1], backend="cuda")
    (vote,) = [line for line in src.splitlines() if "__syncthreads_or(" in line]
    assert vote.lstrip().startswith('asm volatile("fence.proxy.async.shared::cta;')
    v = read_too_early.variant((Array[float16, 2], Array[float32, 2]))
    assert v.matrix_capability == mma_ops.WARPGROUP
    assert kernel_arch("sm_90", mma_ops.WARPGROUP) == "sm_90a"
    assert kernel_arch("sm_100", mma_ops.WARPGROUP) is None  # sm_90's own instructions
    assert kernel_arch("sm_100", mma_ops.CAPABILITY["float16"]) == "sm_100"
    assert kernel_arch("sm_75", mma_ops.CAPABILITY["bfloat16"]) is None  # too old
    assert kernel_arch("sm_75", None) == "sm_75"
