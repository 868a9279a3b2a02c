"""The Hopper section of docs/language.md runs as written: each of its kernels, taken from the page,
on the simulator against NumPy, and the sanitizer finds nothing in it."""

from __future__ import annotations

import pathlib
import re

import numpy as np
from kernel_source import load_module

import gpukern as gk

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "language.md"
HEADER = "import gpukern as gk\nfrom gpukern import Array, Const, barrier, float32, kernel, thread_idx\n"


def _section_kernels() -> object:
    text = PAGE.read_text()
    section = text[text.index("## Hopper: TMA, mbarriers, clusters") : text.index("## Writing fast kernels")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    return load_module(HEADER + "\n\n".join(b.replace("from gpukern import", "# from gpukern import") for b in blocks))


DOCS = _section_kernels()


def test_column_sums(on_simulator):
    a = np.random.default_rng(0).integers(-9, 9, (56, 32)).astype(np.float32)
    sums = np.zeros(32, np.float32)
    DOCS.column_sums[1, 64](a, sums, 3)
    np.testing.assert_array_equal(sums, a.sum(axis=0))
    assert gk.sanitize(DOCS.column_sums[1, 64], a, np.zeros(32, np.float32), 3) == []


def test_warp_specialized_sums(on_simulator):
    a = np.random.default_rng(1).integers(-9, 9, (48, 128)).astype(np.float32)
    out = np.zeros(128, np.float32)
    DOCS.ws_sums[1, 384](a, out, 2)
    np.testing.assert_array_equal(out, a.sum(axis=0))
    assert gk.sanitize(DOCS.ws_sums[1, 384], a, np.zeros(128, np.float32), 2) == []


def test_cluster_sums(on_simulator):
    a = np.random.default_rng(2).integers(-9, 9, 8 * 128).astype(np.float32)
    out = np.zeros(2 * 128, np.float32)
    DOCS.cluster_sums[8, 128](a, out, 4)
    np.testing.assert_array_equal(out, a.reshape(2, 4, 128).sum(axis=1).ravel())
    assert gk.sanitize(DOCS.cluster_sums[8, 128], a, np.zeros(256, np.float32), 4) == []
