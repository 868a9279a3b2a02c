"""The CUDA driver API through ctypes: what the CUDA backend needs of ``libcuda``, and nothing else.

Why not PyCUDA: it cannot launch on a stream it did not create (CuPy's, PyTorch's), it hides a
function's handle, and it installs only from source against a toolkit.  The driver library comes
with every NVIDIA driver, so this module makes the CUDA backend need the driver alone (plus a
compiler for the generated C).  Handles are plain ints (pointers, streams, events, functions);
every call's status is checked, and a failure is a ``BackendError`` naming the call and the
driver's own error name.

Contexts: the backend works in the device's *primary* context, the one CuPy, PyTorch, Numba and
the CUDA runtime share, so pointers and streams pass between them and gpukern.  A context is
current per host thread, and the CUDA runtime takes the current context's device as the thread's
current device: so every call runs in the backend's context and leaves the thread's own current
after it (``Driver.in_context``), and CuPy and PyTorch on this thread see the device they had.
One exception: where the thread had no context and ours is device 0's primary one, ours stays
current, since the runtime would make that very context current at its first call anyway.  So a
launch finds its context current and makes no call that fails: tools that report every failed
driver call (compute-sanitizer) see none in a correct program.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import BackendError, LaunchError

_NOT_READY = 600  # CUDA_ERROR_NOT_READY: cuEventQuery / cuStreamQuery of unfinished work
# cuLaunchKernel's ``extra``: the kernel's arguments as one packed buffer
_PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE, _PARAM_END = 1, 2, 0
_POINTER_DEVICE_ORDINAL = 9  # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
ATTR_MAX_DYNAMIC_SHARED = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
ATTR_NON_PORTABLE_CLUSTER = 14  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
FUNC_ATTR_SHARED_SIZE = 1  # CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static shared memory)
DEVICE_ATTRIBUTES = {  # CUdevice_attribute values the backend reads
    "MAX_THREADS_PER_BLOCK": 1,
    "MAX_BLOCK_DIM_X": 2,
    "MAX_BLOCK_DIM_Y": 3,
    "MAX_BLOCK_DIM_Z": 4,
    "MAX_GRID_DIM_X": 5,
    "MAX_GRID_DIM_Y": 6,
    "MAX_GRID_DIM_Z": 7,
    "MAX_SHARED_MEMORY_PER_BLOCK": 8,
    "MULTIPROCESSOR_COUNT": 16,
    "COMPUTE_CAPABILITY_MAJOR": 75,
    "COMPUTE_CAPABILITY_MINOR": 76,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
}

_lib: ctypes.CDLL | None = None
_lock = threading.Lock()


def library() -> ctypes.CDLL:
    """``libcuda`` (the driver's library), loaded and initialised once."""
    global _lib
    with _lock:
        if _lib is None:
            try:
                lib = ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
            except OSError as e:
                raise BackendError(f"the CUDA driver library is not installed or cannot be loaded ({e})") from None
            _declare(lib)
            rc = lib.cuInit(0)
            if rc:
                raise BackendError(f"cuInit failed: {error_name(lib, rc)} (is there an NVIDIA GPU and driver?)")
            _lib = lib
    return _lib


def _declare(lib: ctypes.CDLL) -> None:
    """Argument types of the calls whose arguments are not all ints that fit a C int."""
    vp, u, sz = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
    lib.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
    lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, vp, sz]
    lib.cuMemcpyDtoH_v2.argtypes = [vp, ctypes.c_uint64, sz]
    lib.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_uint64, vp, sz, vp]
    lib.cuMemcpyDtoHAsync_v2.argtypes = [vp, ctypes.c_uint64, sz, vp]
    lib.cuMemcpyDtoDAsync_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint64, sz, vp]
    lib.cuMemsetD8_v2.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, sz]
    lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), sz]
    lib.cuMemHostAlloc.argtypes = [ctypes.POINTER(vp), sz, u]
    lib.cuMemFreeHost.argtypes = [vp]
    lib.cuStreamSynchronize.argtypes = [vp]
    lib.cuStreamWaitEvent.argtypes = [vp, vp, u]
    lib.cuStreamDestroy_v2.argtypes = [vp]
    lib.cuEventRecord.argtypes = [vp, vp]
    lib.cuEventSynchronize.argtypes = [vp]
    lib.cuEventQuery.argtypes = [vp]
    lib.cuEventDestroy_v2.argtypes = [vp]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
    lib.cuModuleUnload.argtypes = [vp]
    lib.cuFuncSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int]
    lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, vp]
    lib.cuCtxSetCurrent.argtypes = [vp]
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(vp)]
    lib.cuPointerGetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_uint64]
    if hasattr(lib, "cuTensorMapEncodeTiled"):  # driver 12.0+
        p64, p32 = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
        lib.cuTensorMapEncodeTiled.argtypes = [vp, ctypes.c_int, u, ctypes.c_uint64, p64, p64, p32, p32] + [
            ctypes.c_int
        ] * 4


