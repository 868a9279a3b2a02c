"""What a store converts (compile option ``casting=``) and what bool arithmetic gives (``bools=``):
gpukern's defaults are NumPy's (``same_kind``; ``True + True`` is ``True``), Numba's and CuPy's
layers choose ``casting="unsafe"`` and ``bools="python"`` (issue 32), and ``gk.sanitize`` reports a
store whose conversion changed a value, which Numba and CuPy do silently."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, bool_, float32, float64, int64, kernel, uint8


@kernel
def narrowing_refused(a: Array[int64], out: Array[uint8]):
    out[0] = a[0]


@kernel(casting="unsafe")
def narrowing(a: Array[int64], f: Array[float64], out: Array[uint8], fo: Array[int64], cnt: Array[uint8]):
    i = gk.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i]  # STORE
        fo[i] = f[i]
        gk.atomic_add(cnt, 0, a[i] % 256)  # an atomic's operand converts too


@kernel(bools="python")
def counting_bools(a: Array[bool_], out: Array[int64]):
    i = gk.global_id(0)
    if 0 < i < a.shape[0] - 1:
        out[i] = a[i - 1] + a[i] + a[i + 1]


@kernel
def narrower_float(x: Array[float64], y: Array[float32]):
    y[0] = x[0]  # FLOAT


def test_the_default_refuses_a_narrowing_store():
    with pytest.raises(gk.KernelTypeError, match="cannot store a int64 value into array 'out' of type uint8"):
        narrowing_refused.source(np.zeros(1, np.int64), np.zeros(1, np.uint8))


def test_unsafe_casting_converts_as_numpy_on_every_backend(backend):
    a = np.array([7, 300, 255, 256 + 9], np.int64)  # integers wrap on every backend (C's unsigned rule)
    f = np.array([1.75, -2.5, 1e3, 0.0])  # fractions cut toward zero, in range
    out, fo, cnt = np.zeros(4, np.uint8), np.zeros(4, np.int64), np.zeros(1, np.uint8)
    narrowing[1, 4](a, f, out, fo, cnt)
    assert out.tolist() == a.astype(np.uint8).tolist() and fo.tolist() == f.astype(np.int64).tolist()
    assert cnt[0] == a.astype(np.uint8).sum(dtype=np.uint8)


def test_sanitize_reports_the_store_that_changed_a_value_and_a_plain_launch_does_not(on_simulator):
    a = np.array([7, 300, 255, 1], np.int64)
    args = (a, np.zeros(4), np.zeros(4, np.uint8), np.zeros(4, np.int64), np.zeros(1, np.uint8))
    narrowing[1, 4](*args)  # no error: Numba's and CuPy's meaning
    faults = gk.sanitize(narrowing[1, 4], *args)
    assert [type(f) for f in faults] == [gk.ConversionError]
    text = str(faults[0])
    assert "the int64 value 300 stored as uint8 becomes 44" in text and "1 thread(s)" in text
    assert "# STORE" in faults[0].loc.source_line()
    assert gk.sanitize(narrowing[1, 4], np.array([7, 8, 9, 1], np.int64), *args[1:]) == []


def test_an_overflow_to_inf_of_a_narrower_float_is_reported(on_simulator):
    faults = gk.sanitize(narrower_float[1, 1], np.array([1e40]), np.zeros(1, np.float32))
    assert len(faults) == 1 and "becomes inf" in str(faults[0]) and "# FLOAT" in faults[0].loc.source_line()
    assert gk.sanitize(narrower_float[1, 1], np.array([0.1]), np.zeros(1, np.float32)) == []  # rounding is not


def test_python_bools_count_on_every_backend(backend):
    cells = np.array([1, 1, 1, 0, 1, 0, 0, 1], bool)
    out = np.zeros(8, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gk.KernelWarning)  # no warning: the kernel chose Python's meaning
        counting_bools[1, 8](cells, out)
    c = cells.astype(np.int64)
    assert out[1:-1].tolist() == (c[:-2] + c[1:-1] + c[2:]).tolist()


def test_a_constant_that_does_not_fit_is_converted_and_said(tmp_path):
    path = tmp_path / "constant_store.py"
    path.write_text(
        "import gpukern as gk\n\n@gk.kernel(casting='unsafe')\ndef k(out: gk.Array[gk.uint8]):\n    out[0] = 300\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("constant_store", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.warns(gk.KernelWarning, match="the constant 300 stored into array 'out' of type uint8 becomes 44"):
        assert "44" in module.k.source(np.zeros(1, np.uint8))


@pytest.mark.parametrize(("option", "value"), [("casting", "safe"), ("bools", True)])
def test_the_options_take_their_choices_only(option, value):
    with pytest.raises(gk.KernelTypeError, match=f"compile option {option}=.*must be"):
        kernel(**{option: value})(lambda out: None)
