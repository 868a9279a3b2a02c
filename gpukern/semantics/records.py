"""Record arrays in kernels: ``a[i].x``, ``a[i]["x"]`` and ``a["x"]`` (the field as an array).

A field of a record array is an ``ir.ArrayRef`` of the array's name whose ``record_field`` names
the field and whose type is an array of the field's scalar type: every consumer then treats
it as an array of numbers (loads, stores, atomics, bounds, races, the profiler), and only the
emitter (a struct member) and the simulator (a view of the field) look at ``record_field``.
"""

from __future__ import annotations

import ast
from typing import Any

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..types import ArrayType, RecordType
from .values import RecordElement, describe


def is_record_array(v: Any) -> bool:
    return isinstance(v, ir.ArrayRef) and isinstance(v.type.elem, RecordType)


def field_name(x: Any, node: ast.expr) -> str | None:
    """The field a subscript names (``["x"]``), or None when it is not a string literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def field_array(x: Any, node: ast.AST, array: ir.ArrayRef, name: str) -> ir.ArrayRef:
    """``array["name"]``: the field as an array of its own type (the same shape)."""
    rec = array.type.elem
    assert isinstance(rec, RecordType)
    f = rec.field(name)
    if f is None:
        names = ", ".join(repr(g.name) for g in rec.fields)
        raise KernelTypeError(
            f"the records of {array.name!r} have no field {name!r}; their fields: {names}", x.loc(node)
        )
    t = ArrayType(f.type, array.type.ndim, array.type.space, array.type.shape)
    return ir.ArrayRef(array.name, t, loc=x.loc(node), record_field=name)


def field_of(x: Any, node: ast.AST, base: Any, name: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
    """The field array and indices of ``base.name`` / ``base["name"]`` where base is ``a[i]``."""
    if is_record_array(base):
        raise KernelTypeError(
            f"{base.name}[{name!r}] is the whole field, an array: assign to one element of it",
            x.loc(node),
            f"{base.name}[i].{name} = ... or {base.name}[{name!r}][i] = ...",
        )
    if not isinstance(base, RecordElement):
        raise KernelTypeError(f"{describe(base)} has no field {name!r}", x.loc(node))
    return field_array(x, node, base.array, name), list(base.indices)


def not_a_record(x: Any, node: ast.AST, array: ir.ArrayRef, what: str) -> None:
    """Refuse ``what`` (a store, an atomic, a vector access) on a whole record."""
    if is_record_array(array):
        first = array.type.elem.fields[0].name
        raise KernelTypeError(
            f"{what} of a whole record of {array.name!r} ({array.type.elem!r}) is not supported",
            x.loc(node),
            f'use one field at a time: {array.name}[i].{first}, or {array.name}["{first}"] as an array',
        )
