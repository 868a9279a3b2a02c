"""gpukern's CPU simulator against Numba's CUDA simulator on the classic 16x16 shared-memory tiled matmul.

What it measures: for each n (n x n x n product, flat row-major float32 arrays, one 16x16 block per tile of C)

* the Numba CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) running the classic tiled kernel written with
  ``numba.cuda`` (``cuda.shared.array((16, 16), float32)``, ``cuda.syncthreads()``);
* the gpukern simulator (``gk.set_backend("sim")``) running ``matmul_tiled`` from ``examples/matmul_tiled.py``,
  with its race / barrier / bounds checks on (the default) and off (``check=False``);

and, at ``--big`` (no Numba there), the gpukern simulator alone, checks on and off.

How: every (implementation, n, mode) is measured in its own subprocess (this script with a hidden worker flag,
printing one JSON line), so Numba's environment variable is set before numba is imported and each peak resident
memory figure (``ru_maxrss``) belongs to that one measurement alone.  A worker imports, builds seeded random
non-zero inputs (|x| in [0.5, 1.5), random signs), records its baseline peak RSS, then times the kernel launch
itself with ``time.perf_counter`` (both simulators are synchronous; inputs and output are device arrays of the
respective library, so no host transfer is timed): one untimed warm-up launch first for gpukern (it compiles on
first launch), none for Numba.  The median of the timed runs is reported: ``--repeat`` runs (default 3) for
gpukern and for Numba at n < 128, one run for Numba at n >= 128 (about 50 s each) unless ``--numba-repeat`` says
otherwise.  Every run's result is compared with NumPy (``a @ b`` in float64): max |c - ref| / max |ref| must be
below 1e-4, else the script fails loudly and exits non-zero.

    python benchmarks/sim_vs_numba.py                       # --sizes 32 64 128 --big 512
    python benchmarks/sim_vs_numba.py --sizes 32 64 --big 256 --repeat 5

Goals checked at the end (from the issue): gpukern's simulator is >= 200x faster than Numba's at n=128 with
checks on and with checks off, and n=512 with checks on takes < 10 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EXAMPLE = HERE / ".." / "examples" / "matmul_tiled.py"
TILE = 16
TOLERANCE = 1e-4
GOAL_RATIO = 200.0
GOAL_BIG_N = 512
GOAL_BIG_SECONDS = 10.0
NUMBA_MISSING = 2


def _peak_rss_kib() -> int:
    """Peak resident set size of this process so far (``ru_maxrss`` is in KiB on Linux)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _inputs(n: int) -> tuple[Any, Any, Any]:
    """Seeded random flat float32 a, b (never zero) and the float64 reference a @ b as an n x n array."""
    import numpy as np

    rng = np.random.default_rng(12345 + n)

    def one() -> Any:
        mag = rng.uniform(0.5, 1.5, n * n)
        sign = rng.choice(np.array([-1.0, 1.0]), n * n)
        return (mag * sign).astype(np.float32)

    a, b = one(), one()
    ref = a.reshape(n, n).astype(np.float64) @ b.reshape(n, n).astype(np.float64)
    return a, b, ref


def _rel_error(c: Any, ref: Any) -> float:
    import numpy as np

    n = ref.shape[0]
    return float(np.abs(c.reshape(n, n).astype(np.float64) - ref).max() / np.abs(ref).max())


def _time_runs(launch: Any, fetch: Any, ref: Any, repeat: int) -> tuple[list[float], float]:
    """Run ``launch`` ``repeat`` times, timing each and checking ``fetch()`` against ``ref`` after each."""
    times: list[float] = []
    worst = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        launch()
        times.append(time.perf_counter() - t0)
        err = _rel_error(fetch(), ref)
        worst = max(worst, err)
        if not err < TOLERANCE:  # also catches NaN
            break
    return times, worst


def _report(impl: str, n: int, mode: str, times: list[float], err: float, baseline: int, **extra: Any) -> int:
    ok = err < TOLERANCE
    out = {
        "impl": impl,
        "n": n,
        "mode": mode,
        "times": times,
        "median": statistics.median(times),
        "max_rel_err": err,
        "ok": ok,
        "baseline_rss_kib": baseline,
        "peak_rss_kib": _peak_rss_kib(),
        **extra,
    }
    print(json.dumps(out), flush=True)
    return 0 if ok else 1


