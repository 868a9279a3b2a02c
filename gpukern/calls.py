"""Lowering of calls: casts, math functions, ``@func`` helpers and the intrinsics
(barrier, shared/local arrays, thread geometry, atomics).

A mixin of ``FunctionLowering``: each intrinsic ``gk.NAME`` is lowered by the
method ``call_NAME``, so an intrinsic's path from Python to IR is one method.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ir, lang, ops
from .errors import KernelTypeError
from .source import ParsedFunction
from .types import (
    WEAK_FLOAT,
    WEAK_INT,
    ArrayType,
    ScalarType,
    Type,
    WeakType,
    bool_,
    float64,
    from_dtype,
    int32,
    int64,
    materialize,
    promote,
    python_type,
)


@dataclass(frozen=True)
class Static:
    """A value known at compile time."""

    value: Any


@dataclass(frozen=True)
class ShapeOf:
    """``arr.shape`` before it is subscripted."""

    array: ir.ArrayRef


@dataclass(frozen=True)
class Partial:
    """``arr[i]`` of a multi-dimensional array, waiting for its remaining indices."""

    array: ir.ArrayRef
    indices: tuple[ir.Expr, ...]


Value = Any  # Static | ir.Expr | ir.ArrayRef | ShapeOf | Partial | tuple


def is_number(v: Any) -> bool:
    return isinstance(v, Static) and isinstance(v.value, (bool, int, float, np.bool_, np.number))


def static_type(value: Any) -> Type:
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, int):
        return WEAK_INT
    if isinstance(value, float):
        return WEAK_FLOAT
    return from_dtype(value.dtype)


class DeviceFunction:
    """A ``@func`` helper: callable from kernels and other helpers, specialised per call types."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._parsed: ParsedFunction | None = None

    @property
    def parsed(self) -> ParsedFunction:
        if self._parsed is None:
            from .source import parse_function

            self._parsed = parse_function(self.fn)
        return self._parsed

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gpukern func {self.__name__}>"


def func(fn: Any) -> DeviceFunction:
    """Decorate a helper callable from kernels (``__device__`` in CUDA)."""
    return DeviceFunction(fn)


def describe(v: Value) -> str:
    """A user-facing description of a front-end value, for error messages."""
    if isinstance(v, Static):
        return f"the Python object {v.value!r}"
    if isinstance(v, ir.ArrayRef):
        return f"array {v.name!r} ({v.type!r})"
    if isinstance(v, ir.Expr):
        return f"a {v.type.name} value"
    if isinstance(v, ShapeOf):
        return f"{v.array.name}.shape"
    if isinstance(v, Partial):
        return f"a partly indexed array {v.array.name!r}"
    return type(v).__name__


