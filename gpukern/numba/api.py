"""``numba.cuda`` on gpukern: ``from gpukern.numba import cuda`` in place of ``from numba import cuda``.

This module is ``gpukern.numba.cuda`` (``gpukern/numba/__init__.py`` registers it under that name):
numba-cuda's import redirector takes over every module whose name contains "numba.cuda", and
recurses without end on one that is not Numba's, so no file of gpukern may be named so.

Inside kernels every name is an entry pointing at gpukern's one definition (``syncthreads`` is
``gk.barrier``, ``atomic.add`` is ``gk.atomic_add``, ``threadIdx`` is ``gk.thread_idx``, ``laneid`` is
``gk.lane_id()`` read as a name); ``intrinsics`` holds the few that reorder arguments or build a tuple.
On the host, ``jit`` makes a ``gk.Kernel`` (or a ``@gk.func`` with ``device=True``) and the array and
stream calls are gpukern's.  docs/numba.md lists every name: supported, how, or why not.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import Any, NamedTuple

import numpy as np

from .. import streams as _streams
from .. import timing as _timing
from .. import types as _types
from ..backends import available_backends as _available_backends
from ..backends import current_device as _current_device
from ..backends import devices as _devices
from ..backends import empty as _empty
from ..backends import from_dlpack as _from_dlpack
from ..backends import get_backend as _get_backend
from ..backends import to_device as _to_device
from ..errors import BackendError as _BackendError
from ..errors import GpukernError as _GpukernError
from ..errors import LaunchError as _LaunchError
from ..errors import user_frames as _user_frames
from ..kernel import kernel as _kernel
from ..language import core as _lang
from ..language import warp as _warp
from ..language.compat import (
    ArrayIn,
    ArrayLike,
    Grid,
    GridSize,
    Group,
    Namespace,
    Select,
    fp16_names,
    libdevice_names,
    vector_types,
)
from ..language.core import func as _func
from ..runtime.array import DeviceArray as _DeviceArray
from ..semantics import ops as _ops
from . import types  # noqa: F401 - numba.cuda.types
from .gufunc import guvectorize  # noqa: F401 - cuda.guvectorize
from .reduce import Reduce, reduce  # noqa: F401 - cuda.reduce, and its class for isinstance
from .rules import NUMBA_RULES
from .types import *  # noqa: F403 - numba.cuda's scalar type names (``from numba.cuda import float32``)
from .vectorize import vectorize as _vectorize

# ---------------------------------------------------------------- inside kernels
threadIdx = _lang.thread_idx
blockIdx = _lang.block_idx
blockDim = _lang.block_dim
gridDim = _lang.grid_dim
laneid = _lang.Property("laneid", _warp.lane_id)
warpsize = _lang.Property("warpsize", _warp.warp_size)
grid = Grid("grid", "cuda.grid(ndim): the thread's absolute position")
gridsize = GridSize("gridsize", "cuda.gridsize(ndim): the grid's threads along each dimension")

shared = Namespace("shared", array=ArrayIn("shared.array", _lang.shared))
local = Namespace("local", array=ArrayIn("local.array", _lang.local))
const = Namespace("const", array_like=ArrayLike("const.array_like", "a module's array as a constant table"))

syncthreads = _lang.barrier
syncthreads_count = _warp.syncthreads_count
syncthreads_and = _warp.syncthreads_and
syncthreads_or = _warp.syncthreads_or
threadfence = _lang.threadfence
threadfence_block = _lang.threadfence_block
threadfence_system = _lang.threadfence_system

syncwarp = _warp.syncwarp
shfl_sync = _warp.shfl_sync
shfl_up_sync = _warp.shfl_up_sync
shfl_down_sync = _warp.shfl_down_sync
shfl_xor_sync = _warp.shfl_xor_sync
all_sync = _warp.vote_all
any_sync = _warp.vote_any
eq_sync = _warp.eq_sync
ballot_sync = _warp.ballot
activemask = _warp.activemask
lanemask_lt = _warp.lanemask_lt
match_any_sync = _warp.match_any
match_all_sync = _warp.match_all

atomic = Namespace(
    "atomic",
    add=_lang.atomic_add,
    sub=_lang.atomic_sub,
    and_=_lang.atomic_and,
    or_=_lang.atomic_or,
    xor=_lang.atomic_xor,
    exch=_lang.atomic_exch,
    inc=_lang.atomic_inc,
    dec=_lang.atomic_dec,
    max=_lang.atomic_max,
    min=_lang.atomic_min,
    nanmax=_lang.atomic_nanmax,
    nanmin=_lang.atomic_nanmin,
    cas=_lang.atomic_cas,
    compare_and_swap=_lang.atomic_compare_and_swap,
)

popc = _lang.popc
brev = _lang.brev
clz = _lang.clz
ffs = _lang.ffs
fma = _lang.fma
cbrt = math.cbrt if hasattr(math, "cbrt") else np.cbrt
selp = Select("selp", "cuda.selp(cond, a, b): a if cond else b")
fp16 = Namespace("fp16", **fp16_names(_ops.MATH))
libdevice = Namespace("libdevice", **libdevice_names(_ops.MATH))
# CUDA's vector types (cuda.float32x4, cuda.float4, ...): named tuples of numbers in kernels
globals().update(vector_types())

# numba.cuda.config: what a program tests before choosing a path (gpukern is not Numba's simulator)
config = Namespace("config", ENABLE_CUDASIM=False, CUDA_LOW_OCCUPANCY_WARNINGS=False, CUDA_WARN_ON_IMPLICIT_COPY=False)
cg = Namespace("cg", this_grid=Group("this_grid", grid=True), this_thread_block=Group("this_thread_block", grid=False))


# ---------------------------------------------------------------- on the host


def jit(func_or_sig: Any = None, device: bool = False, **options: Any) -> Any:
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``,
    ``@cuda.jit(sig, fastmath=True)``: a ``gk.Kernel`` specialised at each launch on its arguments'
    types (a signature is accepted and not needed), with Numba's rules for stores and bools
    (``NUMBA_RULES``), or a ``@gk.func`` for ``device=True``.  Of
    Numba's options, ``fastmath`` and ``lineinfo`` are gpukern's compile options; ``debug``,
    ``opt``, ``cache``, ``inline`` and ``link`` change nothing here (``link`` of PTX is refused)."""
    if options.get("link"):
        raise _BackendError("cuda.jit(link=...): linking PTX or CUDA C files is not supported by gpukern")
    kept = {k: options[k] for k in ("fastmath", "lineinfo", "fma") if options.get(k) is not None}
    kept.update(NUMBA_RULES)

    def make(fn: Any) -> Any:
        if device:
            f = _func(fn)
            f.arg_types = _signature_args(func_or_sig)
            return f
        k = _kernel(**kept)(fn)
        declared = None if isinstance(func_or_sig, list) else types.argument_types(func_or_sig)
        converters = tuple(_converter(t) for t in declared or ())
        if any(converters):
            k.convert_args = lambda args, c=converters: _convert_scalars(args, c)
        typed = _signature_types(func_or_sig)
        if typed is not None:  # compiled now, as Numba compiles a kernel given its signature: errors here
            try:
                k.specialise(*typed)
            except _GpukernError as e:  # the user's frames and the message (errors.user_frames)
                raise _user_frames(e) from e.__cause__
        k.device_function = _func(fn)  # a kernel another kernel calls is a device function, as in Numba
        k.py_func = fn  # the Python function, as a Numba dispatcher names it
        k.overloads = Overloads(k)
        k.inspect_asm = lambda signature=None: _inspect_asm(fn, signature or func_or_sig, kept)
        return k

    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return make(func_or_sig)
    return make


