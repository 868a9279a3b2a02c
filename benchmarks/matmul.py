"""Matrix multiplication: gpukern's kernels against the same kernel written by hand, and against cuBLAS.

    python benchmarks/matmul.py --backend cuda     # sizes 1024 2048 4096 8192, tiles 16 32, fast SGEMM, cuBLAS
    python benchmarks/matmul.py --backend opencl   # sizes 256 512 1024, tiles 8 16 (PoCL on a CI machine)
    python benchmarks/matmul.py --backend opencl --sizes 256 --tiles 8 --extra-reference variant=/tmp/variant.cl

What it measures, for square n x n x n products of random normal float32 matrices (1-D row-major arrays):

* CUDA (needs CuPy and nvcc): gpukern's ``matmul_tiled`` (examples/matmul_tiled.py) at each tile;
  ``benchmarks/reference/matmul_tiled.cu``, the same algorithm written by hand, compiled by nvcc in this run
  with gpukern's own nvcc options plus ``-DTILE=T`` and launched by one cuLaunchKernel on a packed
  argument buffer (as gpukern's are);
  the register-blocked SGEMM of examples/matmul_fast.py (``sgemm(..., config=None)``, the autotuner's choice,
  and every entry of its ``CONFIGS``; skipped with a note when the file or the function is missing); and cuBLAS
  SGEMM through ``cupy.matmul`` with TF32 off (``CUPY_TF32=0``: full FP32).  All read the same CuPy arrays and
  each writes its own output, on one context and the default stream.
* OpenCL: gpukern's ``matmul_tiled`` against ``benchmarks/reference/matmul_tiled.cl`` built by pyopencl in this
  run with gpukern's build options plus ``-DTILE=T``, enqueued on gpukern's own queue.

How: each contender runs ``--warmup`` times untimed (compilation, autotuning, caches); then come ``--repeat``
repetitions, in each of which every contender runs once, in an order rotated each repetition so drift and
noise hit all alike.  Each run is timed by device events recorded just before and after its launch (CUDA
events; OpenCL profiling markers, gpukern's ``timer``).  On CUDA a short busy-wait kernel runs before each
start event, so the host's launch overhead is spent while the device is busy and the events time the kernel,
not Python.  Reported: the median, GFLOP/s = 2 n^3 / median, and every repetition's time.  Outputs are
filled with NaN before the warm-up and checked after the timed runs: max |c - ref| / max |ref| must be below
``--tolerance`` against cuBLAS (CUDA; and every output, cuBLAS's too, against a float64 DGEMM on the device)
or against NumPy's float64 matmul (OpenCL); otherwise the run is marked FAILED and the script exits 1.

Ratios are speeds relative to the hand-written kernel (or cuBLAS): the ratio of median times, and the
median of per-repetition ratios ("paired": both ran in the same repetition).  Goals of the "Fast kernels"
issue: gpukern tiled >= 0.97 x hand-written CUDA at tiles 16 and 32, n = 2048 and 4096; gpukern tiled >= 0.95 x
hand-written OpenCL.  Of the tensor-core issue: the autotuned fast SGEMM >= 0.85 x cuBLAS at n = 1024 and >= 0.93 x
from 2048 to 8192 (it was 0.80 x at 4096 before).

Writes ``matmul.json`` and, when matplotlib imports, ``matmul.png`` to ``--out`` (``benchmarks/_common.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import numpy as np

EXAMPLES = _common.ROOT / "examples"
REFERENCE = _common.ROOT / "benchmarks" / "reference"
SEED = 20261122
GOAL_TILED_CUDA = 0.97
GOAL_TILED_CUDA_SIZES = (2048, 4096)
GOAL_FAST = {1024: 0.85, 2048: 0.93, 4096: 0.93, 8192: 0.93}  # n -> the autotuned fast SGEMM's goal
GOAL_TILED_OPENCL = 0.95
SPIN_NS = 200_000  # busy-wait before each CUDA start event: far longer than a launch's host overhead

SPIN_CU = r"""
extern "C" __global__ void busy_wait(long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}
"""


@dataclass
class Contender:
    """One series at one size: how to launch it, where it writes, and what was measured."""

    series: str
    launch: Callable[[], Any]
    out: Any
    times: list[float] = field(default_factory=list)
    errors: dict[str, float] = field(default_factory=dict)
    failure: str | None = None


@dataclass
class Clock:
    """Device events of the backend, and what to enqueue before each start event."""

    timer: Callable[[], Any]
    elapsed: Callable[[Any, Any], float]
    synchronize: Callable[[], None]
    before_sample: Callable[[], Any] = lambda: None


def load_module(path: Path, name: str) -> Any:
    """Import an example by path (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def random_matrix(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random normal float32, without exact zeros (a kernel that skips work must not pass by luck)."""
    x = rng.standard_normal(n * n, dtype=np.float32)
    x[x == 0] = 1.0
    return x


def grid_of(n: int, tile: int) -> tuple[tuple[int, int], tuple[int, int]]:
    g = (n + tile - 1) // tile
    return (g, g), (tile, tile)


def time_all(contenders: list[Contender], clock: Clock, warmup: int, repeat: int) -> None:
    """Warm up each contender, then time ``repeat`` interleaved repetitions with device events.

    A contender whose launch raises is marked failed and left out; the others go on.
    """
    live = []
    for c in contenders:
        try:
            for _ in range(warmup):
                c.launch()
            clock.synchronize()
            live.append(c)
        except Exception as e:  # a broken contender must not stop the others' measurement
            c.failure = f"launch failed: {type(e).__name__}: {e}"
            traceback.print_exc()
            print(f"  *** FAILED {c.series}: {c.failure}", file=sys.stderr)
            clock.synchronize()
    for r in range(repeat):
        order = live[r % len(live) :] + live[: r % len(live)] if live else []
        events = []
        for c in order:
            clock.before_sample()
            start = clock.timer()
            c.launch()
            events.append((c, start, clock.timer()))
        for c, start, end in events:
            c.times.append(clock.elapsed(start, end))


def check(c: Contender, tolerance: float) -> None:
    """Mark ``c`` failed when any of its errors is not below the tolerance (NaN included)."""
    bad = {k: v for k, v in c.errors.items() if not v < tolerance}
    if bad and c.failure is None:
        c.failure = "WRONG RESULT: " + ", ".join(f"{k} {v:.3e}" for k, v in bad.items()) + f" (>= {tolerance:g})"


# ---------------------------------------------------------------------------------------------- CUDA
def cuda_setup() -> tuple[Any, Any, Any]:
    """CuPy, gpukern and gpukern's CUDA backend on one context, or exit 2 saying what is missing here."""
    import gpukern as gk

    problems = []
    if "cupy" in sys.modules and os.environ.get("CUPY_TF32", "0") != "0":
        problems.append("CuPy was imported with CUPY_TF32 set: cuBLAS may use TF32; run in a fresh process")
    os.environ["CUPY_TF32"] = "0"  # read when CuPy is imported; cuBLAS in full FP32, TF32 is another computation
    cp = None
    try:
        import cupy as cp

        cp.cuda.Device(int(os.environ.get("GPUKERN_DEVICE", "0"))).use()
        cp.zeros(1, cp.float32)  # the runtime's primary context is now current: gpukern picks it up
        if cp.cuda.get_current_stream().ptr != 0:
            problems.append("CuPy's current stream is not the legacy default stream (CUPY_CUDA_PER_THREAD_...?)")
    except Exception as e:
        problems.append(f"CuPy cannot run ({type(e).__name__}: {e})")
    try:
        gk.set_backend("cuda")
        backend = gk.get_backend()
    except gk.GpukernError as e:
        backend = None
        problems.append(f"gpukern's CUDA backend is unavailable: {e}")
    if problems:
        raise SystemExit(
            "error: --backend cuda needs an NVIDIA GPU with PyCUDA, CuPy and nvcc:\n  "
            + "\n  ".join(problems)
            + "\n(on a machine without one, run --backend opencl)"
        )
    return cp, gk, backend


def load_fast() -> tuple[Callable[..., Any] | None, list[str], str]:
    """``sgemm`` and the names of ``CONFIGS`` of examples/matmul_fast.py, or None and why not."""
    path = EXAMPLES / "matmul_fast.py"
    rel = f"examples/{path.name}"
    if not path.exists():
        return None, [], f"{rel} does not exist"
    try:
        module = load_module(path, "gpukern_example_matmul_fast")
    except Exception as e:
        return None, [], f"importing {rel} failed: {type(e).__name__}: {e}"
    sgemm = getattr(module, "sgemm", None)
    if not callable(sgemm):
        return None, [], f"{rel} has no function sgemm"
    configs = getattr(module, "CONFIGS", None)
    return sgemm, list(configs) if isinstance(configs, dict) else [], ""


def run_cuda(args: argparse.Namespace, params: dict[str, Any]) -> tuple[Any, dict[int, list[Contender]]]:
    cp, gk, backend = cuda_setup()
    from gpukern.backends.cuda_compile import nvcc_compile

    options = tuple(getattr(backend, "options", ()))

    def load(src: str, name: str, fmt: str, tile: int | None = None) -> Any:
        opts = options if tile is None else (*options, f"-DTILE={tile}")
        fn = backend.driver.load(nvcc_compile(src, backend.arch, opts)).function(name)
        fn.prepare(fmt)
        return fn

    tiled = load_module(EXAMPLES / "matmul_tiled.py", "gpukern_example_matmul_tiled").matmul_tiled
    sources = [("hand-written", REFERENCE / "matmul_tiled.cu"), *args.extra_reference]
    hand = {
        (name, t): load(Path(p).read_text(), "matmul_tiled", "PPPiii", t) for name, p in sources for t in args.tiles
    }
    spin = load(SPIN_CU, "busy_wait", "q")

    sgemm, config_names, why = load_fast()
    fast: list[tuple[str, str | None]] = []
    if sgemm is None:
        print(f"note: no gpukern fast SGEMM series: {why}")
        params["notes"].append(f"gpukern fast SGEMM skipped: {why}")
    else:
        fast.append(("gpukern fast", None))
        wanted = config_names if args.fast_configs == ["all"] else [c for c in args.fast_configs if c != "none"]
        for name in wanted:
            if name in config_names:
                fast.append((f"gpukern fast [{name}]", name))
            else:
                print(f"note: examples/matmul_fast.py has no config {name!r}; it has {config_names}")
    versions: dict[str, Any] = {}
    try:
        versions["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        versions["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
        versions["cublas"] = cp.cuda.cublas.getVersion(cp.cuda.device.get_cublas_handle())
    except Exception as e:
        versions["error"] = f"{type(e).__name__}: {e}"
    params.update(
        {
            "nvcc_options": [*options, "-DTILE=<tile>"],
            "cuda_versions": versions,
            "cupy_tf32": os.environ.get("CUPY_TF32"),
            "cublas": "cupy.matmul of 2-D float32 arrays with CUPY_TF32=0: FP32 SGEMM, no TF32",
            "fast_series": {name: config for name, config in fast},
            "timing": "CUDA event pairs on the default stream around each launch, "
            f"each after a {SPIN_NS // 1000} us busy-wait kernel, so host launch overhead is not timed",
            "reference": "cuBLAS SGEMM of the same run; every output also against a float64 DGEMM on the device",
        }
    )
    clock = Clock(
        backend.timer,
        backend.elapsed,
        backend.synchronize,
        lambda: spin.prepared_async_call((1, 1, 1), (1, 1, 1), None, SPIN_NS),
    )
    rng = np.random.default_rng(SEED)
    results: dict[int, list[Contender]] = {}
    for n in args.sizes:
        a = cp.asarray(random_matrix(rng, n))
        b = cp.asarray(random_matrix(rng, n))
        contenders = cuda_contenders(cp, n, a, b, tiled, hand, sgemm, fast, args.tiles)
        print(f"n = {n}: {len(contenders)} series, {args.warmup} warm-up + {args.repeat} timed runs each", flush=True)
        time_all(contenders, clock, args.warmup, args.repeat)
        backend.synchronize()
        cuda_check(cp, n, a, b, contenders, args.tolerance)
        results[n] = contenders
        print_size(n, contenders)
        del a, b
        cp.get_default_memory_pool().free_all_blocks()
    return backend, results


def cuda_contenders(
    cp: Any,
    n: int,
    a: Any,
    b: Any,
    tiled: Any,
    hand: dict[tuple[str, int], Any],
    sgemm: Callable[..., Any] | None,
    fast: list[tuple[str, str | None]],
    tiles: list[int],
) -> list[Contender]:
    """Every CUDA contender at size n: all read the same CuPy arrays, each writes its own NaN-filled output."""

    def out() -> Any:
        return cp.full(n * n, cp.nan, dtype=cp.float32)

    def gpukern_tiled(tile: int) -> Contender:
        grid, block = grid_of(n, tile)
        launch, c = tiled[grid, block], out()
        return Contender(f"gpukern tiled {tile}", lambda: launch(a, b, c, n, n, n, tile), c)

    def hand_written(name: str, tile: int, fn: Any) -> Contender:
        (gx, gy), _ = grid_of(n, tile)
        c = out()
        return Contender(
            f"{name} tiled {tile}",
            lambda: fn.prepared_async_call(
                (gx, gy, 1), (tile, tile, 1), None, a.data.ptr, b.data.ptr, c.data.ptr, n, n, n
            ),
            c,
        )

    def fast_sgemm(name: str, config: str | None) -> Contender:
        assert sgemm is not None
        c = out()
        return Contender(name, lambda: sgemm(a, b, c, n, n, n, config=config), c)

    contenders = []
    for tile in tiles:
        contenders.append(gpukern_tiled(tile))
        contenders += [hand_written(name, t, fn) for (name, t), fn in hand.items() if t == tile]
    contenders += [fast_sgemm(name, config) for name, config in fast]
    a2, b2, c_blas = a.reshape(n, n), b.reshape(n, n), out()
    c2 = c_blas.reshape(n, n)
    contenders.append(Contender("cuBLAS", lambda: cp.matmul(a2, b2, out=c2), c_blas))
    return contenders


def cuda_check(cp: Any, n: int, a: Any, b: Any, contenders: list[Contender], tolerance: float) -> None:
    """Every output against cuBLAS SGEMM, and every output, cuBLAS's too, against a float64 DGEMM; then the
    outputs are freed."""
    ref64 = cp.matmul(a.reshape(n, n).astype(cp.float64), b.reshape(n, n).astype(cp.float64)).ravel()
    blas = next(c for c in contenders if c.series == "cuBLAS").out

    def err(x: Any, ref: Any) -> float:
        if not bool(cp.isfinite(x).all()):
            return float("nan")
        return float(cp.abs(x.astype(cp.float64) - ref).max()) / float(cp.abs(ref).max())

    for c in contenders:
        if c.failure is None:
            c.errors["error_vs_fp64"] = err(c.out, ref64)
            if c.series != "cuBLAS":
                c.errors["error_vs_cublas"] = err(c.out, blas)
            check(c, tolerance)
    for c in contenders:
        c.out = None


# ---------------------------------------------------------------------------------------------- OpenCL
def run_opencl(args: argparse.Namespace, params: dict[str, Any]) -> tuple[Any, dict[int, list[Contender]]]:
    import gpukern as gk

    backend = _common.select_backend("opencl")
    cl = backend.cl
    tiled = load_module(EXAMPLES / "matmul_tiled.py", "gpukern_example_matmul_tiled").matmul_tiled
    sources = [("hand-written", REFERENCE / "matmul_tiled.cl"), *args.extra_reference]
    hand = {}
    for name, path in sources:
        src = Path(path).read_text()
        for tile in args.tiles:
            prg = cl.Program(backend.ctx, src).build(options=[*backend.build_options, f"-DTILE={tile}"])
            hand[(name, tile)] = cl.Kernel(prg, "matmul_tiled")
    dev = backend.device
    params.update(
        {
            "build_options": [*backend.build_options, "-DTILE=<tile>"],
            "opencl_driver": dev.driver_version,
            "opencl_platform": dev.platform.version,
            "compute_units": dev.max_compute_units,
            "timing": "OpenCL profiling markers (gpukern's timer) around each launch, on gpukern's queue",
            "reference": "NumPy float64 matmul",
        }
    )
    clock = Clock(backend.timer, backend.elapsed, backend.synchronize)
    rng = np.random.default_rng(SEED)
    results: dict[int, list[Contender]] = {}
    for n in args.sizes:
        a, b = random_matrix(rng, n), random_matrix(rng, n)
        contenders = opencl_contenders(gk, backend, n, gk.to_device(a), gk.to_device(b), tiled, hand, args.tiles)
        print(f"n = {n}: {len(contenders)} series, {args.warmup} warm-up + {args.repeat} timed runs each", flush=True)
        time_all(contenders, clock, args.warmup, args.repeat)
        ref = a.reshape(n, n).astype(np.float64) @ b.reshape(n, n).astype(np.float64)
        for c in contenders:
            if c.failure is None:
                c64 = c.out.get().reshape(n, n).astype(np.float64)
                finite = bool(np.isfinite(c64).all())
                c.errors["error_vs_fp64"] = float(np.abs(c64 - ref).max() / np.abs(ref).max()) if finite else np.nan
                check(c, args.tolerance)
            c.out = None
        results[n] = contenders
        print_size(n, contenders)
    return backend, results


def opencl_contenders(
    gk: Any, backend: Any, n: int, da: Any, db: Any, tiled: Any, hand: dict[tuple[str, int], Any], tiles: list[int]
) -> list[Contender]:
    """Every OpenCL contender at size n, on gpukern's queue: same inputs, each its own NaN-filled output."""
    cl = backend.cl

    def out() -> Any:
        return gk.to_device(np.full(n * n, np.nan, np.float32))

    def gpukern_tiled(tile: int) -> Contender:
        grid, block = grid_of(n, tile)
        launch, c = tiled[grid, block], out()
        return Contender(f"gpukern tiled {tile}", lambda: launch(da, db, c, n, n, n, tile), c)

    def hand_written(name: str, tile: int, knl: Any) -> Contender:
        (gx, gy), _ = grid_of(n, tile)
        c = out()

        def launch() -> None:  # what gpukern's launch does: set the arguments, enqueue
            knl.set_args(da.handle, db.handle, c.handle, np.int32(n), np.int32(n), np.int32(n))
            cl.enqueue_nd_range_kernel(backend.queue, knl, (gx * tile, gy * tile), (tile, tile))

        return Contender(f"{name} tiled {tile}", launch, c)

    contenders = []
    for tile in tiles:
        contenders.append(gpukern_tiled(tile))
        contenders += [hand_written(name, t, knl) for (name, t), knl in hand.items() if t == tile]
    return contenders


# ---------------------------------------------------------------------------------------------- report
def summary(c: Contender, n: int) -> dict[str, Any]:
    median = statistics.median(c.times) if c.times else None
    return {
        "median_s": median,
        "gflops": 2.0 * n**3 / median / 1e9 if median else None,
        "min_s": min(c.times, default=None),
        "max_s": max(c.times, default=None),
        "times_s": c.times,
        **c.errors,
        "ok": c.failure is None,
        "failure": c.failure,
    }


def print_size(n: int, contenders: list[Contender]) -> None:
    """One size's table, printed as soon as it is measured."""
    rows = []
    for c in contenders:
        s = summary(c, n)
        ms = [f"{s[k] * 1e3:.3f}" if s[k] is not None else "-" for k in ("median_s", "min_s", "max_s")]
        errors = " ".join(f"{k.removeprefix('error_')} {v:.1e}" for k, v in c.errors.items())
        gflops = f"{s['gflops']:.1f}" if s["gflops"] else "-"
        rows.append([c.series, n, ms[0], gflops, ms[1], ms[2], errors, "FAILED" if c.failure else "OK"])
    print(_common.table(["series", "n", "median ms", "GFLOP/s", "min ms", "max ms", "max rel. error", ""], rows))
    for c in contenders:
        if c.failure:
            print(f"  *** FAILED: {c.series} at n = {n}: {c.failure}", file=sys.stderr)
    sys.stdout.flush()


def speed_ratio(num: Contender | None, den: Contender | None) -> dict[str, Any] | None:
    """Speed of ``num`` relative to ``den``: the ratio of median times, and the median of the ratios within a
    repetition (both ran in it), which drift between repetitions does not move."""
    if num is None or den is None or num.failure or den.failure or not num.times or not den.times:
        return None
    return {
        "of": num.series,
        "to": den.series,
        "ratio": statistics.median(den.times) / statistics.median(num.times),
        "paired": statistics.median(d / x for x, d in zip(num.times, den.times)),
    }


def ratios(backend: str, results: dict[int, list[Contender]], tiles: list[int]) -> list[dict[str, Any]]:
    out = []
    for n, contenders in results.items():
        by = {c.series: c for c in contenders}
        for tile in tiles:
            gk_tiled = by.get(f"gpukern tiled {tile}")
            for c in contenders:
                if c.series.endswith(f" tiled {tile}") and c is not gk_tiled:
                    r = speed_ratio(gk_tiled, c)
                    if r and c.series == f"hand-written tiled {tile}":
                        if backend == "opencl":
                            r["goal"] = GOAL_TILED_OPENCL
                        elif n in GOAL_TILED_CUDA_SIZES:
                            r["goal"] = GOAL_TILED_CUDA
                    out.append({"n": n, **r} if r else None)
        for c in contenders:
            if c.series.startswith("gpukern fast"):
                r = speed_ratio(c, by.get("cuBLAS"))
                if r and c.series == "gpukern fast" and n in GOAL_FAST:
                    r["goal"] = GOAL_FAST[n]
                out.append({"n": n, **r} if r else None)
    kept = [r for r in out if r]
    for r in kept:
        if "goal" in r:
            r["goal_met"] = r["ratio"] >= r["goal"]
    return kept


def print_ratios(rs: list[dict[str, Any]]) -> None:
    rows = []
    for r in rs:
        goal = f">= {r['goal']:.2f}: {'met' if r['goal_met'] else 'NOT MET'}" if "goal" in r else ""
        rows.append([f"{r['of']} / {r['to']}", r["n"], f"{r['ratio']:.3f}", f"{r['paired']:.3f}", goal])
    if rows:
        print()
        print(_common.table(["speed ratio", "n", "medians", "paired", "goal"], rows))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _common.add_common_args(p)
    p.add_argument("--sizes", type=int, nargs="+", help="n values (cuda: 1024 2048 4096 8192; opencl: 256 512 1024)")
    p.add_argument("--tiles", type=int, nargs="+", help="TILE values (cuda: 16 32; opencl: 8 16)")
    p.add_argument("--repeat", type=int, help="timed repetitions per size (cuda: 11; opencl: 21)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs of each contender first (default 2)")
    p.add_argument("--tolerance", type=float, default=1e-4, help="largest max|c - ref| / max|ref| (default 1e-4)")
    p.add_argument(
        "--fast-configs",
        nargs="+",
        default=["all"],
        metavar="NAME",
        help="CUDA: CONFIGS of examples/matmul_fast.py timed besides the autotuned one: names, all (default), none",
    )
    p.add_argument(
        "--extra-reference",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="also time another hand-written matmul_tiled source (a variant, for investigations); repeatable",
    )
    args = p.parse_args(argv)
    if args.backend is None:
        args.backend = _common.select_backend(None).name
    cuda = args.backend == "cuda"
    args.sizes = args.sizes or ([1024, 2048, 4096, 8192] if cuda else [256, 512, 1024])
    args.tiles = args.tiles or ([16, 32] if cuda else [8, 16])
    args.repeat = args.repeat or (11 if cuda else 21)
    extra = []
    for item in args.extra_reference:
        name, sep, path = item.partition("=")
        if not sep or not name or not Path(path).is_file():
            p.error(f"--extra-reference wants NAME=FILE with an existing file, not {item!r}")
        extra.append((name, path))
    args.extra_reference = extra
    if args.warmup < 1 or args.repeat < 1 or min(args.sizes) < 1 or min(args.tiles) < 1:
        p.error("--warmup, --repeat, --sizes and --tiles must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    params: dict[str, Any] = {
        **vars(args),
        "seed": SEED,
        "data": "random normal float32 (numpy default_rng), no exact zeros, 1-D row-major, fresh per size",
        "order": "contenders interleaved, the order rotated each repetition",
        "notes": [],
    }
    backend, results = (run_cuda if args.backend == "cuda" else run_opencl)(args, params)
    rs = ratios(args.backend, results, args.tiles)
    print_ratios(rs)
    failures = [
        {"n": n, "series": c.series, "failure": c.failure} for n, cs in results.items() for c in cs if c.failure
    ]
    names = list(dict.fromkeys(c.series for cs in results.values() for c in cs))
    series = {
        name: {str(n): summary(c, n) for n, cs in results.items() for c in cs if c.series == name} for name in names
    }
    plotted = [name for name in names if not name.startswith("gpukern fast [")]  # one fast line: the autotuned
    plot = {
        "kind": "lines",
        "title": f"n x n x n float32 matmul, {args.backend}: median of {args.repeat} device-event-timed runs",
        "xlabel": "n",
        "ylabel": "GFLOP/s (2 n^3 / median time)",
        "log_x": True,
        "series": {
            name: {
                "x": [int(n) for n, s in series[name].items() if s["ok"] and s["gflops"]],
                "y": [s["gflops"] for s in series[name].values() if s["ok"] and s["gflops"]],
            }
            for name in plotted
        },
    }
    _common.save("matmul", args.out, backend, params, {"series": series, "ratios": rs, "failures": failures}, plot)
    if failures:
        print(f"\n*** {len(failures)} FAILED measurement(s):", file=sys.stderr)
        for f in failures:
            print(f"***   {f['series']} at n = {f['n']}: {f['failure']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
