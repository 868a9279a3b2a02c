"""CUDA C: running kernels through the driver API (``cuda_driver``).

Generated CUDA C is compiled by NVRTC or nvcc (``cuda_compile``) to a cubin for the device's own
architecture (cached, see ``gpukern.runtime.cache``), loaded from that binary, and launched with one
``cuLaunchKernelEx`` (``cuLaunchKernel`` on drivers before 12.0) whose arguments are packed
into one buffer by a struct made once per variant, so the argument layout is decided once
and not per launch.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.dialects import CUDA
from ..codegen.names import global_identifier
from ..errors import BackendError, CompileError, InteropError, LaunchError
from ..runtime import dlpack
from ..runtime.array import DeviceArray
from ..runtime.cache import binary_cache
from ..runtime.foreign import cuda_interface, has_cuda_interface, interface_stream, order_streams
from ..semantics import cluster as cluster_ops
from ..semantics import tma
from .base import Backend
from .cuda_compile import cubin_key as _cubin_key
from .cuda_compile import cuda_compiler, kernel_arch

# struct-module codes of the C parameters, per type (a kernel's arguments go as one packed buffer)
_CODES = {"int32": "i", "uint32": "I", "int64": "q", "float32": "f", "float64": "d", "bool": "B"}
_CODES |= {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "uint64": "Q", "float16": "f"}  # half: as float
_CODES.update(complex64="F", complex128="D")  # a float2 / double2: two parts, aligned to their pair
# (size, alignment, the parts' code) of a complex parameter; the struct module has no code for it
_COMPLEX = {"F": (8, 8, "ff"), "D": (16, 16, "dd")}
_TENSOR_MAP = {"M": (128, 64, "128s")}  # a TMA descriptor, its 128 bytes 64-aligned (CUtensorMap)


def _arg_format(codes: list[str], offsets: list[int] | None = None) -> str:
    """The struct format of a kernel's parameters, with explicit padding ("4x") wherever the C
    parameter is aligned more strictly than the struct module would align it ("=": no implicit
    padding, every offset decided here); ``offsets``: where the compiler put each (a kernel with a
    TMA descriptor: ``Function.param_offsets``)."""
    out, offset = ["="], 0
    for i, c in enumerate("Q" if c == "P" else c for c in codes):  # "=" has no pointer code: a 64-bit address
        size, align, parts = _COMPLEX.get(c) or _TENSOR_MAP.get(c) or (struct.calcsize(c), struct.calcsize(c), c)
        pad = -offset % align if offsets is None else offsets[i] - offset
        if pad:
            out.append(f"{pad}x")
        out.append(parts)
        offset += pad + size
    return "".join(out)


def _cuda_array_pointer(a: Any, name: str) -> int:
    """Device pointer of a CuPy/PyTorch/PyCUDA array, checked to be C-contiguous."""
    return int(cuda_interface(a, name)["data"][0])


_LOADING = threading.RLock()  # loading a variant's module (rare): one thread at a time


class _Spread:
    """A driver launcher (``cuda_driver.Launcher``) given the C arguments as the kernel takes them:
    complex ones (at ``split``) as their two parts, and the dynamic shared bytes (``shared``; None:
    the kernel has no dynamic shared memory) after the kernel's own; in a plan's fast path, written
    into its lines (nothing spread per call)."""

    def __init__(self, run: Any, split: tuple[int, ...], shared: int | None) -> None:
        self.run, self.split, self.shared = run, split, shared

    def _values(self, cargs: list[Any], part: Callable[[Any, str], Any]) -> list[Any]:
        flat: list[Any] = []
        for i, v in enumerate(cargs):
            flat += (part(v, "real"), part(v, "imag")) if i in self.split else (v,)
        return flat if self.shared is None else [*flat, self.shared]

    def __call__(self, cargs: list[Any], stream: Any) -> None:
        self.run(self._values(cargs, getattr), stream)

    def write(self, src: Any, cargs: list[str], stream: str) -> None:
        for i in self.split:  # each complex value computed once, its parts read after
            src.line(f"z{i} = {cargs[i]}")
        named = [f"z{i}" if i in self.split else v for i, v in enumerate(cargs)]
        self.run.write(src, [str(v) for v in self._values(named, lambda v, part: f"{v}.{part}")], stream)


class CUDABackend(Backend):
    """Runs kernels on an NVIDIA GPU through the CUDA driver API (``cuda_driver``).

    Works in the context current on the calling thread where there is one (PyCUDA's, so arrays
    of a PyCUDA program work), else in the primary context of device ``GPUKERN_DEVICE`` (default
    0), which CuPy and PyTorch share.
    """

    name = "cuda"
    plans = True
    dialect = CUDA
    options: tuple[str, ...] = ()

    def __init__(self, index: int | None = None) -> None:
        """Device ``index`` (None: ``GPUKERN_DEVICE``, or the device of the context current here)."""
        from . import cuda_driver

        exact = index is not None
        self.driver = driver = cuda_driver.Driver(self.default_index() if index is None else index, exact=exact)
        self.ordinal = self.index = driver.ordinal
        major, minor = driver.compute_capability()
        self.cc = 10 * major + minor
        self.arch = f"sm_{major}{minor}"
        self.tensor_maps: dict[tuple[Any, ...], bytes] = {}  # TMA descriptors made (``tensor_map``)
        cuda_compiler(arch=self.arch)  # a BackendError now, not at the first launch, where none can compile
        get = driver.attribute
        self.max_group = get("MAX_THREADS_PER_BLOCK")
        self.max_items = (get("MAX_BLOCK_DIM_X"), get("MAX_BLOCK_DIM_Y"), get("MAX_BLOCK_DIM_Z"))
        self.max_grid = (get("MAX_GRID_DIM_X"), get("MAX_GRID_DIM_Y"), get("MAX_GRID_DIM_Z"))
        self.max_shared = get("MAX_SHARED_MEMORY_PER_BLOCK")
        self.max_shared_optin = get("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")

    def device_name(self) -> str:
        return f"{self.driver.name()} ({self.arch}, CUDA)"

    @staticmethod
    def default_index() -> int:
        try:
            return int(os.environ.get("GPUKERN_DEVICE", "0"))
        except ValueError:
            raise BackendError(f"GPUKERN_DEVICE={os.environ['GPUKERN_DEVICE']!r} is not a device number") from None

    @staticmethod
    def device_names() -> list[str]:
        """Every CUDA device's name, in ordinal order, without making a context."""
        from . import cuda_driver

        return cuda_driver.device_names()

    # ------------------------------------------------------------ compile
    def compiled(self, variant: Any) -> Any:
        """The variant's loaded kernel function (compiled or loaded from the cache once), with the
        struct that packs its arguments (``fn.gk_struct``) and where complex ones go (``gk_split``)."""
        fn = variant.compiled.get(self.key)
        if fn is None:
            with _LOADING:  # threads launching a new variant at once load its module once
                fn = variant.compiled.get(self.key) or self._load(variant)
        return fn

    def _load(self, variant: Any) -> Any:
        """Compile (or find in the cache) and load the variant in this device's context."""
        need = variant.matrix_capability
        arch = kernel_arch(self.arch, need)
        if arch is None and need is not None:
            only = f", which only compute capability {need.cc // 10}.{need.cc % 10} has" if need.exact else ""
            elsewhere = "use warp-level fragments (gk.mma) there" if need.exact else "run it on a newer GPU"
            raise CompileError(
                f"kernel {variant.kernel.__name__} needs {need.why}{only}; this device is {self.arch} "
                f"(compute capability {self.cc // 10}.{self.cc % 10})",
                variant.program.kernel.loc,
                f"{elsewhere}, or run it on the simulator (backend='sim')",
            )
        src = variant.source(self.name, line_directives=True)
        compiler = cuda_compiler(arch=self.arch)
        prog = variant.program
        files = [fd.loc.filename for fd in (prog.kernel, *prog.funcs) if fd.loc is not None]
        options = (*variant.options.flags(self.name), *self.options)
        module = binary_cache().load_or_build(
            _cubin_key(src, arch, options, compiler),
            lambda: compiler.compile(src, arch, options, files),
            self.driver.load,
            (BackendError,),
            variant.kernel.__name__,
            variant.about(f"cuda {arch} ({compiler.name})"),
        )
        fn = module.function(global_identifier(variant.program.kernel.name))
        params = variant.kernel_params
        kinds = {"array": "P", "shape": "q", "tensor_map": "M"}
        codes = [kinds.get(p.kind) or _CODES[p.type.name] for p in params]
        if variant.dynamic_shared:
            codes.append("q")  # the launch's dynamic shared bytes, after the kernel's own arguments
        offsets = fn.param_offsets(len(codes)) if "M" in codes else None  # (a descriptor: placed by the compiler)
        fn.gk_struct = struct.Struct(_arg_format(codes, offsets))
        fn.gk_split = tuple(i for i, c in enumerate(codes) if c in _COMPLEX)
        fn.gk_dynamic_ok = 48 * 1024 - variant.shared_bytes  # more needs the function's opt-in
        dims = variant.program.kernel.cluster
        if dims is not None and cluster_ops.size(dims) > cluster_ops.PORTABLE_BLOCKS:
            fn.allow_non_portable_clusters()
        variant.compiled[self.key] = fn  # a function is loaded per context
        return fn

    # ------------------------------------------------------------ launch
    reads_foreign = True
    packs_scalars = True  # struct packing takes Python numbers and NumPy integers and floats as they are

    def make_launcher(
        self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any], Any], None]:
        """One struct pack into the launch's argument buffer and one driver launch on the given
        stream handle (None: the legacy default stream); the C arguments go straight to the
        driver layer's launcher unless some need spreading (complex parts, the shared size)."""
        fn = self.compiled(variant)
        if shared > fn.gk_dynamic_ok:  # only ever raised: a launcher made for more stays good
            fn.set_max_dynamic_shared(shared)
            fn.gk_dynamic_ok = shared
        run = self.driver.launcher(fn, grid, block, shared, fn.gk_struct, cooperative=variant.grid_sync)
        if fn.gk_split or variant.dynamic_shared:
            return _Spread(run, fn.gk_split, shared if variant.dynamic_shared else None)
        return run

    def memory_info(self) -> tuple[int, int]:
        return self.driver.memory_info()

    def resident_blocks(self, variant: Any, block: tuple[int, int, int], shared: int = 0) -> int:
        """How many blocks of ``variant`` (``block`` threads, ``shared`` dynamic bytes each) the device runs
        at once, whole clusters for a kernel of clusters (``cuda_driver.Function.resident``)."""
        dims = variant.program.kernel.cluster
        self.check_limits(variant, (1, 1, 1) if dims is None else tuple(dims), block, shared)
        self.check_dynamic_shared(variant, shared)
        fn = self.compiled(variant)
        if shared > fn.gk_dynamic_ok:  # (as a launch does: the occupancy calculator reads the opt-in)
            fn.set_max_dynamic_shared(shared)
            fn.gk_dynamic_ok = shared
        return fn.resident(block, shared, None if dims is None else tuple(dims))

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
        for name, align in variant.vector_alignment.items():  # foreign arrays may start anywhere
            a = next(args[p.arg_index] for p in variant.kernel_params if p.name == name)
            if has_cuda_interface(a) and _cuda_array_pointer(a, name) % align:
                raise LaunchError(
                    f"argument {name!r} is read or written {align} bytes at a time (vector, copy or fragment accesses) "
                    f"but its data "
                    f"does not start at a multiple of {align} bytes; pass an aligned copy"
                )
        named = []  # the streams foreign arrays' owners work on (their interface's v3 stream field)
        for p in variant.kernel_params:
            a = args[p.arg_index]
            if p.kind == "array" and has_cuda_interface(a):
                self._check_device(_cuda_array_pointer(a, p.name), p.name)
                s = interface_stream(a)
                if s is not None:
                    named.append(s)
        cargs, copy_back = self.pack_args(variant, args, stream)
        stream = order_streams(stream, named, self.wait_stream)
        run(cargs, stream)
        for host, buf in copy_back:
            self.driver.dtoh(host, int(buf), stream)

    def wait_stream(self, stream: Any, other: int) -> None:
        """Work queued on ``stream`` from now on starts after what is queued on ``other`` now."""
        self.driver.stream_wait(stream, self.driver.record(other))

    def _check_device(self, pointer: int, name: str) -> None:
        where = self.driver.pointer_device(pointer)
        if where is not None and where != self.ordinal:
            raise LaunchError(
                f"argument {name!r} lives on CUDA device {where}; gpukern's CUDA backend runs on device {self.ordinal} "
                f"(copy it there, or launch inside `with gk.Device({where}):`)"
            )

    def tensor_map(self, pointer: int, shape: tuple[int, ...], m: Any) -> bytes:
        """The TMA descriptor of ``m`` for the array at ``pointer`` of ``shape``: made by the driver
        once per array, shape and box (``semantics.tma`` says what the hardware needs of them)."""
        key = (pointer, shape, m.array.type.elem.name, m.box, m.swizzle)
        made = self.tensor_maps.get(key)
        if made is None:
            itemsize = m.array.type.elem.itemsize
            why = tma.array_problem(m.array.name, shape, itemsize, pointer)
            if why is not None:
                raise LaunchError(why)
            if len(self.tensor_maps) > 256:
                self.tensor_maps.clear()
            made = self.tensor_maps[key] = self.driver.tensor_map(
                pointer, tma.DATA_TYPES[m.array.type.elem.name], shape, itemsize, m.box, tma.SWIZZLE_ENUM[m.swizzle]
            )
        return made

    def device_pointer(
        self, a: Any, name: str, copy_back: list[tuple[np.ndarray, Any]] | None, stream: Any = None
    ) -> Any:
        if isinstance(a, DeviceArray):
            return self._own(a, name)
        if isinstance(a, np.ndarray):
            buf = self.driver.alloc(a.nbytes)
            self.driver.htod(int(buf), np.ascontiguousarray(a), stream)
            if copy_back is not None and a.nbytes:
                copy_back.append((a, buf))
            return buf  # the launch's arguments keep it alive (the struct packs its address)
        return _cuda_array_pointer(a, name)

    # ------------------------------------------------------------ memory
    def _array(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        mem = self.driver.alloc(nbytes)
        return DeviceArray(self, mem.pointer, shape, dtype, owner=mem)

    def to_device(self, array: np.ndarray) -> DeviceArray:
        out = self._array(array.shape, array.dtype)
        self.driver.htod(out.handle, np.ascontiguousarray(array))
        return out

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        return self._array(shape, dtype)

    def address(self, root: DeviceArray, offset: int, shape: tuple[int, ...]) -> int:
        return int(root.handle) + offset  # a CUdeviceptr: any byte of the allocation

    def download(self, array: DeviceArray) -> np.ndarray:
        out = np.empty(array.shape, array.dtype)
        self.driver.dtoh(out, array.handle)
        return out

    def synchronize(self) -> None:
        self.driver.synchronize()

    def elapsed(self, start: Any, end: Any) -> float:
        self.driver.event_synchronize(end)
        return self.driver.elapsed_ms(start, end) * 1e-3

    # Stream handles are CUstream ints (None: the legacy default stream); gpukern.Stream keeps the
    # driver's stream object (``new_stream``) alive beside its handle (``stream_ref``).
    def new_stream(self) -> Any:
        return self.driver.new_stream()

    def stream_ref(self, stream: Any) -> Any:
        return stream.handle

    def foreign_stream(self, stream: Any, handles: bool = False) -> int:
        """The CUstream of another library's stream: a ``__cuda_stream__`` object (the protocol's
        (version, handle) pair), a CuPy stream (``.ptr``), a PyTorch stream (``.cuda_stream``), a
        PyCUDA stream (``.handle``); with ``handles`` (``gk.Stream.from_handle``) an int as it is
        (an int anywhere else is refused: a wrong one would crash the process, not raise)."""
        if hasattr(stream, "__cuda_stream__"):
            return int(stream.__cuda_stream__()[1])
        for attr in ("ptr", "cuda_stream", "handle"):
            h = getattr(stream, attr, None)
            if isinstance(h, int) and not isinstance(h, bool):
                return h
        if handles and isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0:
            return stream
        raise LaunchError(
            f"{stream!r} is not a stream: pass a gpukern.Stream, a CuPy or PyTorch stream, an object with "
            "__cuda_stream__, or gk.Stream.from_handle(a CUstream handle)"
        )

    def stream_synchronize(self, stream: Any) -> None:
        self.driver.stream_synchronize(stream)

    def stream_wait(self, stream: Any, event: Any) -> None:
        self.driver.stream_wait(stream, event)

    def record(self, stream: Any) -> Any:
        return self.driver.record(stream)

    def event_synchronize(self, event: Any) -> None:
        self.driver.event_synchronize(event)

    def event_done(self, event: Any) -> bool:
        return self.driver.event_done(event)

    def pinned_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return self.driver.pinned_empty(shape, dtype)

    # ------------------------------------------------------------ DLPack
    def dlpack_device(self) -> tuple[int, int]:
        return (dlpack.CUDA, self.ordinal)

    def dlpack_export(self, array: DeviceArray, stream: Any, max_version: Any) -> Any:
        # gpukern's work is on the legacy default stream or on blocking streams, which that stream
        # waits for: a consumer on it (None, 1) or asking for no order (-1) needs nothing; any other
        # stream is made to wait for what is queued now.
        if stream not in (None, 1, -1):
            if isinstance(stream, int):
                self.driver.stream_wait(stream, self.driver.record(None))
            else:
                self.driver.synchronize()
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
        self.driver.htod(dst.handle, src, stream, wait)

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        self.driver.dtoh(dst, src.handle, stream, wait)

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        self.driver.dtod(dst.handle, src.handle, dst.nbytes, stream)
