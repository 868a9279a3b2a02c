"""CuPy JIT's newer warp and bit names (``jit.activemask``, ``popc``, ``ffs``, ``match_any_sync``,
``match_all_sync``): gpukern's one definition of each, launched CuPy's way."""

from __future__ import annotations

import numpy as np

from gpukern.cupy import jit


@jit.rawkernel()
def bits(x, out, groups, alike, active):
    i = jit.threadIdx.x
    out[i] = jit.popc(x[i]) + jit.ffs(x[i]) * 100
    groups[i] = jit.match_any_sync(0xFFFFFFFF, x[i] % 3)
    lanes, pred = jit.match_all_sync(0xFFFFFFFF, x[0])
    alike[i] = pred
    active[i] = jit.activemask()


def test_warp_and_bit_names(backend):
    x = np.arange(32, dtype=np.int32)
    out, alike = np.zeros(32, np.int32), np.zeros(32, np.int32)
    groups, active = np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    bits((1,), (32,), (x, out, groups, alike, active))
    ffs = [0 if v == 0 else (v & -v).bit_length() for v in range(32)]
    assert list(out) == [bin(v).count("1") + 100 * f for v, f in zip(range(32), ffs)]
    assert list(groups) == [sum(1 << j for j in range(32) if j % 3 == i % 3) for i in range(32)]
    assert list(alike) == [1] * 32 and list(active) == [0xFFFFFFFF] * 32
