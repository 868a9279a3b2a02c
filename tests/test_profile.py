"""The memory-traffic profiler: exact counts on hand-counted kernels, and the tiled-matmul claims."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, global_id, int32, kernel, shared, thread_idx

N = 1024


@kernel
def copy(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i] = x[i]


@kernel
def strided_copy(x: Array[float32], y: Array[float32], n: int32, STRIDE: Const[int]):
    i = global_id(0)
    if i < n:
        y[i] = x[i * STRIDE]


@kernel
def broadcast(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i] = x[0]


@kernel
def shared_column(y: Array[float32]):
    s = shared(float32, (32, 32))
    t = thread_idx.x
    s[0, t] = float32(t)  # a row: no conflict
    barrier()
    y[t] = s[t, 0] + s[0, 0]  # a column: 32-way conflict; one word: broadcast


@kernel
def transpose(x: Array[float32, 2], y: Array[float32, 2], T: Const[int], PAD: Const[int]):
    tile = shared(float32, (T, T + PAD))
    tx, ty = thread_idx.x, thread_idx.y
    r = block_idx.y * block_dim.y + ty
    c = block_idx.x * block_dim.x + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    barrier()
    r2 = block_idx.x * block_dim.x + ty
    c2 = block_idx.y * block_dim.y + tx
    if r2 < y.shape[0] and c2 < y.shape[1]:
        y[r2, c2] = tile[tx, ty]  # TRANSPOSED READ


def data(n=N):
    return np.random.default_rng(0).standard_normal(n, dtype=np.float32) + 2


def test_coalesced_copy():
    x, y = data(), np.zeros(N, np.float32)
    r = gk.profile(copy[N // 256, 256], x, y, N)
    t = r.total
    assert (t.global_load_elems, t.global_load_bytes, t.global_load_sectors) == (N, 4 * N, N * 4 // 32)
    assert (t.global_store_elems, t.global_store_sectors) == (N, N * 4 // 32)
    assert r.summary()["load_efficiency"] == 1.0
    np.testing.assert_array_equal(y, x)  # it ran, too


def test_strided_copy_moves_a_sector_per_thread():
    x, y = data(N * 8), np.zeros(N, np.float32)
    r = gk.profile(strided_copy[N // 256, 256], x, y, N, 8)  # 32-byte stride: one sector each
    assert r.total.global_load_elems == N and r.total.global_load_sectors == N
    assert r.summary()["load_efficiency"] == pytest.approx(4 / 32)
    assert r.total.global_store_sectors == N * 4 // 32


def test_partial_warp_and_bounds():
    n = 1000  # the last warp has 8 threads
    x, y = data(n), np.zeros(n, np.float32)
    r = gk.profile(copy[4, 256], x, y, n)
    assert r.total.global_load_elems == n
    assert r.total.global_load_sectors == 31 * 4 + 1  # 31 full warps; 8 floats = one sector


def test_broadcast_read_moves_one_sector_per_warp():
    x, y = data(), np.zeros(N, np.float32)
    r = gk.profile(broadcast[N // 128, 128], x, y, N)
    assert r.total.global_load_elems == N and r.total.global_load_sectors == N // 32


def test_shared_conflicts_and_broadcast():
    y = np.zeros(32, np.float32)
    r = gk.profile(shared_column[1, 32], y)
    t = r.total
    assert t.shared_store_elems == 32 and t.shared_store_conflicts == 0
    assert t.shared_load_elems == 64
    assert t.shared_load_conflicts == 31  # the column: 32 words in bank 0; the broadcast: none
    assert t.shared_load_wavefronts == 32 + 1
    assert t.barriers == 1
    np.testing.assert_array_equal(y, np.zeros(32))


@pytest.mark.parametrize(("n", "conflicts_per_warp"), [(64, 31), (70, 31)])
def test_unpadded_transpose_conflicts_padded_does_not(n, conflicts_per_warp):
    x = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    blocks = (n + 31) // 32
    y = np.zeros((n, n), np.float32)
    plain = gk.profile(transpose[(blocks, blocks), (32, 32)], x, y, 32, 0)
    np.testing.assert_array_equal(y, x.T)
    y[:] = 0
    padded = gk.profile(transpose[(blocks, blocks), (32, 32)], x, y, 32, 1)
    np.testing.assert_array_equal(y, x.T)
    assert padded.total.shared_load_conflicts == 0 and padded.total.shared_store_conflicts == 0
    assert plain.total.shared_store_conflicts == 0
    # every warp reads a tile column: 32 distinct words in one bank (with n=70 the edge
    # blocks have fewer active threads in the warp, hence fewer words)
    line = plain.lines[max(plain.lines, key=lambda k: plain.lines[k].shared_load_elems)]
    if n % 32 == 0:
        assert line.shared_load_conflicts == (n // 32) ** 2 * 32 * conflicts_per_warp
    else:
        assert line.shared_load_conflicts > 0
    assert plain.total.shared_load_elems == padded.total.shared_load_elems == n * n


def load_example():
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "matmul_tiled.py"
    spec = importlib.util.spec_from_file_location("matmul_tiled_for_profile", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("tile", [8, 16, 32])
def test_tiled_matmul_reads_tile_times_less_without_conflicts(tile):
    m = load_example()
    n = 256
    rng = np.random.default_rng(2)
    a, b = rng.random(n * n, dtype=np.float32) + 1, rng.random(n * n, dtype=np.float32) + 1
    c = np.zeros(n * n, np.float32)
    grid = ((n + tile - 1) // tile,) * 2
    tiled = gk.profile(m.matmul_tiled[grid, (tile, tile)], a, b, c, n, n, n, tile)
    naive = gk.profile(m.matmul_naive[grid, (tile, tile)], a, b, c, n, n, n)
    ratio = naive.total.global_load_elems / tiled.total.global_load_elems
    assert abs(ratio / tile - 1) < 0.05
    assert naive.total.global_load_elems == 2 * n**3
    assert tiled.total.shared_load_conflicts == tiled.total.shared_store_conflicts == 0
    assert tiled.total.flops == naive.total.flops == 2 * n**3
    # requests and sectors differ: the naive kernel's a[row * k + i] is one address per warp row
    assert naive.total.global_load_sectors * 32 < naive.total.global_load_bytes


def test_report_views(tmp_path):
    x, y = data(), np.zeros(N, np.float32)
    r = gk.profile(copy[N // 256, 256], x, y, N, warp_size=16)
    assert r.total.global_load_sectors == N // 16 * 2  # 16 floats = 2 sectors per warp
    text = str(r)
    assert "global loads" in text and "bank conflicts" in text and "warp 16" in text
    view = r.source_view()
    assert "y[i] = x[i]" in view
    path = tmp_path / "p.json"
    r.save(str(path))
    loaded = json.loads(path.read_text())
    assert loaded["kernel"] == "copy" and loaded["parameters"]["warp_size"] == 16
    assert loaded["total"]["global_load_elems"] == N
