"""Experiment (from ../../2026-11-23-h100-issue17b/experiments/wide.py): 64 x 64 warp tiles (4 x 4
accumulators), 128 x 128 blocks of 4 warps or 128 x 256 of 8, for TF32: B's staged rows padded
by 8 floats (its 64-bit pair loads then hit 32 banks a half-warp), the k loop unrolled."""
import sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "examples"))
import gpukern as gk
from gpukern import Array, barrier, block_idx, dynamic_shared, float16, float32, grid_dim, int32, kernel, thread_idx
from matmul_tensorcore import PM

def make_wide(T, FK: int, KS: int, STAGES: int, GROUP: int = 8, PN: int = 256, PTHREADS: int = 256):
    WCOLS = PN // 64
    """The pipelined kernel for inputs of type ``T`` (float16; float32: TF32), ``FK`` the fragments'
    k (16; TF32: 8), ``KS`` the k step: C = A @ B where m, n are multiples of 128 and k of KS.

    ``STAGES`` shared tiles of A and B in the launch's dynamic shared memory (``stage_bytes``
    each): while one is multiplied, the copies of the next ``STAGES - 1`` k steps are in flight
    (16-byte ``gk.async_copy``s, one commit group per step), one barrier a step.  Each warp keeps 8
    accumulators: a fragment of A feeds 4 mma's, of B 2.  Blocks run through C's tiles in groups
    of ``GROUP`` tile rows, column by column, so that blocks running at the same time share the
    panels of A and B they read (in L2) rather than each reading its own."""
    CHUNK = 16 // T.itemsize  # elements a copy moves (and padding a staged row, bank spread)
    LDA = KS + CHUNK  # a staged row of A's tile
    LDB = PN + 8  # and of B's (8 elements: TF32's pairs, float16's ldmatrix rows alike)
    A_TILE = PM * LDA
    STAGE = A_TILE + KS * LDB  # elements of one stage: A's tile, then B's
    A_PASSES = PM * KS // CHUNK // PTHREADS  # copies each thread makes of A's tile, of B's
    B_PASSES = KS * PN // CHUNK // PTHREADS
    A_STEP = PTHREADS // (KS // CHUNK)  # rows of A's tile one pass of the threads copies
    B_STEP = PTHREADS // (PN // CHUNK)

    @gk.func
    def fill(s: Array[T, 1], a: Array[T, 2], b: Array[T, 2], base: int32, k0: int32, row0: int32, col0: int32):
        """Start the copies of the k step at ``k0`` into the stage at ``s[base]``."""
        t = thread_idx.x
        ar = t // (KS // CHUNK)
        ac = (t % (KS // CHUNK)) * CHUNK
        for i in range(A_PASSES):
            r = ar + i * A_STEP
            gk.async_copy(s[base + r * LDA + ac], a[row0 + r, k0 + ac], count=CHUNK)
        br = t // (PN // CHUNK)
        bc = (t % (PN // CHUNK)) * CHUNK
        for i in range(B_PASSES):
            r = br + i * B_STEP
            gk.async_copy(s[base + A_TILE + r * LDB + bc], b[k0 + r, col0 + bc], count=CHUNK)

    @kernel
    def pipelined(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2], k: int32):
        s = dynamic_shared(T)
        warp = thread_idx.x // 32
        wr = (warp // WCOLS) * 64
        wc = (warp % WCOLS) * 64
        tile = block_idx.y * grid_dim.x + block_idx.x  # C's tiles in groups of GROUP rows
        first = (tile // (GROUP * grid_dim.x)) * GROUP
        rows = min(grid_dim.y - first, GROUP)
        row0 = (first + tile % (GROUP * grid_dim.x) % rows) * PM
        col0 = (tile % (GROUP * grid_dim.x) // rows) * PN
        fa0 = gk.fragment("a", 16, 16, FK, T)
        fa1 = gk.fragment("a", 16, 16, FK, T)
        fa2 = gk.fragment("a", 16, 16, FK, T)
        fa3 = gk.fragment("a", 16, 16, FK, T)
        fb0 = gk.fragment("b", 16, 16, FK, T)
        fb1 = gk.fragment("b", 16, 16, FK, T)
        fb2 = gk.fragment("b", 16, 16, FK, T)
        fb3 = gk.fragment("b", 16, 16, FK, T)
        c00 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c00, 0.0)
        c01 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c01, 0.0)
        c02 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c02, 0.0)
        c03 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c03, 0.0)
        c10 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c10, 0.0)
        c11 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c11, 0.0)
        c12 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c12, 0.0)
        c13 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c13, 0.0)
        c20 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c20, 0.0)
        c21 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c21, 0.0)
        c22 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c22, 0.0)
        c23 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c23, 0.0)
        c30 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c30, 0.0)
        c31 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c31, 0.0)
        c32 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c32, 0.0)
        c33 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c33, 0.0)
        steps = k // KS
        for p in range(STAGES - 1):  # the first STAGES - 1 k steps in flight
            if p < steps:
                fill(s, a, b, p * STAGE, p * KS, row0, col0)
            gk.async_commit()  # a group each, empty or not, so that the count below holds
        for step in range(steps):
            gk.async_wait(STAGES - 2)  # this thread's copies of this step have landed
            barrier()  # everyone's have, and everyone is done with the step before's stage
            ahead = step + STAGES - 1  # which goes into that stage, while this one is multiplied
            if ahead < steps:
                fill(s, a, b, (ahead % STAGES) * STAGE, ahead * KS, row0, col0)
            gk.async_commit()
            sa = (step % STAGES) * STAGE + wr * LDA  # this warp's rows of A's tile
            sb = (step % STAGES) * STAGE + A_TILE + wc  # and columns of B's
            for kk in gk.unroll(range(0, KS, FK)):
                gk.load_matrix(fa0, s, sa + 0 * LDA + kk, ldm=LDA)
                gk.load_matrix(fa1, s, sa + 16 * LDA + kk, ldm=LDA)
                gk.load_matrix(fa2, s, sa + 32 * LDA + kk, ldm=LDA)
                gk.load_matrix(fa3, s, sa + 48 * LDA + kk, ldm=LDA)
                gk.load_matrix(fb0, s, sb + kk * LDB + 0, ldm=LDB)
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
        gk.store_matrix(c, (row0 + wr + 0, col0 + wc + 0), c00)
        gk.store_matrix(c, (row0 + wr + 0, col0 + wc + 16), c01)
        gk.store_matrix(c, (row0 + wr + 0, col0 + wc + 32), c02)
        gk.store_matrix(c, (row0 + wr + 0, col0 + wc + 48), c03)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 0), c10)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 16), c11)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 32), c12)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 48), c13)
        gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 0), c20)
        gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 16), c21)
        gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 32), c22)
        gk.store_matrix(c, (row0 + wr + 32, col0 + wc + 48), c23)
        gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 0), c30)
        gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 16), c31)
        gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 32), c32)
        gk.store_matrix(c, (row0 + wr + 48, col0 + wc + 48), c33)

    pipelined.stage_bytes = STAGE * T.itemsize
    pipelined.stages = STAGES
    pipelined.pn = PN
    pipelined.threads = PTHREADS
    pipelined.k_step = KS
    return pipelined



def run_wide(kern, da, db, dc, m, n, k):
    kern[(n // kern.pn, m // PM), kern.threads, kern.stages * kern.stage_bytes](da, db, dc, k)
