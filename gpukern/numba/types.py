"""Numba's scalar type names (``numba.float32``, ``numba.types.int64``, the short ``f4``/``i8``):
gpukern's own types, so a cast ``float32(x)`` or a signature's name means the one definition."""

from __future__ import annotations

from .. import types as _t

float16 = _t.float16
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

    def __call__(self, *args: object) -> str:
        return "void"

    def __repr__(self) -> str:
        return "void"


void = none = _Void()

__all__ = [
    "float16", "float32", "f4", "float64", "f8", "double", "int8", "i1", "int16", "i2", "int32", "i4",
    "int64", "i8", "intp", "uint8", "u1", "uint16", "u2", "uint32", "u4", "uint64", "u8", "uintp",
    "boolean", "b1", "bool_", "complex64", "c8", "complex128", "c16", "void", "none",
]
