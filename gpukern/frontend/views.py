"""Array slices as views in kernels: ``v = a[1:3]``, ``a[i:]``, ``a[:n]``, ``a[::2]``, ``a[i, :]``.

A view is an ``ir.ArrayRef`` whose ``view`` (an ``ir.View``) says which elements of its base array it
is: per base dimension a start, a step, and the view's length (Python's slice clamping).  This module
is the one place that knows the mapping.  The front end keeps a view as an array of the view's own
type, so ``len(v)``, ``v.shape``, ``v.size`` and compile-time index checks need nothing new; every
element access through it (a load, store, atomic, vload or vstore) becomes an access of the base array
at the base's indices (``element``), whose ``ArrayRef`` still names the view.  So the C is the base's
own indexing (no pointer, no address space to get right), and in the simulator races, uninitialised
reads and the profiler see the base array's true elements; only the simulator's bounds check reads the
view, to check the index against the view's extent as well as the base's (``sim.memory``).

Starts and lengths are int64 values fixed where the slice is made (temporaries), as Python fixes
them: ``v = a[i:]; i += 1`` leaves ``v`` where it was.  A view passed to a ``@func`` is passed as its
base array and those values (``call_args``); the callee sees a view of its own parameter (``param``).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from ..errors import KernelSyntaxError, KernelTypeError
from ..ir import nodes as ir
from ..semantics.values import Partial, Static, Value, describe, is_number, scalar
from ..types import ArrayType, RecordType, bool_, int64

_Int = Any  # a Python int (Static's value) or an int64 ir.Expr


def has_slice(index: ast.expr) -> bool:
    """Whether a subscript ``a[index]`` slices (``a[1:3]``, ``a[i, :]``)."""
    return any(isinstance(e, ast.Slice) for e in (index.elts if isinstance(index, ast.Tuple) else [index]))


# ---------------------------------------------------------------- int64 arithmetic, folded where known
def _lit(v: _Int) -> ir.Expr:
    """``v`` as an expression of its own, each use a fresh tree (a node stands in one place only)."""
    return ir.copy_tree(v) if isinstance(v, ir.Expr) else ir.Lit(int(v), int64)


def _binop(op: str, a: _Int, b: _Int) -> _Int:
    if not isinstance(a, ir.Expr) and not isinstance(b, ir.Expr):
        return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if b else 0}[op]
    if op in "+-" and not isinstance(b, ir.Expr) and b < 0:  # x - -1 reads better as x + 1
        op, b = "-" if op == "+" else "+", -b
    if op in "+-" and not isinstance(b, ir.Expr) and b == 0 or op == "*" and not isinstance(b, ir.Expr) and b == 1:
        return a
    if op == "+" and not isinstance(a, ir.Expr) and a == 0 or op == "*" and not isinstance(a, ir.Expr) and a == 1:
        return b
    return ir.BinOp(op, _lit(a), _lit(b), int64)


def _select(cond: Any, a: _Int, b: _Int) -> _Int:
    """``a if cond else b``; ``cond`` a bool or a bool ir.Expr."""
    if not isinstance(cond, ir.Expr):
        return a if cond else b
    return ir.Select(cond, _lit(a), _lit(b), int64)


def _less(a: _Int, b: _Int) -> Any:
    if not isinstance(a, ir.Expr) and not isinstance(b, ir.Expr):
        return a < b
    return ir.Compare("<", _lit(a), _lit(b), bool_)


def _min(a: _Int, b: _Int) -> _Int:
    return _select(_less(b, a), b, a)


def _max(a: _Int, b: _Int) -> _Int:
    return _select(_less(a, b), b, a)


def _int64(x: Any, node: ast.AST, v: Value, what: str) -> _Int:
    """A slice bound or index as a Python int or an int64 expression."""
    v = scalar(x.loc(node), v, what)
    if isinstance(v, Static):
        if isinstance(v.value, bool) or not isinstance(v.value, int) and not hasattr(v.value, "__index__"):
            raise KernelTypeError(f"{what} must be an integer, not {v.value!r}", x.loc(node))
        return int(v.value)
    if not v.type.is_int and v.type != bool_:
        raise KernelTypeError(f"{what} must be an integer, not {v.type.name}", x.loc(node), "convert with int(...)")
    return v if v.type == int64 else ir.Cast(v, int64)


# ---------------------------------------------------------------- making views
def _parts(x: Any, node: ast.AST, ref: ir.ArrayRef) -> tuple[ir.ArrayRef, list[_Int], list[int], list[_Int | None]]:
    """``ref`` as (base, starts, steps, lengths) per base dimension (length None: a fixed dimension)."""
    if ref.view is None:
        n = ref.type.ndim
        lengths: list[_Int | None] = []
        for d in range(n):
            entry = x.shape_entry(node, ref, d)
            lengths.append(entry.value if isinstance(entry, Static) else entry)
        return ref, [0] * n, [1] * n, lengths
    v = ref.view
    starts = [_value(s) for s in v.starts]
    lengths_it = iter(v.lengths)
    lengths = [None if step == 0 else _value(next(lengths_it)) for step in v.steps]
    return v.base, starts, list(v.steps), lengths


def _value(e: ir.Expr) -> _Int:
    """A view's start or length as it is used again: a literal's value, or a fresh copy of its variable
    or of the base's shape entry (a row's length)."""
    if isinstance(e, ir.Lit):
        return int(e.value)
    if isinstance(e, ir.Shape):
        return ir.Shape(e.array, e.dim, e.type, loc=e.loc)
    assert isinstance(e, ir.Var)
    return ir.Var(e.name, e.type, temp=e.temp)


def _clamped(lo: _Int | None, hi: _Int | None, step: int, n: _Int, hold: Any) -> tuple[_Int, _Int]:
    """Python's ``slice(lo, hi, step).indices(n)`` as (start, length); ``hold(v, what)`` keeps a
    run-time value in a temporary (so the length reads the start rather than computing it again)."""
    if step > 0:
        low, high = 0, n
    else:
        low, high = -1, _binop("-", n, 1)

    def bound(v: _Int | None, default: _Int) -> _Int:
        if v is None:
            return default
        negative = _less(v, 0)
        return _select(negative, _max(_binop("+", v, n), low), _min(v, high))

    start = hold(bound(lo, 0 if step > 0 else high), "start")
    stop = hold(bound(hi, n if step > 0 else -1), "stop")
    span = _max(_binop("-", stop, start) if step > 0 else _binop("-", start, stop), 0)
    s = abs(step)
    length = span if s == 1 else _binop("//", _binop("+", span, s - 1), s)
    return start, length


def slice_array(x: Any, node: ast.AST, base: ir.ArrayRef | Partial, index: ast.expr | None, text: str) -> ir.ArrayRef:
    """``base[index]``, ``index`` holding at least one slice, or ``base`` a partly indexed array bound
    to a name (``r = a[i]``, ``index`` None): a view.  ``text`` is the kernel's for it, for messages."""
    ref = base.array if isinstance(base, Partial) else base
    if isinstance(ref.type.elem, RecordType):
        raise KernelTypeError(
            f"slices of the record array {ref.name!r} are not supported",
            x.loc(node),
            f"slice one field as an array: {ref.name}['field'][...]",
        )
    prior: list[Any] = [("index", i) for i in base.indices] if isinstance(base, Partial) else []
    elts = [] if index is None else index.elts if isinstance(index, ast.Tuple) else [index]
    items = prior + [("slice", e) if isinstance(e, ast.Slice) else ("index", e) for e in elts]
    root, starts, steps, lengths = _parts(x, node, ref)
    dims = [d for d in range(root.type.ndim) if lengths[d] is not None]
    if len(items) > len(dims):
        raise KernelTypeError(
            f"{ref.name!r} has {len(dims)} dimension(s) but {len(items)} index(es) or slice(s) were given", x.loc(node)
        )
    for j, (kind, item) in enumerate(items):
        d = dims[j]
        if kind == "index":
            value = item if isinstance(item, ir.Expr) else x.visit(item)
            i = _int64(x, item if isinstance(item, ast.AST) else node, value, "an array index")
            n = lengths[d]
            if not isinstance(i, ir.Expr) and not isinstance(n, ir.Expr) and not 0 <= i < n:
                raise KernelTypeError(f"index {i} is out of bounds for dimension {j} of size {n}", x.loc(node))
            starts[d] = _binop("+", starts[d], _binop("*", i, steps[d]))
            steps[d], lengths[d] = 0, None
            continue
        step = 1 if item.step is None else x.static_value(item.step, default=None)
        if not isinstance(step, int) or isinstance(step, bool):
            raise KernelTypeError(
                f"a slice's step must be a compile-time integer, not {ast.unparse(item.step)}",
                x.loc(item.step),
                "make it a literal, a Const[int] parameter or a module-level constant",
            )
        if step == 0:
            raise KernelTypeError("a slice's step must not be zero", x.loc(item.step), "use 1 for every element")
        lo, hi = (None if e is None else _bound(x, e, f"{root.name}_bound") for e in (item.lower, item.upper))
        hold = lambda v, what, at=item: _kept(x, at, v, f"{root.name}_{what}")  # noqa: E731
        start, length = _clamped(lo, hi, step, lengths[d], hold)
        starts[d] = _binop("+", starts[d], _binop("*", start, steps[d]))
        steps[d] *= step
        lengths[d] = length
    held_starts = [_held(x, node, s, f"{root.name}_start") for s in starts]
    held_lengths = [_held(x, node, n, f"{root.name}_len") for n in lengths if n is not None]
    static = all(isinstance(n, ir.Lit) for n in held_lengths)
    shape = tuple(int(n.value) for n in held_lengths) if static else None  # type: ignore[attr-defined]
    t = ArrayType(root.type.elem, len(held_lengths), root.type.space, shape)
    view = ir.View(f"({text})", root, held_starts, steps, held_lengths)
    return ir.ArrayRef(text, t, loc=x.loc(node), view=view)


