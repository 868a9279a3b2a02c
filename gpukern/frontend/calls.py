"""Lowering of calls: intrinsics (by their own ``lower``), ``@func`` helpers, casts, math.

One entry point, ``lower_call``, decides what is being called; each kind of callee is a
function here or, for the kernel language's intrinsics, a class in ``gpukern.language.core``.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import inspect
import math
import operator
from typing import Any

import numpy as np

from ..errors import KernelSyntaxError, KernelTypeError
from ..ir import nodes as ir
from ..language import core as lang
from ..semantics import formats, ops
from ..semantics.values import ShapeOf, Static, Value, coerce, describe, is_number, materialized, scalar
from ..types import (
    ScalarType,
    StorageType,
    TupleType,
    WeakType,
    bool_,
    complex128,
    component,
    compute_type,
    float64,
    from_dtype,
    int32,
    int64,
    materialize,
    math_float,
    promote,
    type_named,
)
from . import views
from .reductions import reduce_call, reduction_of

# Python's operator module: a named spelling of an operator, which means what the operator means
# (``operator.add(a, b)`` is ``a + b``, its in-place form too: a scalar has no place to update)
OPERATOR_BINARY: dict[Any, type] = {
    operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult, operator.truediv: ast.Div,
    operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod, operator.pow: ast.Pow, operator.lshift: ast.LShift,
    operator.rshift: ast.RShift, operator.and_: ast.BitAnd, operator.or_: ast.BitOr, operator.xor: ast.BitXor,
    operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult, operator.itruediv: ast.Div,
    operator.ifloordiv: ast.FloorDiv, operator.imod: ast.Mod, operator.ipow: ast.Pow, operator.ilshift: ast.LShift,
    operator.irshift: ast.RShift, operator.iand: ast.BitAnd, operator.ior: ast.BitOr, operator.ixor: ast.BitXor,
}  # fmt: skip
OPERATOR_BINARY.update({  # NumPy's ufuncs of the operators: np.add(a, b) is a + b
    np.add: ast.Add, np.subtract: ast.Sub, np.multiply: ast.Mult, np.true_divide: ast.Div,
    np.floor_divide: ast.FloorDiv, np.remainder: ast.Mod, np.power: ast.Pow, np.left_shift: ast.LShift,
    np.right_shift: ast.RShift, np.bitwise_and: ast.BitAnd, np.bitwise_or: ast.BitOr, np.bitwise_xor: ast.BitXor,
})  # fmt: skip
OPERATOR_COMPARE = {operator.lt: "<", operator.le: "<=", operator.eq: "==", operator.ne: "!=", operator.ge: ">=",
                    operator.gt: ">"}  # fmt: skip
OPERATOR_COMPARE.update({np.less: "<", np.less_equal: "<=", np.equal: "==", np.not_equal: "!=",
                         np.greater_equal: ">=", np.greater: ">"})  # fmt: skip
OPERATOR_UNARY: dict[Any, type] = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.invert: ast.Invert,
                                   operator.inv: ast.Invert, operator.not_: ast.Not, np.negative: ast.USub,
                                   np.positive: ast.UAdd, np.invert: ast.Invert}  # fmt: skip


def operator_call(x: Any, node: ast.Call, fn: Any, values: list[Value] | None) -> Value:
    """``operator.add(a, b)``, ``operator.lt(a, b)``, ``operator.neg(a)``: the operator itself."""
    n = 1 if fn in OPERATOR_UNARY else 2
    name = f"{'np' if isinstance(fn, np.ufunc) else 'operator'}.{fn.__name__}"
    x.nargs(node, n, name)
    if fn in OPERATOR_UNARY:
        if values is not None:  # (already lowered: the operator's expression on a placeholder is not needed)
            raise KernelTypeError(f"{name} passed through a function is not supported", x.loc(node), "call it directly")
        return x.visit(ast.copy_location(ast.UnaryOp(OPERATOR_UNARY[fn](), node.args[0]), node))
    a, b = values if values is not None else [x.visit(v) for v in node.args]
    if fn in OPERATOR_COMPARE:
        return x.compare(node, OPERATOR_COMPARE[fn], a, b)
    return x.binop(node, OPERATOR_BINARY[fn], a, b)


# cmath's functions that are compositions of the parts' (no rounding of their own): a complex number
# is NaN (infinite) where a part is, finite where both are; its phase is atan2 of its parts
CMATH_PARTS = {cmath.isnan: ("or", math.isnan), cmath.isinf: ("or", math.isinf), cmath.isfinite: ("and", math.isfinite)}


def cmath_call(x: Any, node: ast.Call, fn: Any, args: list[Value]) -> Value:
    """``cmath.isnan/isinf/isfinite(z)``, ``cmath.phase(z)`` and ``cmath.polar(z)`` (``(abs(z),
    phase(z))``) of a complex or real number, from ``z.real``, ``z.imag`` and the math functions."""
    x.nargs(node, 1, f"cmath.{fn.__name__}")
    (z,) = args
    if not (is_number(z) or isinstance(z, ir.Expr)):
        raise KernelTypeError(f"cmath.{fn.__name__}() takes a number, not {describe(z)}", x.loc(node))
    loc = x.loc(node)
    if x.type_of(z).is_complex:
        re = ir.MathCall("real", [z], ops.COMPLEX["real"].result_type(z.type), loc=loc)
        im = ir.MathCall("imag", [ir.copy_tree(z)], ops.COMPLEX["imag"].result_type(z.type), loc=loc)
    else:
        re, im = z, Static(0.0)
    if fn in CMATH_PARTS:
        op, part = CMATH_PARTS[fn]
        a, b = call_of(x, part, node, [re]), call_of(x, part, node, [im])
        if isinstance(b, Static) or isinstance(a, Static):  # (a real number: its imaginary part is 0)
            return a if isinstance(b, Static) and (b.value if op == "and" else not b.value) else b
        return ir.Logic(op, a, b, bool_, loc=loc)
    pair = ast.copy_location(ast.Call(node.func, [node.args[0]] * 2, []), node)  # (atan2's two operands)
    phase = call_of(x, math.atan2, pair, [im, ir.copy_tree(re)])
    if fn is cmath.phase:
        return phase
    return (call_of(x, builtins.abs, node, [ir.copy_tree(z)]), phase)


def lower_call(x: Any, node: ast.Call) -> Value:
    """A call in a kernel; ``x`` is the ``ExpressionLowering`` of the function being lowered."""
    callee = x.visit(node.func)
    if not isinstance(callee, Static):
        raise KernelTypeError(f"cannot call {describe(callee)}", x.loc(node))
    return call_of(x, callee.value, node)


def call_of(x: Any, fn: Any, node: ast.Call, values: list[Value] | None = None) -> Value:
    """The call ``node`` of ``fn`` (what its callee names, or what an intrinsic stands for:
    ``Lowering.call``), its arguments ``node``'s, or ``values`` already lowered (for a function,
    a type or a math function; an intrinsic reads its argument nodes itself)."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        if isinstance(fn, lang.Intrinsic) or values is not None:
            raise KernelSyntaxError("*args in calls are not supported in kernels", x.loc(node))
        values = []  # f(*t) of a tuple t: its items, as Python spreads them
        for a in node.args:
            v = x.visit(a.value if isinstance(a, ast.Starred) else a)
            items = x.items_of(a, v) if isinstance(a, ast.Starred) else [v]
            if items is None:
                raise KernelSyntaxError(f"*{ast.unparse(a.value)}: only a tuple can be spread", x.loc(a))
            values += list(items)
    name = getattr(fn, "__name__", None) or getattr(fn, "name", repr(fn))
    if fn is builtins.print:
        return print_call(x, node)
    allowed = fn.keywords if isinstance(fn, lang.Intrinsic) else ()
    for kw in node.keywords:
        if kw.arg not in allowed:
            what = f"only {', '.join(a + '=' for a in allowed)}" if allowed else "no keyword arguments"
            raise KernelSyntaxError(f"{name}() takes {what} in a kernel", x.loc(node))
    if isinstance(fn, lang.Intrinsic):
        return fn.lower(x, node)
    if (getattr(fn, "__module__", None) == "_operator" or isinstance(fn, np.ufunc)) and (
        fn in OPERATOR_BINARY or fn in OPERATOR_COMPARE or fn in OPERATOR_UNARY
    ):
        return operator_call(x, node, fn, values)
    if fn is operator.abs:
        fn = builtins.abs
    if fn is np.dtype:  # np.dtype(t).type(v), as CuPy kernels write a cast: the dtype now, at compile time
        return dtype_call(x, node)
    args = values if values is not None else [x.visit(a) for a in node.args]
    if getattr(fn, "__module__", None) == "cmath" and (fn in CMATH_PARTS or fn is cmath.phase or fn is cmath.polar):
        return cmath_call(x, node, fn, args)
    if (fn is cmath.log or fn is math.log) and len(args) == 2:  # log(z, base): log(z) / log(base), as Python
        one = ast.copy_location(ast.Call(node.func, [node.args[0]], []), node)
        return x.binop(node, ast.Div, call_of(x, fn, one, args[:1]), call_of(x, fn, one, args[1:]))
    if isinstance(fn, lang.DeviceFunction):
        return device_call(x, node, fn, args)
    if fn is builtins.round:
        return round_call(x, node, args)
    if fn is builtins.pow:  # Python's pow(a, b) is a ** b (ints stay ints; math.pow is the float function)
        if len(args) == 3:
            raise KernelTypeError("pow(a, b, mod) is not supported in kernels", x.loc(node), "write a ** b % mod")
        x.nargs(node, 2, "pow")
        return x.binop(node, ast.Pow, args[0], args[1])
    cast_to = x.rules.type_named(fn)  # (int(x): the literals' width, Python's in the Numba and CuPy layers)
    if cast_to is not None:
        return cast(x, node, cast_to, args)
    reduction = reduction_of(fn)
    if reduction is not None:
        return reduce_call(x, node, reduction, args)
    mf = ops.math_func(fn)
    if mf is not None and getattr(fn, "__module__", None) == "math" and _any_complex(x, args):
        raise KernelTypeError(f"math.{name}() takes real numbers, as in Python", x.loc(node), f"use cmath.{name}()")
    if mf is not None:
        lower = {"float": math_call, "abs": abs_call, "same": min_max, "bits": bits_call, "int": bits_call}
        if mf.typing == "int" and mf.nargs > 1:
            return ints_call(x, node, mf, args)
        return lower[mf.typing](x, node, mf, args)
    if fn is len:
        if len(args) == 1 and isinstance(args[0], ShapeOf):  # len(a.shape): its entries need not be known
            return Static(args[0].array.type.ndim)
        items = x.items_of(node, args[0]) if len(args) == 1 else None
        if items is not None:
            return Static(len(items))
        if len(args) != 1 or not isinstance(args[0], ir.ArrayRef):
            raise KernelTypeError("len() takes one array or tuple", x.loc(node))
        if args[0].type.ndim == 0:
            raise KernelTypeError(f"len() of the 0-dimensional array {args[0].name!r}, as in NumPy", x.loc(node))
        return x.shape_entry(node, args[0], 0)
    if isinstance(fn, lang.KernelObject):
        device = getattr(fn, "device_function", None)  # Numba's: a @cuda.jit function a kernel calls is one
        if device is None:
            raise KernelTypeError(f"kernel {name!r} cannot be called from device code", x.loc(node), "make it a @func")
        return device_call(x, node, device, args)
    if fn is range:
        raise KernelSyntaxError("range() can only be used as the iterable of a for loop", x.loc(node))
    if inspect.isfunction(fn) and all(isinstance(a, Static) for a in args):
        return factory_call(x, node, fn, name, args)
    if getattr(fn, "__module__", None) == "cmath":
        raise KernelTypeError(
            f"cmath.{name}() is not supported in kernels: of cmath, kernels have exp, sqrt, log (and log(z, base)), "
            "log10, isnan, isinf, isfinite, phase and polar (and abs(z), z ** w, z.conjugate())",
            x.loc(node),
        )
    raise KernelTypeError(
        f"cannot call {ast.unparse(node.func)} in a kernel: it is not a @func, intrinsic, math function or type",
        x.loc(node),
        "decorate helpers with @gk.func",
    )


