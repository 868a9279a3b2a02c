import cProfile, pstats, timeit, sys
import pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))  # benchmarks/
import numpy as np, torch, cupy, gpukern as gk
import launch as L
gk.set_backend("cuda")
n = 1024
a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
tx, ty, tz = (torch.as_tensor(v, device="cuda") for v in (a, a, np.zeros_like(a)))
gx, gy, gz = (cupy.asarray(v) for v in (a, a, np.zeros_like(a)))
k = L.tiny[1, L.BLOCK]
for _ in range(100): k(tx, ty, tz, n); k(gx, gy, gz, n)
torch.cuda.synchronize()
N = 20000
for name, args in (("torch", (tx, ty, tz, n)), ("cupy", (gx, gy, gz, n))):
    t = timeit.timeit(lambda: k(*args), number=N) / N
    torch.cuda.synchronize()
    print(f"{name}: {t*1e6:.2f} us per launch (host)")
raw = torch._C._cuda_getCurrentRawStream
T = type(tx)
for name, f in (("data_ptr", lambda: tx.data_ptr()), ("dtype", lambda: tx.dtype), ("dim", lambda: T.dim(tx)),
                ("get_device", lambda: T.get_device(tx)), ("is_contiguous", lambda: T.is_contiguous(tx)),
                ("raw stream", lambda: raw(0)), ("cupy ptr", lambda: gx.data.ptr), ("cupy stream", lambda: cupy.cuda.get_current_stream().ptr)):
    print(f"{name}: {timeit.timeit(f, number=200000)/200000*1e9:.0f} ns")
pr = cProfile.Profile(); pr.enable()
for _ in range(N): k(tx, ty, tz, n)
pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