def error_name(lib: ctypes.CDLL, rc: int) -> str:
    """The driver's name and description of status ``rc`` (``CUDA_ERROR_...: text``)."""
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(rc, ctypes.byref(name))
    lib.cuGetErrorString(rc, ctypes.byref(text))
    n = name.value.decode() if name.value else f"error {rc}"
    return f"{n}: {text.value.decode()}" if text.value else n


def driver_version() -> int:
    """The driver's CUDA version as 1000 * major + 10 * minor (13000 for CUDA 13.0)."""
    v = ctypes.c_int()
    lib = library()
    lib.cuDriverGetVersion(ctypes.byref(v))
    return v.value


def device_count() -> int:
    n = ctypes.c_int()
    lib = library()
    rc = lib.cuDeviceGetCount(ctypes.byref(n))
    if rc:
        raise BackendError(f"cuDeviceGetCount failed: {error_name(lib, rc)}")
    return n.value


def device_names() -> list[str]:
    """The name of every device, in ordinal order."""
    lib = library()
    out = []
    for i in range(device_count()):
        dev, buf = ctypes.c_int(), ctypes.create_string_buffer(256)
        if lib.cuDeviceGet(ctypes.byref(dev), i) or lib.cuDeviceGetName(buf, 256, dev):
            out.append(f"CUDA device {i}")
        else:
            out.append(buf.value.decode())
    return out


def current_context() -> int | None:
    """The context current on this thread (another library's, such as PyCUDA's), or None."""
    lib = library()
    ctx = ctypes.c_void_p()
    if lib.cuCtxGetCurrent(ctypes.byref(ctx)) or not ctx.value:
        return None
    return ctx.value