def factory_call(x: Any, node: ast.Call, fn: Any, name: str, args: list[Value]) -> Value:
    """A plain Python function called with constants only, that makes a device function
    (``make_op(10)(x, y)``, as Numba programs write): called now, at compile time; what it returns
    must be a ``@func`` or an intrinsic."""
    try:
        made = fn(*(a.value for a in args))
    except Exception as e:  # the user's own function failed: say so at the call
        raise KernelTypeError(
            f"{name}() called at compile time (its arguments are constants) raised {type(e).__name__}: {e}",
            x.loc(node),
        ) from None
    if isinstance(made, (lang.DeviceFunction, lang.Intrinsic)):
        return Static(made)
    raise KernelTypeError(
        f"cannot call {ast.unparse(node.func)} in a kernel: called at compile time it gives "
        f"{type(made).__name__}, not a @func (a Python function may only make device functions there)",
        x.loc(node),
        "decorate helpers with @gk.func",
    )


def device_call(x: Any, node: ast.Call, fn: lang.DeviceFunction, args: list[Value]) -> Value:
    loc = x.loc(node)
    for a, v in zip(node.args, args):
        if isinstance(v, ir.ArrayRef) and (v.view.base if v.view else v).record_field is not None:
            raise KernelTypeError(
                f"a record field as an array ({ast.unparse(a)}) cannot be passed to a @func",
                x.loc(a),
                f"pass the record array {v.name!r} itself and take the field in the @func",
            )
    # a number becomes the parameter's run-time value, but where the function needs it at compile time
    # (a shared array's shape): there the function is specialised on it
    names = [a.arg for a in fn.parsed.tree.args.args]
    if fn.arg_types is not None and len(fn.arg_types) == len(args):  # a declared signature: its conversions first
        args = [
            v if t is None or isinstance(v, ir.ArrayRef) else cast(x, _one_arg_call(node, a), t, [v])
            for a, v, t in zip(node.args, args, fn.arg_types)
        ]
    constant = {k for k, name in enumerate(names) if name in fn.compile_time_params}
    call_args = [
        materialized(x.loc(a), v) if is_number(v) and not (k in constant and isinstance(v, Static)) else v
        for k, (a, v) in enumerate(zip(node.args, args))
    ]
    fd = x.compiler.device_function(fn, call_args, loc)
    call_args = [p for a in call_args if not isinstance(a, Static) for p in _passed(a)]
    call = ir.Call(fd, call_args, fd.ret, loc=loc)
    if fd.optional:  # None on some paths: a local set where it returned a number
        return x.f.optional_result(call, fn.parsed.name, node)
    return tuple_items(x, node, call) if isinstance(fd.ret, TupleType) else call


