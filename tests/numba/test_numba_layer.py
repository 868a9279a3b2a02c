"""``from gpukern.numba import cuda``: Numba-CUDA programs with only the import line changed run on
every backend (issue 32).  The kernels here are written for these tests in Numba's spelling; each
checks itself against NumPy, and one shows the simulator finding a race Numba would not report."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
import gpukern.numba as numba
from gpukern.numba import cuda, float32, int32, void

TABLE = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)


@cuda.jit
def axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return max(lo, min(v, hi))


@numba.jit
def twice(v):
    return v * 2


@cuda.jit("void(float32[:], float32[:])")
def block_sums(x, out):
    s = cuda.shared.array(64, dtype=np.float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * cuda.blockDim.x + t]
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, clamp(s[0], -1e9, 1e9))
    if cuda.blockIdx.x == 0 and cuda.laneid == 0 and t < cuda.warpsize:
        out[1] = twice(cuda.warpsize)


@cuda.jit(void(float32[:, :], float32[:, :]))
def scale_2d(a, b):
    x, y = cuda.grid(2)
    w, h = cuda.gridsize(2)
    if x < a.shape[0] and y < a.shape[1]:
        b[x, y] = a[x, y] * 2 + float32(w * h * 0)


@cuda.jit
def table_and_locals(out):
    tab = cuda.const.array_like(TABLE)
    acc = cuda.local.array(shape=4, dtype=int32)
    i = cuda.grid(1)
    for k in range(4):
        acc[k] = tab[(i + k) % 8]
    out[i] = cuda.selp(i % 2 == 0, acc[0] + acc[3], acc[1] - acc[2])


@cuda.jit
def warp_sum(x, out):
    v = x[cuda.grid(1)]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[cuda.grid(1) // 32] = v
    if cuda.all_sync(0xFFFFFFFF, v == v):
        cuda.syncwarp(0xFFFFFFFF)


def test_a_numba_program_runs_on_every_backend(backend):
    rng = np.random.default_rng(7)
    n = 1000
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    r = np.zeros_like(x)
    axpy[(n + 127) // 128, 128](r, np.float32(2.0), x, y)
    np.testing.assert_allclose(r, 2 * x + y, rtol=1e-6)

    d_x = cuda.to_device(x)
    d_out = cuda.device_array(2, np.float32)
    d_out.copy_to_device(np.zeros(2, np.float32))
    block_sums[8, 64](d_x, d_out)
    out = d_out.copy_to_host()
    assert np.isclose(out[0], x[:512].sum(dtype=np.float64), rtol=1e-5) and out[1] == 64

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.zeros_like(a)
    scale_2d[(1, 1), (4, 4)](a, b)
    np.testing.assert_array_equal(b, 2 * a)

    got = np.zeros(16, np.int32)
    table_and_locals[2, 8](got)
    i = np.arange(16)
    acc = [TABLE[(i + k) % 8] for k in range(4)]
    np.testing.assert_array_equal(got, np.where(i % 2 == 0, acc[0] + acc[3], acc[1] - acc[2]))


def test_warp_names_on_the_simulator():
    gk.set_backend("sim")
    try:
        x = np.arange(64, dtype=np.int32)
        out = np.zeros(2, np.int32)
        warp_sum[1, 64](x, out)
        assert out.tolist() == [x[:32].sum(), x[32:].sum()]
    finally:
        gk.set_backend(None)


def test_numba_names_are_gpukerns_own_definitions():
    assert cuda.syncthreads is gk.barrier and cuda.atomic.add is gk.atomic_add and cuda.threadIdx is gk.thread_idx
    assert cuda.shfl_down_sync is gk.shfl_down_sync and cuda.ballot_sync is gk.ballot and cuda.popc is gk.popc
    assert numba.float32 is gk.float32 and numba.types.int64 is gk.int64 and float32[:, :] == gk.Array[gk.float32, 2]
    assert isinstance(axpy, gk.Kernel) and isinstance(clamp, gk.DeviceFunction) and isinstance(twice, gk.DeviceFunction)
    assert cuda.is_available() and twice(21) == 42  # a numba.jit function still runs on the host


@cuda.jit
def racy_histogram(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        bins[data[i]] += 1  # RACE: Numba runs it; threads lose each other's counts


def test_the_simulator_reports_what_numba_would_run_silently():
    gk.set_backend("sim")
    try:
        data = np.array([0, 1, 1, 1, 2, 0, 1, 1], np.int32)
        with pytest.raises(gk.DataRaceError, match="data race on global array 'bins'") as e:
            racy_histogram[1, 8](data, np.zeros(3, np.int32))
        assert "RACE" in e.value.loc.source_line()
    finally:
        gk.set_backend(None)


def test_device_array_views_as_numba_slices_them():
    """``kernel(d[2:6])`` and ``kernel(d[:, 1])`` write into ``d``; ``order="F"`` arrays run."""

    @cuda.jit
    def inc(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] += i + 1

    @cuda.jit
    def fill(a):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = 10 * i + j

    d = cuda.to_device(np.zeros((8, 3), np.float32))
    inc[1, 8](d[:, 1])
    inc[1, 8](d[5])
    want = np.zeros((8, 3), np.float32)
    want[:, 1] += np.arange(1, 9)
    want[5] += np.arange(1, 4)
    np.testing.assert_array_equal(d.copy_to_host(), want)
    f = cuda.device_array((4, 6), np.float32, order="F")
    assert f.shape == (4, 6)
    fill[(1, 1), (4, 8)](f)
    np.testing.assert_array_equal(f.copy_to_host(), 10 * np.arange(4)[:, None] + np.arange(6))


def test_refusals_say_what_to_write():
    with pytest.raises(gk.GpukernError, match="order='C' or 'F'"):
        cuda.device_array(4, np.float32, order="K")
    with pytest.raises(gk.GpukernError, match="link"):
        cuda.jit(link=["kernel.ptx"])
    with pytest.raises(gk.KernelTypeError, match="grid\\(\\) takes 1, 2 or 3"):

        @cuda.jit
        def bad(out):
            out[0] = cuda.grid(4)

        bad.source(np.zeros(1, np.int32))


@cuda.jit
def live_neighbours(world, count, image):
    i, j = cuda.grid(2)
    h, w = world.shape
    if 0 < i < h - 1 and 0 < j < w - 1:
        n = world[i - 1, j] + world[i + 1, j] + world[i, j - 1] + world[i, j + 1]  # bools count, as in Numba
        count[i, j] = n
        image[i, j] = n * 100  # an int64 stored into uint8 converts, as in Numba


def test_numba_meaning_where_it_differs_from_numpys(backend):
    world = np.random.default_rng(4).random((6, 6)) < 0.5
    count, image = np.zeros((6, 6), np.int32), np.zeros((6, 6), np.uint8)
    live_neighbours[(1, 1), (8, 8)](world, count, image)
    w = world.astype(np.int64)
    want = w[:-2, 1:-1] + w[2:, 1:-1] + w[1:-1, :-2] + w[1:-1, 2:]
    np.testing.assert_array_equal(count[1:-1, 1:-1], want)
    np.testing.assert_array_equal(image[1:-1, 1:-1], (want * 100).astype(np.uint8))


def test_sanitize_tells_what_numba_wraps_silently():
    world = np.ones((4, 4), bool)  # four neighbours: 400 does not fit in uint8
    faults = gk.sanitize(live_neighbours[(1, 1), (4, 4)], world, np.zeros((4, 4), np.int32), np.zeros((4, 4), np.uint8))
    assert [type(f) for f in faults] == [gk.ConversionError] and "400 stored as uint8 becomes 144" in str(faults[0])


def test_the_layer_imports_beside_numba_cudas_import_redirector(tmp_path):
    """numba-cuda installs a finder that takes every module name containing "numba.cuda" and
    recursed without end on gpukern's (seen on the GPU machine); one that refuses such names
    stands in for it here: ``gpukern.numba.cuda`` must never be looked for."""
    import subprocess
    import sys

    probe = (
        "import importlib.abc, sys\n"
        "class Refuse(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if 'numba.cuda' in name:\n"
        "            raise RecursionError(name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import gpukern.numba.cuda as cuda\n"
        "from gpukern.numba.cuda import jit, grid\n"
        "from gpukern.numba import cuda as same\n"
        "assert cuda is same and jit is cuda.jit\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


@cuda.jit
def half_math(a, b, out, less):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        r = cuda.fp16.hmul(cuda.fp16.hadd(x, y), cuda.fp16.hsqrt(cuda.fp16.habs(y)))
        r = cuda.fp16.hfma(r, x, cuda.fp16.hneg(y))
        out[i] = cuda.fp16.hmax(r, cuda.fp16.hmin(x, y))
        less[i] = cuda.fp16.hlt(x, y)


def test_fp16_names_are_float16_arithmetic_on_every_backend(backend):
    a = np.array([1.5, -2, 3.25, 0.5], np.float16)
    b = np.array([0.25, 4, -1, 2], np.float16)
    out, less = np.zeros(4, np.float16), np.zeros(4, bool)
    half_math[1, 4](a, b, out, less)
    r = (a + b) * np.sqrt(np.abs(b))  # NumPy's float16: each operation rounded to half
    r = (r.astype(np.float32) * a + (-b)).astype(np.float16)  # fma: one rounding
    np.testing.assert_array_equal(out, np.maximum(r, np.minimum(a, b)))
    np.testing.assert_array_equal(less, a < b)


@cuda.jit
def half_of_a_float(a, out):
    out[0] = cuda.fp16.hadd(a[0], a[1])  # FLOAT32


def test_fp16_names_take_float16_only():
    with pytest.raises(gk.KernelTypeError, match=r"cuda\.fp16\.hadd\(\) takes float16 values, not float32"):
        half_of_a_float.source(np.zeros(2, np.float32), np.zeros(1, np.float16))


@cuda.jit(device=True)
def put_index(a, i):
    if i >= a.size:
        return  # a procedure that returns nothing on some paths
    a[i] = i


def make_affine(k):
    @cuda.jit(device=True)
    def affine(x, y):
        return x * k + y

    return affine


def make_kernel_with_a_closure():
    @cuda.jit(device=True)
    def plus_five(x):
        return x + 5

    @cuda.jit
    def closure_kernel(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = plus_five(i) + make_affine(3)(i, 1)  # a device function made at compile time

    return closure_kernel


@cuda.jit
def procedure_kernel(a):
    put_index(a, cuda.grid(1))


@cuda.jit
def factory_of_a_number(a):
    a[0] = len_of(a.size)  # NUMBER


def len_of(n):
    return n


def test_device_functions_as_numba_programs_make_them(backend):
    a = np.zeros(4, np.int64)
    procedure_kernel[1, 8](a)
    np.testing.assert_array_equal(a, np.arange(4))
    make_kernel_with_a_closure()[1, 8](a)
    i = np.arange(4)
    np.testing.assert_array_equal(a, i + 5 + 3 * i + 1)


def test_a_python_function_must_make_a_device_function():
    with pytest.raises(gk.KernelTypeError, match=r"cannot call len_of in a kernel|it gives"):
        factory_of_a_number.source(np.zeros(2, np.int64))


@cuda.jit
def reversed_through_a_group_sync(a, out):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    block = cuda.cg.this_thread_block()
    block.sync()  # the block's barrier
    out[t] = s[31 - t]


@cuda.jit
def grid_reverse(a, out):
    i = cuda.grid(1)
    a[i] = a[i] * 2
    cuda.cg.this_grid().sync()  # GRID
    out[i] = a[a.size - 1 - i]  # written by another block before the grid's barrier


def test_cooperative_groups_of_a_block_and_of_the_grid_sync_them(backend):
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    reversed_through_a_group_sync[1, 32](a, out)
    np.testing.assert_array_equal(out, a[::-1])
    a, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    grid_reverse[2, 32](a, out)  # (OpenCL: in two launches, codegen.phases)
    np.testing.assert_array_equal(out, (np.arange(64) * 2)[::-1])


@cuda.jit
def libdevice_calls(x, o32, o64, bits):
    i = cuda.grid(1)
    if i < x.size:
        o32[i] = cuda.libdevice.sinf(x[i]) + cuda.libdevice.fast_expf(x[i]) * cuda.libdevice.powf(x[i], 2.0)
        o64[i] = cuda.libdevice.sin(x[i]) + cuda.libdevice.fmax(x[i], 0.25) + cuda.libdevice.rsqrt(x[i] + 1.0)
        bits[i] = cuda.libdevice.popcll(i * 12345) + cuda.libdevice.clz(i + 1)


def test_libdevice_names_take_their_own_types(backend):
    x = np.linspace(0.1, 2, 16)
    o32, o64, bits = np.zeros(16, np.float32), np.zeros(16), np.zeros(16, np.int64)
    libdevice_calls[1, 16](x, o32, o64, bits)
    xf = x.astype(np.float32)  # sinf, expf, powf: float32 arguments, float32 results
    np.testing.assert_allclose(o32, np.sin(xf) + np.exp(xf) * xf**2, rtol=1e-5)
    np.testing.assert_allclose(o64, np.sin(x) + np.maximum(x, 0.25) + 1 / np.sqrt(x + 1), rtol=1e-12)
    i = np.arange(16)
    want = [bin(int(v) * 12345).count("1") + 32 - int(v + 1).bit_length() for v in i]
    assert bits.tolist() == want
    assert cuda.libdevice.sinf.of is cuda.libdevice.sin.of is gk.semantics.ops.MATH["sin"]  # one definition


def test_each_shared_array_call_is_an_array_of_its_own():
    """``cuda.shared.array`` lowers a fresh call node each time; two such arrays were one when the
    second node took the first's freed id (the docs' fast_matmul then read B's tile as A's, now and
    then). Many kernels with four tiles each: every tile is declared on its own."""
    import re

    for _ in range(40):

        @cuda.jit
        def four_tiles(out):
            a = cuda.shared.array(shape=(4, 4), dtype=numba.float32)
            b = cuda.shared.array(shape=(4, 4), dtype=numba.float32)
            c = cuda.shared.array((4, 4), numba.float32)
            d = cuda.local.array((4,), numba.float32)
            t = cuda.threadIdx.x
            a[0, t] = 1.0
            b[0, t] = 2.0
            c[0, t] = 3.0
            d[0] = 4.0
            cuda.syncthreads()
            out[t] = a[0, t] + 10 * b[0, t] + 100 * c[0, t] + 1000 * d[0]

        src = four_tiles.source(np.zeros(4, np.float32))
        assert len(re.findall(r"__shared__ float \w+\[4\]\[4\];", src)) == 3, src
        out = np.zeros(4, np.float32)
        four_tiles[1, 4](out)
        assert (out == 4321).all()


def test_event_elapsed_time(backend):
    """``cuda.event_elapsed_time(start, end)``: the milliseconds between two recorded events, as
    ``start.elapsed_time(end)``; an event never recorded is a clear error."""

    @cuda.jit
    def twice(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    a = cuda.to_device(np.arange(64, dtype=np.float32))
    start, end = cuda.event(), cuda.event()
    start.record()
    twice[2, 32](a)
    end.record()
    end.synchronize()
    ms = cuda.event_elapsed_time(start, end)
    assert ms >= 0 and ms == start.elapsed_time(end)
    np.testing.assert_array_equal(a.copy_to_host(), np.arange(64) * 2)
    with pytest.raises(gk.GpukernError):
        cuda.event_elapsed_time(cuda.event(), end)


def test_numba_top_level_names_prange_literal_unroll(backend):
    """``numba.prange`` (a range loop in a kernel, Python's range on the host), ``literal_unroll``
    (its tuple), ``numba.config``, ``numba.errors``, ``numba.from_dtype``."""
    import gpukern.numba as numba

    @numba.njit
    def scaled(x):
        s = 0.0
        for i in numba.prange(3):
            s += x * i
        return s

    weights = (1, 2.5, 3)

    @numba.cuda.jit
    def k(out):
        i = numba.cuda.grid(1)
        acc = 0.0
        for v in numba.literal_unroll(weights):
            acc += v
        out[i] = scaled(2.0) + acc

    out = np.zeros(2)
    k[1, 2](out)
    assert list(out) == [scaled(2.0) + sum(weights)] * 2 and scaled(2.0) == 6.0
    assert numba.literal_unroll(weights) is weights and list(numba.prange(2, 5)) == [2, 3, 4]
    assert numba.config.ENABLE_CUDASIM is False and numba.errors.TypingError is gk.KernelTypeError
    assert numba.from_dtype(np.float32) is numba.float32


VECTOR_BASES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
C_NAMES = {"int8": "char", "int16": "short", "int32": "int", "int64": "longlong", "uint8": "uchar", "uint16": "ushort",
           "uint32": "uint", "uint64": "ulonglong", "float32": "float", "float64": "double"}  # fmt: skip


@pytest.mark.parametrize("base", VECTOR_BASES)
def test_cuda_vector_types(backend, base):
    """``cuda.float32x4(...)`` and CUDA C's name for it (``cuda.float4``): the components converted to
    the base type, ``.x``..``.w``; a vector among the arguments gives its components."""
    v2, v4 = getattr(cuda, f"{base}x2"), getattr(cuda, f"{base}x4")
    assert getattr(cuda, f"{C_NAMES[base]}4") is v4 and getattr(cuda, f"{C_NAMES[base]}2") is v2
    t = np.dtype(base).type

    @cuda.jit
    def k(res):
        a = v2(t(2.0), 3)
        b = v4(1, a, t(4.0))
        res[0] = b.x
        res[1] = b.y
        res[2] = b.z
        res[3] = b.w
        res[4] = a.y

    res = np.zeros(5)
    k[1, 1](res)
    assert list(res) == [1, 2, 3, 4, 3]


def test_a_vector_of_the_wrong_count_says_so():
    @cuda.jit
    def k(res):
        v = cuda.float32x3(1.0, 2.0)
        res[0] = v.x

    with pytest.raises(gk.KernelTypeError, match="takes 3 components"):
        k.source(np.zeros(1))
