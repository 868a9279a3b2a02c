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

Where the sizes are multiples of 128 (k of 64), ``hgemm_pipelined`` runs instead: 128 x 128 x 32
block tiles of 8 warps with 2 x 4 accumulators each, and two shared stages, the next filled by
16-byte ``gk.async_copy``s (``cp.async``) while the current one is multiplied (on an H100: 261
TFLOP/s at 4096³, 0.46x cuBLAS; ``benchmarks/tensorcore.py``).  ``tgemm_pipelined`` is the same
for float32 inputs on the tensor cores in TF32 (``matmul_tf32``).

    python examples/matmul_tensorcore.py --size 4096        # checked against NumPy float64
    python examples/matmul_tensorcore.py --size 100 --backend sim
    python examples/matmul_tensorcore.py --show-source

The tolerance: the inputs are float16 (exact in the fragments); each element of C may differ from
the float64 product by ``gpukern.mma_ops.tolerance`` (a few float32 roundings of sum |a||b|).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, barrier, block_idx, float16, float32, int32, kernel, shared, thread_idx

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
PTHREADS = 256  # 8 warps, 4 x 2, each 32 x 64 of C (2 x 4 accumulators)


def make_pipelined(T, FK: int, KS: int):
    """The pipelined kernel for inputs of type ``T`` (float16; float32: TF32), ``FK`` the fragments'
    k (16; TF32: 8), ``KS`` the k step: C = A @ B where m, n are multiples of 128 and k of 2 * KS.
    Two stages of shared tiles, the next copied asynchronously (16 bytes a copy) while the current
    one is multiplied, one barrier a step; the loop is unrolled by the two stages, so every shared
    address is a constant offset.  Each warp keeps 8 accumulators: a fragment of A feeds 4 mma's,
    of B 2."""
    CHUNK = 16 // T.itemsize  # elements a copy moves (and padding a staged row, bank spread)
    A_STEP = PTHREADS // (KS // CHUNK)  # rows of A's tile one pass of the threads copies
    B_STEP = PTHREADS // (PN // CHUNK)

    @kernel
    def pipelined(a: Array[T, 2], b: Array[T, 2], c: Array[float32, 2], k: int32):
        t = thread_idx.x
        warp = t // 32
        wr = (warp // 2) * 32
        wc = (warp % 2) * 64
        row0 = block_idx.y * PM
        col0 = block_idx.x * PN
        As0 = shared(T, (PM, KS + CHUNK))
        As1 = shared(T, (PM, KS + CHUNK))
        Bs0 = shared(T, (KS, PN + CHUNK))
        Bs1 = shared(T, (KS, PN + CHUNK))
        fa0 = gk.fragment("a", 16, 16, FK, T)
        fa1 = gk.fragment("a", 16, 16, FK, T)
        fb0 = gk.fragment("b", 16, 16, FK, T)
        fb1 = gk.fragment("b", 16, 16, FK, T)
        fb2 = gk.fragment("b", 16, 16, FK, T)
        fb3 = gk.fragment("b", 16, 16, FK, T)
        c0 = gk.fragment("accumulator", 16, 16, FK, float32)
        c1 = gk.fragment("accumulator", 16, 16, FK, float32)
        c2 = gk.fragment("accumulator", 16, 16, FK, float32)
        c3 = gk.fragment("accumulator", 16, 16, FK, float32)
        c4 = gk.fragment("accumulator", 16, 16, FK, float32)
        c5 = gk.fragment("accumulator", 16, 16, FK, float32)
        c6 = gk.fragment("accumulator", 16, 16, FK, float32)
        c7 = gk.fragment("accumulator", 16, 16, FK, float32)
        gk.fill_fragment(c0, 0.0)
        gk.fill_fragment(c1, 0.0)
        gk.fill_fragment(c2, 0.0)
        gk.fill_fragment(c3, 0.0)
        gk.fill_fragment(c4, 0.0)
        gk.fill_fragment(c5, 0.0)
        gk.fill_fragment(c6, 0.0)
        gk.fill_fragment(c7, 0.0)
        ar = t // (KS // CHUNK)  # each thread copies CHUNK elements of 2 rows of A's tile and of B's
        ac = (t % (KS // CHUNK)) * CHUNK
        br = t // (PN // CHUNK)
        bc = (t % (PN // CHUNK)) * CHUNK
        gk.async_copy(As0[ar, ac], a[row0 + ar, ac], count=CHUNK)
        gk.async_copy(As0[ar + A_STEP, ac], a[row0 + ar + A_STEP, ac], count=CHUNK)
        gk.async_copy(Bs0[br, bc], b[br, col0 + bc], count=CHUNK)
        gk.async_copy(Bs0[br + B_STEP, bc], b[br + B_STEP, col0 + bc], count=CHUNK)
        gk.async_commit()
        for k0 in range(0, k, 2 * KS):
            gk.async_wait(0)  # this thread's copies of stage 0 have landed
            barrier()  # everyone's have, and everyone is done reading stage 1 (the step before)
            k1 = k0 + KS  # stage 1 <- the next k step, copied while stage 0 is multiplied
            gk.async_copy(As1[ar, ac], a[row0 + ar, k1 + ac], count=CHUNK)
            gk.async_copy(As1[ar + A_STEP, ac], a[row0 + ar + A_STEP, k1 + ac], count=CHUNK)
            gk.async_copy(Bs1[br, bc], b[k1 + br, col0 + bc], count=CHUNK)
            gk.async_copy(Bs1[br + B_STEP, bc], b[k1 + br + B_STEP, col0 + bc], count=CHUNK)
            gk.async_commit()
            for kk in range(0, KS, FK):
                gk.load_matrix(fa0, As0, (wr, kk))
                gk.load_matrix(fa1, As0, (wr + 16, kk))
                gk.load_matrix(fb0, Bs0, (kk, wc))
                gk.load_matrix(fb1, Bs0, (kk, wc + 16))
                gk.load_matrix(fb2, Bs0, (kk, wc + 32))
                gk.load_matrix(fb3, Bs0, (kk, wc + 48))
                c0 = gk.mma(fa0, fb0, c0)
                c1 = gk.mma(fa0, fb1, c1)
                c2 = gk.mma(fa0, fb2, c2)
                c3 = gk.mma(fa0, fb3, c3)
                c4 = gk.mma(fa1, fb0, c4)
                c5 = gk.mma(fa1, fb1, c5)
                c6 = gk.mma(fa1, fb2, c6)
                c7 = gk.mma(fa1, fb3, c7)
            gk.async_wait(0)  # stage 1 has landed
            barrier()  # for everyone, and stage 0 is free again
            k2 = k1 + KS  # stage 0 <- the step after, copied while stage 1 is multiplied
            if k2 < k:
                gk.async_copy(As0[ar, ac], a[row0 + ar, k2 + ac], count=CHUNK)
                gk.async_copy(As0[ar + A_STEP, ac], a[row0 + ar + A_STEP, k2 + ac], count=CHUNK)
                gk.async_copy(Bs0[br, bc], b[k2 + br, col0 + bc], count=CHUNK)
                gk.async_copy(Bs0[br + B_STEP, bc], b[k2 + br + B_STEP, col0 + bc], count=CHUNK)
                gk.async_commit()
            for kk in range(0, KS, FK):
                gk.load_matrix(fa0, As1, (wr, kk))
                gk.load_matrix(fa1, As1, (wr + 16, kk))
                gk.load_matrix(fb0, Bs1, (kk, wc))
                gk.load_matrix(fb1, Bs1, (kk, wc + 16))
                gk.load_matrix(fb2, Bs1, (kk, wc + 32))
                gk.load_matrix(fb3, Bs1, (kk, wc + 48))
                c0 = gk.mma(fa0, fb0, c0)
                c1 = gk.mma(fa0, fb1, c1)
                c2 = gk.mma(fa0, fb2, c2)
                c3 = gk.mma(fa0, fb3, c3)
                c4 = gk.mma(fa1, fb0, c4)
                c5 = gk.mma(fa1, fb1, c5)
                c6 = gk.mma(fa1, fb2, c6)
                c7 = gk.mma(fa1, fb3, c7)
        gk.store_matrix(c, (row0 + wr, col0 + wc), c0)
        gk.store_matrix(c, (row0 + wr, col0 + wc + 16), c1)
        gk.store_matrix(c, (row0 + wr, col0 + wc + 32), c2)
        gk.store_matrix(c, (row0 + wr, col0 + wc + 48), c3)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc), c4)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 16), c5)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 32), c6)
        gk.store_matrix(c, (row0 + wr + 16, col0 + wc + 48), c7)

    return pipelined


