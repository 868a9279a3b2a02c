"""The examples run, check themselves against NumPy, and print what they promise."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kernel_source import EXAMPLES, load_example

import gpukern as gk

matmul_example = load_example("matmul_tiled")


@pytest.mark.parametrize("tile", [8, 16])
def test_matmul_example_runs_and_checks(backend, tile, capsys):
    assert matmul_example.main(["--size", "72", "--tile", str(tile), "--naive", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert f"tiled {tile}x{tile}" in out and "GFLOP/s" in out and "OK" in out
    assert "speed-up of tiled over naive" in out


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
def test_matmul_example_shows_source(dialect, capsys):
    assert matmul_example.main(["--show-source", "--naive", "--backend", dialect, "--tile", "32"]) == 0
    out = capsys.readouterr().out
    assert "matmul_tiled" in out and "matmul_naive" in out
    assert "[32][32]" in out
    assert ("__syncthreads();" if dialect == "cuda" else "barrier(CLK_LOCAL_MEM_FENCE") in out


def test_matmul_example_detects_wrong_results(backend, monkeypatch, capsys):
    """The example's own check must be able to fail: break the kernel's output and see it."""
    real = matmul_example.matmul_tiled

    class Broken:
        def __getitem__(self, cfg):
            launch = real[cfg]

            def run(a, b, c, m, n, k, tile):
                launch(a, b, c, m, n, k - 1, tile)  # drops the last term of every dot product

            return run

    monkeypatch.setattr(matmul_example, "matmul_tiled", Broken())
    with pytest.raises(SystemExit):
        matmul_example.main(["--size", "40", "--repeat", "1"])
    assert "WRONG" in capsys.readouterr().err


def test_matmul_example_runs_with_only_numpy():
    """With neither pycuda nor pyopencl importable, the simulator is the default backend, or CUDA
    where an NVIDIA driver is installed (the CUDA backend needs no Python package)."""
    import subprocess

    code = (
        "import sys, runpy; sys.modules['pyopencl'] = None; sys.modules['pycuda'] = None; "
        "sys.argv = ['matmul_tiled.py', '--size', '48', '--repeat', '1']; "
        f"runpy.run_path({str(EXAMPLES / 'matmul_tiled.py')!r}, run_name='__main__')"
    )
    env = {**__import__("os").environ, "PYTHONPATH": str(EXAMPLES.parent)}
    env.pop("GPUKERN_BACKEND", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cuda = "cuda" in __import__("gpukern").available_backends()
    assert f"backend: {'cuda' if cuda else 'sim'}" in proc.stdout and "OK" in proc.stdout


def test_matmul_example_profile(capsys):
    assert matmul_example.main(["--profile", "--naive", "--size", "64", "--tile", "8"]) == 0
    out = capsys.readouterr().out
    assert "profile of matmul_tiled" in out and "profile of matmul_naive" in out
    assert "naive / tiled: 8.00x the global load requests" in out
    assert "acc += tile_a[ty, i] * tile_b[i, tx]" in out  # the source view


def test_streams_interop_example_runs_and_checks(backend, capsys, monkeypatch):
    """Streams, events, pinned memory and every device of the backend (the simulator's two
    here); CuPy and PyTorch parts run on CUDA."""
    monkeypatch.setenv("GPUKERN_SIM_DEVICES", "2")
    example = load_example("streams_interop")
    assert example.main(["--size", "3000", "--backend", backend]) == 0
    out = capsys.readouterr().out
    assert "copy on one stream, kernel on another            OK" in out and "WRONG" not in out
    assert out.count("gk.Device(") == (2 if backend == "sim" else len(__import__("gpukern").devices()))


tensorcore_example = load_example("matmul_tensorcore")


def test_matmul_tensorcore_example_runs_and_checks(on_simulator, capsys):
    # 100 is no multiple of the 64 x 64 x 32 tiles: the guarded staging and copy are exercised
    assert tensorcore_example.main(["--size", "100", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "TFLOP/s" in out and "OK" in out and out.splitlines()[-1].startswith("hgemm 64x64x32")


def test_matmul_tensorcore_names_the_kernel_it_runs(monkeypatch):
    """On an sm_90 GPU the warpgroup kernel takes k and n multiples of 8 only; other sizes go to the
    kernel of any size, and the report names that one (it named the warpgroup kernel)."""
    monkeypatch.setattr(tensorcore_example, "warpgroups", lambda: True)
    assert tensorcore_example.kernel_for(128, 128, 128) == "warpgroup"
    assert tensorcore_example.kernel_for(100, 100, 100) == "any"
    assert tensorcore_example.kernel_for(100, 128, 100) == "any"


def test_matmul_tensorcore_pipelined_kernel_runs_and_checks(on_simulator, capsys):
    """128 fits the pipelined kernel's tiles: its stages of asynchronous copies (and the simulator's
    checks that no copy is read before its wait, nor a stage overwritten while read) are exercised,
    k in two steps of 64, fewer than its three stages."""
    assert tensorcore_example.main(["--size", "128", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "hgemm_pipelined" in out and "OK" in out


def test_matmul_tensorcore_tf32_kernel_matches_numpy(on_simulator):
    """The TF32 kernel (float32 inputs rounded to TF32 in the fragments, FP32 accumulation) at sizes
    that are no multiples of its tiles (m, n past a tile's edge, k a partial last step), within
    TF32's rounding of |A| @ |B|; rows of A or B not 16-byte aligned are refused."""
    rng = np.random.default_rng(3)
    m, n, k = 130, 132, 44
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    dc = gk.to_device(np.full((m, n), np.nan, np.float32))
    tensorcore_example.matmul_tf32(gk.to_device(a), gk.to_device(b), dc, m, n, k)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2.0**-10 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert (np.abs(dc.get() - exact) <= tol).all()
    with pytest.raises(ValueError, match="multiples of 4, not 42 and 132"):
        tensorcore_example.matmul_tf32(gk.to_device(a), gk.to_device(b), dc, m, n, 42)


def test_matmul_tensorcore_tile_groups_cover_c_once(on_simulator):
    """Blocks walk C's tiles in groups of GROUP tile rows: with 3 tile rows in groups of 2 (the
    last group short) and 2 columns, every tile of C is computed, once, and right; k is one step
    fewer than the stages, so the prologue's guard is exercised too."""
    kern = tensorcore_example.make_pipelined(gk.float16, 16, 32, STAGES=3, GROUP=2)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((384, 32)).astype(np.float16)
    b = rng.standard_normal((32, 256)).astype(np.float16)
    dc = gk.to_device(np.full((384, 256), np.nan, np.float32))
    tensorcore_example.run_pipelined(kern, gk.to_device(a), gk.to_device(b), dc, 384, 256, 32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    tol = gk.mma_ops.tolerance(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)), 16)
    assert (np.abs(dc.get() - exact) <= tol).all()


