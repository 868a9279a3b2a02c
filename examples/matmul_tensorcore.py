"""A half-precision GEMM on the tensor cores: FP16 inputs, FP32 accumulation, FP32 output.

The matrix units multiply 16x16x16 tiles held in *fragments*, warp-wide values that a warp loads
from memory, multiplies and accumulates, and stores (``gk.fragment``, ``gk.load_matrix``,
``gk.mma``, ``gk.store_matrix``; CUDA's ``nvcuda::wmma``).  What makes them fast is feeding them:

- block tiling: a block of 4 warps computes a 64 x 64 tile of C, stepping through k by 32; A's and
  B's tiles are staged in shared memory, rows padded by 8 halves so the warps' fragment loads spread
  over the banks (a row stays a multiple of 16 bytes and every tile 32-byte aligned, as wmma needs);
- warp tiling: each warp holds a 2 x 2 block of 16 x 16 accumulators (32 x 32 of C), so each
  fragment of A and B it loads feeds two mma's;
- sizes that are not multiples of the tiles: the staging loop is guarded and writes zeros past
  the matrices' edges (zeros add nothing), and the results go through shared memory to a guarded
  copy, so no fragment operation is ever under a thread-dependent branch (they are warp-collective).

Where the rows of A and B are 16-byte aligned (k and n multiples of 8; any m),
``hgemm_pipelined`` runs instead: 128 x 128 x 64 block tiles of 4 warps with 4 x 4 accumulators
each (64 x 64 of C), three shared stages in dynamic shared memory (105 KiB, two blocks an SM), the next two k
steps copied by 16-byte ``gk.async_copy``s (``cp.async``) while the current one is multiplied,
and blocks walking C's tiles in groups for L2 reuse.  Past C's edges its copies read the last row
(column chunk) again, whose products land only in C's rows (columns) that are not stored; a
partial last k step is zero-filled; edge tiles of C go through shared memory to a guarded copy.
``benchmarks/tensorcore.py`` measures it, and other stage counts and k steps, against cuBLAS.
On sm_90 (H100, H200) ``hgemm_warpgroup`` runs instead: two warpgroups of 128 threads, each 64 x 256
of C in one ``gk.wgmma`` accumulator, A's and B's tiles read by the matrix units straight from
shared memory in 128-byte swizzled atoms (``gk.swizzle128``), four stages, the wgmma's of one k step
in flight while the next step's are issued (``make_warpgroup``); ``tgemm_warpgroup`` is its TF32
twin, which reads B's transpose (wgmma takes a TF32 B K-major only).
``tgemm_pipelined`` is the same for float32 inputs on the tensor cores in TF32 (``matmul_tf32``),
with a k step of 32 in two stages (measured best of 16 to 64 and 2 to 4 stages, ``benchmarks/results/
2026-11-24-h100-tf32``); its fragments run on gpukern's own TF32 code (``gpukern.semantics.mma.lowering``).

    python examples/matmul_tensorcore.py --size 4096        # checked against NumPy float64
    python examples/matmul_tensorcore.py --size 100 --backend sim
    python examples/matmul_tensorcore.py --show-source

The tolerance: the inputs are float16 (exact in the fragments); each element of C may differ from
the float64 product by ``gpukern.semantics.mma.tolerance`` (a few float32 roundings of sum |a||b|).
"""

from __future__ import annotations

import argparse
import functools
import sys

import numpy as np

import gpukern as gk
from gpukern import (
    Array,
    barrier,
    block_dim,
    block_idx,
    dynamic_shared,
    float16,
    float32,
    grid_dim,
    int32,
    kernel,
    launch_bounds,
    shared,
    thread_idx,
)

BM, BN, BK = 64, 64, 32  # the block's tile of C, and the k step
PAD = 8  # halves added to each staged row (bank spread; keeps 16-byte rows)
THREADS = 128  # 4 warps, 2 x 2, each 32 x 32 of C


