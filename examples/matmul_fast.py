"""A register-blocked SGEMM written in gpukern: what it takes to approach cuBLAS.

The flagship (matmul_tiled.py) gives every thread one element of C, so each
multiply-add needs two shared-memory loads.  Here every thread owns a TM x TN
tile of C held in registers, and each step of the k loop loads TM values of A
and TN values of B from shared memory for TM * TN multiply-adds:

- block tiling: a block computes a BM x BN tile of C, stepping through k by BK;
  A's BM x BK tile is stored transposed in shared memory, so both tiles are read
  along rows;
- register tiling: ``local`` arrays indexed only inside ``unroll(range(...))``
  loops, whose indices are then constants, so nvcc keeps them in registers;
- vector loads and stores: ``vload``/``vstore`` move 4 floats at a time between
  global memory, shared memory and registers (float4);
- bank-conflict-free reads: a thread's TM rows (TN columns) are split into groups
  of 4 spaced 4 * BM / TM (4 * BN / TN) apart, so the threads of a warp read
  consecutive float4s;
- double buffering: two pairs of shared tiles, so the next tile is stored while
  the current one is read, with one barrier per step instead of two;
- ``launch_bounds`` tells nvcc the block size, so it can budget registers.

Every tile size is a ``Const``: each configuration is its own specialisation,
and ``gk.autotune`` picks the fastest for the device and problem size (and
remembers it).  Sizes need not be multiples of the tiles; when k or n is not a
multiple of 4 the kernel is specialised (``VEC=False``) to scalar loads, since
float4 loads need 16-byte aligned rows.

    python examples/matmul_fast.py --size 4096            # autotuned, checked against NumPy
    python examples/matmul_fast.py --size 1000 --config 64x64x8_4x4
    python examples/matmul_fast.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import (
    Array,
    Const,
    barrier,
    block_idx,
    float32,
    int32,
    kernel,
    launch_bounds,
    local,
    shared,
    thread_idx,
    unroll,
    vload,
    vstore,
)


@kernel
def sgemm_kernel(
    a: Array[float32],
    b: Array[float32],
    c: Array[float32],
    m: int32,
    n: int32,
    k: int32,
    BM: Const[int],
    BN: Const[int],
    BK: Const[int],
    TM: Const[int],
    TN: Const[int],
    VEC: Const[bool],
):
    """c (m x n) = a (m x k) @ b (k x n), row-major; a block of BM*BN/(TM*TN) threads per BM x BN tile."""
    THREADS = (BM // TM) * (BN // TN)
    launch_bounds(THREADS)
    a_tiles = shared(float32, (2, BK, BM))  # transposed: a_tiles[buf, kk, row]
    b_tiles = shared(float32, (2, BK, BN))
    NA = BM * BK // 4 // THREADS  # float4s of A (of B) each thread moves per tile
    NB = BK * BN // 4 // THREADS
    a_next = local(float32, (NA, 4))  # the next tile, in flight from global memory
    b_next = local(float32, (NB, 4))
    acc = local(float32, (TM, TN))
    a_reg = local(float32, (TM,))
    b_reg = local(float32, (TN,))

    tid = thread_idx.x
    tx = tid % (BN // TN)  # which group of 4 columns in each column span
    ty = tid // (BN // TN)
    row0 = block_idx.y * BM
    col0 = block_idx.x * BN
    for i in unroll(range(TM)):
        for j in unroll(range(TN)):
            acc[i, j] = 0.0

    for t in range((k + BK - 1) // BK + 1):
        k0 = t * BK
        if k0 < k:  # load tile t into registers: A as float4s along k, B along n
            for s in unroll(range(NA)):
                ar = (tid + s * THREADS) // (BK // 4)
                ak = (tid + s * THREADS) % (BK // 4) * 4
                for e in unroll(range(4)):
                    a_next[s, e] = 0.0
                if VEC:
                    if row0 + ar < m and k0 + ak < k:
                        x = vload(a, (row0 + ar) * k + k0 + ak, 4)
                        for e in unroll(range(4)):
                            a_next[s, e] = x[e]
                elif row0 + ar < m:
                    for e in unroll(range(4)):
                        if k0 + ak + e < k:
                            a_next[s, e] = a[(row0 + ar) * k + k0 + ak + e]
            for s in unroll(range(NB)):
                br = (tid + s * THREADS) // (BN // 4)
                bc = (tid + s * THREADS) % (BN // 4) * 4
                for e in unroll(range(4)):
                    b_next[s, e] = 0.0
                if VEC:
                    if k0 + br < k and col0 + bc < n:
                        y = vload(b, (k0 + br) * n + col0 + bc, 4)
                        for e in unroll(range(4)):
                            b_next[s, e] = y[e]
                elif k0 + br < k:
                    for e in unroll(range(4)):
                        if col0 + bc + e < n:
                            b_next[s, e] = b[(k0 + br) * n + col0 + bc + e]
        if t > 0:  # multiply tile t - 1 while tile t is in flight
            cur = (t - 1) % 2
            for kk in unroll(range(BK)):
                for g in unroll(range(TM // 4)):
                    va = vload(a_tiles, (cur, kk, g * (4 * BM // TM) + ty * 4), 4)
                    for e in unroll(range(4)):
                        a_reg[g * 4 + e] = va[e]
                for g in unroll(range(TN // 4)):
                    vb = vload(b_tiles, (cur, kk, g * (4 * BN // TN) + tx * 4), 4)
                    for e in unroll(range(4)):
                        b_reg[g * 4 + e] = vb[e]
                for i in unroll(range(TM)):
                    for j in unroll(range(TN)):
                        acc[i, j] += a_reg[i] * b_reg[j]
        if k0 < k:  # store tile t into the other buffer, which nobody reads since the last barrier
            nxt = t % 2
            for s in unroll(range(NA)):
                ar = (tid + s * THREADS) // (BK // 4)
                ak = (tid + s * THREADS) % (BK // 4) * 4
                for e in unroll(range(4)):
                    a_tiles[nxt, ak + e, ar] = a_next[s, e]
            for s in unroll(range(NB)):
                br = (tid + s * THREADS) // (BN // 4)
                bc = (tid + s * THREADS) % (BN // 4) * 4
                vstore(b_tiles, (nxt, br, bc), (b_next[s, 0], b_next[s, 1], b_next[s, 2], b_next[s, 3]))
        barrier()

    for i in unroll(range(TM)):
        row = row0 + (i // 4) * (4 * BM // TM) + ty * 4 + i % 4
        for g in unroll(range(TN // 4)):
            col = col0 + g * (4 * BN // TN) + tx * 4
            if row < m:
                if VEC and col + 3 < n:
                    vstore(c, row * n + col, (acc[i, g * 4], acc[i, g * 4 + 1], acc[i, g * 4 + 2], acc[i, g * 4 + 3]))
                else:
                    for e in unroll(range(4)):
                        if col + e < n:
                            c[row * n + col + e] = acc[i, g * 4 + e]


# Configurations as (BM, BN, BK, TM, TN); the name is how --config and the autotuner show them.
CONFIGS = {
    f"{bm}x{bn}x{bk}_{tm}x{tn}": dict(BM=bm, BN=bn, BK=bk, TM=tm, TN=tn)
    for bm, bn, bk, tm, tn in [
        (128, 128, 8, 8, 8),
        (128, 128, 16, 8, 8),
        (128, 64, 8, 8, 8),
        (64, 128, 8, 8, 8),
        (64, 64, 8, 8, 4),
        (64, 64, 16, 4, 4),
        (64, 64, 8, 4, 8),
        (128, 256, 8, 8, 16),
        (256, 128, 8, 16, 8),
        (128, 256, 16, 8, 16),
        (256, 128, 16, 16, 8),
    ]
}
DEFAULT = "128x128x8_8x8"


def check_config(cfg: dict[str, int]) -> None:
    """Refuse tile sizes the kernel's index arithmetic does not cover."""
    bm, bn, bk, tm, tn = (cfg[x] for x in ("BM", "BN", "BK", "TM", "TN"))
    threads = (bm // tm) * (bn // tn)
    ok = (
        tm % 4 == 0
        and tn % 4 == 0
        and bm % tm == 0
        and bn % tn == 0
        and bk % 4 == 0
        and (bm * bk // 4) % threads == 0
        and (bk * bn // 4) % threads == 0
    )
    if not ok:
        raise gk.LaunchError(f"tile configuration {cfg} is not supported by sgemm_kernel")


def launch_config(m: int, n: int, cfg: dict[str, int]) -> tuple[tuple[int, int], int]:
    """Grid and block of the kernel for an m x n result."""
    bm, bn = cfg["BM"], cfg["BN"]
    return ((n + bn - 1) // bn, (m + bm - 1) // bm), (bm // cfg["TM"]) * (bn // cfg["TN"])


def sgemm(a, b, c, m: int, n: int, k: int, config: str | dict[str, int] | None = None) -> None:
    """c = a @ b on device arrays (flat, row-major float32); ``config``: a name of CONFIGS, a dict,
    or None for the autotuner's choice on this device and shape."""
    cfg = choose(m, n, k) if config is None else CONFIGS[config] if isinstance(config, str) else config
    check_config(cfg)
    grid, block = launch_config(m, n, cfg)
    vec = k % 4 == 0 and n % 4 == 0
    sgemm_kernel[grid, block](a, b, c, m, n, k, cfg["BM"], cfg["BN"], cfg["BK"], cfg["TM"], cfg["TN"], vec)


_chosen: dict[tuple[int, int, int], dict[str, int]] = {}


def choose(m: int, n: int, k: int, verbose: bool = False) -> dict[str, int]:
    """The fastest configuration for this shape on the current device (timed once, then cached on disk)."""
    key = (m, n, k)
    if key not in _chosen:
        rng = np.random.default_rng(1)
        a = gk.to_device(rng.standard_normal(m * k, dtype=np.float32))
        b = gk.to_device(rng.standard_normal(k * n, dtype=np.float32))
        c = gk.empty(m * n, np.float32)
        vec = k % 4 == 0 and n % 4 == 0
        _chosen[key] = gk.autotune(
            sgemm_kernel,
            list(CONFIGS.values()),
            args=lambda cfg: (a, b, c, m, n, k, cfg["BM"], cfg["BN"], cfg["BK"], cfg["TM"], cfg["TN"], vec),
            launch=lambda cfg: launch_config(m, n, cfg),
            key=(m, n, k),
            verbose=verbose,
        )
    return _chosen[key]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1024, help="n for an n x n x n product (default 1024)")
    p.add_argument("--config", choices=sorted(CONFIGS), help="tile configuration (default: autotuned)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n = args.size

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        cfg = CONFIGS[args.config or DEFAULT]
        types = (Array[float32],) * 3 + (int32,) * 3
        print(sgemm_kernel.source(*types, *cfg.values(), True, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    da, db = gk.to_device(a.ravel()), gk.to_device(b.ravel())
    dc = gk.empty(n * n, np.float32)
    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}x{n}x{n}")
    cfg = CONFIGS[args.config] if args.config else choose(n, n, n, verbose=True)
    name = next((k for k, v in CONFIGS.items() if v == cfg), str(cfg))
    t = gk.benchmark(lambda: sgemm(da, db, dc, n, n, n, cfg), repeat=args.repeat)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(dc.get().reshape(n, n) - ref).max() / np.abs(ref).max())
    if not err < 1e-4:
        print(f"sgemm {name}: WRONG result, max relative error {err:.2e}", file=sys.stderr)
        raise SystemExit(1)
    gflops = 2.0 * n**3 / t / 1e9
    print(f"sgemm {name}: {t * 1e3:9.3f} ms  {gflops:8.2f} GFLOP/s  max rel. error vs NumPy {err:.1e}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
