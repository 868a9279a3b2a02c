"""Launching: bad input is a typed error before anything runs, and launch plans agree with the checked path.

Each bad launch is a ``gk.LaunchError`` that names the argument or the limit (and the kernel), on
every backend available here.  The fast path of a launch plan is compared with the checked path it
stands in for, value by value: whatever the fast path passes, the checked path passes the same way.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest
from kernel_source import load_kernel

import gpukern as gk
from gpukern import Array, Const, float32, float64, global_id, int32, kernel
from gpukern.backends.base import Backend
from gpukern.runtime.array import DeviceArray
from gpukern.runtime.plan import C_VALUE, convert_scalar, make_plan
from gpukern.types import SCALARS


@kernel
def scale(x: Array[float32], out: Array[float32], a: float32, n: int32):
    i = global_id(0)
    if i < n:
        out[i] = a * x[i]


@kernel
def write_both(first: Array[int32], second: Array[int32]):
    i = global_id(0)
    first[i] = 1
    second[i] = 2


@kernel
def fill_const(out: Array[float32], c: Const[float]):
    i = global_id(0)
    if i < out.shape[0]:
        out[i] = c


@kernel
def fill64(out: Array[float64], v: float64):
    out[global_id(0)] = v


@kernel
def mark(out: Array[int32]):
    if global_id(0) == 0 and global_id(1) == 0:
        out[0] = 1


def _count_checked(monkeypatch: pytest.MonkeyPatch, k: gk.Kernel) -> list[int]:
    """Calls of ``k``'s checked launch path from now on (a plan's launches do not call it)."""
    calls: list[int] = []
    real = k.launch
    monkeypatch.setattr(k, "launch", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    return calls


# ---------------------------------------------------------------- read-only arrays


def test_writing_a_read_only_array_is_refused_before_anything_runs(backend):
    first = np.zeros(4, np.int32)
    second = np.zeros(4, np.int32)
    second.flags.writeable = False
    with pytest.raises(gk.LaunchError, match=r"write_both: argument 'second' is a read-only NumPy array"):
        write_both[1, 4](first, second)
    assert not first.any(), "the kernel ran"


def test_reading_a_read_only_array_is_allowed(backend):
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(8, np.float32)
    scale[1, 8](x, out, 2.0, 8)
    np.testing.assert_array_equal(out, 2 * np.arange(8))


def test_profile_refuses_a_read_only_output():
    second = np.zeros(4, np.int32)
    second.flags.writeable = False
    with pytest.raises(gk.LaunchError, match="'second' is a read-only"):
        gk.profile(write_both[1, 4], np.zeros(4, np.int32), second)


# ---------------------------------------------------------------- profile() arguments


def test_profile_wants_a_configured_launch():
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(gk.LaunchError, match=r"kernel\[grid, block\], not <function"):
        gk.profile(lambda: scale[1, 8](x, out, 2.0, 8))
    with pytest.raises(gk.LaunchError, match=r"kernel\[grid, block\], not the kernel scale itself"):
        gk.profile(scale, x, out, 2.0, 8)
    assert not out.any()


# ---------------------------------------------------------------- the launch cache


@pytest.mark.parametrize(
    "good, bad",
    [((2, 4), (2.0, 4)), ((2, 4), (2, 4.0)), ((1, 4), (True, 4)), (((2, 1), 4), ((2, 1.0), 4)), ((2, 1), (2, True))],
)
def test_cached_launch_configs_are_told_apart_by_type(good, bad):
    @kernel
    def k(out: Array[int32]):
        out[0] = 1

    with pytest.raises(gk.LaunchError) as uncached:
        k[bad]
    k[good]
    with pytest.raises(gk.LaunchError) as cached:
        k[bad]  # equal to a cached config and hashes alike, but is refused all the same
    assert str(cached.value) == str(uncached.value)
    assert "must be an int or a tuple" in str(cached.value)


def test_equal_configs_share_one_launch_and_its_plan():
    launch = scale[2, 4]
    assert scale[np.int64(2), np.int32(4)] is launch
    assert scale[(2, 1, 1), (4, 1, 1)] is launch
    assert scale[(2,), 4] is launch


# ---------------------------------------------------------------- constants


def test_nan_constant_launches_again_and_again_with_one_variant(backend, monkeypatch):
    out = gk.zeros(8, np.float32)
    launch = fill_const[1, 8]
    nans = [float("nan"), float("nan"), np.nan, -float("nan"), np.float64("nan")]
    launch(out, nans[0])
    checked = _count_checked(monkeypatch, fill_const)
    for nan in nans:
        launch(out, nan)
        assert np.isnan(out.get()).all()
    launch(out, float("nan"))
    assert np.isnan(out.get()).all()
    assert len([key for key in fill_const.variants if key[1][2] != key[1][2]]) == 1  # every NaN, one variant
    if gk.get_backend().plans:
        assert "c: type float, the constant nan" in launch.plan.describe()
        assert len(checked) == 2  # np.float64 is another type than float: a new plan, and back


def test_negative_zero_constant_is_a_variant_of_its_own(backend):
    out = gk.zeros(8, np.float32)
    launch = fill_const[1, 8]
    for zero in (-0.0, 0.0, -0.0, 0.0, np.float64(-0.0)):
        launch(out, zero)
        assert (np.signbit(out.get()) == (math.copysign(1.0, zero) < 0)).all(), zero


def test_float_constant_beyond_every_float_is_refused(backend):
    out = np.zeros(8, np.float32)
    with pytest.raises(gk.LaunchError, match=r"fill_const: argument 'c' = about 10\*\*400 does not fit in a float"):
        fill_const[1, 8](out, 10**400)


# ---------------------------------------------------------------- scalars out of range


@pytest.mark.parametrize(
    "value",
    [10**400, -(10**400), 1e300, -1e300, np.float64(1e300), 2**128],
    ids=["10**400", "-10**400", "1e300", "-1e300", "np.float64(1e300)", "2**128"],
)
def test_float32_argument_that_overflows_is_refused(backend, value):
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(gk.LaunchError, match=r"scale: argument 'a' = .* does not fit in float32"):
        scale[1, 8](x, out, value, 8)
    assert not out.any()


def test_float64_argument_refuses_integers_beyond_floats(backend):
    out = np.zeros(1, np.float64)
    with pytest.raises(gk.LaunchError, match=r"fill64: argument 'v' = about 10\*\*400 does not fit in float64"):
        fill64[1, 1](out, 10**400)
    fill64[1, 1](out, 10**300)
    assert out[0] == 1e300


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("-inf")])
def test_nan_and_inf_arguments_are_passed(backend, value):
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    scale[1, 8](x, out, value, 8)
    np.testing.assert_array_equal(out, np.full(8, value, np.float32))


def test_a_plan_sends_out_of_range_scalars_to_the_checked_path(backend):
    x, out = gk.to_device(np.ones(8, np.float32)), gk.zeros(8, np.float32)
    launch = scale[1, 8]
    launch(x, out, 1.0, 8)
    launch(x, out, 2.0, 8)
    with pytest.raises(gk.LaunchError, match="does not fit in float32"):
        launch(x, out, 1e300, 8)
    with pytest.raises(gk.LaunchError, match="does not fit in int32"):
        launch(x, out, 1.0, 2**31)
    launch(x, out, math.inf, 8)
    np.testing.assert_array_equal(out.get(), np.full(8, math.inf, np.float32))


# ---------------------------------------------------------------- grids beyond the device


def test_grid_beyond_the_device_is_refused(backend):
    out = np.zeros(1, np.int32)
    with pytest.raises(gk.LaunchError, match=r"limits|at most|more than this machine"):
        mark[(2**31 - 1, 2**31 - 1), 1](out)  # PoCL used to abort the process here
    assert out[0] == 0


def test_thread_limit_of_a_launch(backend, monkeypatch):
    monkeypatch.setattr(type(gk.get_backend()), "max_threads", 100)
    out = np.zeros(1, np.int32)
    with pytest.raises(gk.LaunchError, match=r"mark\[\(4, 1, 1\), \(32, 1, 1\)\] has 128 threads; .* at most 100"):
        mark[4, 32](out)
    mark[3, 32](out)
    assert out[0] == 1


def test_opencl_refuses_more_work_groups_than_pocl_counts():
    if "opencl" not in gk.available_backends():
        pytest.skip("no OpenCL device here")
    with pytest.raises(gk.LaunchError, match=r"has 4294967296 blocks; opencl launches at most 4294967295"):
        mark[(2**16, 2**16), 1](np.zeros(1, np.int32), backend="opencl")


# ---------------------------------------------------------------- plans agree with the checked path


class Recorder(Backend):
    """A backend whose launcher records the C arguments a plan passes, instead of launching."""

    name = "recorder"
    plans = True
    max_group = 1024
    max_items = (1024, 1024, 64)
    max_shared = 1 << 16

    def __init__(self, packs_scalars: bool):
        self.packs_scalars = packs_scalars
        self.sent: list[list] = []

    def launcher(self, variant, grid, block, shared=0):
        return lambda cargs, stream: self.sent.append(cargs)


STRUCT = {"bool": "B", "int32": "i", "uint32": "I", "int64": "q", "float32": "f", "float64": "d"}  # as CUDA packs
STRUCT |= {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "uint64": "Q", "float16": "f"}  # half: as a float
VALUES = [
    *(0, 1, -1, 7, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32, 2**63 - 1, 2**63, -(2**63), 10**400),
    *(True, False, 0.0, -0.0, 1.5, -2.5, 1e300, -1e300, 3.4028234663852886e38, 3.5e38, 1e-50),
    *(math.nan, math.inf, -math.inf),
    *(np.bool_(True), np.int8(-3), np.int32(5), np.int32(-7), np.uint32(2**32 - 1), np.int64(2**40)),
    *(np.uint64(2**64 - 1), np.float16(1.5), np.float32(1.5), np.float32("inf"), np.float32("nan"), np.float64(1e300)),
    *(np.float64(-0.0), "1", None, 1j),
    *(complex(1.5, -2.5), complex(1e300, 1), complex(1, math.inf), np.complex64(1 - 1j), np.complex128(1e300j)),
]
REFUSED = object()


def _checked(t, v):
    try:
        return convert_scalar(v, t, "x")
    except gk.LaunchError:
        return REFUSED


def _same_c_value(t, fast, checked, packs: bool) -> bool:
    if packs and t.is_complex:  # PyCUDA packs a complex as its two parts, each a C float or double
        return np.asarray(fast, t.dtype).tobytes() == np.asarray(checked, t.dtype).tobytes()
    if packs:  # the launcher packs it: the bytes must agree
        return struct.pack(STRUCT[t.name], fast) == struct.pack(STRUCT[t.name], checked)
    return type(fast) is type(checked) and fast.tobytes() == checked.tobytes()


def _plans_for(k: gk.Kernel, packs: bool):
    """(sample, plan, its Recorder, the output array) for each value the checked path takes for ``k``'s x."""
    rec = Recorder(packs)
    out = DeviceArray(rec, 0, (1,), np.float64)
    for sample in VALUES:
        try:
            variant = k.variant(k.signature_of((out, sample)))
            convert = [p for p in variant.kernel_params if p.kind == "scalar"]
            if convert:
                convert_scalar(sample, convert[0].type, "x")
        except gk.LaunchError:
            continue
        plan = make_plan(variant, rec, (1, 1, 1), (1, 1, 1), (out, sample), [object()])
        assert plan is not None
        yield sample, plan, rec, out