class Overload:
    """A kernel at one signature, as Numba's ``dispatcher.overloads[sig]`` gives it: what the device's
    occupancy allows of it."""

    def __init__(self, kernel: Any, args: tuple[Any, ...]) -> None:
        self.kernel, self.args = kernel, args

    def max_cooperative_grid_blocks(self, blockdim: Any, dynsmemsize: int = 0) -> int:
        """The most blocks of ``blockdim`` threads (and ``dynsmemsize`` dynamic shared bytes) a grid that
        calls ``cg.this_grid().sync()`` may have: all of them resident at once
        (``gk.Kernel.resident_blocks``: CUDA's occupancy calculator; other backends say why not)."""
        if _get_backend().name == "sim":  # (the simulator runs a grid-synchronising launch of any size)
            return 2**31 - 1
        return int(self.kernel.resident_blocks(*self.args, block=blockdim, shared=dynsmemsize))


class Overloads:
    """``dispatcher.overloads[sig]``: the kernel at a signature, a tuple of argument types
    (``(int32[:, ::1],)``), as Numba keys it."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __len__(self) -> int:
        """How many variants are compiled (one per kind of argument a launch gave, as Numba's overloads)."""
        return len(self.kernel.variants)

    def __getitem__(self, sig: Any) -> Overload:
        if not isinstance(sig, (tuple, list)):
            raise KeyError(f"overloads[...] takes a tuple of argument types, such as (int32[:, ::1],), not {sig!r}")
        return Overload(self.kernel, tuple(sig))


def vectorize(signatures: Any = None, **options: Any) -> Any:
    """``cuda.vectorize(sigs)``: ``numba.vectorize(sigs, target="cuda")`` (``gpukern.numba.vectorize``)."""
    options.pop("target", None)
    return _vectorize(signatures, target="cuda", **options)


def _signature_args(sig: Any) -> tuple[Any, ...] | None:
    """The parameter types of a device function's signature, which a call converts its arguments to,
    as Numba does (None for an array parameter: it takes its argument as it is); None without one."""
    parsed = types.signature(sig)
    return None if parsed is None else parsed.args


def compile_ptx(
    pyfunc: Any, sig: Any, debug: bool = False, lineinfo: bool = False, device: bool = False,
    fastmath: bool = False, cc: tuple[int, int] | None = None, opt: Any = None, abi: Any = None,
    abi_info: Any = None, output: str = "ptx", fma: bool | None = None,
) -> tuple[str, Any]:  # fmt: skip
    """``cuda.compile_ptx(pyfunc, sig)``: the PTX of the kernel ``pyfunc`` at the signature's types
    (``"void(float32[:], int32)"``, ``void(...)`` or a tuple of types), for ``cc`` (default: the
    current CUDA device's, else sm_80), as gpukern writes it: its CUDA C (``kernel.source()``) through
    NVRTC; and the result type (void).  A device function alone has no PTX of its own here: it is
    compiled into each kernel that calls it."""
    from ..backends.cuda_compile import kernel_arch
    from ..backends.nvrtc import library

    if device:
        raise _BackendError(
            f"compile_ptx({getattr(pyfunc, '__name__', pyfunc)!r}, device=True): gpukern compiles a device function "
            "into each kernel that calls it, and has no PTX of it alone; compile a kernel that calls it "
            "(kernel.source() gives the CUDA C)"
        )
    if output != "ptx":
        raise _BackendError(f"compile_ptx(output={output!r}): gpukern gives PTX only (output='ptx')")
    args = _signature_types(sig)
    if args is None:
        raise _BackendError(f"compile_ptx: a signature such as 'void(float32[:], int32)', not {sig!r}")
    k = jit(fastmath=fastmath, lineinfo=lineinfo, fma=fma)(getattr(pyfunc, "py_func", pyfunc))
    variant = k.specialise(*args)
    if cc is None:
        b = _get_backend()
        arch = getattr(b, "arch", None) if b.name == "cuda" else None
        arch = arch or "sm_80"
    else:
        arch = f"sm_{cc[0]}{cc[1]}"
    target = kernel_arch(arch, variant.matrix_capability)
    if target is None:
        raise _BackendError(f"compile_ptx: {k.__name__} needs matrix units {arch} lacks")
    lib = library()
    if lib is None:
        raise _BackendError("compile_ptx needs NVRTC: pip install nvidia-cuda-nvrtc")
    return lib.ptx(variant.source("cuda"), target, variant.options.flags("cuda")), types.void


def _inspect_asm(fn: Any, signature: Any, options: dict[str, Any]) -> str:
    """``kernel.inspect_asm(sig)``: the PTX of the kernel at that signature (``compile_ptx``'s)."""
    if signature is None or callable(signature) and not isinstance(signature, _types.Signature):
        raise _BackendError("inspect_asm(): give the signature, as (float32[:], int32) or 'void(float32[:], int32)'")
    keep = {k: v for k, v in options.items() if k in ("fastmath", "lineinfo", "fma")}
    return compile_ptx(fn, signature, **keep)[0]


def compile_ptx_for_current_device(pyfunc: Any, sig: Any, **options: Any) -> tuple[str, Any]:
    """``cuda.compile_ptx_for_current_device``: ``compile_ptx`` for the current device."""
    options.pop("cc", None)
    return compile_ptx(pyfunc, sig, **options)


def _signature_types(sig: Any) -> tuple[Any, ...] | None:
    """Every parameter type of a kernel's one signature (``types.argument_types``), as
    ``Kernel.specialise`` takes types; None without one, with several (a list), or where a type is
    unknown."""
    args = None if isinstance(sig, list) else types.argument_types(sig)
    return None if args is None or any(t is None for t in args) else args


def _converter(t: Any) -> Any:
    """The conversion of a scalar argument to the declared type ``t`` (None for an array parameter),
    made once per kernel: an integer wraps as a C conversion does (0xFFFFFFFF into int32 is -1), a
    float beyond ``t``'s range becomes inf, as Numba passes them."""
    if not isinstance(t, _types.ScalarType):
        return None
    dt = np.dtype(t.dtype)
    big = float(np.finfo(dt).max) if dt.kind in "fc" else math.inf

    def convert(a: Any) -> Any:
        if dt.kind in "iu" and isinstance(a, numbers.Integral):
            return np.uint64(int(a) & 0xFFFFFFFFFFFFFFFF).astype(dt)
        if dt.kind == "b":
            return np.bool_(a)
        if abs(a) <= big:  # (NumPy warns of an overflowing cast: only those pay for silencing it)
            return dt.type(a)
        with np.errstate(over="ignore"):
            return dt.type(a)

    convert.declared = t.name  # type: ignore[attr-defined]  # (for the message of one it cannot take)
    return convert


def _convert_scalars(args: tuple[Any, ...], converters: tuple[Any, ...]) -> tuple[Any, ...]:
    """Numba's launch with a signature: each scalar argument converted to the type declared for it."""
    out = list(args)
    for i, (a, convert) in enumerate(zip(args, converters)):
        if convert is None or not isinstance(a, (numbers.Number, np.generic)):
            continue
        try:
            out[i] = convert(a)
        except (TypeError, ValueError, OverflowError):
            t = convert.declared
            raise _LaunchError(
                f"argument {i + 1} is {a!r}, which does not convert to {t}, the type the kernel's signature "
                f"declares for it: pass a {t}"
            ) from None
    return tuple(out)


def to_device_array(ary: Any, stream: Any = None, copy: bool = True, to: _DeviceArray | None = None) -> _DeviceArray:
    """``cuda.to_device(ary, stream=0, copy=True, to=None)``: ``gk.to_device``; with ``to``, a copy into it."""
    stream = stream or None
    if to is not None:
        to.copy_to_device(ary, stream)
        return to
    return _to_device(ary, stream=stream)


def device_array(
    shape: Any, dtype: Any = np.float64, strides: Any = None, order: str = "C", stream: Any = None
) -> _DeviceArray:
    """``cuda.device_array``: ``gk.empty``; Fortran order is the transposed view of a C array of the
    reversed shape (a launch stages such a view: a contiguous copy in and back)."""
    if strides is not None or order not in ("C", "F"):
        raise _BackendError(
            "cuda.device_array(): order='C' or 'F', without strides (gpukern's device arrays are C-contiguous "
            "or views of one)"
        )
    if order == "F":
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return _empty(dims[::-1], dtype).T
    return _empty(shape, dtype)


def _like(ary: Any, make: Any) -> Any:
    """An array of ``ary``'s shape and dtype laid out as NumPy's ``empty_like`` lays it out (its axes
    in the order of ``ary``'s strides, contiguous: Fortran order stays Fortran, a view becomes
    dense), made by ``make(shape, dtype)`` in C order and transposed into that order."""
    shape, dtype = tuple(np.shape(ary)), np.dtype(ary.dtype)
    strides = getattr(ary, "strides", None)
    if strides is None or len(shape) <= 1:
        return make(shape, dtype)
    dense = np.empty_like(np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, strides, writeable=False))
    order = sorted(range(len(shape)), key=lambda d: -dense.strides[d])  # the axes, outermost first
    if order == list(range(len(shape))):
        return make(shape, dtype)
    base = make(tuple(shape[d] for d in order), dtype)
    return base.transpose(*np.argsort(order))


