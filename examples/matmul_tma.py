"""A GEMM fed by Hopper's Tensor Memory Accelerator: C = A @ B on sm_90, FP16 or BF16 inputs, FP32 C.

``examples/matmul_tensorcore.py``'s warpgroup kernel stages A's and B's tiles with 16-byte
``cp.async`` copies that every thread issues and then waits for.  Here one thread issues a TMA copy
per tile (``gk.tma_load`` of a ``gk.tensor_map`` box: 128 x 64 of A, 256 x 64 of B's transpose),
which lands in shared memory already in the 128-byte swizzled layout ``gk.wgmma`` reads, and
counts its bytes on the stage's mbarrier; the two warpgroups wait on that mbarrier
(``gk.mbarrier_wait``, the parity flipping each time round the ring of ``STAGES`` stages) instead
of on their own copies and a block barrier.  Past A's and B's edges the copies read zeros, so any
m, n and k work (k and n multiples of 8, the TMA's 16-byte rows; C's edge tiles go through shared
memory to a guarded copy).  B is taken transposed (n x k, K-major: what a box of rows of 128 bytes
gives wgmma); ``run`` makes B's transpose from B, ``run_transposed`` takes it as it is.

    python examples/matmul_tma.py --size 4096             # on an sm_90 GPU, checked against NumPy
    python examples/matmul_tma.py --size 200 --backend sim

``benchmarks/tma_gemm.py`` measures it against cuBLAS.
"""

from __future__ import annotations

import argparse
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
    thread_idx,
    wgmma_ops,
)

WM, WN = 128, 256  # the block's tile of C: two warpgroups, each 64 x 256 (one wgmma accumulator)
THREADS = 256


