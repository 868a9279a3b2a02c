"""What a launch on CuPy/PyTorch arrays costs, piece by piece: the numbers the interop design rests on.

    python benchmarks/interop_probe.py [--launches 2000] [--rounds 15] [--out DIR]

Measured per call (median over rounds of a timed loop, in microseconds), on the GPU machine:

* launches of the same tiny 4-argument kernel: CuPy ``RawKernel`` on CuPy arrays (the goal's
  reference), gpukern on its own arrays, gpukern on CuPy arrays and on PyTorch tensors (today's
  checked path), and ``cuLaunchKernel`` called through ctypes on a module loaded through ctypes
  (packing the arguments into one buffer as PyCUDA does), on CuPy's current stream;
* what a fast path would read per launch: ``__cuda_array_interface__`` of a CuPy array and of a
  tensor, ``a.data.ptr``, ``t.data_ptr()``, the libraries' current stream handles.

Every launch method's output is checked (``c[0] == a[0] + b[0] + n``) after its rounds.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
import numpy as np

import gpukern as gk

SRC = r"""
extern "C" __global__ void tiny_ref(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int n)
{
    if (blockIdx.x * blockDim.x + threadIdx.x == 0) c[0] = a[0] + b[0] + (float)n;
}
"""


@gk.kernel
def tiny(a: gk.Array[gk.float32], b: gk.Array[gk.float32], c: gk.Array[gk.float32], n: gk.int32):
    if gk.global_id(0) == 0:
        c[0] = a[0] + b[0] + gk.float32(n)


def per_call(fn: Callable[[], Any], launches: int, rounds: int, sync: Callable[[], Any]) -> dict[str, float]:
    for _ in range(50):
        fn()
    sync()
    times = []
    gc.disable()
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(launches):
                fn()
            sync()
            times.append((time.perf_counter() - t0) / launches * 1e6)
    finally:
        gc.enable()
    return {"median_us": statistics.median(times), "min_us": min(times)}


def ctypes_launcher(backend: Any, cubin: bytes, stream_of: Callable[[], int]) -> tuple[Callable[..., None], Any]:
    """The hand-written kernel loaded and launched through gpukern's driver layer (``cuda_driver``:
    cuModuleLoadData, then one cuLaunchKernel on a packed argument buffer per call)."""
    fn = backend.driver.load(cubin).function("tiny_ref")
    fmt = struct.Struct("=QQQi")
    launch = backend.driver.launcher(fn, (1, 1, 1), (32, 1, 1), 0, fmt)

    def run(a: int, b: int, c: int, n: int) -> None:
        launch((a, b, c, n), stream_of())

    return run, fn


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--launches", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--out")
    args = p.parse_args(argv)
    gk.set_backend("cuda")
    backend = gk.get_backend()
    import cupy as cp
    import torch

    from gpukern.backends.cuda_compile import nvcc_compile

    rng = np.random.default_rng(5)
    host = [rng.uniform(1, 2, 4).astype(np.float32) for _ in range(2)]
    n = 7
    expect = float(host[0][0] + host[1][0] + n)
    res: dict[str, Any] = {"launch": {}, "read": {}}
    sync = cp.cuda.Device().synchronize

    def check(name: str, c: Any) -> None:
        got = float(np.asarray(c.get() if hasattr(c, "get") else c.cpu().numpy())[0])
        ok = abs(got - expect) <= 1e-6 * abs(expect)
        res["launch"][name]["ok"] = ok
        if not ok:
            raise SystemExit(f"{name}: wrong result {got} != {expect}")

    ca, cb = cp.asarray(host[0]), cp.asarray(host[1])
    cc = cp.zeros(4, cp.float32)
    raw = cp.RawKernel(SRC, "tiny_ref")
    res["launch"]["cupy RawKernel (cupy arrays)"] = per_call(
        lambda: raw((1,), (32,), (ca, cb, cc, np.int32(n))), args.launches, args.rounds, sync
    )
    check("cupy RawKernel (cupy arrays)", cc)

    ga, gb = gk.to_device(host[0]), gk.to_device(host[1])
    gz = gk.zeros(4, np.float32)
    launch = tiny[1, 32]
    res["launch"]["gpukern (gpukern arrays)"] = per_call(
        lambda: launch(ga, gb, gz, n), args.launches, args.rounds, sync
    )
    check("gpukern (gpukern arrays)", gz)

    cc2 = cp.zeros(4, cp.float32)
    res["launch"]["gpukern (cupy arrays)"] = per_call(lambda: launch(ca, cb, cc2, n), args.launches, args.rounds, sync)
    check("gpukern (cupy arrays)", cc2)

    ta, tb = torch.from_numpy(host[0]).cuda(), torch.from_numpy(host[1]).cuda()
    tc = torch.zeros(4, dtype=torch.float32, device="cuda")
    res["launch"]["gpukern (torch tensors)"] = per_call(lambda: launch(ta, tb, tc, n), args.launches, args.rounds, sync)
    check("gpukern (torch tensors)", tc)

    cubin = nvcc_compile(SRC, backend.arch)
    run, _mod = ctypes_launcher(backend, cubin, lambda: cp.cuda.get_current_stream().ptr)
    cc3 = cp.zeros(4, cp.float32)
    pa, pb, pc = ca.data.ptr, cb.data.ptr, cc3.data.ptr
    res["launch"]["ctypes cuLaunchKernel (cupy stream)"] = per_call(
        lambda: run(pa, pb, pc, n), args.launches, args.rounds, sync
    )
    check("ctypes cuLaunchKernel (cupy stream)", cc3)
    cc4 = cp.zeros(4, cp.float32)
    run0, _mod0 = ctypes_launcher(backend, cubin, lambda: 0)
    pc4 = cc4.data.ptr
    res["launch"]["ctypes cuLaunchKernel (stream 0)"] = per_call(
        lambda: run0(pa, pb, pc4, n), args.launches, args.rounds, sync
    )
    check("ctypes cuLaunchKernel (stream 0)", cc4)

    reads = {
        "cupy __cuda_array_interface__": lambda: ca.__cuda_array_interface__,
        "cupy a.data.ptr": lambda: ca.data.ptr,
        "cupy a.shape, a.dtype": lambda: (ca.shape, ca.dtype),
        "cupy a.flags.c_contiguous": lambda: ca.flags.c_contiguous,
        "cupy get_current_stream().ptr": lambda: cp.cuda.get_current_stream().ptr,
        "torch __cuda_array_interface__": lambda: ta.__cuda_array_interface__,
        "torch t.data_ptr()": lambda: ta.data_ptr(),
        "torch t.shape, t.dtype": lambda: (ta.shape, ta.dtype),
        "torch t.is_contiguous()": lambda: ta.is_contiguous(),
        "torch current_stream().cuda_stream": lambda: torch.cuda.current_stream().cuda_stream,
        "torch _cuda_getCurrentRawStream(0)": lambda: torch._C._cuda_getCurrentRawStream(0),
        "type(a) is cls (baseline)": lambda: type(ca) is cp.ndarray,
    }
    for name, fn in reads.items():
        res["read"][name] = per_call(fn, args.launches, args.rounds, lambda: None)

    for group, rows in res.items():
        print(f"-- {group}")
        for name, r in rows.items():
            print(f"  {name:42s} {r['median_us']:8.3f} us  (min {r['min_us']:.3f})")
    if args.out:
        plot = {
            "kind": "bars",
            "title": "per-call cost",
            "xlabel": "",
            "ylabel": "microseconds",
            "series": {"median": {"x": list(res["launch"]), "y": [r["median_us"] for r in res["launch"].values()]}},
        }
        _common.save("interop_probe", Path(args.out), backend, vars(args), res, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
