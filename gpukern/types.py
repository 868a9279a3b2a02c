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
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __call__(self, *args: Any) -> Any:
        """Outside kernels, ``float32(x)`` converts like NumPy does; ``float32(float32, int32)`` (types)
        is a function signature, as Numba's type objects write one (``Signature``)."""
        if len(args) == 1 and not isinstance(args[0], Type):
            return self.dtype.type(args[0])
        if all(isinstance(a, Type) for a in args):
            return Signature(self, tuple(args))
        raise TypeError(f"{self.name}(x) converts one value; {self.name}(T, ...) of types is a signature")

    def __getitem__(self, dims: Any) -> ArrayType:
        """``float32[:]``, ``float32[:, ::1]``: an array of this type with one dimension per slice,
        as Numba's signatures write it (the same as ``Array[float32, 2]``)."""
        dims = dims if isinstance(dims, tuple) else (dims,)
        if not all(isinstance(d, slice) and d.start is None and d.stop is None and d.step in (None, 1) for d in dims):
            raise KernelTypeError(
                f"an array type is written {self.name}[:] or {self.name}[:, :], not {self.name}[{dims}]"
            )
        return ArrayType(self, len(dims))

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Signature:
    """A function's types written as Numba's type objects write them: ``float32(float32, int32)``."""

    result: Any
    args: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"{self.result!r}({', '.join(map(repr, self.args))})"


@dataclass(frozen=True)
class WeakType(Type):
    """The type of a Python literal: kind only, width decided by what it meets."""

    kind: str  # 'i', 'f' or 'c'

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    def __repr__(self) -> str:
        return {"i": "int literal", "f": "float literal", "c": "complex literal"}[self.kind]


float32 = ScalarType("float32", np.dtype(np.float32))
float64 = ScalarType("float64", np.dtype(np.float64))
int32 = ScalarType("int32", np.dtype(np.int32))
int64 = ScalarType("int64", np.dtype(np.int64))
uint32 = ScalarType("uint32", np.dtype(np.uint32))
bool_ = ScalarType("bool", np.dtype(np.bool_))
# the narrow and unsigned 64-bit integers (C computes the narrow ones in int: the emitter narrows back)
int8 = ScalarType("int8", np.dtype(np.int8))
uint8 = ScalarType("uint8", np.dtype(np.uint8))
int16 = ScalarType("int16", np.dtype(np.int16))
uint16 = ScalarType("uint16", np.dtype(np.uint16))
uint64 = ScalarType("uint64", np.dtype(np.uint64))
float16 = ScalarType("float16", np.dtype(np.float16))
WEAK_INT = WeakType("i")
WEAK_FLOAT = WeakType("f")

SCALARS: tuple[ScalarType, ...] = (bool_, int32, uint32, int64, float32, float64)
SCALARS += (int8, uint8, int16, uint16, uint64, float16)
# complex: (re, im) pairs of float32 / float64, laid out as NumPy's (and as float2 / double2 in C)
complex64 = ScalarType("complex64", np.dtype(np.complex64))
complex128 = ScalarType("complex128", np.dtype(np.complex128))
WEAK_COMPLEX = WeakType("c")  # a Python complex literal (1j): complex64 with float32, per NEP 50
SCALARS += (complex64, complex128)
_BY_DTYPE = {t.dtype: t for t in SCALARS}


