"""Numba's scalar type names (``numba.float32``, ``numba.types.int64``, the short ``f4``/``i8``):
gpukern's own types, so a cast ``float32(x)`` or a signature's name means the one definition; and
``signature``, the one reading of a signature written with them."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .. import types as _t

float16 = f2 = half = _t.float16
float32 = f4 = _t.float32
float64 = f8 = double = _t.float64
int8 = i1 = _t.int8
int16 = i2 = _t.int16
int32 = i4 = _t.int32
int64 = i8 = intp = _t.int64
uint8 = u1 = _t.uint8
uint16 = u2 = _t.uint16
uint32 = u4 = _t.uint32
uint64 = u8 = uintp = _t.uint64
boolean = b1 = bool_ = _t.bool_
complex64 = c8 = _t.complex64
complex128 = c16 = _t.complex128


class _Void:
    """``void``: a kernel's result type in a signature (``void(float32[:])``)."""

    def __call__(self, *args: object) -> _t.Signature:
        return _t.Signature(self, tuple(args))  # (guvectorize reads the arguments' types)

    def __repr__(self) -> str:
        return "void"


void = none = _Void()


def split_signature(sig: Any) -> tuple[str, list[str]] | None:
    """``"void(float32[:, :], int64)"``: its result's text and each argument's (a comma inside ``[...]``
    is an array type's); None for anything that is no signature text."""
    if not isinstance(sig, str) or "(" not in sig or not sig.rstrip().endswith(")"):
        return None
    head, inner = sig.split("(", 1)
    parts, depth, cur = [], 0, ""
    for ch in inner.rstrip()[:-1]:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return head.strip(), [p.strip() for p in parts]


def type_text(text: str) -> tuple[_t.ScalarType, int | None] | None:
    """A type as a signature string writes it: ``"float32"`` -> (float32, None), ``"f4[:, ::1]"`` ->
    (float32, 2) (``::1`` is one dimension); None for a name this module does not know."""
    m = re.fullmatch(r"\s*(\w+)\s*(\[([:,\s]*(::1)?[:,\s]*)\])?\s*", text)
    t = globals().get(m.group(1)) if m else None
    if not isinstance(t, _t.ScalarType):
        return None
    return t, None if m.group(2) is None else m.group(3).count(":") - m.group(3).count("::")


def _read(text: str) -> Any:
    """One type as a signature string writes it: a scalar type, ``Array[T, n]`` for ``"T[:, :]"``, or
    None for a name this module does not know."""
    found = type_text(text)
    if found is None:
        return None
    return found[0] if found[1] is None else _t.ArrayType(found[0], found[1])


def argument_types(sig: Any) -> tuple[Any, ...] | None:
    """Each argument's type in a Numba signature -- ``"void(float32[:], int32)"``, the object
    ``void(float32[:], int32)`` or a tuple of types (``(float32[:], int32)``, strings among them) --
    a scalar type, an ``ArrayType``, or None where it names no type this module knows; None for
    anything that is no signature.  The one reading of a signature's arguments (``cuda.jit``,
    ``compile_ptx``, ``guvectorize``; ``signature`` keeps the scalar ones)."""
    if isinstance(sig, _t.Signature):
        return tuple(sig.args)
    if isinstance(sig, (tuple, list)):
        return tuple(_read(t) if isinstance(t, str) else t for t in sig)
    split = split_signature(sig)
    return None if split is None else tuple(_read(p) for p in split[1])


def signature(sig: Any) -> _t.Signature | None:
    """A Numba signature -- ``"int32(int32, float32[:])"`` or the object ``int32(int32, float32)`` --
    as a ``Signature`` whose result and arguments are gpukern's scalar types, or None where one names
    an array or no type this module knows; None for anything that is no signature (``cuda.jit(...,
    device=True)``, ``vectorize``)."""
    if not isinstance(sig, (str, _t.Signature)):
        return None
    args = argument_types(sig)
    if args is None:
        return None
    head = sig.result if isinstance(sig, _t.Signature) else _read(split_signature(sig)[0])  # type: ignore[index]

    def scalar(t: Any) -> Any:
        return t if isinstance(t, _t.ScalarType) else None

    return _t.Signature(scalar(head), tuple(scalar(t) for t in args))


def from_dtype(dtype: Any) -> Any:
    """``numba.np.numpy_support.from_dtype``: the type of a NumPy dtype (a record dtype's record type)."""
    return _t.array_element(np.dtype(dtype), "from_dtype")


def as_dtype(t: Any) -> np.dtype:
    """``numba.np.numpy_support.as_dtype``: a type's NumPy dtype."""
    return np.dtype(t.dtype)


__all__ = [
    "float16", "f2", "half", "float32", "f4", "float64", "f8", "double", "int8", "i1", "int16", "i2", "int32", "i4",
    "int64", "i8", "intp", "uint8", "u1", "uint16", "u2", "uint32", "u4", "uint64", "u8", "uintp",
    "boolean", "b1", "bool_", "complex64", "c8", "complex128", "c16", "void", "none",
]
