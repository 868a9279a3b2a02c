"""Monte Carlo path step ported from Numba-CUDA: numba/cuda/tests/cudapy/test_montecarlo.py (NVIDIA/numba-cuda).

The source only compiles ``step``; here it also runs, against NumPy. Spelling: ``cuda.grid(1)`` ->
``global_id(0)``.
"""

from __future__ import annotations

import math

import numpy as np

import gpukern as gk
from gpukern import global_id


# Source: test_montecarlo.py, test_montecarlo (step)
@gk.kernel
def step(last, paths, dt, c0, c1, normdist):
    i = global_id(0)
    if i >= paths.shape[0]:
        return
    noise = normdist[i]
    paths[i] = last[i] * math.exp(c0 * dt + c1 * noise)


def test_montecarlo(backend):
    n = 100
    g = np.random.default_rng(0)
    last = g.random(n) + 1.0
    normdist = g.standard_normal(n)
    paths = np.zeros(n)
    dt, r, sigma = 1.0 / 52, 0.05, 0.2
    c0, c1 = (r - 0.5 * sigma**2), sigma * math.sqrt(dt)
    step[4, 32](last, paths, dt, c0, c1, normdist)  # 128 threads for 100 paths: the guard returns early
    np.testing.assert_allclose(paths, last * np.exp(c0 * dt + c1 * normdist), rtol=1e-14)
