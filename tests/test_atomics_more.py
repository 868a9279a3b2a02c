"""The atomics beyond add/sub/min/max/exch/cas, 64-bit atomics, and the memory fences.

``tests/test_ops.py`` checks every entry of ``ops.ATOMIC`` on every type it is defined on,
one update per element; here: many threads updating one element of a 2-D global and of a
2-D shared array (``atomic_or(a, (i, j), v)``), ``atomic_inc``/``atomic_dec`` at their
wrap-around edges, what the front end refuses, and the fences.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import float64, int64, ops, shared, thread_idx, uint32
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
    if name in ("and", "or", "xor"):
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


MAX = 2**32 - 1
# (old, v): old == v, old == 0, old > v, old < v, v == 0, v == MAX, old == MAX
EDGES = [(5, 5), (0, 5), (7, 5), (3, 5), (0, 0), (4, 0), (0, MAX), (MAX, MAX), (MAX, 5), (MAX - 1, MAX), (1, 1)]


@pytest.mark.parametrize("name", ["inc", "dec"])
def test_inc_dec_wrap_around(backend, name):
    """atomic_inc/atomic_dec at their edges (old == v, old == 0, old > v...), on global and shared
    memory: the stored and the returned values are CUDA's."""
    old = np.array([o for o, _ in EDGES], np.uint32)
    v = np.array([x for _, x in EDGES], np.uint32)
    want = np.array([_inc_dec_expected(name, o, x) for o, x in EDGES], np.uint32)
    atomic = _atomic(name)

    @gk.kernel
    def k(g, v, start, returned, s_stored, s_returned):
        i = thread_idx.x
        s = shared(uint32, 16)
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