@gk.func
def grouped_tile(group: int32):
    """The tile of C this block computes: blocks walk C's tiles in groups of ``group`` tile rows,
    column by column, so that blocks running together share the panels of A and B they read (in L2)."""
    tile = block_idx.y * grid_dim.x + block_idx.x
    first = (tile // (group * grid_dim.x)) * group
    rows = min(grid_dim.y - first, group)
    return first + tile % (group * grid_dim.x) % rows, tile % (group * grid_dim.x) // rows


@gk.func
def copy_edge(c, cs: Array[float32, 1], ldc: int32, row0: int32, col0: int32, m: int32, n: int32, scale: float32):
    """The block's tile of C, staged in shared memory ``ldc`` elements a row, times ``scale``, stored
    (rounded to C's type) where it lies in C."""
    for e in range(thread_idx.x, WM * WN, block_dim.x):
        r = e // WN
        q = e % WN
        if row0 + r < m and col0 + q < n:
            c[row0 + r, col0 + q] = cs[r * ldc + q] * scale


def make_tma(T, STAGES: int = 4, GROUP: int = 8, OUT=float32):
    """The kernel for inputs of type ``T`` (float16, bfloat16, float8_e4m3fn, float8_e5m2):
    ``STAGES`` stages of A's and B's tiles in dynamic shared memory, ``STAGES - 1`` k steps in
    flight ahead of the one multiplied; C of type ``OUT`` (float32, bfloat16, float16), each element
    times ``scale`` (the product of A's and B's per-tensor scales, FP8's way) and rounded once."""
    KS = 128 // T.itemsize  # the k step: one 128-byte swizzled row
    FK = wgmma_ops.K[T.name]  # the wgmma's k
    A_TILE = WM * KS
    STAGE = A_TILE + WN * KS  # elements of a stage: A's tile, then B's (both 1024-byte multiples)
    LDC = WN + 4

    @kernel
    def tma_gemm(a: Array[T, 2], bt: Array[T, 2], c: Array[OUT, 2], m: int32, n: int32, k: int32, scale: float32):
        OUT  # noqa: B018 (named in the body, so that the annotation of c finds it: a closure variable)
        launch_bounds(THREADS, 1)
        s = dynamic_shared(T)
        full = gk.shared(gk.mbarrier, STAGES)
        amap = gk.tensor_map(a, (WM, KS), swizzle=128)
        bmap = gk.tensor_map(bt, (WN, KS), swizzle=128)
        t = thread_idx.x
        wg = t // 128  # this thread's warpgroup: rows 64 wg.. of the block's tile
        tile_row, tile_col = grouped_tile(GROUP)
        row0 = tile_row * WM
        col0 = tile_col * WN
        if t == 0:
            for i in range(STAGES):
                gk.mbarrier_init(full[i], 1)
            gk.fence_mbarrier_init()
        barrier()
        steps = (k + KS - 1) // KS
        if t == 0:  # the first STAGES - 1 k steps in flight
            for p in range(STAGES - 1):
                if p < steps:
                    gk.mbarrier_arrive_expect_tx(full[p], gk.box_bytes(amap) + gk.box_bytes(bmap))
                    gk.tma_load(s[p * STAGE], amap, (row0, p * KS), full[p])
                    gk.tma_load(s[p * STAGE + A_TILE], bmap, (col0, p * KS), full[p])
        acc = gk.fragment("accumulator", 64, WN, FK, float32)
        gk.fill_fragment(acc, 0.0)
        for step in range(steps):
            st = step % STAGES
            gk.mbarrier_wait(full[st], (step // STAGES) % 2)  # this step's tiles have landed
            sa = st * STAGE + wg * 64 * KS
            sb = st * STAGE + A_TILE
            for kk in gk.unroll(range(0, KS, FK)):
                acc = gk.wgmma(acc, s, sa + kk, s, sb + kk)
            gk.wgmma_commit()
            gk.wgmma_wait(1)  # the step before's products are done in this warpgroup...
            barrier()  # ... and in the other: its stage may be refilled
            ahead = step + STAGES - 1
            if t == 0 and ahead < steps:
                at = (ahead % STAGES) * STAGE
                gk.mbarrier_arrive_expect_tx(full[ahead % STAGES], gk.box_bytes(amap) + gk.box_bytes(bmap))
                gk.tma_load(s[at], amap, (row0, ahead * KS), full[ahead % STAGES])
                gk.tma_load(s[at + A_TILE], bmap, (col0, ahead * KS), full[ahead % STAGES])
        gk.wgmma_wait(0)
        if row0 + WM <= m and col0 + WN <= n:  # a whole tile: straight from the accumulator (scaled, rounded)
            gk.store_matrix(c, (row0 + wg * 64, col0), acc, scale=scale)
        else:  # C's edge: through shared memory (the stages' bytes, free now), then a guarded copy
            cs = dynamic_shared(float32)
            barrier()
            gk.store_matrix(cs, wg * 64 * LDC, acc, ldm=LDC)
            barrier()
            copy_edge(c, cs, LDC, row0, col0, m, n, scale)

    tma_gemm.shared_bytes = max(STAGES * STAGE * T.itemsize, WM * LDC * 4)
    return tma_gemm


hgemm_tma = make_tma(float16)
bgemm_tma = make_tma(gk.bfloat16)
fp8gemm_tma = make_tma(gk.float8_e4m3fn, OUT=gk.bfloat16)  # e4m3 inputs, scaled, BF16 C


def run_transposed(kern, da, dbt, dc, m: int, n: int, k: int, scale: float = 1.0) -> None:
    """C (m x n) = scale * A (m x k) @ B, given B's transpose ``dbt`` (n x k); k's rows a multiple of
    16 bytes (8 halves, 16 8-bit floats)."""
    chunk = 16 // (da.itemsize if hasattr(da, "itemsize") else np.dtype(da.dtype).itemsize)
    if k % chunk:
        raise ValueError(f"TMA copies rows of 16-byte multiples: k must be a multiple of {chunk}, not {k}")
    kern[(-(-n // WN), -(-m // WM)), THREADS, kern.shared_bytes](da, dbt, dc, m, n, k, scale)


def tma_gpu() -> bool:
    """Whether the device runs TMA and wgmma (an sm_90 GPU) and gives a block the kernel's shared memory."""
    backend = gk.get_backend()
    return getattr(backend, "arch", None) == "sm_90" and (backend.max_shared_optin or 0) >= hgemm_tma.shared_bytes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="m = n = k (default 4096; 200 on the simulator)")
    p.add_argument("--backend", choices=("cuda", "sim"), help="default: the best available")
    args = p.parse_args(argv)
    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if backend.name != "sim" and not tma_gpu():
        print("matmul_tma: needs an sm_90 GPU (H100, H200) or the simulator (--backend sim)", file=sys.stderr)
        return 1
    n = gk.problem_size(args.size, 4096, 200, args.backend)
    n -= n % 8
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    dc = gk.empty((n, n), np.float32)
    da, dbt = gk.to_device(a), gk.to_device(np.ascontiguousarray(b.T))
    t = gk.benchmark(lambda: run_transposed(hgemm_tma, da, dbt, dc, n, n, n), repeat=3 if backend.name == "sim" else 10)
    rows = rng.choice(n, min(n, 64), replace=False)
    exact = a[rows].astype(np.float64) @ b.astype(np.float64)
    tol = 2.0**-20 * n + 2.0**-22 * (np.abs(a[rows]).astype(np.float64) @ np.abs(b).astype(np.float64)) * 8
    err = np.abs(dc.get()[rows] - exact)
    if not (err <= tol).all():
        print(f"matmul_tma: WRONG, largest error {err.max():.3g}", file=sys.stderr)
        return 1
    print(f"matmul_tma: n={n}  {t * 1e3:9.3f} ms  {2 * n**3 / t / 1e12:7.2f} TFLOP/s  on {backend.device_name()}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
