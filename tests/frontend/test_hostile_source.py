"""Kernel source an adversarial user might write: each is Python's meaning or a typed compile error.

(The issue's list of inputs that reached internals: deep expressions, huge constants, names that C
headers predefine, expressions evaluated twice.)
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import load_kernel as _load_kernel

import gpukern as gk
from gpukern import Array, float32, global_id, int32, kernel


def load_kernel(text: str):
    """A kernel from source text, through a real file (so it has source lines for errors)."""
    return _load_kernel("import gpukern as gk\nfrom gpukern import *\n\n@gk.kernel\n" + text, "hostile")


def test_a_500_term_expression_compiles_and_runs(backend):
    k = load_kernel(
        "def k(x: Array[float32], out: Array[float32]):\n    i = global_id(0)\n    v = x[i]\n"
        f"    out[i] = {' + '.join(['v'] * 500)}\n",
    )
    x = np.arange(1, 5, dtype=np.float32)
    out = np.zeros(4, np.float32)
    k[1, 4](x, out)
    np.testing.assert_array_equal(out, 500 * x)


def test_an_expression_deeper_than_the_limit_is_a_compile_error_at_its_line():
    k = load_kernel(
        f"def k(x: Array[float32], out: Array[float32]):\n    out[0] = {' + '.join(['x[0]'] * 1100)}\n",
    )
    with pytest.raises(gk.CompileError, match="nested more than 1000 levels") as e:
        k.source(Array[float32], Array[float32])
    assert e.value.lineno == 6


@pytest.mark.parametrize(
    "body, words",
    [
        ("out[0] = int32(2**70)", "cannot evaluate constant expression"),
        ("out[0] = out[0] * 10**400", "too large for float32"),
        ("for i in unroll(range(2**70)):\n        out[0] += 1.0", "more than 2\\*\\*63 iterations"),
        ("for i in unroll(range(5000)):\n        out[0] += 1.0", "5000 iterations"),
        ("n = out.shape[0] + 2**64", "does not fit in int64"),
        ("t = shared(float32, (2**20, 2**20))", "too large"),
        ("launch_bounds(2**40)", "below 2\\*\\*31"),
    ],
)
def test_huge_constants_are_compile_errors(body, words):
    k = load_kernel(f"def k(out: Array[float32]):\n    {body}\n")
    with pytest.raises(gk.CompileError, match=words) as e:
        k.source(Array[float32])
    assert e.value.lineno is not None


@pytest.mark.parametrize("name", ["M_PI", "FLT_MAX", "INT_MAX", "NULL", "pipe", "_Noreturn", "CLK_LOCAL_MEM_FENCE"])
def test_locals_named_like_c_macros_and_keywords(backend, name):
    k = load_kernel(f"def k(out: Array[float32]):\n    {name} = out[0] + 1.0\n    out[0] = {name} * 2.0\n")
    out = np.array([1.5], np.float32)
    k[1, 1](out)
    assert out[0] == 5.0
    src = k.source(out, backend="opencl")
    assert f"float {name}_ = " in src  # renamed in C, where the name means something else


@kernel
def chained_atomic(c: Array[int32], x: Array[int32], y: Array[int32]):
    i = global_id(0)
    x[i] = y[i] = gk.atomic_add(c, 0, 1)


def test_chained_assignment_evaluates_the_call_once(backend):
    c, x, y = np.zeros(1, np.int32), np.zeros(8, np.int32), np.zeros(8, np.int32)
    chained_atomic[1, 8](c, x, y)
    assert c[0] == 8  # one increment per thread, not two
    np.testing.assert_array_equal(x, y)
    assert sorted(x) == list(range(8))


@kernel
def chained_reads_old(out: Array[int32]):
    x = out[0]
    x = y = x + 1
    out[1] = x
    out[2] = y


def test_chained_assignment_assigns_one_value(backend):
    out = np.array([41, 0, 0], np.int32)
    chained_reads_old[1, 1](out)
    assert list(out) == [41, 42, 42]  # y is not recomputed from the new x


@kernel
def augmented_atomic_index(c: Array[int32], out: Array[float32]):
    out[gk.atomic_add(c, 0, 1)] += 5.0


def test_augmented_store_evaluates_its_index_once(backend):
    c, out = np.zeros(1, np.int32), np.zeros(8, np.float32)
    augmented_atomic_index[1, 4](c, out)
    assert c[0] == 4
    np.testing.assert_array_equal(out, [5, 5, 5, 5, 0, 0, 0, 0])


def _kernel_with_a_string_at_column_0(out: gk.Array[gk.float32]):
    """A docstring whose lines start further left than the body:
    text at column 0 cuts a naive look for the end of the definition short
    """
    out[0] = 1.0


def test_definitions_are_found_whole_whatever_their_lines_look_like():
    """The fast look for a definition's lines falls back on ``inspect`` where it cannot be sure,
    and positions point into the real file either way (indented, multi-line header, column-0 string)."""
    import inspect

    from gpukern.ir.source import parse_function

    def nested(
        out: gk.Array[gk.float32],
    ):
        out[0] = 2.0  # the body's first statement

    for fn, value in ((nested, 2.0), (_kernel_with_a_string_at_column_0, 1.0)):
        parsed = parse_function(fn)
        lines, first = inspect.getsourcelines(fn)
        assert parsed.tree.lineno == first + sum(1 for x in lines if x.lstrip().startswith("@"))
        stmt = parsed.tree.body[-1]
        assert lines[stmt.lineno - first][stmt.col_offset :].startswith("out[0] = ")
        out = np.zeros(1, np.float32)
        gk.kernel(fn)[1, 1](out, backend="sim")
        assert out[0] == value