def _agree(k: gk.Kernel, packs: bool) -> int:
    """Check every value against every plan of ``k``; the number of launches the fast paths took."""
    taken = 0
    try:
        for sample, plan, rec, out in _plans_for(k, packs):
            key = plan.variant.key
            own = plan.fast((out, sample))
            numbers = (float, np.floating, complex, np.complexfloating)
            finite = not isinstance(sample, numbers) or bool(np.isfinite(sample))
            assert own or not finite or "any value" in plan.describe(), f"the plan of {sample!r} refuses it"
            scalar = [p for p in plan.variant.kernel_params if p.kind == "scalar"]
            for value in VALUES:
                if not plan.fast((out, value)):
                    continue  # the checked path takes it: always allowed
                taken += 1
                assert k.signature_of((out, value)) == key, (sample, value)
                if scalar:
                    t = scalar[0].type
                    want = _checked(t, value)
                    assert want is not REFUSED, f"{k.__name__}: a plan of {sample!r} passed {value!r}"
                    assert _same_c_value(t, rec.sent[-1][1], want, packs), (sample, value, rec.sent[-1][1], want)
    finally:
        k.variants.clear()  # IR only: no C to check
    return taken


def _scalar_kernel(t):
    def takes(out: Array[float64], x):
        out[0] = 1.0

    takes.__annotations__["x"] = t  # x: t
    return kernel(takes)


