"""The atomics beyond add/sub/min/max/exch/cas, 64-bit atomics, and the memory fences.

``tests/semantics/test_ops.py`` checks every entry of ``ops.ATOMIC`` on every type it is defined on,
one update per element; here: many threads updating one element of a 2-D global and of a
2-D shared array (``atomic_or(a, (i, j), v)``), ``atomic_inc``/``atomic_dec`` at their
wrap-around edges, what the front end refuses, and the fences.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import float64, int64, shared, thread_idx
from gpukern.semantics import ops
from gpukern.types import from_dtype

ROWS, COLS, BLOCK = 2, 4, 64  # every element of the 2-D arrays is updated by BLOCK / 8 threads of each block
GRID = 2


def _atomic(name: str):
    return getattr(gk, f"atomic_{name}")


def _reference(name: str, start: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``start`` after every thread's update, in thread order, through the NumPy form."""
    out = start.copy()
    for t, v in enumerate(values):
        r, c = t % ROWS, (t // ROWS) % COLS
        out[r, c] = np.asarray(ops.ATOMIC[name].update(out[r : r + 1, c], v))[0]
    return out


def _kernel(name: str, dt: np.dtype):
    """Thread t of each block updates element (t % ROWS, (t // ROWS) % COLS) of a global array and
    of its block's shared copy of ``start``, which it then writes back to ``out[block]``."""
    atomic, elem = _atomic(name), from_dtype(dt)

    @gk.kernel
    def k(g, start, values, out):
        t = thread_idx.x
        b = gk.block_idx.x
        i = b * BLOCK + t
        s = shared(elem, (ROWS, COLS))
        if t < ROWS * COLS:
            s[t // COLS, t % COLS] = start[t // COLS, t % COLS]
        gk.barrier()
        atomic(g, (t % ROWS, (t // ROWS) % COLS), values[i])
        atomic(s, (t % ROWS, (t // ROWS) % COLS), values[i])
        gk.barrier()
        if t < ROWS * COLS:
            out[b, t // COLS, t % COLS] = s[t // COLS, t % COLS]

    return k


# (atomic, type, start values, per-thread operands): order-independent results under contention
_BIG = 2**40 + 3  # beyond 32 bits: a 32-bit atomic would lose it
CASES = [
    *[(op, dt) for op in ("and", "or", "xor") for dt in (np.int32, np.uint32, np.int64)],
    ("add", np.int64),
    ("sub", np.int64),
    ("min", np.int64),
    ("max", np.int64),
    ("add", np.float64),
    ("sub", np.float64),
    ("min", np.float64),
    ("max", np.float64),
    ("inc", np.uint32),
    ("dec", np.uint32),
    ("inc", np.uint64),
    ("dec", np.uint64),
    # 8- and 16-bit elements: neighbours in one 32-bit word updated at once (a CAS loop on the word)
    *[(op, dt) for op in ("add", "sub", "min", "max", "xor") for dt in (np.int8, np.uint16)],
    *[(op, dt) for op in ("add", "and") for dt in (np.uint8, np.int16)],
    *[(op, np.float16) for op in ("add", "sub", "min", "max", "nanmax")],
    ("nanmax", np.float32),
    ("nanmin", np.float64),
]


def _operands(name: str, dt: np.dtype, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(len(name) * 31 + np.dtype(dt).itemsize)
    dt = np.dtype(dt)
    if name in ("inc", "dec"):
        return rng.integers(0, 6, (ROWS, COLS)).astype(dt), np.full(n, 5, dt)  # all threads the same v
    if dt.kind == "f":  # halves of small integers (and one value float32 cannot hold): sums are exact
        start = rng.integers(-50, 50, (ROWS, COLS)) / 2 + 2.0**-30
        return start.astype(dt), (rng.integers(-50, 50, n) / 2).astype(dt)
    info = np.iinfo(dt)
    if name in ("and", "or", "xor") or dt.itemsize < 4:  # narrow sums wrap: order-independent too
        return rng.integers(info.min, info.max, (ROWS, COLS), dt, True), rng.integers(info.min, info.max, n, dt, True)
    start = rng.integers(-1000, 1000, (ROWS, COLS)).astype(dt) + _BIG
    return start, (rng.integers(-1000, 1000, n) * _BIG // 1000).astype(dt)


@pytest.mark.parametrize("name, dt", CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in CASES])
def test_contended_atomics_on_2d_global_and_shared(backend, name, dt):
    """Many threads update each element of a 2-D global and a 2-D shared array; the result does
    not depend on their order, and equals the NumPy form applied in thread order."""
    n = GRID * BLOCK
    start, values = _operands(name, dt, n)
    g = start.copy()
    out = np.zeros((GRID, ROWS, COLS), start.dtype)
    _kernel(name, start.dtype)[GRID, BLOCK](g, start, values, out)
    want_global = _reference(name, start, values)
    np.testing.assert_array_equal(g, want_global)
    for b in range(GRID):
        np.testing.assert_array_equal(out[b], _reference(name, start, values[b * BLOCK : (b + 1) * BLOCK]))


def _inc_dec_expected(name: str, old: int, v: int) -> int:
    """CUDA's definitions, written out independently of ``ops``."""
    if name == "inc":
        return 0 if old >= v else old + 1
    return v if old == 0 or old > v else old - 1


def _edges(dt: type) -> list[tuple[int, int]]:
    """(old, v): old == v, old == 0, old > v, old < v, v == 0, v == MAX, old == MAX (and, for uint64,
    values beyond 32 bits, which a 32-bit atomicInc would cut)."""
    top = int(np.iinfo(dt).max)
    edges = [(5, 5), (0, 5), (7, 5), (3, 5), (0, 0), (4, 0), (0, top), (top, top), (top, 5), (top - 1, top), (1, 1)]
    if dt == np.uint64:
        edges += [(2**32, 2**32), (2**32 - 1, 2**32), (2**40, 2**40 + 5), (0, 2**40), (2**33, 2**32 - 1)]
    return edges


@pytest.mark.parametrize("dt", [np.uint32, np.uint64])
@pytest.mark.parametrize("name", ["inc", "dec"])
def test_inc_dec_wrap_around(backend, name, dt):
    """atomic_inc/atomic_dec at their edges (old == v, old == 0, old > v...), on global and shared
    memory: the stored and the returned values are CUDA's (uint64: Numba-CUDA's atomic.inc/dec,
    the same rule on 64 bits)."""
    edges = _edges(dt)
    old = np.array([o for o, _ in edges], dt)
    v = np.array([x for _, x in edges], dt)
    want = np.array([_inc_dec_expected(name, o, x) for o, x in edges], dt)
    atomic, elem = _atomic(name), from_dtype(np.dtype(dt))

    @gk.kernel
    def k(g, v, start, returned, s_stored, s_returned):
        i = thread_idx.x
        s = shared(elem, 16)
        if i < g.shape[0]:
            s[i] = start[i]
            returned[i] = atomic(g, i, v[i])
            s_returned[i] = atomic(s, i, v[i])
            s_stored[i] = s[i]

    g = old.copy()
    returned, s_stored, s_returned = (np.zeros_like(old) for _ in range(3))
    k[1, 16](g, v, old, returned, s_stored, s_returned)
    for got in (g, s_stored):
        np.testing.assert_array_equal(got, want)
    for got in (returned, s_returned):
        np.testing.assert_array_equal(got, old)


@pytest.mark.parametrize("name", ["and", "or", "xor"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bitwise_atomics_refuse_floats(name, dt):
    """atomic_and/or/xor of a float array is a KernelTypeError naming the operation and the type,
    at the call."""
    atomic = _atomic(name)

    @gk.kernel
    def k(a):
        atomic(a, 0, 1)

    types = "int32, uint32, int64, uint64, int8, uint8, int16, uint16"
    with pytest.raises(gk.KernelTypeError, match=rf"atomic_{name}\(\) works on {types} arrays, not") as e:
        k.source(np.zeros(4, dt), backend="cuda")
    assert np.dtype(dt).name in str(e.value) and "bitwise" in str(e.value)
    assert e.value.loc is not None and "atomic(a, 0, 1)" in e.value.loc.source_line()


@pytest.mark.parametrize("name", ["inc", "dec"])
@pytest.mark.parametrize("dt", [np.int32, np.int64, np.float32, np.uint16])
def test_inc_dec_refuse_all_but_unsigned_counters(name, dt):
    """atomic_inc/atomic_dec are CUDA's unsigned 32-bit counters (and Numba's 64-bit ones): other
    element types are refused."""
    atomic = _atomic(name)

    @gk.kernel
    def k(a):
        atomic(a, 0, 3)

    types = "uint32, uint64"
    with pytest.raises(
        gk.KernelTypeError, match=rf"atomic_{name}\(\) works on {types} arrays, not {np.dtype(dt).name}"
    ):
        k.source(np.zeros(4, dt), backend="opencl")


def test_64bit_atomics_need_the_opencl_extension(monkeypatch):
    """An OpenCL device without cl_khr_int64_*_atomics: a CompileError at the atomic naming the
    extension, not the OpenCL compiler's error; the pragma appears only where 64-bit atomics do."""
    if "opencl" not in gk.available_backends():
        pytest.skip("no OpenCL device")

    @gk.kernel
    def k(a, b):
        gk.atomic_max(a, 0, int64(3))
        b[0] = 1

    @gk.kernel
    def plain(a, b):
        gk.atomic_add(b, 0, 1)

    a, b = np.zeros(1, np.int64), np.zeros(1, np.int32)
    assert "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable" in k.source(a, b, backend="opencl")
    assert "cl_khr_int64" not in plain.source(a, b, backend="opencl")
    cl = gk.get_backend("opencl")
    monkeypatch.setattr(cl, "device_extensions", cl.device_extensions - {"cl_khr_int64_extended_atomics"})
    with pytest.raises(gk.CompileError, match="needs the OpenCL extension cl_khr_int64_extended_atomics") as e:
        k[1, 1](a, b, backend="opencl")
    assert "atomic_max() on int64" in str(e.value) and e.value.loc is not None
    plain[1, 1](a, b, backend="opencl")  # 32-bit atomics need no extension
    assert b[0] == 1


def test_float64_cas_and_exch(backend):
    """The CAS-loop atomics on float64 (no native instruction on either device language) keep all
    64 bits: values float32 cannot hold survive, and cas compares bit patterns."""
    x = 1.0 + 2.0**-40

    @gk.kernel
    def k(a, got):
        got[0] = gk.atomic_exch(a, 0, float64(x))
        got[1] = gk.atomic_cas(a, 0, float64(x), float64(-x))
        got[2] = gk.atomic_cas(a, 1, float64(x), float64(7.0))  # a[1] differs: unchanged

    a, got = np.array([0.25, 3.0]), np.zeros(3)
    k[1, 1](a, got)
    np.testing.assert_array_equal(a, [-x, 3.0])
    np.testing.assert_array_equal(got, [0.25, x, 3.0])


# ---------------------------------------------------------------- 8- and 16-bit elements
NARROW = [np.int8, np.uint8, np.int16, np.uint16, np.float16]


@pytest.mark.parametrize("dt", NARROW, ids=lambda d: np.dtype(d).name)
def test_narrow_neighbours_in_one_word(backend, dt):
    """Threads of 4 blocks add 1, REPS times each, to the first 7 elements of an 8-element array
    (two 32-bit words; two or four neighbours in each) of global and of shared memory, while thread
    0 stores to the 8th element (a plain store into a word the others update): every update counts,
    the store is kept, and the sums wrap like the type's (int8: many times)."""
    elem = from_dtype(np.dtype(dt))
    reps = 3

    @gk.kernel
    def k(g, s_out, n):
        t = thread_idx.x
        s = shared(elem, 8)
        if t < 8:
            s[t] = 0
        gk.barrier()
        for _ in range(n):
            gk.atomic_add(g, gk.global_id(0) % 7, 1)
            gk.atomic_add(s, t % 7, 1)
        if t == 0:
            s[7] = 9
            if gk.block_idx.x == 0:
                g[7] = 9
        gk.barrier()
        if t < 8:
            s_out[gk.block_idx.x, t] = s[t]

    blocks, threads = 4, 64
    g, s_out = np.zeros(8, dt), np.zeros((blocks, 8), dt)
    k[blocks, threads](g, s_out, reps)

    def counts(n: int) -> np.ndarray:  # n threads t = 0..n-1 each add reps to element t % 7
        c = np.bincount(np.arange(n) % 7, minlength=7) * reps
        return np.append(c, 9).astype(np.int64).astype(dt) if dt != np.float16 else np.append(c, 9).astype(dt)

    np.testing.assert_array_equal(g, counts(blocks * threads))
    for b in range(blocks):
        np.testing.assert_array_equal(s_out[b], counts(threads))


def test_narrow_atomics_on_every_byte_of_a_word(backend):
    """An 8-bit atomic on each byte offset of a word, of an odd-length shared array and of global
    memory: the element updated, its neighbours untouched, the old value returned (signed bytes
    sign-extended)."""

    @gk.kernel
    def k(g, s_out, old):
        t = thread_idx.x
        s = shared(gk.int8, 7)
        s[t] = -t
        gk.barrier()
        old[t] = gk.atomic_sub(g, t, 100)
        old[7 + t] = gk.atomic_max(s, t, t - 2)
        gk.barrier()
        s_out[t] = s[t]

    g = np.array([0, 1, -128, 127, 50, -50, 7], np.int8)
    s_out, old = np.zeros(7, np.int8), np.zeros(14, np.int8)
    start = g.copy()
    k[1, 7](g, s_out, old)
    np.testing.assert_array_equal(g, (start.astype(np.int64) - 100).astype(np.int8))  # wraps
    np.testing.assert_array_equal(s_out, np.maximum(-np.arange(7), np.arange(7) - 2).astype(np.int8))
    np.testing.assert_array_equal(old, np.concatenate([start, -np.arange(7)]).astype(np.int8))


def _half_sums(start: float, v: float, n: int) -> list[np.float16]:
    """start, start + v, ...: each sum rounded to half, as CUDA's atomicAdd on __half rounds it."""
    out = [np.float16(start)]
    for _ in range(n):
        out.append(np.float16(np.float32(out[-1]) + np.float32(v)))  # exact in float32, then rounded once
    return out


def test_float16_add_rounds_each_update_to_half(backend):
    """Every thread adds the same float16 to one element (global and shared): the result is the
    sum rounded to half after each update (2048 + 1 stays 2048, ties to even), and the old values
    returned are the partial sums, one each."""
    n = 64

    @gk.kernel
    def k(g, start, s_out, old, s_old):
        t = thread_idx.x
        s = shared(gk.float16, 2)
        if t < 2:
            s[t] = start[t]
        gk.barrier()
        old[t] = gk.atomic_add(g, 0, gk.float16(1.0))
        old[n + t] = gk.atomic_add(g, 1, gk.float16(0.1))
        s_old[t] = gk.atomic_add(s, 1, gk.float16(0.1))
        gk.barrier()
        if t < 2:
            s_out[t] = s[t]

    g = np.array([2048.0, 0.0], np.float16)
    s_out, old, s_old = np.zeros(2, np.float16), np.zeros(2 * n, np.float16), np.zeros(n, np.float16)
    k[1, n](g, g.copy(), s_out, old, s_old)
    tenths = _half_sums(0.0, float(np.float16(0.1)), n)
    assert g[0] == 2048.0 and (old[:n] == 2048.0).all()
    assert g[1] == tenths[-1] and s_out[1] == tenths[-1] and tenths[-1] != np.float16(n * 0.1)
    for got in (old[n:], s_old):
        np.testing.assert_array_equal(np.sort(got), tenths[:-1])


@gk.kernel
def _exch_bfloat16(a: gk.Array[gk.bfloat16]):
    gk.atomic_exch(a, 0, a[1])


@gk.kernel
def _exch(a):
    gk.atomic_exch(a, 0, a[1])


def test_atomics_refuse_bool_and_bfloat16():
    """bool and bfloat16 arrays have no atomics: a KernelTypeError naming what to use instead."""
    with pytest.raises(gk.KernelTypeError, match="atomics support .* arrays, not bfloat16") as e:
        _exch_bfloat16.source(np.zeros(2, np.uint16), backend="opencl")
    assert "float32 array" in str(e.value)
    with pytest.raises(gk.KernelTypeError, match="atomics support .* arrays, not bool") as e:
        _exch.source(np.zeros(2, np.bool_), backend="opencl")
    assert "int32 or uint32 array" in str(e.value)


def test_narrow_atomics_source():
    """The C of an 8- or 16-bit atomic: a compare-and-swap loop on the 32-bit word holding the
    element, in both dialects (no device has an instruction for it)."""

    @gk.kernel
    def k(a, b):
        gk.atomic_add(a, 1, 1)
        gk.atomic_min(b, 1, 1.0)

    args = np.zeros(4, np.int8), np.zeros(4, np.float16)
    cuda, opencl = (k.source(*args, backend=b) for b in ("cuda", "opencl"))
    assert "gk_atomic_add_int8" in cuda and "atomicCAS(w, assumed," in cuda and "& ~(size_t)3" in cuda
    assert "__half_as_ushort(" in cuda
    assert "gk_atomic_min_float16_global" in opencl and "atomic_cmpxchg(w, assumed," in opencl
    assert "gk_half_bits(" in opencl and "cl_khr_fp16" not in opencl  # no extension needed


# ---------------------------------------------------------------- nanmax / nanmin
NAN = np.nan
# (old, v) -> (nanmax, nanmin, max, min): NaN a missing value for nan*, the old value kept on ties
NAN_EDGES = [
    ((NAN, 1.0), (1.0, 1.0, NAN, NAN)),
    ((1.0, NAN), (1.0, 1.0, 1.0, 1.0)),
    ((NAN, NAN), (NAN, NAN, NAN, NAN)),
    ((NAN, -np.inf), (-np.inf, -np.inf, NAN, NAN)),
    ((-np.inf, NAN), (-np.inf, -np.inf, -np.inf, -np.inf)),
    ((-0.0, 0.0), (-0.0, -0.0, -0.0, -0.0)),
    ((0.0, -0.0), (0.0, 0.0, 0.0, 0.0)),
    ((1.0, 2.0), (2.0, 1.0, 2.0, 1.0)),
    ((2.0, 1.0), (2.0, 1.0, 2.0, 1.0)),
    ((-3.0, np.inf), (np.inf, -3.0, np.inf, -3.0)),
]
EXTREMES = ("nanmax", "nanmin", "max", "min")


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_nanmax_nanmin_edges(backend, dt):
    """atomic_nanmax/nanmin (Numba's cuda.atomic.nanmax/nanmin) against atomic_max/min on NaN,
    infinities and signed zeros, on global and shared memory: the stored bits (a NaN being any NaN)
    and the old value returned."""
    elem = from_dtype(np.dtype(dt))
    n = len(NAN_EDGES)

    @gk.kernel
    def k(g, v, returned, s_stored):
        i = thread_idx.x
        s = shared(elem, (4, 16))
        if i < n:
            for r in range(4):
                s[r, i] = g[r, i]
            returned[0, i] = gk.atomic_nanmax(g, (0, i), v[i])
            returned[1, i] = gk.atomic_nanmin(g, (1, i), v[i])
            returned[2, i] = gk.atomic_max(g, (2, i), v[i])
            returned[3, i] = gk.atomic_min(g, (3, i), v[i])
            gk.atomic_nanmax(s, (0, i), v[i])
            gk.atomic_nanmin(s, (1, i), v[i])
            gk.atomic_max(s, (2, i), v[i])
            gk.atomic_min(s, (3, i), v[i])
            for r in range(4):
                s_stored[r, i] = s[r, i]

    old = np.array([o for (o, _), _ in NAN_EDGES], dt)
    v = np.array([x for (_, x), _ in NAN_EDGES], dt)
    want = np.array([[w[r] for _, w in NAN_EDGES] for r in range(4)], dt)
    g = np.tile(old, (4, 1))
    returned, s_stored = np.zeros_like(g), np.zeros_like(g)
    k[1, 16](g, v, returned, s_stored)
    bits = np.dtype(f"u{np.dtype(dt).itemsize}")
    for r, name in enumerate(EXTREMES):
        for got in (g[r], s_stored[r]):
            nan = np.isnan(want[r])
            assert (np.isnan(got) == nan).all(), (name, got, want[r])
            np.testing.assert_array_equal(got[~nan].view(bits), want[r][~nan].view(bits), err_msg=name)
        np.testing.assert_array_equal(returned[r].view(bits), old.view(bits), err_msg=name)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int32, np.uint64])
def test_nanmax_nanmin_contended(backend, dt):
    """Every thread of 4 blocks takes its value into one element with nanmax and another with
    nanmin, half the values NaN and the elements starting NaN: NumPy's nanmax/nanmin of them all
    (on integers, the plain max/min)."""
    n = 256
    rng = np.random.default_rng(7)
    values = (
        rng.integers(-1000, 1000, n).astype(dt) if np.dtype(dt).kind != "u" else rng.integers(0, 2**40, n).astype(dt)
    )
    if np.dtype(dt).kind == "f":
        values[rng.permutation(n)[: n // 2]] = np.nan
        start = np.full(2, np.nan, dt)
    else:
        start = np.array([values.min(), values.max()], dt)

    @gk.kernel
    def k(res, values):
        i = gk.global_id(0)
        gk.atomic_nanmax(res, 0, values[i])
        gk.atomic_nanmin(res, 1, values[i])

    res = start.copy()
    k[4, n // 4](res, values)
    np.testing.assert_array_equal(res, [np.nanmax(values), np.nanmin(values)])


def test_nanmax_of_integers_is_the_native_max():
    """On integers (no NaN) nanmax/nanmin are max/min: the device's instruction, not a CAS loop."""

    @gk.kernel
    def k(a):
        gk.atomic_nanmax(a, 0, 1)
        gk.atomic_nanmin(a, 1, 1)

    a = np.zeros(2, np.int32)
    cuda, opencl = (k.source(a, backend=b) for b in ("cuda", "opencl"))
    assert "atomicMax(&a[0], 1)" in cuda and "atomicMin(&a[1], 1)" in cuda and "gk_atomic" not in cuda
    assert "atomic_max(&a[0], 1)" in opencl and "atomic_min(&a[1], 1)" in opencl and "gk_atomic" not in opencl


def test_uint64_inc_is_a_64_bit_cas_loop():
    """CUDA's atomicInc/atomicDec are 32-bit only: on uint64 a CAS loop on unsigned long long with the
    same wrap-around rule (OpenCL: atom_cmpxchg, which needs cl_khr_int64_base_atomics)."""

    @gk.kernel
    def k(a):
        gk.atomic_inc(a, 0, gk.uint64(7))
        gk.atomic_dec(a, 1, gk.uint64(7))

    a = np.zeros(2, np.uint64)
    cuda, opencl = (k.source(a, backend=b) for b in ("cuda", "opencl"))
    assert "atomicInc" not in cuda and "gk_atomic_inc_uint64" in cuda and "old >= v ? 0 : old + 1" in cuda
    assert "atom_cmpxchg" in opencl and "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable" in opencl


# ---------------------------------------------------------------- compare_and_swap
@pytest.mark.parametrize("dt", [np.int32, np.uint64, np.int16])
def test_compare_and_swap_contended(backend, dt):
    """atomic_compare_and_swap(a, cmp, v) (Numba's cuda.atomic.compare_and_swap) is atomic_cas on
    a[0]: all 64 threads try to swap 0 for their id + 1 in one global and one shared element, and
    exactly one of each wins; the others get the winner's value back."""
    elem = from_dtype(np.dtype(dt))

    @gk.kernel
    def k(g, got, s_got, s_out):
        t = thread_idx.x
        s = shared(elem, 1)
        if t == 0:
            s[0] = 0
        gk.barrier()
        got[t] = gk.atomic_compare_and_swap(g, elem(0), elem(t + 1))
        s_got[t] = gk.atomic_compare_and_swap(s, elem(0), elem(t + 1))
        gk.barrier()
        if t == 0:
            s_out[0] = s[0]

    g, s_out = np.zeros(3, dt), np.zeros(1, dt)
    got, s_got = np.zeros(64, dt), np.zeros(64, dt)
    k[1, 64](g, got, s_got, s_out)
    for winner, seen in ((g[0], got), (s_out[0], s_got)):
        assert 1 <= winner <= 64
        assert seen[winner - 1] == 0 and (np.delete(seen, winner - 1) == winner).all()
    assert (g[1:] == 0).all()


def test_compare_and_swap_needs_a_1d_array():
    @gk.kernel
    def k(a):
        gk.atomic_compare_and_swap(a, 1, 2)

    with pytest.raises(gk.KernelTypeError, match=r"atomic_compare_and_swap\(\) works on the first element of a 1-D"):
        k.source(np.zeros((2, 2), np.int32), backend="cuda")
    assert "atomicCAS(&a[0], 1, 2)" in k.source(np.zeros(2, np.int32), backend="cuda")


# ---------------------------------------------------------------- fences
FENCES = {
    "threadfence": ("__threadfence();", "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"),
    "threadfence_block": ("__threadfence_block();", "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"),
    "threadfence_system": ("__threadfence_system();", "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"),
}


@pytest.mark.parametrize("name", FENCES)
def test_fence_runs_and_is_in_the_source(backend, name):
    """Each fence compiles and runs on every backend (a thread publishes a value, fences, then sets a
    flag) and is the dialect's fence in the CUDA C and OpenCL C."""
    fence = getattr(gk, name)

    @gk.kernel
    def k(data, flag):
        i = gk.global_id(0)
        data[i] = i * 2
        fence()
        gk.atomic_exch(flag, i, 1)

    data, flag = np.zeros(64, np.int32), np.zeros(64, np.int32)
    k[2, 32](data, flag)
    np.testing.assert_array_equal(data, np.arange(64) * 2)
    np.testing.assert_array_equal(flag, 1)
    cuda, opencl = FENCES[name]
    assert cuda in k.source(data, flag, backend="cuda")
    assert opencl in k.source(data, flag, backend="opencl")


def test_fence_takes_no_arguments():
    @gk.kernel
    def k(a):
        gk.threadfence(1)

    with pytest.raises(gk.CompileError, match="threadfence"):
        k.source(np.zeros(1, np.float32), backend="cuda")


def test_a_fence_is_not_a_barrier_to_the_race_checker(on_simulator):
    """A fence orders one thread's accesses; it does not make another thread wait: a shared write
    and another thread's read with only a fence between them are still a race."""

    @gk.kernel
    def k(out):
        t = thread_idx.x
        s = shared(float64, 32)
        s[t] = 1.0
        gk.threadfence_block()
        out[t] = s[31 - t]

    with pytest.raises(gk.DataRaceError):
        k[1, 32](np.zeros(32))


def test_fence_at_module_level_says_kernel_only():
    with pytest.raises(gk.GpukernError, match="threadfence_system"):
        gk.threadfence_system()