class CallLowering:
    """Call lowering for ``FunctionLowering`` (which provides visit, coerce, errors...)."""

    # ------------------------------------------------------------ calls
    def visit_Call(self, node: ast.Call) -> Value:
        callee = self.visit(node.func)
        if not isinstance(callee, Static):
            raise self.type_error(node, f"cannot call {describe(callee)}")
        fn = callee.value
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.syntax_error(node, "*args in calls are not supported in kernels")
        name = getattr(fn, "__name__", None) or getattr(fn, "name", repr(fn))
        if node.keywords:
            raise self.syntax_error(node, f"{name}() takes no keyword arguments in a kernel")
        if isinstance(fn, lang.Intrinsic):
            return getattr(self, f"call_{fn.name}")(node)
        args = [self.visit(a) for a in node.args]
        if isinstance(fn, DeviceFunction):
            call_args = [self.materialize_arg(a, v) for a, v in zip(node.args, args)]
            fd = self.compiler.device_function(fn, call_args, self.loc(node))
            call_args = [a for a in call_args if not isinstance(a, Static)]
            return ir.Call(fd, call_args, fd.ret, loc=self.loc(node))
        if isinstance(fn, ScalarType) or python_type(fn) is not None:
            return self.cast(node, fn if isinstance(fn, ScalarType) else python_type(fn), args)
        mf = ops.math_func(fn)
        if mf is not None:
            return {"float": self.math_call, "abs": self.call_abs, "same": self.min_max}[mf.typing](node, mf, args)
        if fn is len:
            if len(args) != 1 or not isinstance(args[0], ir.ArrayRef):
                raise self.type_error(node, "len() takes one array")
            return self.shape_entry(node, args[0], 0)
        if isinstance(fn, lang.KernelObject):
            raise self.type_error(node, f"kernel {name!r} cannot be called from device code", "make it a @func")
        if fn is range:
            raise self.syntax_error(node, "range() can only be used as the iterable of a for loop")
        if fn is builtins.print:
            raise self.syntax_error(node, "print() is not supported in kernels")
        raise self.type_error(
            node,
            f"cannot call {ast.unparse(node.func)} in a kernel: it is not a @func, intrinsic, math function or type",
            "decorate helpers with @gk.func",
        )

    def materialize_arg(self, node: ast.AST, v: Value) -> Value:
        if is_number(v):
            return self.materialized(node, v)
        return v

    def shape_entry(self, node: ast.AST, array: ir.ArrayRef, d: int) -> Value:
        """``array.shape[d]``: a constant for shared/local arrays, a kernel parameter otherwise."""
        if array.type.shape is not None:
            return Static(array.type.shape[d])
        return ir.Shape(array, d, int64, loc=self.loc(node))

    def nargs(self, node: ast.Call, n: int | tuple[int, ...], name: str) -> None:
        ok = (n,) if isinstance(n, int) else n
        if len(node.args) not in ok:
            want = " or ".join(str(x) for x in ok)
            raise self.type_error(node, f"{name}() takes {want} argument(s), {len(node.args)} given")

    def cast(self, node: ast.Call, t: ScalarType, args: list[Value]) -> Value:
        self.nargs(node, 1, t.name)
        v = self.scalar(node, args[0], "cast argument")
        if isinstance(v, Static):
            with np.errstate(all="ignore"):
                if t == bool_:
                    return Static(bool(v.value))
                if t.is_int and isinstance(v.value, float) and not np.isfinite(v.value):
                    raise self.type_error(node, f"cannot convert {v.value} to {t.name}")
                return Static(np.array(v.value).astype(t.dtype)[()])
        return v if v.type == t else ir.Cast(v, t, loc=self.loc(node))

    def math_call(self, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
        self.nargs(node, mf.nargs, mf.name)
        args = [self.scalar(node, a, f"{mf.name}() argument") for a in args]
        types = [self.type_of(a) for a in args]
        t = types[0]
        for u in types[1:]:
            t = promote(t, u)
        if all(isinstance(a, Static) for a in args):
            at = float64 if isinstance(t, WeakType) or not t.is_float else t
            out = self.fold(node, lambda *v: mf.evaluate(list(v), at)[()], *[a.value for a in args]).value
            if mf.predicate:
                return Static(bool(out))
            return Static(float(out) if isinstance(t, WeakType) else out)
        ft = materialize(t) if t.is_float else float64  # NumPy: integers compute in float64
        cargs = [self.coerce(node, a, ft) for a in args]
        return ir.MathCall(mf.name, cargs, bool_ if mf.predicate else ft, loc=self.loc(node))

    def call_abs(self, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
        self.nargs(node, 1, "abs")
        v = self.scalar(node, args[0])
        if isinstance(v, Static):
            return self.fold(node, abs, v.value)
        if v.type == bool_:
            v = ir.Cast(v, int64, loc=self.loc(node))
        return ir.MathCall("abs", [v], v.type, loc=self.loc(node))

    def min_max(self, node: ast.Call, mf: ops.MathFunc, args: list[Value]) -> Value:
        name, fn = mf.name, {"min": min, "max": max}[mf.name]  # Python's own on two literals
        if len(args) < 2:
            raise self.type_error(node, f"{name}() in a kernel takes two or more numbers")
        args = [self.scalar(node, a) for a in args]
        result = args[0]
        for b in args[1:]:
            if isinstance(result, Static) and isinstance(b, Static):
                result = self.fold(node, fn, result.value, b.value)
                continue
            t = materialize(promote(self.type_of(result), self.type_of(b)))
            result = ir.MathCall(name, [self.coerce(node, result, t), self.coerce(node, b, t)], t, loc=self.loc(node))
        return result

    # ------------------------------------------------------------ intrinsics
    def call_barrier(self, node: ast.Call) -> Value:
        self.nargs(node, 0, "barrier")
        self.emit(ir.Barrier(loc=self.loc(node)))
        return Static(None)

    def call_superstep(self, node: ast.Call) -> Value:
        raise self.syntax_error(node, "superstep() is used as 'with superstep():'")

    def call_global_id(self, node: ast.Call) -> Value:
        self.nargs(node, 1, "global_id")
        d = self.static_value(node.args[0])
        if d not in (0, 1, 2):
            raise self.type_error(node, f"global_id() takes a dimension 0, 1 or 2, not {d!r}")
        return ir.Special("global_id", d, int32, loc=self.loc(node))

    def call_shared(self, node: ast.Call) -> Value:
        if not self.is_kernel:
            raise self.syntax_error(
                node,
                "shared() arrays must be declared in the kernel",
                "declare it in the kernel and pass it to the @func",
            )
        return self.declare_array(node, "shared")

    def call_local(self, node: ast.Call) -> Value:
        return self.declare_array(node, "local")

    def declare_array(self, node: ast.Call, space: str) -> Value:
        self.nargs(node, 2, space)
        dtype = self.static_value(node.args[0], default=None)
        elem = dtype if isinstance(dtype, ScalarType) else python_type(dtype)
        if elem is None and (isinstance(dtype, np.dtype) or isinstance(dtype, type) and issubclass(dtype, np.generic)):
            try:
                elem = from_dtype(dtype)
            except KernelTypeError:
                elem = None
        if elem is None:
            raise self.type_error(
                node.args[0], f"{space}() needs an element type such as float32, not {ast.unparse(node.args[0])}"
            )
        shape = self.static_value(node.args[1], default=None)
        if shape is None:
            raise self.type_error(
                node.args[1],
                f"{space}() needs a compile-time shape",
                "make the sizes Const[int] parameters or module-level constants",
            )
        shape = shape if isinstance(shape, tuple) else (shape,)
        if not shape or len(shape) > 3 or not all(isinstance(s, (int, np.integer)) and s > 0 for s in shape):
            raise self.type_error(node.args[1], f"{space}() shape must be 1 to 3 positive integers, not {shape!r}")
        shape = tuple(int(s) for s in shape)
        # Declarations are hoisted to the top of the function (OpenCL requires it of
        # __local arrays); the assignment that binds the array gives it its name.
        self.tmp_counter += 1
        ref = ir.ArrayRef(f"{space}.{self.tmp_counter}", ArrayType(elem, len(shape), space, shape), loc=self.loc(node))
        self.arrays.append(ir.DeclArray(ref, loc=self.loc(node)))
        return ref

    def call_unroll(self, node: ast.Call) -> Value:
        raise self.syntax_error(node, "unroll() can only be the iterable of a for loop: for i in unroll(range(n))")

    def call_launch_bounds(self, node: ast.Call) -> Value:
        self.nargs(node, (1, 2), "launch_bounds")
        if not self.is_kernel:
            raise self.syntax_error(node, "launch_bounds() belongs in the kernel, not in a @func")
        bounds = tuple(self.static_value(a) for a in node.args)
        if not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b > 0 for b in bounds):
            raise self.type_error(node, f"launch_bounds() takes positive integers, not {bounds!r}")
        bounds = tuple(int(b) for b in bounds)
        if self.launch_bounds not in (None, bounds):
            raise self.type_error(node, f"launch_bounds{bounds} contradicts launch_bounds{self.launch_bounds}")
        self.launch_bounds = bounds
        return Static(None)

    def array_and_index(self, node: ast.Call, what: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
        """The array and element of an intrinsic's first two arguments (``f(a, i)``, ``f(a, (i, j))``)."""
        array = self.visit(node.args[0])
        if not isinstance(array, ir.ArrayRef):
            raise self.type_error(node.args[0], f"{what}() needs an array, not {describe(array)}")
        idx_node = node.args[1]
        fake = ast.Subscript(node.args[0], idx_node, ast.Load(), lineno=idx_node.lineno, col_offset=idx_node.col_offset)
        indices = self.index_list(fake)
        self.check_indices(node, array, indices)
        return array, indices

    def check_vector(self, node: ast.Call, array: ir.ArrayRef, indices: list[ir.Expr], width: Any, what: str) -> int:
        elem = array.type.elem
        if width not in (2, 4) or isinstance(width, bool):
            raise self.type_error(node, f"{what}() moves 2 or 4 elements at a time, not {width!r}")
        if elem == bool_ or elem.itemsize * width > 16:
            raise self.type_error(
                node, f"{what}() of {width} {elem.name} elements: vector accesses move 16 bytes at most, and no bools"
            )
        last = indices[-1]
        if isinstance(last, ir.Lit):
            if last.value % width:
                raise self.type_error(
                    node, f"{what}() at index {last.value}, which is not a multiple of {width} (misaligned)"
                )
            if array.type.shape is not None and last.value + width > array.type.shape[-1]:
                raise self.type_error(
                    node,
                    f"{what}() of elements {last.value}..{last.value + width - 1} is out of bounds "
                    f"for dimension {array.type.ndim - 1} of size {array.type.shape[-1]}",
                )
        return int(width)

    def call_vload(self, node: ast.Call) -> Value:
        self.nargs(node, 3, "vload")
        array, indices = self.array_and_index(node, "vload")
        width = self.check_vector(node, array, indices, self.static_value(node.args[2]), "vload")
        self.tmp_counter += 1
        name = f"{array.name}.v{self.tmp_counter}"
        self.emit(ir.VecLoad(name, array, indices, width, loc=self.loc(node)))
        return tuple(ir.Lane(name, k, array.type.elem, loc=self.loc(node)) for k in range(width))

    def call_vstore(self, node: ast.Call) -> Value:
        self.nargs(node, 3, "vstore")
        array, indices = self.array_and_index(node, "vstore")
        values = self.visit(node.args[2])
        if isinstance(values, Static) and isinstance(values.value, tuple):
            values = tuple(Static(v) for v in values.value)
        if not isinstance(values, tuple):
            raise self.type_error(node.args[2], f"vstore() stores a tuple of values, not {describe(values)}")
        self.check_vector(node, array, indices, len(values), "vstore")
        elem = array.type.elem
        out = []
        for v in values:
            v = self.scalar(node.args[2], v, "stored value")
            self.check_store_cast(node, self.type_of(v), elem, f"array {array.name!r}")
            out.append(self.coerce(node, v, elem))
        self.emit(ir.VecStore(array, indices, out, loc=self.loc(node)))
        return Static(None)

    def atomic(self, node: ast.Call, op: str) -> Value:
        n = 4 if op == "cas" else 3
        self.nargs(node, n, f"atomic_{op}")
        array, indices = self.array_and_index(node, f"atomic_{op}")
        if array.type.space == "local":
            raise self.type_error(node.args[0], "atomics work on global or shared arrays, not local() ones")
        elem = array.type.elem
        if elem.name not in ("int32", "uint32", "float32"):
            raise self.type_error(node.args[0], f"atomics support int32, uint32 and float32 arrays, not {elem.name}")
        operands = []
        for a in node.args[2:]:
            v = self.scalar(a, self.visit(a), f"atomic_{op}() operand")
            self.check_store_cast(a, self.type_of(v), elem, f"array {array.name!r}")
            operands.append(self.coerce(a, v, elem))
        return ir.Atomic(op, array, indices, operands, elem, loc=self.loc(node))

    def call_atomic_add(self, node: ast.Call) -> Value:
        return self.atomic(node, "add")

    def call_atomic_sub(self, node: ast.Call) -> Value:
        return self.atomic(node, "sub")

    def call_atomic_min(self, node: ast.Call) -> Value:
        return self.atomic(node, "min")

    def call_atomic_max(self, node: ast.Call) -> Value:
        return self.atomic(node, "max")

    def call_atomic_exch(self, node: ast.Call) -> Value:
        return self.atomic(node, "exch")

    def call_atomic_cas(self, node: ast.Call) -> Value:
        return self.atomic(node, "cas")