def device_array_like(ary: Any, stream: Any = None) -> _DeviceArray:
    """``cuda.device_array_like``: a device array of ``ary``'s shape and dtype, laid out as NumPy's
    ``empty_like`` would (C or Fortran order kept; a strided view's axes in its order, dense)."""
    return _like(ary, _empty)


def pinned_array(shape: Any, dtype: Any = np.float64, strides: Any = None, order: str = "C") -> np.ndarray:
    """``cuda.pinned_array``: ``gk.pinned_empty``; Fortran order is the transposed view of a C array."""
    if order not in ("C", "F") or strides is not None:
        raise _BackendError("cuda.pinned_array(): order='C' or 'F', without strides")
    if order == "F":
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return _streams.pinned_empty(dims[::-1], dtype).T
    return _streams.pinned_empty(shape, dtype)


def pinned_array_like(ary: Any) -> np.ndarray:
    """``cuda.pinned_array_like``: as ``device_array_like``, in page-locked host memory."""
    return _like(ary, _streams.pinned_empty)


def auto_device(obj: Any, stream: Any = None, copy: bool = True, user_explicit: bool = False) -> tuple[Any, bool]:
    """``cuda.devicearray.auto_device(obj)``: ``(device array, whether it was copied)``: a device array
    as it is, anything else (a contiguous NumPy array, a number) copied to the device; a strided
    NumPy view is a ``ValueError``, as in Numba."""
    if isinstance(obj, _DeviceArray):
        return obj, False
    if hasattr(obj, "__cuda_array_interface__"):
        return as_cuda_array(obj), False
    host = np.asarray(obj)
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        raise ValueError("auto_device: the array is not contiguous; pass np.ascontiguousarray(a)")
    if not copy:
        return _empty(host.shape, host.dtype), True
    return _to_device(np.ascontiguousarray(host), stream=stream or None), True


