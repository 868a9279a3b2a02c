"""3-D shared and local arrays: ``shared(T, (a, b, c))``, ``local(T, (a, b, c))``, ``s[i, j, k]``."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, Const, atomic_add, barrier, float32, int32, local, shared, thread_idx


@gk.kernel
def k_mirror(a: Array[float32, 3], out: Array[float32, 3], A: Const[int], B: Const[int], C: Const[int]):
    s = shared(float32, (A, B, C))
    r = local(float32, (2, 3, 4))
    x = thread_idx.x
    y = thread_idx.y
    z = thread_idx.z
    s[z, y, x] = a[z, y, x]
    for i in range(2):
        for j in range(3):
            for k in range(4):
                r[i, j, k] = float32(i * 100 + j * 10 + k) + a[z, y, x]
    barrier()
    out[z, y, x] = s[s.shape[0] - 1 - z, y, C - 1 - x] + r[x % 2, y % 3, z % 4]


@gk.kernel
def k_mirror_flat(a: Array[float32, 3], out: Array[float32, 3], A: Const[int], B: Const[int], C: Const[int]):
    """k_mirror with the shared array flattened by hand: the profile must count the same."""
    s = shared(float32, A * B * C)
    r = local(float32, (2, 3, 4))
    x = thread_idx.x
    y = thread_idx.y
    z = thread_idx.z
    s[(z * B + y) * C + x] = a[z, y, x]
    for i in range(2):
        for j in range(3):
            for k in range(4):
                r[i, j, k] = float32(i * 100 + j * 10 + k) + a[z, y, x]
    barrier()
    out[z, y, x] = s[((A - 1 - z) * B + y) * C + C - 1 - x] + r[x % 2, y % 3, z % 4]


def _expected(a: np.ndarray) -> np.ndarray:
    z, y, x = np.indices(a.shape)
    return a[::-1, :, ::-1] + ((x % 2) * 100 + (y % 3) * 10 + z % 4).astype(np.float32) + a


@pytest.mark.parametrize("shape", [(4, 3, 8), (2, 5, 3), (1, 1, 16)])
def test_3d_shared_and_local_arrays(backend, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    out = np.zeros_like(a)
    A, B, C = shape
    k_mirror[1, (C, B, A)](a, out, A, B, C)
    np.testing.assert_allclose(out, _expected(a), rtol=1e-6)


def test_profile_of_3d_shared_indexes_like_the_flat_array():
    a = np.random.default_rng(0).standard_normal((4, 3, 8)).astype(np.float32)
    out = np.zeros_like(a)
    nd = gk.profile(k_mirror[1, (8, 3, 4)], a, out, 4, 3, 8).total
    flat = gk.profile(k_mirror_flat[1, (8, 3, 4)], a, out, 4, 3, 8).total
    assert nd.shared_store_elems == flat.shared_store_elems == a.size
    assert nd.shared_load_elems == flat.shared_load_elems == a.size
    assert (nd.shared_load_wavefronts, nd.shared_load_conflicts) == (
        flat.shared_load_wavefronts,
        flat.shared_load_conflicts,
    )
    assert nd.shared_store_wavefronts == flat.shared_store_wavefronts


@gk.func
def bump(s, i: int32, j: int32, k: int32):
    atomic_add(s, (i, j, k), 1)


@gk.kernel
def k_hist3(v: Array[int32], out: Array[int32, 3]):
    h = shared(int32, (2, 3, 4))
    t = thread_idx.x
    if t < 24:
        h[t // 12, (t // 4) % 3, t % 4] = 0
    barrier()
    x = v[t]
    bump(h, x % 2, x % 3, x % 4)  # a 3-D shared array passed to a @func, an atomic with a 3-D index
    barrier()
    if t < 24:
        out[t // 12, (t // 4) % 3, t % 4] = h[t // 12, (t // 4) % 3, t % 4]


def test_atomics_on_a_3d_shared_array_in_a_func(backend):
    v = np.random.default_rng(5).integers(0, 1000, 64).astype(np.int32)
    out = np.zeros((2, 3, 4), np.int32)
    k_hist3[1, 64](v, out)
    want = np.zeros((2, 3, 4), np.int32)
    np.add.at(want, (v % 2, v % 3, v % 4), 1)
    np.testing.assert_array_equal(out, want)


def test_3d_index_out_of_bounds_in_the_last_dimension(on_simulator):
    @gk.kernel
    def k(out: Array[float32]):
        s = shared(float32, (2, 2, 4))
        s[0, 1, thread_idx.x] = 1.0
        out[0] = 0.0

    with pytest.raises(gk.OutOfBoundsError, match=r"\(0, 1, 4\).*shape \(2, 2, 4\) \(dimension 2\)"):
        k[1, 5](np.zeros(1, np.float32))


def test_constant_3d_index_out_of_bounds_is_a_compile_error():
    @gk.kernel
    def k(out: Array[float32]):
        s = local(float32, (2, 2, 4))
        s[0, 2, 0] = 1.0
        out[0] = s[0, 0, 0]

    with pytest.raises(gk.KernelTypeError, match="dimension 1 of size 2"):
        k[1, 1](np.zeros(1, np.float32))
