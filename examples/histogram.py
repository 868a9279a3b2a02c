"""Histogram with atomics, privatised per block in shared memory.

Many threads incrementing the same counters is what atomics are for; but if every
thread does ``atomic_add`` on the one histogram in global memory, the popular bins
become a queue.  Here each block first builds its own histogram in shared memory
(shared-memory atomics, contended only within the block), then, after a barrier,
adds its BINS counters into the global histogram: one global atomic per bin per
block instead of one per element.  A grid-stride loop lets a fixed number of
blocks cover any input size.

The global histogram must start at zero on every run, so each timed run is two
launches: ``clear`` (one thread per bin) and ``histogram``.  The data are int32
values in [0, BINS) drawn from a binomial distribution, so a few bins are hot, as in
real images; the counts must equal ``numpy.bincount`` exactly.

    python examples/histogram.py                       # 2^24 values, 256 bins, best backend
    python examples/histogram.py --size 5000 --bins 100 --backend sim
    python examples/histogram.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    barrier,
    block_dim,
    block_idx,
    global_id,
    grid_dim,
    int32,
    kernel,
    shared,
    thread_idx,
)

MAX_BLOCKS = 256


@kernel
def clear(hist: Array[int32], bins: int32):
    """hist[:bins] = 0."""
    i = global_id(0)
    if i < bins:
        hist[i] = 0


@kernel
def histogram(data: Array[int32], hist: Array[int32], n: int32, BINS: Const[int]):
    """hist[v] += the number of elements equal to v (every value in [0, BINS))."""
    counts = shared(int32, BINS)
    tid = thread_idx.x
    for b in range(tid, BINS, block_dim.x):  # the block's threads zero its private histogram
        counts[b] = 0
    barrier()
    i = block_idx.x * block_dim.x + tid
    stride = block_dim.x * grid_dim.x
    while i < n:
        atomic_add(counts, data[i], 1)  # contended only within this block
        i += stride
    barrier()  # the block's histogram is complete
    for b in range(tid, BINS, block_dim.x):
        if counts[b] != 0:
            atomic_add(hist, b, counts[b])  # one global atomic per bin per block


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="number of values (default 2^24; 2^16 on the simulator)")
    p.add_argument("--bins", type=int, default=256, help="number of bins (default 256)")
    p.add_argument("--block", type=int, default=256, help="threads per block (default 256)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n, bins, block = gk.problem_size(args.size, 1 << 24, 1 << 16, args.backend), args.bins, args.block

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        print(clear.source(Array[int32], int32, backend=dialect))
        print(histogram.source(Array[int32], Array[int32], int32, bins, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    data = rng.binomial(bins - 1, 0.3, n).astype(np.int32)
    ddata = gk.to_device(data)
    dhist = gk.empty(bins, np.int32)
    blocks = max(1, min((n + block - 1) // block, MAX_BLOCKS))
    zero = clear[(bins + block - 1) // block, block]
    count = histogram[blocks, block]

    def run() -> None:
        zero(dhist, bins)
        count(ddata, dhist, n, bins)

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}  bins: {bins}")
    t = gk.benchmark(run, repeat=args.repeat)
    hist = dhist.get()
    ref = np.bincount(data, minlength=bins)
    wrong = int(np.count_nonzero(hist != ref))
    if wrong:
        print(f"histogram: WRONG result, {wrong} of {bins} bins differ from numpy.bincount", file=sys.stderr)
        return 1
    print(f"histogram: n={n} bins={bins}  {t * 1e3:9.3f} ms  {n / t / 1e9:8.3f} Gvalues/s  exact vs numpy.bincount  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