@kernel
def takes_any(out: Array[float64], x):
    out[0] = 1.0


@kernel
def takes_const(out: Array[float64], x: Const):
    out[0] = 1.0


@kernel
def takes_int_const(out: Array[float64], x: Const[int]):
    out[0] = 1.0


@kernel
def takes_float_const(out: Array[float64], x: Const[float]):
    out[0] = 1.0


@pytest.mark.parametrize("packs", [False, True], ids=["typed", "packed"])
@pytest.mark.parametrize("t", SCALARS, ids=[t.name for t in SCALARS])
def test_plan_of_a_scalar_passes_only_what_the_checked_path_passes_alike(t, packs):
    assert _agree(_scalar_kernel(t), packs) > 0


@pytest.mark.parametrize("packs", [False, True], ids=["typed", "packed"])
def test_plan_of_an_inferred_scalar_agrees_with_the_checked_path(packs):
    assert _agree(takes_any, packs) > 0


@pytest.mark.parametrize("k", [takes_const, takes_int_const, takes_float_const], ids=lambda k: k.__name__)
def test_plan_of_a_constant_passes_only_its_own_key(k):
    assert _agree(k, False) > 0


def test_plan_checks_each_device_array(backend):
    if not gk.get_backend().plans:
        pytest.skip("the simulator makes no plans")
    x, out = gk.to_device(np.ones(8, np.float32)), gk.zeros(8, np.float32)
    launch = scale[1, 8]
    launch(x, out, 1.0, 8)
    fast = launch.fast
    assert fast((x, out, 1.0, 8))
    assert not fast((gk.to_device(np.ones(8, np.float64)), out, 1.0, 8))  # another dtype
    assert not fast((gk.to_device(np.ones((2, 4), np.float32)), out, 1.0, 8))  # another rank
    assert not fast((gk.to_device(np.ones(8, np.float32), backend="sim"), out, 1.0, 8))  # another backend
    assert not fast((np.ones(8, np.float32), out, 1.0, 8))  # a NumPy array: copied by the checked path
    assert not fast((x, out, 1.0))


