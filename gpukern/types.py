"""The kernel language's types and its promotion rules.

Promotion follows NumPy 2 (NEP 50) exactly, because users compare their kernels
with NumPy: two typed operands promote with ``numpy.result_type``; a Python
literal or compile-time constant is *weak* and takes the type of the typed
operand it meets (``0.5 * x32`` stays float32).  A value that meets no typed
operand keeps a weak type until it must be materialised, where weak int becomes
int32 (int64 if it does not fit) and weak float becomes float32: the widths a
GPU kernel would use, and never a silent float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import KernelTypeError


class Type:
    """Base of every type an IR value can have."""


@dataclass(frozen=True)
class ScalarType(Type):
    """A machine scalar: what a register holds and what an array element is."""

    name: str
    dtype: np.dtype

    @property
    def kind(self) -> str:
        """'b' bool, 'i' signed, 'u' unsigned, 'f' float."""
        return self.dtype.kind

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __call__(self, value: Any) -> Any:
        """Outside kernels, ``float32(x)`` converts like NumPy does."""
        return self.dtype.type(value)

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class WeakType(Type):
    """The type of a Python literal: kind only, width decided by what it meets."""

    kind: str  # 'i' or 'f'

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    def __repr__(self) -> str:
        return "int literal" if self.kind == "i" else "float literal"


float32 = ScalarType("float32", np.dtype(np.float32))
float64 = ScalarType("float64", np.dtype(np.float64))
int32 = ScalarType("int32", np.dtype(np.int32))
int64 = ScalarType("int64", np.dtype(np.int64))
uint32 = ScalarType("uint32", np.dtype(np.uint32))
bool_ = ScalarType("bool", np.dtype(np.bool_))
WEAK_INT = WeakType("i")
WEAK_FLOAT = WeakType("f")

SCALARS: tuple[ScalarType, ...] = (bool_, int32, uint32, int64, float32, float64)
_BY_DTYPE = {t.dtype: t for t in SCALARS}


def from_dtype(dtype: Any, where: str = "") -> ScalarType:
    """The scalar type of a NumPy dtype, or a clear error naming the unsupported one."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt not in _BY_DTYPE:
        names = ", ".join(t.name for t in SCALARS)
        raise KernelTypeError(f"unsupported element type {dtype!r}{where}; supported: {names}")
    return _BY_DTYPE[dt]


def python_type(obj: Any) -> ScalarType | None:
    """``int``/``float``/``bool`` used as a type name: GPU widths (int32, float32)."""
    return {int: int32, float: float32, bool: bool_}.get(obj)


MemSpace = str  # 'global', 'shared', 'local' or 'constant' (a table the kernel reads from its module)


@dataclass(frozen=True)
class ArrayType(Type):
    """An array in one memory space; shared and local arrays have a static shape, but for a
    dynamic_shared() array (1-D, sized at launch), whose shape is None."""

    elem: ScalarType | RecordType  # a record only for a global array (its fields are reached one by one)
    ndim: int
    space: MemSpace = "global"
    shape: tuple[int, ...] | None = None

    def __repr__(self) -> str:
        if self.space == "global":
            return f"Array[{self.elem.name}, {self.ndim}]"
        return f"{self.space}({self.elem.name}, {self.shape})"


def materialize(t: Type, value: Any = None) -> ScalarType:
    """The concrete type a weak value gets when it must live in a register."""
    if isinstance(t, ScalarType):
        return t
    if t == WEAK_FLOAT:
        return float32
    if value is not None and not (-(2**31) <= int(value) < 2**31):
        return int64
    return int32


def _np_arg(t: Type) -> Any:
    """What to hand ``numpy.result_type`` for a type: a dtype, or a weak Python scalar."""
    if isinstance(t, ScalarType):
        return t.dtype
    return 0.0 if t == WEAK_FLOAT else 0


def promote(a: Type, b: Type) -> Type:
    """NumPy 2's result type of a binary arithmetic operation on ``a`` and ``b``."""
    if isinstance(a, WeakType) and isinstance(b, WeakType):
        return WEAK_FLOAT if "f" in (a.kind, b.kind) else WEAK_INT
    return from_dtype(np.result_type(_np_arg(a), _np_arg(b)))


def join(a: Type | None, b: Type) -> Type:
    """The type of a variable assigned values of both types (same rule as promotion)."""
    if a is None or a == b:
        return b
    return promote(a, b)


def true_divide_type(a: Type, b: Type) -> Type:
    """``/`` is true division: integers divide as float64, like NumPy."""
    t = promote(a, b)
    if isinstance(t, WeakType):
        return WEAK_FLOAT
    return t if t.is_float else float64