hgemm_pipelined = make_pipelined(float16, 16, 32)
tgemm_pipelined = make_pipelined(float32, 8, 16)  # float32 tiles of 128 x 16 and 16 x 128: 37 KiB


def pipelined(m: int, n: int, k: int) -> bool:
    """Whether ``hgemm_pipelined`` fits the sizes (its tiles have no edges)."""
    return m % PM == 0 and n % PN == 0 and k % 64 == 0


def matmul_tf32(da, db, dc, m: int, n: int, k: int) -> None:
    """C = A @ B of float32 device arrays on the tensor cores in TF32 (sizes: multiples of 128, k of 32)."""
    if m % PM or n % PN or k % 32:
        raise ValueError(f"the TF32 kernel takes sizes that are multiples of its tiles, not {m}x{n}x{k}")
    tgemm_pipelined[(n // PN, m // PM), PTHREADS](da, db, dc, k)


def matmul(da, db, dc, m: int, n: int, k: int) -> None:
    """C = A @ B on the device arrays (float16 A, B; float32 C): the pipelined kernel where the
    sizes are multiples of its tiles, else the one that handles any size."""
    if pipelined(m, n, k):
        hgemm_pipelined[(n // PN, m // PM), PTHREADS](da, db, dc, k)
    else:
        hgemm[(-(-n // BN), -(-m // BM)), THREADS](da, db, dc, m, n, k)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1024, help="n for an n x n x n product (default 1024)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated CUDA C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n = args.size

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
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    da, db = gk.to_device(a), gk.to_device(b)
    dc = gk.empty((n, n), np.float32)
    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}x{n}x{n}")
    try:
        t = gk.benchmark(lambda: matmul(da, db, dc, n, n, n), repeat=args.repeat, warmup=1)
    except gk.CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(dc.get() - a64 @ b64)
    tol = gk.mma_ops.tolerance(np.abs(a64), np.abs(b64), 16)
    if not np.all(err <= tol):
        print(f"hgemm: WRONG result, {int((err > tol).sum())} elements off, worst {err.max():.2e}", file=sys.stderr)
        return 1
    tflops = 2.0 * n**3 / t / 1e12
    what = "hgemm_pipelined 128x128x32, 2 stages" if pipelined(n, n, n) else "hgemm 64x64x32, 2x2 warps"
    print(f"{what}: {t * 1e3:9.3f} ms  {tflops:8.3f} TFLOP/s  max abs. error {err.max():.1e}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