def _bf16_floats(bits: Any) -> np.ndarray:
    """bfloat16 bit patterns as the float32 values they are (the upper half of a float32)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _bf16_bits(x: Any) -> np.ndarray:
    """float32 values rounded to bfloat16, to nearest even, as bit patterns; a NaN stays a NaN
    of its sign (made quiet), as ``__float2bfloat16_rn`` and ml_dtypes do."""
    x = np.asarray(x, np.float32, order="C")  # a 0-d value stays 0-d
    u = x.view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    quiet = ((u >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16)
    return np.where(np.isnan(x), quiet, rounded)


@dataclass(frozen=True, repr=False)
class StorageType(ScalarType):
    """A type arrays store and registers never hold: reading an element gives a ``value``
    (bfloat16: a float32), storing one rounds to the type.  ``dtype`` is that of the stored
    bits (uint16), which the simulator's memory holds; C converts with the dialect's
    ``element_loads``/``element_stores``."""

    value: ScalarType = float32
    to_value: Any = None  # bits -> values (NumPy)
    from_value: Any = None  # values -> bits, rounded (NumPy)

    @property
    def kind(self) -> str:
        return "f"

    def __call__(self, value: Any) -> Any:
        """On the host, ``bfloat16(x)``: the float32 value of ``x`` rounded to bfloat16."""
        return self.to_value(self.from_value(value))[()]

    def bits(self, values: Any) -> np.ndarray:
        """Float values rounded to bfloat16, as a uint16 array of the bits (what a kernel's
        ``Array[bfloat16]`` parameter takes, beside an ``ml_dtypes.bfloat16`` array)."""
        return self.from_value(values)

    def floats(self, bits: Any) -> np.ndarray:
        """The type's bits (a uint16 or uint8 array, or ``ml_dtypes``' of the type) as float32 values."""
        bits = np.asarray(bits)
        return self.to_value(bits.view(self.dtype) if bits.dtype.itemsize == self.itemsize else bits)


bfloat16 = StorageType("bfloat16", np.dtype(np.uint16), float32, _bf16_floats, _bf16_bits)


def _fp8_values(exponent_bits: int, bias: int, ieee: bool) -> np.ndarray:
    """The float32 value of each of the 256 bit patterns of an 8-bit float with ``exponent_bits``
    (the rest of the 7 mantissa); ``ieee``: the top exponent holds inf and NaNs (e5m2), else only
    its all-ones mantissa is a NaN (e4m3fn: no inf)."""
    bits = np.arange(256)
    man_bits = 7 - exponent_bits
    e, m = (bits >> man_bits) & ((1 << exponent_bits) - 1), bits & ((1 << man_bits) - 1)
    top = (1 << exponent_bits) - 1
    value = np.where(e == 0, m * 2.0 ** (1 - bias - man_bits), (1 + m / 2**man_bits) * 2.0 ** (e - bias))
    if ieee:
        value = np.where(e == top, np.where(m == 0, np.inf, np.nan), value)
    else:
        value = np.where((e == top) & (m == (1 << man_bits) - 1), np.nan, value)
    return np.where(bits >> 7, -value, value).astype(np.float32)


class _Fp8:
    """An 8-bit float's two NumPy forms: bits -> float32 (a table), and float32 -> bits rounded to
    nearest even and saturated to the largest finite value (inf too), a NaN kept a NaN of its sign:
    CUDA's ``__nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...)`` and PTX's ``cvt.rn.satfinite``."""

    def __init__(self, exponent_bits: int, bias: int, ieee: bool, largest: int):
        self.table = _fp8_values(exponent_bits, bias, ieee)
        self.finite = self.table[: largest + 1].astype(np.float64)  # 0 .. the largest finite, ascending
        self.largest = largest

    def floats(self, bits: Any) -> np.ndarray:
        return self.table[np.asarray(bits, np.uint8)]

    def bits(self, x: Any) -> np.ndarray:
        x = np.asarray(x, np.float32)
        ax = np.abs(x).astype(np.float64)
        hi = np.clip(np.searchsorted(self.finite, ax), 1, self.largest)
        lo = hi - 1
        below, above = ax - self.finite[lo], self.finite[hi] - ax
        pick = np.where((above < below) | ((above == below) & (hi % 2 == 0)), hi, lo)
        pick = np.where(ax >= self.finite[-1], self.largest, pick)  # saturated (inf included)
        out = (pick | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)
        return np.where(np.isnan(x), np.where(np.signbit(x), 0xFF, 0x7F), out).astype(np.uint8)


_E4M3, _E5M2 = _Fp8(4, 7, False, 0x7E), _Fp8(5, 15, True, 0x7B)  # largest finite: 448, 57344
float8_e4m3fn = StorageType("float8_e4m3fn", np.dtype(np.uint8), float32, _E4M3.floats, _E4M3.bits)
float8_e5m2 = StorageType("float8_e5m2", np.dtype(np.uint8), float32, _E5M2.floats, _E5M2.bits)
STORAGE_TYPES = (bfloat16, float8_e4m3fn, float8_e5m2)  # by name: ml_dtypes' dtypes of the same names


class BarrierType(ScalarType):
    """sm_90's mbarrier (``semantics.mbarrier``): the element type of shared arrays of barriers,
    ``gk.shared(gk.mbarrier, n)``.  Its 64 bits are the hardware's, used only through the
    ``mbarrier_*`` functions and the copies that complete on it: never read, written or computed."""

    @property
    def kind(self) -> str:
        return "V"


mbarrier = BarrierType("mbarrier", np.dtype(np.uint64))


def value_type(t: ScalarType) -> ScalarType:
    """The type of a value read from (or stored into) an array of ``t``: float32 for bfloat16."""
    return t.value if isinstance(t, StorageType) else t


def from_dtype(dtype: Any, where: str = "") -> ScalarType:
    """The scalar type of a NumPy dtype, or a clear error naming the unsupported one."""
    if any(dtype is t for t in STORAGE_TYPES):  # (identity: NumPy's == takes a type for its .dtype)
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    for t in STORAGE_TYPES:  # ml_dtypes.bfloat16, float8_e4m3fn, float8_e5m2
        if dt is not None and dt.name == t.name and dt.itemsize == t.itemsize:
            return t
    if dt is None or dt not in _BY_DTYPE:
        names = ", ".join(t.name for t in SCALARS)
        raise KernelTypeError(f"unsupported element type {dtype!r}{where}; supported: {names}")
    return _BY_DTYPE[dt]


def python_type(obj: Any) -> ScalarType | None:
    """``int``/``float``/``bool``/``complex`` used as a type name: GPU widths (int32, float32, complex64)."""
    return {int: int32, float: float32, bool: bool_, complex: complex64}.get(obj)


def type_named(obj: Any) -> ScalarType | None:
    """The scalar type a name stands for where a kernel uses it as a type (a cast ``T(x)``, an
    annotation, an element type), or None: gpukern's own types; Python's ``int``/``float``/``bool``/
    ``complex`` (GPU widths: ``python_type``); NumPy's scalar classes and dtypes (``np.float32``,
    ``np.dtype("int64")``, ``np.intp``: their own widths), as Numba and CuPy kernels write them."""
    if isinstance(obj, ScalarType):
        return obj
    t = python_type(obj)
    if t is not None:
        return t
    if isinstance(obj, np.dtype) or isinstance(obj, type) and issubclass(obj, np.generic):
        try:
            return from_dtype(obj)
        except KernelTypeError:
            return None
    return None


def component(t: ScalarType) -> ScalarType:
    """The real type of a complex type's parts (float32 for complex64); ``t`` itself otherwise."""
    return {complex64: float32, complex128: float64}.get(t, t)


