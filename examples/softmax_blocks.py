"""Softmax over the rows of a matrix: one block per row, two block-wide reductions -- the teaching
version, rows of any length (``examples/softmax.py`` is the fast one: each row read once).

softmax(x)[j] = exp(x[j] - max(x)) / sum_k exp(x[k] - max(x)); subtracting the row's
maximum first keeps exp from overflowing and does not change the result.  Each
block of BLOCK threads owns one row and makes three strided passes over it:

1. every thread takes the maximum of its elements (j = t, t + BLOCK, ...), and the
   block combines the BLOCK maxima with a tree reduction in shared memory;
2. the same for the sum of exp(x[j] - max);
3. every thread writes exp(x[j] - max) / sum for its elements.

The reductions are ``@gk.func`` helpers that contain barriers; they are called at the
top level of the kernel, where every thread of the block reaches them.  A row of any
length works: the last stride is partial.  ``math.exp`` of a float32 stays float32
(``expf``); the check is against NumPy in float64 with rtol 1e-5.

    python examples/softmax_blocks.py                         # 4096 rows x 1000 columns, best backend
    python examples/softmax_blocks.py --size 7 --cols 70 --block 32 --backend sim
    python examples/softmax_blocks.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, func, int32, kernel, shared, thread_idx


@func
def block_max(buf, tid, v):
    """The maximum of v over the block's threads (block_dim.x a power of two), returned to every thread."""
    buf[tid] = v
    barrier()
    s = block_dim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] = max(buf[tid], buf[tid + s])
        barrier()
        s //= 2
    result = buf[0]
    barrier()  # everyone has read buf[0] before buf is used again
    return result


@func
def block_sum(buf, tid, v):
    """The sum of v over the block's threads (block_dim.x a power of two), returned to every thread."""
    buf[tid] = v
    barrier()
    s = block_dim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        barrier()
        s //= 2
    result = buf[0]
    barrier()
    return result


@kernel
def softmax_rows(x: Array[float32, 2], out: Array[float32, 2], cols: int32, BLOCK: Const[int]):
    """out[r, :] = softmax(x[r, :]) for row r = block_idx.x; blocks are BLOCK threads."""
    buf = shared(float32, BLOCK)
    row = block_idx.x
    tid = thread_idx.x
    m = x[row, 0]
    for j in range(tid, cols, BLOCK):
        m = max(m, x[row, j])
    m = block_max(buf, tid, m)
    s = 0.0
    for j in range(tid, cols, BLOCK):
        s += math.exp(x[row, j] - m)
    s = block_sum(buf, tid, s)
    inv = 1.0 / s
    for j in range(tid, cols, BLOCK):
        out[row, j] = math.exp(x[row, j] - m) * inv


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="number of rows (default 4096; 64 on the simulator)")
    p.add_argument("--cols", type=int, default=1000, help="length of a row (default 1000)")
    p.add_argument("--block", type=int, default=256, choices=(32, 64, 128, 256, 512), help="threads per row")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    rows, cols, block = gk.problem_size(args.size, 4096, 64, args.backend), args.cols, args.block

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        print(softmax_rows.source(Array[float32, 2], Array[float32, 2], int32, block, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    x = (4 * rng.standard_normal((rows, cols))).astype(np.float32)
    dx = gk.to_device(x)
    dout = gk.empty((rows, cols), np.float32)
    launch = softmax_rows[rows, block]

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {rows}x{cols}")
    t = gk.benchmark(lambda: launch(dx, dout, cols, block), repeat=args.repeat)
    out = dout.get()
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    err = float((np.abs(out - ref) / ref).max())
    if not err <= 1e-5:
        print(f"softmax: WRONG result, max relative error vs NumPy {err:.2e}", file=sys.stderr)
        return 1
    print(
        f"softmax: {rows}x{cols}  {t * 1e3:9.3f} ms  {2 * 4 * x.size / t / 1e9:8.2f} GB/s  "
        f"max rel. error vs NumPy {err:.1e}  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
