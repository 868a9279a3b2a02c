"""Does the driver launch on the legacy default stream as fast given its handle
(CU_STREAM_LEGACY, 1: what a CuPy array's interface names for CuPy's null stream, and what the
fast path passed) as given 0 (None)?  The same launcher, 20000 launches a round, 15 rounds
alternating, medians; synchronized after each round."""
import statistics, sys, time
import numpy as np
sys.path.insert(0, "benchmarks")
import gpukern as gk
from launch import tiny
gk.set_backend("cuda")
n = np.int32(3)
own = tuple(gk.to_device(np.ones(32, np.float32)) for _ in range(3))
L = tiny[1, 32]
L(*own, n); L(*own, n)
plan = L.plan
launcher = plan.backend.launcher(plan.variant, plan.grid, plan.block, 0)
cargs = [a.handle for a in own] + [n]
N = 20000
times = {None: [], 1: []}
for r in range(15):
    for s in (None, 1) if r % 2 else (1, None):
        gk.synchronize()
        t0 = time.perf_counter()
        for _ in range(N):
            launcher(cargs, s)
        gk.synchronize()
        times[s].append((time.perf_counter() - t0) / N * 1e6)
for s, ts in times.items():
    print(f"stream {s!s:5s}: median {statistics.median(ts):.3f} us, min {min(ts):.3f} us")
