"""Copy/compute overlap with streams: a chunked pipeline on 2-4 streams against the same work on one.

    python benchmarks/overlap.py [--backend cuda|opencl] [--elements 2**26] [--chunks 16]
                                 [--iterations 600] [--reps 7] [--out DIR]

The work: ``--elements`` random float32 values (never zero) in pinned host memory go to the device
in ``--chunks`` chunks; each chunk is transformed by a kernel (``--iterations`` multiply-adds per
element, so that a chunk's compute takes about as long as its copies) and comes back to pinned
host memory.  Measured, each ``--reps`` times after a warm-up, median reported:

* ``serial``: every chunk's copy in, kernel and copy out on one stream, in order;
* ``pipelined-S`` for S = 2, 3, 4 streams: chunk i on stream i mod S, so one chunk's copies overlap
  other chunks' kernels (the device has separate copy engines for each direction).

Timing: device events: one recorded on the default stream before, which every stream waits for,
and one after, recorded on the default stream once it has waited for every stream.  The output of
every run is checked against NumPy (the same multiply-adds in float32, each rounded twice where the
device fuses it once: a relative tolerance of ``iterations`` units in the last place).  Beside it:
the host-to-device bandwidth of a whole-array copy from pinned and from pageable memory (median of ``--reps``).

Goal (issue 15): pipelined wall time at most 0.6x serial.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import _common
import numpy as np

import gpukern as gk


@gk.kernel
def transform(x: gk.Array[gk.float32], y: gk.Array[gk.float32], iterations: gk.int32):
    i = gk.global_id(0)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(iterations):
            v = v * gk.float32(0.999) + gk.float32(0.001)
        y[i] = v


def reference(x: np.ndarray, iterations: int) -> np.ndarray:
    v = x.copy()
    a, b = np.float32(0.999), np.float32(0.001)
    for _ in range(iterations):
        v = v * a + b
    return v


def run(
    host_in: np.ndarray,
    host_out: np.ndarray,
    chunks: int,
    streams: list[gk.Stream],
    iterations: int,
    dev_in: list[Any],
    dev_out: list[Any],
    block: int = 256,
) -> float:
    """One pass of the pipeline; returns its device time in milliseconds."""
    default = gk.Stream.default()
    start = default.record()
    for s in streams:
        s.wait_event(start)
    n = host_in.shape[0] // chunks
    for c in range(chunks):
        s = streams[c % len(streams)]
        part = slice(c * n, (c + 1) * n)
        dev_in[c].set_async(host_in[part], s)
        transform[(n + block - 1) // block, block, s](dev_in[c], dev_out[c], iterations)
        dev_out[c].get_async(host_out[part], s)
    for s in streams:
        default.wait_event(s.record())
    end = default.record()
    end.synchronize()
    return start.elapsed_time(end)


def bandwidth(backend: Any, nbytes: int, reps: int) -> dict[str, float]:
    """GB/s of one host-to-device copy of ``nbytes`` from pinned and from pageable memory."""
    n = nbytes // 4
    rng = np.random.default_rng(1)
    pageable = rng.uniform(1, 2, n).astype(np.float32)
    pinned = gk.pinned_empty(n, np.float32)
    pinned[...] = pageable
    d = gk.empty(n, np.float32)
    out: dict[str, float] = {}
    s = gk.Stream()
    for name, host in (("pinned", pinned), ("pageable", pageable)):
        times = []
        for _ in range(reps + 1):
            e0 = s.record()
            d.set(host, s)
            e1 = s.record()
            times.append(e0.elapsed_time(e1))
        out[f"h2d_{name}_GBps"] = nbytes / (statistics.median(times[1:]) * 1e-3) / 1e9
        assert np.array_equal(d.get(), pageable), f"{name} copy wrong"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _common.add_common_args(p)
    p.add_argument("--elements", type=int, default=1 << 26)
    p.add_argument("--chunks", type=int, default=16)
    p.add_argument("--iterations", type=int, default=600)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args(argv)
    backend = _common.select_backend(args.backend)
    n, chunks = args.elements, args.chunks
    if n % chunks:
        raise SystemExit("--elements must be a multiple of --chunks")
    rng = np.random.default_rng(0)
    host_in = gk.pinned_empty(n, np.float32)
    host_in[...] = rng.uniform(0.5, 2.0, n).astype(np.float32)
    host_out = gk.pinned_empty(n, np.float32)
    expect = reference(np.asarray(host_in), args.iterations)
    dev_in = [gk.empty(n // chunks, np.float32) for _ in range(chunks)]
    dev_out = [gk.empty(n // chunks, np.float32) for _ in range(chunks)]
    results: dict[str, Any] = {"ms": {}, "checked": {}}
    for name, count in (("serial", 1), ("pipelined-2", 2), ("pipelined-3", 3), ("pipelined-4", 4)):
        streams = [gk.Stream() for _ in range(count)]
        times = []
        for _ in range(args.reps + 1):  # the first is the warm-up
            host_out[...] = np.nan
            times.append(run(host_in, host_out, chunks, streams, args.iterations, dev_in, dev_out))
            np.testing.assert_allclose(host_out, expect, rtol=args.iterations * 2.0**-23, err_msg=name)
        results["ms"][name] = statistics.median(times[1:])
        results["checked"][name] = True
    serial = results["ms"]["serial"]
    results["ratio_to_serial"] = {k: v / serial for k, v in results["ms"].items()}
    results.update(bandwidth(backend, n * 4, args.reps))
    rows = [(k, f"{v:.3f}", f"{results['ratio_to_serial'][k]:.2f}") for k, v in results["ms"].items()]
    print(f"device: {backend.device_name()}  {n} float32 in {chunks} chunks, {args.iterations} multiply-adds each")
    print(_common.table(("schedule", "median ms", "x serial"), rows))
    print(f"H2D pinned {results['h2d_pinned_GBps']:.1f} GB/s, pageable {results['h2d_pageable_GBps']:.1f} GB/s")
    plot = {
        "kind": "bars",
        "title": "chunked copy/compute pipeline",
        "xlabel": "",
        "ylabel": "ms (median, device events)",
        "series": {"median": {"x": list(results["ms"]), "y": list(results["ms"].values())}},
    }
    _common.save("overlap", args.out, backend, vars(args), results, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
