"""Per-launch host overhead: a prepared gpukern launch against hand-written launches of the same tiny kernel.

    python benchmarks/launch.py [--backend cuda|opencl] [--rounds 30] [--launches 2000] [--out DIR]

The kernel takes 4 arguments (3 float32 device arrays, one int32 scalar) and does almost nothing, but
something checkable: thread 0 writes ``c[0] = a[0] + b[0] + n``.  Launched as 1 block of 32 threads.

Methods, all on the same device, context and queue (stream), each with its own arrays:

* CUDA: ``launch = tiny[1, 32]`` made once, then ``launch(da, db, dc, n)`` on ``gk.to_device`` arrays,
  on CuPy arrays and on PyTorch tensors (where those import); the same kernel in hand-written CUDA
  C launched by ``cupy.RawKernel`` on CuPy arrays, and (its cubin from nvcc) by gpukern's driver
  layer, ``prepared_async_call`` with the argument layout fixed once by ``prepare("PPPi")``.  The
  driver layer's call is CuPy's binding of ``cuLaunchKernel`` where CuPy is installed, else ctypes'
  (the report says which).  CuPy's RawKernel takes no tensor (CuPy 14: "Unsupported type"): on
  PyTorch tensors it is given their ``data_ptr()`` each call, the only way it launches on them (it
  tests nothing and launches on CuPy's stream, not PyTorch's).
* OpenCL: the gpukern launch; the hand-written OpenCL C kernel through pyopencl's ``Kernel.__call__``
  and through ``set_args`` + ``enqueue_nd_range_kernel`` (pyopencl's lowest-level spelling of a launch).

How: each method is warmed up (compilation, first launches), then ``--rounds`` rounds; in each round
every method, in an order rotated round by round so drift touches all alike, is timed with
``time.perf_counter`` around a plain Python loop of ``--launches`` launches followed by one device
synchronize; per-launch time = elapsed / launches.  The garbage collector is off while timing.
Reported: the median over rounds (and the min), and the share of a round spent in the final
synchronize (near 0: the host issued launches slower than the device ran them, so the figure is host
overhead; large: the device was the bottleneck).  After the rounds, each method's ``c`` is copied back
and compared with ``a[0] + b[0] + n`` from random non-zero inputs; a wrong result fails the run.

Goals (issues "Fast kernels" and 15): each gpukern launch / CuPy's RawKernel on the same arrays
<= 1.1: gpukern's own arrays and CuPy arrays against RawKernel on CuPy arrays, PyTorch tensors
against RawKernel on the same tensors (their ``data_ptr()``).  Beside them, the tensors' launch is
also set against RawKernel on CuPy arrays (a launch on a tensor reads more than one on a CuPy
array: five PyTorch accessors a tensor).  The synchronize is the context's: it waits for every
stream, CuPy's and PyTorch's too.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _common
import numpy as np

import gpukern as gk

GOAL_RATIO = 1.1
BLOCK = 32
GK_OWN = "gpukern launch(da, db, dc, n)"
GK_CUPY = "gpukern launch on CuPy arrays"
GK_TORCH = "gpukern launch on PyTorch tensors"
RAW = "cupy RawKernel(...) on CuPy arrays"
PREPARED = "driver prepared_async_call"
RAW_TORCH = "cupy RawKernel(...) on tensors' data_ptr()"

CUDA_SRC = r"""
extern "C" __global__ void tiny_ref(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int n)
{
    if (blockIdx.x * blockDim.x + threadIdx.x == 0) {
        c[0] = a[0] + b[0] + (float)n;
    }
}
"""

OPENCL_SRC = r"""
__kernel void tiny_ref(__global const float* restrict a, __global const float* restrict b,
                       __global float* restrict c, int n)
{
    if (get_global_id(0) == 0) {
        c[0] = a[0] + b[0] + (float)n;
    }
}
"""


@gk.kernel
def tiny(a: gk.Array[gk.float32], b: gk.Array[gk.float32], c: gk.Array[gk.float32], n: gk.int32):
    """Thread 0 writes c[0] = a[0] + b[0] + n; the rest of the launch is pure overhead."""
    if gk.global_id(0) == 0:
        c[0] = a[0] + b[0] + gk.float32(n)


@dataclass
class Method:
    """One way to launch the kernel: a loop of launches as a user would write it, and its output."""

    name: str
    loop: Callable[[int], None]
    result: Callable[[], np.ndarray]
    keep: Any = None  # objects that must outlive the loop (modules, buffers)


def gpukern_method(a: np.ndarray, b: np.ndarray, n: int) -> Method:
    da, db, dc = gk.to_device(a), gk.to_device(b), gk.zeros(a.shape, np.float32)
    launch = tiny[1, BLOCK]

    def loop(count: int) -> None:
        for _ in range(count):
            launch(da, db, dc, n)

    return Method(GK_OWN, loop, dc.get)


def cuda_methods(backend: Any, a: np.ndarray, b: np.ndarray, n: int) -> list[Method]:
    """The hand-written kernel through gpukern's driver layer (ctypes, prepared), CuPy's RawKernel
    on CuPy arrays, and gpukern's launch on CuPy arrays and on PyTorch tensors, where they import."""
    from gpukern.backends.cuda_compile import nvcc_compile

    fn = backend.driver.load(nvcc_compile(CUDA_SRC, backend.arch)).function("tiny_ref")
    fn.prepare("PPPi")
    n32 = np.int32(n)
    pa, pb, pc = gk.to_device(a), gk.to_device(b), gk.zeros(a.shape, np.float32)

    def prepared(count: int) -> None:
        for _ in range(count):
            fn.prepared_async_call((1, 1), (BLOCK, 1, 1), None, pa.handle, pb.handle, pc.handle, n32)

    methods = [Method(PREPARED, prepared, pc.get, fn)]
    launch = tiny[1, BLOCK]
    try:
        import cupy

        x, y, z = cupy.asarray(a), cupy.asarray(b), cupy.zeros(a.shape, cupy.float32)
        raw = cupy.RawKernel(CUDA_SRC, "tiny_ref")
        raw((1,), (BLOCK,), (x, y, z, n32))  # compiles now, so a failure skips CuPy here
    except Exception as e:  # CuPy absent, or present but unusable with this toolkit/driver
        print(f"note: CuPy skipped: {type(e).__name__}: {e}")
    else:

        def cupy_loop(count: int) -> None:
            for _ in range(count):
                raw((1,), (BLOCK,), (x, y, z, n32))

        methods.append(Method(RAW, cupy_loop, lambda: cupy.asnumpy(z), (x, y, z)))
        gx, gy, gz = cupy.asarray(a), cupy.asarray(b), cupy.zeros(a.shape, cupy.float32)

        def gk_cupy(count: int) -> None:
            for _ in range(count):
                launch(gx, gy, gz, n)

        methods.append(Method(GK_CUPY, gk_cupy, lambda: cupy.asnumpy(gz), (gx, gy, gz)))
    try:
        import torch

        tx, ty, tz = (torch.as_tensor(v, device="cuda") for v in (a, b, np.zeros_like(a)))
    except Exception as e:
        print(f"note: PyTorch skipped: {type(e).__name__}: {e}")
    else:

        def gk_torch(count: int) -> None:
            for _ in range(count):
                launch(tx, ty, tz, n)

        methods.append(Method(GK_TORCH, gk_torch, lambda: tz.cpu().numpy(), (tx, ty, tz)))
    if any(m.name == GK_TORCH for m in methods) and any(m.name == RAW for m in methods):
        # RawKernel takes no tensor (CuPy 14: "Unsupported type"): on tensors it is given their
        # pointers, read each call, as ints (no test of dtype, device or contiguity; CuPy's stream)
        rx, ry, rz = (torch.as_tensor(v, device="cuda") for v in (a, b, np.zeros_like(a)))

        def raw_torch(count: int) -> None:
            for _ in range(count):
                raw((1,), (BLOCK,), (rx.data_ptr(), ry.data_ptr(), rz.data_ptr(), n32))

        methods.append(Method(RAW_TORCH, raw_torch, lambda: rz.cpu().numpy(), (rx, ry, rz)))
    return methods


