"""What a Python expression in a kernel lowers to, and the conversions between them.

An expression is either a compile-time value (``Static``: a number, a module, an
intrinsic, a ``@func``...), a run-time IR expression, an array (``ir.ArrayRef``), or one
of the in-between forms below.  The conversions follow NumPy 2: literals are weak and
take the type they meet; stores use 'same_kind' casting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelTypeError, Loc, warn_at
from ..ir import nodes as ir
from ..types import (
    WEAK_COMPLEX,
    WEAK_FLOAT,
    WEAK_INT,
    ScalarType,
    Type,
    WeakType,
    bool_,
    complex128,
    float64,
    from_dtype,
    int64,
    materialize,
    type_named,
)


@dataclass(frozen=True)
class Static:
    """A value known at compile time."""

    value: Any


@dataclass(frozen=True)
class ShapeOf:
    """``arr.shape`` before it is subscripted."""

    array: ir.ArrayRef


@dataclass(frozen=True)
class Partial:
    """``arr[i]`` of a multi-dimensional array, waiting for its remaining indices."""

    array: ir.ArrayRef
    indices: tuple[ir.Expr, ...]


@dataclass(frozen=True)
class RecordElement:
    """``a[i]`` of a record array: only its fields can be read or written (``a[i].x``, ``a[i]["x"]``)."""

    array: ir.ArrayRef
    indices: tuple[ir.Expr, ...]


Value = Any  # Static | ir.Expr | ir.ArrayRef | ShapeOf | Partial | RecordElement | tuple


def is_number(v: Any) -> bool:
    return isinstance(v, Static) and isinstance(v.value, (bool, int, float, complex, np.bool_, np.number))


def static_type(value: Any) -> Type:
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, int):
        return WEAK_INT
    if isinstance(value, float):
        return WEAK_FLOAT
    if isinstance(value, complex):
        return WEAK_COMPLEX
    return from_dtype(value.dtype)


def describe(v: Value) -> str:
    """A user-facing description of a front-end value, for error messages."""
    if isinstance(v, Static):
        return f"the Python object {v.value!r}"
    if isinstance(v, ir.ArrayRef) and v.temp:  # a shared()/local() not yet bound: its name is the compiler's
        return f"a new {v.type!r} array"
    if isinstance(v, ir.ArrayRef):
        return f"array {v.name!r} ({v.type!r})"
    if isinstance(v, ir.Expr):
        return f"a {v.type.name} value"
    if isinstance(v, ShapeOf):
        return f"{v.array.name}.shape"
    if isinstance(v, Partial):
        return f"a partly indexed array {v.array.name!r}"
    if isinstance(v, RecordElement):
        first = v.array.type.elem.fields[0].name
        return f"a record of {v.array.name!r} ({v.array.type.elem!r}: use one field, as {v.array.name}[i].{first})"
    return type(v).__name__


def scalar(loc: Loc, v: Value, what: str = "operand") -> Value:
    """``v`` if it is a number (static or run-time), else a type error saying what it is."""
    if is_number(v) or isinstance(v, ir.Expr):
        return v
    raise KernelTypeError(f"{what} must be a number, not {describe(v)}", loc)


def literal(loc: Loc, value: Any, t: ScalarType) -> ir.Lit:
    """A constant as a literal of type ``t``; a value that does not fit is a type error."""
    if t == bool_:
        return ir.Lit(bool(value), t, loc=loc)
    if t.is_complex:
        return ir.Lit(complex(t.dtype.type(value)), t, loc=loc)
    if isinstance(value, (complex, np.complexfloating)):
        raise KernelTypeError(f"the complex number {value!r} cannot become {t.name}", loc, "take .real or .imag")
    if t.is_int:
        if isinstance(value, (float, np.floating)):
            if not np.isfinite(value) or not float(value).is_integer():
                raise KernelTypeError(f"the float {value!r} cannot become {t.name} without a cast", loc)
        iv = int(value)
        info = np.iinfo(t.dtype)
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            if not info.min <= iv <= info.max:
                raise KernelTypeError(f"the integer {iv} does not fit in {t.name}", loc)
        return ir.Lit(int(np.array(iv).astype(t.dtype)), t, loc=loc)
    try:
        return ir.Lit(float(t.dtype.type(value)), t, loc=loc)
    except OverflowError:  # a Python int beyond every float
        raise KernelTypeError(f"the integer {value} is too large for {t.name}", loc) from None


def coerce(loc: Loc, v: Value, t: ScalarType) -> ir.Expr:
    """``v`` as an IR expression of type ``t`` (literal conversion or a cast)."""
    if isinstance(v, Static):
        return literal(loc, v.value, t)
    if v.type == t:
        return v
    return ir.Cast(v, t, loc=loc)


def materialized(loc: Loc, v: Value) -> ir.Expr:
    """A number as an IR expression: a weak literal gets the width a register would have."""
    v = scalar(loc, v)
    if isinstance(v, Static):
        return literal(loc, v.value, materialize(static_type(v.value), v.value))
    return v


@dataclass(frozen=True)
class Rules:
    """The two places where kernel languages give one value different meanings, chosen per kernel
    (compile options ``casting=`` and ``bools=``; the Numba and CuPy layers choose theirs).

    ``casting``: what a store, an atomic or a typed local takes: ``"same_kind"`` (gpukern's default,
    NumPy's ``same_kind``: a float never silently becomes an int, a signed int never a smaller
    unsigned one) or ``"unsafe"`` (every real number converts, as NumPy's ``a[i] = v`` of a NumPy
    scalar, Numba and CuPy do; ``gk.sanitize`` reports a conversion that changes the value).
    ``bools``: ``+ - * // % **`` of two bools: ``"numpy"`` (a bool: ``True + True`` is ``True``, with
    a warning) or ``"python"`` (an int64, as in Python and Numba: ``True + True`` is 2).
    ``negative_indices``: ``"error"`` (gpukern's default: an index below 0 is out of bounds, which
    the simulator reports) or ``"wrap"`` (it counts from the end, as in NumPy and Numba).
    ``unbound``: a variable read where some path leaves it unassigned: ``"error"`` (gpukern's default:
    refused at compile time) or ``"check"`` (compiled, starting at 0 in C; the simulator reports a
    thread that reads it unassigned, as Python's UnboundLocalError would: Numba's programs rely on
    paths the compiler cannot prove, ``if i % 4 == 0: ... elif i % 4 == 3: ...``).
    ``literals``: the type of a local (or loop variable) that only Python literals are assigned:
    ``"narrow"`` (gpukern's default: int32, float32, complex64, the GPU's natural widths) or ``"wide"``
    (int64, float64, complex128: Python's int and float, as Numba and CuPy type them).
    ``lanes``: the threads of a warp the variant is compiled for: 32 (NVIDIA's; gpukern's HIP and
    OpenCL keep 32-lane warps too) or 64 (AMD CDNA's wavefront, which the simulator runs to find
    code that assumes 32): ``warp_size()``, the width of masks and ballots (uint32 or uint64)."""

    casting: str = "same_kind"
    bools: str = "numpy"
    negative_indices: str = "error"
    unbound: str = "error"
    literals: str = "narrow"
    lanes: int = 32

    def materialize(self, t: Type, value: Any = None) -> ScalarType:
        """The concrete type of a weak value held at run time (a local only literals are assigned, an
        operation on such locals): ``types.materialize``'s, or Python's widths where ``literals`` is
        ``"wide"``."""
        if self.literals == "wide" and isinstance(t, WeakType):
            return {"f": float64, "c": complex128}.get(t.kind, int64)
        return materialize(t, value)

    def type_named(self, obj: Any) -> ScalarType | None:
        """``types.type_named``'s type for a cast ``obj(x)``, but Python's ``int``, ``float`` and
        ``complex`` at the literals' width (``materialize`` of their weak type): int32/float32/complex64,
        or Python's int64/float64/complex128 where ``literals`` is ``"wide"``."""
        for py, weak in ((int, WEAK_INT), (float, WEAK_FLOAT), (complex, WEAK_COMPLEX)):
            if obj is py:
                return self.materialize(weak)
        return type_named(obj)


NUMPY_RULES = Rules()


def lossy(src: Type, dst: ScalarType) -> bool:
    """Whether converting a ``src`` value to ``dst`` may change it beyond a float's rounding: a wrap,
    a lost fraction, an overflow to inf, a number other than 0 and 1 becoming a bool."""
    if isinstance(src, WeakType) or src == dst:
        return False
    if dst.is_float and (src.is_float or src.is_complex):  # rounding is not a change; overflow is
        return src.itemsize > dst.itemsize
    return not np.can_cast(src.dtype, dst.dtype, casting="safe")


def store_value(loc: Loc, v: Value, dst: ScalarType, what: str, rules: Rules = NUMPY_RULES) -> ir.Expr:
    """``v`` converted for a store into ``what`` of type ``dst`` (an array element, an atomic's
    operand, a typed local), under ``rules.casting``; a run-time conversion that may change the
    value is marked ``implicit`` for the simulator's check under ``gk.sanitize``."""
    src = v.type if isinstance(v, ir.Expr) else static_type(v.value)
    check_store_cast(loc, src, dst, what, rules.casting)
    if isinstance(v, Static) and rules.casting == "unsafe":
        try:
            return literal(loc, v.value, dst)
        except KernelTypeError:  # a constant that does not fit: converted as NumPy converts, and said
            with np.errstate(all="ignore"):
                converted = np.array(v.value).astype(dst.dtype)[()]
            warn_at(f"the constant {v.value!r} stored into {what} of type {dst.name} becomes {converted.item()!r}", loc)
            return ir.Lit(converted.item(), dst, loc=loc)
    out = coerce(loc, v, dst)
    if isinstance(out, ir.Cast) and lossy(src, dst):
        out.implicit = True
    return out


def check_store_cast(loc: Loc, src: Type, dst: ScalarType, what: str, casting: str = "same_kind") -> None:
    """Stores follow NumPy's 'same_kind' casting (a float never silently becomes an int), or with
    ``casting="unsafe"`` take every real number (a complex one never becomes real)."""
    if casting == "unsafe":
        ok = dst.is_complex or not src.is_complex
    elif isinstance(src, WeakType):
        ok = not (src.is_float and not dst.is_float and not dst.is_complex) and not (dst == bool_)
        ok = ok and (dst.is_complex or not src.is_complex)
    else:
        ok = bool(np.can_cast(src.dtype, dst.dtype, casting="same_kind"))
    if not ok:
        raise KernelTypeError(
            f"cannot store a {src!r} value into {what} of type {dst.name}",
            loc,
            f"convert explicitly, e.g. {dst.name}(value)",
        )