def test_one_launcher_per_configuration_for_the_checked_path_and_its_plan(backend, monkeypatch):
    """The first launch (checked) and the plan it leaves share one launcher; checked launches that
    make no plan (NumPy arguments) build none per call; another configuration builds its own."""
    b = gk.get_backend()
    if not b.plans:
        pytest.skip("the simulator makes no plans")
    made = []
    real = type(b).make_launcher

    def counting(self, variant, grid, block, shared=0):
        made.append((grid, block, shared))
        return real(self, variant, grid, block, shared)

    monkeypatch.setattr(type(b), "make_launcher", counting)

    @kernel
    def fresh(x: Array[float32], out: Array[float32], a: float32, n: int32):  # no launcher made yet
        i = global_id(0)
        if i < n:
            out[i] = a * x[i]

    x, out = gk.to_device(np.ones(8, np.float32)), gk.zeros(8, np.float32)
    fresh[1, 8](x, out, 2.0, 8)  # this configuration's first launch, then its plan
    fresh[1, 8](x, out, 2.0, 8)
    host = np.zeros(8, np.float32)
    for _ in range(3):
        fresh[1, 8](np.ones(8, np.float32), host, 3.0, 8)  # NumPy arrays: the checked path each time
    np.testing.assert_array_equal(out.get(), np.full(8, 2, np.float32))
    np.testing.assert_array_equal(host, np.full(8, 3, np.float32))
    assert made == [((1, 1, 1), (8, 1, 1), 0)]
    fresh[2, 4](x, out, 4.0, 8)
    assert made == [((1, 1, 1), (8, 1, 1), 0), ((2, 1, 1), (4, 1, 1), 0)]
    np.testing.assert_array_equal(out.get(), np.full(8, 4, np.float32))


