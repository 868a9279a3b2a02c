"""Record arrays in kernels: ``a[i].x``, ``a[i]["x"]`` and ``a["x"]`` (the field as an array),
sub-array fields (``a[i].h[k]``), one record passed alone (``r.x``: a 0-dimensional record array),
and whole records and sub-array fields assigned at once (``a[i] = a[j]``, ``r["h"] = src``).

A field of a record array is an ``ir.ArrayRef`` of the array's name whose ``record_field`` names
the field and whose type is an array of the field's scalar type: every consumer then treats
it as an array of numbers (loads, stores, atomics, bounds, races, the profiler), and only the
emitter (a struct member) and the simulator (a view of the field) look at ``record_field``.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..types import ArrayType, RecordType, int32
from .values import Partial, RecordElement, describe


def is_record_array(v: Any) -> bool:
    return isinstance(v, ir.ArrayRef) and isinstance(v.type.elem, RecordType)


def one_record(v: Any) -> Any:
    """A record passed alone (a 0-dimensional record array, from ``a[0]`` of a NumPy record array) is
    its element: ``r.x`` and ``r["x"]`` name its field, as ``a[i].x`` does."""
    if is_record_array(v) and v.type.ndim == 0:
        return RecordElement(v, ())
    return v


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
    shape = None if array.type.shape is None else tuple(array.type.shape) + f.shape
    t = ArrayType(f.type, array.type.ndim + len(f.shape), array.type.space, shape)
    return ir.ArrayRef(array.name, t, loc=x.loc(node), record_field=name, field_shape=f.shape)


def field_value(x: Any, node: ast.AST, base: RecordElement, name: str) -> Any:
    """``a[i].x`` read: the field's element, or for a sub-array field the sub-array (a ``Partial``
    of the field array, which ``[k]`` completes)."""
    array, indices = field_of(x, node, base, name)
    if array.field_shape:
        return Partial(array, tuple(indices))
    return x.element_load(node, array, indices)


def field_target(x: Any, node: ast.AST, base: Any, name: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
    """The element ``a[i].x = v`` stores to; a sub-array field takes a whole array (``whole_stores``)."""
    array, indices = field_of(x, node, base, name)
    if array.field_shape:
        raise KernelTypeError(
            f"{ast.unparse(node)} is a sub-array field of shape {array.field_shape}: it takes an array of that "
            "shape, not a number",
            x.loc(node),
            f"assign its elements one by one: {ast.unparse(node)}[k] = ...",
        )
    return array, indices


def field_of(x: Any, node: ast.AST, base: Any, name: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
    """The field array and indices of ``base.name`` / ``base["name"]`` where base is ``a[i]``."""
    base = one_record(base)
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


def _whole(v: Any) -> tuple[ir.ArrayRef, tuple[ir.Expr, ...], tuple[int, ...]] | None:
    """An array-like value as (array, leading indices, the shape left to index), or None: a
    sub-array field (``a[i].h``), an array of known rank (a sub-array field of a record passed
    alone, a plain array: its extents checked by the simulator), a row (``b[i]`` of a 2-D array)."""
    if isinstance(v, Partial):
        array, lead = v.array, tuple(v.indices)
    elif isinstance(v, ir.ArrayRef) and not is_record_array(v):
        array, lead = v, ()
    else:
        return None
    rest = array.type.ndim - len(lead)
    inner = array.field_shape[len(array.field_shape) - rest :] if array.field_shape else ()
    if len(inner) != rest:  # a plain array's extents: known only where static
        if array.type.shape is None:
            return array, lead, (None,) * rest  # type: ignore[return-value]
        inner = tuple(array.type.shape[len(lead) :])
    return array, lead, inner


def whole_stores(x: Any, node: ast.AST, target: Any, value: Any) -> list[tuple[ir.ArrayRef, list[ir.Expr], Any]] | None:
    """The element stores of assigning a whole record or sub-array field: ``a[i] = a[j]`` (records
    of one dtype, field by field), ``a[i].h = src`` / ``r["h"] = b[j].h`` (element by element; the
    source read first, as Python evaluates the right side before storing).  None: not such an
    assignment (the caller's usual checks apply)."""
    target, value = one_record(target), one_record(value)
    if isinstance(target, RecordElement):
        if not isinstance(value, RecordElement):
            return None
        t, v = target.array.type.elem, value.array.type.elem
        if t.dtype != v.dtype:
            raise KernelTypeError(
                f"cannot assign a record of {value.array.name!r} ({v!r}) to one of {target.array.name!r} ({t!r}): "
                "their dtypes differ",
                x.loc(node),
                f"assign the fields one by one: {target.array.name}[i].{t.fields[0].name} = ...",
            )
        pairs = []
        for f in t.fields:
            dst, src = field_array(x, node, target.array, f.name), field_array(x, node, value.array, f.name)
            for k in itertools.product(*map(range, f.shape)):
                sub = [ir.Lit(i, int32) for i in k]
                pairs.append((dst, [*target.indices, *sub], ([*value.indices, *sub], src)))
        return _loaded(x, node, pairs)
    dst = _whole(target)
    if dst is None or not dst[0].field_shape:
        return None
    array, lead, shape = dst
    src = _whole(value)
    if src is None:
        raise KernelTypeError(
            f"a sub-array field of {array.name!r} (shape {shape}) takes an array of that shape, not {describe(value)}",
            x.loc(node),
            "assign its elements one by one: r.h[k] = ...",
        )
    if len(src[2]) != len(shape) or any(n is not None and n != m for n, m in zip(src[2], shape)):
        raise KernelTypeError(
            f"cannot assign an array of shape {src[2]} to a sub-array field of shape {shape}", x.loc(node)
        )
    pairs = []
    for k in itertools.product(*map(range, shape)):
        sub = [ir.Lit(i, int32) for i in k]
        pairs.append((array, [*lead, *sub], ([*src[1], *sub], src[0])))
    return _loaded(x, node, pairs)


def _loaded(x: Any, node: ast.AST, pairs: list) -> list[tuple[ir.ArrayRef, list[ir.Expr], Any]]:
    """Every source element read (held in a temporary) before the first store."""
    held = [x.f.hold(node, x.element_load(node, src, list(idx)), "element") for _, _, (idx, src) in pairs]
    return [(dst, list(idx), v) for (dst, idx, _), v in zip(pairs, held)]
