"""Paired timing of the sg2 prototype's configs and matmul_fast's against cuBLAS (CuPy events, medians of ratios)."""
import sys, pathlib, statistics
root = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "examples")); sys.path.insert(0, str(root / ".gpu-exp"))
import numpy as np, cupy as cp, gpukern as gk
gk.set_backend("cuda")
import matmul_fast as mf, sg2
sizes = [int(x) for x in sys.argv[1].split(",")]
cfgs = sys.argv[2].split(",")
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 15
def paired(fns, reps):
    for _ in range(3):
        for f in fns: f()
    out = [[] for _ in fns]
    for _ in range(reps):
        for f, o in zip(fns, out):
            s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); f(); e.record(); e.synchronize()
            o.append(cp.cuda.get_elapsed_time(s, e))
    return out
for n in sizes:
    rng = np.random.default_rng(n)
    a = cp.asarray(rng.uniform(-1, 1, (n * n,)).astype(np.float32))
    b = cp.asarray(rng.uniform(-1, 1, (n * n,)).astype(np.float32))
    c = cp.zeros((n * n,), cp.float32)
    ref = (a.reshape(n, n)[:8].get().astype(np.float64) @ b.reshape(n, n).get().astype(np.float64))
    cub = lambda: cp.matmul(a.reshape(n, n), b.reshape(n, n))
    for cfg in cfgs:
        if cfg in sg2.CONFIGS:
            f = lambda: sg2.sgemm(a, b, c, n, n, n, cfg)
        else:
            f = lambda: mf.sgemm(a, b, c, n, n, n, config=cfg)
        try:
            c.fill(np.nan)
            tg, tc = paired([f, cub], reps)
        except Exception as e:
            print(f"n={n} {cfg}: {type(e).__name__}: {str(e)[:200]}", flush=True); continue
        ok = np.allclose(c.reshape(n, n)[:8].get(), ref, rtol=1e-3, atol=1e-2)
        r = statistics.median(y / x for x, y in zip(tg, tc))
        print(f"n={n} {cfg}: {2*n**3/statistics.median(tg)/1e9:.1f} TF/s cuBLAS {2*n**3/statistics.median(tc)/1e9:.1f} ratio {r:.3f} {'OK' if ok else 'WRONG'}", flush=True)