def _check_tensorcore(m: int, n: int, k: int, seed: int, run) -> None:
    """C = A @ B of random float16 A, B by ``run(da, db, dc)`` against NumPy's float64 product,
    within ``gpukern.semantics.mma.tolerance``; C starts as NaN so that an element never written fails."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    dc = gk.to_device(np.full((m, n), np.nan, np.float32))
    run(gk.to_device(a), gk.to_device(b), dc)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(dc.get() - a64 @ b64)
    assert (err <= gk.mma_ops.tolerance(np.abs(a64), np.abs(b64), 16)).all()


_PROPERTY = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPERTY
@given(m=st.integers(1, 150), n=st.integers(1, 150), k=st.integers(1, 100), seed=st.integers(0, 2**16))
def test_matmul_tensorcore_any_size_matches_numpy(backend, m, n, k, seed):
    """The example's matmul at any sizes: the guarded kernel (the pipelined one takes k and n that
    are multiples of 8, drawn rarely here: test_matmul_tensorcore_pipelined_matches_numpy)."""
    if backend == "opencl":
        pytest.skip("OpenCL refuses tensor-core fragments (a CompileError says so)")
    _check_tensorcore(m, n, k, seed, lambda da, db, dc: tensorcore_example.matmul(da, db, dc, m, n, k))


@_PROPERTY
@given(
    m=st.integers(1, 300),
    n=st.integers(1, 40).map(lambda x: 8 * x),
    k=st.integers(1, 32).map(lambda x: 8 * x),
    group=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
@example(m=130, n=136, k=40, group=1, seed=0)  # edges in m and n, one partial k step
@example(m=256, n=128, k=256, group=2, seed=1)  # whole tiles, more k steps than stages
def test_matmul_tensorcore_pipelined_matches_numpy(backend, m, n, k, group, seed):
    """The pipelined kernel at any m, and k and n multiples of 8: whole and partial tiles of C
    (edge tiles through shared memory), tile groups of 1-3 rows, k steps of 64 fewer than, as many
    as and more than its stages, the last one partial (zero-filled)."""
    if backend == "opencl":
        pytest.skip("OpenCL refuses tensor-core fragments (a CompileError says so)")
    kern = tensorcore_example.make_pipelined(gk.float16, 16, 64, STAGES=3, GROUP=group)
    _check_tensorcore(m, n, k, seed, lambda da, db, dc: tensorcore_example.run_pipelined(kern, da, db, dc, m, n, k))


def test_matmul_tensorcore_falls_back_where_shared_memory_is_short(on_simulator, monkeypatch):
    """The pipelined kernel needs 105 KiB of shared memory a block: on a device that gives less
    (sm_70's 96 KiB opt-in) matmul takes the guarded kernel instead of failing to launch."""
    assert tensorcore_example.pipelined(128, 128, 128)
    monkeypatch.setattr(gk.get_backend(), "max_shared_optin", 96 * 1024)
    assert not tensorcore_example.pipelined(128, 128, 128)
    _check_tensorcore(128, 128, 128, 0, lambda da, db, dc: tensorcore_example.matmul(da, db, dc, 128, 128, 128))


def test_matmul_tensorcore_example_shows_source(capsys):
    assert tensorcore_example.main(["--show-source"]) == 0
    out = capsys.readouterr().out
    assert "wmma::mma_sync" in out and "wmma::load_matrix_sync" in out


def _warpgroups_here(backend) -> None:
    """The warpgroup kernels run on the simulator and on sm_90 GPUs (gk.wgmma)."""
    if backend == "opencl":
        pytest.skip("OpenCL refuses tensor-core fragments (a CompileError says so)")
    if backend == "cuda" and not tensorcore_example.warpgroups():
        pytest.skip("gk.wgmma needs an sm_90 GPU")


@_PROPERTY
@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@given(
    m=st.integers(1, 300),
    n=st.integers(1, 40).map(lambda x: 8 * x),
    k=st.integers(1, 24).map(lambda x: 8 * x),
    group=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
@example(m=130, n=264, k=72, group=1, seed=0)  # edges in m and n, one partial k step
@example(m=256, n=512, k=320, group=2, seed=1)  # whole tiles, more k steps than stages
@example(m=64, n=128, k=256, group=1, seed=2)  # as many k steps as stages
def test_matmul_tensorcore_warpgroup_matches_numpy(backend, m, n, k, group, seed):
    """The sm_90 kernel (gk.wgmma) at any m, and k and n multiples of 8: whole and partial tiles of C
    (edge tiles through shared memory), tile groups of 1-3 rows, k steps fewer than, as many as and
    more than its stages, the last one partial (zero-filled); the simulator checks that no stage is
    refilled while a wgmma reads it."""
    _warpgroups_here(backend)
    kern = tensorcore_example.make_warpgroup(gk.float16, STAGES=4, GROUP=group)
    _check_tensorcore(m, n, k, seed, lambda da, db, dc: tensorcore_example.run_warpgroup(kern, da, db, dc, m, n, k))


@_PROPERTY
@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@given(
    m=st.integers(1, 200),
    n=st.integers(1, 70).map(lambda x: 4 * x),
    k=st.integers(1, 30).map(lambda x: 4 * x),
    seed=st.integers(0, 2**16),
)
@example(m=130, n=260, k=100, seed=0)
@example(m=70, n=64, k=196, seed=1)  # more k steps (7 of 32) than stages: stages refilled
def test_matmul_tensorcore_tf32_warpgroup_matches_numpy(backend, m, n, k, seed):
    """The TF32 sm_90 kernel (B's transpose made first) at any m, and k and n multiples of 4, within
    TF32's rounding of |A| @ |B| (the simulator rounds to nearest, an H100 truncates)."""
    _warpgroups_here(backend)
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    dc = gk.to_device(np.full((m, n), np.nan, np.float32))
    tensorcore_example.run_warpgroup(tensorcore_example.tgemm_warpgroup, gk.to_device(a), gk.to_device(b), dc, m, n, k)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2.0**-9 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert (np.abs(dc.get() - exact) <= tol).all()
    with pytest.raises(ValueError, match=f"multiples of 4, not {k + 2} and {n}"):
        tensorcore_example.run_warpgroup(
            tensorcore_example.tgemm_warpgroup, gk.to_device(a), gk.to_device(b), dc, m, n, k + 2
        )


SIMULATOR_SIZED = [
    "vector_add", "reduce_sum", "reduce_warp", "scan", "histogram", "matmul_tiled", "matmul_fast",
    "matmul_tensorcore", "softmax_blocks", "softmax", "stencil2d", "transpose", "streams_interop",
]  # fmt: skip


@pytest.mark.parametrize("name", SIMULATOR_SIZED)
def test_every_example_runs_on_the_simulator_at_its_defaults(name, capsys):
    """A newcomer without a GPU runs the examples as the README says: each picks a problem the
    simulator finishes in seconds, says so in one line, and checks its result (issue 33).  The
    Dask example's CPU-sized batch is chosen the same way (``test_multi_gpu``'s)."""
    module = load_example(name)
    gk.set_backend("sim")
    try:
        assert module.main([]) == 0
    finally:
        gk.set_backend(None)
    out = capsys.readouterr().out
    assert "the simulator runs every thread on this CPU" in out and "OK" in out, out


def test_problem_size_is_the_users_else_the_backends(capsys):
    gk.set_backend("sim")
    try:
        assert gk.problem_size(None, 4096, 64) == 64 and "size 64 instead of 4096" in capsys.readouterr().out
        assert gk.problem_size(100, 4096, 64) == 100 and capsys.readouterr().out == ""
    finally:
        gk.set_backend(None)
    if "opencl" in gk.available_backends():
        assert gk.problem_size(None, 4096, 64, "opencl") == 4096