def opencl_methods(backend: Any, a: np.ndarray, b: np.ndarray, n: int) -> list[Method]:
    """pyopencl's Kernel.__call__ and set_args + enqueue_nd_range_kernel, on gpukern's own queue."""
    cl = backend.cl
    ctx, queue = backend.ctx, backend.queue
    prg = cl.Program(ctx, OPENCL_SRC).build()
    n32 = np.int32(n)
    mf = cl.mem_flags
    gsize, lsize = (BLOCK,), (BLOCK,)

    def buffers() -> tuple[Any, Any, Any]:
        return tuple(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=h) for h in (a, b, np.zeros_like(a)))

    def getter(buf: Any) -> Callable[[], np.ndarray]:
        def get() -> np.ndarray:
            out = np.empty_like(a)
            cl.enqueue_copy(queue, out, buf)
            return out

        return get

    ka, kb, kc = buffers()
    knl_call = prg.tiny_ref  # each attribute access builds a new cl.Kernel: once, as users are told to

    def called(count: int) -> None:
        for _ in range(count):
            knl_call(queue, gsize, lsize, ka, kb, kc, n32)

    ea, eb, ec = buffers()
    knl_enq = cl.Kernel(prg, "tiny_ref")  # its own object: set_args changes the kernel's state

    def enqueued(count: int) -> None:
        for _ in range(count):
            knl_enq.set_args(ea, eb, ec, n32)
            cl.enqueue_nd_range_kernel(queue, knl_enq, gsize, lsize)

    return [
        Method("pyopencl set_args + enqueue_nd_range_kernel", enqueued, getter(ec), (ea, eb, ec)),
        Method("pyopencl knl(queue, gsize, lsize, ...)", called, getter(kc), (ka, kb, kc)),
    ]