class _ArrayAnnotation:
    """``Array[T]`` / ``Array[T, ndim]``: a C-contiguous global-memory array parameter."""

    def __class_getitem__(cls, item: Any) -> ArrayType:
        if not isinstance(item, tuple):
            item = (item,)
        if len(item) not in (1, 2):
            raise KernelTypeError("Array takes an element type and optionally ndim: Array[float32, 2]")
        elem = item[0]
        elem_t = elem if isinstance(elem, ScalarType) else python_type(elem) or array_element(elem)
        ndim = item[1] if len(item) == 2 else 1
        if not isinstance(ndim, int) or not 1 <= ndim <= 3:
            raise KernelTypeError(f"Array ndim must be 1, 2 or 3, not {ndim!r}")
        return ArrayType(elem_t, ndim)


Array = _ArrayAnnotation


@dataclass(frozen=True)
class ConstType(Type):
    """``Const[int]``: a compile-time constant parameter; each value specialises."""

    py_type: type | None  # int, float, bool, or None for any constant


class _ConstAnnotation:
    def __class_getitem__(cls, item: Any) -> ConstType:
        if item not in (int, float, bool):
            raise KernelTypeError(f"Const[...] takes int, float or bool, not {item!r}")
        return ConstType(item)


Const = _ConstAnnotation
ANY_CONST = ConstType(None)


# ---------------------------------------------------------------- records (structured dtypes)
@dataclass(frozen=True)
class RecordField:
    """One field of a record: its name, scalar type and byte offset in the record."""

    name: str
    type: ScalarType
    offset: int


@dataclass(frozen=True)
class RecordType(Type):
    """A NumPy structured dtype of scalar fields, as the element of a global array.

    Kernels read and write one field at a time (``a[i].x``, ``a[i]["x"]``); the generated C
    declares a struct with the dtype's very layout (``record_type`` refuses one C cannot have).
    Equal dtypes (fields, offsets, itemsize) are equal types, so the dtype is part of the key."""

    dtype: np.dtype
    fields: tuple[RecordField, ...]  # by offset

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def name(self) -> str:
        return "record{" + ", ".join(f"{f.name}: {f.type.name}" for f in self.fields) + "}"

    def field(self, name: str) -> RecordField | None:
        return next((f for f in self.fields if f.name == name), None)

    def __repr__(self) -> str:
        return self.name


def record_type(dtype: np.dtype, where: str = "") -> RecordType:
    """The record type of a structured dtype, or a KernelTypeError saying why a kernel cannot use it:
    a field that is not a scalar of a supported type (nested records, sub-arrays), fields that
    overlap, or a layout C cannot reproduce (a field at an offset that is not a multiple of its
    size, or an itemsize that is not a multiple of the widest field's: a packed dtype)."""
    fields = []
    for name in dtype.names or ():
        fdtype, offset = dtype.fields[name][:2]
        if fdtype.fields is not None or fdtype.subdtype is not None:
            what = "a nested record" if fdtype.fields is not None else f"a sub-array {fdtype.subdtype[1]}"
            raise KernelTypeError(f"record field {name!r}{where} is {what}; kernels take records of scalar fields only")
        t = from_dtype(fdtype, f" (record field {name!r}{where})")
        if offset % t.itemsize:
            raise KernelTypeError(
                f"record field {name!r}{where} ({t.name}) is at byte {offset}, not a multiple of its size: "
                "C cannot lay it out so (a packed dtype); make the dtype with numpy.dtype(..., align=True)"
            )
        fields.append(RecordField(name, t, int(offset)))
    if not fields:
        raise KernelTypeError(f"the structured dtype {dtype}{where} has no fields")
    fields.sort(key=lambda f: f.offset)
    for a, b in zip(fields, fields[1:]):
        if a.offset + a.type.itemsize > b.offset:
            raise KernelTypeError(f"record fields {a.name!r} and {b.name!r}{where} overlap")
    widest = max(f.type.itemsize for f in fields)
    if dtype.itemsize % widest or fields[-1].offset + fields[-1].type.itemsize > dtype.itemsize:
        raise KernelTypeError(
            f"records of {dtype}{where} are {dtype.itemsize} bytes, not a multiple of their widest field "
            f"({widest} bytes): C cannot lay them out so (a packed dtype); make the dtype with "
            "numpy.dtype(..., align=True)"
        )
    return RecordType(dtype, tuple(fields))


def array_element(dtype: Any, where: str = "") -> ScalarType | RecordType:
    """The element type of an array of ``dtype``: a scalar type, or a record for a structured dtype."""
    if isinstance(dtype, RecordType):
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is not None and dt.names is not None:
        return record_type(dt, where)
    return from_dtype(dtype, where)
