"""Sum of a large array with warp shuffles: examples/reduce_sum.py's interface, fewer barriers.

The same two passes as reduce_sum.py (pass 1: at most MAX_BLOCKS blocks, each thread summing a
grid-stride slice; pass 2: one block over the partial sums), and the same check against NumPy.
What differs is how a block adds up its BLOCK partial sums.  reduce_sum.py halves them in shared
memory, log2(BLOCK) steps with a barrier after each.  Here each warp first adds its threads' sums
in registers with shfl_down_sync: after adding the value 16, 8, 4, 2 and 1 lanes further down,
lane 0 holds the warp's sum (a lane whose source is past the warp's end gets its own value back,
which only lanes other than 0 ever add).  Lane 0 of each warp writes that sum to shared memory,
one barrier, and then each warp reduces the warp sums the same way.  The kernel says
``warp_size()`` and mask ``-1`` (every lane), never 32: it runs as written on 32-lane warps and on
64-lane wavefronts (``GPUKERN_SIM_LANES=64`` runs it so on the simulator; the offsets are then
32, 16, ... 1).  Every warp
does that last step, not only warp 0, so every shuffle is reached by the whole block: on OpenCL
devices without sub-groups, gpukern emulates the shuffles with work-group barriers and needs that
(docs/backends.md); on CUDA the extra warps cost nothing, they run beside warp 0.

BLOCK is a power of two from 64 to 1024 (whole warps, at most 32 warp sums); the float32 tolerance
and the int32 index bound are those of reduce_sum.py.

    python examples/reduce_warp.py                      # 2^24 elements, best backend
    python examples/reduce_warp.py --size 100003 --block 128 --backend sim
    python examples/reduce_warp.py --show-source --backend cuda
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
    grid_dim,
    int32,
    kernel,
    lane_id,
    shared,
    shfl_down_sync,
    thread_idx,
    warp_size,
)

MAX_BLOCKS = 1024  # pass 1 never launches more blocks than this: pass 2 reduces at most this many partials
ALL = -1  # every lane of the warp takes part (of 32 or of 64)


@kernel
def block_sum(x: Array[float32], partial: Array[float32], n: int32, BLOCK: Const[int]):
    """partial[b] = the sum of the elements that block b's threads visit (BLOCK a power of two >= 64)."""
    warp_sums = shared(float32, 32)  # at most 1024 / 32 warps
    tid = thread_idx.x
    lane = lane_id()
    acc = float32(0.0)
    i = block_idx.x * BLOCK + tid
    stride = BLOCK * grid_dim.x
    while i < n:  # grid-stride loop: each thread sums its own strided slice
        acc += x[i]
        i += stride
    offset = warp_size() // 2
    while offset > 0:  # lane 0 gets its warp's sum: add the lanes 16, 8, 4, 2, 1 further down
        acc += shfl_down_sync(ALL, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[tid // warp_size()] = acc
    barrier()  # every warp's sum is in shared memory
    acc = warp_sums[lane] if lane < BLOCK // warp_size() else float32(0.0)
    offset = warp_size() // 2
    while offset > 0:  # every warp sums the warp sums (so every thread reaches the shuffles)
        acc += shfl_down_sync(ALL, acc, offset)
        offset //= 2
    if tid == 0:
        partial[block_idx.x] = acc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="number of elements (default 2^24; 2^16 on the simulator)")
    p.add_argument("--block", type=int, default=256, choices=(64, 128, 256, 512, 1024), help="threads per block")
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
        print(f"reduce_warp: WRONG result {total!r}, NumPy (float64) says {exact!r}", file=sys.stderr)
        return 1
    print(
        f"reduce_warp: n={n}  {t * 1e3:9.3f} ms  {4 * n / t / 1e9:8.2f} GB/s  "
        f"sum {total:.6g}  error/sum|x| vs NumPy {err:.1e}  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
