"""Loops over iterables, written as the loops over ``range`` the front end lowers: ``for v in a`` (a
1-D array), ``for v in t`` (a tuple: unrolled), ``enumerate``, ``zip`` (nested, with ``range`` among
them), and a NumPy ufunc given whole arrays and an output array as a statement (``np.sin(x, r)``:
every element, in the calling thread).  Each is rewritten as Python's own meaning in the syntax the
rest of the front end already lowers (a ``range`` loop whose body first assigns the items), so
``break``, ``continue``, definite assignment and the last value after the loop are Python's.  ``f``
is the ``FunctionLowering`` of the function being lowered (``gpukern.frontend.compiler``)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..ir import nodes as ir
from ..semantics.values import describe


def _call(name: str, args: list[ast.expr], loc: dict[str, int]) -> ast.Call:
    """``name(args...)`` of a builtin (``range``, ``len``, ``min``, ``max``), at ``loc``."""
    return ast.Call(ast.Name(name, ast.Load(), **loc), args, [], **loc)


def ufunc_into(f: Any, call: ast.Call) -> bool:
    """``np.sin(x, out)`` (or ``out=out``) as a statement, ``x`` and ``out`` 1-D arrays: the thread
    computes every element, as NumPy's ufunc with an output array (Numba's kernels may call one):
    the loop ``for k in range(len(out)): out[k] = np.sin(x[k])``.  False where it is no such call."""
    fn = f.x.static_value(call.func, default=None)
    if not isinstance(fn, np.ufunc) or fn.nout != 1:
        return False
    outs = [k.value for k in call.keywords if k.arg == "out"]
    if len(call.args) == fn.nin + 1 and not call.keywords:
        args, out = call.args[:-1], call.args[-1]
    elif len(call.args) == fn.nin and len(outs) == 1 and len(call.keywords) == 1:
        args, out = call.args, outs[0]
    else:
        return False
    loc = dict(lineno=call.lineno, col_offset=call.col_offset)
    names = []
    for a in [*args, out]:
        if not isinstance(a, ast.Name):  # evaluated once, before the loop
            name = f.fresh("_gk_uf")
            f.visit(ast.Assign([ast.Name(name, ast.Store(), **loc)], a, **loc))
            a = ast.Name(name, ast.Load(), **loc)
        names.append(a)
    values = [f.x.visit(a) for a in names]
    if not isinstance(values[-1], ir.ArrayRef):
        raise f.type_error(out, f"np.{fn.__name__}(..., out): the output must be an array")
    for a, v in zip(names, values):
        if isinstance(v, ir.ArrayRef) and v.type.ndim != 1:
            raise f.type_error(a, f"np.{fn.__name__} of whole arrays in a kernel takes 1-D arrays, "
                                  f"not the {v.type.ndim}-dimensional {a.id!r}",
                                  "loop over its elements")  # fmt: skip
    index = f.fresh("_gk_k")
    k = ast.Name(index, ast.Load(), **loc)
    items = [ast.Subscript(a, k, ast.Load(), **loc) if isinstance(v, ir.ArrayRef) else a
             for a, v in zip(names[:-1], values[:-1])]  # fmt: skip
    element = ast.Subscript(names[-1], k, ast.Store(), **loc)
    body = ast.Assign([element], ast.Call(call.func, items, [], **loc), **loc)
    count = _call("range", [_call("len", [names[-1]], loc)], loc)
    loop = ast.For(ast.Name(index, ast.Store(), **loc), count, [body], [], **loc)
    f.visit_For(ast.fix_missing_locations(loop))
    return True

def iterate(f: Any, node: ast.For) -> None:
    """``for v in a`` (a 1-D array, or a tuple), ``for i, v in enumerate(a)``, ``for x, y in
    zip(a, b)``, nested (``enumerate(zip(a, b))``), with ``range(...)`` among them: the loop Python
    runs, written as a loop over ``range(n)`` whose body first assigns the items (``v = a[k]``);
    over tuples only, the body once per item (a tuple's items may differ in type)."""
    count, item = iteration(f, node.iter)
    loc = dict(lineno=node.lineno, col_offset=node.col_offset)
    if isinstance(count, int):  # tuples: known items
        for s in node.body:
            for n in ast.walk(s):
                if isinstance(n, (ast.Break, ast.Continue)):
                    raise f.syntax_error(n, "break and continue cannot be used in a loop over a tuple")
        for k in range(count):
            f.assign(node.target, f.x.visit(item(ast.Constant(k, **loc))), node)
            for s in node.body:
                f.visit(s)
        return
    index = f.fresh("_gk_k")
    at = ast.Name(index, ast.Load(), **loc)
    body = [ast.Assign([node.target], item(at), **loc), *node.body]
    loop = ast.For(ast.Name(index, ast.Store(), **loc), _call("range", [count], loc), body, [], **loc)
    f.visit_For(ast.fix_missing_locations(loop))

def iteration(f: Any, it: ast.expr) -> tuple[Any, Any]:
    """(how many items, as an int where known or an expression; a function giving item k's
    expression) of an iterable ``for`` loops over."""
    loc = dict(lineno=it.lineno, col_offset=it.col_offset)
    fn = f.x.static_value(it.func, default=None) if isinstance(it, ast.Call) else None
    if fn is enumerate or fn is zip:
        many = fn is enumerate and not 1 <= len(it.args) <= 2
        if any(k.arg != "start" or fn is zip for k in it.keywords) or many:
            raise f.syntax_error(it, f"{fn.__name__}() takes the iterables only" if fn is zip
                                    else "enumerate(iterable, start=0)")  # fmt: skip
        parts = [iteration(f, a) for a in (it.args[:1] if fn is enumerate else it.args)]
        if not parts:
            raise f.syntax_error(it, "zip() of nothing")
        counts = [c for c, _ in parts]
        if all(isinstance(c, int) for c in counts):
            count: Any = min(counts)
        elif any(isinstance(c, int) for c in counts):
            raise f.type_error(it, "a loop over a tuple and an array together is not supported",
                                  "index the tuple with a constant, or loop over range()")  # fmt: skip
        else:
            count = counts[0] if len(counts) == 1 else _call("min", counts, loc)
        if fn is zip:
            return count, lambda k: ast.Tuple([f(k) for _, f in parts], ast.Load(), **loc)
        start = it.args[1] if len(it.args) > 1 else next((k.value for k in it.keywords), None)
        first = parts[0][1]

        def numbered(k: ast.expr) -> ast.expr:
            i = k if start is None else ast.BinOp(k, ast.Add(), start, **loc)
            return ast.Tuple([i, first(k)], ast.Load(), **loc)

        return count, numbered
    if fn is range:
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise f.syntax_error(it, "range() takes 1 to 3 positional arguments")
        lo, hi = (ast.Constant(0, **loc), it.args[0]) if len(it.args) == 1 else (it.args[0], it.args[1])
        step = it.args[2] if len(it.args) == 3 else ast.Constant(1, **loc)
        c = f.x.static_value(step, default=None)
        if not isinstance(c, int) or isinstance(c, bool) or c <= 0:
            raise f.type_error(step, "a range() zipped or enumerated needs a positive constant step")
        span = ast.BinOp(hi, ast.Sub(), lo, **loc)
        if c != 1:
            span = ast.BinOp(ast.BinOp(span, ast.Add(), ast.Constant(c - 1, **loc), **loc), ast.FloorDiv(),
                             ast.Constant(c, **loc), **loc)  # fmt: skip
        count = _call("max", [span, ast.Constant(0, **loc)], loc)
        return count, lambda k: ast.BinOp(lo, ast.Add(), ast.BinOp(k, ast.Mult(), step, **loc), **loc)
    if isinstance(it, ast.Tuple):  # a tuple written out: each item where the loop reaches it
        return len(it.elts), lambda k: it.elts[k.value]
    if not isinstance(it, ast.Name):  # evaluated once, as Python does: a name for it first
        name = f.fresh("_gk_it")
        f.visit(ast.Assign([ast.Name(name, ast.Store(), **loc)], it, **loc))
        it = ast.Name(name, ast.Load(), **loc)
    value = f.x.visit(it)
    items = f.x.items_of(it, value)
    if items is not None:
        return len(items), lambda k: ast.Subscript(it, k, ast.Load(), **loc)
    if isinstance(value, ir.ArrayRef):
        if value.type.ndim != 1:
            raise f.type_error(it, f"a loop over the {value.type.ndim}-dimensional array {it.id!r}",
                                  "loop over range(a.shape[0]) and index it")  # fmt: skip
        return _call("len", [it], loc), lambda k: ast.Subscript(it, k, ast.Load(), **loc)
    raise f.syntax_error(
        it,
        f"a kernel loops over range(...), unroll(range(...)), a 1-D array, a tuple, enumerate() or zip(), "
        f"not {describe(value)}",
    )