def _one_arg_call(call: ast.Call, arg: ast.expr) -> ast.Call:
    """A call of one argument at ``arg``'s place: a signature's conversion is ``T(arg)``, the cast."""
    return ast.copy_location(ast.Call(func=call.func, args=[arg], keywords=[]), arg)


def _passed(arg: Any) -> list[Any]:
    """What the C call passes for an argument: a view is its base array, starts and lengths."""
    return views.call_args(arg) if isinstance(arg, ir.ArrayRef) and arg.view is not None else [arg]


def tuple_items(x: Any, node: ast.AST, value: ir.Expr) -> tuple[ir.Item, ...]:
    """A call that returns a tuple, evaluated now into a temporary (C: a struct), as its items:
    the front end passes them on like any tuple (``a, b = f(x)``, ``t = f(x); t[0]``)."""
    t = value.type
    assert isinstance(t, TupleType)
    holder = ir.Var(x.fresh("result"), t, temp=True)  # type: ignore[arg-type]
    x.f.var_types[holder.name] = t
    loc = x.loc(node)
    x.emit(ir.Assign(holder, value, loc=loc))
    return tuple(
        ir.Item(ir.Var(holder.name, t, temp=True, loc=loc), k, item, loc=loc)  # type: ignore[arg-type]
        for k, item in enumerate(t.items)
    )


