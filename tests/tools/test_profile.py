"""The memory-traffic profiler: exact counts on hand-counted kernels, and the tiled-matmul claims."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys
from typing import Any

import numpy as np
import pytest
from kernel_source import load_example

import gpukern as gk
from gpukern import (
    Array,
    Const,
    barrier,
    block_dim,
    block_idx,
    float32,
    float64,
    global_id,
    int32,
    kernel,
    shared,
    thread_idx,
    vload,
    vstore,
)

N = 1024


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_profile_vs_ncu():
    """benchmarks/profile_vs_ncu.py, whose kernels are the ones measured with Nsight Compute: the
    tests here count those same kernels, not copies of them."""
    where = str(ROOT / "benchmarks")
    sys.path.insert(0, where)  # the script's own helpers (_common)
    try:
        spec = importlib.util.spec_from_file_location("profile_vs_ncu_for_test", f"{where}/profile_vs_ncu.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(where)
    return module


BENCH = _load_profile_vs_ncu()
copy_vec, hist_global, hist_shared = BENCH.copy_vec, BENCH.add_at, BENCH.shared_hist


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


@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@pytest.mark.parametrize("tile", [8, 16, 32])
def test_tiled_matmul_reads_tile_times_less_without_conflicts(tile):
    m = load_example("matmul_tiled")
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


@gk.kernel
def complex_arith(a: Array[gk.complex64], b: Array[gk.complex64], c: Array[gk.complex64], d: Array[float32]):
    i = gk.global_id(0)
    c[i] = a[i] * b[i] + a[i] / b[i] - a[i]
    d[i] = abs(a[i]) + a[i].real + b[i].conjugate().imag


def test_complex_arithmetic_counts_the_operations_of_its_c():
    """A complex * is 6 float operations (4 products, 2 sums), / 10 (Smith's algorithm), + and -
    2; abs is one math function; taking parts or conjugating is no arithmetic."""
    n = 64
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(n) + 1j * rng.standard_normal(n) for _ in range(2))
    a, b = a.astype(np.complex64), b.astype(np.complex64)
    c, d = np.zeros(n, np.complex64), np.zeros(n, np.float32)
    r = gk.profile(complex_arith[2, 32], a, b, c, d)
    first = complex_arith.fn.__code__.co_firstlineno
    assert r.lines[first + 3].flops == n * (6 + 10 + 2 + 2)
    assert r.lines[first + 4].flops == n * (1 + 1 + 1)  # abs, and the two float sums
    assert r.total.flops == n * 23
    np.testing.assert_allclose(c, a * b + a / b - a, rtol=1e-5)


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


# ---------------------------------------------------------------- vector accesses: one request a warp
@pytest.mark.parametrize("width", [1, 2, 4])
def test_vector_copy_moves_the_sectors_of_a_scalar_copy(width):
    n = 4096
    x, y = data(n), np.zeros(n, np.float32)
    threads = n // width
    launch = copy[threads // 256, 256] if width == 1 else copy_vec[threads // 256, 256]
    r = gk.profile(launch, x, y, n) if width == 1 else gk.profile(launch, x, y, n, width)
    np.testing.assert_array_equal(y, x)
    t = r.total
    assert t.global_load_sectors == t.global_store_sectors == n * 4 // 32  # 16 sectors per 512 bytes
    assert t.global_load_requests == t.global_store_requests == threads // 32  # one per warp instruction
    assert (t.global_load_elems, t.global_load_bytes) == (n, 4 * n)
    assert r.summary()["load_efficiency"] == r.summary()["store_efficiency"] == 1.0


# ---------------------------------------------------------------- shared vector accesses: the phase rule
@kernel
def shared_vec(out: Array[float32], W: Const[int], STRIDE: Const[int], ACTIVE: Const[int]):
    s = shared(float32, 2048)
    t = thread_idx.x
    at = W * (t * STRIDE % (2048 // W))
    if t < ACTIVE:
        if W == 4:
            vstore(s, at, (1.0, 2.0, 3.0, 4.0))
            v = vload(s, at, 4)
            out[t] = v[0]
        else:
            vstore(s, at, (1.0, 2.0))
            u = vload(s, at, 2)
            out[t] = u[1]


@pytest.mark.parametrize(
    ("width", "stride", "active", "wavefronts", "conflicts"),
    [
        (4, 1, 32, 4, 0),  # 512 contiguous bytes: 4 phases of 8 threads, each 128 bytes on 32 banks
        (4, 2, 32, 8, 4),  # 32 bytes apart: threads t and t+4 of a phase share a bank group
        (4, 8, 32, 32, 28),  # 128 bytes apart: a phase's 8 threads all on banks 0-3
        (4, 0, 32, 4, 0),  # one float4 for all: a broadcast in each phase
        (4, 1, 8, 1, 0),  # 8 threads: one phase
        (4, 1, 12, 2, 0),  # 12 threads: a phase and a half
        (2, 1, 32, 2, 0),  # float2: 2 phases of 16 threads
        (2, 2, 32, 4, 2),  # 16 bytes apart: threads t and t+8 of a half-warp collide
        (2, 16, 32, 32, 30),  # 128 bytes apart: a half-warp's 16 threads on banks 0-1
    ],
)
def test_shared_vector_wavefronts_follow_the_phase_rule(width, stride, active, wavefronts, conflicts):
    out = np.zeros(32, np.float32)
    t = gk.profile(shared_vec[1, 32], out, width, stride, active).total
    assert (t.shared_store_wavefronts, t.shared_store_conflicts) == (wavefronts, conflicts)
    if stride:  # (one address for all: loads pair their phases; checked against ncu's counts below)
        assert (t.shared_load_wavefronts, t.shared_load_conflicts) == (wavefronts, conflicts)
    assert t.shared_load_elems == t.shared_store_elems == active * width


@kernel
def shared_doubles(out: Array[float64], STRIDE: Const[int]):
    s = shared(float64, 1024)
    t = thread_idx.x
    s[t * STRIDE] = 1.0
    barrier()
    out[t] = s[t * STRIDE]


@pytest.mark.parametrize(("stride", "wavefronts"), [(1, 2), (2, 4), (16, 32)])
def test_shared_64_bit_scalars_are_served_by_half_warps(stride, wavefronts):
    t = gk.profile(shared_doubles[1, 32], np.zeros(32), stride).total
    assert t.shared_load_wavefronts == t.shared_store_wavefronts == wavefronts
    assert t.shared_load_conflicts == wavefronts - 2


# ---------------------------------------------------------------- atomics
def test_global_atomics_are_counted_apart_from_loads_and_stores():
    n = 1000  # 32 warps, the last with 8 threads
    x = (np.arange(n) * 7 % 64).astype(np.int32)  # a warp's 32 values span bins: 8 bins a sector
    hist = np.zeros(64, np.int32)
    t = gk.profile(hist_global[4, 256], x, hist, n).total
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=64))
    assert (t.global_atomic_requests, t.global_atomic_elems) == (32, n)
    sectors = sum(len(np.unique(x[w * 32 : (w + 1) * 32] // 8)) for w in range(32))
    assert t.global_atomic_sectors == sectors
    assert t.global_load_elems == n and t.global_store_elems == 0  # the load of x[i]; no plain store
    hist[:] = 0
    x[:] = 5  # every thread on one element: the updates take turns, a sector each (as ncu counts)
    t = gk.profile(hist_global[4, 256], x, hist, n).total
    assert (t.global_atomic_requests, t.global_atomic_sectors, hist[5]) == (32, n, n)


def test_global_atomic_sectors_follow_the_measured_rule():
    """Per warp and sector: the most updates of one element of it (H100, ncu; profile_vs_ncu.py)."""
    n = 1000
    x = np.random.default_rng(5).binomial(63, 0.3, n).astype(np.int32)  # hot bins, shared sectors
    t = gk.profile(hist_global[4, 256], x, np.zeros(64, np.int32), n).total
    expected = 0
    for w in range(0, n, 32):
        values, counts = np.unique(x[w : w + 32], return_counts=True)
        for sector in np.unique(values // 8):
            expected += counts[values // 8 == sector].max()
    assert t.global_atomic_sectors == expected
    assert expected > len(range(0, n, 32)) * 2  # the data do make updates take turns


def test_shared_atomics_are_counted_as_shared_accesses():
    x = np.random.default_rng(3).integers(0, 16, 256).astype(np.int32)
    hist = np.zeros(16, np.int32)
    r = gk.profile(hist_shared[2, 128], x, hist, 16)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=16))
    t = r.total
    assert (t.shared_atomic_elems, t.shared_atomic_requests) == (256, 8)
    assert (t.global_atomic_elems, t.global_atomic_requests, t.global_atomic_sectors) == (32, 2, 4)
    assert "shared atomics" in str(r) and "atom" in r.source_view()


# the runs of benchmarks/profile_vs_ncu.py on an H100, in order: a later run's cases (it may measure
# some only, GPUKERN_PROFILE_CASES) replace the earlier's (the TF32 fragments' own code, 2026-11-24;
# sm_90's warpgroup kernels, gk.wgmma, 2026-11-24; matmul_fast's kernel with its stores among its
# multiply-adds, 2026-11-24)
MEASURED = [
    ROOT / "benchmarks" / "results" / "2026-11-23-h100-issue17b" / "profile_vs_ncu.json",
    ROOT / "benchmarks" / "results" / "2026-11-24-h100-tf32" / "profile_vs_ncu.json",
    ROOT / "benchmarks" / "results" / "2026-11-24-h100-wgmma" / "profile_vs_ncu.json",
    ROOT / "benchmarks" / "results" / "2026-11-24-h100-sgemm" / "profile_vs_ncu.json",
    # sm_90's bulk copies (TMA loads and stores, multicast, cp.async.bulk), with their counters: H200
    ROOT / "benchmarks" / "results" / "2026-11-28-h200-session15" / "profile_vs_ncu.json",
]


def _measured() -> dict[str, Any]:
    """The cases of the MEASURED runs, each from the last run that measured it, with the counters
    that run compared (a later run may compare more)."""
    runs = [json.loads(p.read_text()) for p in MEASURED]
    cases = {c["case"]: {**c, "compared": r["compared"]} for r in runs for c in r["cases"]}
    compared = sorted({k for r in runs for k in r["compared"]})
    return {"compared": compared, "cases": list(cases.values())}


@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
def test_the_profiler_counts_what_ncu_measured(capsys):
    """Every case of benchmarks/profile_vs_ncu.py, run here, gives Nsight Compute's counts of the
    same launches on an H100, every compared counter of every case."""
    bench = BENCH
    assert bench.main(["--sim-only"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    rows = {label: values for label, *values in (re.split(r"\s{2,}", line.strip()) for line in lines)}
    assert len(rows) == len(bench.cases()) and rows["float4 copy n=4096"][1] == "512"  # load sectors
    measured = _measured()
    # the simulator's counts, as --sim-only printed them (one run of every case, not two)
    compared = list(bench.COMPARED)
    sim = {label: dict(zip(compared, (int(v.replace(",", "")) for v in values))) for label, values in rows.items()}
    assert sorted(sim) == sorted(r["case"] for r in measured["cases"])
    assert len(measured["compared"]) == len(bench.COMPARED)
    for r in measured["cases"]:
        assert not r["differs"], r["case"]
        for k in r["compared"]:
            if bench.not_modelled(r["case"], k):  # documented there: ncu counts more, by at most so much
                assert bench.explained(r["case"], k, sim[r["case"]][k], r["ncu"][k]), (r["case"], k, r["ncu"][k])
            else:
                assert sim[r["case"]][k] == r["ncu"][k], (r["case"], k, r["ncu"][k])


@gk.kernel
def bf16_fragment_from_shared(x: gk.Array[gk.bfloat16, 2], out: gk.Array[gk.float32, 2]):
    s = gk.shared(gk.bfloat16, (16, 16))
    t = gk.thread_idx.x
    for e in range(t, 256, 32):
        s[e // 16, e % 16] = x[e // 16, e % 16]
    gk.barrier()
    fa = gk.fragment("a", 16, 16, 16, gk.bfloat16)
    fb = gk.fragment("b", 16, 16, 16, gk.bfloat16)
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    gk.load_matrix(fa, s, (0, 0))
    gk.fill_fragment(fb, 1.0)
    acc = gk.mma(fa, fb, acc)
    gk.store_matrix(out, (0, 0), acc)


def test_16_bit_pairs_in_shared_memory_are_one_bank_word_each():
    """wmma moves a bfloat16 tile in shared memory in 32-bit pairs (measured with ncu): with rows 32
    bytes apart, a warp's pair load spans 8 rows x 16 bytes, two distinct words in each bank it
    touches, so 2 wavefronts an instruction, 8 for the 4 instructions of the tile, 4 of them
    conflicts.  (The profiler once counted each 16-bit element as a bank word: 16 and 12.)"""
    rng = np.random.default_rng(5)
    x = gk.bfloat16.bits(rng.uniform(-1, 1, (16, 16)).astype(np.float32))
    out = np.zeros((16, 16), np.float32)
    r = gk.profile(bf16_fragment_from_shared[1, 32], x, out)
    rows = gk.bfloat16.floats(x).astype(np.float64)
    np.testing.assert_allclose(out, np.repeat(rows.sum(axis=1, keepdims=True), 16, axis=1), rtol=1e-6)
    t = r.total
    assert (t.shared_load_wavefronts, t.shared_load_conflicts) == (8, 4)


# ---------------------------------------------------------------- DRAM traffic (first touches)
@gk.kernel
def k_dram(x: gk.Array[gk.float32], y: gk.Array[gk.float32], w: gk.Array[gk.float32], h: gk.Array[gk.int32]):
    i = gk.global_id(0)
    v = gk.vload(x, 4 * i, 4)
    y[i] = v[0] + v[1] + v[2] + v[3] + w[i % 8]  # w: 8 elements every thread reads (one sector)
    y[i] = y[i] * 2.0  # read after its write: no DRAM read, and the sector is written once
    gk.atomic_add(h, i % 16, 1)  # 64 bytes: two sectors read and written


def test_dram_bytes_count_each_sector_once():
    n = 256
    report = gk.profile(k_dram[n // 64, 64], np.ones(4 * n, np.float32), np.zeros(n, np.float32),
                        np.ones(8, np.float32), np.zeros(16, np.int32))  # fmt: skip
    t = report.total
    assert t.dram_read_bytes == 4 * n * 4 + 32 + 64  # x once, w's sector once, h's two sectors
    assert t.dram_write_bytes == n * 4 + 64  # y once, h once
    assert "DRAM traffic" in str(report)
    lines = {k: c.dram_read_bytes for k, c in report.lines.items() if c.dram_read_bytes}
    assert sorted(lines.values()) == sorted([4 * n * 4, 32, 64])  # each at the line that first touched it


@gk.kernel
def k_bulk_rows(x: gk.Array[gk.float32, 2], y: gk.Array[gk.float32, 2]):
    """Each block copies its row into shared memory by one cp.async.bulk, then stores it doubled."""
    row = gk.shared(gk.float32, 256)
    bar = gk.shared(gk.mbarrier, 1)
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bar[0], 1)
    gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bar[0], 256 * 4)
        gk.bulk_load(row[0], x[gk.block_idx.x, 0], 256, bar[0])
    gk.mbarrier_wait(bar[0], 0)
    y[gk.block_idx.x, t] = row[t] * 2.0


@gk.kernel
def k_tma_rows(x: gk.Array[gk.float32, 2], y: gk.Array[gk.float32, 2]):
    """Each block loads a box of 2 x 128 by TMA (the last box half past the end: zero filled)."""
    tile = gk.shared(gk.float32, (2, 128))
    bar = gk.shared(gk.mbarrier, 1)
    xmap = gk.tensor_map(x, (2, 128))
    t = gk.thread_idx.x
    if t == 0:
        gk.mbarrier_init(bar[0], 1)
    gk.fence_mbarrier_init()
    gk.barrier()
    if t == 0:
        gk.mbarrier_arrive_expect_tx(bar[0], gk.box_bytes(xmap))
        gk.tma_load(tile[0, 0], xmap, (2 * gk.block_idx.x, 0), bar[0])
    gk.mbarrier_wait(bar[0], 0)
    if 2 * gk.block_idx.x + t // 128 < x.shape[0]:
        y[2 * gk.block_idx.x + t // 128, t % 128] = tile[t // 128, t % 128]


def test_bulk_copies_count_their_global_reads_as_dram_traffic():
    """cp.async.bulk and TMA loads read global memory through no load instruction: the DRAM bytes
    count them as any first touch (benchmarks/dram_vs_ncu.py's staged row kernels read their rows
    this way); a box's zero fill past the array's edge reads nothing."""
    x = np.random.default_rng(1).standard_normal((4, 256)).astype(np.float32)
    y = np.zeros_like(x)
    t = gk.profile(k_bulk_rows[4, 256], x, y).total
    np.testing.assert_array_equal(y, 2 * x)
    assert (t.dram_read_bytes, t.dram_write_bytes) == (x.nbytes, y.nbytes)
    x = np.random.default_rng(2).standard_normal((5, 128)).astype(np.float32)
    y = np.zeros_like(x)
    t = gk.profile(k_tma_rows[3, 256], x, y).total
    np.testing.assert_array_equal(y, x)
    assert (t.dram_read_bytes, t.dram_write_bytes) == (x.nbytes, y.nbytes)