def test_a_plan_describes_its_tests(backend):
    if not gk.get_backend().plans:
        pytest.skip("the simulator makes no plans")
    x, out = gk.to_device(np.ones(8, np.float32)), gk.zeros(8, np.float32)
    launch = scale[1, 8]
    launch(x, out, np.float32(1.0), 8)
    text = launch.plan.describe()
    assert text.splitlines()[0].startswith(f"launch plan of scale[(1, 1, 1), (8, 1, 1)] on {gk.get_backend().name}")
    assert "  a: type float32, any value" in text
    assert "  n: type int, -2147483648 <= n <= 2147483647" in text
    assert "x.handle, out.handle" in text
    assert repr(launch.plan) == f"<launch plan of scale[(1, 1, 1), (8, 1, 1)] on {gk.get_backend().name}>"
    code = launch.plan.describe(source=True)[len(text) :]  # and the fast path as written for the plan
    assert code.lstrip().startswith("def fast(args):") and "if type(a0) is not DeviceArray" in code
    # a: a float32 already, passed as it is; n: an int, as it is where the launcher packs it, else converted
    # (OpenCL's launcher takes them as a list; the CUDA driver's packs them in the lines themselves)
    launched = r"(launch_\d+\(\[|pack_\d+\(buf_\d+, 0, )a0\.handle, a1\.handle, a2, (a3|convert_\d+\(a3\))[\],)]"
    assert re.search(launched, code), code


def test_c_values_of_every_scalar_type():
    assert {t.name for t in C_VALUE} == {t.name for t in SCALARS}
    assert C_VALUE[gk.bool_](5) == 1 and C_VALUE[gk.bool_](5).dtype == np.uint8


@gk.kernel
def add_value(x: gk.Array[gk.int32], v: gk.int32):
    i = gk.global_id(0)
    if i < x.shape[0]:
        x[i] += v


def test_threads_launching_one_plan_keep_their_arguments(backend):
    """Several threads launching the same k[grid, block] on their own arrays with their own values:
    every launch sees its own arguments (a launcher's argument buffer, an OpenCL kernel's set
    arguments, are shared: without taking turns a thread's arrays and values reached another's)."""
    import threading

    if backend == "sim":
        pytest.skip("the simulator launches synchronously, holding no argument buffer")
    launch = add_value[1, 64]
    arrays = [gk.zeros(64, np.int32) for _ in range(4)]
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for _ in range(300):
                launch(arrays[t], t + 1)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    gk.synchronize()
    assert not errors
    for t, a in enumerate(arrays):
        np.testing.assert_array_equal(a.get(), np.full(64, 300 * (t + 1), np.int32))


def test_grid_for_covers_any_shape_and_refuses_nonsense(backend):
    """issue 33: the README's flagship launch left outputs at zero where n was not a multiple of 16;
    ``gk.grid_for`` is the public helper it now uses."""
    import gpukern as gk

    assert gk.grid_for(100, 32) == (4,) and gk.grid_for((10, 33), (32, 4)) == (2, 3) and gk.grid_for(0, 8) == (1,)

    @gk.kernel
    def fill(out: gk.Array[gk.int32, 2]):
        col = gk.block_idx.x * gk.block_dim.x + gk.thread_idx.x
        row = gk.block_idx.y * gk.block_dim.y + gk.thread_idx.y
        if row < out.shape[0] and col < out.shape[1]:
            out[row, col] = row * 1000 + col

    out = np.zeros((37, 101), np.int32)
    fill[gk.grid_for(out.shape, (16, 16)), (16, 16)](out)
    np.testing.assert_array_equal(out, np.arange(37)[:, None] * 1000 + np.arange(101))
    for shape, block in [((4, 4), 16), (4, (0,)), (-1, 8), ((1, 2, 3, 4), (1, 1, 1, 1))]:
        with pytest.raises(gk.LaunchError, match="grid_for"):
            gk.grid_for(shape, block)


@gk.kernel
def filled(a: gk.Array[gk.float32], scale: gk.float32 = 2.0, TILE: gk.Const[int] = 16):
    i = gk.global_id(0)
    if i < a.shape[0]:
        a[i] = scale * TILE