def dtype_call(x: Any, node: ast.Call) -> Value:
    """``np.dtype(t)`` of a type known at compile time (a type, a ``Const``, a string literal): the
    dtype, whose ``.type`` casts."""
    x.nargs(node, 1, "np.dtype")
    arg = node.args[0]
    given = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else x.visit(arg)
    try:
        t = type_named(np.dtype(given)) if isinstance(given, str) else None
    except TypeError:
        t = None
    if isinstance(given, Static):
        t = type_named(given.value)
    if t is None:
        what = repr(given) if isinstance(given, str) else describe(given)
        raise KernelTypeError(
            f"np.dtype() in a kernel takes a scalar type known at compile time, not {what}",
            x.loc(node),
            "name the type (np.dtype(np.float32)) or pass it as a Const parameter",
        )
    return Static(t.dtype)


def cast(x: Any, node: ast.Call, t: ScalarType, args: list[Value]) -> Value:
    if t.is_complex and len(args) == 2:
        return complex_from_parts(x, node, t, args)
    x.nargs(node, 1, t.name)
    if isinstance(t, StorageType):
        raise KernelTypeError(
            f"{t.name} is a storage type: arrays hold it, values are {t.value.name}",
            x.loc(node),
            f"store the value into an Array[{t.name}] (it is rounded there), or convert with {t.value.name}(...)",
        )
    v = scalar(x.loc(node), args[0], "cast argument")
    if x.type_of(v).is_complex and not t.is_complex:
        raise KernelTypeError(
            f"cannot convert a complex number to {t.name}", x.loc(node), "take its .real, .imag or abs()"
        )
    if isinstance(v, Static):
        if t.is_int and isinstance(v.value, float) and not np.isfinite(v.value):
            raise KernelTypeError(f"cannot convert {v.value} to {t.name}", x.loc(node))
        if t == bool_:  # a typed bool, so operators on it fold with the table's meaning, not Python's
            return Static(np.bool_(v.value))
        return x.fold(node, lambda value: np.array(value).astype(t.dtype)[()], v.value)
    return v if v.type == t else ir.Cast(v, t, loc=x.loc(node))


