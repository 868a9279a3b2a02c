"""Matrix transpose through a shared-memory tile, padded and unpadded.

A naive transpose reads rows and writes columns: one of the two is a strided,
uncoalesced access.  Here each TILE x TILE block reads a tile of A row by row
(coalesced), stores it in shared memory, waits at a barrier, and writes the
transposed tile to B row by row (coalesced again) by reading the shared tile
column by column.

That column read is where the padding matters.  Shared memory is split into 32
banks of 4-byte words; in a (32, 32) float32 tile every element of a column lies in
the same bank, so the 32 threads of a warp reading a column are served one after
the other (a 32-way bank conflict).  A (32, 33) tile -- one unused float per row --
shifts each row by one bank and the column read becomes conflict-free.  Both
kernels are run and timed; on a GPU the padded one is faster.  On the CPU backends
(PoCL, the simulator) there are no banks and the two times are about the same.

    python examples/transpose.py                       # 4096 x 4096, 32 x 32 tiles, best backend
    python examples/transpose.py --size 1000 --cols 333 --tile 16 --backend sim
    python examples/transpose.py --show-source --backend cuda
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, func, int32, kernel, shared, thread_idx


@func
def transpose_via(tile, a, out, rows, cols):
    """out (cols x rows) = a (rows x cols).T for this block's tile, staged through `tile`."""
    tx = thread_idx.x
    ty = thread_idx.y
    t = block_dim.x  # the tile edge: blocks are t x t threads
    col = block_idx.x * t + tx  # this thread reads a[row, col] ...
    row = block_idx.y * t + ty
    if row < rows and col < cols:
        tile[ty, tx] = a[row, col]  # ... along a row of a: coalesced
    barrier()  # the whole tile is loaded
    out_col = block_idx.y * t + tx  # ... and writes out[out_row, out_col], along a row of out
    out_row = block_idx.x * t + ty
    if out_row < cols and out_col < rows:
        out[out_row, out_col] = tile[tx, ty]  # a column of the tile: the bank conflicts, if any


@kernel
def transpose_padded(a: Array[float32, 2], out: Array[float32, 2], rows: int32, cols: int32, TILE: Const[int]):
    """One TILE x TILE tile per block, through a (TILE, TILE + 1) shared tile: no bank conflicts."""
    tile = shared(float32, (TILE, TILE + 1))
    transpose_via(tile, a, out, rows, cols)


@kernel
def transpose_unpadded(a: Array[float32, 2], out: Array[float32, 2], rows: int32, cols: int32, TILE: Const[int]):
    """The same through a (TILE, TILE) shared tile: reading a column of it conflicts on every bank."""
    tile = shared(float32, (TILE, TILE))
    transpose_via(tile, a, out, rows, cols)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="rows of the matrix (default 4096; 256 on the simulator)")
    p.add_argument("--cols", type=int, help="columns of the matrix (default: --size)")
    p.add_argument("--tile", type=int, default=32, choices=(8, 16, 32), help="tile edge (default 32)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    rows, tile = gk.problem_size(args.size, 4096, 256, args.backend), args.tile
    cols = args.cols if args.cols is not None else rows

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        for k in (transpose_padded, transpose_unpadded):
            print(k.source(Array[float32, 2], Array[float32, 2], int32, int32, tile, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    da = gk.to_device(a)
    grid = ((cols + tile - 1) // tile, (rows + tile - 1) // tile)

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {rows}x{cols}")
    times = {}
    for name, k in (("padded", transpose_padded), ("unpadded", transpose_unpadded)):
        dout = gk.empty((cols, rows), np.float32)  # each its own: one kernel's result cannot pass for the other's
        launch = k[grid, (tile, tile)]
        times[name] = gk.benchmark(lambda launch=launch, dout=dout: launch(da, dout, rows, cols, tile), args.repeat)
        wrong = int(np.count_nonzero(dout.get() != a.T))  # a copy: must be exact
        if wrong:
            print(f"transpose {name}: WRONG result, {wrong} of {a.size} elements differ from NumPy", file=sys.stderr)
            return 1
    tp, tu = times["padded"], times["unpadded"]
    gbs = 2 * 4 * a.size / 1e9  # read once, written once
    print(
        f"transpose {tile}x{tile}: padded (T, T+1) {tp * 1e3:9.3f} ms {gbs / tp:7.2f} GB/s  "
        f"unpadded (T, T) {tu * 1e3:9.3f} ms {gbs / tu:7.2f} GB/s  padded speed-up {tu / tp:.2f}x  "
        f"exact vs NumPy  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