def _bound(x: Any, e: ast.expr, name: str) -> _Int:
    """A slice bound, evaluated once, now (a temporary where it is computed at run time)."""
    return _kept(x, e, _int64(x, e, x.visit(e), "a slice bound"), name)


def _kept(x: Any, node: ast.AST, v: _Int, name: str) -> _Int:
    """``v``, a run-time one held in a temporary (a variable is kept as it is)."""
    if not isinstance(v, ir.Expr) or isinstance(v, ir.Var) and v.temp or isinstance(v, ir.Shape):
        return v  # a temporary, or an array's length: neither changes
    return _value(x.f.hold(node, v, name))


def _held(x: Any, node: ast.AST, v: _Int, base: str) -> ir.Expr:
    """A start or length, fixed now: a literal, or a temporary assigned here."""
    if not isinstance(v, ir.Expr):
        return ir.Lit(int(v), int64)
    return v if isinstance(v, ir.Var) and v.temp else x.f.hold(node, v, base)


def name_view(ref: ir.ArrayRef, name: str) -> None:
    """A view made by a slice takes the name it is first bound to (``v = a[1:3]``), for messages."""
    assert ref.view is not None
    if ref.view.label.startswith("("):
        ref.view.label = f"{name!r} {ref.view.label}"
        ref.name = name


