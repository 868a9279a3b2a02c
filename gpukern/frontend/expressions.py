"""Python expressions -> typed IR expressions (or compile-time values).

Operations on ``Static`` numbers are evaluated right here through ``gpukern.semantics.ops``, the
same table the simulator runs and the emitter spells, so ``Const`` parameters, module
globals and single-assignment locals fold away with the meaning they have at run time.
Calls go to ``gpukern.frontend.calls``; intrinsics lower themselves (``gpukern.language.core``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CompileError, KernelSyntaxError, KernelTypeError, Loc, warn_at
from ..ir import nodes as ir
from ..language import core as lang
from ..language import mma as lang_mma
from ..semantics import ops
from ..semantics.records import field_array, field_name, field_value, is_record_array, not_a_record, one_record
from ..semantics.values import (
    Partial,
    RecordElement,
    ShapeOf,
    Static,
    Value,
    coerce,
    describe,
    is_number,
    materialized,
    scalar,
    static_type,
)
from ..types import Type, WeakType, bool_, int64, promote, true_divide_type, value_type
from . import views
from .calls import call_of, complex_attribute, int_attribute, lower_call
from .reductions import REDUCTIONS

_REDUCTION_NAMES = {r.name for r in REDUCTIONS.values()}  # np.sum(a) etc.; arrays have no such methods

# Python's operator nodes -> the symbols of their entries in gpukern.semantics.ops (which define them)
BINOPS: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
}
_CMPOPS: dict[type, str] = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class ExpressionLowering(ast.NodeVisitor):
    """Lowers the expressions of one function; ``f`` is its statement lowering
    (``frontend.FunctionLowering``), which holds the function's variables and emits statements."""

    def __init__(self, f: Any):
        self.f = f
        self.compiler = f.compiler
        self.rules = f.compiler.rules
        self.is_kernel = f.is_kernel
        self.loc = f.loc
        self.emit = f.emit
        self.declare = f.declare
        self.fresh = f.fresh
        self.set_launch_bounds = f.set_launch_bounds
        self.set_cluster = f.set_cluster

    @property
    def cluster(self) -> tuple[int, int, int] | None:
        """The kernel's cluster shape, once its ``cluster_dims()`` has been read (None before, or none)."""
        return self.f.cluster

    def generic_visit(self, node: ast.AST) -> Any:
        raise unsupported(self.loc(node), node)

    def nargs(self, node: ast.Call, n: int | tuple[int, ...], name: str) -> None:
        ok = (n,) if isinstance(n, int) else n
        if len(node.args) not in ok:
            want = " or ".join(str(x) for x in ok)
            raise KernelTypeError(f"{name}() takes {want} argument(s), {len(node.args)} given", self.loc(node))

    def static_value(self, node: ast.AST, default: Any = ...) -> Any:
        """The compile-time value of an expression, or ``default`` if it has none."""
        try:
            v = self.visit(node)
        except CompileError:
            if default is ...:
                raise
            return default
        if isinstance(v, Static):
            return v.value
        if default is ...:
            raise KernelTypeError(f"{ast.unparse(node)} must be a compile-time constant", self.loc(node))
        return default

    def type_of(self, v: Value) -> Type:
        """The type a value has for promotion: weak for literals and literal-only locals."""
        if isinstance(v, Static):
            return static_type(v.value)
        if isinstance(v, ir.Var) and isinstance(self.f.var_types.get(v.name), WeakType):
            return self.f.var_types[v.name]
        return v.type

    def fold(self, node: ast.AST, fn: Callable[..., Any], *values: Any) -> Static:
        """A constant computed now; a constant that cannot be is a compile error at ``node``."""
        try:
            with np.errstate(all="ignore"):
                return Static(fn(*values))
        except ZeroDivisionError:
            raise KernelTypeError("division by zero in a constant expression", self.loc(node)) from None
        except (OverflowError, ValueError, TypeError) as e:
            raise KernelTypeError(f"cannot evaluate constant expression: {e}", self.loc(node)) from None

    def inline_only(self, node: ast.AST, where: str, lower: Callable[[], Value]) -> Value:
        """``lower()``, for an expression Python evaluates again and again or maybe not at all
        (a while condition, an operand of and/or/if-else): what lowers to statements as well
        (a call returning a tuple is held in a temporary) would run once, before, instead."""
        before = len(self.f.block)
        value = lower()
        if len(self.f.block) != before:
            raise KernelSyntaxError(
                f"{where} cannot call a function that returns a tuple, nor reduce an array (numpy.sum...)",
                self.loc(node),
                "assign its result to variables first",
            )
        return value

    # ------------------------------------------------------------ names and data
    def visit_Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (bool, int, float, complex)) or node.value is None:
            return Static(node.value)
        raise KernelSyntaxError(f"{type(node.value).__name__} literals cannot be used in a kernel", self.loc(node))

    def visit_Name(self, node: ast.Name) -> Value:
        name, f = node.id, self.f
        if name in f.env:
            v = f.env[name]
            if isinstance(v, tuple):  # a tuple local: each use reads its item variables anew
                return _fresh_items(v, self.loc(node))
            return ir.Var(v.name, v.type, loc=self.loc(node), temp=v.temp) if isinstance(v, ir.Var) else v
        if name in f.var_types or name in f.bindings:
            raise KernelTypeError(f"{name!r} is used before it is assigned", self.loc(node))
        if name in f.block_arrays:
            raise KernelTypeError(
                f"{name!r} names an array or fragment bound inside an if or loop body, and is used after it",
                self.loc(node),
                "bind it at the top level of the function, or use it inside that body",
            )
        if name in f.block_vectors:
            raise KernelTypeError(
                f"{name!r} holds a vload() made inside an if or loop body and is used after it",
                self.loc(node),
                f"use it inside that body, or unpack it there into variables: x, y, z, w = {name}",
            )
        found, value = f.parsed.resolve_global(name)
        if not found:
            raise KernelTypeError(f"name {name!r} is not defined", self.loc(node))
        if isinstance(value, np.ndarray):
            return self.compiler.constant_table(name, value, self.loc(node))
        if _is_device_array(value):
            return f.captured_array(name, value, node)
        if isinstance(value, lang.Property):
            return value.read(self, node)
        return Static(value)

    def visit_Tuple(self, node: ast.Tuple) -> Value:
        values = tuple(self.visit(e) for e in node.elts)
        if all(isinstance(v, Static) for v in values):
            return Static(tuple(v.value for v in values))
        return values

    def items_of(self, node: ast.AST, v: Value) -> tuple[Value, ...] | None:
        """The items of a tuple value -- a tuple of values, a constant tuple, or ``a.shape`` -- or None
        for any other value: what unpacking, tuple indices and tuple locals take."""
        if isinstance(v, tuple):
            return v
        if isinstance(v, Static) and isinstance(v.value, tuple):
            return tuple(Static(i) for i in v.value)
        if isinstance(v, ShapeOf):
            return tuple(self.shape_entry(node, v.array, d) for d in range(v.array.type.ndim))
        return None

    def visit_Attribute(self, node: ast.Attribute) -> Value:
        base, attr = one_record(self.visit(node.value)), node.attr
        if isinstance(base, RecordElement):  # a[i].x
            return field_value(self, node, base, attr)
        if isinstance(base, ir.Expr) and base.type.is_complex or is_number(base) and attr == "conjugate":
            return complex_attribute(self, node, base)
        if attr == "bit_count" and (isinstance(base, ir.Expr) or is_number(base)):
            return int_attribute(self, node, base)
        if isinstance(base, tuple) and attr in getattr(type(base), "_fields", ()):  # a namedtuple argument's field
            return base[type(base)._fields.index(attr)]
        if isinstance(base, Static):
            obj = base.value
            if isinstance(obj, lang.Dim3):
                return obj.lower_attribute(self, node)
            if not hasattr(obj, attr):
                raise KernelTypeError(f"{ast.unparse(node.value)} has no attribute {attr!r}", self.loc(node))
            value = getattr(obj, attr)
            return value.read(self, node) if isinstance(value, lang.Property) else Static(value)
        if isinstance(base, ir.ArrayRef):
            if attr == "shape":
                return ShapeOf(base)
            if attr == "ndim":
                return Static(base.type.ndim)
            if attr == "size":  # the product of the shape, as NumPy's (int64 for a global array)
                if base.type.ndim == 0:  # one element
                    return Static(np.int64(1) if base.type.shape is None else 1)
                size = self.shape_entry(node, base, 0)
                for d in range(1, base.type.ndim):
                    size = self.binop(node, ast.Mult, size, self.shape_entry(node, base, d))
                return size
            hint = f"write np.{attr}({ast.unparse(node.value)})" if attr in _REDUCTION_NAMES else None
            raise KernelTypeError(f"arrays in kernels have .shape, .ndim and .size, not .{attr}", self.loc(node), hint)
        raise KernelTypeError(f"{describe(base)} has no attribute {attr!r}", self.loc(node))

    def element_load(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr]) -> ir.Load:
        """A read of one element (indices checked; through a view: of its base)."""
        indices = self.element_indices(node, array, indices)
        array, indices = views.element(self, node, array, indices)
        return ir.Load(array, indices, value_type(array.type.elem), loc=self.loc(node))

    def visit_Subscript(self, node: ast.Subscript) -> Value:
        base = self.visit(node.value)
        name = field_name(self, node.slice)
        if name is not None:
            base = one_record(base)
        if isinstance(base, RecordElement):  # a[i]["x"]
            if name is None:
                raise KernelTypeError(
                    f"{describe(base)} is indexed by a field name, not {ast.unparse(node.slice)}", self.loc(node)
                )
            return field_value(self, node, base, name)
        if name is not None and is_record_array(base):  # a["x"]: the field as an array, as in NumPy
            return field_array(self, node, base, name)
        if isinstance(base, ir.Fragment):  # acc[i]: the thread's element of a warpgroup accumulator
            return lang_mma.element(self, node, base)
        if isinstance(base, ShapeOf):
            d = self.static_value(node.slice)
            arr = base.array
            if not isinstance(d, int) or not -arr.type.ndim <= d < arr.type.ndim:
                raise KernelTypeError(
                    f"{arr.name}.shape has {arr.type.ndim} entries; index {d!r} is invalid", self.loc(node)
                )
            return self.shape_entry(node, arr, d % arr.type.ndim)
        items = self.items_of(node, base)
        if items is not None:
            i = self.static_value(node.slice)
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not -len(items) <= i < len(items):
                raise KernelTypeError(f"index {i!r} is not valid for a tuple of {len(items)} items", self.loc(node))
            return items[i]
        if isinstance(base, (ir.ArrayRef, Partial)):
            if views.has_slice(node.slice):  # a[1:3], a[i, :]: a view
                return views.slice_array(self, node, base, node.slice, ast.unparse(node))
            array = base if isinstance(base, ir.ArrayRef) else base.array
            prior = list(base.indices) if isinstance(base, Partial) else []
            indices = prior + self.index_list(node.slice)
            if len(indices) < array.type.ndim:
                return Partial(array, tuple(indices))
            if is_record_array(array):
                return RecordElement(array, tuple(self.element_indices(node, array, indices)))
            return self.element_load(node, array, indices)
        raise KernelTypeError(f"cannot index {describe(base)}", self.loc(node))

    def index_list(self, index: ast.expr) -> list[ir.Expr]:
        """The integer indices of ``a[index]``: one, a tuple of them written out (``a[i, j]``, ``a[()]``),
        or a tuple value (``a[t]`` where ``t = (i, j)``, ``a[b.shape]``), as NumPy reads them."""
        if isinstance(index, ast.Tuple):
            elts = index.elts
            for e in elts:
                if isinstance(e, ast.Slice):
                    raise KernelSyntaxError(
                        "slices are not supported in kernels; index one element at a time", self.loc(e)
                    )
            values = [self.visit(e) for e in elts]
        elif isinstance(index, ast.Slice):
            raise KernelSyntaxError("slices are not supported in kernels; index one element at a time", self.loc(index))
        else:
            v = self.visit(index)
            items = self.items_of(index, v)
            elts, values = ([index] * len(items), list(items)) if items is not None else ([index], [v])
        out = []
        for e, v in zip(elts, values):
            v = scalar(self.loc(e), v, "array index")
            t = self.type_of(v)
            if not t.is_int:
                raise KernelTypeError(
                    f"array indices must be integers, not {t!r}", self.loc(e), "convert with int32(...)"
                )
            out.append(materialized(self.loc(e), v))
        return out

    def array_and_index(self, node: ast.Call, what: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
        """The array and element of an intrinsic's first two arguments (``f(a, i)``, ``f(a, (i, j))``)."""
        array = self.visit(node.args[0])
        if not isinstance(array, ir.ArrayRef):
            raise KernelTypeError(f"{what}() needs an array, not {describe(array)}", self.loc(node.args[0]))
        indices = self.element_indices(node, array, self.index_list(node.args[1]))
        not_a_record(self, node, array, f"{what}()")
        return views.element(self, node, array, indices, what)

    def check_writable(self, node: ast.AST, array: ir.ArrayRef) -> None:
        if array.type.space == "constant":
            raise KernelTypeError(
                f"{array.name!r} is a constant table (an array of the kernel's module): kernels read it, "
                "they cannot write it",
                self.loc(node),
                "pass the array as an argument to write it",
            )

    def element_indices(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr]) -> list[ir.Expr]:
        """The indices of an element access, checked, and under ``negative_indices="wrap"`` each that
        may be negative counting from the end (a constant at once, others by ``passes.wrap_indices``)."""
        if self.rules.negative_indices == "wrap" and len(indices) == array.type.ndim:
            indices = [self.wrapped(node, array, d, i) for d, i in enumerate(indices)]
        self.check_indices(node, array, indices)
        return indices

    def wrapped(self, node: ast.AST, array: ir.ArrayRef, d: int, i: ir.Expr) -> ir.Expr:
        if isinstance(i, ir.Lit):
            if i.value >= 0:
                return i
            n = self.shape_entry(node, array, d)
            if isinstance(n, Static):
                return ir.Lit(int(n.value) + int(i.value), i.type, loc=i.loc)
            return materialized(self.loc(node), self.binop(node, ast.Sub, n, Static(-int(i.value))))
        if isinstance(i, (ir.Special, ir.Shape, ir.WrapIndex)) or i.type.kind in "ub":  # (a record's field: once)
            return i
        n = self.shape_entry(node, array, d)
        extent = ir.Lit(int(n.value), int64) if isinstance(n, Static) else materialized(self.loc(node), n)
        if not is_pure(i):  # (a call's result: the wrap reads it twice, the call must run once)
            i = self.f.hold(node, i, "index")
        return ir.WrapIndex(i, extent, i.type, loc=i.loc)

    def check_indices(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr]) -> None:
        if len(indices) != array.type.ndim:
            raise KernelTypeError(
                f"{array.name!r} has {array.type.ndim} dimension(s) but {len(indices)} index(es) were given",
                self.loc(node),
            )
        for d, (i, n) in enumerate(zip(indices, array.type.shape or ())):
            if isinstance(i, ir.Lit) and not 0 <= i.value < n:
                raise KernelTypeError(f"index {i.value} is out of bounds for dimension {d} of size {n}", self.loc(node))

    def shape_entry(self, node: ast.AST, array: ir.ArrayRef, d: int) -> Value:
        """``array.shape[d]``: a constant for shared/local arrays, a kernel parameter otherwise."""
        if array.view is not None:
            return views.length(array, d)
        inner = array.type.ndim - len(array.field_shape)
        if d >= inner:  # a sub-array field's own dimension
            return Static(array.field_shape[d - inner])
        if array.type.shape is not None:
            return Static(array.type.shape[d])
        if array.type.space == "shared" and not self.is_kernel:
            raise KernelTypeError(
                "the length of a dynamic_shared() array is the launch's, known only in the kernel",
                self.loc(node),
                "take len(...) of a dynamic_shared() array in the kernel and pass it to the @func as an argument",
            )
        return ir.Shape(array, d, int64, loc=self.loc(node))

    # ------------------------------------------------------------ operators
    def visit_BinOp(self, node: ast.BinOp) -> Value:
        # a left-leaning chain (a + b + c + ...) is walked in a loop, not by recursion
        chain = [node]
        while isinstance(chain[-1].left, ast.BinOp):
            chain.append(chain[-1].left)
        value = self.visit(chain[-1].left)
        for link in reversed(chain):
            value = self.binop(link, type(link.op), value, self.visit(link.right))
        return value

    def binop(self, node: ast.AST, op_type: type, left: Value, right: Value) -> Value:
        if op_type not in BINOPS:
            raise KernelSyntaxError("the @ operator is not supported in kernels", self.loc(node))
        op, loc = BINOPS[op_type], self.loc(node)
        definition = ops.BINARY[op]
        left, right = scalar(loc, left), scalar(loc, right)
        lt, rt = self.type_of(left), self.type_of(right)
        if definition.int_only and (lt.is_float or rt.is_float or lt.is_complex or rt.is_complex):
            raise KernelTypeError(f"the {op} operator needs integers or bools, not {lt!r} and {rt!r}", loc)
        if (lt.is_complex or rt.is_complex) and definition.complex_helper is None:
            raise KernelTypeError(f"the {op} operator is not defined on complex numbers ({lt!r} and {rt!r})", loc)
        if self.rules.bools == "python" and lt == bool_ and rt == bool_ and op in ("+", "-", "*", "//", "%", "**"):
            lt = rt = int64  # Python's and Numba's: bools count (True + True == 2)
            left, right = coerce(loc, left, int64), coerce(loc, right, int64)
        if op in ("-", "//", "%", "**") and lt == bool_ and rt == bool_:  # NumPy refuses - (and leaves bools then)
            raise KernelTypeError(f"the {op} operator is not defined on two bools", loc, "convert one to int32 first")
        # two run-time values of literal-only locals compute at their materialised width; bools shift as int64
        t = self.rules.materialize(true_divide_type(lt, rt) if op == "/" else promote(lt, rt))
        literals = all(isinstance(v, Static) and _is_python(v.value) for v in (left, right))  # Python's meaning
        if t == bool_ and op in ("+", "*") and not literals:
            warn_at(
                f"{op} of two bools is a bool here, as in NumPy ({'True + True is True' if op == '+' else 'an and'}), "
                "not an integer as in Python and Numba",
                loc,
                f"to count, convert first: int(a) {op} int(b)",
            )
        if op in ("<<", ">>") and t == bool_:
            t = int64
        if isinstance(left, Static) and isinstance(right, Static):
            return self.fold(node, definition.fold, left.value, right.value, None if literals else t)
        if op == "**" and isinstance(right, Static):
            if t.is_int and right.value < 0:
                raise KernelTypeError("integers cannot be raised to a negative power", loc)
            if isinstance(left, ir.Var) and right.value in (2, 3):
                x = coerce(loc, left, t)
                prod: ir.Expr = ir.BinOp("*", x, x, t, loc=loc)
                return ir.BinOp("*", prod, x, t, loc=loc) if right.value == 3 else prod
        return ir.BinOp(op, coerce(loc, left, t), coerce(loc, right, t), t, loc=loc)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Value:
        loc = self.loc(node)
        if isinstance(node.op, ast.Not):
            c = self.condition(node.operand)
            return Static(not c.value) if isinstance(c, Static) else ir.Unary("not", c, bool_, loc=loc)
        v = scalar(loc, self.visit(node.operand))
        if isinstance(node.op, ast.UAdd):
            return v
        op = "-" if isinstance(node.op, ast.USub) else "~"
        if isinstance(v, Static):
            return self.fold(node, ops.UNARY[op].python, v.value)
        if op == "~" and (v.type.is_float or v.type.is_complex):
            raise KernelTypeError(f"the ~ operator needs an integer or bool, not {v.type.name}", loc)
        if op == "-" and v.type == bool_:
            raise KernelTypeError("cannot negate a bool", loc, "use 'not'")
        if op == "~" and v.type == bool_:
            return ir.Unary("not", v, bool_, loc=loc)
        return ir.Unary(op, v, v.type, loc=loc)

    def condition(self, node: ast.expr) -> Value:
        """An expression used for its truth (if, while, ternary test, not): bool or static bool."""
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, as_condition=True)
        v = self.visit(node)
        if isinstance(v, Static):
            return Static(bool(v.value))
        v = scalar(self.loc(node), v, "condition")
        if v.type.is_complex:
            raise KernelTypeError(f"a {v.type.name} value cannot be a condition", self.loc(node), "compare it: z != 0")
        return v if v.type == bool_ else ir.Cast(v, bool_, loc=self.loc(node))

    def visit_BoolOp(self, node: ast.BoolOp) -> Value:
        return self.bool_op(node, as_condition=False)

    def bool_op(self, node: ast.BoolOp, as_condition: bool) -> Value:
        """Short-circuit and/or on truth values; outside a condition the operands must be bools,
        since Python would return an operand rather than True/False."""
        op = "and" if isinstance(node.op, ast.And) else "or"

        def operand(e: ast.expr) -> Value:
            if as_condition:
                return self.condition(e)
            v = self.visit(e)
            if (
                isinstance(v, Static)
                and isinstance(v.value, (bool, np.bool_))
                or isinstance(v, ir.Expr)
                and v.type == bool_
            ):
                return v
            raise KernelTypeError(
                f"'{op}' on {describe(v)} would give one of the operands in Python, not a bool; "
                "gpukern supports and/or on bools outside conditions",
                self.loc(e),
                "compare explicitly, e.g. (x != 0), or write 'x if x else y'",
            )

        result: Value = operand(node.values[0])
        for e in node.values[1:]:
            if isinstance(result, Static):
                if bool(result.value) == (op == "or"):
                    return Static(bool(result.value))  # short circuit at compile time
                result = operand(e)
                continue
            right = self.inline_only(e, f"the right operand of '{op}'", lambda e=e: operand(e))
            if isinstance(right, Static):
                if right.value == (op == "and"):
                    continue  # x and True == x
                if is_pure(result):
                    return Static(op == "or")
                return ir.Logic(op, result, coerce(self.loc(node), right, bool_), bool_, loc=self.loc(node))
            result = ir.Logic(op, result, right, bool_, loc=self.loc(node))
        return result

    def visit_Compare(self, node: ast.Compare) -> Value:
        loc = self.loc(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            return self.is_none(node)
        operands = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        result: Value = Static(True)
        for i, op_node in enumerate(node.ops):
            if type(op_node) not in _CMPOPS:
                raise KernelSyntaxError(f"the {type(op_node).__name__} comparison is not supported in kernels", loc)
            a, b = scalar(loc, operands[i]), scalar(loc, operands[i + 1])
            if 0 < i < len(node.ops) and isinstance(a, ir.Expr) and not is_pure(a):
                raise KernelSyntaxError("a chained comparison's middle operand must not call functions or atomics", loc)
            op = _CMPOPS[type(op_node)]
            known = _compare_out_of_range(op, a, b)
            if isinstance(a, Static) and isinstance(b, Static):
                part: Value = Static(bool(self.fold(node, ops.COMPARE[op].fold, a.value, b.value).value))
            elif known is not None and is_pure(a if isinstance(a, ir.Expr) else b):
                part = Static(known)
            else:
                part = self.compare(node, op, a, b)
            if isinstance(result, Static):
                if not result.value:
                    return result
                result = part
            elif isinstance(part, Static):
                if not part.value:
                    return Static(False)
            else:
                result = ir.Logic("and", result, part, bool_, loc=loc)
        return result

    def is_none(self, node: ast.Compare) -> Value:
        """``v is None`` / ``v is not None``: of a local that may hold None, its flag; of anything
        else, known (a number is never None)."""
        left, right = node.left, node.comparators[0]
        none = [isinstance(e, ast.Constant) and e.value is None for e in (left, right)]
        if not any(none):
            raise KernelSyntaxError(
                "'is' compares with None only in kernels", self.loc(node), "compare numbers with == and !="
            )
        negate = isinstance(node.ops[0], ast.IsNot)
        if all(none):
            return Static(not negate)
        v = self.visit(right if none[0] else left)
        flag = self.f.is_set(v)
        if flag is None:
            return Static(negate)  # (evaluated, as Python does: a call in it runs)
        return flag if negate else ir.Unary("not", flag, bool_, loc=self.loc(node))

    def compare(self, node: ast.AST, op: str, a: Value, b: Value) -> ir.Compare:
        """``a op b`` (``op`` a key of ``ops.COMPARE``) of two numbers, not both constants: compared in
        their promoted type."""
        loc = self.loc(node)
        t = self.rules.materialize(promote(self.type_of(a), self.type_of(b)))
        if t.is_complex and ops.COMPARE[op].complex_helper is None:
            raise KernelTypeError(
                f"complex numbers are not ordered: {op} is not defined on {t.name}", loc, "compare abs(z)"
            )
        return ir.Compare(op, coerce(loc, a, t), coerce(loc, b, t), bool_, loc=loc)

    def visit_IfExp(self, node: ast.IfExp) -> Value:
        cond = self.condition(node.test)
        if isinstance(cond, Static):
            return self.visit(node.body if cond.value else node.orelse)
        a_ = self.inline_only(node.body, "if-else", lambda: self.visit(node.body))
        b_ = self.inline_only(node.orelse, "if-else", lambda: self.visit(node.orelse))
        if isinstance(a_, (ir.Fragment, ir.ArrayRef)) or isinstance(b_, (ir.Fragment, ir.ArrayRef)):
            raise KernelTypeError(
                f"{ast.unparse(node)} chooses between arrays or fragments at run time ({ast.unparse(node.test)} is "
                "not known at compile time); which one a name stands for is fixed when the kernel is compiled",
                self.loc(node),
                "choose with a compile-time condition (a gk.unroll index, a Const), or write the work under an "
                "if / else, each branch using its own",
            )
        a = scalar(self.loc(node.body), a_)
        b = scalar(self.loc(node.orelse), b_)
        t = self.rules.materialize(promote(self.type_of(a), self.type_of(b)))
        loc = self.loc(node)
        return ir.Select(cond, coerce(loc, a, t), coerce(loc, b, t), t, loc=loc)

    def visit_Call(self, node: ast.Call) -> Value:
        return lower_call(self, node)

    def call(self, fn: Any, node: ast.Call, values: list[Value] | None = None) -> Value:
        """``node``'s arguments (or ``values``, already lowered) passed to ``fn`` (an intrinsic, a math
        function, a type) in place of what its callee names: for an intrinsic that stands for
        another (``calls.call_of``)."""
        return call_of(self, fn, node, values)


def is_pure(e: ir.Expr) -> bool:
    """No calls, warp operations or writes (atomics) inside: evaluating it twice, or not at all,
    changes nothing."""
    return not any(isinstance(n, (ir.Call, ir.WarpOp)) or any(a.write for a in n.accesses()) for n in ir.walk(e))


_UNSUPPORTED = {
    "ClassDef": "class definitions",
    "Try": "try/except",
    "TryStar": "try/except*",
    "Lambda": "lambda",
    "ListComp": "list comprehensions",
    "SetComp": "set comprehensions",
    "DictComp": "dict comprehensions",
    "GeneratorExp": "generator expressions",
    "Yield": "yield",
    "YieldFrom": "yield from",
    "FunctionDef": "nested function definitions",
    "AsyncFunctionDef": "async functions",
    "Global": "global statements",
    "Nonlocal": "nonlocal statements",
    "Delete": "del",
    "Raise": "raise",
    "Assert": "assert",
    "Import": "import",
    "ImportFrom": "import",
    "List": "lists",
    "Dict": "dicts",
    "Set": "sets",
    "JoinedStr": "f-strings",
    "Await": "await",
    "NamedExpr": "the := operator",
    "Starred": "starred expressions",
    "Slice": "slices",
    "Match": "match statements",
    "AsyncFor": "async for",
    "AsyncWith": "async with",
}


def unsupported(loc: Loc, node: ast.AST) -> KernelSyntaxError:
    name = type(node).__name__
    return KernelSyntaxError(f"{_UNSUPPORTED.get(name, name)} cannot be used in a kernel", loc)


def _is_python(value: Any) -> bool:
    """A Python number (a literal's value): operations on two of them mean what they mean in Python."""
    return isinstance(value, (bool, int, float, complex))


def _compare_out_of_range(op: str, a: Value, b: Value) -> bool | None:
    """NumPy 2 compares a typed integer with a Python int by value, even one outside the
    type's range (``uint32 > -1`` is True); such comparisons are known at compile time."""
    flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
    for const, x, o in ((b, a, op), (a, b, flip[op])):
        if not (isinstance(const, Static) and type(const.value) is int and isinstance(x, ir.Expr) and x.type.is_int):
            continue
        info = np.iinfo(x.type.dtype)
        if info.min <= const.value <= info.max:
            return None
        x_above = const.value < info.min  # then x > const for every x of the type
        return {"==": False, "!=": True, ">": x_above, ">=": x_above, "<": not x_above, "<=": not x_above}[o]
    return None


def _is_device_array(value: Any) -> bool:
    """Whether ``value`` is an array in device memory (gpukern's, CuPy's, PyTorch's: DLPack or the
    CUDA array interface), which a kernel reads in place where its module names it."""
    return (
        not isinstance(value, (np.ndarray, type))
        and hasattr(value, "shape")
        and hasattr(value, "dtype")
        and (hasattr(value, "__dlpack_device__") or hasattr(value, "__cuda_array_interface__"))
    )


def _fresh_items(v: tuple[Any, ...], loc: Loc) -> tuple[Any, ...]:
    """A tuple local's items as new nodes at ``loc`` (nested tuples too; a namedtuple keeps its class)."""
    items = [
        ir.Var(i.name, i.type, loc=loc)
        if isinstance(i, ir.Var)
        else _fresh_items(i, loc)
        if isinstance(i, tuple)
        else i
        for i in v
    ]
    return type(v)._make(items) if hasattr(type(v), "_fields") else tuple(items)
