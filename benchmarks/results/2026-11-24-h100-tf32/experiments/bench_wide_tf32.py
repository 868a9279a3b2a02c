"""Times wide.py's TF32 kernels against cuBLAS's TF32 GEMM and the example's, same arrays, CuPy
events, medians of 10 after 3 warm-ups, 16 random rows of each C checked against float64."""
import os, sys, pathlib, statistics
os.environ["CUPY_TF32"] = "1"
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
F = gk.float32
kerns = {
    "sq4w 32:2:8": wide.make_wide(F, 8, 32, 2, 8, PN=128, PTHREADS=128),
    "sq4w 32:3:8": wide.make_wide(F, 8, 32, 3, 8, PN=128, PTHREADS=128),
    "sq4w 16:4:8": wide.make_wide(F, 8, 16, 4, 8, PN=128, PTHREADS=128),
    "wide 32:2:8": wide.make_wide(F, 8, 32, 2, 8),
    "wide 16:3:8": wide.make_wide(F, 8, 16, 3, 8),
}
rng = np.random.default_rng(0)
for n in (4096, 8192):
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32); b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    da, db = cp.asarray(a), cp.asarray(b); dc = cp.zeros((n, n), cp.float32)
    tcub = timed(lambda: cp.matmul(da, db))
    pick = rng.choice(n, 16, replace=False)
    ref = a[pick].astype(np.float64) @ b.astype(np.float64)
    tol = 2.0**-10 * (np.abs(a[pick]).astype(np.float64) @ np.abs(b).astype(np.float64))
    runs = {name: (lambda k=k: wide.run_wide(k, da, db, dc, n, n, n)) for name, k in kerns.items()}
    runs["example 32:2:8"] = lambda: tc.matmul_tf32(da, db, dc, n, n, n)
    for name, fn in runs.items():
        dc.fill(np.nan)
        t = timed(fn)
        ok = bool((np.abs(dc.get()[pick] - ref) <= tol).all())
        print(f"n={n} {name}: {2*n**3/t/1e12:.1f} TFLOP/s cuBLAS {2*n**3/tcub/1e12:.1f} ratio {tcub/t:.3f} {'OK' if ok else 'WRONG'}", flush=True)
