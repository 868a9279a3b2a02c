"""Inclusive prefix sum (scan), within a block and across blocks.

Within a block (``scan_block``): each of the BLOCK threads loads one element into
shared memory, and the block runs the Hillis-Steele scan: for offset = 1, 2, 4, ...
< BLOCK, thread t adds element t - offset to element t.  Each round reads its
operand, waits at a barrier so nobody overwrites it too early, adds, and waits
again; after log2(BLOCK) rounds element t holds the sum of elements 0..t.  The
last thread also writes the block's total to ``block_sums``.

Across blocks, three steps:

1. ``scan_block`` scans every block of BLOCK elements and writes the block totals;
2. the block totals are scanned the same way -- recursively, as a smaller array,
   until they fit in one block;
3. ``add_block_offsets`` adds, to every element of block b > 0, the scanned total of
   blocks 0..b-1.

With BLOCK = 256 the three levels cover 2^24 elements.  All levels' arrays are
allocated up front and stay on the device; only the result is copied back.  The
values are small int32s (0..9), so the sums stay far inside int32 and the result
must equal ``numpy.cumsum`` exactly.

    python examples/scan.py                            # 2^24 elements, 256 per block, best backend
    python examples/scan.py --size 5000 --block 64 --backend sim
    python examples/scan.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, int32, kernel, shared, thread_idx


@kernel
def scan_block(x: Array[int32], y: Array[int32], block_sums: Array[int32], n: int32, BLOCK: Const[int]):
    """y = the inclusive scan of x within each block of BLOCK elements; block_sums[b] = block b's total."""
    buf = shared(int32, BLOCK)
    tid = thread_idx.x
    i = block_idx.x * BLOCK + tid
    buf[tid] = x[i] if i < n else 0  # past the end: 0, which changes no sum
    barrier()
    offset = 1
    while offset < BLOCK:  # uniform bound: every thread reaches both barriers of every round
        v = buf[tid - offset] if tid >= offset else 0
        barrier()  # everyone has read this round's operand before anyone adds to it
        buf[tid] += v
        barrier()  # this round's sums are complete
        offset *= 2
    if i < n:
        y[i] = buf[tid]
    if tid == BLOCK - 1:
        block_sums[block_idx.x] = buf[tid]


@kernel
def add_block_offsets(y: Array[int32], scanned_sums: Array[int32], n: int32, BLOCK: Const[int]):
    """y[i] += the total of all blocks before i's block (scanned_sums is the scan of the block totals)."""
    i = block_idx.x * BLOCK + thread_idx.x
    if block_idx.x > 0 and i < n:
        y[i] += scanned_sums[block_idx.x - 1]


class Scan:
    """The device arrays of every level, and the launches that scan x into y."""

    def __init__(self, n: int, block: int):
        self.block = block
        self.levels = []  # (n, blocks, y, block_sums) per level; level k + 1 scans level k's block_sums
        while True:
            blocks = (n + block - 1) // block
            self.levels.append((n, blocks, gk.empty(n, np.int32), gk.empty(blocks, np.int32)))
            if blocks == 1:
                break
            n = blocks

    def __call__(self, x: gk.DeviceArray) -> gk.DeviceArray:
        block = self.block
        src = x
        for n, blocks, y, sums in self.levels:  # down: scan each level's blocks, collect their totals
            scan_block[blocks, block](src, y, sums, n, block)
            src = sums
        for k in range(len(self.levels) - 2, -1, -1):  # up: add the scanned totals back in
            n, blocks, y, _ = self.levels[k]
            add_block_offsets[blocks, block](y, self.levels[k + 1][2], n, block)
        return self.levels[0][2]


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
        print(scan_block.source(Array[int32], Array[int32], Array[int32], int32, block, backend=dialect))
        print(add_block_offsets.source(Array[int32], Array[int32], int32, block, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    x = rng.integers(0, 10, n, dtype=np.int32)
    dx = gk.to_device(x)
    scan = Scan(n, block)

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}")
    t = gk.benchmark(lambda: scan(dx), repeat=args.repeat)
    y = scan(dx).get()
    wrong = np.flatnonzero(y != np.cumsum(x, dtype=np.int64))
    if wrong.size:
        print(
            f"scan: WRONG result, {wrong.size} of {n} elements differ from numpy.cumsum (first at {wrong[0]})",
            file=sys.stderr,
        )
        return 1
    print(
        f"scan: n={n}  {t * 1e3:9.3f} ms  {2 * 4 * n / t / 1e9:8.2f} GB/s  "
        f"{len(scan.levels)} levels of {block}-element blocks  exact vs numpy.cumsum  OK"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
