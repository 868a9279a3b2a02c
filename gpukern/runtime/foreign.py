"""Arrays of other libraries used in place: what their interfaces say, read once per launch.

Three kinds of foreign arrays reach a launch: anything with ``__cuda_array_interface__`` (v3:
CuPy, PyTorch, Numba, PyCUDA), and OpenCL arrays (``pyopencl.array.Array``).  The checked path
reads the interface (``array_info``, ``cuda_interface``).  For the two libraries whose arrays
users pass most, a ``Reader`` reads the same facts straight from the object's attributes, which
costs a fraction of building the interface's dict: a launch plan keeps the reader and tests each
call's array with it (its type, dtype, rank, contiguity and device are re-read every call where
they can change in place, as a tensor's can; a CuPy array's rank only, see ``Reader.stable``).

Ordering (the interface's ``stream`` field, v3): an array's owner may still be writing it on its
own stream.  ``order_streams`` decides where a launch goes: on the stream the user gave, made to
wait for every other stream the arguments name; with none given, on the stream the arguments
name (the owner's current stream), so the launch follows the owner's work as the owner's own
kernels would.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import LaunchError
from ..types import STORAGE_TYPES, StorageType


def is_cl_array(a: Any) -> bool:
    """Whether ``a`` is a ``pyopencl.array.Array`` (without importing pyopencl)."""
    cl_array = sys.modules.get("pyopencl.array")
    return cl_array is not None and isinstance(a, cl_array.Array)


def has_cuda_interface(a: Any) -> bool:
    """Whether ``a`` has ``__cuda_array_interface__`` (a CUDA PyTorch tensor of a dtype its interface
    cannot name -- float8 -- raises KeyError reading it: it has one, ``cuda_interface`` makes it)."""
    try:
        return hasattr(a, "__cuda_array_interface__")
    except KeyError:
        return True


def _raw_interface(a: Any) -> dict[str, Any]:
    try:
        return a.__cuda_array_interface__
    except KeyError:  # PyTorch's for float8 tensors: the same facts, read from the tensor
        if type(a).__module__.split(".")[0] != "torch":
            raise
        import torch

        itemsize = a.element_size()
        strides = None if a.is_contiguous() else tuple(s * itemsize for s in a.stride())
        stream = torch.cuda.current_stream(a.device).cuda_stream
        return {"data": (a.data_ptr(), False), "shape": tuple(a.shape), "typestr": f"|V{itemsize}",
                "strides": strides, "version": 3, "stream": stream or 1}  # fmt: skip


def cuda_interface(a: Any, name: str) -> dict[str, Any]:
    """``a.__cuda_array_interface__``, checked to describe a C-contiguous array."""
    iface = _raw_interface(a)
    strides = iface.get("strides")
    if strides is not None:
        itemsize = np.dtype(iface["typestr"]).itemsize
        expect, acc = [], itemsize
        for n in reversed(iface["shape"]):
            expect.append(acc)
            acc *= n
        if any(s != e for s, e, n in zip(strides, reversed(expect), iface["shape"]) if n > 1):
            raise LaunchError(f"argument {name!r} is not C-contiguous; pass a contiguous copy")
    return iface


def array_info(a: Any, name: str) -> tuple[np.dtype, tuple[int, ...]] | None:
    """(dtype, shape) of a foreign array, or None where ``a`` is none."""
    if has_cuda_interface(a):
        iface = cuda_interface(a, name)
        dtype = np.dtype(iface["typestr"])
        if dtype.kind == "V":  # a PyTorch bfloat16 or 8-bit float tensor's interface says only "n bytes"
            named = str(getattr(a, "dtype", "")).rsplit(".", 1)[-1]
            dtype = next((storage_dtype(t) for t in STORAGE_TYPES if t.name == named), dtype)
        return dtype, tuple(iface["shape"])
    if is_cl_array(a):
        if not a.flags.c_contiguous:
            raise LaunchError(f"argument {name!r} is not C-contiguous; pass a contiguous copy")
        return a.dtype, tuple(a.shape)
    return None


def storage_dtype(t: StorageType) -> np.dtype:
    """NumPy's name for a storage type (bfloat16, the 8-bit floats): ``ml_dtypes``' where it is
    installed, else its bits (uint16, uint8), which an ``Array`` of the type takes too (``types``)."""
    try:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, t.name))
    except (ImportError, AttributeError):
        return t.dtype


def contiguous_copy(a: Any) -> Any:
    """A C-contiguous copy, made on the device by its own library, of a CuPy array or a CUDA
    PyTorch tensor of other strides (``x.T``, ``x[::2]``): a launch runs on it and writes back what
    the kernel wrote (``write_back``).  None: ``a`` is not such an array."""
    library = type(a).__module__.split(".")[0]
    if library == "cupy" and hasattr(a, "flags") and not a.flags.c_contiguous:
        return a.copy(order="C")
    if library == "torch" and getattr(a, "is_cuda", False) and not a.is_contiguous():
        return a.contiguous()
    return None


def write_back(a: Any, copy: Any) -> None:
    """What the kernel wrote into ``contiguous_copy(a)``, copied back into ``a`` by its library."""
    if type(a).__module__.split(".")[0] == "torch":
        a.copy_(copy)
    else:
        a[...] = copy


def interface_stream(a: Any) -> int | None:
    """The stream a CUDA array interface (v3) names: its owner's work on the array is ordered on
    it (1 and 2 are the legacy and per-thread default streams); None: nothing to wait for."""
    iface = _raw_interface(a) if has_cuda_interface(a) else None
    s = None if iface is None else iface.get("stream")
    return None if s is None else int(s)


@dataclass(frozen=True, eq=False)
class Reader:
    """How a launch plan reads one library's arrays, as expressions its fast path is written with
    (``gpukern.runtime.fast_path``: no call of a function of ours per array): ``pointer``, the data pointer
    of the array ``{a}``; ``check``, the test of all of what the plan tested the first time (of the
    library's dtype ``{dtype}``, rank ``{ndim}``, C-contiguous, on device ``{device}``); ``stream``,
    the library's current stream on device ``{device}`` (which the arrays' interface would name: the
    plan's arrays are on its device); ``names``, the constants they name; ``dtype_of``, the
    library's dtype object of an element type (compared by identity: each library's are singletons).
    ``stable``: whether an object's data pointer, dtype, device and contiguity are fixed for its
    life, so a plan may keep them for the last object it saw and re-test only its rank (CuPy:
    ``data`` and ``dtype`` are read-only, and the one public change in place, ``a.shape = ...``,
    keeps a C-contiguous array C-contiguous)."""

    cls: type
    pointer: str
    check: str
    stream: str
    names: dict[str, Any] = field(default_factory=dict)
    dtype_of: Callable[[Any], Any] = lambda elem: elem.dtype
    stable: bool = False

    def expression(self, src: Any, template: str, **fill: Any) -> str:
        """``template`` with the names it uses as constants of ``src`` (``fast_path.Source``), and
        ``fill`` (``a``, ``dtype``, ``ndim``, ``device``: never a reader's names)."""
        used = {field for _, field, _, _ in string.Formatter().parse(template) if field}
        return template.format(**{k: src.const(self.names[k], k) for k in used - fill.keys()}, **fill)


def _cupy_reader(cls: type) -> Reader:
    import cupy

    # the cheapest reads of the same facts: the memory pointer's device, the cached contiguity flag
    # (``flags`` builds an object per read); the device's own current stream (passing it skips
    # CuPy's query of the current device)
    contiguous = "{a}._c_contiguous" if hasattr(cls, "_c_contiguous") else "{a}.flags.c_contiguous"
    check = " and ".join(("{a}.dtype is {dtype}", "{a}.ndim == {ndim}", contiguous, "{a}.data.device_id == {device}"))
    names = {"current": cupy.cuda.get_current_stream}
    return Reader(cls, "{a}.data.ptr", check, "({current}({device}).ptr or 1)", names, stable=True)


def _torch_reader(cls: type) -> Reader:
    import torch

    names = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
    more = ("complex64", "complex128", "bfloat16", "float8_e4m3fn", "float8_e5m2")
    torch_dtype = {n: getattr(torch, n) for n in (*names, *more) if hasattr(torch, n)}
    # the methods taken from the class once: calling them skips the lookup through the tensor's
    # class and instance dict on every read (a tensor is read five times per launch)
    methods = {m: getattr(cls, m) for m in ("dim", "get_device", "is_contiguous", "data_ptr")}
    check = "{a}.dtype is {dtype} and {dim}({a}) == {ndim} and {get_device}({a}) == {device} and {is_contiguous}({a})"
    names = {**methods, "raw": torch._C._cuda_getCurrentRawStream}
    of = lambda elem: torch_dtype.get(elem.name)  # noqa: E731 (bfloat16, float8: torch's own, which NumPy has not)
    return Reader(cls, "{data_ptr}({a})", check, "({raw}({device}) or 1)", names, of)


_READERS: dict[type, Reader | None] = {}


def reader(a: Any) -> Reader | None:
    """The fast reader of ``a``'s class (a CuPy array, a PyTorch tensor), or None."""
    cls = type(a)
    try:
        return _READERS[cls]
    except KeyError:
        pass
    made = None
    top = cls.__module__.split(".")[0]
    try:
        if top == "cupy" and cls.__name__ == "ndarray":
            made = _cupy_reader(cls)
        elif top == "torch" and cls.__name__ in ("Tensor", "Parameter"):
            made = _torch_reader(cls)
    except (ImportError, AttributeError):
        made = None
    _READERS[cls] = made
    return made


def order_streams(given: Any, named: list[int], wait: Callable[[Any, int], None]) -> Any:
    """The stream a launch goes on: ``given`` (a handle; None: not given) or, with none given, the
    first stream the arguments' interfaces name; ``wait(stream, other)`` orders the launch's
    stream after each other named stream."""
    target = given
    if target is None and named:
        target = named[0]
    for s in dict.fromkeys(named):
        if s != target and not (target is None and s == 1):  # the legacy stream is None's own
            wait(target, s)
    return target
