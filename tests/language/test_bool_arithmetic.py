"""``+`` and ``*`` of two bools: a bool, as in NumPy (``True + True`` is ``True``), never silently:
a ``gk.KernelWarning`` at the line says that Python and Numba give an integer and how to count
(issue 32: a game of life counting live neighbours as bools gave an empty board with no word)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, bool_, int32, kernel


@kernel
def neighbours_as_bools(a: Array[bool_], out: Array[int32]):
    i = gk.global_id(0)
    if 0 < i < a.shape[0] - 1:
        out[i] = a[i - 1] + a[i] + a[i + 1]  # BOOLS


@kernel
def neighbours_counted(a: Array[bool_], out: Array[int32]):
    i = gk.global_id(0)
    if 0 < i < a.shape[0] - 1:
        out[i] = int(a[i - 1]) + int(a[i]) + int(a[i + 1]) + (True + True) - 2  # literals: Python's 2


CELLS = np.array([1, 1, 1, 0, 1, 0, 0, 1], bool)


def _line(marker: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(neighbours_as_bools.fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


def test_two_bools_add_as_numpy_and_the_line_is_warned(backend):
    out = np.zeros(8, np.int32)
    gk.clear_cache()
    with pytest.warns(gk.KernelWarning, match=r"\+ of two bools is a bool here") as caught:
        neighbours_as_bools.variants.clear()
        neighbours_as_bools[1, 8](CELLS, out)
    w = caught[0]
    assert w.lineno == _line("# BOOLS") and "int(a) + int(b)" in str(w.message)
    a = CELLS.astype(bool)
    want = np.zeros(8, np.int32)
    want[1:-1] = (a[:-2] + a[1:-1] + a[2:]).astype(np.int32)  # NumPy's own: an or
    np.testing.assert_array_equal(out, want)


def test_counting_after_int_is_quiet_and_counts(backend):
    out = np.zeros(8, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gk.KernelWarning)
        neighbours_counted.variants.clear()
        neighbours_counted[1, 8](CELLS, out)
    a = CELLS.astype(np.int32)
    assert out[1:-1].tolist() == (a[:-2] + a[1:-1] + a[2:]).tolist()


def test_the_warning_can_be_made_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gk.KernelWarning)
        neighbours_as_bools.variants.clear()
        with pytest.raises(gk.KernelWarning, match="Python and Numba"):
            neighbours_as_bools.source(CELLS, np.zeros(8, np.int32))
