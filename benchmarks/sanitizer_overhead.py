"""What the simulator's checks cost: a checked launch and ``gk.sanitize`` against checks off.

    python benchmarks/sanitizer_overhead.py [--size 256] [--repeat 7] [--out DIR]

The flagship (``examples/matmul_tiled.py``) and the naive matmul at ``--size`` cubed, on the same
random data: each way of running is timed as the median of ``--repeat`` runs after one warm-up,
the three ways taking turns run by run so drift touches all alike; every run's output is checked
against NumPy.  Checks on means every check: bounds and alignment, shared and global races,
uninitialised reads, index overflow, barrier divergence.  The goal (issue 13): a checked run of
the flagship costs at most 1.5x a run with checks off.  ``--out`` writes sanitizer_overhead.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import statistics
import sys
import time
from typing import Any

import _common  # noqa: E402  (puts the checkout first on sys.path)
import numpy as np

import gpukern as gk  # noqa: E402

GOAL = 1.5


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--out", type=pathlib.Path, help="write sanitizer_overhead.json here")
    args = p.parse_args(argv)
    n = args.size
    gk.set_backend("sim")
    launches, error = _common.flagship_launches(n, ("tiled 16", "tiled 32", "tiled 8", "naive 16"))
    rows = []
    print(f"{'kernel':<12} {'checks off s':>12} {'checked s':>10} {'sanitize s':>11} {'checked':>8} {'sanitize':>9}")
    for name, launch, args_of in launches:

        def off(c: np.ndarray, launch: Any = launch, args_of: Any = args_of) -> Any:
            return launch(*args_of(c), check=False)

        def checked(c: np.ndarray, launch: Any = launch, args_of: Any = args_of) -> Any:
            return launch(*args_of(c), check=True)

        def sanitize(c: np.ndarray, launch: Any = launch, args_of: Any = args_of) -> Any:
            return gk.sanitize(launch, *args_of(c))

        ways = {"off": off, "checked": checked, "sanitize": sanitize}
        times: dict[str, list[float]] = {k: [] for k in ways}
        for r in range(args.repeat + 1):
            for way, run in ways.items():
                c = np.zeros(n * n, np.float32)
                t0 = time.perf_counter()
                found = run(c)
                elapsed = time.perf_counter() - t0
                err = error(c)
                if not err < 1e-4 or found:
                    print(f"{name} ({way}): WRONG result ({err:.1e}) or faults {found}")
                    return 1
                if r:  # the first round warms up
                    times[way].append(elapsed)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"kernel": name, "size": n, **{f"{k}_s": v for k, v in med.items()}}
        row["checked_ratio"] = med["checked"] / med["off"]
        row["sanitize_ratio"] = med["sanitize"] / med["off"]
        rows.append(row)
        print(
            f"{name:<12} {med['off']:>12.3f} {med['checked']:>10.3f} {med['sanitize']:>11.3f} "
            f"{row['checked_ratio']:>7.2f}x {row['sanitize_ratio']:>8.2f}x"
        )
    flagship = rows[0]["checked_ratio"]
    met = flagship <= GOAL
    print(f"flagship (tiled 16) checked / checks off: {flagship:.2f}x (goal <= {GOAL}: {'met' if met else 'NOT met'})")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        result = {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}",
            "command": "python benchmarks/sanitizer_overhead.py " + " ".join(argv or sys.argv[1:]),
            "repeat": args.repeat,
            "goal": GOAL,
            "rows": rows,
        }
        (args.out / "sanitizer_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
