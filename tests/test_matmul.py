"""Matrix multiplication: the flagship example's tiled and naive kernels and a 2-D
array version, against NumPy; and the shared-memory spelling of each dialect."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_source import load_example

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, int32, shared, thread_idx

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


_flagship = load_example("matmul_tiled")
matmul_tiled = _flagship.matmul_tiled
matmul_naive = _flagship.matmul_naive


@gk.kernel
def matmul_tiled_2d(a: Array[float32, 2], b: Array[float32, 2], c: Array[float32, 2], TILE: Const[int]):
    tile_a = shared(float32, (TILE, TILE))
    tile_b = shared(float32, (TILE, TILE))
    m = a.shape[0]
    k = a.shape[1]
    n = b.shape[1]
    tx = thread_idx.x
    ty = thread_idx.y
    row = block_idx.y * TILE + ty
    col = block_idx.x * TILE + tx
    acc = 0.0
    for t in range((k + TILE - 1) // TILE):
        ac = t * TILE + tx
        br = t * TILE + ty
        tile_a[ty, tx] = a[row, ac] if row < m and ac < k else 0.0
        tile_b[ty][tx] = b[br][col] if br < k and col < n else 0.0
        barrier()
        for i in range(TILE):
            acc += tile_a[ty, i] * tile_b[i, tx]
        barrier()
    if row < m and col < n:
        c[row, col] = acc


def _tiles() -> list[int]:
    tiles = [8, 16]
    backends = gk.available_backends()
    if backends:
        gk.set_backend(backends[0])
        try:
            if gk.get_backend().max_group >= 1024:
                tiles.append(32)
        finally:
            gk.set_backend(None)
    return tiles


TILES = _tiles()


def _operands(m: int, n: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return a, b, ref


def _check(c: np.ndarray, ref: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    # relative tolerance 1e-4, measured against the sum of |terms| (cancellation makes |ref| tiny)
    assert c.shape == ref.shape
    assert not np.any(np.isnan(c)), "some outputs were not written"
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    err = np.abs(c.astype(np.float64) - ref)
    assert np.all(err <= 1e-4 * np.maximum(np.abs(ref), scale) + 1e-6), float(err.max())


dims = st.integers(1, 80)


@pytest.mark.parametrize("tile", TILES)
@SETTINGS
@given(m=dims, n=dims, k=dims, seed=st.integers(0, 2**32 - 1))
def test_matmul_tiled_vs_numpy(backend, tile, m, n, k, seed):
    a, b, ref = _operands(m, n, k, seed)
    a0, b0 = a.copy(), b.copy()
    c = np.full(m * n, np.nan, np.float32)
    grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
    matmul_tiled[grid, (tile, tile)](a.ravel(), b.ravel(), c, m, n, k, tile)
    _check(c.reshape(m, n), ref, a, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("tile", [8, 16])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (16, 16, 16), (17, 15, 33), (80, 1, 80), (1, 80, 79), (64, 48, 32)])
def test_matmul_tiled_edge_shapes(backend, tile, m, n, k):
    a, b, ref = _operands(m, n, k, m * 10000 + n * 100 + k)
    c = np.full(m * n, np.nan, np.float32)
    matmul_tiled[((n + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)](a.ravel(), b.ravel(), c, m, n, k, tile)
    _check(c.reshape(m, n), ref, a, b)


@SETTINGS
@given(
    m=dims,
    n=dims,
    k=dims,
    seed=st.integers(0, 2**32 - 1),
    bx=st.sampled_from([4, 8, 16]),
    by=st.sampled_from([1, 4, 8]),
)
def test_matmul_naive_vs_numpy(backend, m, n, k, seed, bx, by):
    a, b, ref = _operands(m, n, k, seed)
    c = np.full(m * n, np.nan, np.float32)
    matmul_naive[((n + bx - 1) // bx, (m + by - 1) // by), (bx, by)](a.ravel(), b.ravel(), c, m, n, k)
    _check(c.reshape(m, n), ref, a, b)


@pytest.mark.parametrize("tile", TILES)
@SETTINGS
@given(m=dims, n=dims, k=dims, seed=st.integers(0, 2**32 - 1))
def test_matmul_tiled_2d_vs_numpy(backend, tile, m, n, k, seed):
    a, b, ref = _operands(m, n, k, seed)
    c = np.full((m, n), np.nan, np.float32)
    matmul_tiled_2d[((n + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)](a, b, c, tile)
    _check(c, ref, a, b)


def test_matmul_device_arrays(backend):
    m, n, k, tile = 40, 24, 56, 8
    a, b, ref = _operands(m, n, k, 7)
    da, db = gk.to_device(a), gk.to_device(b)
    dc = gk.empty((m, n), np.float32)
    matmul_tiled_2d[((n + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)](da, db, dc, tile)
    _check(dc.get(), ref, a, b)
    # chain: (a @ b) @ b.T on the device
    dbt = gk.to_device(np.ascontiguousarray(b.T))
    dd = gk.empty((m, k), np.float32)
    matmul_tiled_2d[((k + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)](dc, dbt, dd, tile)
    c = dc.get()
    ref2 = c.astype(np.float64) @ b.T.astype(np.float64)
    _check(dd.get(), ref2, c, np.ascontiguousarray(b.T))


def _code(src: str) -> str:
    """The C without its trailing '// <python line>' comments."""
    return "\n".join(line.split("//")[0] for line in src.splitlines())


@pytest.mark.parametrize("tile", [8, 16, 32])
def test_matmul_tiled_source_spelling(tile):
    args = (Array[float32], Array[float32], Array[float32], int32, int32, int32, tile)
    cuda = _code(matmul_tiled.source(*args, backend="cuda"))
    ocl = _code(matmul_tiled.source(*args, backend="opencl"))
    assert "__shared__" in cuda and "__syncthreads()" in cuda
    assert "__local" in ocl and "barrier(" in ocl
    assert "__syncthreads" not in ocl and "__shared__" not in ocl
    assert "barrier(" not in cuda.replace("__syncthreads", "")
    assert str(tile) in cuda and str(tile) in ocl
    assert cuda.count("__syncthreads()") == 2 and ocl.count("barrier(") == 2
    if tile != 8:
        assert cuda != matmul_tiled.source(*args[:-1], 8, backend="cuda")


def test_matmul_tiled_2d_source_spelling():
    args = (Array[float32, 2], Array[float32, 2], Array[float32, 2], 16)
    cuda = matmul_tiled_2d.source(*args, backend="cuda")
    ocl = matmul_tiled_2d.source(*args, backend="opencl")
    assert "__shared__" in cuda and "__syncthreads()" in cuda
    assert "__local" in ocl and "barrier(" in ocl


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_tiled_2d_matches_numpy_on_every_backend(data):
    """The same property through gpukern.testing: awkward sizes, every available backend,
    the simulator's race and bounds checks on."""
    from gpukern import testing as gkt

    m, k, n = (data.draw(gkt.sizes(1, 70, tile=8)) for _ in range(3))
    # values of magnitude <= 1: float32 sums of k products then differ from float64 by ~k ulps,
    # while unbounded values would cancel and make any relative tolerance meaningless
    a = data.draw(gkt.arrays(np.float32, (m, k), magnitude=1.0))
    b = data.draw(gkt.arrays(np.float32, (k, n), magnitude=1.0))
    grid = ((n + 7) // 8, (m + 7) // 8)
    gkt.assert_kernel_matches(
        matmul_tiled_2d[grid, (8, 8)],
        lambda a, b, c, tile: {"c": a.astype(np.float64) @ b},
        [a, b, np.zeros((m, n), np.float32), 8],
        rtol=1e-4,
        atol=1e-4,
    )
