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


def signature(sig: Any) -> _t.Signature | None:
    """A Numba signature -- ``"int32(int32, float32[:])"`` or the object ``int32(int32, float32)`` --
    as a ``Signature`` whose result and arguments are gpukern's scalar types, or None where one names
    an array or no type this module knows; None for anything that is no signature.  The one reading
    of the string form (``cuda.jit``, ``vectorize``; ``guvectorize`` reads its array types too)."""
    if isinstance(sig, _t.Signature):
        scalar = [t if isinstance(t, _t.ScalarType) else None for t in (sig.result, *sig.args)]
        return _t.Signature(scalar[0], tuple(scalar[1:]))
    split = split_signature(sig)
    if split is None:
        return None

    def named(text: str) -> Any:
        found = type_text(text)
        return found[0] if found is not None and found[1] is None else None

    head, parts = split
    return _t.Signature(named(head), tuple(named(p) for p in parts))


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