def complex_of(t: ScalarType) -> ScalarType:
    """The complex type whose parts are ``t`` (float64 -> complex128; float32 and narrower -> complex64)."""
    if t.is_complex:
        return t
    return complex128 if t.itemsize >= 8 else complex64


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


@dataclass(frozen=True)
class FragmentType(Type):
    """A warp's tile of a matrix for the matrix units (``gk.fragment``): ``use`` is 'a' (m x k),
    'b' (k x n) or 'accumulator' (m x n); ``elem`` the element type it holds (float32 in an a/b
    fragment means TF32); ``layout`` 'row' or 'col' for a/b (how memory holds the tile), None for an
    accumulator.  Which combinations exist is ``gpukern.semantics.mma.FRAGMENT_SHAPES``."""

    use: str
    m: int
    n: int
    k: int
    elem: ScalarType
    layout: str | None = None

    @property
    def rows(self) -> int:
        return self.k if self.use == "b" else self.m

    @property
    def cols(self) -> int:
        return self.k if self.use == "a" else self.n

    def __repr__(self) -> str:
        lay = f", layout={self.layout!r}" if self.layout else ""
        return f"fragment({self.use!r}, {self.m}, {self.n}, {self.k}, {self.elem.name}{lay})"


def materialize(t: Type, value: Any = None) -> ScalarType:
    """The concrete type a weak value gets when it must live in a register."""
    if isinstance(t, ScalarType):
        return t
    if t == WEAK_FLOAT:
        return float32
    if t == WEAK_COMPLEX:
        return complex64
    if value is not None and not (-(2**31) <= int(value) < 2**31):
        return int64
    return int32


def _np_arg(t: Type) -> Any:
    """What to hand ``numpy.result_type`` for a type: a dtype, or a weak Python scalar."""
    if isinstance(t, ScalarType):
        return t.dtype
    return {"f": 0.0, "c": 0j}.get(t.kind, 0)


def promote(a: Type, b: Type) -> Type:
    """NumPy 2's result type of a binary arithmetic operation on ``a`` and ``b``."""
    if isinstance(a, WeakType) and isinstance(b, WeakType):
        for kind, weak in (("c", WEAK_COMPLEX), ("f", WEAK_FLOAT)):
            if kind in (a.kind, b.kind):
                return weak
        return WEAK_INT
    return from_dtype(np.result_type(_np_arg(a), _np_arg(b)))


def math_float(t: ScalarType) -> ScalarType:
    """The float type a math function (a NumPy ufunc such as ``np.sqrt``) computes an operand of
    type ``t`` in: ``t`` itself for floats; for integers the smallest float that holds every value
    (NumPy's loops: bool, int8, uint8 -> float16; int16, uint16 -> float32; wider -> float64)."""
    if t.is_float:
        return t
    return from_dtype(np.sqrt.resolve_dtypes((t.dtype, None))[1])