def numba_worker(n: int, repeat: int) -> int:
    """Time the numba.cuda tiled matmul under Numba's CUDA simulator (the env var is set by the parent)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        print("the Numba worker must run with NUMBA_ENABLE_CUDASIM=1", file=sys.stderr)
        return 1
    # Numba's simulator swaps a fake ``cuda`` module into the kernel's *globals* during a launch, so ``cuda``
    # must be a module global here, not a closure variable of this function.
    global cuda, float32
    try:
        import numba
        from numba import cuda, float32
    except ImportError as e:
        print(json.dumps({"error": f"numba cannot be imported: {e}"}), flush=True)
        return NUMBA_MISSING

    @cuda.jit
    def matmul_numba(a: Any, b: Any, c: Any, m: int, nn: int, k: int) -> None:
        """c (m x nn) = a (m x k) @ b (k x nn), flat row-major, one 16 x 16 tile of c per block."""
        tile_a = cuda.shared.array((16, 16), float32)
        tile_b = cuda.shared.array((16, 16), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * cuda.blockDim.y + ty
        col = cuda.blockIdx.x * cuda.blockDim.x + tx
        acc = float32(0.0)
        for t in range((k + 16 - 1) // 16):
            a_col = t * 16 + tx
            b_row = t * 16 + ty
            tile_a[ty, tx] = a[row * k + a_col] if row < m and a_col < k else float32(0.0)
            tile_b[ty, tx] = b[b_row * nn + col] if b_row < k and col < nn else float32(0.0)
            cuda.syncthreads()
            for i in range(16):
                acc += tile_a[ty, i] * tile_b[i, tx]
            cuda.syncthreads()
        if row < m and col < nn:
            c[row * nn + col] = acc

    import numpy as np

    a, b, ref = _inputs(n)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.to_device(np.zeros(n * n, np.float32))
    baseline = _peak_rss_kib()
    grid = ((n + TILE - 1) // TILE, (n + TILE - 1) // TILE)
    launch = matmul_numba[grid, (TILE, TILE)]

    def run() -> None:
        launch(da, db, dc, n, n, n)
        cuda.synchronize()

    times, err = _time_runs(run, dc.copy_to_host, ref, repeat)
    return _report("numba-cudasim", n, "sim", times, err, baseline, version=numba.__version__)


def gpukern_worker(n: int, repeat: int, check: bool) -> int:
    """Time examples/matmul_tiled.py's kernel on gpukern's simulator, checks on or off."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # run from a checkout without installing gpukern
    import numpy as np

    import gpukern as gk

    spec = importlib.util.spec_from_file_location("matmul_tiled_example", EXAMPLE.resolve())
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    matmul_tiled = module.matmul_tiled

    gk.set_backend("sim")
    a, b, ref = _inputs(n)
    da, db = gk.to_device(a), gk.to_device(b)
    dc = gk.empty(n * n, np.float32)
    baseline = _peak_rss_kib()
    launch = matmul_tiled[((n + TILE - 1) // TILE, (n + TILE - 1) // TILE), (TILE, TILE)]

    def run() -> None:
        launch(da, db, dc, n, n, n, TILE, check=check)

    t0 = time.perf_counter()
    run()  # warm-up: compiles the kernel for these argument types
    warmup = time.perf_counter() - t0
    err = _rel_error(dc.get(), ref)
    if not err < TOLERANCE:
        return _report("gpukern-sim", n, "on" if check else "off", [warmup], err, baseline, warmup=warmup)
    dc = gk.empty(n * n, np.float32)  # timed runs must produce the result again, not inherit it
    times, err = _time_runs(run, dc.get, ref, repeat)
    return _report("gpukern-sim", n, "on" if check else "off", times, err, baseline, warmup=warmup)


def measure(args: list[str], numba: bool) -> dict[str, Any]:
    """Run this script as a worker in a fresh process and return its JSON result; fail loudly on error."""
    env = dict(os.environ)
    if numba:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args], env=env, capture_output=True, text=True
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == NUMBA_MISSING:
        sys.stderr.write(proc.stderr)
        raise SystemExit(_numba_missing_message())
    if not lines:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"FAIL: worker {' '.join(args)} exited with {proc.returncode} and no result")
    result: dict[str, Any] = json.loads(lines[-1])
    if proc.returncode != 0 or not result.get("ok"):
        sys.stderr.write(proc.stderr)
        raise SystemExit(
            f"FAIL: {result.get('impl')} n={result.get('n')} mode={result.get('mode')}: wrong result, "
            f"max relative error {result.get('max_rel_err')} (limit {TOLERANCE}), exit code {proc.returncode}"
        )
    return result


def _numba_missing_message() -> int:
    print(
        "error: numba is not installed (needed for the comparison); install it with:  pip install numba",
        file=sys.stderr,
    )
    return NUMBA_MISSING


