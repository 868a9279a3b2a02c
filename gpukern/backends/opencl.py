"""OpenCL C: the dialect table, and running kernels through pyopencl."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.dialects import OPENCL
from ..codegen.names import global_identifier
from ..errors import BackendError, CompileError, LaunchError, OpenCLCompileError, warn_at
from ..ir import nodes as ir
from ..runtime.array import DeviceArray
from ..runtime.cache import binary_cache, make_key
from ..runtime.foreign import is_cl_array
from .base import Backend
from .compile_errors import locate

GPU_BLOCK_LIMIT = 1024  # threads per block on every CUDA GPU (sm_30 on): a larger block is OpenCL-on-CPU only

# clang's ``file.py:12:5: error: ...`` (most drivers' compilers), or PoCL's ``error: file.py:12:5: ...``
_FIRST_ERROR = re.compile(r"^(?P<pocl>error: )?(?P<file>.*?):(?P<line>\d+):(?:\d+:)? (?(pocl)|(?:fatal )?error)", re.M)


class OpenCLBackend(Backend):
    """Runs kernels on an OpenCL device (a GPU if there is one, else the first device).

    ``GPUKERN_OPENCL_DEVICE=P:D`` picks device D of platform P; ``gk.Device(i, "opencl")`` the
    i-th device of all platforms' devices in order.
    """

    name = "opencl"
    plans = True
    dialect = OPENCL
    build_options: list[str] = []

    def __init__(self, index: int | None = None) -> None:
        """Device ``index`` of every platform's devices in order (None: ``GPUKERN_OPENCL_DEVICE``,
        else the first GPU, else the first device)."""
        try:
            import pyopencl as cl
        except ImportError:
            raise BackendError("pyopencl is not installed (pip install 'gpukern[opencl]')") from None
        self.cl = cl
        flat = self._all_devices(cl)
        if index is None:
            self.device = self._pick_device(cl)
            self.index = next(i for i, d in enumerate(flat) if d == self.device)
        elif 0 <= index < len(flat):
            self.device, self.index = flat[index], index
        else:
            raise BackendError(f"OpenCL device {index} does not exist (there are {len(flat)})")
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.max_group = self.device.max_work_group_size
        self.max_items = tuple(self.device.max_work_item_sizes)
        self.max_shared = self.device.local_mem_size
        self.device_extensions = frozenset(self.device.extensions.split())

    @staticmethod
    def _platform_devices(cl: Any) -> list[list[Any]]:
        try:
            platforms = cl.get_platforms()
        except cl.Error as e:
            raise BackendError(f"no OpenCL platform: {e}") from None
        devices = []
        for p in platforms:
            try:
                devices.append(p.get_devices())
            except cl.Error:
                devices.append([])
        return devices

    @classmethod
    def _all_devices(cls, cl: Any) -> list[Any]:
        """Every platform's devices, in order: what ``gk.Device(i, "opencl")`` numbers."""
        return [d for ds in cls._platform_devices(cl) for d in ds]

    @classmethod
    def _pick_device(cls, cl: Any) -> Any:
        devices = cls._platform_devices(cl)
        choice = os.environ.get("GPUKERN_OPENCL_DEVICE")
        if choice:
            try:
                pi, di = (int(x) for x in choice.split(":"))
                return devices[pi][di]
            except (ValueError, IndexError):
                raise BackendError(
                    f"GPUKERN_OPENCL_DEVICE={choice!r} names no device (use PLATFORM:DEVICE indices)"
                ) from None
        flat = [d for ds in devices for d in ds]
        if not flat:
            raise BackendError("no OpenCL device found (on Debian: apt-get install pocl-opencl-icd)")
        gpus = [d for d in flat if d.type & cl.device_type.GPU]
        return (gpus or flat)[0]

    @classmethod
    def default_index(cls) -> int:
        import pyopencl as cl

        chosen = cls._pick_device(cl)
        return next(i for i, d in enumerate(cls._all_devices(cl)) if d == chosen)

    @classmethod
    def device_names(cls) -> list[str]:
        try:
            import pyopencl as cl
        except ImportError:
            return []
        return [f"{d.name.strip()} ({d.platform.name.strip()})" for d in cls._all_devices(cl)]

    def device_name(self) -> str:
        return f"{self.device.name.strip()} ({self.device.platform.name.strip()}, OpenCL)"

    # ------------------------------------------------------------ compile
    def compiled(self, variant: Any) -> Any:
        """The variant's ``cl.Kernel``, built once per process; the program binary is cached."""
        knl = variant.compiled.get(self.key)
        if knl is None:
            src = variant.source(self.name, line_directives=True)
            self.check_extensions(variant)
            dev = self.device
            options = [*variant.options.flags(self.name), *self.build_options]
            key = make_key(
                source=src,
                backend=self.name,
                device=dev.name,
                driver=dev.driver_version,
                platform=dev.platform.version,
                options=options,
                pyopencl=self.cl.VERSION_TEXT,
            )
            prg = binary_cache().load_or_build(
                key,
                lambda: self._build_binary(variant, src, options),
                lambda binary: self.cl.Program(self.ctx, [dev], [binary]).build(options=options),
                (self.cl.Error,),
                variant.kernel.__name__,
                variant.about(f"opencl ({dev.name.strip()})"),
            )
            knl = variant.compiled[self.key] = self.cl.Kernel(prg, global_identifier(variant.program.kernel.name))
        return knl

    def check_extensions(self, variant: Any) -> None:
        """A kernel needing an extension the device lacks (64-bit atomics) is a CompileError at the
        construct needing it, not the OpenCL compiler's complaint about an unknown function."""
        for name, node in variant.extensions.get(self.name, {}).items():
            if name not in self.device_extensions:
                what = f"atomic_{node.op}() on {node.type.name}" if isinstance(node, ir.Atomic) else "the kernel"
                raise CompileError(
                    f"{what} needs the OpenCL extension {name}, which the device {self.device.name.strip()} "
                    f"does not offer",
                    node.loc,
                    "run this kernel on CUDA or the simulator, or use 32-bit elements",
                )

    def _build_binary(self, variant: Any, src: str, options: list[str]) -> bytes:
        try:
            prg = self.cl.Program(self.ctx, src).build(options=options)
        except self.cl.Error as e:
            failed = OpenCLCompileError(
                f"the OpenCL compiler of {self.device.name.strip()} rejected the code generated for "
                f"{variant.kernel.__name__} or its build options",
                compiler=f"OpenCL ({self.device.platform.name.strip()})",
                log=str(e),
                source=src,
                command=" ".join(options),
            )
            files = [fd.loc.filename for fd in (variant.program.kernel, *variant.program.funcs) if fd.loc is not None]
            raise locate(failed, OPENCL.generated_file, _FIRST_ERROR, files) from None
        return bytes(prg.get_info(self.cl.program_info.BINARIES)[0])

    # ------------------------------------------------------------ launch
    def check_limits(
        self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int | None = None
    ) -> None:
        """Beyond the device's limits: warp intrinsics are emulated through two local scratch arrays
        of ``warp_group_max`` 8-byte slots (one per work-item), so a larger work-group is refused,
        and the scratch counts against the device's local memory."""
        super().check_limits(variant, grid, block, shared)
        threads = block[0] * block[1] * block[2]
        if threads > GPU_BLOCK_LIMIT:  # fine here (a CPU driver allows more), not on a GPU
            warn_at(
                f"{variant.kernel.__name__}[{grid}, {block}]: {threads} threads per block run on "
                f"{self.device.name.strip()}, which allows {self.max_group}, but a CUDA GPU allows at most "
                f"{GPU_BLOCK_LIMIT}: the same launch fails there",
                variant.program.kernel.loc,
            )
        if not variant.uses_warp_ops:
            return
        threads, most = block[0] * block[1] * block[2], self.dialect.warp_group_max
        name = variant.kernel.__name__
        if threads > most:
            raise LaunchError(
                f"block {block} has {threads} threads; {name} uses warp intrinsics, which OpenCL emulates "
                f"for at most {most} threads per block"
            )
        scratch, used = 2 * most * 8, variant.shared_bytes + (shared or 0)
        if used + scratch > self.max_shared:
            raise LaunchError(
                f"{name} uses {used} bytes of shared memory and warp intrinsics, whose OpenCL "
                f"emulation takes {scratch} more; this device allows {self.max_shared} per block"
            )

    # OpenCL sets no limit on work-groups, but PoCL's CPU driver counts them in 32 bits and aborts
    # the process beyond (an assertion in its scheduler): refused on every OpenCL device.
    max_blocks = 2**32 - 1

    @property
    def max_threads(self) -> int:
        """Work-items in one launch: what the device's size_t counts (OpenCL's global size)."""
        return 2**self.device.address_bits - 1

    def make_launcher(
        self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any], Any], None]:
        """Set the kernel's arguments and enqueue it on the stream's command queue (None: the
        backend's own)."""
        knl = self.compiled(variant)
        set_args, enqueue, default = knl.set_args, self.cl.enqueue_nd_range_kernel, self.queue
        gsize = tuple(g * b for g, b in zip(grid, block))
        # a kernel object holds one set of arguments until it is enqueued: threads launching it take turns
        lock = variant.compiled.setdefault((self.key, "lock"), threading.Lock())  # lives as long as knl does
        layout = variant.phase_layouts.get(self.name)
        if layout is not None:  # grid_sync(): launched until no thread stops at a grid barrier
            return self._phased_launcher(knl, lock, gsize, grid, block, layout)
        if variant.dynamic_shared:  # the bytes, then a __local buffer of them (OpenCL takes none of 0 bytes)
            tail = (np.int64(shared), self.cl.LocalMemory(max(shared, 1)))

            def launch_sized(cargs: list[Any], stream: Any) -> None:
                with lock:
                    set_args(*cargs, *tail)
                    enqueue(default if stream is None else stream, knl, gsize, block)

            return launch_sized

        def launch(cargs: list[Any], stream: Any) -> None:
            with lock:
                set_args(*cargs)
                enqueue(default if stream is None else stream, knl, gsize, block)

        return launch

    def _phased_launcher(
        self,
        knl: Any,
        lock: Any,
        gsize: tuple[int, ...],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        layout: Any,
    ) -> Callable[[list[Any], Any], None]:
        """A kernel with grid barriers, run in phases (``codegen.phases``): each launch runs every
        thread to the next grid barrier, where it saves its values in ``saved`` (its group's shared
        arrays in ``shared``) and thread 0 writes the barrier's number to ``phase[1]``; the next
        launch resumes there (``phase[0]``).  The scratch is made once per launcher (one grid and
        block), the launches taking turns under the kernel's lock."""
        mf, cl = self.cl.mem_flags, self.cl
        threads, groups = int(np.prod(gsize)), grid[0] * grid[1] * grid[2]
        saved = cl.Buffer(self.ctx, mf.READ_WRITE, max(layout.thread_bytes * threads, 1))
        shared = cl.Buffer(self.ctx, mf.READ_WRITE, max(layout.group_bytes * groups, 1))
        phase = cl.Buffer(self.ctx, mf.READ_WRITE, 8)
        where = np.zeros(2, np.int32)

        def launch(cargs: list[Any], stream: Any) -> None:
            queue = self.queue if stream is None else stream
            with lock:
                where[:] = 0
                cl.enqueue_copy(queue, phase, where)
                while True:
                    knl.set_args(*cargs, saved, shared, phase)
                    cl.enqueue_nd_range_kernel(queue, knl, gsize, block)
                    cl.enqueue_copy(queue, where, phase)  # (blocking: the barrier it stopped at)
                    if where[1] == 0:
                        return
                    where[:] = (where[1], 0)
                    cl.enqueue_copy(queue, phase, where)

        return launch

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
        queue = self._queue(stream)
        for host, buf in copy_back:
            self.cl.enqueue_copy(queue, host, buf)
        if copy_back:
            queue.finish()

    def device_pointer(
        self, a: Any, name: str, copy_back: list[tuple[np.ndarray, Any]] | None, stream: Any = None
    ) -> Any:
        if isinstance(a, DeviceArray):
            return self._own(a, name)
        if not isinstance(a, np.ndarray):
            return self._foreign_buffer(a, name)
        mf = self.cl.mem_flags
        if a.nbytes == 0:
            return self.cl.Buffer(self.ctx, mf.READ_WRITE, 1)
        buf = self.cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
        if copy_back is not None:
            copy_back.append((a, buf))
        return buf

    def _foreign_buffer(self, a: Any, name: str) -> Any:
        """The buffer of a ``pyopencl.array.Array`` of this backend's context, used in place (a
        sub-buffer where the array starts at an offset in its allocation)."""
        if not is_cl_array(a):
            raise LaunchError(
                f"argument {name!r} is a {type(a).__name__}; the OpenCL backend takes NumPy arrays, its own device "
                "arrays and pyopencl arrays"
            )
        if a.context != self.ctx:
            raise LaunchError(f"argument {name!r} is a pyopencl array of another OpenCL context than gpukern's")
        if not a.flags.c_contiguous:
            raise LaunchError(f"argument {name!r} is not C-contiguous; pass a contiguous copy")
        if a.offset == 0:
            return a.base_data
        try:
            return a.base_data.get_sub_region(a.offset, max(a.nbytes, 1))
        except self.cl.Error as e:
            raise LaunchError(
                f"argument {name!r} starts {a.offset} bytes into its buffer, which this device cannot address "
                f"as a sub-buffer ({e}); pass a copy"
            ) from None

    def foreign_stream(self, stream: Any, handles: bool = False) -> Any:
        """A ``pyopencl.CommandQueue`` of the backend's context, used as a stream."""
        if not isinstance(stream, self.cl.CommandQueue):
            raise LaunchError(f"the OpenCL backend's streams are pyopencl.CommandQueue objects, not {stream!r}")
        if stream.context != self.ctx:
            raise LaunchError("the command queue belongs to another OpenCL context than gpukern's")
        return stream

    # ------------------------------------------------------------ memory
    def to_device(self, array: np.ndarray) -> DeviceArray:
        mf = self.cl.mem_flags
        if array.nbytes == 0:
            buf = self.cl.Buffer(self.ctx, mf.READ_WRITE, 1)
        else:
            buf = self.cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=array)
        return DeviceArray(self, buf, array.shape, array.dtype)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
        return DeviceArray(self, self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, nbytes), shape, dtype)

    def address(self, root: DeviceArray, offset: int, shape: tuple[int, ...]) -> Any:
        """A sub-buffer, where the offset meets the device's base-address alignment."""
        if offset == 0:
            return root.handle
        if offset % max(self.device.mem_base_addr_align // 8, 1):
            return None
        try:
            return root.handle.get_sub_region(offset, max(int(np.prod(shape)) * root.dtype.itemsize, 1))
        except self.cl.Error:  # (a sub-buffer of a sub-buffer, or beyond what the device allows)
            return None

    def download(self, array: DeviceArray) -> np.ndarray:
        out = np.empty(array.shape, array.dtype)
        if out.nbytes:
            self.cl.enqueue_copy(self.queue, out, array.handle)
        return out

    def memory_info(self) -> tuple[int, int]:
        raise BackendError(
            f"OpenCL tells a device's total memory ({self.device.global_mem_size} bytes), not how much is free; "
            "run on CUDA or the simulator to know"
        )

    def synchronize(self) -> None:
        self.queue.finish()

    def elapsed(self, start: Any, end: Any) -> float:
        end.wait()
        return (end.profile.end - start.profile.end) * 1e-9

    # Streams are in-order command queues of the backend's context (the default stream is
    # ``self.queue``); an event is a marker, so one queue can wait for another's.
    def new_stream(self) -> Any:
        return self.cl.CommandQueue(self.ctx, properties=self.cl.command_queue_properties.PROFILING_ENABLE)

    def _queue(self, stream: Any) -> Any:
        return self.queue if stream is None else stream

    def stream_synchronize(self, stream: Any) -> None:
        self._queue(stream).finish()

    def stream_wait(self, stream: Any, event: Any) -> None:
        self.cl.enqueue_barrier(self._queue(stream), wait_for=[event])

    def record(self, stream: Any) -> Any:
        queue = self._queue(stream)
        marker = self.cl.enqueue_marker(queue)
        queue.flush()  # so that another queue waiting on it does not wait for a queue never submitted
        return marker

    def event_synchronize(self, event: Any) -> None:
        event.wait()

    def event_done(self, event: Any) -> bool:
        return event.command_execution_status == self.cl.command_execution_status.COMPLETE

    def pinned_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A buffer the runtime allocates in host memory (``ALLOC_HOST_PTR``), mapped for the host;
        the array keeps the mapping, and so the buffer, alive."""
        cl = self.cl
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize, 1)
        buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
        mapped, _ = cl.enqueue_map_buffer(
            self.queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, shape, dtype, is_blocking=True
        )
        return mapped

    def copy_to_device(self, dst: DeviceArray, src: np.ndarray, stream: Any, wait: bool) -> None:
        if src.nbytes:
            self.cl.enqueue_copy(self._queue(stream), dst.handle, src, is_blocking=wait)

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        if dst.nbytes:
            self.cl.enqueue_copy(self._queue(stream), dst, src.handle, is_blocking=wait)

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        if dst.nbytes:
            self.cl.enqueue_copy(self._queue(stream), dst.handle, src.handle, byte_count=dst.nbytes)