def length(ref: ir.ArrayRef, d: int) -> Value:
    """``len(v)``, ``v.shape[d]``: the view's length along its dimension ``d`` (int64)."""
    assert ref.view is not None
    v = _value(ref.view.lengths[d])
    return v if isinstance(v, ir.Expr) else Static(v)


def element(
    x: Any, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr], what: str = ""
) -> tuple[ir.ArrayRef, list[ir.Expr]]:
    """The array and indices an access of ``array[indices]`` makes: for a view, its base's element
    (the ArrayRef is the base's, naming the view); any other array as it is.  ``what`` names a
    vector access (vload, vstore), which needs the view's elements to be the base's consecutive ones."""
    v = array.view
    if v is None:
        return array, indices
    if what in ("vload", "vstore") and (v.steps[-1] != 1):
        raise KernelTypeError(
            f"{what}() through the view {v.label} needs its last dimension to be the base array's last, "
            "with step 1 (consecutive elements)",
            x.loc(node),
            f"{what}() the base array {v.base.name!r} at the view's offset",
        )
    out: list[ir.Expr] = []
    k = iter(indices)
    for start, step in zip(v.starts, v.steps):
        s = _value(start)
        if step == 0:
            out.append(_lit(s))
            continue
        i = next(k)
        if isinstance(i, ir.Lit):
            i = int(i.value)
        if not isinstance(i, ir.Expr) and not isinstance(s, ir.Expr):
            out.append(_lit(i * step + s))
        elif step == 1 and not isinstance(s, ir.Expr):  # a constant offset: the index keeps its type
            index = i if s == 0 else x.binop(node, ast.Add, i, Static(s))
            out.append(index if isinstance(index, ir.Expr) else _lit(index.value))
        else:  # in int64, as the start is
            wide = i if not isinstance(i, ir.Expr) or i.type == int64 else ir.Cast(i, int64)
            out.append(_lit(_binop("+", _binop("*", wide, step), s)))
    return dataclasses.replace(v.base, view=v, loc=array.loc), out


