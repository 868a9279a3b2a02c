"""CUDA C: the dialect table, compiling with nvcc, and running kernels through PyCUDA.

Generated CUDA C is compiled by nvcc to a cubin for the device's own architecture
(cached, see ``gpukern.cache``), loaded from that binary, and launched through a
plan made once per variant: PyCUDA's prepared calls, so the argument layout is
decided once and not per launch.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dlpack
from ..array import DeviceArray
from ..cache import binary_cache, make_key
from ..codegen.dialects import CUDA
from ..codegen.emitter import c_identifier
from ..errors import BackendError, InteropError, LaunchError
from .base import Backend


def find_nvcc() -> str | None:
    """Path of nvcc: ``$CUDA_HOME/bin/nvcc`` or the one on PATH."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc")


def nvcc_compile(source: str, arch: str = "sm_90", options: tuple[str, ...] = ()) -> bytes:
    """Compile CUDA C to a cubin for ``arch``; raises BackendError with nvcc's output."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise BackendError("nvcc was not found; install the CUDA toolkit or set CUDA_HOME")
    with tempfile.TemporaryDirectory(prefix="gpukern-") as tmp:
        src = os.path.join(tmp, "kernel.cu")
        out = os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", *options, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BackendError(f"nvcc failed ({' '.join(cmd)}):\n{proc.stderr}{proc.stdout}\n--- source ---\n{source}")
        with open(out, "rb") as f:
            return f.read()


@functools.cache
def nvcc_version() -> str:
    """nvcc's version banner (part of every cache key)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return "none"
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip()


