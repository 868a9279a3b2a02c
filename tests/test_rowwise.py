"""examples/rowwise.py: softmax, LayerNorm and RMSNorm, each row read once (a warp, a block or a
cluster of blocks a row), against float64 NumPy on every backend, the cluster's on the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import load_example

import gpukern as gk

rw = load_example("rowwise")


def _check(op: str, n: int, rows: int, dtype: str = "float32") -> None:
    rng = np.random.default_rng(n)
    T, host = rw.TYPES[dtype], rw.host_dtype(dtype)
    x = (rng.standard_normal((rows, n)) * 3).astype(host)
    w, b = rng.standard_normal(n).astype(host), rng.standard_normal(n).astype(host)
    y = gk.to_device(np.full((rows, n), np.nan, host))
    kern, how = rw.make_rows(op, T, n)
    rw.run(op, kern, how, gk.to_device(x), y, gk.to_device(w), gk.to_device(b))
    rtol, atol = rw.tolerance(op, T, n)
    got = y.get().astype(np.float64)
    np.testing.assert_allclose(got, rw.reference(op, x, w, b), rtol=rtol, atol=atol)
    if dtype == "bfloat16":  # each element the float32 result rounded once, to nearest even
        exact = rw.reference(op, x, w, b).astype(np.float32).astype(host).astype(np.float64)
        assert np.mean(got == exact) > 0.9


@pytest.mark.parametrize("op", rw.OPS)
@pytest.mark.parametrize("n", [1024, 4096])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_warp_or_a_block_a_row(backend, op, n, dtype):
    _check(op, n, 8, dtype)


@pytest.mark.parametrize("op", rw.OPS)
def test_a_cluster_a_row(on_simulator, op):
    _check(op, 65536, 2)
    _check(op, 32768, 2, "bfloat16")
    kern, how = rw.make_rows(op, gk.float32, 65536)
    assert how.cluster > 1
    x = np.random.default_rng(0).standard_normal((1, 65536)).astype(np.float32)
    args = (x, np.zeros_like(x), np.ones(65536, np.float32), np.zeros(65536, np.float32), 1e-5)
    assert gk.sanitize(kern[how.cluster, how.threads, kern.shared_bytes], *args) == []


def test_plans():
    assert rw.plan(1024) == rw.Plan(32, 4, 1, 32) and rw.plan(262144) == rw.Plan(1024, 1, 8, 32)
    assert rw.plan(65536) == rw.Plan(512, 1, 4, 32, 2)  # (registers: no op given)
    assert rw.plan(65536, 4, "softmax", hopper=True).staged and rw.plan(1024, 4, "softmax") == rw.plan(1024)
    assert rw.plan(4096, 2, "layernorm", hopper=True).pipelined
    assert not rw.plan(4096, 2, "layernorm", hopper=False).pipelined  # (OpenCL: registers)
    assert rw.plan(262144, 2) == rw.Plan(512, 1, 8, 64, 1)  # BF16: 64 elements a thread (half the bytes)
    for bad in (2 * 262144, 20480, 1000):
        with pytest.raises(ValueError, match="rows of a multiple of 1024"):
            rw.plan(bad)


def test_the_command_line(capsys):
    assert rw.main(["rmsnorm", "--small", "--backend", "sim"]) == 0
    out = capsys.readouterr().out
    assert "8 rows x 2048" in out and "8 rows x 32768" in out and out.count("OK") == 2 and "of a copy's" in out
    assert "held in shared memory" in out  # (rmsnorm's plan for 32,768 float32s)


@pytest.mark.parametrize(
    "name, argv, lines",
    [("layernorm", ["--small", "--dtype", "bfloat16"], 2), ("rmsnorm", ["--small", "--size", "2048"], 1)],
)
def test_the_programs_of_each_op(name, argv, lines, capsys):
    """examples/softmax.py, layernorm.py, rmsnorm.py: rowwise's command line with the op chosen
    (softmax.py runs at its defaults in test_examples)."""
    program = load_example(name)
    assert program.main([*argv, "--backend", "sim"]) == 0
    out = capsys.readouterr().out
    assert out.count(f"{name}: 8 rows x ") == lines and out.count("OK") == lines and "TB/s" in out


@pytest.mark.parametrize("op", rw.OPS)
def test_a_row_held_in_shared_memory_by_a_cluster_of_16(on_simulator, op):
    """A staged plan: each block's part of the row brought by one bulk copy into shared memory and
    read from there, the 16 blocks' statistics written into each other's shared memory (a cluster
    larger than CUDA's portable 8)."""
    n, how = 16384, rw.Plan(128, 1, 16, 8, 1, True)
    kern, how = rw.make_rows(op, gk.float32, n, how)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, n)) * 3).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y = gk.to_device(np.full_like(x, np.nan))
    rw.run(op, kern, how, gk.to_device(x), y, gk.to_device(w), gk.to_device(b))
    rtol, atol = rw.tolerance(op, gk.float32, n)
    np.testing.assert_allclose(y.get(), rw.reference(op, x, w, b), rtol=rtol, atol=atol)
    assert kern.shared_bytes == 8 * 128 * 4
    assert gk.sanitize(kern[2 * 16, 128, kern.shared_bytes], x, np.zeros_like(x), w, b, 1e-5) == []


@pytest.mark.parametrize("op", rw.OPS)
@pytest.mark.parametrize("dtype, stages, hold", [("float32", 1, True), ("bfloat16", 1, False), ("float32", 2, True)])
def test_a_pipelined_cluster_loops_over_rows(on_simulator, op, dtype, stages, hold):
    """A pipelined plan: 3 persistent clusters of 2 blocks over 7 rows, each block working on one row's
    part in registers while the next rows' land in shared memory (``stages`` buffers; a bulk copy into
    one started once every thread has read it), its weights and biases brought there once (``hold``);
    checked by the sanitizer too (a copy started before that would be a race)."""
    n, how = 4096, rw.Plan(64, 1, 2, 32, 1, False, stages, hold)
    T, host = rw.TYPES[dtype], rw.host_dtype(dtype)
    kern, how = rw.make_rows(op, T, n, how)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((7, n)) * 3).astype(host)
    w, b = rng.standard_normal(n).astype(host), rng.standard_normal(n).astype(host)
    y = gk.to_device(np.full_like(x, np.nan))
    rw.run(op, kern, how, gk.to_device(x), y, gk.to_device(w), gk.to_device(b), clusters=3)
    rtol, atol = rw.tolerance(op, T, n)
    np.testing.assert_allclose(y.get().astype(np.float64), rw.reference(op, x, w, b), rtol=rtol, atol=atol)
    held = {"softmax": 0, "rmsnorm": 1, "layernorm": 2}[op] * hold  # (a block's weights and biases, brought once)
    assert kern.shared_bytes == (stages + held) * 64 * 32 * np.dtype(host).itemsize
    assert gk.sanitize(kern[6, 64, kern.shared_bytes], x, np.zeros_like(x), w, b, 1e-5) == []
