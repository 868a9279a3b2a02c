"""Sum of a large array: a tree reduction in shared memory, in two passes on the device.

Pass 1 launches at most MAX_BLOCKS blocks of BLOCK threads.  Each thread first adds
up the elements it visits with a grid-stride loop (i, i + BLOCK * blocks, ...), so a
block reduces many elements however large the array.  The block then halves its
BLOCK partial sums in shared memory: with s = BLOCK/2, BLOCK/4, ..., 1, thread t < s
adds element t + s to element t, and every thread waits at a barrier before the next
halving (the loop bound s is the same for every thread, so the barrier is outside
the ``if``).  Thread 0 writes the block's sum to partial[block].

Pass 2 is the same kernel launched as a single block over the partial sums, which
leaves the total in out[0]: no host-side summation, and the data never leaves the
device until the one number is read back.

float32 additions in tree order give a slightly different answer from NumPy's; the
check is |sum - exact| <= 1e-5 * sum(|x|), the bound that float32 summation error
scales with.  Indices are int32 (signed overflow is undefined), so n must stay below
2^31 - BLOCK * MAX_BLOCKS.

    python examples/reduce_sum.py                      # 2^24 elements, best backend
    python examples/reduce_sum.py --size 100003 --block 128 --backend sim
    python examples/reduce_sum.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, grid_dim, int32, kernel, shared, thread_idx

MAX_BLOCKS = 1024  # pass 1 never launches more blocks than this: pass 2 reduces at most this many partials


@kernel
def block_sum(x: Array[float32], partial: Array[float32], n: int32, BLOCK: Const[int]):
    """partial[b] = the sum of the elements that block b's threads visit (BLOCK a power of two)."""
    buf = shared(float32, BLOCK)
    tid = thread_idx.x
    acc = 0.0
    i = block_idx.x * BLOCK + tid
    stride = BLOCK * grid_dim.x
    while i < n:  # grid-stride loop: each thread sums its own strided slice
        acc += x[i]
        i += stride
    buf[tid] = acc
    barrier()  # all BLOCK partial sums are in shared memory
    s = BLOCK // 2
    while s > 0:  # uniform bound: every thread runs every halving and reaches every barrier
        if tid < s:
            buf[tid] += buf[tid + s]
        barrier()  # this halving is done before the next one reads its results
        s //= 2
    if tid == 0:
        partial[block_idx.x] = buf[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="number of elements (default 2^24; 2^16 on the simulator)")
    p.add_argument("--block", type=int, default=256, choices=(32, 64, 128, 256, 512), help="threads per block")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n, block = gk.problem_size(args.size, 1 << 24, 1 << 16, args.backend), args.block

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        print(block_sum.source(Array[float32], Array[float32], int32, block, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    blocks = max(1, min((n + block - 1) // block, MAX_BLOCKS))
    dx = gk.to_device(x)
    dpartial = gk.empty(blocks, np.float32)
    dout = gk.empty(1, np.float32)
    pass1 = block_sum[blocks, block]
    pass2 = block_sum[1, block]

    def reduce() -> None:
        pass1(dx, dpartial, n, block)  # one partial sum per block
        pass2(dpartial, dout, blocks, block)  # one block sums the partials

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}")
    t = gk.benchmark(reduce, repeat=args.repeat)
    total = float(dout.get()[0])
    exact = float(x.astype(np.float64).sum())
    scale = float(np.abs(x).astype(np.float64).sum())
    err = abs(total - exact) / scale
    if not err <= 1e-5:
        print(f"reduce_sum: WRONG result {total!r}, NumPy (float64) says {exact!r}", file=sys.stderr)
        return 1
    print(
        f"reduce_sum: n={n}  {t * 1e3:9.3f} ms  {4 * n / t / 1e9:8.2f} GB/s  "
        f"sum {total:.6g}  error/sum|x| vs NumPy {err:.1e}  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