class Driver:
    """One device and its context: every driver call the CUDA backend makes goes through here."""

    def __init__(self, ordinal: int = 0, use_current: bool = True, exact: bool = False):
        """The context current on this thread where there is one and ``use_current`` (PyCUDA's,
        CuPy's, PyTorch's: gpukern then works in it; with ``exact``, only where it is device
        ``ordinal``'s), else device ``ordinal``'s primary context."""
        self.lib = lib = library()
        # cuLaunchKernelEx (driver 12.0+) where the driver has it; called without argtypes, with
        # ctypes objects only (see ``launcher``)
        self.launch_ex = getattr(lib, "cuLaunchKernelEx", None)
        count = device_count()
        if not 0 <= ordinal < count:
            raise BackendError(f"CUDA device {ordinal} does not exist (there are {count})")
        dev = ctypes.c_int()
        self._check(lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        ctx = current_context() if use_current else None
        if ctx is not None:
            current = ctypes.c_int()
            self._check(lib.cuCtxGetDevice(ctypes.byref(current)), "cuCtxGetDevice")
            if exact and current.value != dev.value:
                ctx = None
        if ctx is not None:  # a context is current (PyCUDA's, CuPy's, PyTorch's): work in it
            self.device, self.context, self.retained = current.value, ctx, False
        else:
            c = ctypes.c_void_p()
            self._check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(c), dev), "cuDevicePrimaryCtxRetain")
            self.device, self.context, self.retained = dev.value, c.value, True
        self.ordinal = self._ordinal()
        # device 0's primary context: the one the CUDA runtime makes current on a thread that has none
        self.default_context = self.ordinal == 0 and (self.retained or self.context == self._primary())

    # ------------------------------------------------------------ calls
    def _check(self, rc: int, what: str) -> None:
        if rc:
            raise BackendError(f"{what} failed: {error_name(self.lib, rc)}")

    def in_context(self, fn: Callable[..., int], *args: Any) -> int:
        """``fn(*args)``'s status, run in this device's context: where another is current on this
        thread (another device's, another library's) or none, ours is made current for the call
        and the thread's own put back after, so that the caller's CUDA runtime, CuPy and PyTorch
        see the device they had (the runtime takes the current context's device as its own).
        Where querying or making ours current fails (the driver shutting down), that status, and
        ``fn`` is not run."""
        lib = self.lib
        prev = ctypes.c_void_p()
        rc = lib.cuCtxGetCurrent(ctypes.byref(prev))
        if rc or prev.value == self.context:  # (a failed query: the driver is going; the call says so)
            return rc or fn(*args)
        rc = lib.cuCtxSetCurrent(self.context)
        if rc:  # returned, not raised: the frees in finalizers ignore it, ``call`` reports it
            return rc
        if not prev.value and self.default_context:  # stays: what the runtime would make current
            return fn(*args)
        try:
            return fn(*args)
        finally:
            lib.cuCtxSetCurrent(prev)

    def call(self, what: str, *args: Any) -> None:
        """``lib.<what>(*args)`` in this device's context (``in_context``: allocations, modules,
        streams and copies on the legacy default stream belong to the context current at the
        call), checked (an error names ``what``, also where the context switch before it failed)."""
        self._check(self.in_context(getattr(self.lib, what), *args), what)

    # ------------------------------------------------------------ device
    def _primary(self) -> int | None:
        """The handle of this device's primary context (retained once more, never released: it lives
        as long as the process)."""
        c = ctypes.c_void_p()
        return c.value if self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(c), self.device) == 0 else None

    def _ordinal(self) -> int:
        for i in range(device_count()):
            d = ctypes.c_int()
            if self.lib.cuDeviceGet(ctypes.byref(d), i) == 0 and d.value == self.device:
                return i
        return 0

    def attribute(self, name: str) -> int:
        v = ctypes.c_int()
        self.call("cuDeviceGetAttribute", ctypes.byref(v), DEVICE_ATTRIBUTES[name], self.device)
        return v.value

    def name(self) -> str:
        buf = ctypes.create_string_buffer(256)
        self.call("cuDeviceGetName", buf, 256, self.device)
        return buf.value.decode()

    def compute_capability(self) -> tuple[int, int]:
        return self.attribute("COMPUTE_CAPABILITY_MAJOR"), self.attribute("COMPUTE_CAPABILITY_MINOR")

    def synchronize(self) -> None:
        self.call("cuCtxSynchronize")

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of the device's memory (``cuMemGetInfo``)."""
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self.call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def tensor_map(
        self, pointer: int, data_type: int, shape: tuple[int, ...], itemsize: int, box: tuple[int, ...], swizzle: int
    ) -> bytes:
        """The 128 bytes of a TMA descriptor (``CUtensorMap``, by ``cuTensorMapEncodeTiled``) of the
        C-contiguous array at ``pointer`` and copies of ``box`` elements (both in C order), with the
        swizzle enum ``swizzle``; interleave none, L2 promotion 128 bytes, elements outside read as zeros."""
        if not hasattr(self.lib, "cuTensorMapEncodeTiled"):
            raise BackendError(
                "TMA copies need cuTensorMapEncodeTiled, of CUDA drivers 12.0 and later; update the driver"
            )
        rank = len(shape)
        dims = (ctypes.c_uint64 * rank)(*reversed(shape))  # innermost first
        strides, step = [], itemsize
        for n in reversed(shape[1:]):
            step *= n
            strides.append(step)
        out = (ctypes.c_uint64 * 16)()  # 128 bytes; ctypes keeps it 8-aligned, the driver wants 64: copied after
        buf = ctypes.create_string_buffer(128 + 64)
        at = ctypes.addressof(buf) + (-ctypes.addressof(buf) % 64)
        self.call(
            "cuTensorMapEncodeTiled",
            ctypes.c_void_p(at),
            data_type,
            rank,
            pointer,
            dims,
            (ctypes.c_uint64 * max(rank - 1, 1))(*strides),
            (ctypes.c_uint32 * rank)(*reversed(box)),
            (ctypes.c_uint32 * rank)(*([1] * rank)),
            0,  # CU_TENSOR_MAP_INTERLEAVE_NONE
            swizzle,
            2,  # CU_TENSOR_MAP_L2_PROMOTION_L2_128B
            0,  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros
        )
        ctypes.memmove(out, at, 128)
        return bytes(out)

    # ------------------------------------------------------------ memory
    def alloc(self, nbytes: int) -> Allocation:
        p = ctypes.c_uint64()
        self.call("cuMemAlloc_v2", ctypes.byref(p), max(int(nbytes), 1))
        return Allocation(self, p.value)

    def memset(self, pointer: int, byte: int, nbytes: int) -> None:
        if nbytes:
            self.call("cuMemsetD8_v2", pointer, byte, nbytes)

    def htod(self, pointer: int, host: np.ndarray, stream: int | None = None, wait: bool = True) -> None:
        """Copy C-contiguous ``host`` to device memory at ``pointer``, on ``stream`` (None: the
        legacy default stream); with ``wait`` the host waits for the copy."""
        if not host.nbytes:
            return
        self.call("cuMemcpyHtoDAsync_v2", pointer, host.ctypes.data, host.nbytes, stream)
        if wait:
            self.stream_synchronize(stream)

    def dtoh(self, host: np.ndarray, pointer: int, stream: int | None = None, wait: bool = True) -> None:
        if not host.nbytes:
            return
        self.call("cuMemcpyDtoHAsync_v2", host.ctypes.data, pointer, host.nbytes, stream)
        if wait:
            self.stream_synchronize(stream)

    def dtod(self, dst: int, src: int, nbytes: int, stream: int | None = None) -> None:
        if nbytes:
            self.call("cuMemcpyDtoDAsync_v2", dst, src, nbytes, stream)

    def pointer_device(self, pointer: int) -> int | None:
        """The ordinal of the device whose memory ``pointer`` is in (None: the driver cannot say,
        as for a pointer of no CUDA allocation)."""
        v = ctypes.c_int()
        if self.lib.cuPointerGetAttribute(ctypes.byref(v), _POINTER_DEVICE_ORDINAL, pointer):
            return None
        return v.value

    def pinned_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A NumPy array in page-locked host memory, freed when the array (and its views) go."""
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        p = ctypes.c_void_p()
        self.call("cuMemHostAlloc", ctypes.byref(p), max(nbytes, 1), 0)
        holder = _pinned_buffer(self, p.value, max(nbytes, 1))
        return np.frombuffer(holder, dtype=dtype, count=int(np.prod(shape, dtype=np.int64))).reshape(shape)

    # ------------------------------------------------------------ streams and events
    def new_stream(self, non_blocking: bool = False) -> Stream:
        s = ctypes.c_void_p()
        self.call("cuStreamCreate", ctypes.byref(s), 1 if non_blocking else 0)
        return Stream(self, s.value or 0)

    def stream_synchronize(self, stream: int | None) -> None:
        self.call("cuStreamSynchronize", stream)

    def stream_wait(self, stream: int | None, event: Event) -> None:
        self.call("cuStreamWaitEvent", stream, event.handle, 0)

    def record(self, stream: int | None) -> Event:
        e = ctypes.c_void_p()
        self.call("cuEventCreate", ctypes.byref(e), 0)
        ev = Event(self, e.value)
        self.call("cuEventRecord", ev.handle, stream)
        return ev

    def event_synchronize(self, event: Event) -> None:
        self._check(self.lib.cuEventSynchronize(event.handle), "cuEventSynchronize")  # needs no context

    def event_done(self, event: Event) -> bool:
        rc = self.lib.cuEventQuery(event.handle)  # (an event needs no context current: polled, kept cheap)
        if rc == _NOT_READY:
            return False
        self._check(rc, "cuEventQuery")
        return True

    def elapsed_ms(self, start: Event, end: Event) -> float:
        ms = ctypes.c_float()
        fn = "cuEventElapsedTime_v2" if hasattr(self.lib, "cuEventElapsedTime_v2") else "cuEventElapsedTime"
        self.call(fn, ctypes.byref(ms), ctypes.c_void_p(start.handle), ctypes.c_void_p(end.handle))
        return ms.value

    # ------------------------------------------------------------ code
    def load(self, image: bytes) -> Module:
        """A module from a cubin (or PTX) image; raises BackendError where the driver rejects it."""
        m = ctypes.c_void_p()
        self.call("cuModuleLoadData", ctypes.byref(m), image)
        return Module(self, m.value)

    def launcher(
        self,
        function: Function,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared: int,
        layout: Any,
        cooperative: bool = False,
    ) -> Launcher:
        """``launch(values, stream)`` of ``function`` (``Launcher``); ``cooperative``: every block
        resident at once, as a grid-wide barrier needs (``cuLaunchKernelEx``'s attribute)."""
        return Launcher(self, function, grid, block, shared, layout, cooperative)


def native_launch() -> tuple[Callable[..., None], type[Exception]] | None:
    """CuPy's own binding of ``cuLaunchKernel`` (a C call, where ctypes' conversion of a launch's
    arguments costs about 0.7 us more: ``benchmarks/results/2026-11-24-h100-native-launch``) and the
    error it raises, where the program has imported CuPy, built for CUDA (not HIP); None elsewhere,
    or with ``GPUKERN_CUDA_LAUNCH=ctypes``.  Importing CuPy only for this would cost a program that
    never uses it a quarter of a second before its first result (``benchmarks/first_result.py``).
    It launches in the context current on the thread, as ctypes does, with the same argument buffer."""
    if os.environ.get("GPUKERN_CUDA_LAUNCH", "").lower() == "ctypes" or "cupy" not in sys.modules:
        return None
    return _cupy_launch()


@functools.cache
def _cupy_launch() -> tuple[Callable[..., None], type[Exception]] | None:
    try:
        from cupy_backends.cuda.api import driver as cupy_driver
        from cupy_backends.cuda.api import runtime as cupy_runtime
    except Exception:  # noqa: BLE001  (absent or broken: ctypes serves)
        return None
    if getattr(cupy_runtime, "is_hip", True) or not hasattr(cupy_driver, "launchKernel"):
        return None
    return cupy_driver.launchKernel, cupy_driver.CUDADriverError


class Launcher:
    """``launch(values, stream)``: ``values`` packed by ``layout`` (a ``struct.Struct``) into one
    argument buffer, then one launch of ``function`` on ``grid`` x ``block`` with ``shared`` dynamic
    bytes on the stream handle (None: the legacy default stream), its status checked; and ``write``,
    the same as lines of a plan's fast path (``gpukern.runtime.fast_path``), so that a planned launch makes
    no call of its own between the plan's tests and the driver.

    The driver call is CuPy's C binding where there is one (``native_launch``), else ctypes': there
    ``cuLaunchKernelEx`` (driver 12.0+) takes 4 arguments, each a ctypes object made here (a
    configuration per stream handle), against 11 for ``cuLaunchKernel`` (on the H100: 5.9 against
    7.4 us per launch).  A launch that fails in the context current on the thread (none, another
    device's, another library's) is made once more in the driver's own (``Driver.in_context``);
    which is rare (``Driver.in_context`` leaves device 0's context current on a thread that had
    none), except on another device, whose launches therefore switch contexts first, failing none."""

    def __init__(
        self,
        driver: Driver,
        function: Function,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared: int,
        layout: Any,
        cooperative: bool = False,
    ) -> None:
        self.driver, self.name = driver, function.name
        self.function = function  # (kept: its module stays loaded while the launcher lives)
        self.buf = ctypes.create_string_buffer(max(layout.size, 1))
        self.nbytes = ctypes.c_size_t(layout.size)
        self.extra = (ctypes.c_void_p * 5)(
            _PARAM_BUFFER_POINTER,
            ctypes.addressof(self.buf),
            _PARAM_BUFFER_SIZE,
            ctypes.addressof(self.nbytes),
            _PARAM_END,
        )
        self.pack_into = layout.pack_into
        self.lock = threading.Lock()  # one buffer: threads launching through it take turns
        self.handle = ctypes.c_void_p(function.handle)
        self.dims = (*grid, *block, shared)
        self.configs: dict[Any, Any] = {}  # stream handle -> its ctypes launch's fixed arguments
        self.ex = driver.launch_ex is not None  # cuLaunchKernelEx (driver 12.0+), else cuLaunchKernel
        self.call = driver.launch_ex if self.ex else driver.lib.cuLaunchKernel
        self.attrs = None  # a cooperative launch's attribute (ctypes: CuPy's binding takes none)
        if cooperative:
            if not self.ex:
                raise BackendError(
                    f"{self.name} calls grid_sync(), which needs a cooperative launch: cuLaunchKernelEx, of CUDA "
                    "drivers 12.0 and later; update the driver"
                )
            self.attrs = _LaunchAttribute(_LAUNCH_ATTRIBUTE_COOPERATIVE)
            self.attrs.value[0] = 1
        native = None if cooperative or not driver.default_context else native_launch()
        if native is None:
            self.native, self.failed = None, None
        else:  # the arguments before the stream, bound once; after it: no kernelParams, the buffer
            self.native = functools.partial(native[0], function.handle, *self.dims)
            self.failed = native[1]
        self.xp = ctypes.addressof(self.extra)
        # ``go(stream)``, the driver call (the buffer packed, the lock held): which one, decided once
        self.go = self._go_ctypes if self.native is None else self._go_native
        if not driver.default_context:  # another device: its context made current first (no failed call)
            self.go = self.retry

    def _ctypes_args(self, stream: Any) -> tuple[Any, ...]:
        made = self.configs.get(stream)
        if made is None:
            if len(self.configs) > 64:  # handles of streams made and dropped elsewhere
                self.configs.clear()
            if self.ex:  # (byref keeps the configuration alive)
                attrs = (ctypes.addressof(self.attrs), 1) if self.attrs is not None else (None, 0)
                made = (ctypes.byref(_LaunchConfig(*self.dims, stream, *attrs)), self.handle, None, self.extra)
            else:
                dims = (ctypes.c_uint(v) for v in self.dims)
                made = (self.handle, *dims, ctypes.c_void_p(stream), None, self.extra)
            self.configs[stream] = made
        return made

    def retry(self, stream: Any) -> None:
        """After a launch that failed (the buffer still packed, the lock held): once more in the
        driver's context, through ctypes; a BackendError where that fails too."""
        rc = self.driver.in_context(self.call, *self._ctypes_args(stream))
        if rc == _COOPERATIVE_LAUNCH_TOO_LARGE:
            grid = self.dims[:3]
            raise LaunchError(
                f"{self.name} calls grid_sync(), so all of its {grid[0] * grid[1] * grid[2]} blocks must be resident "
                "on the device at once, and they do not fit (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE): launch fewer "
                "blocks (a grid-stride loop covers the data) or smaller ones"
            )
        if rc:
            raise BackendError(f"launch of {self.name} failed: {error_name(self.driver.lib, rc)}")

    def _go_ctypes(self, stream: Any) -> None:
        if self.call(*(self.configs.get(stream) or self._ctypes_args(stream))):
            self.retry(stream)

    def _go_native(self, stream: Any) -> None:
        try:
            self.native(stream or 0, 0, self.xp)  # type: ignore[misc]
        except self.failed:  # type: ignore[misc]
            self.retry(stream)

    def __call__(self, values: Any, stream: Any) -> None:
        with self.lock:  # from packing until the driver has copied the arguments (the calls drop the GIL)
            self.pack_into(self.buf, 0, *values)
            self.go(stream)

    def write(self, src: Any, values: list[str], stream: str) -> None:
        """The launch as lines of a fast path (``fast_path.Source``): ``values`` the C arguments'
        expressions, ``stream`` the stream's.  With CuPy's binding the call is made in the lines
        themselves; else through ``go``."""
        lock, pack, buf = src.const(self.lock, "lock"), src.const(self.pack_into, "pack"), src.const(self.buf, "buf")
        src.line(f"on = {stream}")
        src.line(f"with {lock}:")
        src.line(f"{pack}({buf}, 0, {', '.join(values)})", 2)
        if self.native is None:
            src.line(f"{src.const(self.go, 'go')}(on)", 2)
            return
        src.line("try:", 2)
        src.line(f"{src.const(self.native, 'native')}(on or 0, 0, {src.const(self.xp, 'xp')})", 3)
        src.line(f"except {src.const(self.failed, 'failed')}:", 2)
        src.line(f"{src.const(self.retry, 'retry')}(on)", 3)


_LAUNCH_ATTRIBUTE_COOPERATIVE = 2  # CU_LAUNCH_ATTRIBUTE_COOPERATIVE
_COOPERATIVE_LAUNCH_TOO_LARGE = 720  # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE


class _LaunchAttribute(ctypes.Structure):
    """CUDA's ``CUlaunchAttribute``: an id, then the 64-byte union of values (8-byte aligned)."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_int), ("value", ctypes.c_int * 16)]

    def __init__(self, attribute: int) -> None:
        super().__init__(attribute, 0)


class _LaunchConfig(ctypes.Structure):
    """CUDA's ``CUlaunchConfig``: the grid, block, dynamic shared bytes and stream of a
    ``cuLaunchKernelEx``, and its launch attributes (a cooperative launch has one)."""

    _fields_ = [
        *((n, ctypes.c_uint) for n in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared")),
        ("stream", ctypes.c_void_p),
        ("attrs", ctypes.c_void_p),
        ("num_attrs", ctypes.c_uint),
    ]


def _pinned_buffer(driver: Driver, pointer: int, nbytes: int) -> Any:
    """A ctypes byte array over page-locked memory that frees it when collected."""

    class Pinned(ctypes.c_char * nbytes):  # type: ignore[misc, valid-type]
        def __del__(self) -> None:
            if not sys.is_finalizing():
                driver.in_context(driver.lib.cuMemFreeHost, ctypes.c_void_p(pointer))

    return Pinned.from_address(pointer)


class Allocation:
    """Device memory, freed when the last reference goes (``int(a)`` is its address)."""

    __slots__ = ("driver", "pointer", "__weakref__")

    def __init__(self, driver: Driver, pointer: int):
        self.driver, self.pointer = driver, pointer

    def __int__(self) -> int:
        return self.pointer

    __index__ = __int__

    def __del__(self) -> None:
        if not sys.is_finalizing():
            self.driver.in_context(self.driver.lib.cuMemFree_v2, self.pointer)


class Stream:
    """A stream this module created (destroyed when collected); ``handle`` is the CUstream."""

    __slots__ = ("driver", "handle")

    def __init__(self, driver: Driver, handle: int):
        self.driver, self.handle = driver, handle

    def __del__(self) -> None:
        if not sys.is_finalizing() and self.handle:
            self.driver.in_context(self.driver.lib.cuStreamDestroy_v2, self.handle)


class Event:
    """A recorded event (destroyed when collected)."""

    __slots__ = ("driver", "handle")

    def __init__(self, driver: Driver, handle: int):
        self.driver, self.handle = driver, handle

    def __del__(self) -> None:
        if not sys.is_finalizing() and self.handle:
            self.driver.in_context(self.driver.lib.cuEventDestroy_v2, self.handle)


class Module:
    """A loaded module (unloaded when collected, after its functions)."""

    __slots__ = ("driver", "handle")

    def __init__(self, driver: Driver, handle: int):
        self.driver, self.handle = driver, handle

    def function(self, name: str) -> Function:
        f = ctypes.c_void_p()
        self.driver.call("cuModuleGetFunction", ctypes.byref(f), self.handle, name.encode())
        return Function(self, f.value, name)

    def __del__(self) -> None:
        if not sys.is_finalizing() and self.handle:
            self.driver.in_context(self.driver.lib.cuModuleUnload, self.handle)


class Function:
    """A kernel of a module; keeps its module loaded."""

    __slots__ = ("module", "handle", "name", "__dict__")

    def __init__(self, module: Module, handle: int, name: str):
        self.module, self.handle, self.name = module, handle, name

    def param_offsets(self, count: int) -> list[int]:
        """Where each of the kernel's first ``count`` parameters starts in its parameter buffer, as the
        compiler laid them out (``cuFuncGetParamInfo``, driver 12.4+): a parameter aligned more than
        8 bytes (a TMA descriptor's 64) is aligned in the constant bank, not from the buffer's start."""
        lib = self.module.driver.lib
        if not hasattr(lib, "cuFuncGetParamInfo"):
            raise BackendError(
                f"{self.name} takes a TMA descriptor, whose place among its parameters needs cuFuncGetParamInfo, "
                "of CUDA drivers 12.4 and later; update the driver"
            )
        out = []
        for i in range(count):
            offset, size = ctypes.c_size_t(), ctypes.c_size_t()
            rc = lib.cuFuncGetParamInfo(ctypes.c_void_p(self.handle), i, ctypes.byref(offset), ctypes.byref(size))
            if rc:
                raise BackendError(f"cuFuncGetParamInfo of {self.name}, parameter {i}: {error_name(lib, rc)}")
            out.append(offset.value)
        return out

    def prepare(self, fmt: str) -> None:
        """Fix the argument layout (struct codes, "P" for a pointer: an int) for
        ``prepared_async_call``: hand-written reference kernels in benchmarks are launched so."""
        self.__dict__["_struct"] = struct.Struct("=" + fmt.replace("P", "Q"))

    def prepared_async_call(
        self, grid: tuple[int, ...], block: tuple[int, ...], stream: Any, *args: Any, shared: int = 0
    ) -> None:
        launchers = self.__dict__.setdefault("_launchers", {})
        key = (tuple(grid), tuple(block), shared)
        launch = launchers.get(key)
        if launch is None:  # one launcher per configuration, as a plan keeps one
            dims = [k + (1,) * (3 - len(k)) for k in key[:2]]
            layout = self.__dict__["_struct"]
            launch = launchers[key] = self.module.driver.launcher(self, dims[0], dims[1], shared, layout)
        launch(args, stream)

    def allow_non_portable_clusters(self) -> None:
        """Allow clusters of more than 8 blocks (16 on sm_90), which CUDA calls non-portable."""
        self.module.driver.call("cuFuncSetAttribute", self.handle, ATTR_NON_PORTABLE_CLUSTER, 1)

    def resident(self, block: tuple[int, int, int], shared: int, cluster: tuple[int, int, int] | None) -> int:
        """How many blocks of ``block`` threads and ``shared`` dynamic bytes the device runs at once
        (CUDA's occupancy calculator): blocks a multiprocessor times its multiprocessors, or for a
        kernel of clusters of shape ``cluster``, the clusters it places at once (a cluster's blocks
        share a GPC, so this is not the blocks a multiprocessor divided) times a cluster's blocks."""
        driver, n = self.module.driver, ctypes.c_int()
        handle = ctypes.c_void_p(self.handle)
        if cluster is not None:  # (the grid of one cluster: the kernel's compiled cluster shape rules)
            config = _LaunchConfig(*cluster, *block, shared, None, None, 0)
            driver.call("cuOccupancyMaxActiveClusters", ctypes.byref(n), handle, ctypes.byref(config))
            return n.value * cluster[0] * cluster[1] * cluster[2]
        threads = block[0] * block[1] * block[2]
        driver.call(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor", ctypes.byref(n), handle, threads, ctypes.c_size_t(shared)
        )
        return n.value * driver.attribute("MULTIPROCESSOR_COUNT")

    def set_max_dynamic_shared(self, nbytes: int) -> None:
        """Allow launches with ``nbytes`` of dynamic shared memory (needed beyond 48 KiB)."""
        self.module.driver.call("cuFuncSetAttribute", self.handle, ATTR_MAX_DYNAMIC_SHARED, nbytes)
