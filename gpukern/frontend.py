"""Python AST -> typed IR: one small visitor method per Python construct.

Every expression evaluates to either a compile-time value (``Static``: a number, a
module, an intrinsic, a ``@func``...) or a run-time IR expression.  Operations on
``Static`` numbers are evaluated right here with Python/NumPy, so ``Const``
parameters, module globals and single-assignment locals fold away and branches
on them disappear; everything else becomes IR.

Local variable types are the join of everything assigned to them.  Because a use
may precede (in a loop) an assignment that widens the type, a function body is
lowered repeatedly until the variable types stop changing; only the last pass's
IR is kept.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import ir, lang, ops
from .calls import CallLowering, DeviceFunction, Partial, ShapeOf, Static, Value, describe, is_number, static_type
from .checks import check_barriers, check_definite_assignment
from .errors import CompileError, KernelSyntaxError, KernelTypeError, Loc
from .passes import finish_declarations, written_params
from .source import ParsedFunction
from .types import (
    ScalarType,
    Type,
    WeakType,
    bool_,
    int32,
    int64,
    join,
    materialize,
    promote,
    python_type,
    true_divide_type,
)

# Python's operator node -> the symbol of its entry in gpukern.ops (which defines it)
_BINOPS: dict[type, str] = {
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


class Compiler:
    """Lowers one kernel specialisation and the device functions it reaches."""

    def __init__(self) -> None:
        self.funcs: dict[tuple[Any, ...], ir.FuncDef] = {}
        self.in_progress: set[tuple[Any, ...]] = set()

    def lower_kernel(self, parsed: ParsedFunction, bindings: dict[str, Value], description: str) -> ir.Program:
        kernel = FunctionLowering(self, parsed, bindings, is_kernel=True).run()
        kernel.description = description
        return ir.Program(kernel, self._reachable(kernel))

    def device_function(self, df: DeviceFunction, args: list[Value], loc: Loc) -> ir.FuncDef:
        parsed = df.parsed
        params = [a.arg for a in parsed.tree.args.args]
        if len(args) != len(params):
            raise KernelTypeError(f"{df.__name__}() takes {len(params)} argument(s) but {len(args)} were given", loc)
        bindings: dict[str, Value] = {}
        key_parts: list[Any] = [id(df)]
        for name, arg in zip(params, args):
            if isinstance(arg, ir.ArrayRef):
                bindings[name] = ir.ArrayRef(name, arg.type)
                key_parts.append(arg.type)
            elif isinstance(arg, ir.Expr):
                bindings[name] = ir.Var(name, arg.type)
                key_parts.append(arg.type)
            elif isinstance(arg, Static):
                bindings[name] = arg
                key_parts.append(("static", type(arg.value), _hashable(arg.value)))
            else:
                raise KernelTypeError(f"cannot pass {describe(arg)} to {df.__name__}()", loc)
        key = tuple(key_parts)
        if key in self.funcs:
            return self.funcs[key]
        if key in self.in_progress:
            raise KernelSyntaxError(f"{df.__name__}() calls itself; recursion is not supported on GPUs", loc)
        self.in_progress.add(key)
        try:
            fd = FunctionLowering(self, parsed, bindings, is_kernel=False).run()
        finally:
            self.in_progress.discard(key)
        self.funcs[key] = fd
        return fd

    @staticmethod
    def _reachable(kernel: ir.FuncDef) -> list[ir.FuncDef]:
        order: list[ir.FuncDef] = []

        def visit(fd: ir.FuncDef) -> None:
            for node in ir.walk_body(fd.body):
                if isinstance(node, ir.Call) and node.func not in order:
                    visit(node.func)
                    order.append(node.func)

        visit(kernel)
        return order


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)


def _assigned_names(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Every (name, node) a statement tree binds by assignment or ``for``."""
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    yield n.id, node


