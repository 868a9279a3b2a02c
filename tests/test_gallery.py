"""The examples gallery: every example runs on every backend, checks itself against NumPy, and can fail.

Sizes are small and deliberately not multiples of the block or tile, so the guards on
the last, partial block are exercised.  Each example's kernels are compiled for one
small block/tile size, shared by all the tests of that example (one nvcc run per variant).
"""

from __future__ import annotations

import re

import pytest
from kernel_source import EXAMPLES, load_example

import gpukern as gk

GALLERY = ["vector_add", "reduce_sum", "reduce_warp", "transpose", "histogram", "stencil2d", "scan", "softmax_blocks"]
MODULES = {name: load_example(name) for name in GALLERY}

# (example, arguments, the start of the result line)
RUNS = [
    ("vector_add", ["--size", "1000", "--block", "64"], "vector_add: n=1000 "),
    # 1251 blocks' worth, capped at 1024: both passes' grid-stride loops do more than one step
    ("reduce_sum", ["--size", "40001", "--block", "32"], "reduce_sum: n=40001 "),
    ("reduce_warp", ["--size", "40001", "--block", "64"], "reduce_warp: n=40001 "),  # two warps a block
    ("transpose", ["--size", "37", "--cols", "53", "--tile", "8"], "transpose 8x8: padded (T, T+1) "),
    ("histogram", ["--size", "5003", "--bins", "100", "--block", "64"], "histogram: n=5003 bins=100 "),
    ("stencil2d", ["--size", "45", "--cols", "70", "--tile", "8", "--steps", "3"], "stencil2d: 45x70 x 3 steps "),
    ("scan", ["--size", "5000", "--block", "32"], "scan: n=5000 "),  # 157 blocks -> 5 -> 1: three levels
    ("scan", ["--size", "32", "--block", "32"], "scan: n=32 "),  # exactly one block: one level
    ("softmax_blocks", ["--size", "7", "--cols", "70", "--block", "32"], "softmax: 7x70 "),
]
ARGS = {name: args for name, args, _ in RUNS}  # the first case of each example


@pytest.mark.parametrize(("name", "args", "result"), RUNS, ids=[f"{n}-{a[1]}" for n, a, _ in RUNS])
def test_example_runs_and_checks(backend, name, args, result, capsys):
    assert MODULES[name].main([*args, "--repeat", "1", "--backend", backend]) == 0
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines[0].startswith("device: ") and f"backend: {backend}" in lines[0]
    assert len(lines) == 2, captured.out  # the device, then the one-line result
    assert lines[1].startswith(result), lines[1]
    assert re.search(r"\d+\.\d{3} ms", lines[1]) and lines[1].endswith("OK")
    assert "WRONG" not in captured.err


def test_scan_levels(backend, capsys):
    assert MODULES["scan"].main(["--size", "5000", "--block", "32", "--repeat", "1"]) == 0
    assert "3 levels of 32-element blocks" in capsys.readouterr().out


SOURCE_MARKS = {
    "vector_add": ["vector_add"],
    "reduce_sum": ["block_sum", "[32]"],
    "reduce_warp": ["block_sum", "warp_sums[32]", "shfl_down"],
    "transpose": ["transpose_padded", "transpose_unpadded", "tile[8][9]", "tile[8][8]"],
    "histogram": ["clear", "histogram", "counts[100]"],
    "stencil2d": ["heat_step", "tile[10][10]"],
    "scan": ["scan_block", "add_block_offsets", "buf[32]"],
    "softmax_blocks": ["softmax_rows", "block_max", "block_sum", "exp"],
}


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
@pytest.mark.parametrize("name", GALLERY)
def test_example_shows_source(name, dialect, capsys):
    assert MODULES[name].main([*ARGS[name], "--show-source", "--backend", dialect]) == 0
    out = capsys.readouterr().out
    for mark in SOURCE_MARKS[name]:
        assert mark in out, mark
    assert ("__global__" if dialect == "cuda" else "__kernel") in out
    if name != "vector_add":
        assert ("__syncthreads();" if dialect == "cuda" else "barrier(CLK_LOCAL_MEM_FENCE") in out


def broken(monkeypatch, module, kernel_name: str, launch_instead):
    """Replace module.kernel_name by one whose launches call launch_instead(real_launch, *args)."""
    real = getattr(module, kernel_name)

    class Broken:
        def __getitem__(self, cfg):
            launch = real[cfg]
            return lambda *args: launch_instead(launch, *args)

    monkeypatch.setattr(module, kernel_name, Broken())


# How to break each example: which kernel, what its launches do instead, and the arguments
# (sizes used by no other test, so a fresh device buffer cannot hold a right answer by chance).
BREAKS = {
    "vector_add": ("vector_add", lambda k, a, b, out, n: k(a, a, out, n), ["--size", "999", "--block", "64"]),
    "reduce_sum": ("block_sum", lambda k, x, p, n, bs: k(x, p, n // 2, bs), ["--size", "40003", "--block", "32"]),
    "reduce_warp": ("block_sum", lambda k, x, p, n, bs: k(x, p, n // 2, bs), ["--size", "40007", "--block", "64"]),
    "transpose": (
        "transpose_padded",
        lambda k, a, out, rows, cols, t: k(a, out, rows - 1, cols, t),  # the last row of a is not moved
        ["--size", "29", "--cols", "41", "--tile", "8"],
    ),
    "histogram": (
        "clear",
        lambda k, *args: None,  # the histogram is never zeroed
        ["--size", "4999", "--bins", "100", "--block", "64"],
    ),
    "stencil2d": (
        "heat_step",
        lambda k, u, out, rows, cols, alpha, t: k(u, out, rows - 1, cols, alpha, t),
        ["--size", "43", "--cols", "66", "--tile", "8", "--steps", "2"],
    ),
    "scan": ("add_block_offsets", lambda k, *args: None, ["--size", "4999", "--block", "32"]),  # no add-back
    "softmax_blocks": (
        "softmax_rows",
        lambda k, x, out, cols, bs: k(x, out, cols - 1, bs),
        ["--size", "5", "--cols", "71", "--block", "32"],
    ),
}


@pytest.mark.parametrize("name", GALLERY)
def test_example_detects_wrong_results(backend, name, monkeypatch, capsys):
    """Each example's own check must be able to fail: skip or spoil one step and see it."""
    kernel_name, launch_instead, args = BREAKS[name]
    broken(monkeypatch, MODULES[name], kernel_name, launch_instead)
    if backend == "sim" and name == "histogram":  # the simulator sees the bug before the result does
        with pytest.raises(gk.UninitializedReadError, match="'hist'"):
            MODULES[name].main([*args, "--repeat", "1"])
        return
    assert MODULES[name].main([*args, "--repeat", "1"]) == 1
    captured = capsys.readouterr()
    assert "WRONG" in captured.err
    assert " OK" not in captured.out


def test_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text()
    for path in EXAMPLES.glob("*.py"):
        assert f"examples/{path.name}" in readme, path.name
