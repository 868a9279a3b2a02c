"""Vector addition, the "hello world" of GPU kernels: out[i] = a[i] + b[i].

One thread per element.  The grid is rounded up to whole blocks, so the last
block has threads past the end of the arrays; each thread checks ``i < n`` before
touching memory.  There is no reuse of data, so the kernel is bound by memory
bandwidth: the GB/s printed (three arrays of n float32 moved per run) is the
number to compare with the device's peak.

    python examples/vector_add.py                      # 2^24 elements, best backend
    python examples/vector_add.py --size 1000 --backend sim
    python examples/vector_add.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk
from gpukern import Array, float32, global_id, int32, kernel


@kernel
def vector_add(a: Array[float32], b: Array[float32], out: Array[float32], n: int32):
    """out = a + b, one element per thread."""
    i = global_id(0)
    if i < n:
        out[i] = a[i] + b[i]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="number of elements (default 2^24; 2^16 on the simulator)")
    p.add_argument("--block", type=int, default=256, help="threads per block (default 256)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, default=10, help="timed runs; the median is reported")
    args = p.parse_args(argv)
    n, block = gk.problem_size(args.size, 1 << 24, 1 << 16, args.backend), args.block

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        print(vector_add.source(Array[float32], Array[float32], Array[float32], int32, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db = gk.to_device(a), gk.to_device(b)
    dout = gk.empty(n, np.float32)

    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}")
    launch = vector_add[(n + block - 1) // block, block]
    t = gk.benchmark(lambda: launch(da, db, dout, n), repeat=args.repeat)
    out = dout.get()
    # float32 + float32 is correctly rounded everywhere: the result must match NumPy bit for bit
    wrong = int(np.count_nonzero(out != a + b))
    if wrong:
        print(f"vector_add: WRONG result, {wrong} of {n} elements differ from NumPy", file=sys.stderr)
        return 1
    print(f"vector_add: n={n}  {t * 1e3:9.3f} ms  {3 * 4 * n / t / 1e9:8.2f} GB/s  exact vs NumPy  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