class FunctionLowering(CallLowering, ast.NodeVisitor):
    """Lowers one function body; see the module docstring for the fixpoint on types."""

    MAX_PASSES = 8

    def __init__(self, compiler: Compiler, parsed: ParsedFunction, bindings: dict[str, Value], is_kernel: bool):
        self.compiler = compiler
        self.parsed = parsed
        self.bindings = bindings
        self.is_kernel = is_kernel
        self.var_types: dict[str, Type] = {}
        self.pinned: dict[str, ScalarType] = {}
        self.ret_type: Type | None = None
        self.returns_value: bool | None = None
        self.static_names = self._single_assignment_names()
        self.tmp_counter = 0
        self.block_vectors: set[str] = set()  # names of vloads that went out of scope
        self.launch_bounds: tuple[int, ...] | None = None

    # ------------------------------------------------------------ driver
    def run(self) -> ir.FuncDef:
        tree = self.parsed.tree
        self._check_signature(tree)
        for _ in range(self.MAX_PASSES):
            self.unsettled = False
            self.env: dict[str, Value] = dict(self.bindings)
            self.arrays: list[ir.DeclArray] = []
            self.loop_depth = 0
            self.tmp_counter = 0
            body = self.lower_block(tree.body)
            if not self.unsettled:  # no type changed after it was first used: this IR is final
                break
        else:  # pragma: no cover - the type lattice is finite and joins are monotone
            raise KernelTypeError("variable types did not settle", self.parsed.loc(tree))
        params = [self.bindings[a.arg] for a in tree.args.args if not isinstance(self.bindings[a.arg], Static)]
        ret = None
        if self.returns_value:
            ret = materialize(self.ret_type) if self.ret_type is not None else None
        fd = ir.FuncDef(
            name=self.parsed.name,
            params=params,
            body=list(self.arrays) + body,
            ret=ret,
            is_kernel=self.is_kernel,
            loc=self.parsed.loc(tree),
            launch_bounds=self.launch_bounds,
        )
        check_definite_assignment(fd)
        check_barriers(fd)
        finish_declarations(fd, {p.name for p in params if isinstance(p, ir.Var)})
        fd.written = written_params(fd)
        return fd

    def _check_signature(self, tree: ast.FunctionDef) -> None:
        a = tree.args
        extra = a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults
        if extra:
            raise KernelSyntaxError(
                "kernel and device function parameters must be plain positional names "
                "(no defaults, *args, **kwargs or keyword-only parameters)",
                self.parsed.loc(tree),
            )

    def _single_assignment_names(self) -> set[str]:
        """Locals bound exactly once, at the top level of the body: they may hold
        compile-time values (constants, arrays, intrinsics) and fold like constants."""
        counts: dict[str, int] = {}
        for name, _ in _assigned_names(self.parsed.tree):
            counts[name] = counts.get(name, 0) + 1
        top: set[str] = set()
        for stmt in self.parsed.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                top.add(stmt.targets[0].id)
        params = {a.arg for a in self.parsed.tree.args.args}
        return {n for n in top if counts.get(n) == 1 and n not in params}

    # ------------------------------------------------------------ helpers
    def loc(self, node: ast.AST) -> Loc:
        return self.parsed.loc(node)

    def syntax_error(self, node: ast.AST, what: str, hint: str | None = None) -> KernelSyntaxError:
        return KernelSyntaxError(what, self.loc(node), hint)

    def type_error(self, node: ast.AST, what: str, hint: str | None = None) -> KernelTypeError:
        return KernelTypeError(what, self.loc(node), hint)

    def lower_block(self, stmts: list[ast.stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        saved = getattr(self, "block", None)
        vectors = {n: v for n, v in self.env.items() if isinstance(v, tuple)}
        self.block = out
        try:
            for s in stmts:
                self.visit(s)
        finally:
            self.block = saved  # type: ignore[assignment]
        # a vector loaded in this block is a C variable of this block: it does not outlive it
        for n in [n for n, v in self.env.items() if isinstance(v, tuple) and vectors.get(n) is not v]:
            del self.env[n]
            self.block_vectors.add(n)
        return out

    def emit(self, stmt: ir.Stmt) -> None:
        self.block.append(stmt)

    def generic_visit(self, node: ast.AST) -> Any:
        name = type(node).__name__
        nice = {
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
        }.get(name, name)
        raise self.syntax_error(node, f"{nice} cannot be used in a kernel")

    def type_of(self, v: Value) -> Type:
        """The type a value has for promotion: weak for literals and literal-only locals."""
        if isinstance(v, Static):
            return static_type(v.value)
        if isinstance(v, ir.Var) and isinstance(self.var_types.get(v.name), WeakType):
            return self.var_types[v.name]
        return v.type

    def scalar(self, node: ast.AST, v: Value, what: str = "operand") -> Value:
        """Check that ``v`` is a number (static or run-time); return it."""
        if is_number(v) or isinstance(v, ir.Expr):
            return v
        raise self.type_error(node, f"{what} must be a number, not {describe(v)}")

    def coerce(self, node: ast.AST, v: Value, t: ScalarType) -> ir.Expr:
        """``v`` as an IR expression of type ``t`` (literal conversion or a cast)."""
        if isinstance(v, Static):
            return self.literal(node, v.value, t)
        if v.type == t:
            return v
        return ir.Cast(v, t, loc=self.loc(node))

    def literal(self, node: ast.AST, value: Any, t: ScalarType) -> ir.Lit:
        if t == bool_:
            return ir.Lit(bool(value), t, loc=self.loc(node))
        if t.is_int:
            if isinstance(value, (float, np.floating)):
                if not float(value).is_integer():
                    raise self.type_error(node, f"the float {value!r} cannot become {t.name} without a cast")
            iv = int(value)
            info = np.iinfo(t.dtype)
            if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
                if not info.min <= iv <= info.max:
                    raise self.type_error(node, f"the integer {iv} does not fit in {t.name}")
            return ir.Lit(int(np.array(iv).astype(t.dtype)), t, loc=self.loc(node))
        return ir.Lit(float(t.dtype.type(value)), t, loc=self.loc(node))

    def materialized(self, node: ast.AST, v: Value) -> ir.Expr:
        v = self.scalar(node, v)
        if isinstance(v, Static):
            return self.literal(node, v.value, materialize(static_type(v.value), v.value))
        return v

    def truth(self, node: ast.AST, v: Value) -> Value:
        """Python truthiness: a bool expression (or a static bool)."""
        if isinstance(v, Static):
            return Static(bool(v.value))
        v = self.scalar(node, v, "condition")
        return v if v.type == bool_ else ir.Cast(v, bool_, loc=self.loc(node))

    def set_type(self, name: str, t: Type) -> None:
        """Record a variable's (joined) type; a change after its first assignment means code
        already lowered used a narrower type, so the body must be lowered again."""
        old = self.var_types.get(name)
        if old is not None and old != t:
            self.unsettled = True
        self.var_types[name] = t

    def tmp_var(self, base: str, t: ScalarType) -> ir.Var:
        self.tmp_counter += 1
        name = f"{base}.{self.tmp_counter}"
        self.var_types[name] = t
        return ir.Var(name, t)

    # ------------------------------------------------------------ statements
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or comment string
        v = self.visit(node.value)
        if isinstance(v, ir.Expr):
            self.emit(ir.ExprStmt(v, loc=self.loc(node)))

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.syntax_error(node, "only a plain name can be annotated")
        ann = self.static_value(node.annotation)
        t = ann if isinstance(ann, ScalarType) else python_type(ann)
        if t is None:
            raise self.type_error(node.annotation, f"{ast.unparse(node.annotation)} is not a scalar type")
        name = node.target.id
        if name in self.pinned and self.pinned[name] != t:
            raise self.type_error(node, f"{name!r} is declared both {self.pinned[name].name} and {t.name}")
        self.pinned[name] = t
        self.static_names.discard(name)
        self.set_type(name, t)
        if node.value is not None:
            self.assign(node.target, self.visit(node.value), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            current = self.visit_Name(node.target)
            value = self.binop(node, type(node.op), current, self.visit(node.value))
            self.assign(node.target, value, node)
        elif isinstance(node.target, ast.Subscript):
            array, indices = self.subscript_target(node.target)
            current = self.load(node.target, array, indices)
            value = self.binop(node, type(node.op), current, self.visit(node.value))
            self.store(node, array, indices, value)
        else:
            raise self.syntax_error(node, "augmented assignment needs a name or an array element")

    def assign(self, target: ast.AST, value: Value, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target, value, node)
        elif isinstance(target, ast.Subscript):
            array, indices = self.subscript_target(target)
            self.store(node, array, indices, value)
        elif isinstance(target, ast.Tuple):
            values = value if isinstance(value, tuple) else None
            if isinstance(value, Static) and isinstance(value.value, tuple):
                values = tuple(Static(x) for x in value.value)
            if values is None or len(values) != len(target.elts):
                raise self.type_error(node, f"cannot unpack {describe(value)} into {len(target.elts)} names")
            # Python evaluates the whole right side first: hold run-time values in temporaries.
            held = []
            for v in values:
                if isinstance(v, ir.Expr) and not isinstance(v, (ir.Lit, ir.Lane)):  # a Lane cannot change
                    t = self.tmp_var("tmp", v.type)
                    self.emit(ir.Assign(t, v, loc=self.loc(node)))
                    held.append(t)
                else:
                    held.append(v)
            for t, v in zip(target.elts, held):
                self.assign(t, v, node)
        else:
            raise self.syntax_error(target, f"cannot assign to {ast.unparse(target)}")

    def assign_name(self, target: ast.Name, value: Value, node: ast.AST) -> None:
        name = target.id
        if name in self.bindings and isinstance(self.bindings[name], (ir.ArrayRef, Static)):
            raise self.type_error(target, f"cannot assign to parameter {name!r}, which is an array or a Const")
        if name in self.static_names and not isinstance(value, ir.Expr):
            if isinstance(value, ir.ArrayRef) and "." in value.name:
                value.name = name  # a fresh shared()/local() array takes the user's name
            self.env[name] = value  # compile-time value: folds wherever it is used
            return
        if isinstance(value, tuple) and all(is_number(v) or isinstance(v, (ir.Lane, ir.Lit)) for v in value):
            self.env[name] = value  # a vload's result: its lanes never change, so uses read them directly
            return
        if not (is_number(value) or isinstance(value, ir.Expr)):
            raise self.type_error(
                node,
                f"cannot assign {describe(value)} to {name!r}",
                "arrays, intrinsics and functions may only be bound once, at the top level of the kernel",
            )
        new_t = self.type_of(value)
        if name in self.pinned:
            t = self.pinned[name]
            self.check_store_cast(node, new_t, t, f"variable {name!r}")
        else:
            t_join = join(self.var_types.get(name), new_t)
            self.set_type(name, t_join)
            t = materialize(t_join)
        var = ir.Var(name, t, loc=self.loc(target))
        self.env[name] = var
        self.emit(ir.Assign(var, self.coerce(node, value, t), loc=self.loc(node)))

    def check_store_cast(self, node: ast.AST, src: Type, dst: ScalarType, what: str) -> None:
        """Stores follow NumPy's 'same_kind' casting: a float never silently becomes an int."""
        if isinstance(src, WeakType):
            ok = not (src.is_float and not dst.is_float) and not (dst == bool_)
        else:
            ok = bool(np.can_cast(src.dtype, dst.dtype, casting="same_kind"))
        if not ok:
            raise self.type_error(
                node,
                f"cannot store a {src!r} value into {what} of type {dst.name}",
                f"convert explicitly, e.g. {dst.name}(value)",
            )

    def subscript_target(self, node: ast.Subscript) -> tuple[ir.ArrayRef, list[ir.Expr]]:
        base = self.visit(node.value)
        indices = self.index_list(node)
        if isinstance(base, Partial):
            return base.array, list(base.indices) + indices
        if isinstance(base, ir.ArrayRef):
            return base, indices
        raise self.type_error(node, f"cannot assign into {describe(base)}")

    def store(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr], value: Value) -> None:
        self.check_indices(node, array, indices)
        value = self.scalar(node, value, "stored value")
        elem = array.type.elem
        self.check_store_cast(node, self.type_of(value), elem, f"array {array.name!r}")
        self.emit(ir.Store(array, indices, self.coerce(node, value, elem), loc=self.loc(node)))

    def visit_If(self, node: ast.If) -> None:
        cond = self.condition(node.test)
        if isinstance(cond, Static):
            for s in node.body if cond.value else node.orelse:
                self.visit(s)
            return
        then = self.lower_block(node.body)
        orelse = self.lower_block(node.orelse)
        self.emit(ir.If(cond, then, orelse, loc=self.loc(node)))

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.syntax_error(node, "while ... else is not supported")
        cond = self.condition(node.test)
        if isinstance(cond, Static):
            if not cond.value:
                return
            cond = ir.Lit(True, bool_, loc=self.loc(node.test))
        self.loop_depth += 1
        body = self.lower_block(node.body)
        self.loop_depth -= 1
        self.emit(ir.While(cond, body, loc=self.loc(node)))

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.syntax_error(node, "for ... else is not supported")
        it = node.iter
        unrolled = isinstance(it, ast.Call) and self.static_value(it.func, default=None) is lang.unroll
        if unrolled:
            if len(it.args) != 1 or it.keywords:
                raise self.syntax_error(it, "unroll() takes one range(...)", "write: for i in unroll(range(n))")
            it = it.args[0]
        if not (isinstance(it, ast.Call) and self.static_value(it.func, default=None) is range):
            raise self.syntax_error(it, "a kernel can only loop over range(...) or unroll(range(...))")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.syntax_error(it, "range() takes 1 to 3 positional arguments")
        if not isinstance(node.target, ast.Name):
            raise self.syntax_error(node.target, "the loop variable must be a single name")
        args = [self.scalar(a, self.visit(a), "range() argument") for a in it.args]
        if unrolled:
            return self.unroll_loop(node, it, args)
        for a, v in zip(it.args, args):
            t = self.type_of(v)
            if not (isinstance(t, WeakType) and t.is_int) and not (isinstance(t, ScalarType) and t.is_int):
                raise self.type_error(a, f"range() needs integers, not {t!r}")
        start, stop, step = (
            (Static(0), args[0], Static(1))
            if len(args) == 1
            else ((args[0], args[1], Static(1)) if len(args) == 2 else tuple(args))
        )
        if isinstance(step, Static):
            if step.value == 0:
                raise self.type_error(it, "range() step must not be zero")
            sign = 1 if step.value > 0 else -1
        else:
            sign = 0
        name = node.target.id
        self.static_names.discard(name)
        t_join = self.var_types.get(name)
        for v in (start, stop, step):
            t_join = join(t_join, self.type_of(v))
        if name in self.pinned:
            t_join = self.pinned[name]
        self.set_type(name, t_join)
        t = materialize(t_join)
        var = ir.Var(name, t, loc=self.loc(node.target))
        self.env[name] = var
        bounds = [self.coerce(a, v, t) for a, v in zip([node.iter] * 3, (start, stop, step))]
        self.loop_depth += 1
        body = self.lower_block(node.body)
        self.loop_depth -= 1
        # The bounds are evaluated once, as in Python: hold them in temporaries if the
        # body could change what they read.
        assigned = {s.target.name for s in ir.walk_body(body) if isinstance(s, ir.Assign)}
        for i in (1, 2):
            b = bounds[i]
            reads = {n.name for n in ir.walk(b) if isinstance(n, ir.Var)}
            impure = any(isinstance(n, (ir.Call, ir.Atomic, ir.Load)) for n in ir.walk(b))
            if reads & assigned or impure:
                holder = self.tmp_var(f"{name}.{'stop' if i == 1 else 'step'}", t)
                self.emit(ir.Assign(holder, b, loc=self.loc(node)))
                bounds[i] = holder
        self.emit(ir.For(var, bounds[0], bounds[1], bounds[2], sign, body, loc=self.loc(node)))

    MAX_UNROLL = 4096

    def unroll_loop(self, node: ast.For, it: ast.Call, args: list[Value]) -> None:
        """``for i in unroll(range(...))``: the body once per value, with ``i`` a constant in each
        copy, so indices fold and nvcc keeps ``local`` arrays indexed by ``i`` in registers."""
        if not all(isinstance(a, Static) for a in args):
            bad = next(a for a, v in zip(it.args, args) if not isinstance(v, Static))
            raise self.type_error(
                bad,
                f"unroll() needs compile-time range bounds; {ast.unparse(bad)} is known only at run time",
                "make it a Const[int] parameter or a module-level constant, or loop with plain range()",
            )
        try:
            values = range(*(a.value for a in args))
        except (TypeError, ValueError) as e:
            raise self.type_error(it, f"invalid range() for unroll(): {e}") from None
        if len(values) > self.MAX_UNROLL:
            raise self.type_error(
                it, f"unroll() of {len(values)} iterations (at most {self.MAX_UNROLL})", "loop with plain range()"
            )
        for s in node.body:
            for n in ast.walk(s):
                if isinstance(n, (ast.Break, ast.Continue)):
                    raise self.syntax_error(n, "break and continue cannot be used in an unrolled loop")
        name = node.target.id
        self.static_names.discard(name)
        for v in values:
            self.env[name] = Static(v)
            for s in node.body:
                self.visit(s)

    def visit_Break(self, node: ast.Break) -> None:
        self.emit(ir.Break(loc=self.loc(node)))

    def visit_Continue(self, node: ast.Continue) -> None:
        self.emit(ir.Continue(loc=self.loc(node)))

    def visit_Return(self, node: ast.Return) -> None:
        has_value = node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        if self.is_kernel and has_value:
            raise self.type_error(node, "a kernel cannot return a value", "write results into an array")
        if self.returns_value is not None and self.returns_value != has_value:
            raise self.type_error(node, "a function must return a value on every return or on none")
        self.returns_value = has_value
        if not has_value:
            self.emit(ir.Return(loc=self.loc(node)))
            return
        value = self.scalar(node, self.visit(node.value), "returned value")
        ret_type = join(self.ret_type, self.type_of(value))
        if self.ret_type is not None and ret_type != self.ret_type:
            self.unsettled = True  # an earlier return was converted to the narrower type
        self.ret_type = ret_type
        t = materialize(self.ret_type, value.value if isinstance(value, Static) else None)
        self.emit(ir.Return(self.coerce(node, value, t), loc=self.loc(node)))

    def visit_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            raise self.syntax_error(node, "only 'with superstep():' is supported in kernels")
        item = node.items[0]
        ctx = item.context_expr
        if not (isinstance(ctx, ast.Call) and self.static_value(ctx.func, default=None) is lang.superstep):
            raise self.syntax_error(node, "only 'with superstep():' is supported in kernels")
        if ctx.args or ctx.keywords or item.optional_vars is not None:
            raise self.syntax_error(node, "superstep() takes no arguments and binds no name")
        for s in node.body:
            self.visit(s)
        self.emit(ir.Barrier(loc=self.loc(node)))

    # ------------------------------------------------------------ expressions
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
            raise self.type_error(node, f"{ast.unparse(node)} must be a compile-time constant")
        return default

    def visit_Constant(self, node: ast.Constant) -> Value:
        if isinstance(node.value, (bool, int, float)) or node.value is None:
            return Static(node.value)
        raise self.syntax_error(node, f"{type(node.value).__name__} literals cannot be used in a kernel")

    def visit_Name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.env:
            v = self.env[name]
            return ir.Var(v.name, v.type, loc=self.loc(node)) if isinstance(v, ir.Var) else v
        if name in self.var_types or name in self.bindings:
            raise self.type_error(node, f"{name!r} is used before it is assigned")
        if name in self.block_vectors:
            raise self.type_error(
                node,
                f"{name!r} holds a vload() made inside an if or loop body and is used after it",
                f"use it inside that body, or unpack it there into variables: x, y, z, w = {name}",
            )
        found, value = self.parsed.resolve_global(name)
        if not found:
            raise self.type_error(node, f"name {name!r} is not defined")
        return Static(value)

    def visit_Tuple(self, node: ast.Tuple) -> Value:
        values = tuple(self.visit(e) for e in node.elts)
        if all(isinstance(v, Static) for v in values):
            return Static(tuple(v.value for v in values))
        return values

    def visit_Attribute(self, node: ast.Attribute) -> Value:
        base = self.visit(node.value)
        attr = node.attr
        if isinstance(base, Static):
            obj = base.value
            if isinstance(obj, lang.Dim3):
                if attr not in ("x", "y", "z"):
                    raise self.type_error(node, f"{obj.name} has only .x, .y and .z")
                return ir.Special(obj.name, "xyz".index(attr), int32, loc=self.loc(node))
            if not hasattr(obj, attr):
                raise self.type_error(node, f"{ast.unparse(node.value)} has no attribute {attr!r}")
            return Static(getattr(obj, attr))
        if isinstance(base, ir.ArrayRef):
            if attr == "shape":
                return ShapeOf(base)
            if attr == "ndim":
                return Static(base.type.ndim)
            raise self.type_error(node, f"arrays in kernels have .shape and .ndim, not .{attr}")
        raise self.type_error(node, f"{describe(base)} has no attribute {attr!r}")

    def visit_Subscript(self, node: ast.Subscript) -> Value:
        base = self.visit(node.value)
        if isinstance(base, ShapeOf):
            d = self.static_value(node.slice)
            arr = base.array
            if not isinstance(d, int) or not -arr.type.ndim <= d < arr.type.ndim:
                raise self.type_error(node, f"{arr.name}.shape has {arr.type.ndim} entries; index {d!r} is invalid")
            return self.shape_entry(node, arr, d % arr.type.ndim)
        if isinstance(base, tuple) or isinstance(base, Static) and isinstance(base.value, tuple):
            items = base if isinstance(base, tuple) else base.value
            i = self.static_value(node.slice)
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not -len(items) <= i < len(items):
                raise self.type_error(node, f"index {i!r} is not valid for a tuple of {len(items)} items")
            return items[i] if isinstance(base, tuple) else Static(items[i])
        if isinstance(base, (ir.ArrayRef, Partial)):
            array = base if isinstance(base, ir.ArrayRef) else base.array
            prior = list(base.indices) if isinstance(base, Partial) else []
            indices = prior + self.index_list(node)
            if len(indices) < array.type.ndim:
                return Partial(array, tuple(indices))
            return self.load(node, array, indices)
        raise self.type_error(node, f"cannot index {describe(base)}")

    def index_list(self, node: ast.Subscript) -> list[ir.Expr]:
        sl = node.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out = []
        for e in elts:
            if isinstance(e, ast.Slice):
                raise self.syntax_error(e, "slices are not supported in kernels; index one element at a time")
            v = self.scalar(e, self.visit(e), "array index")
            t = self.type_of(v)
            if not t.is_int:
                raise self.type_error(e, f"array indices must be integers, not {t!r}", "convert with int32(...)")
            out.append(self.materialized(e, v))
        return out

    def check_indices(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr]) -> None:
        if len(indices) != array.type.ndim:
            raise self.type_error(
                node, f"{array.name!r} has {array.type.ndim} dimension(s) but {len(indices)} index(es) were given"
            )
        if array.type.shape is not None:
            for d, (i, n) in enumerate(zip(indices, array.type.shape)):
                if isinstance(i, ir.Lit) and not 0 <= i.value < n:
                    raise self.type_error(node, f"index {i.value} is out of bounds for dimension {d} of size {n}")

    def load(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr]) -> ir.Expr:
        self.check_indices(node, array, indices)
        return ir.Load(array, indices, array.type.elem, loc=self.loc(node))

    def visit_BinOp(self, node: ast.BinOp) -> Value:
        return self.binop(node, type(node.op), self.visit(node.left), self.visit(node.right))

    def binop(self, node: ast.AST, op_type: type, left: Value, right: Value) -> Value:
        if op_type not in _BINOPS:
            raise self.syntax_error(node, "the @ operator is not supported in kernels")
        op = _BINOPS[op_type]
        definition = ops.BINARY[op]
        left, right = self.scalar(node, left), self.scalar(node, right)
        lt, rt = self.type_of(left), self.type_of(right)
        if definition.int_only and (lt.is_float or rt.is_float):
            raise self.type_error(node, f"the {op} operator needs integers or bools, not {lt!r} and {rt!r}")
        result_t = true_divide_type(lt, rt) if op == "/" else promote(lt, rt)
        if isinstance(left, Static) and isinstance(right, Static):
            python = _is_python(left.value) and _is_python(right.value)
            at = None if python else materialize(result_t)
            return self.fold(node, definition.fold, left.value, right.value, at)
        # two run-time values of literal-only locals compute at their materialised width
        t = materialize(result_t)
        if op in ("<<", ">>") and t == bool_:
            t = int64
        if op == "**" and t.is_int and isinstance(right, Static):
            if right.value < 0:
                raise self.type_error(node, "integers cannot be raised to a negative power")
        if op == "**" and isinstance(right, Static) and isinstance(left, ir.Var) and right.value in (2, 3):
            x = self.coerce(node, left, t)
            prod: ir.Expr = ir.BinOp("*", x, x, t, loc=self.loc(node))
            return ir.BinOp("*", prod, x, t, loc=self.loc(node)) if right.value == 3 else prod
        return ir.BinOp(op, self.coerce(node, left, t), self.coerce(node, right, t), t, loc=self.loc(node))

    def fold(self, node: ast.AST, fn: Callable[..., Any], *values: Any) -> Static:
        try:
            with np.errstate(all="ignore"):
                return Static(fn(*values))
        except ZeroDivisionError:
            raise self.type_error(node, "division by zero in a constant expression") from None
        except (OverflowError, ValueError, TypeError) as e:
            raise self.type_error(node, f"cannot evaluate constant expression: {e}") from None

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Value:
        if isinstance(node.op, ast.Not):
            t = self.condition(node.operand)
            return Static(not t.value) if isinstance(t, Static) else ir.Unary("not", t, bool_, loc=self.loc(node))
        v = self.scalar(node, self.visit(node.operand))
        if isinstance(node.op, ast.UAdd):
            return v
        op = "-" if isinstance(node.op, ast.USub) else "~"
        if isinstance(v, Static):
            return self.fold(node, ops.UNARY[op].python, v.value)
        if op == "~" and v.type.is_float:
            raise self.type_error(node, f"the ~ operator needs an integer or bool, not {v.type.name}")
        if op == "-" and v.type == bool_:
            raise self.type_error(node, "cannot negate a bool", "use 'not'")
        if op == "~" and v.type == bool_:
            return ir.Unary("not", v, bool_, loc=self.loc(node))
        return ir.Unary(op, v, v.type, loc=self.loc(node))

    def condition(self, node: ast.expr) -> Value:
        """An expression used for its truth (if, while, ternary test, not): bool or static bool."""
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, as_condition=True)
        return self.truth(node, self.visit(node))

    def visit_BoolOp(self, node: ast.BoolOp) -> Value:
        return self.bool_op(node, as_condition=False)

    def bool_op_operand(self, node: ast.expr, as_condition: bool, op: str) -> Value:
        if as_condition:
            return self.condition(node)
        v = self.visit(node)
        if (
            isinstance(v, Static)
            and isinstance(v.value, (bool, np.bool_))
            or isinstance(v, ir.Expr)
            and v.type == bool_
        ):
            return v
        raise self.type_error(
            node,
            f"'{op}' on {describe(v)} would give one of the operands in Python, not a bool; "
            "gpukern supports and/or on bools outside conditions",
            "compare explicitly, e.g. (x != 0), or write 'x if x else y'",
        )

    def bool_op(self, node: ast.BoolOp, as_condition: bool) -> Value:
        """Short-circuit and/or on truth values; outside a condition the operands must be bools,
        since Python would return an operand rather than True/False."""
        op = "and" if isinstance(node.op, ast.And) else "or"
        result: Value = self.bool_op_operand(node.values[0], as_condition, op)
        for operand in node.values[1:]:
            if isinstance(result, Static):
                if bool(result.value) == (op == "or"):
                    return Static(bool(result.value))  # short circuit at compile time
                result = self.bool_op_operand(operand, as_condition, op)
                continue
            right = self.bool_op_operand(operand, as_condition, op)
            if isinstance(right, Static):
                if right.value == (op == "and"):
                    continue  # x and True == x
                return (
                    Static(op == "or")
                    if self.pure(result)
                    else ir.Logic(op, result, self.coerce(node, right, bool_), bool_, loc=self.loc(node))
                )
            result = ir.Logic(op, result, right, bool_, loc=self.loc(node))
        return result

    def pure(self, e: ir.Expr) -> bool:
        return not any(isinstance(n, (ir.Call, ir.Atomic)) for n in ir.walk(e))

    def visit_Compare(self, node: ast.Compare) -> Value:
        operands = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        result: Value = Static(True)
        for i, op_node in enumerate(node.ops):
            if type(op_node) not in _CMPOPS:
                raise self.syntax_error(node, f"the {type(op_node).__name__} comparison is not supported in kernels")
            a, b = self.scalar(node, operands[i]), self.scalar(node, operands[i + 1])
            if 0 < i < len(node.ops) and isinstance(a, ir.Expr) and not self.pure(a):
                raise self.syntax_error(
                    node, "a chained comparison's middle operand must not call functions or atomics"
                )
            op = _CMPOPS[type(op_node)]
            known = _compare_out_of_range(op, a, b)
            if isinstance(a, Static) and isinstance(b, Static):
                part: Value = Static(bool(self.fold(node, ops.COMPARE[op].fold, a.value, b.value).value))
            elif known is not None and self.pure(a if isinstance(a, ir.Expr) else b):
                part = Static(known)
            else:
                t = materialize(promote(self.type_of(a), self.type_of(b)))
                part = ir.Compare(op, self.coerce(node, a, t), self.coerce(node, b, t), bool_, loc=self.loc(node))
            if isinstance(result, Static):
                if not result.value:
                    return result
                result = part
            elif isinstance(part, Static):
                if not part.value:
                    return Static(False)
            else:
                result = ir.Logic("and", result, part, bool_, loc=self.loc(node))
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Value:
        cond = self.condition(node.test)
        if isinstance(cond, Static):
            return self.visit(node.body if cond.value else node.orelse)
        a = self.scalar(node.body, self.visit(node.body))
        b = self.scalar(node.orelse, self.visit(node.orelse))
        t = materialize(promote(self.type_of(a), self.type_of(b)))
        return ir.Select(cond, self.coerce(node, a, t), self.coerce(node, b, t), t, loc=self.loc(node))


def _is_python(value: Any) -> bool:
    """A Python number (a literal's value): operations on two of them mean what they mean in Python."""
    return isinstance(value, (bool, int, float))


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