def math_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """A math function, typed like NumPy's ufunc: float32 stays float32, integers compute in the
    float NumPy's loops use (``types.math_float``: int8 in float16, int16 in float32, int32 in float64)."""
    x.nargs(node, mf.nargs, mf.name)
    args = [scalar(x.loc(node), a, f"{mf.name}() argument") for a in args]
    fixed = [mf.operand_dtype(k, None) is not None for k in range(len(args))]  # ldexp's int exponent
    t = None
    for a, own in zip(args, fixed):
        if own and not (x.type_of(a).is_int and x.type_of(a) != bool_):
            raise KernelTypeError(f"{mf.name}() takes an integer here, not {describe(a)}", x.loc(node))
        if not own:
            t = x.type_of(a) if t is None else promote(t, x.type_of(a))
    if t.is_complex:
        return complex_math_call(x, node, mf, args, t)
    if all(isinstance(a, Static) for a in args):
        at = float64 if isinstance(t, WeakType) else math_float(t)
        if mf.results:  # a tuple: Python's numbers for literals, as math.frexp gives
            out = x.fold(node, lambda *v: mf.evaluate(list(v), at), *[a.value for a in args]).value
            items = tuple(np.asarray(o)[()] for o in out)
            return Static(tuple(o.item() for o in items) if isinstance(t, WeakType) else items)
        out = x.fold(node, lambda *v: mf.evaluate(list(v), at)[()], *[a.value for a in args]).value
        if mf.predicate:
            return Static(bool(out))
        return Static(float(out) if isinstance(t, WeakType) else out)
    ft = materialize(t) if t.is_float else math_float(materialize(t))
    loc = x.loc(node)
    if mf.results:  # computed in compute_type (float32 for float16), each item rounded back
        ct = compute_type(ft)
        cargs = [coerce(loc, a, from_dtype(mf.operand_dtype(k, ct.dtype))) for k, a in enumerate(args)]
        items = TupleType(tuple(from_dtype(d) for d in mf.result_dtypes(ct.dtype)))
        wanted = [from_dtype(d) for d in mf.result_dtypes(ft.dtype)]
        got = tuple_items(x, node, ir.MathCall(mf.name, cargs, items, loc=loc))  # type: ignore[arg-type]
        return tuple(g if g.type == w else ir.Cast(g, w, loc=loc) for g, w in zip(got, wanted))  # type: ignore
    cargs = [coerce(loc, a, from_dtype(mf.operand_dtype(k, ft.dtype))) for k, a in enumerate(args)]
    return ir.MathCall(mf.name, cargs, bool_ if mf.predicate else ft, loc=loc)


