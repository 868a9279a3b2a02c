"""A block sum with warp shuffles against the shared-memory tree: examples/reduce_warp.py vs reduce_sum.py.

    python benchmarks/warp_reduce.py --backend cuda          # sizes 2^20 2^22 2^24 2^26, 256 threads a block
    python benchmarks/warp_reduce.py --backend opencl --sizes 1048576 --repeat 10   # PoCL: the emulation's cost

What it measures: the whole two-pass sum of each example (pass 1, ``block_sum`` over at most 1024 blocks
with grid-stride loops; pass 2, one block over the partial sums), the examples' own kernels and launches,
over the same random normal float32 array on the device.  The two differ only in how a block adds up
its threads' sums: halving in shared memory with a barrier per step (reduce_sum.py), or ``shfl_down_sync``
within each warp, one barrier, and the warp sums shuffled again (reduce_warp.py).

How: each contender runs ``--warmup`` times untimed (compilation, caches); then ``--repeat`` repetitions,
in each of which every contender runs once, in an order rotated each repetition so drift hits both alike.
Each run is timed by device events around its two launches (CUDA events; OpenCL profiling markers,
gpukern's ``timer``); on CUDA the busy-wait kernel of benchmarks/matmul.py runs before each start event,
so the host's launch overhead is spent while the device is busy and the events time the kernels, not
Python.  Reported per size: the median, GB/s = 4 n / median, every repetition's time, and the speed-up
(shared median / warp median).  Each output is checked after the timed runs against NumPy's float64 sum:
|sum - exact| <= ``--tolerance`` * sum(|x|) (the examples' own check), else the run is FAILED and the
script exits 1.

Writes ``warp_reduce.json`` (``benchmarks/_common.py``; and ``warp_reduce.png`` when matplotlib imports) to
``--out``, and appends one line with the medians to ``--out``/README.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

import _common
import numpy as np

SEED = 20261123
SERIES = {"shared-memory tree (reduce_sum.py)": "reduce_sum", "warp shuffles (reduce_warp.py)": "reduce_warp"}


def spinner(backend: Any) -> Callable[[], None]:
    """What runs before each start event: on CUDA, matmul.py's busy-wait kernel; elsewhere nothing."""
    if backend.name != "cuda":
        return lambda: None
    from matmul import SPIN_CU, SPIN_NS

    from gpukern.backends.cuda_compile import nvcc_compile

    fn = backend.driver.load(nvcc_compile(SPIN_CU, backend.arch, tuple(getattr(backend, "options", ())))).function(
        "busy_wait"
    )
    fn.prepare("q")
    return lambda: fn.prepared_async_call((1, 1, 1), (1, 1, 1), None, SPIN_NS)


def measure(gk: Any, backend: Any, spin: Callable[[], None], n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Both contenders at size n: their times, their checked sums."""
    rng = np.random.default_rng(SEED + n)
    x = rng.standard_normal(n, dtype=np.float32)
    dx = gk.to_device(x)
    block = args.block
    runs: dict[str, Callable[[], None]] = {}
    outs: dict[str, Any] = {}
    for series, name in SERIES.items():
        module = _common.example(name)
        blocks = max(1, min((n + block - 1) // block, module.MAX_BLOCKS))
        partial, out = gk.empty(blocks, np.float32), gk.to_device(np.full(1, np.nan, np.float32))
        pass1, pass2 = module.block_sum[blocks, block], module.block_sum[1, block]

        def run(
            pass1: Any = pass1, pass2: Any = pass2, partial: Any = partial, out: Any = out, b: int = blocks
        ) -> None:
            pass1(dx, partial, n, block)
            pass2(partial, out, b, block)

        runs[series], outs[series] = run, out
    for run in runs.values():
        for _ in range(args.warmup):
            run()
    backend.synchronize()
    times: dict[str, list[float]] = {s: [] for s in runs}
    order = list(runs)
    for r in range(args.repeat):
        for series in order[r % len(order) :] + order[: r % len(order)]:
            spin()
            start = backend.timer()
            runs[series]()
            end = backend.timer()
            times[series].append(backend.elapsed(start, end))
    backend.synchronize()
    exact = float(x.astype(np.float64).sum())
    scale = float(np.abs(x).astype(np.float64).sum())
    result: dict[str, Any] = {}
    for series, ts in times.items():
        total = float(outs[series].get()[0])
        err = abs(total - exact) / scale
        median = statistics.median(ts)
        result[series] = {
            "median_ms": median * 1e3,
            "gb_per_s": 4 * n / median / 1e9,
            "times_ms": [t * 1e3 for t in ts],
            "sum": total,
            "error_vs_numpy": err,
            "ok": bool(err <= args.tolerance),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _common.add_common_args(p)
    p.add_argument("--sizes", type=int, nargs="+", default=[1 << 20, 1 << 22, 1 << 24, 1 << 26])
    p.add_argument("--block", type=int, default=256, choices=(32, 64, 128, 256, 512, 1024), help="threads per block")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--tolerance", type=float, default=1e-5, help="|sum - exact| / sum|x| allowed")
    args = p.parse_args(argv)
    backend = _common.select_backend(args.backend)
    import gpukern as gk

    spin = spinner(backend)
    print(f"device: {backend.device_name()}  block: {args.block}  {args.warmup} warm-up + {args.repeat} timed runs")
    results: dict[str, Any] = {}
    rows = []
    for n in args.sizes:
        r = results[str(n)] = measure(gk, backend, spin, n, args)
        shared, warp = (r[s]["median_ms"] for s in SERIES)
        r["speedup_warp_over_shared"] = shared / warp
        for s in SERIES:
            rows.append(
                [
                    f"n={n} {s}",
                    f"{r[s]['median_ms']:.4f}",
                    f"{r[s]['gb_per_s']:.1f}",
                    f"{r[s]['error_vs_numpy']:.1e}",
                    "OK" if r[s]["ok"] else "FAILED",
                ]
            )
    print(_common.table(["series", "median ms", "GB/s", "error/sum|x|", "check"], rows))
    failed = [(n, s) for n, r in results.items() for s in SERIES if not r[s]["ok"]]
    plot = {
        "kind": "lines",
        "title": f"float32 array sum, {args.block} threads a block, {backend.name}: median of {args.repeat} runs",
        "xlabel": "n (elements)",
        "ylabel": "GB/s (4 n / median time)",
        "log_x": True,
        "series": {
            s: {"x": [int(n) for n in results], "y": [r[s]["gb_per_s"] for r in results.values()]} for s in SERIES
        },
    }
    params = {k: v for k, v in vars(args).items()}
    params["timing"] = "device events around both passes" + (
        ", each run after a busy-wait kernel so host launch overhead is not timed" if backend.name == "cuda" else ""
    )
    _common.save("warp_reduce", args.out, backend, params, results, plot)
    speedups = ", ".join(
        f"n={n}: shared {r[list(SERIES)[0]]['median_ms']:.4f} ms, warp {r[list(SERIES)[1]]['median_ms']:.4f} ms "
        f"({r['speedup_warp_over_shared']:.2f}x)"
        for n, r in results.items()
    )
    line = f"- warp_reduce.json ({backend.device_name()}, block {args.block}): {speedups}" + (
        f"; FAILED checks: {failed}" if failed else "; every sum checked against NumPy"
    )
    with open(args.out / "README.md", "a") as f:
        f.write(line + "\n")
    print(line)
    if failed:
        print(f"FAILED: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