# ---------------------------------------------------------------- views and @func calls
def call_args(ref: ir.ArrayRef) -> list[Any]:
    """What a call passes for view ``ref``: its base array, every start, and the lengths its type
    does not fix (the callee's parameters, ``param``)."""
    v = ref.view
    assert v is not None
    lengths = [] if ref.type.shape is not None else [_lit(_value(n)) for n in v.lengths]
    return [dataclasses.replace(v.base), *(_lit(_value(s)) for s in v.starts), *lengths]


def key(ref: ir.ArrayRef) -> Any:
    """What a callee's specialisation depends on for a view argument."""
    assert ref.view is not None
    return ("view", ref.view.base.type, tuple(ref.view.steps), ref.type)


def param(name: str, ref: ir.ArrayRef, taken: set[str]) -> ir.ArrayRef:
    """A callee's parameter ``name`` given view ``ref``: the view the callee sees, of its own array
    parameter; ``params`` lists the callee's parameters it stands for."""
    v = ref.view
    assert v is not None
    base = ir.ArrayRef(name, v.base.type)
    starts = [ir.Var(ir.fresh_name(f"{name}_start{d}", taken), int64) for d in range(len(v.starts))]
    if ref.type.shape is not None:
        lengths: list[ir.Expr] = [ir.Lit(n, int64) for n in ref.type.shape]
    else:
        lengths = [ir.Var(ir.fresh_name(f"{name}_len{j}", taken), int64) for j in range(len(v.lengths))]
    view = ir.View(f"{name!r} (a view passed to the function)", base, list(starts), list(v.steps), lengths)
    return ir.ArrayRef(name, ref.type, view=view)


def params(ref: ir.ArrayRef) -> list[Any]:
    """The callee's parameters a view parameter (made by ``param``) stands for, in ``call_args``' order."""
    v = ref.view
    assert v is not None
    return [v.base, *v.starts, *([] if ref.type.shape is not None else v.lengths)]


def refuse_slice_store(x: Any, node: ast.AST, target: ast.Subscript) -> KernelSyntaxError:
    """``a[1:3] += ...``: not supported; the message says what to write."""
    return KernelSyntaxError(
        f"an augmented assignment to a slice ({ast.unparse(target)} op= ...) is not supported in kernels",
        x.loc(node),
        f"update element by element: v = {ast.unparse(target)}, then for k in range(len(v)): v[k] += ...",
    )


def store_all(f: Any, node: ast.AST, target: ast.Subscript, value: Value) -> None:
    """``a[1:3] = x``: the number ``x`` (evaluated once, first, as Python does) stored into every
    element of the view, in a loop per dimension (``f``: the statement lowering)."""
    x = f.x
    if not is_number(value) and not isinstance(value, ir.Expr):
        raise KernelTypeError(
            f"{ast.unparse(target)} = ... stores one number into every element of the slice, not {describe(value)}",
            x.loc(node),
            f"copy element by element: v = {ast.unparse(target)}, then for k in range(len(v)): v[k] = w[k]",
        )
    value = f.hold(node, value, "value")
    base = x.visit(target.value)
    if not isinstance(base, (ir.ArrayRef, Partial)):
        raise KernelTypeError(f"cannot slice {describe(base)}", x.loc(target))
    view = slice_array(x, target, base, target.slice, ast.unparse(target))
    ks = [ir.Var(f.fresh("k"), int64, temp=True) for _ in range(view.type.ndim)]
    for k in ks:
        f.var_types[k.name] = int64
    outer, f.block = f.block, []
    try:
        f.store(node, view, [ir.Var(k.name, int64, temp=True) for k in ks], value)
        body = f.block
    finally:
        f.block = outer
    for d in reversed(range(view.type.ndim)):
        stop = _lit(_value(view.view.lengths[d]))
        body = [ir.For(ks[d], ir.Lit(0, int64), stop, ir.Lit(1, int64), 1, body, loc=x.loc(node))]
    f.block.extend(body)


def refuse_rebinding(x: Any, node: ast.AST, name: str, value: Value) -> KernelTypeError:
    what = describe(value)
    return KernelTypeError(
        f"{name!r} names an array bound outside this if or loop body; binding it to {what} here would make "
        "which array it names depend on the path the thread takes at run time, which gpukern does not support",
        x.loc(node),
        "use each array under its own name in each branch, or put the work in a @func and call it with the "
        "arrays in either order: step(buf_0, buf_1) / step(buf_1, buf_0)",
    )