def print_call(x: Any, node: ast.Call) -> Value:
    """``print(...)`` of numbers and string literals, with literal ``sep=``/``end=``: one
    ``ir.Print`` whose texts hold the strings, separators and end, and whose values are
    formatted as ``gpukern.semantics.formats`` says (constants are written now, as Python writes them)."""
    loc = x.loc(node)
    words = {"sep": " ", "end": "\n"}
    for kw in node.keywords:
        if kw.arg not in words:
            raise KernelSyntaxError(f"print() in a kernel takes sep= and end= only, not {kw.arg}=", loc)
        if not (isinstance(kw.value, ast.Constant) and (kw.value.value is None or isinstance(kw.value.value, str))):
            raise KernelTypeError(f"print()'s {kw.arg}= must be a string literal in a kernel", x.loc(kw.value))
        if kw.value.value is not None:
            words[kw.arg] = kw.value.value
    texts, values = [""], []
    for k, a in enumerate(node.args):
        if k:
            texts[-1] += words["sep"]
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            texts[-1] += a.value
            continue
        v = scalar(x.loc(a), x.visit(a), "a printed value (numbers and string literals only)")
        if isinstance(v, Static):  # a constant: Python's own text for a literal, the rule's for a typed one
            t = x.type_of(v)
            texts[-1] += str(v.value) if isinstance(t, WeakType) else formats.python_text(t, v.value)
            continue
        values.append(v)
        texts.append("")
    texts[-1] += words["end"]
    x.emit(ir.Print(texts, values, loc=loc))
    return Static(None)


def round_call(x: Any, node: ast.Call, args: list[Value]) -> Value:
    """Python's ``round``: halves to even (``ops.MATH['rint']``); ``round(x)`` of a float is an
    integer, int64 as Python's int would be (``int64(rint(x))``), ``round(x, 0)`` stays a float."""
    x.nargs(node, (1, 2), "round")
    loc = x.loc(node)
    v = scalar(loc, args[0], "round() argument")
    whole = len(args) == 1 or isinstance(args[1], Static) and args[1].value is None
    t = x.type_of(v)
    if not whole:
        nd = scalar(loc, args[1], "round()'s ndigits")
        nt = x.type_of(nd)
        if not nt.is_int or nt == bool_:
            raise KernelTypeError(f"round()'s ndigits must be an integer, not {nt!r}", loc)
        zero = isinstance(nd, Static) and nd.value == 0
        if t.is_float and not zero:
            return round_digits(x, node, v, nd)
        if not t.is_float and not zero:
            raise KernelTypeError("round(n, ndigits) of an integer in a kernel takes ndigits 0", loc)
    if not t.is_float:  # an integer rounds to itself (Python's round of a bool is an int)
        return coerce(loc, v, int64) if t == bool_ else v
    if isinstance(v, Static):
        return x.fold(node, round, v.value) if whole else x.fold(node, lambda f: round(f, 0), v.value)
    ft = materialize(t)
    near = ir.MathCall("rint", [coerce(loc, v, ft)], ft, loc=loc)
    return ir.Cast(near, int64, loc=loc) if whole else near


_POWERS_OF_TEN = np.array([10.0**k for k in range(23)])  # exact in float64: 10**22 is the last