devicearray = Namespace("devicearray", auto_device=auto_device, DeviceNDArray=_DeviceArray)


def synchronize() -> None:
    """``cuda.synchronize()``: ``gk.synchronize()``."""
    _timing.synchronize()


def stream() -> _streams.Stream:
    """``cuda.stream()``: a ``gk.Stream``."""
    return _streams.Stream()


def default_stream() -> _streams.Stream:
    return _streams.default_stream()


def event(timing: bool = True) -> _streams.Event:
    """``cuda.event()``: a ``gk.Event``."""
    return _streams.Event()


def event_elapsed_time(evtstart: _streams.Event, evtend: _streams.Event) -> float:
    """``cuda.event_elapsed_time(start, end)``: milliseconds between two recorded events (``Event.elapsed_time``)."""
    return evtstart.elapsed_time(evtend)


def is_available() -> bool:
    """Whether a backend runs kernels here: always, since the simulator does (``gk.available_backends``)."""
    return bool(_available_backends())


def select_device(index: int) -> Any:
    """``cuda.select_device(i)``: device ``i`` of the current backend, made current."""
    d = _devices()[index]
    d.__enter__()
    return NumbaDevice(d)


def get_current_device() -> Any:
    """``cuda.get_current_device()``: the device launches go to (``id``, ``name``, ``compute_capability``)."""
    return NumbaDevice(_current_device())


