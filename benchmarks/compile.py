"""Compile costs of the flagship ``matmul_tiled``: code generation, and the first launch of a fresh process.

    python benchmarks/compile.py [--backend cuda|opencl] [--reps 50] [--warm-runs 5] [--size 256] [--out DIR]
                                 [--compilers nvrtc,nvcc]

What it measures, each piece in a fresh child Python process (``sys.executable``) so that nothing an
earlier measurement imported, parsed or compiled is still warm:

* Code generation (Python source -> C text), for CUDA C and for OpenCL C (no device needed): in one
  child per dialect, ``gk.Kernel(matmul_tiled.fn).source(Array[float32] x3, int32 x3, TILE,
  backend=...)`` on a fresh ``Kernel`` object each time (a new object has no variants cached); the
  first call of the process is reported on its own (it includes lazy imports and warm-ups), then the
  median (and min) of ``--reps`` further calls, each checked to give the same text as the first.
* The first launch in a fresh process: a child imports NumPy, then gpukern, creates the backend
  (context) and the device arrays, then times the first ``matmul_tiled[grid, block](...)`` at
  ``--size`` (TILE ``--tile``) followed by a synchronize, and a second launch the same way; all with
  ``time.perf_counter``.  The first child starts with an empty disk cache (``GPUKERN_CACHE_DIR`` set to
  a new temporary folder): its first launch is the cold compile.  ``--warm-runs`` children follow with
  the cache it filled; the medians of their times are reported.  The drivers' own caches
  (``POCL_CACHE_DIR``, ``CUDA_CACHE_PATH``) are pointed into the same new folder, so "cold" is cold.
  Each child checks its result against NumPy (float64) and reports ``gk.cache_info()``: the cold child
  must have compiled (a miss), each warm one must have loaded the binary from disk; anything else
  fails the run.
* On CUDA, the first-launch measurement is made once per CUDA compiler of ``--compilers`` (default:
  ``nvrtc,nvcc``, each where it is found), each with its own empty cache, ``GPUKERN_CUDA_COMPILER``
  naming it in the children: NVRTC and nvcc side by side, cold and warm.

Goals (issue "Fast kernels"): code generation < 10 ms; the first launch with a warm disk cache
< 50 ms beyond import and context creation.  Issue 16: a cold first launch (compile) < 150 ms with
NVRTC; warm < 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import _common

EXAMPLE = _common.ROOT / "examples" / "matmul_tiled.py"
GOAL_CODEGEN_MS = 10.0
GOAL_FIRST_LAUNCH_MS = 50.0
GOAL_COLD_NVRTC_MS = 150.0
GOAL_WARM_MS = 10.0
TOLERANCE = 1e-4


# ---------------------------------------------------------------- children (each prints one JSON line)
def child_codegen(dialect: str, reps: int, tile: int) -> dict[str, Any]:
    """Codegen times of fresh Kernel objects; the first call of the process separately."""
    import gpukern as gk

    fn = _common.example("matmul_tiled").matmul_tiled.fn
    types = (gk.Array[gk.float32],) * 3 + (gk.int32,) * 3 + (tile,)
    t = time.perf_counter()
    first_src = gk.Kernel(fn).source(*types, backend=dialect)
    first = time.perf_counter() - t
    times, same = [], True
    for _ in range(reps):
        t = time.perf_counter()
        src = gk.Kernel(fn).source(*types, backend=dialect)
        times.append(time.perf_counter() - t)
        same = same and src == first_src
    marker = "__syncthreads();" if dialect == "cuda" else "barrier("
    return {
        "first_s": first,
        "times_s": times,
        "identical": same,
        "looks_right": "matmul_tiled" in first_src and marker in first_src,
        "source_lines": first_src.count("\n") + 1,
    }


def child_first_launch(backend_name: str, n: int, tile: int, seed: int) -> dict[str, Any]:
    """Import, context creation, first and second launch of the flagship, timed; result checked."""
    t0 = time.perf_counter()
    import numpy as np

    t1 = time.perf_counter()
    import gpukern as gk

    t2 = time.perf_counter()
    example = _common.example("matmul_tiled")
    t3 = time.perf_counter()
    rng = np.random.default_rng(seed)
    a, b = ((rng.uniform(0.5, 1.5, (n, n)) * rng.choice([-1.0, 1.0], (n, n))).astype(np.float32) for _ in range(2))
    t4 = time.perf_counter()
    gk.set_backend(backend_name)
    backend = gk.get_backend()
    da, db, dc = gk.to_device(a.ravel()), gk.to_device(b.ravel()), gk.zeros(n * n, np.float32)
    backend.synchronize()
    t5 = time.perf_counter()
    blocks = (n + tile - 1) // tile
    launch = example.matmul_tiled[(blocks, blocks), (tile, tile)]
    launch(da, db, dc, n, n, n, tile)
    backend.synchronize()
    t6 = time.perf_counter()
    launch(da, db, dc, n, n, n, tile)
    backend.synchronize()
    t7 = time.perf_counter()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(dc.get().reshape(n, n) - ref).max() / np.abs(ref).max())
    compiler = ""
    if backend_name == "cuda":
        from gpukern.backends.cuda_compile import cuda_compiler

        c = cuda_compiler(arch=backend.arch)  # type: ignore[attr-defined]
        compiler = f"{c.name} {c.version}"
    return {
        "compiler": compiler,
        "import_numpy_s": t1 - t0,
        "import_gpukern_s": t2 - t1,
        "load_example_s": t3 - t2,
        "context_s": t5 - t4,
        "first_launch_s": t6 - t5,
        "second_launch_s": t7 - t6,
        "max_rel_error": err,
        "ok": err < TOLERANCE,
        "cache": gk.cache_info(),
        "device": backend.device_name(),
    }


def run_child(args: list[str], env: dict[str, str]) -> tuple[dict[str, Any], float]:
    """Run this script as a child; its JSON line and its wall time (interpreter start-up included)."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"error: child {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return json.loads(lines[-1]), wall


def child_env(backend: str | None = None, cache_dir: str | None = None, compiler: str | None = None) -> dict[str, str]:
    """This environment, with the checkout importable and the backend and cache folder set."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_common.ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("GPUKERN_NO_CACHE", None)  # the warm runs are about the disk cache
    if backend:
        env["GPUKERN_BACKEND"] = backend
    if compiler:
        env["GPUKERN_CUDA_COMPILER"] = compiler
    if cache_dir:
        env["GPUKERN_CACHE_DIR"] = cache_dir
        # the drivers' own caches start empty too, so the cold run compiles everything it would on a new machine
        env["POCL_CACHE_DIR"] = os.path.join(cache_dir, "pocl")
        env["CUDA_CACHE_PATH"] = os.path.join(cache_dir, "cuda")
    return env


# ---------------------------------------------------------------- parent
def ms(seconds: float) -> float:
    return round(seconds * 1e3, 4)


def _ms_key(key: str) -> str:
    """``first_launch_s`` -> ``first_launch_ms``."""
    return key.removesuffix("_s") + "_ms"


def measure_first_launch(
    args: argparse.Namespace, name: str, compiler: str | None, common: list[str], keys: tuple[str, ...]
) -> dict[str, Any] | None:
    """One cold child (empty cache) and ``--warm-runs`` warm ones with ``compiler`` (None: the
    backend's choice); their times, or None (and what went wrong, printed) where a check failed."""
    cache_dir = tempfile.mkdtemp(prefix="gpukern-bench-cache-")
    try:
        env = child_env(name, cache_dir, compiler)
        launch_args = ["--_child", "first-launch", "--size", str(args.size), *common]
        runs = []
        for i in range(1 + args.warm_runs):
            out, wall = run_child(launch_args, env)
            out["process_s"] = wall
            runs.append(out)
            label = f"{compiler}, " if compiler else ""
            took = ms(out["first_launch_s"])
            print(f"  child {i} ({label}{'cold' if i == 0 else 'warm'} cache): first launch {took} ms")
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    cold, warm = runs[0], runs[1:]
    problems = [
        f"child {i}: wrong result (max rel. error {r['max_rel_error']:.1e})" for i, r in enumerate(runs) if not r["ok"]
    ]
    if cold["cache"]["misses"] < 1:
        problems.append(f"the cold child did not compile: cache {cold['cache']}")
    problems += [
        f"warm child {i}: binary not loaded from disk: cache {r['cache']}"
        for i, r in enumerate(warm, 1)
        if r["cache"]["disk_loads"] < 1 or r["cache"]["misses"] > 0
    ]
    if problems:
        print("error: " + "\n  ".join(problems), file=sys.stderr)
        return None

    warm_stats = {
        _ms_key(k): {"median": statistics.median(ms(r[k]) for r in warm), "min": min(ms(r[k]) for r in warm)}
        for k in (*keys, "process_s")
    }
    extra = [ms(r["first_launch_s"] - r["second_launch_s"]) for r in warm]
    warm_stats["first_minus_second_launch_ms"] = {"median": statistics.median(extra), "min": min(extra)}
    first_launch = {
        "size": args.size,
        "tile": args.tile,
        "cold": {_ms_key(k): ms(cold[k]) for k in (*keys, "process_s")} | {"cache": cold["cache"]},
        "warm": warm_stats,
        "warm_runs": [{_ms_key(k): ms(r[k]) for k in (*keys, "process_s")} | {"cache": r["cache"]} for r in warm],
        "max_rel_error": max(r["max_rel_error"] for r in runs),
        "compiler": cold.get("compiler", ""),
    }
    return first_launch


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _common.add_common_args(p)
    p.add_argument("--reps", type=int, default=50, help="code generations timed per dialect (median reported)")
    p.add_argument("--warm-runs", type=int, default=5, help="fresh processes with the warm cache (median reported)")
    p.add_argument("--size", type=int, default=256, help="n of the n x n x n product launched (default 256)")
    p.add_argument("--tile", type=int, default=16, choices=(8, 16, 32))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compilers", default="nvrtc,nvcc", help="CUDA compilers compared, each where found")
    p.add_argument("--_child", choices=("codegen-cuda", "codegen-opencl", "first-launch"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.reps < 1 or args.warm_runs < 1 or args.size < 1:
        p.error("--reps, --warm-runs and --size must be positive")

    if args._child:
        if args._child == "first-launch":
            out = child_first_launch(os.environ["GPUKERN_BACKEND"], args.size, args.tile, args.seed)
        else:
            out = child_codegen(args._child.split("-")[1], args.reps, args.tile)
        print(json.dumps(out))
        return 0

    backend = _common.select_backend(args.backend)
    name = backend.name
    print(f"device: {backend.device_name()}  backend: {name}")
    common = ["--tile", str(args.tile), "--seed", str(args.seed)]

    codegen: dict[str, Any] = {}
    for dialect in ("cuda", "opencl"):
        out, _ = run_child(["--_child", f"codegen-{dialect}", "--reps", str(args.reps), *common], child_env())
        if not (out["identical"] and out["looks_right"]):
            print(f"error: the {dialect} code generation is not stable or not a matmul_tiled kernel", file=sys.stderr)
            return 1
        times = [ms(t) for t in out["times_s"]]
        codegen[dialect] = {
            "first_ms": ms(out["first_s"]),
            "median_ms": statistics.median(times),
            "min_ms": min(times),
            "reps": len(times),
            "times_ms": times,
            "source_lines": out["source_lines"],
        }

    compilers: list[str | None] = [None]
    if name == "cuda":
        from gpukern.backends import nvrtc
        from gpukern.backends.cuda_compile import find_nvcc

        found = {"nvrtc": nvrtc.library() is not None, "nvcc": find_nvcc() is not None}
        compilers = [c for c in args.compilers.split(",") if found.get(c)]
        skipped = [c for c in args.compilers.split(",") if not found.get(c)]
        if skipped:
            print(f"  not measured (not found): {', '.join(skipped)}")
        if not compilers:
            print("error: none of the CUDA compilers asked for is found", file=sys.stderr)
            return 1
    keys = ("import_numpy_s", "import_gpukern_s", "load_example_s", "context_s", "first_launch_s", "second_launch_s")
    launches: dict[str, Any] = {}
    for compiler in compilers:
        result = measure_first_launch(args, name, compiler, common, keys)
        if result is None:
            return 1
        launches[compiler or name] = result
    first_launch = launches[compilers[0] or name]
    warm_stats = first_launch["warm"]
    warm = first_launch["warm_runs"]

    rows: list[list[Any]] = []
    bars: list[tuple[str, float]] = []
    for dialect, label in (("cuda", "CUDA C"), ("opencl", "OpenCL C")):
        c = codegen[dialect]
        rows.append([f"codegen {label}, first call in process", f"{c['first_ms']:.2f}", "", 1])
        rows.append([f"codegen {label}, fresh Kernel", f"{c['median_ms']:.2f}", f"{c['min_ms']:.2f}", c["reps"]])
        bars += [(f"codegen {label} (first in process, 1 run)", c["first_ms"]), (f"codegen {label}", c["median_ms"])]
    described = (
        ("import_numpy_ms", "import numpy"),
        ("import_gpukern_ms", "import gpukern (after numpy)"),
        ("context_ms", "backend/context + device arrays"),
        ("first_launch_ms", "first launch + sync, warm disk cache"),
        ("second_launch_ms", "second launch + sync"),
        ("process_ms", "whole child process, wall"),
    )
    for key, label in described:
        s = warm_stats[key]
        rows.append([label, f"{s['median']:.2f}", f"{s['min']:.2f}", len(warm)])
        bars.append((label, s["median"]))
    extra = warm_stats["first_minus_second_launch_ms"]
    rows.append(
        ["first launch - second launch (one-time part)", f"{extra['median']:.2f}", f"{extra['min']:.2f}", len(warm)]
    )
    bars.append(("first launch - second launch", extra["median"]))
    for compiler, run in launches.items():
        by = f" ({run['compiler'] or compiler})" if name == "cuda" else ""
        cold_ms = run["cold"]["first_launch_ms"]
        rows.append([f"first launch + sync, COLD cache (compile){by}", f"{cold_ms:.2f}", "", 1])
        bars.append((f"first launch, cold cache (compile{by}; 1 run)", cold_ms))
        if by:
            w = run["warm"]["first_launch_ms"]
            rows.append(
                [
                    f"first launch + sync, warm disk cache{by}",
                    f"{w['median']:.2f}",
                    f"{w['min']:.2f}",
                    len(run["warm_runs"]),
                ]
            )
            bars.append((f"first launch, warm cache{by}", w["median"]))
    print(f"matmul_tiled, TILE {args.tile}; launches at {args.size}^3; times in ms")
    print(_common.table(["what", "median ms", "min ms", "runs"], rows))

    goals = {f"codegen {d} median < {GOAL_CODEGEN_MS} ms": codegen[d]["median_ms"] < GOAL_CODEGEN_MS for d in codegen}
    goals[f"warm first launch median < {GOAL_FIRST_LAUNCH_MS} ms"] = (
        warm_stats["first_launch_ms"]["median"] < GOAL_FIRST_LAUNCH_MS
    )
    if "nvrtc" in launches:
        nv = launches["nvrtc"]
        goals[f"NVRTC cold first launch < {GOAL_COLD_NVRTC_MS} ms"] = nv["cold"]["first_launch_ms"] < GOAL_COLD_NVRTC_MS
        goals[f"NVRTC warm first launch median < {GOAL_WARM_MS} ms"] = (
            nv["warm"]["first_launch_ms"]["median"] < GOAL_WARM_MS
        )
    for goal, met in goals.items():
        print(f"goal {goal}: {'met' if met else 'NOT met'}")
    print(f"results checked against NumPy: max relative error {first_launch['max_rel_error']:.1e}")

    results = {
        "kernel": "matmul_tiled (examples/matmul_tiled.py)",
        "codegen": codegen,
        "first_launch": first_launch,
        "first_launch_by_compiler": launches,
        "goals": goals,
    }
    plot = {
        "kind": "bars",
        "title": f"Compile costs of matmul_tiled (TILE {args.tile}, {name}; first launch at {args.size}^3)",
        "xlabel": "",
        "ylabel": "ms (log scale): medians, or one run where marked",
        "log_y": True,
        "series": {"ms": {"x": [b[0] for b in bars], "y": [b[1] for b in bars]}},
    }
    _common.save("compile", args.out, backend, {k: v for k, v in vars(args).items() if k != "_child"}, results, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
