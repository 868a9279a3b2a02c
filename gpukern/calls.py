"""Lowering of calls: intrinsics (by their own ``lower``), ``@func`` helpers, casts, math.

One entry point, ``lower_call``, decides what is being called; each kind of callee is a
function here or, for the kernel language's intrinsics, a class in ``gpukern.lang``.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

import numpy as np

from . import ir, lang, ops
from .errors import KernelSyntaxError, KernelTypeError
from .types import ScalarType, WeakType, bool_, float64, int32, int64, materialize, promote, python_type
from .values import Static, Value, coerce, describe, is_number, materialized, scalar


def lower_call(x: Any, node: ast.Call) -> Value:
    """A call in a kernel; ``x`` is the ``ExpressionLowering`` of the function being lowered."""
    callee = x.visit(node.func)
    if not isinstance(callee, Static):
        raise KernelTypeError(f"cannot call {describe(callee)}", x.loc(node))
    fn = callee.value
    if any(isinstance(a, ast.Starred) for a in node.args):
        raise KernelSyntaxError("*args in calls are not supported in kernels", x.loc(node))
    name = getattr(fn, "__name__", None) or getattr(fn, "name", repr(fn))
    allowed = fn.keywords if isinstance(fn, lang.Intrinsic) else ()
    for kw in node.keywords:
        if kw.arg not in allowed:
            what = f"only {', '.join(a + '=' for a in allowed)}" if allowed else "no keyword arguments"
            raise KernelSyntaxError(f"{name}() takes {what} in a kernel", x.loc(node))
    if isinstance(fn, lang.Intrinsic):
        return fn.lower(x, node)
    args = [x.visit(a) for a in node.args]
    if isinstance(fn, lang.DeviceFunction):
        return device_call(x, node, fn, args)
    if isinstance(fn, ScalarType) or python_type(fn) is not None:
        return cast(x, node, fn if isinstance(fn, ScalarType) else python_type(fn), args)
    mf = ops.math_func(fn)
    if mf is not None:
        lower = {"float": math_call, "abs": abs_call, "same": min_max, "bits": bits_call, "int": bits_call}
        return lower[mf.typing](x, node, mf, args)
    if fn is len:
        if len(args) != 1 or not isinstance(args[0], ir.ArrayRef):
            raise KernelTypeError("len() takes one array", x.loc(node))
        return x.shape_entry(node, args[0], 0)
    if isinstance(fn, lang.KernelObject):
        raise KernelTypeError(f"kernel {name!r} cannot be called from device code", x.loc(node), "make it a @func")
    if fn is range:
        raise KernelSyntaxError("range() can only be used as the iterable of a for loop", x.loc(node))
    if fn is builtins.print:
        raise KernelSyntaxError("print() is not supported in kernels", x.loc(node))
    raise KernelTypeError(
        f"cannot call {ast.unparse(node.func)} in a kernel: it is not a @func, intrinsic, math function or type",
        x.loc(node),
        "decorate helpers with @gk.func",
    )


def device_call(x: Any, node: ast.Call, fn: lang.DeviceFunction, args: list[Value]) -> Value:
    loc = x.loc(node)
    call_args = [materialized(x.loc(a), v) if is_number(v) else v for a, v in zip(node.args, args)]
    fd = x.compiler.device_function(fn, call_args, loc)
    call_args = [a for a in call_args if not isinstance(a, Static)]
    return ir.Call(fd, call_args, fd.ret, loc=loc)


def cast(x: Any, node: ast.Call, t: ScalarType, args: list[Value]) -> Value:
    x.nargs(node, 1, t.name)
    v = scalar(x.loc(node), args[0], "cast argument")
    if isinstance(v, Static):
        if t.is_int and isinstance(v.value, float) and not np.isfinite(v.value):
            raise KernelTypeError(f"cannot convert {v.value} to {t.name}", x.loc(node))
        if t == bool_:  # a typed bool, so operators on it fold with the table's meaning, not Python's
            return Static(np.bool_(v.value))
        return x.fold(node, lambda value: np.array(value).astype(t.dtype)[()], v.value)
    return v if v.type == t else ir.Cast(v, t, loc=x.loc(node))


def math_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """A math function, typed like NumPy's ufunc: float32 stays float32, integers compute in float64."""
    x.nargs(node, mf.nargs, mf.name)
    args = [scalar(x.loc(node), a, f"{mf.name}() argument") for a in args]
    t = x.type_of(args[0])
    for a in args[1:]:
        t = promote(t, x.type_of(a))
    if all(isinstance(a, Static) for a in args):
        at = float64 if isinstance(t, WeakType) or not t.is_float else t
        out = x.fold(node, lambda *v: mf.evaluate(list(v), at)[()], *[a.value for a in args]).value
        if mf.predicate:
            return Static(bool(out))
        return Static(float(out) if isinstance(t, WeakType) else out)
    ft = materialize(t) if t.is_float else float64
    cargs = [coerce(x.loc(node), a, ft) for a in args]
    return ir.MathCall(mf.name, cargs, bool_ if mf.predicate else ft, loc=x.loc(node))


def bits_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """A function of an integer's bits (``popc``, ``brev``...): integers only, as in CUDA."""
    x.nargs(node, mf.nargs, mf.name)
    v = scalar(x.loc(node), args[0], f"{mf.name}() argument")
    t = materialize(x.type_of(v))
    if not t.is_int or t == bool_:
        raise KernelTypeError(f"{mf.name}() takes an integer, not {t.name}", x.loc(node), "convert it: int32(...)")
    result = int32 if mf.typing == "bits" else t
    if isinstance(v, Static):
        return Static(mf.evaluate([v.value], t)[()].astype(result.dtype)[()])
    return ir.MathCall(mf.name, [v], result, loc=x.loc(node))


def abs_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    x.nargs(node, 1, "abs")
    v = scalar(x.loc(node), args[0])
    if isinstance(v, Static):
        return x.fold(node, abs, v.value)
    if v.type == bool_:
        v = ir.Cast(v, int64, loc=x.loc(node))
    return ir.MathCall("abs", [v], v.type, loc=x.loc(node))


def min_max(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """Python's ``min``/``max`` of two or more numbers, folded pairwise where both are constants."""
    name, fn = mf.name, {"min": min, "max": max}[mf.name]
    if len(args) < 2:
        raise KernelTypeError(f"{name}() in a kernel takes two or more numbers", x.loc(node))
    args = [scalar(x.loc(node), a) for a in args]
    result = args[0]
    for b in args[1:]:
        if isinstance(result, Static) and isinstance(b, Static):
            result = x.fold(node, fn, result.value, b.value)
            continue
        t = materialize(promote(x.type_of(result), x.type_of(b)))
        loc = x.loc(node)
        result = ir.MathCall(name, [coerce(loc, result, t), coerce(loc, b, t)], t, loc=loc)
    return result