@kernel
def hgemm(a: Array[float16, 2], b: Array[float16, 2], c: Array[float32, 2], m: int32, n: int32, k: int32):
    t = thread_idx.x
    warp = t // 32
    wr = (warp // 2) * 32  # the warp's rows and columns in the block's tile
    wc = (warp % 2) * 32
    row0 = block_idx.y * BM
    col0 = block_idx.x * BN
    As = shared(float16, (BM, BK + PAD))
    Bs = shared(float16, (BK, BN + PAD))
    Cs = shared(float32, (BM, BN + 4))
    fa0 = gk.fragment("a", 16, 16, 16, float16)
    fa1 = gk.fragment("a", 16, 16, 16, float16)
    fb0 = gk.fragment("b", 16, 16, 16, float16)
    fb1 = gk.fragment("b", 16, 16, 16, float16)
    c00 = gk.fragment("accumulator", 16, 16, 16, float32)
    c01 = gk.fragment("accumulator", 16, 16, 16, float32)
    c10 = gk.fragment("accumulator", 16, 16, 16, float32)
    c11 = gk.fragment("accumulator", 16, 16, 16, float32)
    gk.fill_fragment(c00, 0.0)
    gk.fill_fragment(c01, 0.0)
    gk.fill_fragment(c10, 0.0)
    gk.fill_fragment(c11, 0.0)
    for k0 in range(0, k, BK):
        for e in range(t, BM * BK, THREADS):  # stage A's tile, zeros past the edges
            r = e // BK
            q = e % BK
            As[r, q] = a[row0 + r, k0 + q] if row0 + r < m and k0 + q < k else float16(0.0)
        for e in range(t, BK * BN, THREADS):  # and B's
            r = e // BN
            q = e % BN
            Bs[r, q] = b[k0 + r, col0 + q] if k0 + r < k and col0 + q < n else float16(0.0)
        barrier()
        for kk in range(0, BK, 16):
            gk.load_matrix(fa0, As, (wr, kk))
            gk.load_matrix(fa1, As, (wr + 16, kk))
            gk.load_matrix(fb0, Bs, (kk, wc))
            gk.load_matrix(fb1, Bs, (kk, wc + 16))
            c00 = gk.mma(fa0, fb0, c00)
            c01 = gk.mma(fa0, fb1, c01)
            c10 = gk.mma(fa1, fb0, c10)
            c11 = gk.mma(fa1, fb1, c11)
        barrier()
    gk.store_matrix(Cs, (wr, wc), c00)
    gk.store_matrix(Cs, (wr, wc + 16), c01)
    gk.store_matrix(Cs, (wr + 16, wc), c10)
    gk.store_matrix(Cs, (wr + 16, wc + 16), c11)
    barrier()
    for e in range(t, BM * BN, THREADS):  # the block's tile of C, where it is inside C
        r = e // BN
        q = e % BN
        if row0 + r < m and col0 + q < n:
            c[row0 + r, col0 + q] = Cs[r, q]


PM, PN = 128, 128  # the pipelined kernels' block tile of C
PTHREADS = 128  # 4 warps, 2 x 2, each 64 x 64 of C (4 x 4 accumulators)


@gk.func
def grouped_tile(group: int32):
    """The tile of C this block computes (its row and column, in tiles): blocks walk C's tiles in
    groups of ``group`` tile rows, column by column, so that blocks running at the same time share
    the panels of A and B they read (in L2) rather than each reading its own."""
    tile = block_idx.y * grid_dim.x + block_idx.x
    first = (tile // (group * grid_dim.x)) * group
    rows = min(grid_dim.y - first, group)
    return first + tile % (group * grid_dim.x) % rows, tile % (group * grid_dim.x) // rows


@gk.func
def copy_edge(
    c: Array[float32, 2],
    cs: Array[float32, 1],
    ldc: int32,
    row0: int32,
    col0: int32,
    rows: int32,
    cols: int32,
    m: int32,
    n: int32,
):
    """The block's ``rows`` x ``cols`` tile of C, staged in shared memory ``ldc`` elements a row, copied
    to C where it lies inside C (m x n): at C's edges, where whole fragments would pass them."""
    for e in range(thread_idx.x, rows * cols, block_dim.x):
        r = e // cols
        q = e % cols
        if row0 + r < m and col0 + q < n:
            c[row0 + r, col0 + q] = cs[r * ldc + q]


@functools.cache
def chunk_copy(T):
    """The 16-byte copy of the pipelined kernels' staging, for elements of type ``T``: a ``@gk.func``
    that starts copying the chunk at ``src[row, col]`` into ``s[at]`` where ``inside`` (within k),
    and writes zeros there where not (past k's end: zeros add nothing to the products)."""
    CHUNK = 16 // T.itemsize

    @gk.func
    def copy(s: Array[T, 1], at: int32, src: Array[T, 2], row: int32, col: int32, inside: bool):
        if inside:
            gk.async_copy(s[at], src[row, col], count=CHUNK)
        else:
            for e in range(CHUNK):
                s[at + e] = 0.0

    return copy


def make_pipelined(T, FK: int, KS: int, STAGES: int, GROUP: int = 8):
    """The pipelined kernel for inputs of type ``T`` (float16; float32: TF32), ``FK`` the fragments'
    k (16; TF32: 8), ``KS`` the k step: C = A @ B for any m, and k and n multiples of the elements
    in 16 bytes (``run_pipelined``).

    ``STAGES`` shared tiles of A and B in the launch's dynamic shared memory (``shared_bytes`` in
    all): while one is multiplied, the copies of the next ``STAGES - 1`` k steps are in flight
    (16-byte ``gk.async_copy``s, one commit group per step), one barrier a step.  Each warp keeps 16
    accumulators: a fragment of A or B feeds 4 mma's (for TF32, whose B fragments load in 64-bit
    pairs rather than one ``ldmatrix``, 64 x 64 warp tiles ran 15 % faster than 32 x 64 ones; for
    float16 alike, ``benchmarks/results/2026-11-24-h100-tf32``).  Blocks walk C's tiles in groups of
    ``GROUP`` tile rows (``grouped_tile``)."""
    CHUNK = 16 // T.itemsize  # elements a copy moves
    if PTHREADS % (KS // CHUNK) or (PM * KS // CHUNK) % PTHREADS or (KS * PN // CHUNK) % PTHREADS:
        raise ValueError(f"a k step of {KS} does not split into {PTHREADS} threads' {CHUNK}-element copies")
    # staged rows padded so the warps' fragment loads spread over the banks: A's by 16 bytes (so the
    # 8 rows of an ldmatrix fall in distinct banks), B's by 8 elements (for TF32, whose B fragment
    # reads pairs of columns from rows 8 banks apart: each half-warp's 64-bit loads then hit 32 banks)
    LDA = KS + CHUNK
    LDB = PN + 8
    A_TILE = PM * LDA
    STAGE = A_TILE + KS * LDB  # elements of one stage: A's tile, then B's
    A_PASSES = PM * KS // CHUNK // PTHREADS  # copies each thread makes of A's tile, of B's
    B_PASSES = KS * PN // CHUNK // PTHREADS
    A_STEP = PTHREADS // (KS // CHUNK)  # rows of A's tile one pass of the threads copies
    B_STEP = PTHREADS // (PN // CHUNK)
    LDC = PN + 4  # a row of C's tile staged (at C's edges) in the stages' shared memory
    copy = chunk_copy(T)

    @gk.func
    def fill(
        s: Array[T, 1],
        a: Array[T, 2],
        b: Array[T, 2],
        base: int32,
        k0: int32,
        row0: int32,
        col0: int32,
        m: int32,
        n: int32,
        k: int32,
    ):
        """Start the copies of the k step at ``k0`` into the stage at ``s[base]``.  Past C's edges
        the copies read the last row of A (column chunk of B) instead: what they bring only reaches
        C's rows (columns) past the edge, which are not stored.  Past k's end a chunk is zeros."""
        t = thread_idx.x
        ar = t // (KS // CHUNK)
        ac = (t % (KS // CHUNK)) * CHUNK
        for i in range(A_PASSES):
            r = ar + i * A_STEP
            copy(s, base + r * LDA + ac, a, min(row0 + r, m - 1), k0 + ac, k0 + ac < k)
        br = t // (PN // CHUNK)
        bc = (t % (PN // CHUNK)) * CHUNK
        for i in range(B_PASSES):
            r = br + i * B_STEP
            copy(s, base + A_TILE + r * LDB + bc, b, k0 + r, min(col0 + bc, n - CHUNK), k0 + r < k)

    @kernel
    def pipelined(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2], m: int32, n: int32, k: int32):
        launch_bounds(PTHREADS, 2)  # two blocks share an SM
        s = dynamic_shared(T)
        warp = thread_idx.x // 32
        wr = (warp // 2) * 64
        wc = (warp % 2) * 64
        tile_row, tile_col = grouped_tile(GROUP)
        row0 = tile_row * PM
        col0 = tile_col * PN
        fa0 = gk.fragment("a", 16, 16, FK, T)
        fa1 = gk.fragment("a", 16, 16, FK, T)
        fa2 = gk.fragment("a", 16, 16, FK, T)
        fa3 = gk.fragment("a", 16, 16, FK, T)
        fb0 = gk.fragment("b", 16, 16, FK, T)
        fb1 = gk.fragment("b", 16, 16, FK, T)
        fb2 = gk.fragment("b", 16, 16, FK, T)
        fb3 = gk.fragment("b", 16, 16, FK, T)
        c00 = gk.fragment("accumulator", 16, 16, FK, float32)
        c01 = gk.fragment("accumulator", 16, 16, FK, float32)
        c02 = gk.fragment("accumulator", 16, 16, FK, float32)
        c03 = gk.fragment("accumulator", 16, 16, FK, float32)
        c10 = gk.fragment("accumulator", 16, 16, FK, float32)
        c11 = gk.fragment("accumulator", 16, 16, FK, float32)
        c12 = gk.fragment("accumulator", 16, 16, FK, float32)
        c13 = gk.fragment("accumulator", 16, 16, FK, float32)
        c20 = gk.fragment("accumulator", 16, 16, FK, float32)
        c21 = gk.fragment("accumulator", 16, 16, FK, float32)
        c22 = gk.fragment("accumulator", 16, 16, FK, float32)
        c23 = gk.fragment("accumulator", 16, 16, FK, float32)
        c30 = gk.fragment("accumulator", 16, 16, FK, float32)
        c31 = gk.fragment("accumulator", 16, 16, FK, float32)
        c32 = gk.fragment("accumulator", 16, 16, FK, float32)
        c33 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c00, 0.0)
        gk.fill_fragment(c01, 0.0)
        gk.fill_fragment(c02, 0.0)
        gk.fill_fragment(c03, 0.0)
        gk.fill_fragment(c10, 0.0)
        gk.fill_fragment(c11, 0.0)
        gk.fill_fragment(c12, 0.0)
        gk.fill_fragment(c13, 0.0)
        gk.fill_fragment(c20, 0.0)
        gk.fill_fragment(c21, 0.0)
        gk.fill_fragment(c22, 0.0)
        gk.fill_fragment(c23, 0.0)
        gk.fill_fragment(c30, 0.0)
        gk.fill_fragment(c31, 0.0)
        gk.fill_fragment(c32, 0.0)
        gk.fill_fragment(c33, 0.0)
        steps = (k + KS - 1) // KS
        for p in range(STAGES - 1):  # the first STAGES - 1 k steps in flight
            if p < steps:
                fill(s, a, b, p * STAGE, p * KS, row0, col0, m, n, k)
            gk.async_commit()  # a group each, empty or not, so that the count below holds
        for step in range(steps):
            gk.async_wait(STAGES - 2)  # this thread's copies of this step have landed
            barrier()  # everyone's have, and everyone is done with the step before's stage
            ahead = step + STAGES - 1  # which goes into that stage, while this one is multiplied
            if ahead < steps:
                fill(s, a, b, (ahead % STAGES) * STAGE, ahead * KS, row0, col0, m, n, k)
            gk.async_commit()
            sa = (step % STAGES) * STAGE + wr * LDA  # this warp's rows of A's tile
            sb = (step % STAGES) * STAGE + A_TILE + wc  # and columns of B's
            for kk in gk.unroll(range(0, KS, FK)):  # (so the next fragments load while these multiply)
                gk.load_matrix(fa0, s, sa + kk, ldm=LDA)
                gk.load_matrix(fa1, s, sa + 16 * LDA + kk, ldm=LDA)
                gk.load_matrix(fa2, s, sa + 32 * LDA + kk, ldm=LDA)
                gk.load_matrix(fa3, s, sa + 48 * LDA + kk, ldm=LDA)
                gk.load_matrix(fb0, s, sb + kk * LDB, ldm=LDB)
                gk.load_matrix(fb1, s, sb + kk * LDB + 16, ldm=LDB)
                gk.load_matrix(fb2, s, sb + kk * LDB + 32, ldm=LDB)
                gk.load_matrix(fb3, s, sb + kk * LDB + 48, ldm=LDB)
                c00 = gk.mma(fa0, fb0, c00)
                c01 = gk.mma(fa0, fb1, c01)
                c02 = gk.mma(fa0, fb2, c02)
                c03 = gk.mma(fa0, fb3, c03)
                c10 = gk.mma(fa1, fb0, c10)
                c11 = gk.mma(fa1, fb1, c11)
                c12 = gk.mma(fa1, fb2, c12)
                c13 = gk.mma(fa1, fb3, c13)
                c20 = gk.mma(fa2, fb0, c20)
                c21 = gk.mma(fa2, fb1, c21)
                c22 = gk.mma(fa2, fb2, c22)
                c23 = gk.mma(fa2, fb3, c23)
                c30 = gk.mma(fa3, fb0, c30)
                c31 = gk.mma(fa3, fb1, c31)
                c32 = gk.mma(fa3, fb2, c32)
                c33 = gk.mma(fa3, fb3, c33)
        if row0 + PM <= m and col0 + PN <= n:  # a whole tile of C: straight from the fragments
            gk.store_matrix(c, (row0 + wr, col0 + wc), c00)
            gk.store_matrix(c, (row0 + wr, col0 + wc + 16), c01)
            gk.store_matrix(c, (row0 + wr, col0 + wc + 32), c02)
            gk.store_matrix(c, (row0 + wr, col0 + wc + 48), c03)
            gk.store_matrix(c, (row0 + wr + 16, col0 + wc), c10)
            gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 16), c11)
            gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 32), c12)
            gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 48), c13)
            gk.store_matrix(c, (row0 + wr + 32, col0 + wc), c20)
            gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 16), c21)
            gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 32), c22)
            gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 48), c23)
            gk.store_matrix(c, (row0 + wr + 48, col0 + wc), c30)
            gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 16), c31)
            gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 32), c32)
            gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 48), c33)
        else:  # C's edge: through shared memory (the stages' bytes, free now), then a guarded copy
            cs = dynamic_shared(float32)
            gk.async_wait(0)
            barrier()
            at = wr * LDC + wc
            gk.store_matrix(cs, at, c00, ldm=LDC)
            gk.store_matrix(cs, at + 16, c01, ldm=LDC)
            gk.store_matrix(cs, at + 32, c02, ldm=LDC)
            gk.store_matrix(cs, at + 48, c03, ldm=LDC)
            gk.store_matrix(cs, at + 16 * LDC, c10, ldm=LDC)
            gk.store_matrix(cs, at + 16 * LDC + 16, c11, ldm=LDC)
            gk.store_matrix(cs, at + 16 * LDC + 32, c12, ldm=LDC)
            gk.store_matrix(cs, at + 16 * LDC + 48, c13, ldm=LDC)
            gk.store_matrix(cs, at + 32 * LDC, c20, ldm=LDC)
            gk.store_matrix(cs, at + 32 * LDC + 16, c21, ldm=LDC)
            gk.store_matrix(cs, at + 32 * LDC + 32, c22, ldm=LDC)
            gk.store_matrix(cs, at + 32 * LDC + 48, c23, ldm=LDC)
            gk.store_matrix(cs, at + 48 * LDC, c30, ldm=LDC)
            gk.store_matrix(cs, at + 48 * LDC + 16, c31, ldm=LDC)
            gk.store_matrix(cs, at + 48 * LDC + 32, c32, ldm=LDC)
            gk.store_matrix(cs, at + 48 * LDC + 48, c33, ldm=LDC)
            barrier()
            copy_edge(c, cs, LDC, row0, col0, PM, PN, m, n)

    pipelined.shared_bytes = max(STAGES * STAGE * T.itemsize, PM * LDC * 4)  # the stages; C's edge tile
    pipelined.itemsize = T.itemsize
    pipelined.stages = STAGES
    pipelined.k_step = KS
    return pipelined