def round_digits(x: Any, node: ast.Call, v: Value, digits: Value) -> Value:
    """``round(x, ndigits)`` of a float, as Numba computes it, in float64: scaled by ten to the
    ``ndigits`` (two factors past 1e22; the powers up to 1e22 from a table of exact ones, further
    ones by ``pow``), rounded half to even, scaled back; a scaled value that overflows leaves ``x``
    as it is; a negative ``ndigits`` divides first.  The result has ``x``'s type.  (Python's own
    ``round`` is correctly rounded in decimal and may differ in the last digit: ``round(2.675, 2)``
    is 2.67 there, 2.68 here and in Numba.)"""
    loc = x.loc(node)
    t = x.type_of(v)
    t = float64 if isinstance(t, WeakType) else t  # a literal is Python's float, as Numba reads it
    n = coerce(loc, digits, int64)
    f = coerce(loc, v, float64)
    lit = lambda value: ir.Lit(value, float64, loc=loc)  # noqa: E731
    mul = lambda a, b: ir.BinOp("*", a, b, float64, loc=loc)  # noqa: E731
    div = lambda a, b: ir.BinOp("/", a, b, float64, loc=loc)  # noqa: E731
    size = ir.MathCall("abs", [n], int64, loc=loc)
    small = ir.Compare("<=", size, ir.Lit(22, int64, loc=loc), bool_, loc=loc)
    table = x.compiler.constant_table("gk_powers_of_ten", _POWERS_OF_TEN, loc)
    exact = ir.Load(table, [ir.MathCall("min", [size, ir.Lit(22, int64, loc=loc)], int64, loc=loc)], float64, loc=loc)

    def power(k: ir.Expr) -> ir.Expr:
        return ir.MathCall("pow", [lit(10.0), ir.Cast(k, float64, loc=loc)], float64, loc=loc)

    beyond = ir.BinOp("-", size, ir.Lit(22, int64, loc=loc), int64, loc=loc)
    pow1 = ir.Select(small, exact, power(beyond), float64, loc=loc)
    pow2 = ir.Select(small, lit(1.0), lit(1e22), float64, loc=loc)
    y = mul(mul(f, pow1), pow2)
    up = ir.Select(
        ir.MathCall("isinf", [y], bool_, loc=loc),
        f,
        div(div(ir.MathCall("rint", [y], float64, loc=loc), pow2), pow1),
        float64,
        loc=loc,
    )
    whole_power = ir.Select(small, exact, power(size), float64, loc=loc)
    down = mul(ir.MathCall("rint", [div(f, whole_power)], float64, loc=loc), whole_power)
    negative = ir.Compare("<", n, ir.Lit(0, int64, loc=loc), bool_, loc=loc)
    out = ir.Select(negative, down, up, float64, loc=loc)
    return ir.Cast(out, t, loc=loc) if t != float64 else out


def bits_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """A function of an integer's bits (``popc``, ``brev``...): integers only, as in CUDA."""
    x.nargs(node, mf.nargs, mf.name)
    return bits_of(x, node, mf, scalar(x.loc(node), args[0], f"{mf.name}() argument"))


def bits_of(x: Any, node: ast.AST, mf: ops.MathFunc, v: Value, what: str | None = None) -> Value:
    """``mf`` (a 'bits' or 'int' entry of ``ops.MATH``) of the integer ``v``."""
    t = materialize(x.type_of(v))
    if not t.is_int or t == bool_:
        what = what or f"{mf.name}()"
        raise KernelTypeError(f"{what} takes an integer, not {t.name}", x.loc(node), "convert it: int32(...)")
    result = int32 if mf.typing == "bits" else t
    if isinstance(v, Static):
        return Static(mf.evaluate([v.value], t)[()].astype(result.dtype)[()])
    return ir.MathCall(mf.name, [v], result, loc=x.loc(node))


def ints_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    """An integer function of several operands (``sad``): integers only, computed in their promoted type."""
    x.nargs(node, mf.nargs, mf.name)
    values = [scalar(x.loc(node), a, f"{mf.name}() argument") for a in args]
    kinds = [materialize(x.type_of(v)) for v in values]
    for t in kinds:
        if not t.is_int or t == bool_:
            raise KernelTypeError(f"{mf.name}() takes an integer, not {t.name}", x.loc(node), "convert it: int32(...)")
    t = kinds[0]
    for u in kinds[1:]:
        t = materialize(promote(t, u))
    loc = x.loc(node)
    if all(isinstance(v, Static) for v in values):
        return Static(mf.evaluate([np.asarray(v.value, t.dtype) for v in values], t)[()])
    return ir.MathCall(mf.name, [coerce(loc, v, t) for v in values], t, loc=loc)


def abs_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
    x.nargs(node, 1, "abs")
    return abs_of(x, node, scalar(x.loc(node), args[0]))


def abs_of(x: Any, node: ast.AST, v: Value) -> Value:
    """Python's ``abs`` of a number (``ops.MATH["abs"]``): its own type, the modulus of a complex."""
    if isinstance(v, Static):
        return x.fold(node, abs, v.value)
    if v.type.is_complex:  # the modulus, a float of the parts' type (NumPy: hypot)
        return ir.MathCall("abs", [v], ops.MATH["abs"].result_type(v.type), loc=x.loc(node))
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
        if t.is_complex:
            raise KernelTypeError(f"{name}() of complex numbers: they are not ordered", loc, "compare abs(z)")
        result = ir.MathCall(name, [coerce(loc, result, t), coerce(loc, b, t)], t, loc=loc)
    return result


