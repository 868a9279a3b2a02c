"""Paired timing: old vs new async SGEMM configs against cuBLAS (CuPy events, medians)."""
import sys, pathlib, statistics, importlib.util
root = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "examples"))
import numpy as np, cupy as cp, gpukern as gk
gk.set_backend("cuda")
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
new = load(root / "examples/matmul_fast.py", "mf_new")
old = load(root / ".gpu-exp/matmul_fast_old.py", "mf_old")
sizes = [int(x) for x in sys.argv[1].split(",")]
cfgs = sys.argv[2].split(",")
def paired(fns, reps=15):
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
        for tag, mod in (("old", old), ("new", new)):
            if cfg not in mod.CONFIGS: continue
            c.fill(np.nan)
            tg, tc = paired([lambda: mod.sgemm(a, b, c, n, n, n, config=cfg), cub])
            ok = np.allclose(c.reshape(n, n)[:8].get(), ref, rtol=1e-3, atol=1e-2)
            r = statistics.median(y / x for x, y in zip(tg, tc))
            print(f"n={n} {tag} {cfg}: {2*n**3/statistics.median(tg)/1e9:.1f} TF/s cuBLAS {2*n**3/statistics.median(tc)/1e9:.1f} ratio {r:.3f} {'OK' if ok else 'WRONG'}", flush=True)