hgemm_pipelined = make_pipelined(float16, 16, 64, STAGES=3)
tgemm_pipelined = make_pipelined(float32, 8, 32, STAGES=2)

WM, WN = 128, 256  # the warpgroup kernels' block tile of C: two warpgroups, each 64 x 256
WTHREADS = 256


def make_warpgroup(T, STAGES: int = 4, GROUP: int = 8):
    """The sm_90 kernel for inputs of type ``T`` (float16; float32: TF32): C = A @ B for any m, and k
    and n multiples of the elements in 16 bytes (``run_warpgroup``), on ``gk.wgmma``.

    Each of a block's two warpgroups accumulates 64 x 256 of C (one ``wgmma`` accumulator: 128
    registers a thread) from A and B tiles that the matrix units read straight from shared memory,
    in 128-byte swizzled atoms (``gk.swizzle128``).  The k step is one atom row (64 halves, 32
    floats); ``STAGES`` stages of A and B in dynamic shared memory, the copies of the next
    ``STAGES - 2`` k steps in flight while a step is multiplied, and the wgmma's of one step in
    flight while the next step's are issued (``wgmma_wait(1)``): the stage a step refills is the
    one read two steps before, whose wgmma's have then landed.  float16's B is read row-major, as
    it lies in memory; TF32's wgmma reads B only K-major, so the TF32 kernel takes B's transpose
    (n x k, which ``run_warpgroup`` makes) and copies its tiles as A's.  Blocks walk C's tiles in
    groups of ``GROUP`` tile rows (``grouped_tile``)."""
    CHUNK = 16 // T.itemsize  # elements a 16-byte copy moves
    KS = 8 * CHUNK  # the k step: a 128-byte row of A's atoms
    FK = 16 if T == float16 else 8  # the wgmma's k
    ROW_B = T == float16  # B row-major (float16), or K-major (TF32: staged n x k)
    A_TILE = WM * KS
    STAGE = A_TILE + KS * WN  # elements of one stage: A's tile, then B's (both 1024-byte multiples)
    A_PASSES = WM * KS // CHUNK // WTHREADS
    B_PASSES = KS * WN // CHUNK // WTHREADS
    LDC = WN + 4  # a row of C's tile staged (at C's edges) in the stages' shared memory

    A_ROWS = WTHREADS * CHUNK // KS  # rows of A's tile one pass of the threads copies
    B_ROWS = WTHREADS * CHUNK // WN  # float16: rows of B's tile a pass copies
    copy = chunk_copy(T)

    @gk.func
    def fill(
        s: Array[T, 1],
        a: Array[T, 2],
        b: Array[T, 2],
        base: int32,
        k0: int32,
        m: int32,
        n: int32,
        k: int32,
        a_at: int32,
        a_row: int32,
        a_col: int32,
        b_at: int32,
        b_row: int32,
        b_col: int32,
    ):
        """Start the copies of the k step at ``k0`` into the stage at ``s[base]``: this thread's,
        from its first copy's places (``a_at``: in the stage, ``a_row``, ``a_col``: in A; the same
        for B), which the kernel works out once (a pass of the threads moves on by whole atoms).
        Past C's edges the copies read A's last row (B's last column chunk) again, whose products
        reach only C's rows (columns) that are not stored; past k's end the elements are zeros."""
        for i in range(A_PASSES):
            copy(s, base + a_at + i * A_ROWS * KS, a, min(a_row + i * A_ROWS, m - 1), k0 + a_col, k0 + a_col < k)
        for i in range(B_PASSES):
            if ROW_B:  # B's tile as it lies: pass i copies rows b_row + B_ROWS i
                row = k0 + b_row + i * B_ROWS
                copy(s, base + A_TILE + b_at + i * B_ROWS * WN, b, row, b_col, row < k)
            else:  # B transposed (n x k), its tile copied as A's is: pass i copies rows b_row + A_ROWS i
                at = base + A_TILE + b_at + i * A_ROWS * KS
                copy(s, at, b, min(b_row + i * A_ROWS, n - 1), k0 + b_col, k0 + b_col < k)

    @kernel
    def warpgroup(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2], m: int32, n: int32, k: int32):
        launch_bounds(WTHREADS, 1)
        s = dynamic_shared(T)
        wg = thread_idx.x // 128  # this thread's warpgroup: rows 64 wg.. of the block's tile
        tile_row, tile_col = grouped_tile(GROUP)
        row0 = tile_row * WM
        col0 = tile_col * WN
        acc = gk.fragment("accumulator", 64, WN, FK, float32)
        gk.fill_fragment(acc, 0.0)
        t = thread_idx.x  # this thread's first copies: A's row t // 8, 16-byte chunk t % 8
        a_row = t // 8
        a_col = (t % 8) * CHUNK
        a_at = gk.swizzle128(a_row, a_col, KS, CHUNK)
        a_row += row0
        if ROW_B:  # B's row t // 32, chunk t % 32 (a warp: one row of the tile)
            b_row = t // (WN // CHUNK)
            b_col = (t % (WN // CHUNK)) * CHUNK
            b_at = gk.swizzle128(b_row, b_col, WN, CHUNK)
            b_col = min(col0 + b_col, n - CHUNK)
        else:  # B's transpose's row t // 8 (as A's)
            b_row = col0 + t // 8
            b_col = a_col
            b_at = a_at
        steps = (k + KS - 1) // KS
        for p in range(STAGES - 2):  # the first STAGES - 2 k steps in flight
            if p < steps:
                fill(s, a, b, p * STAGE, p * KS, m, n, k, a_at, a_row, a_col, b_at, b_row, b_col)
            gk.async_commit()
        for step in range(steps):
            gk.async_wait(STAGES - 3)  # this thread's copies of this step have landed
            barrier()  # everyone's have; and the wgmma's of two steps ago have (wgmma_wait(1) below)
            ahead = step + STAGES - 2
            if ahead < steps:
                fill(s, a, b, (ahead % STAGES) * STAGE, ahead * KS, m, n, k, a_at, a_row, a_col, b_at, b_row, b_col)
            gk.async_commit()
            sa = (step % STAGES) * STAGE + wg * 64 * KS  # this warpgroup's rows of A's tile
            sb = (step % STAGES) * STAGE + A_TILE
            for kk in gk.unroll(range(0, KS, FK)):
                if ROW_B:
                    acc = gk.wgmma(acc, s, sa + kk, s, sb + kk * WN, b_width=WN)
                else:
                    acc = gk.wgmma(acc, s, sa + kk, s, sb + kk)
            gk.wgmma_commit()
            gk.wgmma_wait(1)  # the step before's have landed: its stage may be refilled next step
        gk.wgmma_wait(0)
        if row0 + WM <= m and col0 + WN <= n:  # a whole tile of C: straight from the accumulator
            gk.store_matrix(c, (row0 + wg * 64, col0), acc)
        else:  # C's edge: through shared memory (the stages' bytes, free now), then a guarded copy
            cs = dynamic_shared(float32)
            gk.async_wait(0)
            barrier()
            gk.store_matrix(cs, wg * 64 * LDC, acc, ldm=LDC)
            barrier()
            copy_edge(c, cs, LDC, row0, col0, WM, WN, m, n)

    warpgroup.shared_bytes = max(STAGES * STAGE * T.itemsize, WM * LDC * 4)
    warpgroup.transposed_b = not ROW_B  # its b is B's transpose (run_warpgroup makes it)
    warpgroup.itemsize = T.itemsize
    warpgroup.stages = STAGES
    warpgroup.k_step = KS
    return warpgroup


hgemm_warpgroup = make_warpgroup(float16)
tgemm_warpgroup = make_warpgroup(float32)


@kernel
def transpose(src: Array[float32, 2], dst: Array[float32, 2], rows: int32, cols: int32):
    """dst = src.T (src rows x cols): 32 x 32 tiles through shared memory, rows padded by one element so
    that the column-wise reads fall in distinct banks; blocks of 32 x 8 threads."""
    tile = shared(float32, (32, 33))
    x = block_idx.x * 32 + thread_idx.x
    y = block_idx.y * 32 + thread_idx.y
    for j in range(0, 32, 8):
        if y + j < rows and x < cols:
            tile[thread_idx.y + j, thread_idx.x] = src[y + j, x]
    barrier()
    x = block_idx.y * 32 + thread_idx.x
    y = block_idx.x * 32 + thread_idx.y
    for j in range(0, 32, 8):
        if y + j < cols and x < rows:
            dst[y + j, x] = tile[thread_idx.x, thread_idx.y + j]


_scratch: dict[int, object] = {}  # per backend, the last B's transpose (TF32): kept for the next call


def run_warpgroup(kern, da, db, dc, m: int, n: int, k: int) -> None:
    """Launch a kernel of ``make_warpgroup``: any m; k and n multiples of the elements in 16 bytes.  The
    TF32 kernel reads B's transpose: made here first (``transpose``, into an array kept until a call of
    another shape)."""
    chunk = 16 // kern.itemsize
    if k % chunk or n % chunk:
        raise ValueError(f"the warpgroup kernel takes k and n that are multiples of {chunk}, not {k} and {n}")
    if kern.transposed_b:  # (one array a backend, replaced when the shape changes: no array kept per shape)
        key = id(gk.get_backend())
        bt = _scratch.get(key)
        if bt is None or bt.shape != (n, k):
            bt = _scratch[key] = gk.empty((n, k), np.float32)
        transpose[(-(-n // 32), -(-k // 32)), (32, 8)](db, bt, k, n)
        db = bt
    kern[(-(-n // WN), -(-m // WM)), WTHREADS, kern.shared_bytes](da, db, dc, m, n, k)


def warpgroups() -> bool:
    """Whether the device runs ``gk.wgmma`` (an sm_90 GPU: H100, H200) and gives a block the warpgroup
    kernel's shared memory."""
    backend = gk.get_backend()
    return getattr(backend, "arch", None) == "sm_90" and (backend.max_shared_optin or 0) >= max(
        hgemm_warpgroup.shared_bytes, tgemm_warpgroup.shared_bytes
    )


def run_pipelined(kern, da, db, dc, m: int, n: int, k: int) -> None:
    """Launch a kernel of ``make_pipelined``: any m; k and n multiples of the elements in 16 bytes
    (8 halves, 4 floats), so that every row of A and B starts 16-byte aligned for the copies."""
    chunk = 16 // kern.itemsize
    if k % chunk or n % chunk:
        raise ValueError(f"the pipelined kernel takes k and n that are multiples of {chunk}, not {k} and {n}")
    kern[(-(-n // PN), -(-m // PM)), PTHREADS, kern.shared_bytes](da, db, dc, m, n, k)


def pipelined(m: int, n: int, k: int) -> bool:
    """Whether ``hgemm_pipelined`` takes the sizes (16-byte aligned rows of A and B) and the device
    gives a block its shared memory (105 KiB: sm_80 and later; sm_70's opt-in is 96 KiB)."""
    backend = gk.get_backend()
    room = backend.max_shared_optin or backend.max_shared
    return k % 8 == 0 and n % 8 == 0 and room >= hgemm_pipelined.shared_bytes


def matmul_tf32(da, db, dc, m: int, n: int, k: int) -> None:
    """C = A @ B of float32 device arrays on the tensor cores in TF32: any m, k and n multiples of 4
    (the warpgroup kernel on sm_90, else the pipelined one)."""
    if warpgroups():
        run_warpgroup(tgemm_warpgroup, da, db, dc, m, n, k)
    else:
        run_pipelined(tgemm_pipelined, da, db, dc, m, n, k)


KERNELS = {
    "warpgroup": "hgemm_warpgroup 128x256x64 (wgmma), 4 stages",
    "pipelined": "hgemm_pipelined 128x128x64, 3 stages",
    "any": "hgemm 64x64x32, 2x2 warps",
}


def kernel_for(m: int, n: int, k: int) -> str:
    """Which FP16 kernel ``matmul`` runs for these sizes on this device (a key of ``KERNELS``): the
    warpgroup kernel on sm_90, the pipelined one where it can run (``pipelined``), else the one that
    handles any size on any tensor-core GPU; both fast ones need k and n multiples of 8."""
    if warpgroups() and k % 8 == 0 and n % 8 == 0:
        return "warpgroup"
    return "pipelined" if pipelined(m, n, k) else "any"


def matmul(da, db, dc, m: int, n: int, k: int) -> None:
    """C = A @ B on the device arrays (float16 A, B; float32 C), by ``kernel_for``'s kernel."""
    which = kernel_for(m, n, k)
    if which == "warpgroup":
        run_warpgroup(hgemm_warpgroup, da, db, dc, m, n, k)
    elif which == "pipelined":
        run_pipelined(hgemm_pipelined, da, db, dc, m, n, k)
    else:
        hgemm[(-(-n // BN), -(-m // BM)), THREADS](da, db, dc, m, n, k)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="n for an n x n x n product (default 1024; 64 on the simulator)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated CUDA C and exit")
    p.add_argument("--repeat", type=int, help="timed runs; the median is reported (default 10; 1 on the simulator)")
    args = p.parse_args(argv)

    if args.show_source:
        types = (Array[float16, 2], Array[float16, 2], Array[float32, 2], int32, int32, int32)
        print(hgemm.source(*types, backend="cuda"))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if backend.name == "opencl" and not args.backend:  # OpenCL C reaches no matrix unit: the simulator runs it
        print("OpenCL has no matrix multiply units for gpukern: running on the simulator (--backend cuda on a GPU)")
        gk.set_backend("sim")
        backend = gk.get_backend()
    n = gk.problem_size(args.size, 1024, 64)
    sim = backend.name == "sim"  # one run: the simulator's time is no GPU's
    repeat = args.repeat if args.repeat is not None else 1 if sim else 10
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    da, db = gk.to_device(a), gk.to_device(b)
    dc = gk.empty((n, n), np.float32)
    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}x{n}x{n}")
    try:
        t = gk.benchmark(lambda: matmul(da, db, dc, n, n, n), repeat=repeat, warmup=0 if sim else 1)
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(dc.get() - a64 @ b64)
    tol = gk.mma_ops.tolerance(np.abs(a64), np.abs(b64), 16)
    if not np.all(err <= tol):
        print(f"hgemm: WRONG result, {int((err > tol).sum())} elements off, worst {err.max():.2e}", file=sys.stderr)
        return 1
    tflops = 2.0 * n**3 / t / 1e12
    what = KERNELS[kernel_for(n, n, n)]
    print(f"{what}: {t * 1e3:9.3f} ms  {tflops:8.3f} TFLOP/s  max abs. error {err.max():.1e}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
