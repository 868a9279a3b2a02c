"""The classic shared-memory tiled matrix multiplication, written in gpukern.

Each block computes a TILE x TILE piece of C.  Per step it loads one tile of A and
one of B into shared memory, waits at a barrier, multiplies the tiles out of
shared memory, and waits again before the tiles are overwritten.  Every element
of A and B is thus read from global memory n/TILE times instead of n times.

    python examples/matmul_tiled.py                  # 1024^3, 16x16 tiles, best backend
    python examples/matmul_tiled.py --tile 32 --size 2048 --naive
    python examples/matmul_tiled.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, global_id, int32, kernel, shared, thread_idx


@kernel
def matmul_tiled(
    a: Array[float32], b: Array[float32], c: Array[float32], m: int32, n: int32, k: int32, TILE: Const[int]
):
    """c (m x n) = a (m x k) @ b (k x n), all row-major, one TILE x TILE block of c per block."""
    tile_a = shared(float32, (TILE, TILE))
    tile_b = shared(float32, (TILE, TILE))
    tx = thread_idx.x
    ty = thread_idx.y
    row = block_idx.y * block_dim.y + ty
    col = block_idx.x * block_dim.x + tx
    acc = 0.0
    for t in range((k + TILE - 1) // TILE):
        a_col = t * TILE + tx
        b_row = t * TILE + ty
        tile_a[ty, tx] = a[row * k + a_col] if row < m and a_col < k else 0.0
        tile_b[ty, tx] = b[b_row * n + col] if b_row < k and col < n else 0.0
        barrier()  # the tiles are loaded
        for i in range(TILE):
            acc += tile_a[ty, i] * tile_b[i, tx]
        barrier()  # everyone is done with the tiles before they are overwritten
    if row < m and col < n:
        c[row * n + col] = acc


@kernel
def matmul_naive(a: Array[float32], b: Array[float32], c: Array[float32], m: int32, n: int32, k: int32):
    """One thread per element of c, reading a and b straight from global memory."""
    row = global_id(1)
    col = global_id(0)
    if row < m and col < n:
        acc = 0.0
        for i in range(k):
            acc += a[row * k + i] * b[i * n + col]
        c[row * n + col] = acc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="n for an n x n x n product (default 1024; 128 on the simulator)")
    p.add_argument("--tile", type=int, default=16, choices=(8, 16, 32), help="tile edge (default 16)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--naive", action="store_true", help="also run the naive kernel and show the speed-up")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument(
        "--profile", action="store_true", help="count memory traffic on the simulator (with --naive: both) and exit"
    )
    p.add_argument("--repeat", type=int, default=5, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n, tile = gk.problem_size(args.size, 1024, 128, args.backend), args.tile

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        types = (Array[float32], Array[float32], Array[float32], int32, int32, int32, tile)
        print(matmul_tiled.source(*types, backend=dialect))
        if args.naive:
            print(matmul_naive.source(*types[:-1], backend=dialect))
        return 0

    if args.profile:
        return profile(n, tile, args.naive)

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
    block = (tile, tile)
    grid = gk.grid_for((n, n), block)  # blocks covering every element, the last ones past the edge
    flops = 2.0 * n**3
    ref = a.astype(np.float64) @ b.astype(np.float64)

    def check(name: str) -> float:
        c = dc.get().reshape(n, n)
        err = float(np.abs(c - ref).max() / np.abs(ref).max())
        if not err < 1e-4:
            print(f"{name}: WRONG result, max relative error {err:.2e}", file=sys.stderr)
            raise SystemExit(1)
        return err

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}x{n}x{n}")
    tiled = matmul_tiled[grid, block]
    t_tiled = gk.benchmark(lambda: tiled(da, db, dc, n, n, n, tile), repeat=args.repeat)
    err = check("tiled")
    print(
        f"tiled {tile}x{tile}: {t_tiled * 1e3:9.3f} ms  {flops / t_tiled / 1e9:8.2f} GFLOP/s  "
        f"max rel. error vs NumPy {err:.1e}  OK"
    )
    if args.naive:
        naive = matmul_naive[grid, block]
        t_naive = gk.benchmark(lambda: naive(da, db, dc, n, n, n), repeat=args.repeat)
        err = check("naive")
        print(
            f"naive      : {t_naive * 1e3:9.3f} ms  {flops / t_naive / 1e9:8.2f} GFLOP/s  "
            f"max rel. error vs NumPy {err:.1e}  OK"
        )
        print(f"speed-up of tiled over naive: {t_naive / t_tiled:.2f}x")
    return 0


def profile(n: int, tile: int, naive: bool) -> int:
    """Profile the kernels' memory traffic on the simulator (any machine) and print the reports."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n * n, dtype=np.float32)
    b = rng.standard_normal(n * n, dtype=np.float32)
    c = np.zeros(n * n, np.float32)
    block = (tile, tile)
    grid = gk.grid_for((n, n), block)  # blocks covering every element, the last ones past the edge
    tiled = gk.profile(matmul_tiled[grid, block], a, b, c, n, n, n, tile)
    print(tiled)
    print(tiled.source_view())
    if naive:
        plain = gk.profile(matmul_naive[grid, block], a, b, c, n, n, n)
        print(plain)
        print(plain.source_view())
        t, p = tiled.total, plain.total
        print(
            f"naive / tiled: {p.global_load_elems / t.global_load_elems:.2f}x the global load requests (elements), "
            f"{p.global_load_sectors / t.global_load_sectors:.2f}x the sectors moved (TILE = {tile})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
