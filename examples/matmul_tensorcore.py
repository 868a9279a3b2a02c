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


def matmul(da, db, dc, m: int, n: int, k: int) -> None:
    """C = A @ B on the device arrays (float16 A, B; float32 C)."""
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
    print(f"hgemm 64x64x32, 2x2 warps: {t * 1e3:9.3f} ms  {tflops:8.3f} TFLOP/s  max abs. error {err.max():.1e}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
