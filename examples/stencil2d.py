"""A 2D 5-point stencil: explicit heat-diffusion steps on a grid, through shared-memory tiles.

One step computes, for every interior point,

    out[i, j] = u[i, j] + alpha * (u[i-1, j] + u[i+1, j] + u[i, j-1] + u[i, j+1] - 4 u[i, j])

and copies the boundary unchanged (fixed-temperature edges).  Each TILE x TILE block
loads its tile of u into a (TILE + 2, TILE + 2) shared array: every thread loads its
own point, and the threads on the tile's edges also load the neighbour just outside
it (the halo; the 5-point stencil needs no corners).  After a barrier every point is
computed from shared memory, so each value of u is read from global memory about
once instead of five times.

``--steps`` steps ping-pong between two device arrays: the data stay on the device
from the first launch to the last, and the input is never overwritten, so every
timed run starts from the same state.  The check is NumPy doing the same steps in
float32 (tolerance 1e-5: a GPU compiler may fuse the multiply-add).

    python examples/stencil2d.py                       # 2048 x 2048, 10 steps, best backend
    python examples/stencil2d.py --size 45 --cols 70 --tile 8 --backend sim
    python examples/stencil2d.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, int32, kernel, shared, thread_idx


@kernel
def heat_step(u: Array[float32, 2], out: Array[float32, 2], rows: int32, cols: int32, alpha: float32, TILE: Const[int]):
    """One explicit step of the heat equation on a rows x cols grid; blocks are TILE x TILE threads."""
    tile = shared(float32, (TILE + 2, TILE + 2))  # tile[1 + ty, 1 + tx] holds u[i, j]
    tx = thread_idx.x
    ty = thread_idx.y
    i = block_idx.y * TILE + ty
    j = block_idx.x * TILE + tx
    inside = i < rows and j < cols
    if inside:
        tile[ty + 1, tx + 1] = u[i, j]
        if tx == 0 and j > 0:  # the halo column on the left
            tile[ty + 1, 0] = u[i, j - 1]
        if tx == TILE - 1 and j + 1 < cols:  # ... on the right
            tile[ty + 1, TILE + 1] = u[i, j + 1]
        if ty == 0 and i > 0:  # the halo row above
            tile[0, tx + 1] = u[i - 1, j]
        if ty == TILE - 1 and i + 1 < rows:  # ... below
            tile[TILE + 1, tx + 1] = u[i + 1, j]
    barrier()  # the tile and its halo are loaded
    if inside:
        c = tile[ty + 1, tx + 1]
        if i == 0 or j == 0 or i == rows - 1 or j == cols - 1:
            out[i, j] = c  # the boundary stays fixed
        else:
            up = tile[ty, tx + 1]
            down = tile[ty + 2, tx + 1]
            left = tile[ty + 1, tx]
            right = tile[ty + 1, tx + 2]
            out[i, j] = c + alpha * (up + down + left + right - 4.0 * c)


def reference(u: np.ndarray, alpha: np.float32, steps: int) -> np.ndarray:
    """The same steps in NumPy, float32 throughout."""
    for _ in range(steps):
        new = u.copy()
        c = u[1:-1, 1:-1]
        new[1:-1, 1:-1] = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - np.float32(4) * c)
        u = new
    return u


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="rows of the grid (default 2048; 128 on the simulator)")
    p.add_argument("--cols", type=int, help="columns of the grid (default: --size)")
    p.add_argument("--steps", type=int, default=10, help="time steps per run (default 10)")
    p.add_argument("--tile", type=int, default=16, choices=(8, 16, 32), help="tile edge (default 16)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=5, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    rows, tile, steps = gk.problem_size(args.size, 2048, 128, args.backend), args.tile, max(1, args.steps)
    cols = args.cols if args.cols is not None else rows
    alpha = np.float32(0.2)  # <= 0.25 keeps the explicit scheme stable

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        types = (Array[float32, 2], Array[float32, 2], int32, int32, float32, tile)
        print(heat_step.source(*types, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    u0 = rng.standard_normal((rows, cols), dtype=np.float32)
    du0 = gk.to_device(u0)
    bufs = (gk.empty((rows, cols), np.float32), gk.empty((rows, cols), np.float32))
    step = heat_step[((cols + tile - 1) // tile, (rows + tile - 1) // tile), (tile, tile)]

    def run() -> None:
        src = du0
        for s in range(steps):
            dst = bufs[s % 2]
            step(src, dst, rows, cols, alpha, tile)
            src = dst

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {rows}x{cols}  steps: {steps}")
    t = gk.benchmark(run, repeat=args.repeat)
    u = bufs[(steps - 1) % 2].get()
    ref = reference(u0, alpha, steps)
    err = float(np.abs(u - ref).max())
    if not np.allclose(u, ref, rtol=1e-5, atol=1e-5):
        print(f"stencil2d: WRONG result, max abs error vs NumPy {err:.2e}", file=sys.stderr)
        return 1
    per_step = t / steps
    print(
        f"stencil2d: {rows}x{cols} x {steps} steps  {t * 1e3:9.3f} ms  ({per_step * 1e3:.3f} ms/step, "
        f"{rows * cols / per_step / 1e9:.3f} Gpoints/s)  max error vs NumPy {err:.1e}  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
