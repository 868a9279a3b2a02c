"""``for`` over arrays, tuples, ``enumerate`` and ``zip``: the loop Python runs, as a loop over
``range`` whose body first assigns the items (tuples: the body once per item)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, float64, int32, int64

WEIGHTS = (0.5, 2, 3.0)


@gk.kernel
def sums(a: Array[float32], b: Array[int32], out: Array[float64], n: int32):
    s = float64(0)
    for v in a:  # every element
        s += v
    out[0] = s
    t = float64(0)
    for i, v in enumerate(a, 1):  # numbered from 1
        t += i * v
    out[1] = t
    u = float64(0)
    for x, y in zip(a, b):  # as many as the shorter
        u += x * y
    out[2] = u
    w = float64(0)
    for k, (x, y) in enumerate(zip(a, range(2, n, 3))):
        w += k + x * y
    out[3] = w
    last = float32(-1)
    for v in a[1:]:
        if v > 3:
            break
        last = v
    out[4] = last
    c = float64(0)
    for v in WEIGHTS:  # a tuple: the body once per item
        c += v
    for j, v in enumerate(WEIGHTS):
        c += j * v
    out[5] = c


def test_loops_over_arrays_tuples_enumerate_and_zip(backend):
    a = np.array([1.5, 2.0, 2.5, 4.0, 0.5], np.float32)
    b = np.array([3, 1, 4], np.int32)
    out = np.zeros(6)
    n = 9
    sums[1, 1](a, b, out, n)
    r = list(range(2, n, 3))
    last = -1.0
    for v in a[1:]:
        if v > 3:
            break
        last = v
    expected = [a.sum(), sum(i * v for i, v in enumerate(a.astype(np.float64), 1)), float(a[:3] @ b),
                sum(k + float(x) * y for k, (x, y) in enumerate(zip(a, r))), last,
                sum(WEIGHTS) + sum(j * v for j, v in enumerate(WEIGHTS))]  # fmt: skip
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@gk.kernel
def count_after(a: Array[int64], out: Array[int64]):
    k = int64(-1)
    for k, v in enumerate(a):
        if v < 0:
            continue
        out[k] = v
    out[a.shape[0]] = k  # the last value it took, as in Python


def test_continue_and_the_last_value(backend):
    a = np.array([4, -1, 7], np.int64)
    out = np.zeros(4, np.int64)
    count_after[1, 1](a, out)
    assert list(out) == [4, 0, 7, 2]


@pytest.mark.parametrize(
    "body, words",
    [
        ("for v in m:\n        out[0] = v", "2-dimensional array"),
        ("for v in zip(out, (1, 2)):\n        out[0] = 1", "a tuple and an array together"),
        ("for i, v in zip(range(5, 0, -1), out):\n        out[0] = v", "positive constant step"),
        ("for v in (1, 2):\n        if v > 1:\n            break", "break"),
    ],
)
def test_what_cannot_be_looped_over_says_so(tmp_path, body, words):
    src = tmp_path / "bad_loop.py"
    src.write_text(
        "import gpukern as gk\nfrom gpukern import Array, float64\n\n\n@gk.kernel\n"
        f"def bad(out: Array[float64], m: Array[float64, 2]):\n    {body}\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("bad_loop", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(gk.CompileError, match=words):
        mod.bad.source(np.zeros(3), np.zeros((2, 2)))
