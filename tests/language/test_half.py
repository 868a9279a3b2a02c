"""float16 and bfloat16 against NumPy, on every backend (docs/language.md, "Types").

float16 is IEEE half: every operation rounds to half, as NumPy's float16 does -- on CUDA in
``__half``, on OpenCL as a float rounded to half after each operation (through
``vstore_half``/``vload_half``, so devices without ``cl_khr_fp16`` give the same bits), on the
simulator in NumPy.  So results are compared bit for bit (any NaN matching any NaN), but for
the math functions the device's library computes (in float32, then rounded): one unit in the
last place of half.  bfloat16 is storage: an element read is a float32, a store rounds to
nearest even; the reference here rounds by comparing distances, independently of gpukern.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpukern as gk
from gpukern import Array, bfloat16, float16, float32, float64, global_id, int8, int16, int32, shared, thread_idx
from gpukern import testing as gkt

F16 = np.float16
EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.1, -2.5, 3.0, 1000.0, 60000.0, 65504.0, -65504.0, 2.0**-24, -(2.0**-24), 2.0**-14,
     3 * 2.0**-24, 0.5, math.inf, -math.inf, math.nan, 7.0],
    F16,
)  # fmt: skip


def pairs() -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(EDGES, len(EDGES)), np.tile(EDGES, len(EDGES))


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: the same bits, or both NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    u = f"u{want.itemsize}"
    return (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str, *operands: np.ndarray) -> None:
    ok = same_bits(got, want)
    bad = np.flatnonzero(~ok.reshape(-1))
    cases = [f"{[float(o.reshape(-1)[j]) for o in operands]}: got {got.reshape(-1)[j]!r}, want {want.reshape(-1)[j]!r}"
             for j in bad[:10]]  # fmt: skip
    assert not len(bad), f"{what}: {len(bad)} differ\n" + "\n".join(cases)


def half_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float16 units in the last place (both zeros 0 apart; inf/NaN: 0 where alike)."""

    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.view(np.int16).astype(np.int64)
        return np.where(i < 0, -32768 - i, i)

    alike = same_bits(got, want)
    finite = np.isfinite(got) & np.isfinite(want)
    return np.where(alike, 0, np.where(finite, np.abs(ordered(got) - ordered(want)), 1 << 20))


# ---------------------------------------------------------------- float16 operators
@gk.kernel
def half_ops(a: Array[float16], b: Array[float16], c: Array[float16], out: Array[float16, 2], cmp: Array[gk.bool_, 2]):
    i = global_id(0)
    if i >= a.shape[0]:
        return
    x, y = a[i], b[i]
    out[0, i] = x + y
    out[1, i] = x - y
    out[2, i] = x * y
    out[3, i] = x / y
    out[4, i] = x * y + c[i]  # two roundings, as NumPy's
    out[5, i] = -x
    out[6, i] = x // y
    out[7, i] = x % y
    out[8, i] = x**y
    out[9, i] = min(x, y)
    out[10, i] = max(x, y)
    out[11, i] = abs(x)
    out[12, i] = x if x > y else y
    out[13, i] = (x + y) * 0.1  # a weak float literal stays float16
    cmp[0, i] = x < y
    cmp[1, i] = x == y
    cmp[2, i] = x != y
    cmp[3, i] = bool(x)


