"""``@func`` returning tuples, and the math functions of several results (frexp, modf, sincos),
on every backend against Python and NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, float64, func, global_id, int32, int64, kernel


@func
def divmod_floor(a, b):
    """Python's divmod, with 0 for a zero divisor's quotient."""
    if b == 0:
        return 0, a
    return a // b, a % b


@func
def min_max_sum(a, b):
    if a < b:
        return a, b, a + b
    return b, a, a + b


@kernel
def unpack(a: Array[int32], b: Array[int32], q: Array[int32], r: Array[int32], s: Array[int64]):
    i = global_id(0)
    if i < a.shape[0]:
        x, y = divmod_floor(a[i], b[i])
        q[i] = x
        t = divmod_floor(a[i], 7)  # a tuple kept whole, items read by constant index
        r[i] = y * 100 + t[1]
        s[i] = min_max_sum(a[i], b[i])[2] + divmod_floor(a[i], 3)[0]


def test_tuple_returns_unpack_on_every_backend(backend):
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 256).astype(np.int32)
    b = rng.integers(-4, 5, 256).astype(np.int32)
    q, r, s = np.zeros(256, np.int32), np.zeros(256, np.int32), np.zeros(256, np.int64)
    unpack[4, 64](a, b, q, r, s)
    want = [(0, x) if y == 0 else divmod(int(x), int(y)) for x, y in zip(a, b)]
    assert q.tolist() == [w[0] for w in want]
    assert r.tolist() == [w[1] * 100 + int(x) % 7 for w, x in zip(want, a)]
    assert s.tolist() == [int(x) + int(y) + int(x) // 3 for x, y in zip(a, b)]


@func
def widen(x, k):
    if k > 0:
        return x, 1  # (int32, int literal) here ...
    return x * 0.5, k  # ... (float64 for an int32 x, int32) here: the positions join


@kernel
def joined(a: Array[int32], f: Array[float64], n: Array[int32]):
    i = global_id(0)
    if i < a.shape[0]:
        u, v = widen(a[i], a[i] % 2)
        f[i] = u
        n[i] = v


def test_each_position_joins_the_types_of_every_return(backend):
    a = np.arange(-5, 11, dtype=np.int32)
    f, n = np.zeros(16), np.zeros(16, np.int32)
    joined[1, 16](a, f, n)
    assert f.tolist() == [float(x) if x % 2 > 0 else x * 0.5 for x in a]
    assert n.tolist() == [1 if x % 2 > 0 else int(x % 2) for x in a]
    src = joined.source(a, f, n, backend="cuda")
    assert "typedef struct {\n    double v0;\n    int v1;\n} gk_tuple_float64_int32;" in src


@kernel
def tuple_math(a: Array[float32], m: Array[float32], e: Array[int32], fr: Array[float32], wh: Array[float32],
               s: Array[float32], c: Array[float32]):  # fmt: skip
    i = global_id(0)
    if i < a.shape[0]:
        m[i], e[i] = math.frexp(a[i])
        fr[i], wh[i] = math.modf(a[i])
        t = gk.sincos(a[i])
        s[i] = t[0]
        c[i] = t[1]


def test_frexp_modf_sincos_against_numpy(backend):
    """The full walk over edge values is tests/semantics/test_ops.py; here: ordinary values, read as a user would."""
    a = np.array([0.0, -0.0, 1.0, -1.5, 3.75, 1e-40, 1e30, np.inf, -np.inf, np.nan, 0.1, 1000.0], np.float32)
    outs = [np.zeros_like(a), np.zeros(len(a), np.int32)] + [np.zeros_like(a) for _ in range(4)]
    tuple_math[1, 16](a, *outs)
    m, e = np.frexp(a)
    fr, wh = np.modf(a)
    np.testing.assert_array_equal(outs[0], m)
    np.testing.assert_array_equal(outs[1], e)
    np.testing.assert_array_equal(outs[2], fr)
    np.testing.assert_array_equal(outs[3], wh)
    with np.errstate(invalid="ignore"):
        sin, cos = np.sin(a), np.cos(a)
    np.testing.assert_allclose(outs[4], sin, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(outs[5], cos, rtol=1e-6, atol=1e-7)
    for x, (mm, ee), (f, w) in zip(a[:7], zip(outs[0], outs[1]), zip(outs[2], outs[3])):
        assert (mm, ee) == math.frexp(float(x)) and (f, w) == math.modf(float(x))  # Python's order and values


@kernel
def constant_tuples(out: Array[float64]):
    m, e = math.frexp(12.0)  # folded, as Python computes it
    f, w = math.modf(-2.25)
    out[0] = m
    out[1] = e
    out[2] = f
    out[3] = w


def test_tuple_math_of_constants_folds_to_pythons_values(backend):
    out = np.zeros(4)
    constant_tuples[1, 1](out)
    assert out.tolist() == [*math.frexp(12.0), *math.modf(-2.25)]
    assert "gk_frexp" not in constant_tuples.source(out, backend="cuda")


def test_sincos_on_the_host_is_the_same_entry():
    s, c = gk.sincos(np.float32(0.5))
    assert (s, c) == (np.sin(np.float32(0.5)), np.cos(np.float32(0.5))) and s.dtype == np.float32


def _compile(src: str):
    from kernel_source import load_kernel

    return load_kernel("import math\nimport gpukern as gk\nfrom gpukern import *\n\n" + src, "tuples")


@pytest.mark.parametrize(
    "body, message",
    [
        ("@func\ndef f(x):\n    if x > 0:\n        return x, x\n    return x, x, x\n", "returns 3 items here and 2"),
        ("@func\ndef f(x):\n    if x > 0:\n        return x\n    return x, x\n", "returns a single value elsewhere"),
        ("@func\ndef f(x):\n    if x > 0:\n        return x, x\n    return x\n", "returns a tuple of 2 items"),
        ("@func\ndef f(x):\n    return ()\n", "cannot return an empty tuple"),
        ("@func\ndef f(x):\n    return x, (x, x)\n", "a returned tuple's item must be a number"),
    ],
)
def test_mismatched_returns_are_refused_at_their_line(body, message):
    k = _compile(body + "\n@kernel\ndef k(a: Array[float32]):\n    a[0] = f(a[0])[0]\n")
    with pytest.raises(gk.KernelTypeError, match=message):
        k.source(np.zeros(1, np.float32))


@pytest.mark.parametrize(
    "use, where",
    [
        ("    while f(a[0])[0] > 0:\n        a[0] -= 1.0\n", "a while loop's condition"),
        ("    a[0] = f(a[0])[0] if a[1] > 0 else 0.0\n", "if-else"),
        ("    a[0] = 1.0 if a[1] > 0 and f(a[0])[0] > 0 else 0.0\n", "the right operand of 'and'"),
    ],
)
def test_tuple_calls_where_python_evaluates_again_or_not_at_all_are_refused(use, where):
    k = _compile("@func\ndef f(x):\n    return x - 1.0, x\n\n@kernel\ndef k(a: Array[float32]):\n" + use)
    with pytest.raises(gk.KernelSyntaxError, match=f"{where} cannot call a function that returns a tuple"):
        k.source(np.zeros(2, np.float32))


def test_unpacking_the_wrong_number_of_items_is_refused():
    k = _compile("@func\ndef f(x):\n    return x, x\n\n@kernel\ndef k(a: Array[float32]):\n    x, y, z = f(a[0])\n")
    with pytest.raises(gk.KernelTypeError, match="cannot unpack a tuple of 2 items into 3 names"):
        k.source(np.zeros(1, np.float32))