def compute_type(t: ScalarType) -> ScalarType:
    """The type in which operations on ``t`` that the hardware has no instruction for (math
    functions, ``//``, ``%``, ``**``) compute, the result rounded back to ``t``: float32 for float16,
    as NumPy's half loops do; ``t`` itself otherwise."""
    return float32 if t == float16 else t


def join(a: Type | None, b: Type) -> Type:
    """The type of a variable assigned values of both types (same rule as promotion)."""
    if a is None or a == b:
        return b
    return promote(a, b)


def true_divide_type(a: Type, b: Type) -> Type:
    """``/`` is true division: integers divide as float64, like NumPy."""
    t = promote(a, b)
    if isinstance(t, WeakType):
        return WEAK_COMPLEX if t.is_complex else WEAK_FLOAT
    return t if t.is_float or t.is_complex else float64


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
        if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0:
            raise KernelTypeError(f"Array ndim must be an int, 0 or more, not {ndim!r}")
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


@dataclass(frozen=True)
class TupleType(Type):
    """A tuple of scalars: what a ``@func`` returning ``a, b`` or ``math.frexp(x)`` gives.

    Never the type of a user's variable: the front end holds a tuple result in a temporary
    (C: a small struct) and hands out its items, so everything else sees scalars."""

    items: tuple[ScalarType, ...]
    kind = "V"  # as NumPy's structured dtypes: neither an integer nor a float
    is_int = False
    is_float = False

    @property
    def name(self) -> str:
        return f"tuple[{', '.join(t.name for t in self.items)}]"

    @property
    def itemsize(self) -> int:
        return sum(t.itemsize for t in self.items)

    def __repr__(self) -> str:
        return self.name


# ---------------------------------------------------------------- records (structured dtypes)
@dataclass(frozen=True)
class RecordField:
    """One field of a record: its name, scalar type and byte offset in the record; ``shape`` is a
    sub-array field's (``("h", np.float32, (3, 2))``: a C array member), () for a scalar."""

    name: str
    type: ScalarType
    offset: int
    shape: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        """Scalars in the field: 1, or the sub-array's size."""
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.type.itemsize * self.count


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
        def one(f: RecordField) -> str:
            return f"{f.name}: {f.type.name}" + (f"[{', '.join(map(str, f.shape))}]" if f.shape else "")

        return "record{" + ", ".join(one(f) for f in self.fields) + "}"

    def field(self, name: str) -> RecordField | None:
        return next((f for f in self.fields if f.name == name), None)

    def __repr__(self) -> str:
        return self.name


def _c_alignment(t: ScalarType) -> int:
    """The alignment a record's member of type ``t`` may have: its size, a complex number's
    component's (NumPy's: the generated C declares such a member with an under-aligned
    float2 / double2, ``codegen.tables``)."""
    return t.itemsize // 2 if t.is_complex else t.itemsize


def record_type(dtype: np.dtype, where: str = "") -> RecordType:
    """The record type of a structured dtype, or a KernelTypeError saying why a kernel cannot use it:
    a field that is not a scalar of a supported type or a sub-array of one (nested records), fields
    that overlap, or a layout C cannot reproduce (a field at an offset that is not a multiple of its
    C alignment, or an itemsize that is not a multiple of the widest field's: a packed dtype)."""
    fields = []
    for name in dtype.names or ():
        fdtype, offset = dtype.fields[name][:2]
        shape: tuple[int, ...] = ()
        if fdtype.subdtype is not None:
            fdtype, shape = fdtype.subdtype
        if fdtype.fields is not None or fdtype.subdtype is not None:
            raise KernelTypeError(
                f"record field {name!r}{where} is a nested record; kernels take records of scalar fields "
                "and sub-arrays of scalars",
                None,
                "flatten the nested record's fields into the outer one",
            )
        t = from_dtype(fdtype, f" (record field {name!r}{where})")
        align = _c_alignment(t)
        if offset % align:
            raise KernelTypeError(
                f"record field {name!r}{where} ({t.name}) is at byte {offset}, not a multiple of {align}: "
                "C cannot lay it out so (a packed dtype); make the dtype with numpy.dtype(..., align=True)"
            )
        fields.append(RecordField(name, t, int(offset), tuple(int(n) for n in shape)))
    if not fields:
        raise KernelTypeError(f"the structured dtype {dtype}{where} has no fields")
    fields.sort(key=lambda f: f.offset)
    for a, b in zip(fields, fields[1:]):
        if a.offset + a.nbytes > b.offset:
            raise KernelTypeError(f"record fields {a.name!r} and {b.name!r}{where} overlap")
    widest = max(_c_alignment(f.type) for f in fields)
    if dtype.itemsize % widest or fields[-1].offset + fields[-1].nbytes > dtype.itemsize:
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
