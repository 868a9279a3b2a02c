"""examples/rowwise.py: softmax, LayerNorm and RMSNorm, each row read once (a warp, a block or a
cluster of blocks a row), against float64 NumPy on every backend, the cluster's on the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import load_example

import gpukern as gk

rw = load_example("rowwise")


def _check(op: str, n: int, rows: int) -> None:
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((rows, n)) * 3).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y = gk.to_device(np.full((rows, n), np.nan, np.float32))
    kern, how = rw.make_rows(op, gk.float32, n)
    rw.run(op, kern, how, gk.to_device(x), y, gk.to_device(w), gk.to_device(b))
    rtol, atol = rw.tolerance(op, gk.float32, n)
    np.testing.assert_allclose(y.get(), rw.reference(op, x, w, b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", rw.OPS)
@pytest.mark.parametrize("n", [1024, 4096])
def test_a_warp_or_a_block_a_row(backend, op, n):
    _check(op, n, 8)


@pytest.mark.parametrize("op", rw.OPS)
def test_a_cluster_a_row(on_simulator, op):
    _check(op, 65536, 2)
    kern, how = rw.make_rows(op, gk.float32, 65536)
    assert how.cluster == 4
    x = np.random.default_rng(0).standard_normal((1, 65536)).astype(np.float32)
    args = (x, np.zeros_like(x), np.ones(65536, np.float32), np.zeros(65536, np.float32), 1e-5)
    assert gk.sanitize(kern[how.cluster, how.threads], *args) == []


def test_plans():
    assert rw.plan(1024) == rw.Plan(32, 4, 1, 32) and rw.plan(262144) == rw.Plan(1024, 1, 8, 32)
    assert rw.plan(65536) == rw.Plan(512, 1, 4, 32, 2)
    for bad in (2 * 262144, 20480, 1000):
        with pytest.raises(ValueError, match="rows of a multiple of 1024"):
            rw.plan(bad)


def test_the_command_line(capsys):
    assert rw.main(["rmsnorm", "--small", "--backend", "sim"]) == 0
    out = capsys.readouterr().out
    assert "8 rows x 2048" in out and "2 a cluster" in out and out.count("OK") == 2 and "of a copy's" in out