# ---------------------------------------------------------------- complex numbers
def complex_from_parts(x: Any, node: ast.Call, t: ScalarType, args: list[Value]) -> Value:
    """``complex64(re, im)`` / ``complex(re, im)``: two real numbers, the parts of type ``t``."""
    loc = x.loc(node)
    parts = [scalar(loc, a, f"{t.name}() argument") for a in args]
    if any(x.type_of(p).is_complex for p in parts):
        raise KernelTypeError(f"{t.name}(re, im) takes two real numbers", loc)
    f = component(t)
    if all(isinstance(p, Static) for p in parts):
        return Static(ops.COMPLEX["complex"].evaluate([p.value for p in parts], f)[()])
    return ir.MathCall("complex", [coerce(loc, p, f) for p in parts], t, loc=loc)


def complex_math_call(x: Any, node: ast.Call, mf: ops.MathFunc, args: list[Value], t: Any) -> Value:
    """A math function of a complex number (``cmath.exp(z)``): the entries with a complex form."""
    loc = x.loc(node)
    if mf.complex_helper is None:
        raise KernelTypeError(f"{mf.name}() is not defined on complex numbers in kernels", loc)
    ct = materialize(t)
    if all(isinstance(a, Static) for a in args):
        at = complex128 if isinstance(t, WeakType) else ct  # literals: Python's width, as for floats
        out = x.fold(node, lambda *v: mf.evaluate(list(v), at)[()], *[a.value for a in args]).value
        return Static(complex(out) if isinstance(t, WeakType) else out)
    return ir.MathCall(mf.name, [coerce(loc, a, ct) for a in args], mf.result_type(ct), loc=loc)


class _Conjugate(lang.Intrinsic):
    """``z.conjugate`` of one complex (or real) value, waiting for its call."""

    def __init__(self, value: Value):
        super().__init__("conjugate", "z.conjugate(): the complex conjugate")
        self.value = value

    def lower(self, cx: Any, node: ast.Call) -> Value:
        cx.nargs(node, 0, "conjugate")
        v = self.value
        if isinstance(v, Static):
            return Static(v.value.conjugate())
        return ir.MathCall("conj", [v], v.type, loc=cx.loc(node))


class _BitCount(lang.Intrinsic):
    """``n.bit_count`` of one integer, waiting for its call: Python's (and NumPy's) number of set
    bits of ``abs(n)``, that is ``popc(abs(n))`` (``ops.MATH``'s entries; ``abs`` of a signed MIN
    wraps to MIN, whose one set bit is the count of 2**(bits-1) too)."""

    def __init__(self, value: Value):
        super().__init__("bit_count", "n.bit_count(): the number of set bits of abs(n)")
        self.value = value

    def lower(self, cx: Any, node: ast.Call) -> Value:
        cx.nargs(node, 0, "bit_count")
        v = self.value
        t = cx.type_of(v)
        if isinstance(v, Static) and t.is_int and t != bool_:  # Python's int for a literal, else int32 as popc's
            count = abs(int(v.value)).bit_count()
            return Static(count if isinstance(t, WeakType) else np.int32(count))
        if materialize(t).kind == "i":
            v = abs_of(cx, node, v)
        return bits_of(cx, node, ops.MATH["popc"], v, ".bit_count()")


def int_attribute(x: Any, node: ast.Attribute, base: Value) -> Value:
    """``n.bit_count`` of a number (run-time or constant), the one method of integers kernels have."""
    assert node.attr == "bit_count"
    return Static(_BitCount(base))


def complex_attribute(x: Any, node: ast.Attribute, base: Value) -> Value:
    """``z.real``, ``z.imag`` (run-time complex ``z``) and ``z.conjugate`` (any number)."""
    if node.attr == "conjugate":
        return Static(_Conjugate(base))
    if node.attr in ("real", "imag"):
        mf = ops.COMPLEX[node.attr]
        return ir.MathCall(mf.name, [base], mf.result_type(base.type), loc=x.loc(node))
    raise KernelTypeError(f"{base.type.name} values have .real, .imag and .conjugate(), not .{node.attr}", x.loc(node))


def _any_complex(x: Any, args: list[Value]) -> bool:
    return any((is_number(a) or isinstance(a, ir.Expr)) and x.type_of(a).is_complex for a in args)
