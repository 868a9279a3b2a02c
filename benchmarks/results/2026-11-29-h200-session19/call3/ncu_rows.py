"""One launch of a row plan (after a warm-up) for Nsight Compute: op dtype n plan-fields..."""
import sys
sys.path.insert(0, "examples")
import numpy as np
import gpukern as gk
import rowwise as rw

op, dt, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
how = rw.Plan(*[int(v) for v in sys.argv[4:]]) if len(sys.argv) > 4 else None
T, host = rw.TYPES[dt], rw.host_dtype(dt)
rows = (1 << 28) // n
kern, how = rw.make_rows(op, T, n, how)
x = gk.to_device((np.random.default_rng(0).standard_normal((rows, n)) * 3).astype(host))
y = gk.empty((rows, n), host)
w, b = gk.to_device(np.ones(n, host)), gk.to_device(np.zeros(n, host))
for _ in range(3):
    rw.run(op, kern, how, x, y, w, b)
gk.synchronize()
print(how, getattr(kern, "resident_clusters", None))
