"""The CUDA driver layer's launcher (``cuda_driver.Launcher``) and the CUDA backend's spreading of
complex and shared-size arguments (``cuda._Spread``), run without a GPU: a stand-in driver library
and a stand-in for CuPy's ``launchKernel`` record what would reach the driver, called directly and
through the lines a plan's fast path is written with (tests/backends/test_interop_gpu.py and the rest of
the suite launch through the real ones on the GPU machine)."""

from __future__ import annotations

import ctypes
import struct

import pytest

from gpukern import BackendError
from gpukern.backends import cuda_driver
from gpukern.backends.cuda import _Spread
from gpukern.runtime.fast_path import Source, compile_fast, write_launch

LAYOUT = struct.Struct("=QQif")  # two pointers, an int, a float


class NativeError(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class Native:
    """CuPy's ``launchKernel`` stand-in: records the call and the argument buffer's bytes then."""

    def __init__(self, fail_with: int = 0):
        self.calls: list[tuple] = []
        self.fail_with = fail_with

    def __call__(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        words = (ctypes.c_void_p * 5).from_address(extra)
        size = ctypes.c_size_t.from_address(words[3]).value
        self.calls.append(((f, gx, gy, gz, bx, by, bz, shared, stream, params), ctypes.string_at(words[1], size)))
        if self.fail_with:
            raise NativeError(self.fail_with)


class Lib:
    """The driver library's stand-in: ``cuLaunchKernelEx`` records its configuration and buffer."""

    def __init__(self, status: int = 0):
        self.status = status
        self.calls: list[tuple] = []

    def cuLaunchKernelEx(self, config, handle, params, extra):  # noqa: N802  (the driver's name)
        c = config._obj
        size = ctypes.c_size_t.from_address(extra[3]).value
        dims = (c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z, c.shared)
        self.calls.append((dims, c.stream, handle.value, ctypes.string_at(extra[1], size)))
        return self.status

    def cuGetErrorName(self, rc, out):  # noqa: N802
        out._obj.value = b"CUDA_ERROR_INVALID_CONTEXT"

    def cuGetErrorString(self, rc, out):  # noqa: N802
        out._obj.value = b"invalid device context"


class Driver:
    """What a launcher asks of ``cuda_driver.Driver``: its library and its context switch."""

    def __init__(self, lib: Lib, default_context: bool = True):
        self.lib, self.launch_ex, self.switched = lib, lib.cuLaunchKernelEx, 0
        self.default_context = default_context  # device 0's primary context (else: switched to first)

    def in_context(self, fn, *args):
        self.switched += 1
        return fn(*args)


def make(
    monkeypatch, native: Native | None, lib: Lib | None = None, layout=LAYOUT, shared: int = 0, default: bool = True
):
    monkeypatch.setattr(cuda_driver, "native_launch", lambda: None if native is None else (native, NativeError))
    function = cuda_driver.Function.__new__(cuda_driver.Function)
    function.module, function.handle, function.name = None, 0x1234, "k"
    driver = Driver(lib or Lib(), default)
    return cuda_driver.Launcher(driver, function, (2, 1, 1), (64, 1, 1), shared, layout), driver


def written(launch, nargs: int, stream=None):
    """``fast(args)`` with ``launch``'s own lines, the arguments as they are."""
    src = Source()
    src.line(f"{''.join(f'a{i}, ' for i in range(nargs))}= args")
    write_launch(src, launch, [f"a{i}" for i in range(nargs)], src.const(stream, "stream"))
    return compile_fast(src, nargs, "False", "k")


VALUES = (0x1000, 0x2000, -3, 1.5)


@pytest.mark.parametrize("stream", [None, 0x77])
def test_cupys_binding_called_alike_directly_and_from_a_fast_path(monkeypatch, stream):
    native = Native()
    launch, driver = make(monkeypatch, native)
    launch(list(VALUES), stream)
    fast = written(launch, 4, stream)
    assert fast(VALUES) is True
    assert "pack_" in fast.source and "native_" in fast.source and "launch(" not in fast.source
    want = ((0x1234, 2, 1, 1, 64, 1, 1, 0, stream or 0, 0), LAYOUT.pack(*VALUES))
    assert native.calls == [want, want] and driver.switched == 0 and driver.lib.calls == []


def test_a_failed_native_launch_is_made_again_in_the_drivers_context(monkeypatch):
    native = Native(fail_with=201)  # CUDA_ERROR_INVALID_CONTEXT: another context current
    launch, driver = make(monkeypatch, native)
    written(launch, 4)(VALUES)
    launch(list(VALUES), 0x77)
    assert driver.switched == 2  # the retry went through the context switch, by ctypes
    assert [c[1] for c in driver.lib.calls] == [None, 0x77]
    for dims, _, handle, buffer in driver.lib.calls:
        assert dims == (2, 1, 1, 64, 1, 1, 0) and handle == 0x1234 and buffer == LAYOUT.pack(*VALUES)


def test_another_devices_launch_switches_context_first_and_fails_no_call(monkeypatch):
    """Not device 0's primary context: each launch is made in it (``in_context``) at once, by ctypes,
    so no call fails first (compute-sanitizer reports every failed driver call)."""
    native = Native(fail_with=201)
    launch, driver = make(monkeypatch, native, default=False)
    launch(list(VALUES), None)
    written(launch, 4, 0x77)(VALUES)
    assert native.calls == [] and driver.switched == 2
    assert [c[1] for c in driver.lib.calls] == [None, 0x77]


class CtxLib:
    """The driver's current context, as ``Driver.in_context`` queries and sets it."""

    def __init__(self, current):
        self.current, self.sets = current, []

    def cuCtxGetCurrent(self, out):  # noqa: N802
        out._obj.value = self.current
        return 0

    def cuCtxSetCurrent(self, ctx):  # noqa: N802
        self.current = ctx.value if isinstance(ctx, ctypes.c_void_p) else ctx
        self.sets.append(self.current)
        return 0


@pytest.mark.parametrize(
    ("current", "default", "after"),
    [(None, True, 0xC0), (None, False, None), (0xAA, True, 0xAA), (0xC0, True, 0xC0)],
)
def test_in_context_puts_back_what_the_thread_had(current, default, after):
    """Another context current: it is put back after the call.  None current: device 0's primary
    context stays (what the CUDA runtime would make current), another device's does not."""
    driver = cuda_driver.Driver.__new__(cuda_driver.Driver)
    driver.lib, driver.context, driver.default_context = CtxLib(current), 0xC0, default
    seen = []
    assert driver.in_context(lambda: seen.append(driver.lib.current) or 0) == 0
    assert seen == [0xC0] and driver.lib.current == after


def test_a_launch_failing_in_the_drivers_context_too_is_a_backend_error(monkeypatch):
    for native in (Native(fail_with=201), None):
        launch, driver = make(monkeypatch, native, Lib(status=201))
        with pytest.raises(BackendError, match="launch of k failed: CUDA_ERROR_INVALID_CONTEXT"):
            launch(list(VALUES), None)
        with pytest.raises(BackendError, match="launch of k failed"):
            written(launch, 4)(VALUES)
        assert not launch.lock.locked()  # released on the way out


def test_without_cupy_ctypes_launches_once_per_call(monkeypatch):
    launch, driver = make(monkeypatch, None)
    launch(list(VALUES), None)
    fast = written(launch, 4, 0x55)
    fast(VALUES)
    fast(VALUES)
    assert "go_" in fast.source and "native_" not in fast.source
    assert [c[1] for c in driver.lib.calls] == [None, 0x55, 0x55] and driver.switched == 0
    assert len(launch.configs) == 2  # a configuration per stream, made once


def test_complex_values_and_the_shared_size_are_spread_in_the_fast_path_too(monkeypatch):
    native = Native()
    layout = struct.Struct("=QffiQ")  # a pointer, a complex64 as two floats, an int, the shared bytes
    launch, _ = make(monkeypatch, native, layout=layout, shared=4096)
    spread = _Spread(launch, (1,), 4096)
    values = (0x1000, complex(1.5, -2.25), 7)
    spread(list(values), None)
    fast = written(spread, 3)
    assert fast(values) is True
    assert "z1 = a1" in fast.source and "z1.real, z1.imag" in fast.source
    want = layout.pack(0x1000, 1.5, -2.25, 7, 4096)
    assert [c[1] for c in native.calls] == [want, want]
    assert native.calls[0][0][7] == 4096  # the dynamic shared bytes go to the driver as well


def test_ctypes_is_chosen_where_cupy_is_absent_refused_or_not_imported(monkeypatch):
    """CuPy's binding where the program has imported CuPy (built for CUDA); ctypes where it has not
    (importing it would cost a quarter of a second before the first result), or where asked."""
    import sys

    monkeypatch.setenv("GPUKERN_CUDA_LAUNCH", "ctypes")
    assert cuda_driver.native_launch() is None
    monkeypatch.delenv("GPUKERN_CUDA_LAUNCH")
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert cuda_driver.native_launch() is None  # (and CuPy was not imported for it)
    assert "cupy" not in sys.modules
    try:
        import cupy  # noqa: F401
        import cupy_backends.cuda.api.driver as cupy_driver
    except ImportError:
        return
    cuda_driver._cupy_launch.cache_clear()
    assert cuda_driver.native_launch() == (cupy_driver.launchKernel, cupy_driver.CUDADriverError)