def _mib(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def _rss(r: dict[str, Any]) -> str:
    return f"{_mib(r['baseline_rss_kib'])}->{_mib(r['peak_rss_kib'])}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128], help="n for the side-by-side rows")
    p.add_argument("--big", type=int, nargs="*", default=[GOAL_BIG_N], help="n for gpukern-only rows (default 512)")
    p.add_argument("--repeat", type=int, default=3, help="timed gpukern runs, and Numba runs at n < 128 (median)")
    p.add_argument("--numba-repeat", type=int, help="timed Numba runs at n >= 128 (default 1)")
    p.add_argument("--numba-worker", type=int, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--gpukern-worker", type=int, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--no-check", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.numba_worker is not None:
        return numba_worker(args.numba_worker, args.worker_repeat)
    if args.gpukern_worker is not None:
        return gpukern_worker(args.gpukern_worker, args.worker_repeat, not args.no_check)

    if importlib.util.find_spec("numba") is None:
        return _numba_missing_message()
    if any(n % TILE for n in [*args.sizes, *args.big]):
        p.error(f"sizes must be multiples of {TILE}")

    print(f"gpukern simulator vs Numba CUDA simulator: {TILE}x{TILE} shared-memory tiled matmul, float32")
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"date {time.strftime('%Y-%m-%d %H:%M %Z')}"
    )
    print(
        f"each (implementation, n, mode) in its own process; time = median launch wall time; "
        f"RSS = baseline->peak MiB (ru_maxrss); every run checked against NumPy float64 (rel. err < {TOLERANCE})"
    )
    print()

    def gk_run(n: int, check: bool) -> dict[str, Any]:
        flags = ["--gpukern-worker", str(n), "--worker-repeat", str(args.repeat)]
        r = measure(flags + ([] if check else ["--no-check"]), numba=False)
        print(
            f"  gpukern n={n:<4} checks {'on ' if check else 'off'}: {r['median']:9.4f} s  "
            f"(runs {', '.join(f'{t:.4f}' for t in r['times'])}; warm-up {r['warmup']:.4f} s)  "
            f"err {r['max_rel_err']:.1e}  OK",
            flush=True,
        )
        return r

    rows: list[tuple[int, dict[str, Any], dict[str, Any], dict[str, Any]]] = []
    numba_version = "?"
    for n in args.sizes:
        reps = args.repeat if n < 128 else (args.numba_repeat or 1)
        nb = measure(["--numba-worker", str(n), "--worker-repeat", str(reps)], numba=True)
        numba_version = nb.get("version", numba_version)
        print(
            f"  numba   n={n:<4} sim       : {nb['median']:9.4f} s  "
            f"(runs {', '.join(f'{t:.3f}' for t in nb['times'])})  err {nb['max_rel_err']:.1e}  OK",
            flush=True,
        )
        rows.append((n, nb, gk_run(n, True), gk_run(n, False)))
    big = [(n, gk_run(n, True), gk_run(n, False)) for n in args.big]

    print()
    print(f"numba {numba_version} (NUMBA_ENABLE_CUDASIM=1) vs gpukern sim; seconds are medians; RSS MiB baseline->peak")
    head = (
        f"{'n':>5} {'numba s':>10} {'gk on s':>9} {'gk off s':>9} {'x (on)':>9} {'x (off)':>9}  "
        f"{'numba RSS':>11} {'gk on RSS':>11} {'gk off RSS':>11}"
    )
    print(head)
    print("-" * len(head))
    for n, nb, on, off in rows:
        print(
            f"{n:>5} {nb['median']:>10.3f} {on['median']:>9.4f} {off['median']:>9.4f} "
            f"{nb['median'] / on['median']:>8.0f}x {nb['median'] / off['median']:>8.0f}x  "
            f"{_rss(nb):>11} {_rss(on):>11} {_rss(off):>11}"
        )
    for n, on, off in big:
        print(
            f"{n:>5} {'(not run)':>10} {on['median']:>9.4f} {off['median']:>9.4f} {'':>9} {'':>9}  "
            f"{'':>11} {_rss(on):>11} {_rss(off):>11}"
        )
    print()

    verdicts: list[str] = []
    ok = True
    at128 = [r for r in rows if r[0] == 128]
    if at128:
        _, nb, on, off = at128[0]
        r_on, r_off = nb["median"] / on["median"], nb["median"] / off["median"]
        good = r_on >= GOAL_RATIO and r_off >= GOAL_RATIO
        ok &= good
        verdicts.append(
            f"n=128 speed-up {r_on:.0f}x (checks on), {r_off:.0f}x (checks off) "
            f"{'>=' if good else 'NOT both >='} {GOAL_RATIO:.0f}x"
        )
    else:
        ok = False
        verdicts.append("n=128 speed-up not measured")
    at_big = [r for r in big if r[0] == GOAL_BIG_N]
    if at_big:
        t = at_big[0][1]["median"]
        good = t < GOAL_BIG_SECONDS
        ok &= good
        verdicts.append(f"n={GOAL_BIG_N} checks on {t:.2f} s {'<' if good else 'NOT <'} {GOAL_BIG_SECONDS:.0f} s")
    else:
        ok = False
        verdicts.append(f"n={GOAL_BIG_N} not measured")
    print(f"goals {'HOLD' if ok else 'DO NOT HOLD'}: " + "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
