"""NumPy's names for types inside kernels, as Numba-CUDA and CuPy-JIT kernels write them: casts
``np.float32(x)``, ``np.int64(i)``, ``np.dtype(t).type(v)``, annotations ``x: np.float32``, scalar
parameters annotated ``np.int32`` -- each the same type as gpukern's own name, on every backend,
against NumPy's own conversion of the same values (issue 32: they were refused as "cannot call")."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, kernel
from gpukern.types import type_named

SCALE_TYPE = np.float32  # a module's global, as CuPy's tests pass a dtype


@kernel
def numpy_casts(a: Array[gk.float64], i64: Array[gk.int64], f32: Array[gk.float32], u8: Array[gk.uint8]):
    i = gk.global_id(0)
    if i < a.shape[0]:
        i64[i] = np.int64(a[i]) + np.dtype(np.int64).type(1)
        f32[i] = np.float32(a[i]) * np.dtype("float32").type(2)
        u8[i] = np.uint8(np.int64(a[i]))  # wraps, as NumPy's astype does
        x: np.float32 = a[i]
        f32[i] += x + np.dtype(SCALE_TYPE).type(0.25)


@kernel
def numpy_scalar_param(out: Array[gk.int32], n: np.int32, h: np.float16):
    out[0] = n * 2
    out[1] = np.int32(np.float32(h) * 4)


def test_numpy_casts_match_numpys_own_on_every_backend(backend):
    a = np.array([1.5, -2.7, 300.2, 1e3, -0.5], np.float64)
    i64, f32, u8 = np.zeros(5, np.int64), np.zeros(5, np.float32), np.zeros(5, np.uint8)
    numpy_casts[1, 32](a, i64, f32, u8)
    np.testing.assert_array_equal(i64, a.astype(np.int64) + 1)
    x = a.astype(np.float32)
    np.testing.assert_array_equal(f32, x * np.float32(2) + (x + np.float32(0.25)))
    np.testing.assert_array_equal(u8, a.astype(np.int64).astype(np.uint8))


def test_numpy_names_annotate_scalar_parameters(backend):
    out = np.zeros(2, np.int32)
    numpy_scalar_param[1, 1](out, np.int32(21), np.float16(2.5))
    assert out.tolist() == [42, 10]
    variant = numpy_scalar_param.variant(numpy_scalar_param.signature_of((out, 1, 1.0)))
    assert variant.arg_types[1:] == (gk.int32, gk.float16)


@pytest.mark.parametrize(
    "name, want",
    [
        (np.float32, gk.float32),
        (np.int64, gk.int64),
        (np.intp, gk.int64),
        (np.bool_, gk.bool_),
        (np.complex128, gk.complex128),
        (np.dtype("uint16"), gk.uint16),
        (float, gk.float32),  # Python's names keep GPU widths
        (gk.int8, gk.int8),
        (np.str_, None),
        (np.object_, None),
        ("float32", None),  # a string is a type only inside np.dtype()
    ],
)
def test_one_table_says_what_a_type_name_means(name, want):
    assert type_named(name) == want


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "    out[0] = np.dtype(out[0]).type(1)\n",
            r"np\.dtype\(\) in a kernel takes a scalar type known at compile time",
        ),
        ("    out[0] = np.dtype('U3').type(1)\n", r"not 'U3'"),
        ("    out[0] = np.str_(1)\n", r"cannot call np\.str_ in a kernel"),
    ],
)
def test_numpy_names_that_are_not_types_are_refused_at_the_line(tmp_path, body, message):
    path = tmp_path / "refused_numpy_names.py"
    path.write_text("import numpy as np\nimport gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.int32]):\n" + body)
    import importlib.util

    spec = importlib.util.spec_from_file_location("refused_numpy_names", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(gk.KernelTypeError, match=message) as e:
        module.k.source(np.zeros(1, np.int32))
    assert e.value.loc is not None and e.value.loc.lineno == 6, e.value
