"""What profiling costs: the simulator's time with ``gk.profile`` against a plain simulator launch.

    python benchmarks/profile_overhead.py [--size 256] [--repeat 3]

Both run with the simulator's checks off (``gk.profile``'s default), on the same random data,
each timed as the median of ``--repeat`` runs after one warm-up; the profiled run's output is
checked against NumPy.  The goal: profiling costs at most 3x the plain run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import _common  # noqa: E402  (puts the checkout first on sys.path)
import numpy as np

import gpukern as gk  # noqa: E402


def median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    n = args.size
    gk.set_backend("sim")
    launches, error = _common.flagship_launches(n, ("tiled 8", "tiled 16", "tiled 32", "naive 16"))
    print(f"{'kernel':<18} {'plain s':>9} {'profiled s':>11} {'ratio':>7}")
    worst = 0.0
    for name, launch, args_of in launches:
        run_args = args_of(np.zeros(n * n, np.float32))
        plain = median_time(lambda launch=launch, run_args=run_args: launch(*run_args, check=False), args.repeat)
        profiled = median_time(lambda launch=launch, run_args=run_args: gk.profile(launch, *run_args), args.repeat)
        err = error(run_args[2])
        if not err < 1e-4:
            print(f"{name}: WRONG result ({err:.1e})")
            return 1
        worst = max(worst, profiled / plain)
        print(f"{name:<18} {plain:>9.3f} {profiled:>11.3f} {profiled / plain:>6.2f}x")
    print(f"worst ratio {worst:.2f}x: goal (<= 3x) {'met' if worst <= 3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