def measure(methods: list[Method], sync: Callable[[], None], rounds: int, launches: int, warmup: int) -> dict:
    """Per-launch seconds of each method, per round, and the share of each round spent synchronizing."""
    for m in methods:
        m.loop(warmup)
        sync()
    per_launch: dict[str, list[float]] = {m.name: [] for m in methods}
    sync_share: dict[str, list[float]] = {m.name: [] for m in methods}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            k = r % len(methods)
            for m in methods[k:] + methods[:k]:
                sync()
                t0 = time.perf_counter()
                m.loop(launches)
                t1 = time.perf_counter()
                sync()
                t2 = time.perf_counter()
                per_launch[m.name].append((t2 - t0) / launches)
                sync_share[m.name].append((t2 - t1) / (t2 - t0))
    finally:
        if gc_was_enabled:
            gc.enable()
    return {"per_launch_s": per_launch, "sync_share": sync_share}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _common.add_common_args(p)
    p.add_argument("--rounds", type=int, default=30, help="timed rounds per method; the median is reported")
    p.add_argument("--launches", type=int, default=2000, help="launches per round")
    p.add_argument("--warmup", type=int, default=200, help="untimed launches per method first")
    p.add_argument("--elements", type=int, default=1024, help="length of a, b and c")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if min(args.rounds, args.launches, args.elements) < 1 or args.warmup < 0:
        p.error("--rounds, --launches and --elements must be positive, --warmup not negative")
    backend = _common.select_backend(args.backend)

    rng = np.random.default_rng(args.seed)

    def nonzero() -> np.ndarray:  # |x| in [0.5, 1.5), random signs
        return (rng.uniform(0.5, 1.5, args.elements) * rng.choice([-1.0, 1.0], args.elements)).astype(np.float32)

    a, b = nonzero(), nonzero()
    n = int(rng.integers(1, 100))
    expected = np.float32(np.float32(a[0] + b[0]) + np.float32(n))

    methods = [gpukern_method(a, b, n)]
    if backend.name == "cuda":
        methods += cuda_methods(backend, a, b, n)
        baseline = RAW if any(m.name == RAW for m in methods) else PREPARED
    else:
        methods += opencl_methods(backend, a, b, n)
        baseline = "pyopencl set_args + enqueue_nd_range_kernel"
    print(f"device: {backend.device_name()}  backend: {backend.name}")
    if backend.name == "cuda":
        from gpukern.backends.cuda_driver import native_launch

        print(f"driver call: {'CuPy launchKernel' if native_launch() else 'ctypes cuLaunchKernelEx'}")
    print(f"{args.rounds} rounds x {args.launches} launches per method, after {args.warmup} warm-up launches")

    raw = measure(methods, backend.synchronize, args.rounds, args.launches, args.warmup)

    checks, wrong = {}, []
    for m in methods:
        c = m.result()
        ok = bool(np.isclose(c[0], expected, rtol=1e-6, atol=0) and not c[1:].any())
        checks[m.name] = {"c0": float(c[0]), "expected": float(expected), "ok": ok}
        if not ok:
            wrong.append(m.name)

    gk_name = methods[0].name
    stats: dict[str, dict[str, Any]] = {}
    for m in methods:
        us = [round(t * 1e6, 4) for t in raw["per_launch_s"][m.name]]
        stats[m.name] = {
            "median_us": statistics.median(us),
            "min_us": min(us),
            "max_us": max(us),
            "sync_share_median": round(statistics.median(raw["sync_share"][m.name]), 4),
            "rounds_us": us,
            "check": checks[m.name],
        }
    g = stats[gk_name]["median_us"]
    ratios = {f"gpukern / {name}": g / s["median_us"] for name, s in stats.items() if name != gk_name}

    rows = [
        [
            name,
            f"{s['median_us']:.2f}",
            f"{s['min_us']:.2f}",
            f"{100 * s['sync_share_median']:.1f}",
            "-" if name == gk_name else f"{g / s['median_us']:.2f}",
            "OK" if s["check"]["ok"] else "WRONG",
        ]
        for name, s in stats.items()
    ]
    print(_common.table(["method", "median us", "min us", "sync %", "gpukern/this", "output"], rows))
    if wrong:
        print(f"error: wrong output from {', '.join(wrong)}: {checks}", file=sys.stderr)
        return 1
    goals = {}
    if backend.name == "cuda":  # each gpukern launch against CuPy's RawKernel on the same arrays
        pairs = [(GK_OWN, baseline, True), (GK_CUPY, baseline, True), (GK_TORCH, RAW_TORCH, True)]
        pairs.append((GK_TORCH, baseline, False))  # beside the goal: tensors against CuPy arrays
        for name, ref, goal in pairs:
            if name in stats and ref in stats:
                r = stats[name]["median_us"] / stats[ref]["median_us"]
                if not goal:
                    goals[f"{name} / {ref}"] = {"value": r, "max": None, "met": None}
                    print(f"{name} / {ref}: {r:.2f} (for comparison: RawKernel on other arrays)")
                    continue
                goals[f"{name} / {ref}"] = {"value": r, "max": GOAL_RATIO, "met": r <= GOAL_RATIO}
                print(f"{name} / {ref}: {r:.2f} (goal <= {GOAL_RATIO}: {'met' if r <= GOAL_RATIO else 'NOT met'})")
    else:
        r = ratios[f"gpukern / {baseline}"]
        goals[f"gpukern / {baseline}"] = {"value": r, "max": GOAL_RATIO, "met": None}
        print(f"gpukern / {baseline}: {r:.2f} (the goal, <= {GOAL_RATIO}, is set against CuPy's RawKernel on CUDA)")

    results = {
        "kernel": "c[0] = a[0] + b[0] + n by thread 0; grid 1, block 32; 3 float32 arrays + 1 int32",
        "n": n,
        "methods": stats,
        "baseline": baseline,
        "ratios_of_medians": ratios,
        "goals": goals,
    }
    names = list(stats)
    plot = {
        "kind": "bars",
        "title": f"Per-launch host time, tiny 4-argument kernel ({args.rounds} rounds x {args.launches} launches)",
        "xlabel": "",
        "ylabel": "µs per launch (perf_counter around the launches + 1 synchronize)",
        "series": {
            "median": {"x": names, "y": [stats[k]["median_us"] for k in names]},
            "min": {"x": names, "y": [stats[k]["min_us"] for k in names]},
        },
    }
    _common.save("launch", args.out, backend, vars(args), results, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