def close() -> None:
    """``cuda.close()``: nothing to release that gpukern does not release itself."""


def current_backend() -> str:
    """Which gpukern backend the kernels of this module run on (``gk.get_backend().name``)."""
    return _get_backend().name


to_device = to_device_array  # Numba's name for the call above


# ---------------------------------------------------------------- devices and contexts
class NumbaDevice:
    """A device as ``cuda.gpus[i]`` and ``cuda.get_current_device()`` give it in Numba: ``id``,
    ``name`` (bytes, as Numba's), ``compute_capability`` (CUDA's; None on the simulator and OpenCL),
    ``with cuda.gpus[i]:`` (gpukern's ``with gk.Device(i):``), ``reset()``."""

    def __init__(self, device: Any) -> None:
        self.device = device

    @property
    def id(self) -> int:
        return int(self.device.index)

    @property
    def name(self) -> bytes:
        return self.device.name.encode()

    @property
    def compute_capability(self) -> tuple[int, int] | None:
        cc = getattr(self.device.backend(), "cc", None)
        return None if cc is None else (cc // 10, cc % 10)

    def reset(self) -> None:
        """Numba frees the device's context; gpukern frees its arrays as they are collected."""
        self.device.synchronize()

    def __enter__(self) -> NumbaDevice:
        self.device.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.device.__exit__(*exc)

    def __repr__(self) -> str:
        return f"<gpukern device {self.id} '{self.device.name}'>"


class _Gpus:
    """``cuda.gpus``: the current backend's devices (``len``, index, iterate; ``.current``)."""

    def _all(self) -> list[NumbaDevice]:
        return [NumbaDevice(d) for d in _devices()]

    def __len__(self) -> int:
        return len(_devices())

    def __getitem__(self, i: int) -> NumbaDevice:
        return self._all()[i]

    def __iter__(self) -> Any:
        return iter(self._all())

    @property
    def current(self) -> NumbaDevice:
        return NumbaDevice(_current_device())


gpus = _Gpus()


def list_devices() -> list[NumbaDevice]:
    """``cuda.list_devices()``: ``list(cuda.gpus)``."""
    return list(gpus)


def detect() -> bool:
    """``cuda.detect()``: print the devices kernels run on here (the current backend's) and whether
    any does; with no GPU that is the simulator, which runs every kernel."""
    found = list(gpus)
    b = _get_backend()
    print(f"Found {len(found)} device{'s' if len(found) != 1 else ''} on gpukern's {b.name} backend")
    for d in found:
        cc = d.compute_capability
        print(f"id {d.id}    {d.name!r:40} [SUPPORTED]")
        if cc is not None:
            print(f"{'':>22}Compute Capability: {cc[0]}.{cc[1]}")
    print(f"Summary:\n\t{len(found)}/{len(found)} devices are supported")
    return bool(found)


class MemoryInfo(NamedTuple):
    free: int
    total: int


class Context:
    """``cuda.current_context()``: the current device's ``get_memory_info()`` (free, total bytes: CUDA's
    ``cuMemGetInfo``; on the simulator this machine's memory, where its arrays live), ``synchronize()``,
    ``device``, ``reset()``."""

    def __init__(self, device: Any) -> None:
        self.device = NumbaDevice(device)

    def get_memory_info(self) -> MemoryInfo:
        return MemoryInfo(*self.device.device.backend().memory_info())

    def synchronize(self) -> None:
        self.device.device.synchronize()

    def reset(self) -> None:
        self.device.reset()


def current_context(devnum: int | None = None) -> Context:
    """``cuda.current_context()`` (or device ``devnum``'s)."""
    return Context(_current_device() if devnum is None else _devices()[devnum])


def require_context(fn: Any) -> Any:
    """``@cuda.require_context``: gpukern opens a device's context when it is first used."""
    return fn


@contextlib.contextmanager
def defer_cleanup() -> Any:
    """``with cuda.defer_cleanup():``: gpukern frees a device array when it is collected; nothing to defer."""
    yield


@contextlib.contextmanager
def pinned(*arylist: Any) -> Any:
    """``with cuda.pinned(a, b):``: Numba page-locks the arrays for the block; gpukern copies them as
    they are (``cuda.pinned_array`` gives page-locked memory)."""
    yield


def profile_start() -> None:
    """``cuda.profile_start()``: a profiler's capture range starts at the program's first launch here."""


def profile_stop() -> None:
    """``cuda.profile_stop()``: see ``profile_start``."""


def is_cuda_array(obj: Any) -> bool:
    """``cuda.is_cuda_array(obj)``: whether ``obj`` exposes ``__cuda_array_interface__`` (or is gpukern's)."""
    return isinstance(obj, _DeviceArray) or hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj: Any, sync: bool = True) -> Any:
    """``cuda.as_cuda_array(obj)``: another library's device array as a gpukern one, without a copy
    (DLPack: CuPy's, PyTorch's); an object with only ``__cuda_array_interface__`` is returned as it
    is (kernels take it so)."""
    if isinstance(obj, _DeviceArray):
        return obj
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        return _from_dlpack(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return obj
    raise _BackendError(
        f"cuda.as_cuda_array() takes a device array (__cuda_array_interface__ or DLPack), not {type(obj).__name__}; "
        "copy a host array with cuda.to_device()"
    )


def per_thread_default_stream() -> _streams.Stream:
    """``cuda.per_thread_default_stream()``: CUDA's per-thread default stream (handle 2); elsewhere the
    default stream, the one there is."""
    return _streams.Stream.from_handle(2) if _get_backend().name == "cuda" else _streams.default_stream()


def legacy_default_stream() -> _streams.Stream:
    """``cuda.legacy_default_stream()``: CUDA's legacy default stream (handle 1); elsewhere the default stream."""
    return _streams.Stream.from_handle(1) if _get_backend().name == "cuda" else _streams.default_stream()


def external_stream(ptr: int) -> _streams.Stream:
    """``cuda.external_stream(ptr)``: a stream made elsewhere, by its CUstream handle, as a ``gk.Stream``
    (``gk.Stream.from_handle``: the caller keeps it alive; CUDA's)."""
    return _streams.Stream.from_handle(ptr)
