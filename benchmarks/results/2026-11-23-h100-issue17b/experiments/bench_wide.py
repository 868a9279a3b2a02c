import sys, pathlib, statistics
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "examples"))
import numpy as np, cupy as cp, gpukern as gk
import wide, matmul_tensorcore as tc
gk.set_backend("cuda")
def timed(fn, reps=10):
    for _ in range(3): fn()
    ts = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); fn(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e) * 1e-3)
    return statistics.median(ts)
kerns = {
    "wide 64:3:8": wide.make_wide(gk.float16, 16, 64, 3, 8),
    "wide 64:3:16": wide.make_wide(gk.float16, 16, 64, 3, 16),
    "wide 32:3:8": wide.make_wide(gk.float16, 16, 32, 3, 8),
    "sq4w 64:3:8": wide.make_wide(gk.float16, 16, 64, 3, 8, PN=128, PTHREADS=128),
    "sq4w 64:2:8": wide.make_wide(gk.float16, 16, 64, 2, 8, PN=128, PTHREADS=128),
    "sq4w 32:4:8": wide.make_wide(gk.float16, 16, 32, 4, 8, PN=128, PTHREADS=128),
}
kerns64 = {"pipe 64:3:8": tc.hgemm_pipelined}
rng = np.random.default_rng(0)
for n in (4096, 8192):
    a = rng.uniform(-1, 1, (n, n)).astype(np.float16); b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    da, db = cp.asarray(a), cp.asarray(b); dc = cp.zeros((n, n), cp.float32)
    tcub = timed(lambda: cp.matmul(da, db))
    pick = rng.choice(n, 16, replace=False)
    ref = a[pick].astype(np.float64) @ b.astype(np.float64)
    tol = gk.mma_ops.tolerance(np.abs(a[pick]), np.abs(b), 16)
    for name, k in kerns.items():
        dc.fill(np.nan)
        t = timed(lambda: wide.run_wide(k, da, db, dc, n, n, n))
        ok = bool((np.abs(dc.get()[pick] - ref) <= tol).all())
        print(f"n={n} {name}: {2*n**3/t/1e12:.1f} TFLOP/s cuBLAS {2*n**3/tcub/1e12:.1f} ratio {tcub/t:.3f} {'OK' if ok else 'WRONG'}", flush=True)
    for name, k in kerns64.items():
        dc.fill(np.nan)
        t = timed(lambda: tc.run_pipelined(k, da, db, dc, n, n, n))
        ok = bool((np.abs(dc.get()[pick] - ref) <= tol).all())
        print(f"n={n} {name}: {2*n**3/t/1e12:.1f} TFLOP/s cuBLAS {2*n**3/tcub/1e12:.1f} ratio {tcub/t:.3f} {'OK' if ok else 'WRONG'}", flush=True)
