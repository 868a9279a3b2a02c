import sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "examples"))
import numpy as np, cupy as cp, gpukern as gk
import matmul_tensorcore as tc, wide
gk.set_backend("cuda")
n = 4096
a = cp.asarray(np.random.default_rng(0).uniform(-1, 1, (n, n)).astype(np.float16))
b = cp.asarray(np.random.default_rng(1).uniform(-1, 1, (n, n)).astype(np.float16))
c = cp.zeros((n, n), cp.float32)
w = wide.make_wide(gk.float16, 16, 64, 3, 8)
for _ in range(2):
    tc.matmul(a, b, c, n, n, n)
    wide.run_wide(w, a, b, c, n, n, n)
    cp.matmul(a, b)
cp.cuda.Device().synchronize()
