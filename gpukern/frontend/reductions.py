"""NumPy's reductions of a whole array in a kernel -- ``np.sum(a)``, ``np.prod(a)``, ``np.max(a)``,
``np.min(a)``, ``np.all(a)``, ``np.any(a)`` -- lowered to a loop over the elements in C order.

Nothing here defines an operation: each step is an expression of ``gpukern.semantics.ops``' entries
(``+``, ``*``, the comparisons, ``&``, ``|``), made as the front end makes them, and the result
type is NumPy's own (``np.sum`` of int32 is int64, of uint32 uint64, of bool int64).  A loop
accumulates in order, as Numba's loop does; NumPy sums floats pairwise, which gives the same
result for fewer than 8 elements and may differ in the last bits beyond.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..semantics.values import Static, Value, coerce, describe, literal
from ..types import ScalarType, bool_, from_dtype, int32, int64, value_type


@dataclass(frozen=True)
class Reduction:
    """One NumPy reduction: its name, the operator that folds an element in (a key of
    ``expressions.BINOPS``, or a comparison that picks the element: '>' for max), and its start
    (a value, or None for the first element)."""

    name: str
    step: type[ast.operator] | str
    start: Any

    def result_type(self, elem: ScalarType) -> ScalarType:
        """NumPy's type of the reduction of an array of ``elem``."""
        if self.start is None:  # max, min: the element type
            return elem
        if isinstance(self.start, bool):  # all, any
            return bool_
        return from_dtype(getattr(np, self.name)(np.zeros(1, elem.dtype)).dtype)  # sum, prod: NumPy's accumulator


REDUCTIONS: dict[int, Reduction] = {
    id(fn): r
    for r, fns in (
        (Reduction("sum", ast.Add, 0), (np.sum,)),
        (Reduction("prod", ast.Mult, 1), (np.prod,)),
        (Reduction("max", ">", None), (np.max, np.amax)),
        (Reduction("min", "<", None), (np.min, np.amin)),
        (Reduction("all", ast.BitAnd, True), (np.all,)),
        (Reduction("any", ast.BitOr, False), (np.any,)),
    )
    for fn in fns
}


def reduction_of(fn: Any) -> Reduction | None:
    return REDUCTIONS.get(id(fn))


def reduce_call(x: Any, node: ast.Call, r: Reduction, args: list[Value]) -> Value:
    """``np.<r>(a)`` of a whole array ``a``: an accumulator, and loops over every index of ``a``."""
    x.nargs(node, 1, f"numpy.{r.name}")
    a, loc = args[0], x.loc(node)
    if not isinstance(a, ir.ArrayRef):
        raise KernelTypeError(
            f"numpy.{r.name}() in a kernel reduces an array, not {describe(a)}",
            loc,
            "write the operation on numbers directly" if not isinstance(a, tuple) else None,
        )
    if not isinstance(a.type.elem, ScalarType):
        raise KernelTypeError(f"numpy.{r.name}() of a whole record array: reduce one field, a['x']", loc)
    elem = value_type(a.type.elem)
    if elem.itemsize == 2 and elem.is_float and r.start is not None and not isinstance(r.start, bool):
        raise KernelTypeError(
            f"numpy.{r.name}() of {a.type.elem.name} elements: NumPy accumulates them in float32",
            loc,
            "accumulate in a float32 local in a loop",
        )
    if elem.is_complex and r.start is None:
        raise KernelTypeError(f"numpy.{r.name}() of complex numbers: they are not ordered", loc)
    t = r.result_type(elem)
    stops = [x.shape_entry(node, a, d) for d in range(a.type.ndim)]
    if r.start is None and any(isinstance(s, Static) and s.value == 0 for s in stops):
        raise KernelTypeError(
            f"numpy.{r.name}() of the zero-size array {a.name!r}, which has no first element (NumPy raises)", loc
        )
    counter = int64 if any(not isinstance(s, Static) for s in stops) else int32  # a shape's type
    ks = [ir.Var(x.fresh("k"), counter, loc=loc) for _ in stops]
    for k in ks:
        x.f.var_types[k.name] = counter
    acc = ir.Var(x.fresh(r.name), t, loc=loc, temp=True)
    x.f.var_types[acc.name] = t

    def load(indices: list[ir.Expr]) -> ir.Load:
        return ir.Load(a, indices, elem, loc=loc)

    first = load([literal(loc, 0, counter) for _ in stops])
    x.emit(ir.Assign(acc, coerce(loc, first, t) if r.start is None else literal(loc, r.start, t), loc=loc))
    v = ir.Var(x.fresh("element"), elem, loc=loc, temp=True)
    x.f.var_types[v.name] = elem
    body: list[ir.Stmt] = [ir.Assign(v, load([ir.Var(k.name, counter, loc=loc) for k in ks]), loc=loc)]
    if isinstance(r.step, str):  # max, min: the element where it is beyond, or NaN (NumPy propagates NaN)
        picks = x.compare(node, r.step, v, acc)
        if elem.is_float:
            picks = ir.Logic("or", picks, x.compare(node, "!=", v, v), bool_, loc=loc)
        value: ir.Expr = ir.Select(picks, v, acc, t, loc=loc)
    else:
        operand = x.compare(node, "!=", v, Static(0)) if isinstance(r.start, bool) else v
        value = coerce(loc, x.binop(node, r.step, acc, operand), t)
    body.append(ir.Assign(acc, value, loc=loc))
    for k, stop in reversed(list(zip(ks, stops))):
        bound = coerce(loc, stop, counter)
        body = [ir.For(k, literal(loc, 0, counter), bound, literal(loc, 1, counter), 1, body, loc=loc)]
    for s in body:
        x.emit(s)
    return ir.Var(acc.name, t, loc=loc, temp=True)
