"""Per-launch host time of the driver call: gpukern's ctypes launcher vs CuPy's Cython launchKernel, same function."""
import sys, time, gc, statistics, ctypes
import numpy as np, cupy as cp
sys.path.insert(0, "benchmarks")
import gpukern as gk
gk.set_backend("cuda")
from launch import tiny, CUDA_SRC
from gpukern.backends.cuda_driver import _PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END
from cupy_backends.cuda.api import driver as D
n = np.int32(3)
own = tuple(gk.to_device(np.ones(32, np.float32)) for _ in range(3))
cupys = tuple(cp.ones(32, cp.float32) for _ in range(3))
L = tiny[1, 32]
L(*own, n); L(*own, n)
plan = L.plan
launcher = plan.backend.launcher(plan.variant, plan.grid, plan.block, 0)
fn = plan.backend.compiled(plan.variant)
layout = fn.gk_struct
buf = ctypes.create_string_buffer(layout.size)
nb = ctypes.c_size_t(layout.size)
extra = (ctypes.c_void_p * 5)(_PARAM_BUFFER_POINTER, ctypes.addressof(buf), _PARAM_BUFFER_SIZE, ctypes.addressof(nb), _PARAM_END)
xp = ctypes.addressof(extra)
handle = fn.handle
pack_into = layout.pack_into
cargs = [a.handle for a in own] + [n]
def cy_launch(vals, stream):
    pack_into(buf, 0, *vals)
    D.launchKernel(handle, 1, 1, 1, 32, 1, 1, 0, stream, 0, xp)
raw = cp.RawKernel(CUDA_SRC, "tiny_ref")
x, y, z = cupys
raw((1,), (32,), (x, y, z, n))
cur = cp.cuda.get_current_stream
def m_raw(c):
    for _ in range(c): raw((1,), (32,), (x, y, z, n))
def m_gk(c):
    for _ in range(c): L(*own, n)
def m_gkcp(c):
    for _ in range(c): L(*cupys, n)
def m_ctypes(c):
    for _ in range(c): launcher(cargs, None)
def m_cy(c):
    for _ in range(c): cy_launch(cargs, 0)
def m_cy_direct(c):
    for _ in range(c): D.launchKernel(handle, 1, 1, 1, 32, 1, 1, 0, 0, 0, xp)
def m_stream(c):
    for _ in range(c): cur(0).ptr or 1
methods = dict(raw=m_raw, gk_own=m_gk, gk_cupy=m_gkcp, ctypes_launcher=m_ctypes, cython_launch_packed=m_cy, cython_direct=m_cy_direct, cupy_stream_read=m_stream)
res = {k: [] for k in methods}
gc.disable()
for r in range(25):
    names = list(methods)
    names = names[r % len(names):] + names[:r % len(names)]
    for k in names:
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter(); methods[k](2000); cp.cuda.runtime.deviceSynchronize()
        res[k].append((time.perf_counter() - t) / 2000 * 1e6)
base = statistics.median(res["raw"])
for k, v in res.items():
    print(f"{k:24s} median {statistics.median(v):6.2f} us  min {min(v):6.2f}  / raw {statistics.median(v)/base:.3f}")
