"""Where a planned launch's host time goes on the GPU machine: each part timed alone (best of 7
repeats of 20000 calls, an empty call's cost subtracted), for gpukern arrays, CuPy arrays and
PyTorch tensors: the fast path with a no-op launcher, the launcher alone, and the reads a
foreign array costs."""
import sys, timeit, weakref
import numpy as np, cupy as cp, torch
sys.path.insert(0, "benchmarks")
import gpukern as gk
from gpukern import plan as P
from gpukern.backends import selection
gk.set_backend("cuda")
from launch import tiny

N = 20000
def best(f):
    return min(timeit.repeat(f, number=N, repeat=7)) / N * 1e9
empty = best(lambda: None)
def show(name, f):
    print(f"{name:44s} {best(f) - empty:8.1f} ns")

n = np.int32(3)
own = tuple(gk.to_device(np.ones(32, np.float32)) for _ in range(3)) + (n,)
cupys = tuple(cp.ones(32, cp.float32) for _ in range(3)) + (n,)
torchs = tuple(torch.ones(32, device="cuda") for _ in range(3)) + (n,)
noop = lambda c, s: None
for name, args in (("gpukern arrays", own), ("CuPy arrays", cupys), ("PyTorch tensors", torchs)):
    L = tiny[1, 32]
    L(*args); L(*args)
    plan = L.plan
    stub = P._fast_path(4, selection, plan.backend, plan.tests, plan.slots, noop, None, {}, "tiny")
    show(f"fast path, launch stubbed: {name}", lambda: stub(args))
    show(f"launch(*args), real: {name}", lambda: L(*args))
    launcher = plan.backend.launcher(plan.variant, plan.grid, plan.block, 0)
    cargs = [a.handle for a in own[:3]] + [n]
    show("  the launcher alone, default stream", lambda: launcher(cargs, None))
    torch.cuda.synchronize(); cp.cuda.runtime.deviceSynchronize()
a = cupys[0]
cur = cp.cuda.get_current_stream
show("cupy get_current_stream().ptr", lambda: cur().ptr)
show("cupy a.data.ptr", lambda: a.data.ptr)
show("cupy a.ndim", lambda: a.ndim)
show("cupy a._c_contiguous", lambda: a._c_contiguous)
show("cupy a.dtype", lambda: a.dtype)
show("cupy a.data.device_id", lambda: a.data.device_id)
r = weakref.ref(a)
show("weakref() is a", lambda: r() is a)
show("type(a) is cls", lambda: type(a) is cp.ndarray)
t = torchs[0]
raw = torch._C._cuda_getCurrentRawStream
show("torch current raw stream(0)", lambda: raw(0))
show("torch t.data_ptr()", lambda: t.data_ptr())
show("torch t.is_contiguous()", lambda: t.is_contiguous())
cp.cuda.runtime.deviceSynchronize()
L = tiny[1, 32]
L(*cupys); L(*cupys)
plan = L.plan
stub = P._fast_path(4, selection, plan.backend, plan.tests, plan.slots, noop, None, {}, "tiny")
print(stub.source)
stub(cupys); stub(cupys)
g = stub.__globals__
for k, v in g.items():
    if k.startswith("last"):
        print(k, v, v[0][0]() is not None)
for k in sorted(g):
    if k.startswith(("check", "pointer", "current")):
        f = g[k]
        show(f"  {k}(a)", lambda f=f: f(a))
show("  weakref.ref(a)", lambda: weakref.ref(a))
cp.cuda.runtime.deviceSynchronize()
show("stub(cupys), hits established", lambda: stub(cupys))
src = stub.source
variants = {
    "no stream read": src.replace("current_14(a2)", "None"),
    "no ndim reads": src.replace("a0.ndim != 1", "False").replace("a1.ndim != 1", "False").replace("a2.ndim != 1", "False"),
}
for vname, text in variants.items():
    ns = dict(g)
    exec(text, ns)
    f = ns["fast"]
    f(cupys)
    show(f"  variant: {vname}", lambda f=f: f(cupys))
