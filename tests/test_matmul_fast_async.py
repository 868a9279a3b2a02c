"""examples/matmul_fast.py's ``sgemm_async_kernel`` on the simulator, against NumPy in float64.

Every async configuration of ``CONFIGS`` at a size that is not a multiple of its tiles (partial
tiles in m, n and k), and with 2, 3 and 4 stages at multiples of the tiles over more k steps than
stages; the scalar path (n not a multiple of 4) for two; a small configuration, blocks in groups
of 2 tile rows, at sizes drawn by Hypothesis; the autotuner choosing between both kernels; the
CUDA C's asynchronous copies.  The simulator reports any copy touched before its wait, or read
by another thread before a barrier, as a data race.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_source import load_example

import gpukern as gk
from gpukern import Array, float32, int32

fast = load_example("matmul_fast")
ASYNC = [name for name, cfg in fast.CONFIGS.items() if fast.is_async(cfg)]
# 32 x 32 tiles of 2 warps (each 32 x 16, 4 x 4 a thread), in groups of 2 tile rows: many blocks cheaply
SMALL = dict(KERNEL="async", BM=32, BN=32, BK=8, WM=32, WN=16, TM=4, TN=4, STAGES=3, MINB=1, GROUP=2)


def check_product(m: int, n: int, k: int, config, seed: int = 0) -> None:
    """sgemm on the current backend against the float64 product: each element within a few float32
    roundings per term of sum |a||b| (C starts as NaN, so an element never written fails too)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    dc = gk.to_device(np.full(m * n, np.nan, np.float32))
    fast.sgemm(gk.to_device(a.ravel()), gk.to_device(b.ravel()), dc, m, n, k, config)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(dc.get().reshape(m, n) - a64 @ b64)
    bound = 4 * (k + 1) * np.finfo(np.float32).eps * (np.abs(a64) @ np.abs(b64)) + 1e-30
    bad = ~(err <= bound)
    assert not bad.any(), f"{int(bad.sum())} of {m * n} elements off; worst relative error {np.max(err / bound):.2f}"


def test_configs_are_many_and_valid():
    assert 10 <= len(ASYNC) <= 20
    for name in ASYNC:
        cfg = fast.CONFIGS[name]
        fast.check_config(cfg)
        assert name == "async_{BM}x{BN}x{BK}_{WM}x{WN}_{TM}x{TN}_s{STAGES}".format(**cfg)
        assert 2 <= cfg["STAGES"] <= 4 and fast.shared_bytes(cfg) <= 227 * 1024
        assert fast.launch_config(1, 1, cfg)[1] in (128, 256)
    assert any(not fast.is_async(cfg) for cfg in fast.CONFIGS.values())  # sgemm_kernel's stay
    fast.check_config(SMALL)
    for bad in ({"WM": 64, "WN": 64}, {"BK": 12}, {"STAGES": 1}, {"TM": 6}):  # lanes not 32, k step, ...
        with pytest.raises(gk.LaunchError, match="not supported by sgemm_async_kernel"):
            fast.check_config({**fast.CONFIGS[ASYNC[0]], **bad})


@pytest.mark.parametrize("name", ASYNC)
def test_async_config_matches_numpy(on_simulator, name):
    """One block whose tile is partial in m, n and k (the float4 path): 2 k steps, the second partial."""
    cfg = fast.CONFIGS[name]
    check_product(cfg["BM"] - 3, cfg["BN"] - 4, cfg["BK"] + 5, name)


@pytest.mark.parametrize(
    "name", ["async_128x128x8_64x32_8x8_s4", "async_128x128x16_64x32_8x8_s2", "async_64x64x8_32x32_4x8_s3"]
)
def test_async_multiples_of_the_tiles_match_numpy(on_simulator, name):
    """A whole tile (no bounds test fails) over STAGES + 1 k steps: each stage filled, then the first
    again (2, 4 and 3 stages)."""
    cfg = fast.CONFIGS[name]
    check_product(cfg["BM"], cfg["BN"], (cfg["STAGES"] + 1) * cfg["BK"], name)


@pytest.mark.parametrize("name", ["async_128x128x8_64x32_8x8_s3", "async_64x64x8_32x32_4x8_s3"])
def test_async_scalar_path_matches_numpy(on_simulator, name):
    """n not a multiple of 4: B's rows are not 16-byte aligned, so its copies are 4-byte ones."""
    cfg = fast.CONFIGS[name]
    check_product(cfg["BM"] - 1, cfg["BN"] - 3, 2 * cfg["BK"] + 1, name)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 100), n=st.integers(1, 100), k=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_small_async_tiles_in_groups_match_numpy(m, n, k, seed):
    """Up to 4 x 4 blocks in groups of 2 tile rows (the last group shorter where there are 3),
    both paths (n a multiple of 4 or not), any number of k steps against 3 stages."""
    gk.set_backend("sim")
    try:
        check_product(m, n, k, SMALL, seed)
    finally:
        gk.set_backend(None)


def test_autotuner_chooses_between_both_kernels(on_simulator, monkeypatch, capsys):
    small = {"64x64x8_4x8": fast.CONFIGS["64x64x8_4x8"], "async_small": SMALL}
    monkeypatch.setattr(fast, "CONFIGS", small)
    monkeypatch.setattr(fast, "_chosen", {})
    monkeypatch.setattr(gk, "autotune", functools.partial(gk.autotune, repeat=1, warmup=0))
    chosen = fast.choose(40, 36, 12, verbose=True)
    assert chosen in small.values()
    err = capsys.readouterr().err
    assert "[1/2]" in err and "[2/2]" in err and "skipped" not in err  # both timed, neither failed
    check_product(40, 36, 12, None)  # config=None: the choice, remembered for this shape


def test_cuda_source_copies_asynchronously():
    cfg = fast.CONFIGS["async_128x128x16_64x32_8x8_s3"]
    types = (Array[float32],) * 3 + (int32,) * 3
    consts = fast.kernel_args(*types[:3], 4, 4, 4, cfg)[6:]
    src = fast.sgemm_async_kernel.source(*types, *consts, backend="cuda")
    assert "#include <cuda_pipeline.h>" in src
    assert "__pipeline_memcpy_async(" in src and "__pipeline_commit();" in src
    assert "__pipeline_wait_prior(1);" in src  # STAGES - 2 groups may stay in flight
    assert src.count("__syncthreads();") == 1  # one barrier a k step
    assert "__launch_bounds__(256, 2)" in src
    assert "extern __shared__" in src
    copies = [line for line in src.splitlines() if "__pipeline_memcpy_async(" in line]
    assert sum(line.split("//")[0].rstrip().endswith(", 4);") for line in copies) == 8  # A: 4-byte copies
    assert sum(line.split("//")[0].rstrip().endswith(", 16);") for line in copies) == 2  # B: float4s
