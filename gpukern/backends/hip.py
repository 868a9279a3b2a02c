"""The HIP backend: kernels on AMD GPUs through ``libamdhip64`` (ROCm's HIP runtime) by ctypes.

**Compile-checked, not yet run on hardware**: no AMD GPU is lent to this project.  Where ROCm
and an AMD GPU are present, ``gk.set_backend("hip")`` compiles each kernel's HIP C++ with hipcc
into one code object for the targets of ``GPUKERN_HIP_ARCHS`` (default: gfx908, gfx90a, gfx1030;
HIP's loader picks the device's) and launches it with ``hipModuleLaunchKernel``, its arguments
packed as the CUDA backend packs them (the same C parameters).  Elsewhere the backend is absent
from ``gk.available_backends()`` and choosing it says why.  Not there yet: launch plans (every
launch takes the checked path), other libraries' arrays and streams, DLPack, cooperative launches.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.dialects import HIP
from ..codegen.names import global_identifier
from ..errors import BackendError, InteropError, LaunchError
from ..runtime.array import DeviceArray
from ..runtime.cache import binary_cache, make_key
from . import hip_compile
from .base import Backend
from .cuda import _CODES, _COMPLEX, _arg_format, _Spread

# what every hipcc since ROCm 5 compiles for; MI300 (gfx942) and RDNA 3 (gfx1100) by GPUKERN_HIP_ARCHS
ARCHS = ("gfx908", "gfx90a", "gfx1030")
_HtoD, _DtoH, _DtoD = 1, 2, 3  # hipMemcpyKind
_NOT_READY = 600  # hipErrorNotReady
# hipDeviceAttribute_t (ROCm 5 and 6): the limits a launch is checked against
_ATTRIBUTES = {
    "max_threads": 56,
    "max_block": (26, 27, 28),
    "max_grid": (29, 30, 31),
    "max_shared": 74,
    "warp_size": 87,
}
_lib: ctypes.CDLL | None = None
_lock = threading.Lock()


def library() -> ctypes.CDLL:
    """``libamdhip64`` with at least one device, or a ``BackendError`` saying what is missing."""
    global _lib
    with _lock:
        if _lib is None:
            lib = None
            for name in ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"):
                try:
                    lib = ctypes.CDLL(name)
                    break
                except OSError:
                    continue
            if lib is None:
                raise BackendError("the HIP runtime (libamdhip64, ROCm) is not installed")
            lib.hipGetErrorName.restype = ctypes.c_char_p
            count = ctypes.c_int()
            rc = lib.hipGetDeviceCount(ctypes.byref(count))
            if rc or count.value < 1:
                why = lib.hipGetErrorName(rc).decode() if rc else "no devices"
                raise BackendError(f"the HIP runtime finds no AMD GPU ({why})")
            _declare(lib)
            _lib = lib
    return _lib


def _declare(lib: ctypes.CDLL) -> None:
    vp, u, sz = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
    lib.hipModuleLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
    lib.hipMalloc.argtypes = [ctypes.POINTER(vp), sz]
    lib.hipFree.argtypes = [vp]
    lib.hipMemcpy.argtypes = [vp, vp, sz, ctypes.c_int]
    lib.hipMemcpyAsync.argtypes = [vp, vp, sz, ctypes.c_int, vp]
    lib.hipModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
    lib.hipModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    lib.hipStreamSynchronize.argtypes = [vp]
    lib.hipStreamWaitEvent.argtypes = [vp, vp, u]
    lib.hipStreamDestroy.argtypes = [vp]
    lib.hipEventRecord.argtypes = [vp, vp]
    lib.hipEventSynchronize.argtypes = [vp]
    lib.hipEventQuery.argtypes = [vp]
    lib.hipEventDestroy.argtypes = [vp]
    lib.hipEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), vp, vp]


def _check(lib: ctypes.CDLL, rc: int, call: str) -> None:
    if rc:
        raise BackendError(f"{call} failed: {lib.hipGetErrorName(rc).decode()}")


class _Memory:
    """A device allocation, freed when the last array using it goes."""

    def __init__(self, lib: ctypes.CDLL, nbytes: int) -> None:
        self.lib, p = lib, ctypes.c_void_p()
        _check(lib, lib.hipMalloc(ctypes.byref(p), max(nbytes, 1)), "hipMalloc")
        self.pointer = int(p.value or 0)

    def __int__(self) -> int:  # packed as the kernel's pointer argument
        return self.pointer

    def __del__(self) -> None:
        if self.pointer:
            self.lib.hipFree(ctypes.c_void_p(self.pointer))


class HIPBackend(Backend):
    """Kernels as HIP C++ on an AMD GPU (see the module docstring: not yet run on hardware)."""

    name = "hip"
    dialect = HIP

    def __init__(self, index: int | None = None) -> None:
        self.lib = library()
        self.index = self.default_index() if index is None else index
        _check(self.lib, self.lib.hipSetDevice(self.index), "hipSetDevice")
        value = ctypes.c_int()

        def attribute(code: int) -> int:
            rc = self.lib.hipDeviceGetAttribute(ctypes.byref(value), code, self.index)
            _check(self.lib, rc, "hipDeviceGetAttribute")
            return value.value

        self.max_group = attribute(_ATTRIBUTES["max_threads"])
        self.max_items = tuple(attribute(c) for c in _ATTRIBUTES["max_block"])
        self.max_grid = tuple(attribute(c) for c in _ATTRIBUTES["max_grid"])
        self.max_shared = attribute(_ATTRIBUTES["max_shared"])
        self.max_shared_optin = 0
        self.warp_size = attribute(_ATTRIBUTES["warp_size"])
        archs = os.environ.get("GPUKERN_HIP_ARCHS")
        self.archs = tuple(archs.split(",")) if archs else ARCHS

    @staticmethod
    def device_names() -> list[str]:
        lib = library()
        count, buf = ctypes.c_int(), ctypes.create_string_buffer(256)
        _check(lib, lib.hipGetDeviceCount(ctypes.byref(count)), "hipGetDeviceCount")
        names = []
        for i in range(count.value):
            _check(lib, lib.hipDeviceGetName(buf, 256, i), "hipDeviceGetName")
            names.append(buf.value.decode())
        return names

    def device_name(self) -> str:
        return f"{self.device_names()[self.index]} (HIP)"

    # ------------------------------------------------------------ compile and launch
    def compiled(self, variant: Any) -> Any:
        fn = variant.compiled.get(self.key)
        if fn is not None:
            return fn
        if variant.grid_sync:
            raise LaunchError(f"{variant.kernel.__name__}: grid_sync() needs a cooperative launch, which the HIP "
                              "backend does not make yet; run it on CUDA, OpenCL or the simulator")  # fmt: skip
        src = variant.source(self.name, line_directives=True)
        key = make_key(source=src, backend="hip", arch=",".join(self.archs), compiler=hip_compile.fingerprint())
        image = binary_cache().get_or_compile(key, lambda: hip_compile.code_object(src, self.archs))
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        _check(self.lib, self.lib.hipModuleLoadData(ctypes.byref(module), image), "hipModuleLoadData")
        name = global_identifier(variant.program.kernel.name).encode()
        _check(self.lib, self.lib.hipModuleGetFunction(ctypes.byref(function), module, name), "hipModuleGetFunction")
        params = variant.kernel_params
        codes = ["P" if p.kind == "array" else "q" if p.kind == "shape" else _CODES[p.type.name] for p in params]
        if variant.dynamic_shared:
            codes.append("q")
        split = tuple(i for i, c in enumerate(codes) if c in _COMPLEX)
        fn = _Function(self.lib, module.value, function.value, struct.Struct(_arg_format(codes)), split)
        variant.compiled[self.key] = fn
        return fn

    def make_launcher(
        self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any], Any], None]:
        fn = self.compiled(variant)

        def run(values: list[Any], stream: Any) -> None:
            fn.launch(grid, block, shared, values, stream)

        if fn.split or variant.dynamic_shared:
            return _Spread(run, fn.split, shared if variant.dynamic_shared else None)
        return run

    def launch(
        self,
        variant: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        shared: int | None = None,
        stream: Any = None,
    ) -> None:
        self.check_limits(variant, grid, block, shared)
        run = self.launcher(variant, grid, block, shared or 0)
        cargs, copy_back = self.pack_args(variant, args, stream)
        run(cargs, stream)
        for host, memory in copy_back:
            self._copy(host.ctypes.data, memory.pointer, host.nbytes, _DtoH, stream, True)

    def device_pointer(
        self, a: Any, name: str, copy_back: list[tuple[np.ndarray, Any]] | None, stream: Any = None
    ) -> Any:
        if isinstance(a, DeviceArray):
            return self._own(a, name)
        if not isinstance(a, np.ndarray):
            raise LaunchError(f"argument {name!r}: the HIP backend takes NumPy arrays and its own device arrays")
        memory = _Memory(self.lib, a.nbytes)
        host = np.ascontiguousarray(a)
        self._copy(memory.pointer, host.ctypes.data, host.nbytes, _HtoD, stream, True)
        if copy_back is not None and a.nbytes:
            copy_back.append((a, memory))
        return memory  # the launch's arguments keep it alive until the launch is queued (hipFree waits for it)

    # ------------------------------------------------------------ memory
    def _copy(self, dst: int, src: int, nbytes: int, kind: int, stream: Any, wait: bool) -> None:
        if not nbytes:
            return
        if stream is None and wait:
            _check(self.lib, self.lib.hipMemcpy(dst, src, nbytes, kind), "hipMemcpy")
            return
        _check(self.lib, self.lib.hipMemcpyAsync(dst, src, nbytes, kind, stream), "hipMemcpyAsync")
        if wait:
            self.stream_synchronize(stream)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        memory = _Memory(self.lib, int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
        return DeviceArray(self, memory.pointer, shape, dtype, owner=memory)

    def to_device(self, array: np.ndarray) -> DeviceArray:
        out = self.empty(array.shape, array.dtype)
        host = np.ascontiguousarray(array)
        self._copy(out.handle, host.ctypes.data, host.nbytes, _HtoD, None, True)
        return out

    def download(self, array: DeviceArray) -> np.ndarray:
        out = np.empty(array.shape, array.dtype)
        self._copy(out.ctypes.data, array.handle, out.nbytes, _DtoH, None, True)
        return out

    def address(self, root: DeviceArray, offset: int, shape: tuple[int, ...]) -> int:
        return int(root.handle) + offset

    def copy_to_device(self, dst: DeviceArray, src: np.ndarray, stream: Any, wait: bool) -> None:
        self._copy(dst.handle, src.ctypes.data, src.nbytes, _HtoD, stream, wait)

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        self._copy(dst.ctypes.data, src.handle, dst.nbytes, _DtoH, stream, wait)

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        self._copy(dst.handle, src.handle, dst.nbytes, _DtoD, stream, False)

    def synchronize(self) -> None:
        _check(self.lib, self.lib.hipDeviceSynchronize(), "hipDeviceSynchronize")

    # ------------------------------------------------------------ streams and events
    def new_stream(self) -> Any:
        s = ctypes.c_void_p()
        _check(self.lib, self.lib.hipStreamCreate(ctypes.byref(s)), "hipStreamCreate")
        return s.value

    def foreign_stream(self, stream: Any, handles: bool = False) -> Any:
        raise LaunchError("the HIP backend takes its own streams only (gk.Stream)")

    def stream_synchronize(self, stream: Any) -> None:
        _check(self.lib, self.lib.hipStreamSynchronize(stream), "hipStreamSynchronize")

    def stream_wait(self, stream: Any, event: Any) -> None:
        _check(self.lib, self.lib.hipStreamWaitEvent(stream, event, 0), "hipStreamWaitEvent")

    def record(self, stream: Any) -> Any:
        e = ctypes.c_void_p()
        _check(self.lib, self.lib.hipEventCreate(ctypes.byref(e)), "hipEventCreate")
        _check(self.lib, self.lib.hipEventRecord(e, stream), "hipEventRecord")
        return e.value

    def event_synchronize(self, event: Any) -> None:
        _check(self.lib, self.lib.hipEventSynchronize(event), "hipEventSynchronize")

    def event_done(self, event: Any) -> bool:
        rc = self.lib.hipEventQuery(event)
        if rc == _NOT_READY:
            return False
        _check(self.lib, rc, "hipEventQuery")
        return True

    def elapsed(self, start: Any, end: Any) -> float:
        ms = ctypes.c_float()
        self.event_synchronize(end)
        _check(self.lib, self.lib.hipEventElapsedTime(ctypes.byref(ms), start, end), "hipEventElapsedTime")
        return ms.value / 1e3

    def dlpack_export(self, array: DeviceArray, stream: Any, max_version: Any) -> Any:
        raise InteropError("the HIP backend does not export DLPack capsules yet")

    def dlpack_import(self, x: Any) -> DeviceArray:
        raise InteropError("the HIP backend does not take DLPack capsules yet")


class _Function:
    """A loaded kernel: its C parameters packed by ``layout`` into one buffer, handed to
    ``hipModuleLaunchKernel`` through ``extra`` (HIP_LAUNCH_PARAM_BUFFER_POINTER / SIZE / END)."""

    def __init__(
        self, lib: ctypes.CDLL, module: int, function: int, layout: struct.Struct, split: tuple[int, ...]
    ) -> None:
        self.lib, self.module, self.function, self.layout, self.split = lib, module, function, layout, split
        self.buffer = ctypes.create_string_buffer(max(layout.size, 8))
        self.size = ctypes.c_size_t(layout.size)
        self.extra = (ctypes.c_void_p * 5)(
            1, ctypes.addressof(self.buffer), 2, ctypes.addressof(self.size), 3
        )  # BUFFER_POINTER, the buffer, BUFFER_SIZE, its size, END
        self.lock = threading.Lock()

    def launch(
        self, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int, values: list[Any], stream: Any
    ) -> None:
        with self.lock:
            self.layout.pack_into(self.buffer, 0, *(v.pointer if isinstance(v, _Memory) else v for v in values))
            rc = self.lib.hipModuleLaunchKernel(
                self.function, *grid, *block, shared, stream, None, ctypes.addressof(self.extra)
            )
        _check(self.lib, rc, "hipModuleLaunchKernel")
