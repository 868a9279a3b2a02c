"""The 8-bit floats (float8_e4m3fn, float8_e5m2): storage types whose NumPy forms (gpukern.types)
are checked against their definition here, whose C on every backend gives the same bits, and whose
warpgroup multiply (k = 32) and TMA copies give NumPy's products."""

from __future__ import annotations

import math

import numpy as np
import pytest
from compilers import need_sm90
from kernel_source import load_example, load_kernel

import gpukern as gk
from gpukern import Array, float8_e4m3fn, float8_e5m2, float32

TYPES = [(float8_e4m3fn, 4, 7, 448.0), (float8_e5m2, 5, 15, 57344.0)]


def _value(bits: int, e_bits: int, bias: int, ieee: bool) -> float:
    """The value of an 8-bit float's bits, from the definition (OCP 8-bit floating point, v1.0)."""
    m_bits = 7 - e_bits
    sign = -1.0 if bits & 0x80 else 1.0
    e, m = (bits >> m_bits) & ((1 << e_bits) - 1), bits & ((1 << m_bits) - 1)
    if e == (1 << e_bits) - 1 and (ieee or m == (1 << m_bits) - 1):
        return sign * math.inf if ieee and m == 0 else math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2**m_bits) * 2.0 ** (e - bias)


@pytest.mark.parametrize("t, e_bits, bias, largest", TYPES)
def test_every_bit_pattern_is_the_value_the_format_defines(t, e_bits, bias, largest):
    want = [_value(b, e_bits, bias, t is float8_e5m2) for b in range(256)]
    np.testing.assert_array_equal(t.to_value(np.arange(256, dtype=np.uint8)), np.array(want, np.float32))
    assert float(t.to_value(np.array([0x7E if t is float8_e4m3fn else 0x7B], np.uint8))[0]) == largest


@pytest.mark.parametrize("t, e_bits, bias, largest", TYPES)
def test_rounding_is_to_nearest_even_and_saturates(t, e_bits, bias, largest):
    """Every value halfway between two neighbours goes to the even one; beyond the largest finite
    value (inf too) the largest, as CUDA's satfinite conversion; NaN stays a NaN of its sign."""
    top = 0x7E if t is float8_e4m3fn else 0x7B
    values = t.to_value(np.arange(0, top + 1, dtype=np.uint8)).astype(np.float64)  # 0 .. largest, ascending
    mid = ((values[:-1] + values[1:]) / 2).astype(np.float32)
    got = t.from_value(mid)
    lo = np.arange(len(mid))
    np.testing.assert_array_equal(got, np.where(lo % 2 == 0, lo, lo + 1))
    np.testing.assert_array_equal(t.from_value(-mid), np.where(lo % 2 == 0, lo, lo + 1) | 0x80)
    big = np.array([largest, largest * 1.2, 1e30, np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(t.from_value(big), [top, top, top, top, top | 0x80])
    assert list(t.from_value(np.array([np.nan, -np.nan], np.float32))) == [0x7F, 0xFF]


@gk.kernel
def convert(x: Array[float32], a: Array[float8_e4m3fn], b: Array[float8_e5m2], back: Array[float32, 2]):
    i = gk.global_id(0)
    if i < x.shape[0]:
        a[i] = x[i]
        b[i] = x[i]
        back[0, i] = a[i]
        back[1, i] = b[i]


def test_every_backend_stores_and_reads_the_same_bits(backend):
    rng = np.random.default_rng(0)
    specials = [0, -0.0, 448, 449, 464, 465, 1e9, -1e9, np.inf, -np.inf, np.nan, 57344, 61440, 2**-10, 3 * 2**-10]
    x = np.concatenate([rng.standard_normal(4000) * 100, rng.standard_normal(4000) * 1e-3, specials])
    x = x.astype(np.float32)
    a, b = np.zeros(len(x), np.uint8), np.zeros(len(x), np.uint8)
    back = np.zeros((2, len(x)), np.float32)
    convert[(len(x) + 255) // 256, 256](x, a, b, back)
    np.testing.assert_array_equal(a, float8_e4m3fn.from_value(x))
    np.testing.assert_array_equal(b, float8_e5m2.from_value(x))
    np.testing.assert_array_equal(back[0], float8_e4m3fn.to_value(a))
    np.testing.assert_array_equal(back[1], float8_e5m2.to_value(b))


def test_ml_dtypes_arrays_are_taken_and_agree():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.random.default_rng(1).standard_normal(5000).astype(np.float32) * 30
    for t in (float8_e4m3fn, float8_e5m2):
        ref = x.astype(getattr(ml_dtypes, t.name))  # (in range: ml_dtypes does not saturate)
        np.testing.assert_array_equal(t.from_value(x), ref.view(np.uint8))
        assert gk.types.from_dtype(ref.dtype) is t


@pytest.mark.parametrize("t", [float8_e4m3fn, float8_e5m2])
def test_the_fp8_tma_gemm_is_numpys_product(backend, t):
    """examples/matmul_tma.py's FP8 kernel (k = 32 wgmma's, TMA boxes of 128 x 128 bytes), C in
    bfloat16 times a scale: at sizes past its tiles' edges."""
    need_sm90(backend, "FP8 wgmma and TMA")
    mt = load_example("matmul_tma")
    kern = mt.fp8gemm_tma if t is float8_e4m3fn else mt.make_tma(t, OUT=gk.bfloat16)
    m, n, k = 130, 264, 144
    rng = np.random.default_rng(2)
    a = t.from_value(rng.standard_normal((m, k)).astype(np.float32))
    bt = t.from_value(rng.standard_normal((n, k)).astype(np.float32))
    c = gk.to_device(np.zeros((m, n), np.uint16))
    mt.run_transposed(kern, gk.to_device(a), gk.to_device(bt), c, m, n, k, scale=0.5)
    av, bv = t.to_value(a).astype(np.float64), t.to_value(bt).astype(np.float64).T
    exact = 0.5 * (av @ bv)
    got = gk.bfloat16.to_value(c.get())
    # bfloat16's rounding of C, and the accumulation's (FP8's on a GPU: gk.mma_ops.FP8_ACCUMULATION)
    tol = 2.0**-8 * np.abs(exact) + 0.5 * gk.mma_ops.tolerance(np.abs(av), np.abs(bv), 32, inputs=t.name)
    assert (np.abs(got - exact) <= tol).all()


def test_fp8_b_is_k_major_only():
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import Array, float32, float8_e4m3fn as E\n\n@gk.kernel\n"
        "def k(c: Array[float32, 2]):\n    s = gk.shared(E, 16384)\n"
        "    acc = gk.fragment('accumulator', 64, 64, 32, float32)\n"
        "    acc = gk.wgmma(acc, s, 0, s, 8192, b_width=128)\n"
    )
    with pytest.raises(gk.KernelTypeError, match="float8_e4m3fn operands reads B K-major only"):
        k.source(Array[float32, 2])