@functools.cache
def nvcc_fingerprint() -> str:
    """What identifies the installed nvcc in cache keys: its resolved path, size and modification
    time.  Installing another CUDA toolkit changes it; reading it costs a stat, where asking
    ``nvcc --version`` costs a process (about 40 ms, most of a warm start)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return "none"
    real = os.path.realpath(nvcc)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def _cubin_key(source: str, arch: str, options: tuple[str, ...]) -> str:
    return make_key(source=source, backend="cuda", arch=arch, nvcc=nvcc_fingerprint(), options=tuple(options))


def cubin(source: str, arch: str, options: tuple[str, ...] = (), what: str = "") -> bytes:
    """The cubin of ``source`` for ``arch``, from the binary cache or compiled now."""
    key = _cubin_key(source, arch, options)
    return binary_cache().get_or_compile(key, lambda: nvcc_compile(source, arch, options), what)


# struct-module codes of PyCUDA's prepared calls, per C parameter type
_PREPARE = {"int32": "i", "uint32": "I", "int64": "q", "float32": "f", "float64": "d", "bool": "B"}
_PREPARE |= {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "uint64": "Q", "float16": "f"}  # half: as float
_PREPARE.update(complex64="F", complex128="D")  # PyCUDA packs a Python complex as two floats or doubles
# (size, alignment) of a code's C parameter where it is not the code's size twice: a float2 is
# 8-byte aligned, a double2 16 (PyCUDA's "F" and "D" align to their parts only)
_C_LAYOUT = {"F": (8, 8), "D": (16, 16)}


def _arg_format(codes: list[str]) -> str:
    """The struct format of a kernel's parameters, with explicit padding ("4x") wherever the C
    parameter is aligned more strictly than the struct module would align it."""
    out, offset = [], 0
    for c in codes:
        size, align = _C_LAYOUT.get(c) or (struct.calcsize(c),) * 2
        pad = -offset % align
        if pad:
            out.append(f"{pad}x")
        out.append(c)
        offset += pad + size
    return "".join(out)


def _cuda_array_pointer(a: Any, name: str) -> int:
    """Device pointer of a CuPy/PyTorch/PyCUDA array, checked to be C-contiguous."""
    iface = a.__cuda_array_interface__
    strides = iface.get("strides")
    if strides is not None:
        itemsize = np.dtype(iface["typestr"]).itemsize
        expect, acc = [], itemsize
        for n in reversed(iface["shape"]):
            expect.append(acc)
            acc *= n
        if tuple(strides) != tuple(reversed(expect)):
            raise LaunchError(f"argument {name!r} is not C-contiguous; pass a contiguous copy")
    return int(iface["data"][0])


class CUDABackend(Backend):
    """Runs kernels on an NVIDIA GPU through PyCUDA.

    Uses the current PyCUDA context if there is one (so arrays from CuPy or PyTorch
    on that device work), else the primary context of device ``GPUKERN_DEVICE``
    (default 0).
    """

    name = "cuda"
    plans = True
    dialect = CUDA
    options: tuple[str, ...] = ()

    def __init__(self) -> None:
        try:
            import pycuda.driver as drv
        except ImportError:
            raise BackendError("pycuda is not installed (pip install 'gpukern[cuda]')") from None
        except Exception as e:  # the driver library itself may be missing
            raise BackendError(f"pycuda cannot load the CUDA driver: {e}") from None
        self.drv = drv
        try:
            drv.init()
            try:
                ctx = drv.Context.get_current()
            except (drv.Error, AttributeError):
                ctx = None
            if ctx is not None:
                self.device = ctx.get_device()
                bus = self.device.pci_bus_id()
                self.ordinal = next(i for i in range(drv.Device.count()) if drv.Device(i).pci_bus_id() == bus)
            else:
                index = int(os.environ.get("GPUKERN_DEVICE", "0"))
                if not 0 <= index < drv.Device.count():
                    raise BackendError(f"GPUKERN_DEVICE={index} but there are {drv.Device.count()} CUDA devices")
                self.device = drv.Device(index)
                self.ordinal = index
                ctx = self.device.retain_primary_context()
                ctx.push()
                atexit.register(ctx.pop)
            self.context = ctx
        except drv.Error as e:
            raise BackendError(f"no usable CUDA device: {e}") from None
        if find_nvcc() is None:
            raise BackendError("nvcc was not found; install the CUDA toolkit or set CUDA_HOME")
        attr = drv.device_attribute
        get = self.device.get_attribute
        major, minor = self.device.compute_capability()
        self.arch = f"sm_{major}{minor}"
        self.max_group = get(attr.MAX_THREADS_PER_BLOCK)
        self.max_items = (get(attr.MAX_BLOCK_DIM_X), get(attr.MAX_BLOCK_DIM_Y), get(attr.MAX_BLOCK_DIM_Z))
        self.max_grid = (get(attr.MAX_GRID_DIM_X), get(attr.MAX_GRID_DIM_Y), get(attr.MAX_GRID_DIM_Z))
        self.max_shared = get(attr.MAX_SHARED_MEMORY_PER_BLOCK)

    def device_name(self) -> str:
        return f"{self.device.name()} ({self.arch}, CUDA)"

    # ------------------------------------------------------------ compile
    def compiled(self, variant: Any) -> Any:
        """The variant's prepared PyCUDA function (compiled or loaded from the cache once)."""
        fn = variant.compiled.get(self.name)
        if fn is None:
            src = variant.source(self.name)
            module = binary_cache().load_or_build(
                _cubin_key(src, self.arch, self.options),
                lambda: nvcc_compile(src, self.arch, self.options),
                self.drv.module_from_buffer,
                (self.drv.Error,),
                variant.kernel.__name__,
            )
            fn = module.get_function(c_identifier(variant.program.kernel.name))
            params = variant.kernel_params
            codes = ["P" if p.kind == "array" else "q" if p.kind == "shape" else _PREPARE[p.type.name] for p in params]
            if variant.dynamic_shared:
                codes.append("q")  # the launch's dynamic shared bytes, after the kernel's own arguments
            fmt = _arg_format(codes)
            fn.prepare(fmt)
            fn.gk_module = module  # keep the module alive as long as the function
            fn.gk_shared = variant.shared_bytes
            variant.compiled[self.name] = fn
        return fn

    # ------------------------------------------------------------ launch
    packs_scalars = True  # struct packing takes Python numbers and NumPy integers and floats as they are

    def launcher(
        self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any]], None]:
        """One struct pack and cuLaunchKernel, as PyCUDA's ``prepared_async_call`` does, without
        its per-call keyword handling (the default stream; ``shared`` bytes of dynamic shared memory)."""
        from pycuda._pvt_struct import pack

        fn = self.compiled(variant)
        launch_kernel, fmt = fn._launch_kernel, fn.arg_format

        if variant.dynamic_shared:

            def launch_sized(cargs: list[Any]) -> None:
                launch_kernel(grid, block, pack(fmt, *cargs, shared), shared, None)

            return launch_sized

        def launch(cargs: list[Any]) -> None:
            launch_kernel(grid, block, pack(fmt, *cargs), shared, None)

        return launch

    def launch(
        self,
        variant: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        shared: int | None = None,
    ) -> None:
        self.check_limits(variant, grid, block, shared)
        run = self.launcher(variant, grid, block, shared or 0)
        for name, align in variant.vector_alignment.items():  # foreign arrays may start anywhere
            a = next(args[p.arg_index] for p in variant.kernel_params if p.name == name)
            if hasattr(a, "__cuda_array_interface__") and _cuda_array_pointer(a, name) % align:
                raise LaunchError(
                    f"argument {name!r} is read or written {align} bytes at a time (vload/vstore) but its data "
                    f"does not start at a multiple of {align} bytes; pass an aligned copy"
                )
        cargs, copy_back = self.pack_args(variant, args)
        run(cargs)
        for host, buf in copy_back:
            self.drv.memcpy_dtoh(host, buf)

    def device_pointer(self, a: Any, name: str, copy_back: list[tuple[np.ndarray, Any]] | None) -> Any:
        if isinstance(a, DeviceArray):
            return self._own(a, name)
        if isinstance(a, np.ndarray):
            buf = self.drv.mem_alloc(max(a.nbytes, 1))
            if a.nbytes:
                self.drv.memcpy_htod(buf, a)
            if copy_back is not None and a.nbytes:
                copy_back.append((a, buf))
            return buf
        return _cuda_array_pointer(a, name)

    # ------------------------------------------------------------ memory
    def to_device(self, array: np.ndarray) -> DeviceArray:
        buf = self.drv.mem_alloc(max(array.nbytes, 1))
        if array.nbytes:
            self.drv.memcpy_htod(buf, array)
        return DeviceArray(self, buf, array.shape, array.dtype)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
        return DeviceArray(self, self.drv.mem_alloc(nbytes), shape, dtype)

    def download(self, array: DeviceArray) -> np.ndarray:
        out = np.empty(array.shape, array.dtype)
        if out.nbytes:
            self.drv.memcpy_dtoh(out, array.handle)
        return out

    def synchronize(self) -> None:
        self.drv.Context.synchronize()

    def elapsed(self, start: Any, end: Any) -> float:
        end.synchronize()
        return start.time_till(end) * 1e-3

    # Streams are PyCUDA streams of the backend's context (None: the default stream).
    def new_stream(self) -> Any:
        return self.drv.Stream()

    def stream_synchronize(self, stream: Any) -> None:
        if stream is None:
            self.drv.Context.synchronize()
        else:
            stream.synchronize()

    def stream_wait(self, stream: Any, event: Any) -> None:
        if stream is None:
            # the legacy default stream waits on nothing finer than the context: wait on the host
            event.synchronize()
        else:
            stream.wait_for_event(event)

    def record(self, stream: Any) -> Any:
        ev = self.drv.Event()
        ev.record(stream)
        return ev

    def event_synchronize(self, event: Any) -> None:
        event.synchronize()

    def event_done(self, event: Any) -> bool:
        return bool(event.query())

    def pinned_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return self.drv.pagelocked_empty(shape, dtype)

    # ------------------------------------------------------------ DLPack
    def dlpack_device(self) -> tuple[int, int]:
        return (dlpack.CUDA, self.ordinal)

    def dlpack_export(self, array: DeviceArray, stream: Any, max_version: Any) -> Any:
        # gpukern's work is on the legacy default stream or on blocking streams, which that stream
        # waits for: a consumer on it (None, 1) or asking for no order (-1) needs nothing; any other
        # stream is ordered by waiting here.
        if stream not in (None, 1, -1):
            self.drv.Context.synchronize()
        return dlpack.export(int(array.handle), array.shape, array.dtype, self.dlpack_device(), array)

    def dlpack_import(self, x: Any) -> DeviceArray:
        where = tuple(x.__dlpack_device__())
        if where != self.dlpack_device():
            raise InteropError(
                f"gk.from_dlpack(): the {type(x).__name__} lives on DLPack device {where}; gpukern's CUDA backend "
                f"uses {self.dlpack_device()} (CUDA device {self.ordinal})"
            )
        t = dlpack.Imported(x.__dlpack__(stream=1))  # its producer orders its work before the legacy stream
        if not t.c_contiguous():
            raise InteropError("gk.from_dlpack(): the array is not C-contiguous; pass a contiguous copy")
        return DeviceArray(self, t.pointer, t.shape, t.dtype, owner=t)

    def copy_to_device(self, dst: DeviceArray, src: np.ndarray, stream: Any, wait: bool) -> None:
        if src.nbytes:
            self.drv.memcpy_htod_async(dst.handle, src, stream)
            if wait:
                self.stream_synchronize(stream)

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        if dst.nbytes:
            self.drv.memcpy_dtoh_async(dst, src.handle, stream)
            if wait:
                self.stream_synchronize(stream)

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        if dst.nbytes:
            self.drv.memcpy_dtod_async(dst.handle, src.handle, dst.nbytes, stream)