def test_half_operators_round_every_operation(backend):
    """Every operator on every pair of edge values (zeros, subnormals, 65504, overflow to inf,
    NaN), bit for bit with NumPy's float16."""
    a, b = pairs()
    c = np.roll(b, 7)
    out, cmp = np.zeros((14, len(a)), F16), np.zeros((4, len(a)), bool)
    half_ops[(len(a) + 63) // 64, 64](a, b, c, out, cmp)
    with np.errstate(all="ignore"):
        picks = [np.where(b < a, b, a), np.where(b > a, b, a), np.abs(a), np.where(a > b, a, b)]
        want = [a + b, a - b, a * b, a / b, a * b + c, -a, a // b, a % b, a**b, *picks, (a + b) * F16(0.1)]
    names = ["+", "-", "*", "/", "a*b+c", "neg", "//", "%", "**", "min", "max", "abs", "select", "(a+b)*0.1"]
    for row, (name, w) in enumerate(zip(names, want)):
        assert w.dtype == F16
        if name == "**":  # C's pow (in float32) from the device's library: within one half ulp
            assert (half_ulps(out[row], w) <= 1).all(), name
        else:
            assert_same_bits(out[row], w, name, a, b)
    np.testing.assert_array_equal(cmp, [a < b, a == b, a != b, a != 0])


def test_half_edge_cases_are_numpys():
    """The edge values exercise what they should: overflow to inf, subnormal results, -0.0."""
    with np.errstate(over="ignore"):
        assert np.isinf(F16(60000) + F16(60000)) and F16(2.0**-24) * F16(0.5) == 0
    assert np.signbit(F16(-0.0) * F16(1)) and F16(2.0**-14) / F16(2) == F16(2.0**-15)


MATH = ["sqrt", "exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "atan", "floor", "ceil", "trunc", "fabs"]
EXACT = {"floor", "ceil", "trunc", "fabs", "sqrt"}  # sqrt: correctly rounded in float32, then to half


@gk.kernel
def half_math(a: Array[float16], out: Array[float16, 2], pred: Array[gk.bool_, 2]):
    i = global_id(0)
    if i >= a.shape[0]:
        return
    x = a[i]
    out[0, i] = math.sqrt(x)
    out[1, i] = math.exp(x)
    out[2, i] = math.log(x)
    out[3, i] = math.sin(x)
    out[4, i] = math.cos(x)
    out[5, i] = math.tanh(x)
    out[6, i] = math.expm1(x)
    out[7, i] = math.log1p(x)
    out[8, i] = math.atan(x)
    out[9, i] = math.floor(x)
    out[10, i] = math.ceil(x)
    out[11, i] = math.trunc(x)
    out[12, i] = math.fabs(x)
    pred[0, i] = math.isnan(x)
    pred[1, i] = math.isinf(x)


def test_half_math_is_float32_rounded_to_half(backend):
    """Math functions of a float16 compute in float32 and round to half, as NumPy's float16 loops:
    NaN and infinities where NumPy has them, finite values within one half ulp (the float32
    library's own error can tip a rounding), the exact ones bit for bit."""
    rng = np.random.default_rng(2)
    a = np.concatenate([EDGES, rng.uniform(-12, 12, 300).astype(F16), rng.uniform(0, 2, 100).astype(F16)])
    out, pred = np.zeros((len(MATH), len(a)), F16), np.zeros((2, len(a)), bool)
    half_math[(len(a) + 63) // 64, 64](a, out, pred)
    for row, name in enumerate(MATH):
        with np.errstate(all="ignore"):
            want = getattr(np, {"atan": "arctan"}.get(name, name))(a)
        assert want.dtype == F16
        if name in EXACT:
            assert_same_bits(out[row], want, name, a)
        else:
            far = half_ulps(out[row], want) > 1
            assert not far.any(), f"{name}{a[far][:5]}: got {out[row][far][:5]}, want {want[far][:5]}"
    np.testing.assert_array_equal(pred, [np.isnan(a), np.isinf(a)])


# ---------------------------------------------------------------- promotion, parameters, casts
@gk.kernel
def half_promotion(h: Array[float16], i8: Array[int8], i16: Array[int16], f: Array[float32], out: Array[float64, 2]):
    i = global_id(0)
    out[0, i] = h[i] + i8[i]  # float16
    out[1, i] = h[i] + i16[i]  # float32
    out[2, i] = h[i] * 0.1  # float16: the literal is weak
    out[3, i] = h[i] + f[i]  # float32
    out[4, i] = h[i] / 3  # float16


def test_half_promotion_is_nep50(backend):
    """float16 + int8 is float16, float16 + int16 is float32, a literal takes float16: values chosen
    so that the two widths give different results (0.01 + 100 is 100.0 in half)."""
    h = np.array([0.01, 0.5, 3.0, 1000.0, -0.3], F16)
    i8 = np.array([100, 127, -128, 5, 1], np.int8)
    i16 = np.array([2047, 30000, -7, 2049, 1], np.int16)
    f = np.array([1e-4, 0.1, 1e8, 3.0, 0.3], np.float32)
    out = np.zeros((5, 5))
    half_promotion[1, 5](h, i8, i16, f, out)
    want = [h + i8, h + i16, h * 0.1, h + f, h / 3]
    assert [w.dtype for w in want] == [F16, np.float32, F16, np.float32, F16]
    np.testing.assert_array_equal(out, np.array([w.astype(np.float64) for w in want]))
    assert out[0, 0] == 100.0 and out[1, 0] != 2047.0  # half would round 100.01 and 2047.01 to whole numbers


@gk.kernel
def scaled(a: Array[float16], out: Array[float16], s: float16):
    i = global_id(0)
    out[i] = a[i] * s


def test_half_scalar_parameter(backend):
    """A float16 parameter takes Python and NumPy floats rounded to half like ``numpy.float16``;
    beyond half's range is a LaunchError."""
    a = EDGES.copy()
    for s in (0.1, F16(-2.5), 1e-7, 65504.0, math.inf, np.float32(3.3)):
        out = np.zeros_like(a)
        scaled[1, len(a)](a, out, s)
        with np.errstate(all="ignore"):
            assert_same_bits(out, a * F16(s), f"a * {s!r}", a)
    with pytest.raises(gk.LaunchError, match="does not fit in float16"):
        scaled[1, len(a)](a, np.zeros_like(a), 1e5)


@gk.kernel
def to_half(d: Array[float64], f: Array[float32], n: Array[int32], out: Array[float16, 2]):
    i = global_id(0)
    out[0, i] = float16(d[i])
    out[1, i] = float16(f[i])
    out[2, i] = float16(n[i])


@gk.kernel
def from_half(h: Array[float16], n: Array[int32], d: Array[float64], b: Array[gk.bool_]):
    i = global_id(0)
    n[i] = int32(h[i])
    d[i] = float64(h[i])
    b[i] = bool(h[i])


def test_half_casts_round_once(backend):
    """To half, a float64 rounds once (not through float32: 1 + 2**-11 + 2**-40 is above the
    midpoint, so it rounds up, where float32 would make it the midpoint and then round to even);
    integers past 65519 overflow to inf.  From half, conversions are exact (int32 truncates)."""
    d = np.array([1 + 2**-11 + 2**-40, 65519.0, 65520.0, 1e-8, -0.0, math.nan, 2.0**-25, 2.0**-25 + 2**-40])
    f = d.astype(np.float32)
    n = np.array([65519, 65520, -65520, 2049, 2051, -1, 0, 7], np.int32)
    out = np.zeros((3, 8), F16)
    to_half[1, 8](d, f, n, out)
    with np.errstate(all="ignore"):
        assert_same_bits(out[0], d.astype(F16), "float16(float64)", d)
        assert_same_bits(out[1], f.astype(F16), "float16(float32)", f)
        assert_same_bits(out[2], n.astype(F16), "float16(int32)", n)
    assert out[0, 0] != out[1, 0]  # the double-rounding case is one
    h = np.array([1.5, -2.75, 65504, -0.0, 0.0, 2.0**-24, 1000.9, -7.0], F16)
    ni, dd, bb = np.zeros(8, np.int32), np.zeros(8), np.zeros(8, bool)
    from_half[1, 8](h, ni, dd, bb)
    np.testing.assert_array_equal(ni, h.astype(np.int32))
    np.testing.assert_array_equal(dd, h.astype(np.float64))
    np.testing.assert_array_equal(bb, h != 0)


@gk.func
def fused(x: float16, y: float16) -> float16:
    return x * y + float16(1)


@gk.kernel
def half_shared(a: Array[float16], out: Array[float16]):
    s = shared(float16, 64)
    j = thread_idx.x
    s[j] = a[global_id(0)]
    gk.barrier()
    out[global_id(0)] = fused(s[63 - j], s[j])


def test_half_in_shared_memory_and_functions(backend):
    a = np.random.default_rng(4).uniform(-300, 300, 128).astype(F16)
    out = np.zeros_like(a)
    half_shared[2, 64](a, out)
    r = a.reshape(2, 64)[:, ::-1].reshape(-1)
    with np.errstate(all="ignore"):
        assert_same_bits(out, r * a + F16(1), "shared, func", a)


@gk.kernel
def half_poly(a, b, c, out):
    i = global_id(0)
    if i < out.shape[0]:
        out[i] = (a[i] - b[i]) * c[i] + a[i] / (b[i] + c[i])


@settings(deadline=None, max_examples=30)
@given(st.data())
def test_half_property_any_values(data):
    """Any float16 values (NaN, inf, subnormals, both zeros), any size and launch: bit-for-bit
    NumPy's float16 on every backend (``gpukern.testing``, with no tolerance)."""
    n = data.draw(gkt.sizes(1, 200))
    cfg = data.draw(gkt.launch_configs(n, extra_blocks=1))
    arrays = hnp.arrays(np.uint16, n).map(lambda bits: bits.view(F16))  # every pattern: NaNs, subnormals...
    a, b, c = data.draw(arrays), data.draw(arrays), data.draw(arrays)

    def reference(a, b, c, out):
        with np.errstate(all="ignore"):
            return {"out": (a - b) * c + a / (b + c)}

    gkt.assert_kernel_matches(
        lambda a, b, c, out: half_poly[cfg](a, b, c, out), reference, [a, b, c, np.zeros(n, F16)], rtol=0, atol=0
    )


# ---------------------------------------------------------------- bfloat16
def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest, ties to the even pattern), as bits: the two
    neighbours compared by distance in float64, independently of ``gk.bfloat16``."""
    x = np.asarray(x, np.float32)
    out = np.zeros(x.shape, np.uint16)
    for k, v in enumerate(x.reshape(-1)):
        u = int(np.array(v).view(np.uint32))
        if math.isnan(v):
            out.reshape(-1)[k] = (u >> 16) | 0x40
            continue
        low = u >> 16
        v_low = float(np.array(low << 16, np.uint32).view(np.float32))
        high = low + 1
        v_high = float(np.array(high << 16, np.uint32).view(np.float32)) if (high & 0x7FFF) < 0x7F80 else None
        if (high & 0x7FFF) == 0x7F80:  # the next pattern is inf: the rounding boundary is 2**128
            v_high = math.copysign(2.0**128, v)
        if math.isinf(v) or v_high is None:
            out.reshape(-1)[k] = low
            continue
        d_low, d_high = abs(float(v) - v_low), abs(v_high - float(v))
        out.reshape(-1)[k] = low if d_low < d_high or (d_low == d_high and low % 2 == 0) else high
    return out


def bf16_floats(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


BF16_EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.01171875, 3.3895314e38, 3.3961e38, 3.4e38, -3.4e38, 1e-40, 9.2e-41,
     1.1754944e-38, math.inf, -math.inf, math.nan, -math.nan, 0.1, 7.0, 1.0 + 2**-8 + 2**-20],
    np.float32,
)  # fmt: skip


@gk.kernel
def bf16_kernel(a: Array[bfloat16], f: Array[float32], out: Array[bfloat16, 2], read: Array[float32]):
    i = global_id(0)
    s = shared(bfloat16, 64)
    s[thread_idx.x] = f[i]  # rounded
    gk.barrier()
    read[i] = a[i]  # exact: a float32
    out[0, i] = f[i]
    out[1, i] = a[i] * f[i] + s[63 - thread_idx.x]  # float32 arithmetic, one rounding at the store


def test_bfloat16_reads_float32_and_stores_round_to_nearest_even(backend):
    """Reads give the float32 value; stores round to nearest even, overflow to inf past the
    midpoint above bfloat16's largest value, keep NaN a NaN and -0.0 negative; a uint16 array
    of the bits is taken for ``Array[bfloat16]``."""
    rng = np.random.default_rng(6)
    f = np.concatenate([BF16_EDGES, rng.standard_normal(44).astype(np.float32) * 100])
    a = bf16_round(rng.standard_normal(64).astype(np.float32))
    out, read = np.zeros((2, 64), np.uint16), np.zeros(64, np.float32)
    bf16_kernel[1, 64](a, f, out, read)
    np.testing.assert_array_equal(read.view(np.uint32), bf16_floats(a).view(np.uint32))
    assert_same_bits(bf16_floats(out[0]), bf16_floats(bf16_round(f)), "store", f)
    with np.errstate(all="ignore"):
        wide = bf16_floats(a) * f + bf16_floats(bf16_round(f))[::-1]
    assert_same_bits(bf16_floats(out[1]), bf16_floats(bf16_round(wide)), "a * f + s", a, f)
    assert out[0, 8] == 0x7F80 and out[0, 7] == 0x7F7F and out[0, 1] == 0x8000  # inf, max (below the midpoint), -0.0


def test_bfloat16_host_helpers_match_the_kernels_rounding():
    f = np.concatenate([BF16_EDGES, np.random.default_rng(7).standard_normal(1000).astype(np.float32)])
    np.testing.assert_array_equal(bfloat16.bits(f), bf16_round(f))
    back = bfloat16.floats(bfloat16.bits(f))
    np.testing.assert_array_equal(back.view(np.uint32), bf16_floats(bf16_round(f)).view(np.uint32))
    assert bfloat16(1.00390625) == 1.0 and bfloat16(1.01171875) == 1.015625  # ties to even


def test_bfloat16_arrays_of_ml_dtypes(backend):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    f = np.random.default_rng(8).standard_normal(64).astype(np.float32)
    a = f.astype(ml_dtypes.bfloat16)
    out, read = np.zeros((2, 64), ml_dtypes.bfloat16), np.zeros(64, np.float32)
    bf16_kernel[1, 64](a, f, out, read)
    np.testing.assert_array_equal(read, a.astype(np.float32))
    np.testing.assert_array_equal(out[0].view(np.uint16), f.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_bfloat16_refusals_say_what_to_write():
    @gk.kernel
    def cast(a: Array[float32], out: Array[bfloat16]):
        out[0] = bfloat16(a[0])

    with pytest.raises(gk.KernelTypeError, match="bfloat16 is a storage type"):
        cast.source(np.zeros(1, np.float32), np.zeros(1, np.uint16))

    @gk.kernel
    def param(out: Array[bfloat16], x: bfloat16):
        out[0] = x

    with pytest.raises(gk.LaunchError, match="array element type"):
        param[1, 1](np.zeros(1, np.uint16), 1.0)

    @gk.kernel
    def atomic(out: Array[bfloat16]):
        gk.atomic_add(out, 0, 1.0)

    with pytest.raises(gk.KernelTypeError, match="not bfloat16"):
        atomic.source(np.zeros(1, np.uint16))

    @gk.kernel
    def wrong(out: Array[bfloat16]):
        out[0] = 1.0

    with pytest.raises(gk.LaunchError, match="must be an array of bfloat16"):
        wrong[1, 1](np.zeros(1, np.float32))


# ---------------------------------------------------------------- constant tables
HALF_TABLE = np.array([1.5, -0.0, math.inf, math.nan, 65504, 2.0**-24, 0.1, 3], F16)
BF16_TABLE = bfloat16.bits(np.array([1.5, -0.0, math.inf, math.nan, 3e38, 1e-40, 0.1, 3], np.float32))


@gk.kernel
def read_tables(out: Array[float16], wide: Array[float32]):
    i = global_id(0)
    out[i] = HALF_TABLE[i] * 2


def test_half_constant_table(backend):
    """A module-level float16 array is a constant table (its bits in the C source) read as half."""
    out, wide = np.zeros(8, F16), np.zeros(8, np.float32)
    read_tables[1, 8](out, wide)
    with np.errstate(over="ignore"):
        assert_same_bits(out, HALF_TABLE * F16(2), "HALF_TABLE[i] * 2", HALF_TABLE)


def test_bfloat16_constant_table(backend):
    """A module-level ml_dtypes.bfloat16 array is a constant table of its bits, read as float32."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    table = BF16_TABLE.view(ml_dtypes.bfloat16)

    @gk.kernel
    def k(out: Array[float32]):
        i = global_id(0)
        out[i] = table[i] + 0.5

    out = np.zeros(8, np.float32)
    k[1, 8](out)
    with np.errstate(over="ignore"):
        assert_same_bits(out, bf16_floats(BF16_TABLE) + np.float32(0.5), "table[i] + 0.5", BF16_TABLE)


@gk.kernel
def half_copy(a: gk.Array[gk.float16], b: gk.Array[gk.float16], s: gk.Array[gk.float16]):
    i = gk.global_id(0)
    t = gk.shared(gk.float16, 8)
    t[i] = a[i]
    gk.barrier()
    b[i] = t[i]
    s[i] = a[i] + gk.float16(0)  # arithmetic: a NaN comes out quiet, as on every IEEE device


def test_a_half_copy_keeps_a_signalling_nan(backend):
    """A copy of a half element is its bits, on every backend: a CUDA __half copy and the
    simulator keep them, and OpenCL C copies the ushort instead of going through a float."""
    bits = np.array([0x7C01, 0xFC01, 0x7E01, 0x3C00, 0x0001, 0x8000], np.uint16)
    a = bits.view(np.float16)
    b, s = np.zeros(6, np.float16), np.zeros(6, np.float16)
    half_copy[1, 6](a, b, s)
    assert [hex(x) for x in b.view(np.uint16)] == [hex(x) for x in bits]
    assert np.isnan(s[:3]).all() and (s.view(np.uint16)[:2] & 0x0200).all()  # quiet after +
