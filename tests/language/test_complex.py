"""complex64 and complex128: promotion, arithmetic, parts, functions, memory, parameters, refusals.

Every operation runs on every backend over a grid of edge values (each part one of 0, -0, 1,
-2.5, 1e30, -1e-30, the smallest subnormal, the largest finite, inf, -inf, nan: overflow,
underflow and every special case) and is compared with NumPy: ``+ - * /``, ``==``, ``!=``,
unary ``-``, ``.real``, ``.imag`` and ``.conjugate()`` bit for bit with NumPy's complex
scalars (any NaN matches any NaN); ``abs`` and ``cmath.exp`` take the device's library
(``hypot``, ``exp``, ``sin``, ``cos``), so finite parts may be a few ulps off while NaNs,
infinities and zeros are where NumPy has them.  Property tests (Hypothesis) run kernels of
complex arrays against NumPy through ``gk.testing``.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_source import load_kernel

import gpukern as gk
from gpukern import complex64, complex128, float32, float64, int32, shared, thread_idx
from gpukern import testing as gkt
from gpukern.semantics import ops
from gpukern.types import WEAK_COMPLEX, WEAK_FLOAT, WEAK_INT, bool_, int64, promote, uint32

COMPLEX = (np.complex64, np.complex128)
ULPS = {np.float32: 4, np.float64: 2}


def _parts(dt: type) -> np.ndarray:
    f = np.float32 if dt == np.complex64 else np.float64
    fi = np.finfo(f)
    raw = [0.0, -0.0, 1.0, -2.5, 1e30, -1e-30, fi.smallest_subnormal, fi.max, math.inf, -math.inf, math.nan]
    return np.array(raw, f)


def edge_values(dt: type) -> np.ndarray:
    p = _parts(dt)
    out = np.empty(len(p) ** 2, dt)
    out.real = np.repeat(p, len(p))
    out.imag = np.tile(p, len(p))
    return out


def _ordered(x: np.ndarray) -> np.ndarray:
    """Floats as integers in the same order, one apart per ulp."""
    i = x.view(f"i{x.itemsize}").astype(object)
    lo = -(2 ** (8 * x.itemsize - 1))
    return np.where(i < 0, lo - i, i)


def mismatches(got: np.ndarray, want: np.ndarray, ulps: int = 0) -> np.ndarray:
    """Indices where a part differs: in bits (any NaN equals any NaN), or, for two parts that are
    not NaN, by more than ``ulps`` (inf is one ulp beyond the largest float: CUDA's ``hypot``,
    within its documented 2 ulps, gives inf for ``abs(1 + 1.797e308j)``)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "c":
        return np.union1d(mismatches(got.real, want.real, ulps), mismatches(got.imag, want.imag, ulps))
    if want.dtype.kind != "f":
        return np.nonzero(got != want)[0]
    u = f"u{want.itemsize}"
    same = (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
    if ulps:
        finite = ~np.isnan(got) & ~np.isnan(want)
        close = np.zeros(got.shape, bool)
        close[finite] = np.abs(_ordered(got[finite]) - _ordered(want[finite])) <= ulps
        same |= close
    return np.nonzero(~same)[0]


def assert_same(got: np.ndarray, want: np.ndarray, what: str, operands: tuple[np.ndarray, ...], ulps: int = 0):
    bad = mismatches(got, want, ulps)
    if len(bad):
        k = bad[0]
        shown = ", ".join(repr(o[k]) for o in operands)
        raise AssertionError(
            f"{what}: {len(bad)} of {len(want)} differ; first at ({shown}): got {got[k]!r}, want {want[k]!r}"
        )


def scalar_reference(fn, *arrays: np.ndarray) -> np.ndarray:
    """``fn`` applied to NumPy scalars element by element (NumPy's complex scalars compute the
    products of ``*`` on their own; its AVX-512 array loop may fuse one into an fma)."""
    with np.errstate(all="ignore"):
        return np.array([fn(*xs) for xs in zip(*arrays)])


# ---------------------------------------------------------------- promotion
@pytest.mark.parametrize(
    "other", [bool_, int32, uint32, int64, float32, float64, complex64, complex128, WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX]
)
@pytest.mark.parametrize("t", [complex64, complex128, float32, float64, int32, WEAK_COMPLEX])
def test_promotion_is_numpys(t, other):
    def arg(x):
        return {WEAK_INT: 0, WEAK_FLOAT: 0.0, WEAK_COMPLEX: 0j}.get(x, x.dtype if hasattr(x, "dtype") else x)

    got = promote(t, other)
    if t in (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX) and other in (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX):
        kinds = {t.kind, other.kind}
        assert got == (WEAK_COMPLEX if "c" in kinds else WEAK_FLOAT if "f" in kinds else WEAK_INT)
        return
    assert got.dtype == np.result_type(arg(t), arg(other))


def test_promotion_examples_of_the_issue():
    assert promote(complex64, float64) == complex128
    assert promote(complex64, WEAK_FLOAT) == complex64
    assert promote(float32, WEAK_COMPLEX) == complex64
    assert promote(float64, WEAK_COMPLEX) == complex128


# ---------------------------------------------------------------- arithmetic on edge values
@gk.kernel
def arithmetic(a, b, add, sub, mul, div, eq, ne, n: gk.int32):
    i = gk.global_id(0)
    if i < n:
        add[i] = a[i] + b[i]
        sub[i] = a[i] - b[i]
        mul[i] = a[i] * b[i]
        div[i] = a[i] / b[i]
        eq[i] = a[i] == b[i]
        ne[i] = a[i] != b[i]


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_arithmetic_on_every_pair_of_edge_values(backend, dt):
    v = edge_values(dt)
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    n = len(a)
    outs = [np.zeros(n, dt) for _ in range(4)] + [np.zeros(n, bool) for _ in range(2)]
    arithmetic[(n + 255) // 256, 256](a, b, *outs, n)
    for out, fn, what in zip(
        outs,
        [
            lambda x, y: x + y,
            lambda x, y: x - y,
            lambda x, y: x * y,
            lambda x, y: x / y,
            lambda x, y: x == y,
            lambda x, y: x != y,
        ],
        ["+", "-", "*", "/", "==", "!="],
    ):
        assert_same(out, scalar_reference(fn, a, b).astype(out.dtype), f"a {what} b ({dt.__name__})", (a, b))


@gk.kernel
def unary(a, neg, re, im, conj, mod, ex, nex):
    i = gk.global_id(0)
    if i < a.shape[0]:
        neg[i] = -a[i]
        z = a[i]
        re[i] = z.real
        im[i] = z.imag
        conj[i] = z.conjugate()
        mod[i] = abs(z)
        ex[i] = cmath.exp(z)
        nex[i] = np.exp(z)


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_parts_abs_and_exp_on_edge_values(backend, dt):
    a = edge_values(dt)
    f = np.float32 if dt == np.complex64 else np.float64
    n = len(a)
    neg, conj, ex, nex = (np.zeros(n, dt) for _ in range(4))
    re, im, mod = (np.zeros(n, f) for _ in range(3))
    unary[(n + 63) // 64, 64](a, neg, re, im, conj, mod, ex, nex)
    with np.errstate(all="ignore"):
        assert_same(neg, scalar_reference(lambda z: -z, a), "-z", (a,))
        assert_same(re, a.real.copy(), "z.real", (a,))
        assert_same(im, a.imag.copy(), "z.imag", (a,))
        assert_same(conj, scalar_reference(lambda z: z.conjugate(), a), "z.conjugate()", (a,))
        ulps = 0 if backend == "sim" else ULPS[f]
        assert_same(mod, np.abs(a), "abs(z)", (a,), ulps)
        assert_same(ex, np.exp(a), "cmath.exp(z)", (a,), ulps)
        assert_same(nex, np.exp(a), "np.exp(z)", (a,), ulps)


def test_exp_where_exp_of_the_real_part_alone_overflows(backend):
    """The real part of exp(89 + 1.5j) is finite in complex64 though exp(89) is not (C99's cexp scales)."""
    a = np.array([89 + 1.5j, 100 + 3.1j, 170 - 0.001j, 88.5 + 0j, -200 + 1j, 95 + 1.5706j], np.complex64)
    n = len(a)
    neg, conj, ex, nex = (np.zeros(n, np.complex64) for _ in range(4))
    re, im, mod = (np.zeros(n, np.float32) for _ in range(3))
    unary[1, 32](a, neg, re, im, conj, mod, ex, nex)
    with np.errstate(all="ignore"):
        want = np.exp(a)
    assert np.isfinite(want[0].real) and np.isfinite(want[3]) and np.isfinite(want[5].real)
    assert_same(ex, want, "cmath.exp(z)", (a,), ULPS[np.float32])


@gk.kernel
def powers(a, b, p1, p2):
    i = gk.global_id(0)
    if i < a.shape[0]:
        p1[i] = a[i] ** b[i]
        p2[i] = pow(a[i], b[i])


def _exponents(dt: type) -> np.ndarray:
    """Whole real exponents (the squaring path, both signs), 0, and others (exp(b log a))."""
    whole = [0, 1, 2, 3, 4, 5, 7, 13, 64, 99, -1, -2, -3, -7, -99, 100, 0.5, -2.5, 1j, 2 + 1j, -1 - 0.5j]
    return np.array(whole + [math.inf, math.nan, complex(2, math.nan)], dt)


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_pow_on_edge_values(backend, dt):
    """``a ** b`` and ``pow(a, b)``: NumPy's npy_cpow.  A zero base, a zero exponent and a whole real
    one below 100 (squaring through ``*``, then ``1 / r`` through ``/``) are NumPy's bits on every
    backend; other exponents go through the device's log, atan2 and exp, and NumPy through the C
    library's cpow, so there finite parts agree to a relative error."""
    v, e = edge_values(dt), _exponents(dt)
    a, b = np.repeat(v, len(e)), np.tile(e, len(v))
    n = len(a)
    p1, p2 = np.zeros(n, dt), np.zeros(n, dt)
    powers[(n + 127) // 128, 128](a, b, p1, p2)
    want = scalar_reference(lambda x, y: x**y, a, b).astype(dt)
    exact = (b == 0) | (a == 0) | ((b.imag == 0) & (np.trunc(b.real) == b.real) & (np.abs(b.real) < 100))
    assert exact.sum() > len(v) * 14 and (~exact).sum() > len(v) * 5
    for got, what in ((p1, "a ** b"), (p2, "pow(a, b)")):
        assert_same(got[exact], want[exact], what, (a[exact], b[exact]))
        g, w, ga, gb = got[~exact], want[~exact], a[~exact], b[~exact]
        ops_finite = np.isfinite(ga) & np.isfinite(gb)
        nan_g, nan_w = (np.isnan(x.real) | np.isnan(x.imag) for x in (g, w))
        assert np.array_equal(nan_g[ops_finite], nan_w[ops_finite]), what
        finite = ops_finite & np.isfinite(g) & np.isfinite(w) & (np.abs(w) > np.finfo(g.real.dtype).tiny)
        assert finite.sum() > 20
        # exp(b log a) carries log's and exp's rounding, times the size of b log a
        eps = np.finfo(g.real.dtype).eps
        with np.errstate(all="ignore"):
            size = 1 + np.abs(gb[finite]) * (np.abs(np.log(np.abs(ga[finite]).astype(np.float64))) + math.pi)
        rel = np.abs(g[finite] - w[finite]) / np.abs(w[finite])
        assert (rel <= 8 * eps * size).all(), (
            what,
            ga[finite][np.argmax(rel / size)],
            gb[finite][np.argmax(rel / size)],
        )


def test_pow_of_random_values_against_numpy(backend):
    """Numba's own check (test_cpow, rtol 1e-7 for complex128): random operands."""
    rng = np.random.default_rng(7)
    a = (rng.uniform(-2, 2, 200) + 1j * rng.uniform(-2, 2, 200)).astype(np.complex128)
    b = (rng.uniform(-3, 3, 200) + 1j * rng.uniform(-3, 3, 200)).astype(np.complex128)
    p1, p2 = np.zeros(200, np.complex128), np.zeros(200, np.complex128)
    powers[2, 128](a, b, p1, p2)
    np.testing.assert_allclose(p1, a**b, rtol=1e-12)
    np.testing.assert_array_equal(p1, p2)


def test_pow_folds_to_the_run_time_value():
    """Constant operands fold with the same definition (semantics.complex.pow) the simulator runs."""
    k = load_kernel(
        "import gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.complex128]):\n"
        "    out[0] = gk.complex128(1.5 - 2j) ** gk.complex128(3)\n"
        "    out[1] = gk.complex128(0.5 + 1j) ** gk.complex128(0.25 - 1j)\n",
        "complex_pow_fold",
    )
    src = k.source(np.zeros(2, np.complex128), backend="opencl")
    assert "gk_ipow" not in src and "gk_pow" not in src, src
    out = np.zeros(2, np.complex128)
    k[1, 1](out)
    assert out[0] == (1.5 - 2j) * (1.5 - 2j) * (1.5 - 2j)
    np.testing.assert_allclose(out[1], (0.5 + 1j) ** (0.25 - 1j), rtol=1e-14)


# ---------------------------------------------------------------- construction and conversion
@gk.kernel
def construct(
    re: gk.Array[gk.float32],
    im: gk.Array[gk.float32],
    k: gk.Array[gk.int32],
    c1: gk.Array[gk.complex64],
    c2: gk.Array[gk.complex64],
    c3: gk.Array[gk.complex128],
    c4: gk.Array[gk.complex128],
    c5: gk.Array[gk.complex64],
    c6: gk.Array[gk.complex128],
):
    i = gk.global_id(0)
    if i < re.shape[0]:
        c1[i] = gk.complex64(re[i], im[i])
        c2[i] = complex(re[i], im[i])
        c3[i] = complex128(re[i])
        c4[i] = complex128(k[i]) + 1j
        c5[i] = complex64(c3[i] * 2.0)
        c6[i] = c1[i] + 0.5


def test_construction_and_casts(backend):
    parts = _parts(np.complex64)
    re, im = np.repeat(parts, len(parts)), np.tile(parts, len(parts))
    n = len(re)
    k = np.arange(n, dtype=np.int32) - 50
    c1, c2, c5 = (np.zeros(n, np.complex64) for _ in range(3))
    c3, c4, c6 = (np.zeros(n, np.complex128) for _ in range(3))
    construct[(n + 63) // 64, 64](re, im, k, c1, c2, c3, c4, c5, c6)
    want = np.empty(n, np.complex64)
    want.real, want.imag = re, im
    assert_same(c1, want, "complex64(re, im)", (re, im))
    assert_same(c2, want, "complex(re, im)", (re, im))
    assert_same(c3, re.astype(np.complex128), "complex128(x)", (re,))
    assert_same(c4, k.astype(np.complex128) + 1j, "complex128(k) + 1j", (k,))
    with np.errstate(all="ignore"):
        assert_same(c5, (re.astype(np.complex128) * 2.0).astype(np.complex64), "complex64(c128)", (re,))
        assert_same(c6, (want + np.float32(0.5)).astype(np.complex128), "c64 + 0.5 stored to c128", (re, im))


def test_constants_fold_with_the_run_time_meaning():
    k = load_kernel(
        "import cmath\nimport gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.complex128]):\n"
        "    z = gk.complex64(1.0, 2.0)\n"
        "    out[0] = z * z / (3 - 4j) + cmath.exp(1j).conjugate() + abs(3 + 4j)\n"
        "    out[1] = complex(2, -1).conjugate() + (1j).real + (2 + 3j).imag\n"
    )
    out = np.zeros(2, np.complex128)
    gk.set_backend("sim")
    try:
        k[1, 1](out)
    finally:
        gk.set_backend(None)
    z = np.complex64(1 + 2j)
    want0 = z * z / np.complex64(3 - 4j) + cmath.exp(1j).conjugate() + 5.0  # complex64, as NEP 50 says
    assert out[0] == want0
    assert out[1] == np.complex64(2 + 1j) + 0.0 + 3.0
    assert "make_float2" in k.source(out) or "make_double2" in k.source(out)


# ---------------------------------------------------------------- memory, device functions, parameters
@gk.func
def twist(z: gk.complex64, w):
    return z * w.conjugate()


@gk.kernel
def through_memory(a: gk.Array[gk.complex64], out: gk.Array[gk.complex64], s: gk.complex64):
    tile = shared(complex64, 64)
    acc = gk.local(complex64, 2)
    t = thread_idx.x
    i = gk.global_id(0)
    tile[t] = a[i]
    gk.barrier()
    acc[0] = twist(tile[63 - t], s)
    acc[1] = acc[0] - 1
    out[i] = acc[1] * acc[0]


def test_shared_local_and_device_functions(backend):
    rng = np.random.default_rng(3)
    n = 128
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    for s in (0.5 - 2j, np.complex64(1 + 1j), 3, 2.5):
        out = np.zeros(n, np.complex64)
        through_memory[2, 64](a, out, s)
        rev = a.reshape(2, 64)[:, ::-1].reshape(-1)
        c = np.complex64(s).conjugate()
        want = scalar_reference(lambda x, c=c: (x * c - np.complex64(1)) * (x * c), rev)
        assert_same(out, want.astype(np.complex64), f"through memory with s={s!r}", (rev,))


@gk.kernel
def row_sums(a: gk.Array[gk.complex128, 2], out: gk.Array[gk.complex128]):
    tile = shared(complex128, (8, 4))
    t = thread_idx.x
    for j in range(4):
        tile[t, j] = a[t, j]
    gk.barrier()
    acc = 0j
    for j in range(4):  # a row read in a loop of constant bounds: not made vector loads (a complex is one)
        acc += tile[t, j] * tile[t, j]
    out[t] = acc


def test_rows_of_shared_complex_in_constant_loops(backend):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 4)) + 1j * rng.standard_normal((8, 4))
    out = np.zeros(8, np.complex128)
    row_sums[1, 8](a, out)
    want = scalar_reference(lambda r: sum((x * x for x in r), np.complex128(0)), list(a))
    assert_same(out, want.astype(np.complex128), "sum of squares of a row", (a,))
    src = row_sums.source(a, out, backend="opencl")
    assert "double2" in src and "vload" not in src


def test_scalar_parameters_refuse_what_does_not_fit():
    out = np.zeros(128, np.complex64)
    a = np.zeros(128, np.complex64)
    with pytest.raises(gk.LaunchError, match="does not fit in complex64"):
        through_memory[2, 64](a, out, 1e300 + 1j)
    with pytest.raises(gk.LaunchError, match="does not fit in complex64"):
        through_memory[2, 64](a, out, np.complex128(1j * 1e300))
    with pytest.raises(gk.LaunchError, match="must be a real or complex number"):
        through_memory[2, 64](a, out, "1j")


@gk.kernel
def inferred(a, out, s):
    i = gk.global_id(0)
    if i < a.shape[0]:
        out[i] = a[i] * s


def test_inferred_complex_arguments(backend):
    a = np.arange(5).astype(np.complex128) * (1 - 1j)
    out = np.zeros(5, np.complex128)
    inferred[1, 32](a, out, 2 + 0.5j)  # a Python complex is complex128
    assert_same(out, scalar_reference(lambda x: x * (2 + 0.5j), a), "a * s", (a,))
    b = a.astype(np.complex64)
    out64 = np.zeros(5, np.complex64)
    inferred[1, 32](b, out64, np.complex64(2 + 0.5j))
    assert_same(out64, scalar_reference(lambda x: x * np.complex64(2 + 0.5j), b), "a * s (complex64)", (b,))


TABLE = np.array([1 + 2j, -0.5j, complex(math.inf, math.nan)], np.complex64)


@gk.kernel
def from_table(out: gk.Array[gk.complex64]):
    i = gk.global_id(0)
    if i < 3:
        out[i] = TABLE[i]


def test_constant_tables_of_complex(backend):
    out = np.zeros(3, np.complex64)
    from_table[1, 32](out)
    assert_same(out, TABLE, "TABLE[i]", (TABLE,))


# ---------------------------------------------------------------- the profiler
@gk.kernel
def copy(a, out):
    i = gk.global_id(0)
    out[i] = a[i]


@gk.kernel
def shared_copy(a: gk.Array[gk.complex128], out: gk.Array[gk.complex128]):
    tile = shared(complex128, 128)
    t = thread_idx.x
    tile[t] = a[gk.global_id(0)]
    gk.barrier()
    out[gk.global_id(0)] = tile[t]


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_profiler_counts_8_and_16_byte_elements(dt):
    a = np.ones(256, dt)
    totals = gk.profile(copy[2, 128], a, np.zeros(256, dt)).total
    itemsize = np.dtype(dt).itemsize
    assert totals.global_load_elems == 256
    assert totals.global_load_bytes == 256 * itemsize
    assert totals.global_load_sectors == 256 * itemsize // 32  # every sector moved once, fully used
    assert totals.global_store_sectors == 256 * itemsize // 32


def test_profiler_counts_16_byte_shared_elements_in_quarter_warp_phases():
    """A warp's 32 consecutive complex128 (512 bytes) take 4 wavefronts of 128 bytes, no conflict."""
    totals = gk.profile(shared_copy[2, 128], np.ones(256, np.complex128), np.zeros(256, np.complex128)).total
    warps = 2 * 128 // 32
    assert totals.shared_store_wavefronts == 4 * warps and totals.shared_store_conflicts == 0
    assert totals.shared_load_wavefronts == 4 * warps and totals.shared_load_conflicts == 0


# ---------------------------------------------------------------- what the front end refuses
REFUSED = {
    "a[i] < b[i]": "not ordered",
    "a[i] >= 1": "not ordered",
    "a[i] // b[i]": "not defined on complex",
    "a[i] % b[i]": "not defined on complex",
    "a[i] & b[i]": "needs integers",
    "~a[i]": "needs an integer",
    "gk.float32(a[i])": "cannot convert a complex number",
    "min(a[i], b[i])": "not ordered",
    "np.log2(a[i])": "not defined on complex",
    "math.sqrt(a[i])": "takes real numbers",
    "math.exp(a[i])": r"math.exp\(\) takes real numbers",
    "gk.atomic_add(a, i, b[i])": "atomics support",
    "gk.vload(a, 0, 2)": "no bools or complex",
    "a[i].phase": "have .real, .imag and .conjugate()",
    "gk.complex64(a[i], 1.0)": "takes two real numbers",
    "1 if a[i] else 0": "cannot be a condition",
}


@pytest.mark.parametrize("expr", list(REFUSED))
def test_refusals_name_the_problem(expr):
    k = load_kernel(
        "import math\nimport numpy as np\nimport gpukern as gk\n\n@gk.kernel\n"
        "def k(a: gk.Array[gk.complex64], b: gk.Array[gk.complex64], out: gk.Array[gk.float32]):\n"
        "    i = gk.global_id(0)\n"
        f"    x = {expr}\n",
        "complex_refused",
    )
    with pytest.raises(gk.KernelTypeError, match=REFUSED[expr]) as info:
        k.source(np.zeros(2, np.complex64), np.zeros(2, np.complex64), np.zeros(2, np.float32))
    assert info.value.loc is not None and info.value.loc.lineno == 8


def test_a_complex_value_is_not_stored_into_a_float_array():
    k = load_kernel(
        "import gpukern as gk\n\n@gk.kernel\ndef k(a: gk.Array[gk.complex64], out: gk.Array[gk.float32]):\n"
        "    out[0] = a[0]\n"
    )
    with pytest.raises(gk.KernelTypeError, match="cannot store a complex64 value"):
        k.source(np.zeros(2, np.complex64), np.zeros(2, np.float32))
    k2 = load_kernel("import gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.float32]):\n    out[0] = 1j\n")
    with pytest.raises(gk.KernelTypeError, match="cannot store a complex literal"):
        k2.source(np.zeros(2, np.float32))


# ---------------------------------------------------------------- property tests
@gk.kernel
def axpy(a, x, y, out, n: gk.int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = a * x[i] + y[i] / (abs(x[i]) + 1)


@settings(deadline=None, max_examples=30)
@given(st.data())
def test_property_axpy_matches_numpy(data):
    dt = data.draw(st.sampled_from(COMPLEX))
    n = data.draw(gkt.sizes(1, 300))
    cfg = data.draw(gkt.launch_configs(n, extra_blocks=1))
    x = data.draw(gkt.arrays(dt, n, op="mul", magnitude=1e15))
    y = data.draw(gkt.arrays(dt, n, op="add", magnitude=1e15))
    a = dt(data.draw(st.complex_numbers(max_magnitude=1e3, allow_nan=False, allow_infinity=False)))

    def reference(x, y, out):
        return {"out": (a * x + y / (np.abs(x) + 1).astype(dt)).astype(dt)}

    gkt.assert_kernel_matches(lambda x, y, out: axpy[cfg](a, x, y, out, n), reference, [x, y, np.zeros(n, dt)])


_SPECIAL = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, 5e-324, 3e38, 1.7e308, -1.0])


@settings(deadline=None, max_examples=40)
@given(st.data())
def test_property_edge_values_bit_for_bit(data):
    """Operands mixing finite values with NaN, inf, subnormals and huge parts: ``*`` and ``/``
    bit for bit as NumPy's scalars on every backend."""
    dt = data.draw(st.sampled_from(COMPLEX))
    n = data.draw(st.integers(1, 40))
    part = st.one_of(_SPECIAL, st.floats(allow_nan=False, allow_infinity=False, width=32 if dt == np.complex64 else 64))
    draw = st.lists(st.builds(complex, part, part), min_size=n, max_size=n)
    with np.errstate(all="ignore"):
        a = np.array(data.draw(draw), dt)
        b = np.array(data.draw(draw), dt)
    outs = [np.zeros(n, dt) for _ in range(4)] + [np.zeros(n, bool) for _ in range(2)]
    for be in gk.available_backends():
        gk.set_backend(be)
        try:
            arithmetic[1, 64](a, b, *outs, n)
        finally:
            gk.set_backend(None)
        assert_same(outs[2], scalar_reference(lambda x, y: x * y, a, b).astype(dt), f"* on {be}", (a, b))
        assert_same(outs[3], scalar_reference(lambda x, y: x / y, a, b).astype(dt), f"/ on {be}", (a, b))


# ---------------------------------------------------------------- bookkeeping
def test_every_entry_with_a_complex_form_is_tested_here():
    """A new entry of ``gpukern.semantics.ops`` defined on complex numbers fails this until a test above runs it."""
    assert {s for s, op in ops.BINARY.items() if op.complex_helper} == {"+", "-", "*", "/", "**"}
    assert {s for s, op in ops.COMPARE.items() if op.complex_helper} == {"==", "!="}
    assert {s for s, op in ops.UNARY.items() if op.complex_helper} == {"-"}
    assert {n for n, f in ops.MATH.items() if f.complex_helper} == {"abs", "exp", "pow", "sqrt", "log", "log10"}
    assert set(ops.COMPLEX) == {"real", "imag", "conj", "complex"}


def test_cuda_arguments_are_packed_at_their_c_alignment():
    """A double2 kernel parameter starts at a multiple of 16 bytes, a float2 at a multiple of 8, each
    packed as its two parts; every other parameter at its C alignment."""
    import struct

    from gpukern.backends.cuda import _arg_format

    assert _arg_format(list("PqiD")) == "=Qqi12xdd"
    assert _arg_format(list("iF")) == "=i4xff"
    assert _arg_format(list("PqifBd")) == "=QqifB7xd"  # what the struct module's native alignment gives
    assert struct.calcsize(_arg_format(list("PqifBd"))) == struct.calcsize("PqifBd")


@gk.kernel
def classified(a, nan, inf, fin, ph, r, p2):
    i = gk.global_id(0)
    if i < a.shape[0]:
        nan[i] = cmath.isnan(a[i])
        inf[i] = cmath.isinf(a[i])
        fin[i] = cmath.isfinite(a[i])
        ph[i] = cmath.phase(a[i])
        r[i], p2[i] = cmath.polar(a[i])


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_cmath_classification_phase_and_polar(backend, dt):
    """cmath.isnan/isinf/isfinite as Python's (on the parts), phase as atan2 of the parts, polar as
    (abs, phase), on every edge value."""
    a = edge_values(dt)
    f = np.float32 if dt == np.complex64 else np.float64
    n = len(a)
    nan, inf, fin = (np.zeros(n, bool) for _ in range(3))
    ph, r, p2 = (np.zeros(n, f) for _ in range(3))
    classified[(n + 63) // 64, 64](a, nan, inf, fin, ph, r, p2)
    z = [complex(v) for v in a]
    assert list(nan) == [cmath.isnan(v) for v in z]
    assert list(inf) == [cmath.isinf(v) for v in z]
    assert list(fin) == [cmath.isfinite(v) for v in z]
    ulps = 0 if backend == "sim" else ULPS[f]
    with np.errstate(all="ignore"):
        assert_same(ph, np.arctan2(a.imag, a.real), "cmath.phase(z)", (a,), ulps)
        assert_same(p2, np.arctan2(a.imag, a.real), "cmath.polar(z)[1]", (a,), ulps)
        assert_same(r, np.abs(a), "cmath.polar(z)[0]", (a,), ulps)


def test_cmath_of_a_real_number_and_a_spread_tuple(backend):
    @gk.kernel
    def k(x, out, back):
        i = gk.global_id(0)
        out[i] = cmath.phase(x[i]) + cmath.isnan(x[i])
        back[i] = complex(*cmath.polar(x[i]))  # f(*t): the tuple's items

    x = np.array([-1.0, 2.0, np.nan, -0.0])
    out, back = np.zeros(4), np.zeros(4, np.complex128)
    k[1, 4](x, out, back)
    np.testing.assert_array_equal(out[[0, 1, 3]], [cmath.phase(v) + cmath.isnan(v) for v in x[[0, 1, 3]]])
    assert np.isnan(out[2])
    # (complex(...) is a complex64 in gpukern's language, Python's width in the Numba and CuPy layers)
    np.testing.assert_allclose(back[[0, 1]], [complex(*cmath.polar(v)) for v in x[[0, 1]]], rtol=1e-7)


def test_cmath_beyond_those_says_which_it_has():
    @gk.kernel
    def k(a):
        a[0] = cmath.acos(a[0])

    with pytest.raises(gk.KernelTypeError, match="of cmath, kernels have exp, sqrt, log"):
        k.source(np.zeros(1, np.complex64))


@gk.kernel
def roots(a, r, r2):
    i = gk.global_id(0)
    if i < a.shape[0]:
        r[i] = cmath.sqrt(a[i])
        r2[i] = np.sqrt(a[i])


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_sqrt_on_edge_and_random_values(backend, dt):
    """C99's csqrt: NaNs, infinities and signed zeros where NumPy has them, finite values within the
    library's ulps (NumPy's own on the simulator), the largest and the subnormal parts included."""
    f = np.float32 if dt == np.complex64 else np.float64
    rng = np.random.default_rng(7)
    scale = 10.0 ** rng.integers(-30, 30, (2, 1000))
    random = (rng.standard_normal(1000) * scale[0] + 1j * rng.standard_normal(1000) * scale[1]).astype(dt)
    a = np.concatenate([edge_values(dt), random])
    n = len(a)
    r, r2 = np.zeros(n, dt), np.zeros(n, dt)
    roots[(n + 63) // 64, 64](a, r, r2)
    ulps = 0 if backend == "sim" else ULPS[f]
    with np.errstate(all="ignore"):
        want = np.sqrt(a)
    assert_same(r, want, "cmath.sqrt(z)", (a,), ulps)
    assert_same(r2, want, "np.sqrt(z)", (a,), ulps)


@gk.kernel
def logs(a, r, r2, r10):
    i = gk.global_id(0)
    if i < a.shape[0]:
        r[i] = cmath.log(a[i])
        r2[i] = np.log(a[i])
        r10[i] = cmath.log10(a[i])


@pytest.mark.parametrize("dt", COMPLEX, ids=lambda d: d.__name__)
def test_log_on_edge_random_and_near_unit_values(backend, dt):
    """C99's clog (and NumPy's log10: its parts times log10(e)): infinities, NaNs and zeros where
    NumPy has them, finite values within the library's ulps -- near the unit circle too, where
    log |z| is tiny and a plain formula would cancel (``|z| = 1 + 1e-16 ... 1e-2``)."""
    f = np.float32 if dt == np.complex64 else np.float64
    rng = np.random.default_rng(11)
    scale = 10.0 ** rng.integers(-30, 30, (2, 500))
    random = rng.standard_normal(500) * scale[0] + 1j * rng.standard_normal(500) * scale[1]
    near = (1 + rng.standard_normal(500) * 10.0 ** rng.integers(-16, -1, 500)) * np.exp(2j * np.pi * rng.random(500))
    a = np.concatenate([edge_values(dt), random.astype(dt), near.astype(dt)])
    n = len(a)
    r, r2, r10 = np.zeros(n, dt), np.zeros(n, dt), np.zeros(n, dt)
    logs[(n + 63) // 64, 64](a, r, r2, r10)
    ulps = 0 if backend == "sim" else ULPS[f]
    with np.errstate(all="ignore"):
        want, want10 = np.log(a), np.log10(a)
    assert_same(r, want, "cmath.log(z)", (a,), ulps)
    assert_same(r2, want, "np.log(z)", (a,), ulps)
    assert_same(r10, want10, "cmath.log10(z)", (a,), ulps)


def test_log_with_a_base_is_pythons(backend):
    """``cmath.log(z, base)`` and ``math.log(x, base)``: the logs divided, as Python computes them."""

    @gk.kernel
    def k(a, b, r, x, s):
        i = gk.global_id(0)
        r[i] = cmath.log(a[i], b[i])
        s[i] = math.log(x[i], 2.0)

    a, b = np.array([1 + 2j, -3 + 0.5j, 0.25j]), np.array([2 + 0j, 10 + 1j, -1j])
    x = np.array([8.0, 10.0, 0.5])
    r, s = np.zeros(3, complex), np.zeros(3)
    k[1, 3](a, b, r, x, s)
    np.testing.assert_allclose(r, [cmath.log(p, q) for p, q in zip(a, b)], rtol=1e-14)
    np.testing.assert_allclose(s, [math.log(v, 2.0) for v in x], rtol=1e-15)