def test_the_last_parameters_may_have_defaults(backend):
    """A Const's or a scalar's default is taken where a launch leaves the argument out, as Python
    calls do (the planned launches too); the message of a wrong count says how many it takes."""
    a = np.zeros(40, np.float32)
    for _ in range(3):  # the checked launch, then the plan's
        filled[1, 64](a)
        assert (a == 32).all()
        filled[1, 64](a, 0.5)
        assert (a == 8).all()
        filled[1, 64](a, 0.5, 4)
        assert (a == 2).all()
    assert "16" in filled.source(gk.Array[gk.float32]) and "* 4" not in filled.source(gk.Array[gk.float32])
    with pytest.raises(gk.LaunchError, match="takes 1 to 3 arguments but 0 were given"):
        filled[1, 64]()
    assert gk.sanitize(filled[1, 64], a) == [] and (a == 32).all()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "B = np.zeros(4, np.float32)\n\n@gk.kernel\ndef k(a, b: gk.Array[gk.float32] = B):\n    a[0] = b[0]\n",
            "array parameter 'b' cannot have a default",
        ),
        (
            "@gk.func\ndef f(x, y=1):\n    return x + y\n\n@gk.kernel\ndef k(a):\n    a[0] = f(a[0], 2)\n",
            "defaults in a kernel only",
        ),
    ],
    ids=["array", "func"],
)
def test_an_array_or_device_function_parameter_has_no_default(body, message):
    k = load_kernel("import numpy as np\nimport gpukern as gk\n\n" + body, "param_default")
    with pytest.raises(gk.KernelSyntaxError, match=message):
        k.source(np.zeros(4, np.float32))


@gk.kernel
def doubled_plus_column(a: gk.Array[gk.float32, 2], b: gk.Array[gk.float32, 2], t):
    i, j = gk.thread_idx.y, gk.thread_idx.x
    b[i, j] = a[i, j] * 2 + j + t[0]


def test_numpy_arrays_of_any_strides_are_read_and_written(backend):
    """Fortran order, a transpose, every other row, reversed rows: a C-contiguous copy goes in, and
    what the kernel wrote comes back into the caller's own array (Numba's and CuPy's kernels take
    strided arrays; gpukern's C indexes contiguous ones).  A tuple before does not shift them."""
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    sources = [base.T, np.asfortranarray(base.T), base.T[::-1], np.repeat(base.T, 2, axis=0)[::2]]
    for a in sources:
        assert a.shape == (8, 6)
        for out in (np.zeros((16, 6), np.float32)[::2], np.zeros((6, 8), np.float32).T, np.zeros((8, 6), order="F")):
            out = out.astype(np.float32, copy=False) if out.dtype != np.float32 else out
            doubled_plus_column[1, (6, 8)](a, out, (1.0,))
            np.testing.assert_array_equal(out, a * 2 + np.arange(6)[None, :] + 1)
    ro = base.T.copy(order="F")
    ro.flags.writeable = False  # read, never written: not written back
    out = np.zeros((16, 6), np.float32)[::2]
    doubled_plus_column[1, (6, 8)](ro, out, (0.0,))
    np.testing.assert_array_equal(out, ro * 2 + np.arange(6)[None, :])


def _scaler(T, fast: bool):
    """A kernel factory whose parameter annotations name its argument ``T`` and nothing in the body
    does: under ``from __future__ import annotations`` (this file) ``T`` is no closure variable."""
    if fast:

        @kernel(fastmath=True)
        def scale(a: Array[T, 1], out: Array[T, 1], s: float32):
            i = gk.thread_idx.x
            out[i] = a[i] * s

    else:

        @kernel
        def scale(a: Array[T, 1], out: Array[T, 1], s: float32):
            i = gk.thread_idx.x
            out[i] = a[i] * s

    return scale


@pytest.mark.parametrize("fast", [False, True])
def test_an_annotation_may_name_a_factory_local_the_body_does_not(backend, fast):
    k = _scaler(float64, fast)
    out = np.zeros(4)
    k[1, 4](np.arange(4.0), out, 2.0)
    np.testing.assert_array_equal(out, np.arange(4.0) * 2)
    assert k.scope == {"T": float64}
    with pytest.raises(gk.LaunchError):  # (the annotation holds: float64 arrays only)
        k[1, 4](np.arange(4, dtype=np.float32), np.zeros(4, np.float32), 2.0)


def test_the_decorating_scope_is_the_users_through_the_numba_layer():
    """``cuda.jit`` makes its kernel inside the Numba layer: the names kept for the annotations are
    the user's factory's (``T``), never the layer's own locals of the same names."""
    from gpukern.numba import cuda

    def make(T, device):  # (``device``: also a local of cuda.jit's own function)
        @cuda.jit
        def fill(a: Array[T, 1], v: device):
            a[gk.thread_idx.x] = v

        return fill

    k = make(float64, float32)
    assert k.scope == {"T": float64, "device": float32}
    out = np.zeros(3)
    k[1, 3](out, 2.5)
    np.testing.assert_array_equal(out, 2.5)
