"""Session 17: do the streamed rows' WRONG configurations (call 9) stay wrong now that barrier() fences
the async proxy in kernels with bulk copies?  Every row checked against float64 NumPy.

The kernel is the reverted one, not kept in the tree twice: make it with
    git show fa60e7b:examples/rowwise.py > .gpu-scratch/rowwise_stream.py
and, since the backend's multiprocessor count went with it, read ``sms`` there as
``getattr(gk.get_backend(), "multiprocessors", None) or 132`` (the H200's)."""
import importlib.util, sys
import numpy as np
import gpukern as gk

spec = importlib.util.spec_from_file_location("rws", ".gpu-scratch/rowwise_stream.py")
rw = importlib.util.module_from_spec(spec); spec.loader.exec_module(rw)
gk.set_backend("cuda")
if "--unfenced" in sys.argv:  # the emitter as before this session's fence: barrier() without it
    from gpukern.codegen import emitter as _em
    _orig = _em.Emitter.stmt_Barrier
    _fence = 'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory"); '

    def _unfenced(self, s, depth):
        return [line.replace(_fence, "") for line in _orig(self, s, depth)]

    _em.Emitter.stmt_Barrier = _unfenced
for op, n, m in [("softmax", 65536, 4), ("softmax", 131072, 4), ("rmsnorm", 131072, 4), ("softmax", 65536, 2), ("layernorm", 262144, 1)]:
    how = rw.plan(n)._replace(stream=True, blocks_per_sm=m)
    kern, how = rw.make_rows(op, gk.float32, n, how)
    src = kern.source(gk.Array[gk.float32, 2], gk.Array[gk.float32, 2], gk.Array[gk.float32], gk.Array[gk.float32], gk.float32)
    fenced = "fence.proxy.async.shared::cta;\\n\" ::: \"memory\"); __syncthreads();" in src
    rows = (1 << 27) // n
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, n)) * 3).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy = gk.to_device(x), gk.to_device(np.full_like(x, np.nan))
    bad_runs = 0
    ref = rw.reference(op, x, w, b)
    rtol, atol = rw.tolerance(op, gk.float32, n)
    for rep in range(3):
        rw.run(op, kern, how, dx, dy, gk.to_device(w), gk.to_device(b))
        y = dy.get()
        ok = np.isclose(y.astype(np.float64), ref, rtol=rtol, atol=atol).all(axis=1)
        bad_runs += int(not ok.all())
    print(f"{op} n={n} blocks_per_sm={m} fenced={fenced}: runs with a wrong row {bad_runs} of 3 ({rows} rows each)", flush=True)
