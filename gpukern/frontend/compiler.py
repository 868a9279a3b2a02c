"""Python AST -> typed IR: the driver, and one small visitor method per Python statement.

Expressions are lowered by ``gpukern.frontend.expressions`` (compile-time values fold there),
calls by ``gpukern.frontend.calls`` and the intrinsics by their own classes in ``gpukern.language.core``.

Local variable types are the join of everything assigned to them.  Because a use
may precede (in a loop) an assignment that widens the type, a function body is
lowered repeatedly until the variable types stop changing; only the last pass's
IR is kept.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import KernelFault, KernelSyntaxError, KernelTypeError, Loc
from ..ir import nodes as ir
from ..ir.source import ParsedFunction
from ..language import core as lang
from ..language import mma as lang_mma
from ..language.compat import RangeLike
from ..semantics import records
from ..semantics.values import (
    NUMPY_RULES,
    Partial,
    RecordElement,
    Rules,
    Static,
    Value,
    coerce,
    describe,
    is_number,
    scalar,
    store_value,
)
from ..types import (
    ArrayType,
    RecordType,
    ScalarType,
    StorageType,
    TupleType,
    Type,
    WeakType,
    array_element,
    bool_,
    join,
    type_named,
    value_type,
)
from . import loops, views
from .checks import (
    check_barrier_objects,
    check_barriers,
    check_definite_assignment,
    check_matrix_ops,
    mark_uniform_addresses,
)
from .expressions import ExpressionLowering, is_pure, unsupported
from .load_rewrites import rewrite_loads
from .passes import (
    finish_declarations,
    hoist_shared_declarations,
    mark_index_arithmetic,
    structure_early_returns,
    wrap_indices,
    written_params,
)

# run-time values that cannot change while a thread runs (a vector's lane, a call result's item, a
# thread index, a shape): held as they are, where another value is copied into a temporary first
STEADY = (ir.Lit, ir.Lane, ir.Item, ir.Special, ir.Shape)

CONSTANT_BYTES = 64 * 1024  # constant memory every CUDA device has, and OpenCL's minimum


class Compiler:
    """Lowers one kernel specialisation and the device functions it reaches."""

    def __init__(self, rules: Rules = NUMPY_RULES) -> None:
        self.rules = rules  # what stores convert and what bool arithmetic gives (semantics.values.Rules)
        self.funcs: dict[tuple[Any, ...], ir.FuncDef] = {}
        self.in_progress: set[tuple[Any, ...]] = set()
        self.tables: dict[int, tuple[ir.ArrayRef, np.ndarray]] = {}  # by the id of the module's array

    def lower_kernel(self, parsed: ParsedFunction, bindings: dict[str, Value], description: str) -> ir.Program:
        try:
            with ir.deep_recursion():
                lowering = FunctionLowering(self, parsed, bindings, is_kernel=True)
                kernel = lowering.run()
        except KernelFault as e:  # a static check's fault (a divergent barrier): the kernel's, as a run's is
            if e.kernel is None:
                e.kernel = parsed.name
            raise
        kernel.description = description
        program = ir.Program(kernel, self._reachable(kernel), list(self.tables.values()), lanes=self.rules.lanes)
        program.captured = [(ref, name) for name, ref in lowering.captured.items()]
        hoist_shared_declarations(program)
        mark_uniform_addresses(program)
        return program

    def device_function(self, df: lang.DeviceFunction, args: list[Value], loc: Loc) -> ir.FuncDef:
        parsed = df.parsed
        params = [a.arg for a in parsed.tree.args.args]
        if len(args) != len(params):
            raise KernelTypeError(f"{df.__name__}() takes {len(params)} argument(s) but {len(args)} were given", loc)
        bindings: dict[str, Value] = {}
        key_parts: list[Any] = [id(df)]
        taken = set(df.parsed.fn.__code__.co_varnames) | set(df.parsed.fn.__code__.co_names)
        for name, arg in zip(params, args):
            if isinstance(arg, ir.ArrayRef) and arg.view is not None:  # a view of the callee's own parameter
                bindings[name] = views.param(name, arg, taken)
                key_parts.append(views.key(arg))
            elif isinstance(arg, ir.ArrayRef):
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

    def constant_table(self, name: str, value: np.ndarray, loc: Loc) -> ir.ArrayRef:
        """A NumPy array of the kernel's module, read as a constant table (``TABLE[i]``): its data
        is copied now and compiled into the kernel (CUDA ``__constant__``, OpenCL ``__constant``)."""
        known = self.tables.get(id(value))
        if known is not None:
            return known[0]
        try:
            elem = array_element(value.dtype, f" for the constant table {name!r}")
        except KernelTypeError as e:
            raise KernelTypeError(e.message, loc, "convert the table to a supported type") from None
        total = sum(d.nbytes for _, d in self.tables.values()) + value.size * elem.itemsize
        if total > CONSTANT_BYTES:
            raise KernelTypeError(
                f"constant tables of {total:,} bytes (with {name!r}) exceed the {CONSTANT_BYTES:,} bytes of "
                "constant memory",
                loc,
                "pass a large table as an array argument",
            )
        taken = {ref.name for ref, _ in self.tables.values()}
        unique = ir.fresh_name(name, taken)
        if isinstance(elem, RecordType):  # records: the very layout, fields read one by one (gpukern.semantics.records)
            data = np.array(value, order="C", copy=True)
        elif isinstance(elem, StorageType):  # bfloat16 (ml_dtypes): its bits, as the simulator's memory holds them
            data = np.array(np.ascontiguousarray(value).view(elem.dtype), order="C", copy=True)
        else:
            data = np.array(value, dtype=elem.dtype, order="C", copy=True)
        ref = ir.ArrayRef(unique, ArrayType(elem, data.ndim, "constant", tuple(data.shape)), loc=loc)
        self.tables[id(value)] = (ref, data)
        return ref

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


def _leaves(t: tuple[Any, ...]) -> list[Any]:
    """A tuple's items, nested tuples opened, in order."""
    return [x for item in t for x in (_leaves(item) if isinstance(item, tuple) else [item])]


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


class FunctionLowering(ast.NodeVisitor):
    """Lowers one function body's statements; see the module docstring for the fixpoint on types."""

    MAX_PASSES = 8
    MAX_UNROLL = 4096

    def __init__(self, compiler: Compiler, parsed: ParsedFunction, bindings: dict[str, Value], is_kernel: bool):
        self.compiler = compiler
        self.parsed = parsed
        self.bindings = bindings
        self.is_kernel = is_kernel
        self.var_types: dict[str, Type] = {}
        self.pinned: dict[str, ScalarType] = {}
        self.ret_type: Type | tuple[Type, ...] | None = None
        self.returns_value: bool | None = None
        # a device function returning None on some paths and a number on others (Python's optional
        # value): it returns the pair (the number, whether it is one) (``return_optional``)
        self.optional_return = not is_kernel and _returns_none_and_value(parsed.tree)
        self.static_names = _single_assignment_names(parsed.tree)
        self.once_in_branch = _single_assignment_names(parsed.tree, in_branches=True)
        self.block_vectors: set[str] = set()  # names of vloads that went out of scope
        self.tuple_locals: dict[str, list[str]] = {}  # a local holding a tuple: the variables of its items
        self.block_arrays: set[str] = set()  # names of arrays bound in an if or loop body, out of scope
        self.declared_names: set[str] = set()  # names a shared()/local() in an if or loop body was bound to
        self.launch_bounds: tuple[int, ...] | None = None
        self.cluster: tuple[int, int, int] | None = None
        self.captured: dict[str, ir.ArrayRef] = {}  # a module's device array's name -> its parameter
        code = parsed.fn.__code__  # every name the function's body uses, without walking its tree
        self.python_names = {*code.co_varnames, *code.co_names, *code.co_freevars, *code.co_cellvars}
        self.x = ExpressionLowering(self)

    # ------------------------------------------------------------ driver
    def run(self) -> ir.FuncDef:
        tree = self.parsed.tree
        _check_signature(tree, self.loc(tree), self.is_kernel)
        _check_depth(tree, self.parsed)
        for _ in range(self.MAX_PASSES):
            self.unsettled = False
            self.env: dict[str, Value] = dict(self.bindings)
            self.array_names: dict[str, int] = {}  # names bound to arrays in the body -> the block's depth
            self.depth = 0
            self.arrays: list[ir.DeclArray | ir.DeclFragment] = []
            self.sites: dict[tuple[Any, ...], ir.ArrayRef] = {}  # a declaration's place -> its array (unroll: one)
            self.taken = set(self.python_names).union(*self.tuple_locals.values())  # names temporaries must not take
            self.taken.update(ref.name for ref in self.captured.values())
            self.nones: dict[str, tuple[str, str]] = {}  # a local that may hold None (FuncDef.nones)
            self.none_flags: dict[str, str] = {}  # ... -> the bool local saying it holds a number
            body = self.lower_block(tree.body)
            if self.optional_return and self.ret_type is not None and not (body and isinstance(body[-1], ir.Return)):
                body.append(self.none_return(tree.body[-1]))  # falling off the end returns None
            if not self.unsettled:  # no type changed after it was first used: this IR is final
                break
        else:  # pragma: no cover - the type lattice is finite and joins are monotone
            raise KernelTypeError("variable types did not settle", self.loc(tree))
        params: list[Any] = []
        for a in tree.args.args:
            b = self.bindings[a.arg]
            if isinstance(b, ir.ArrayRef) and b.view is not None:
                params += views.params(b)  # a view: its base array, starts and lengths
            elif isinstance(b, tuple):  # a kernel's tuple argument: its items, in order (kernel._tuple_binding)
                params += _leaves(b)
            elif not isinstance(b, Static):
                params.append(b)
        params += list(self.captured.values())  # after the kernel's own
        ret = None
        if self.optional_return:
            ret = TupleType((self.x.rules.materialize(self.ret_type), bool_))  # type: ignore[arg-type]
        elif self.returns_value and isinstance(self.ret_type, tuple):
            ret = TupleType(tuple(self.x.rules.materialize(t) for t in self.ret_type))
        elif self.returns_value:
            ret = self.x.rules.materialize(self.ret_type) if self.ret_type is not None else None
        fd = ir.FuncDef(
            name=self.parsed.name,
            params=params,
            body=list(self.arrays) + body,
            ret=ret,
            is_kernel=self.is_kernel,
            loc=self.loc(tree),
            launch_bounds=self.launch_bounds,
            cluster=self.cluster,
            nones=self.nones,
            optional=self.optional_return,
        )
        check_barriers(fd)
        check_barrier_objects(fd)
        check_matrix_ops(fd)  # before: a fragment set in a divergent branch is that branch's fault
        check_definite_assignment(fd, self.compiler.rules.unbound)
        if self.returns_value is not None:  # the function has a return statement
            structure_early_returns(fd)
        wrap_indices(fd)
        finish_declarations(fd, {p.name for p in params if isinstance(p, ir.Var)})
        rewrite_loads(fd, self.taken)
        fd.written = written_params(fd)
        mark_index_arithmetic(fd)
        return fd

    # ------------------------------------------------------------ what expressions and intrinsics use
    def loc(self, node: ast.AST) -> Loc:
        return self.parsed.loc(node)

    def syntax_error(self, node: ast.AST, what: str, hint: str | None = None) -> KernelSyntaxError:
        return KernelSyntaxError(what, self.loc(node), hint)

    def type_error(self, node: ast.AST, what: str, hint: str | None = None) -> KernelTypeError:
        return KernelTypeError(what, self.loc(node), hint)

    def emit(self, stmt: ir.Stmt) -> None:
        self.block.append(stmt)

    def declare(self, ref: Any, site: ast.AST) -> Any:
        """A shared or local array (or a fragment) declaration, hoisted to the top of the function:
        one per ``shared()``/``local()``/``fragment()`` in the source, so each copy of an unrolled
        body finds the same."""
        # keyed by the call's place in the source, not by the node's id: a compatibility name
        # (``cuda.shared.array``) lowers a fresh ``ast.Call`` each time, whose id a later one can
        # reuse once it is freed (two arrays would then be one)
        place = ("lineno", "col_offset", "end_lineno", "end_col_offset")
        key: tuple[Any, ...] = tuple(getattr(site, a, None) for a in place)
        if key[0] is None:  # a node made without a place: its id, the node kept alive so that it stays its own
            key = ("node", id(site), site)
        known = self.sites.get(key)
        if known is not None:
            return known
        self.sites[key] = ref
        decl = ir.DeclFragment(ref, loc=ref.loc) if isinstance(ref, ir.Fragment) else ir.DeclArray(ref, loc=ref.loc)
        self.arrays.append(decl)
        return ref

    def fresh(self, base: str) -> str:
        return ir.fresh_name(base, self.taken)

    def captured_array(self, name: str, value: Any, node: ast.AST) -> ir.ArrayRef:
        """A device array the kernel's module names (``PRICES = cuda.to_device(...)``): as in Numba,
        the kernel reads and writes it in place, through a parameter of its own after the kernel's
        (``Program.captured``: each launch passes the array the name then holds)."""
        if not self.is_kernel:
            raise self.type_error(
                node,
                f"device function {self.parsed.name}() reads the device array {name!r} of its module",
                f"pass {name} to it as an argument (a kernel may read it by name)",
            )
        found = self.captured.get(name)
        if found is not None:
            return found
        try:  # (PyTorch's float8 tensors raise KeyError: their dtype is read below)
            iface = getattr(value, "__cuda_array_interface__", None)
        except KeyError:
            iface = None
        try:
            dtype = np.dtype(iface["typestr"]) if iface is not None else np.dtype(value.dtype)
        except TypeError:
            what = f"the device array {name!r} has dtype {value.dtype}, which gpukern has no type for"
            raise self.type_error(node, what) from None
        elem = array_element(dtype, f" for the device array {name!r}")
        ref = ir.ArrayRef(ir.fresh_name(f"{name}_captured", self.taken), ArrayType(elem, len(value.shape)))
        self.taken.add(ref.name)
        self.captured[name] = ref
        return ref

    def set_launch_bounds(self, node: ast.AST, bounds: tuple[int, ...]) -> None:
        if self.launch_bounds not in (None, bounds):
            raise self.type_error(node, f"launch_bounds{bounds} contradicts launch_bounds{self.launch_bounds}")
        self.launch_bounds = bounds

    def set_cluster(self, node: ast.AST, dims: tuple[int, int, int]) -> None:
        if self.cluster not in (None, dims):
            raise self.type_error(node, f"cluster_dims{dims} contradicts cluster_dims{self.cluster}")
        self.cluster = dims

    def set_type(self, name: str, t: Type) -> None:
        """Record a variable's (joined) type; a change after its first assignment means code
        already lowered used a narrower type, so the body must be lowered again."""
        old = self.var_types.get(name)
        if old is not None and old != t:
            self.unsettled = True
        self.var_types[name] = t

    def hold(self, node: ast.AST, v: Value, base: str = "tmp") -> Value:
        """``v`` evaluated once, now: a run-time value is kept in a temporary (Python evaluates
        each expression once, where reusing its IR would evaluate it again)."""
        if not isinstance(v, ir.Expr) or isinstance(v, STEADY):
            return v
        t = ir.Var(self.fresh(base), v.type, temp=True)
        self.var_types[t.name] = v.type
        self.emit(ir.Assign(t, v, loc=self.loc(node)))
        return t

    def lower_block(self, stmts: list[ast.stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        saved = getattr(self, "block", None)
        vectors = {n: v for n, v in self.env.items() if isinstance(v, tuple)}
        self.block = out
        self.depth += 1
        try:
            for s in stmts:
                self.visit(s)
        finally:
            self.block = saved  # type: ignore[assignment]
            self.depth -= 1
        # an array bound to a name in this block is known here only (which one it is after the
        # block would depend on the path taken)
        for n in [n for n, d in self.array_names.items() if d > self.depth]:
            del self.array_names[n], self.env[n]
            self.block_arrays.add(n)
        # a vector loaded in this block is a C variable of this block: it does not outlive it
        # (a tuple local's items are variables of the function, as any local's value is)
        for n in [
            n
            for n, v in self.env.items()
            if isinstance(v, tuple) and vectors.get(n) is not v and n not in self.tuple_locals
        ]:
            del self.env[n]
            self.block_vectors.add(n)
        return out

    def generic_visit(self, node: ast.AST) -> Any:
        raise unsupported(self.loc(node), node)

    # ------------------------------------------------------------ statements
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or comment string
        if isinstance(node.value, ast.Call) and loops.ufunc_into(self, node.value):
            return
        v = self.x.visit(node.value)
        if isinstance(v, ir.Expr):
            self.emit(ir.ExprStmt(v, loc=self.loc(node)))

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.x.visit(node.value)
        if len(node.targets) > 1:  # x = y = f(): evaluated once, and before x changes what it reads
            value = self.hold(node, value)
        for target in node.targets:
            self.assign(target, value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.syntax_error(node, "only a plain name can be annotated")
        ann = self.x.static_value(node.annotation)
        t = type_named(ann)
        if t is None:
            raise self.type_error(node.annotation, f"{ast.unparse(node.annotation)} is not a scalar type")
        name = node.target.id
        if name in self.pinned and self.pinned[name] != t:
            raise self.type_error(node, f"{name!r} is declared both {self.pinned[name].name} and {t.name}")
        self.pinned[name] = t
        self.static_names.discard(name)
        self.set_type(name, t)
        if node.value is not None:
            self.assign(node.target, self.x.visit(node.value), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            current = self.x.visit_Name(node.target)
            value = self.x.binop(node, type(node.op), current, self.x.visit(node.value))
            self.assign(node.target, value, node)
        elif self.fragment_element(node.target):
            current = self.x.visit(node.target)  # acc[i] *= s: the thread's element of an accumulator
            value = self.x.binop(node, type(node.op), current, self.x.visit(node.value))
            self.emit(lang_mma.set_element(self.x, node, node.target, value))
        elif isinstance(node.target, (ast.Subscript, ast.Attribute)):
            array, indices = self.subscript_target(node.target)
            self.x.check_writable(node, array)
            indices = self.x.element_indices(node.target, array, indices)
            # a[f()] += v reads and writes one element, evaluating f() once
            indices = [i if is_pure(i) else self.hold(node, i, "index") for i in indices]
            array, indices = views.element(self.x, node.target, array, indices)
            current = ir.Load(array, indices, array.type.elem, loc=self.loc(node.target))
            value = self.x.binop(node, type(node.op), current, self.x.visit(node.value))
            self.store_element(node, array, indices, value)
        else:
            raise self.syntax_error(node, "augmented assignment needs a name or an array element")

    def fragment_element(self, target: ast.AST) -> bool:
        """Whether ``target`` is ``acc[i]`` of a fragment (always a name: looking lowers nothing, where
        lowering any other base, ``a[f(i)]``, before the store lowers it again would be wasted)."""
        return (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(self.x.visit(target.value), ir.Fragment)
        )

    def assign(self, target: ast.AST, value: Value, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target, value, node)
        elif self.fragment_element(target):
            self.emit(lang_mma.set_element(self.x, node, target, value))  # acc[i] = v
        elif isinstance(target, ast.Subscript) and views.has_slice(target.slice):
            views.store_all(self, node, target, value)  # a[1:3] = 0: every element of the view
        elif isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(
            value, (RecordElement, ir.ArrayRef, Partial)
        ):  # a whole record or sub-array field (a[i] = a[j], r.h = src), or the refusal of an array stored
            stores = records.whole_stores(self.x, node, self.x.visit(target), value)
            if stores is None:
                array, indices = self.subscript_target(target)
                self.store(node, array, indices, value)
            for array, indices, v in stores or ():
                self.store(node, array, indices, v)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            array, indices = self.subscript_target(target)
            self.store(node, array, indices, value)
        elif isinstance(target, ast.Tuple):
            values = self.x.items_of(node, value)
            if values is None or len(values) != len(target.elts):
                what = describe(value)
                if values is not None:
                    what = f"{'a tuple' if isinstance(value, (tuple, Static)) else what} of {len(values)} items"
                raise self.type_error(node, f"cannot unpack {what} into {len(target.elts)} names")
            # Python evaluates the whole right side first: hold run-time values in temporaries.
            held = [self.hold(node, v) for v in values]
            for t, v in zip(target.elts, held):
                self.assign(t, v, node)
        else:
            raise self.syntax_error(target, f"cannot assign to {ast.unparse(target)}")

    def assign_name(self, target: ast.Name, value: Value, node: ast.AST) -> None:
        name = target.id
        if isinstance(value, ir.Fragment):
            return self.bind_fragment(target, value, node)
        if isinstance(self.env.get(name), ir.Fragment):
            raise self.type_error(target, f"cannot assign {describe(value)} to {name!r}, which names a fragment")
        if isinstance(value, ir.ArrayRef) and value.temp and name not in self.static_names:
            return self.bind_declaration(target, value, node)
        if _names_array(value):
            return self.bind_array(target, value, node)
        if isinstance(self.env.get(name), ir.ArrayRef):
            raise self.type_error(
                target, f"cannot assign {describe(value)} to {name!r}, which names an array", "use another name"
            )
        if name in self.bindings and isinstance(self.bindings[name], (ir.ArrayRef, Static)):
            raise self.type_error(target, f"cannot assign to parameter {name!r}, which is an array or a Const")
        if name in self.once_in_branch and isinstance(value, Static) and not is_number(value):
            self.env[name] = value  # ``g = cuda.cg.this_grid()`` under an if: one binding, as at the top level
            return
        if name in self.static_names and not isinstance(value, ir.Expr) and not _changing_tuple(value):
            if isinstance(value, ir.ArrayRef) and value.temp:
                value.name, value.temp = name, False  # a fresh shared()/local() array takes the user's name
            self.env[name] = value  # compile-time value: folds wherever it is used
            return
        if (
            isinstance(value, tuple)
            and any(isinstance(v, (ir.Lane, ir.Item)) for v in value)
            and all(is_number(v) or isinstance(v, (ir.Lane, ir.Lit, ir.Item)) for v in value)
            and name not in self.tuple_locals
        ):
            self.env[name] = value  # a vload's or a call's result: its items never change, so uses read them directly
            return
        items = self.x.items_of(node, value)
        if items is not None:
            return self.assign_tuple(target, items, node)
        if name in self.tuple_locals:
            raise self.type_error(
                node, f"{name!r} holds a tuple elsewhere and {describe(value)} here", "use another name for it"
            )
        if self.bind_optional(name, value, node, target):
            return
        if not (is_number(value) or isinstance(value, ir.Expr)):
            raise self.type_error(
                node,
                f"cannot assign {describe(value)} to {name!r}",
                "intrinsics and functions may only be bound once, at the top level of the function",
            )
        self.assign_var(name, value, node, target)

    def assign_var(self, name: str, value: Value, node: ast.AST, target: ast.AST) -> None:
        """The variable ``name`` (a local, or a tuple local's item) set to the number ``value``."""
        if name in self.declared_names:
            raise self.type_error(
                target,
                f"{name!r} names a shared()/local() array or a fragment elsewhere; it cannot also hold a number",
                "use another name",
            )
        new_t = self.x.type_of(value)
        if name in self.pinned:
            t = self.pinned[name]
            stored = store_value(self.loc(node), scalar(self.loc(node), value), t, f"variable {name!r}", self.x.rules)
        else:
            t_join = join(self.var_types.get(name), new_t)
            self.set_type(name, t_join)
            t = self.x.rules.materialize(t_join)  # (Rules.literals: a literal-only local's width)
            stored = coerce(self.loc(node), value, t)
        var = ir.Var(name, t, loc=self.loc(target))
        self.env[name] = var
        self.emit(ir.Assign(var, stored, loc=self.loc(node)))

    def assign_tuple(self, target: ast.Name, items: tuple[Value, ...], node: ast.AST) -> None:
        """``t = (a, b)``: a tuple local is one variable per item (``t_0``, ``t_1``: their types the join
        of what each position is assigned, as any local's), so ``t`` keeps the values it was given."""
        name, loc = target.id, self.loc(node)
        kind = type(items)._make if hasattr(type(items), "_fields") else tuple  # (a named tuple keeps its names)
        items = tuple(scalar(loc, v, f"an item of the tuple assigned to {name!r}") for v in items)
        names = self.tuple_locals.get(name)
        if names is None:
            if name in self.var_types or name in self.pinned:
                raise self.type_error(node, f"{name!r} holds a number elsewhere and a tuple here", "use another name")
            names = self.tuple_locals[name] = [ir.fresh_name(f"{name}_{k}", self.taken) for k in range(len(items))]
        elif len(names) != len(items):
            raise self.type_error(
                node, f"{name!r} holds a tuple of {len(names)} items elsewhere and of {len(items)} here"
            )
        # t = (t[1], t[0]): the right side first, as Python -- items up to the last that reads an item
        # variable assigned before it are held first (in order, so calls among them keep their order)
        reads = [
            {n.name for n in ir.walk(v) if isinstance(n, ir.Var)} if isinstance(v, ir.Expr) else set() for v in items
        ]
        last = max((k for k in range(len(items)) if reads[k] & set(names[:k])), default=-1)
        items = tuple(self.hold(node, v) for v in items[: last + 1]) + items[last + 1 :]
        for item, v in zip(names, items):
            self.assign_var(item, v, node, target)
        self.env[name] = kind(self.env[item] for item in names)

    def bind_declaration(self, target: ast.Name, value: ir.ArrayRef, node: ast.AST) -> None:
        """``s = shared(...)`` in an if or loop body (or twice): the one hoisted declaration takes the
        user's name (another if a declaration has it), which stands for it to the end of the block."""
        name = target.id
        if name in self.var_types or name in self.pinned:
            raise self.type_error(
                target, f"{name!r} holds a number elsewhere; it cannot also name an array", "use another name"
            )
        self.claim_declared(name, value)
        self.bind_array(target, value, node)

    def claim_declared(self, name: str, value: ir.ArrayRef | ir.Fragment) -> None:
        """A hoisted declaration (array or fragment) takes the user's name, or a fresh one where
        another declaration has it; the name is then no scalar's (``declared_names``)."""
        taken = {d.array.name if isinstance(d, ir.DeclArray) else d.fragment.name for d in self.arrays}
        value.name, value.temp = (name if name not in taken else self.fresh(name)), False
        self.declared_names.add(name)

    def bind_fragment(self, target: ast.Name, value: ir.Fragment, node: ast.AST) -> None:
        """``f = fragment(...)`` names the new fragment (to the end of the block, as an array);
        ``c = mma(a, b, c)`` keeps ``c``; ``f = c`` (or ``f = a if h == 0 else b`` with ``h`` known at
        compile time, as in a ``gk.unroll`` body) makes ``f`` another name of that register tile, as
        Python names one object twice, to the end of the block.  Which tile a name stands for is
        fixed at compile time, so a name bound outside an if or loop body is not bound again inside
        it (which tile would depend on the path taken at run time)."""
        name = target.id
        current = self.env.get(name)
        if value.temp:
            if name in self.var_types or name in self.pinned or name in self.bindings or current is not None:
                raise self.type_error(target, f"{name!r} names something else; it cannot also name a fragment")
            self.claim_declared(name, value)
        elif current is not value:
            if name in self.var_types or name in self.pinned or name in self.bindings or (
                current is not None and not isinstance(current, ir.Fragment)
            ):
                raise self.type_error(target, f"{name!r} names something else; it cannot also name a fragment")
            if current is not None and self.array_names.get(name, 0) < self.depth:
                raise self.type_error(
                    node,
                    f"{name!r} names fragment {current.name!r}, bound outside this if or loop body; binding it to "
                    f"{value.name!r} here would make which tile it names depend on the path taken at run time",
                    "unroll the loop (gk.unroll) so that each pass is known at compile time, or bind the name "
                    "afresh inside the body: f = a if h == 0 else b",
                )
            self.env[name] = value
            self.array_names[name] = self.depth
            return
        self.env[name] = value
        self.array_names.setdefault(name, self.depth)

    def bind_array(self, target: ast.Name, value: ir.ArrayRef | Partial, node: ast.AST) -> None:
        """``v = a``, ``v = a[1:3]``, ``r = a[i]`` (a row of a 2-D array: a view): from here on, to
        the end of the block, the name stands for that array (``gpukern.frontend.views``)."""
        name = target.id
        if isinstance(value, Partial):
            value = views.slice_array(self.x, node, value, None, ast.unparse(getattr(node, "value", target)))
        if name in self.var_types or name in self.env and not isinstance(self.env[name], ir.ArrayRef):
            raise self.type_error(
                target, f"{name!r} holds a number elsewhere; it cannot also name an array", "use another name"
            )
        if name in self.bindings and isinstance(self.bindings[name], Static):
            raise self.type_error(target, f"cannot assign to parameter {name!r}, which is a Const")
        if name in self.env and self.array_names.get(name, 0) < self.depth:
            raise views.refuse_rebinding(self.x, node, name, value)
        if value.view is not None:
            views.name_view(value, name)
        self.env[name] = value
        self.array_names[name] = self.depth

    def subscript_target(self, node: ast.Subscript | ast.Attribute) -> tuple[ir.ArrayRef, list[ir.Expr]]:
        """The array and indices an element target names: ``a[i, j]``, and for a record array
        ``a[i].x``, ``a[i]["x"]`` or ``a["x"][i]`` (the field's array, see ``gpukern.semantics.records``)."""
        if isinstance(node, ast.Subscript) and views.has_slice(node.slice):
            raise views.refuse_slice_store(self.x, node, node)
        base = self.x.visit(node.value)
        name = node.attr if isinstance(node, ast.Attribute) else records.field_name(self.x, node.slice)
        if name is not None:
            return records.field_target(self.x, node, base, name)
        indices = self.x.index_list(node.slice)
        if isinstance(base, (Partial, ir.ArrayRef)):
            whole = base.array if isinstance(base, Partial) else base
            if len(indices) + len(getattr(base, "indices", ())) == whole.type.ndim:
                records.not_a_record(self.x, node, whole, "a store")
        if isinstance(base, Partial):
            return base.array, list(base.indices) + indices
        if isinstance(base, ir.ArrayRef):
            return base, indices
        raise self.type_error(node, f"cannot assign into {describe(base)}")

    def store(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr], value: Value) -> None:
        self.x.check_writable(node, array)
        indices = self.x.element_indices(node, array, indices)
        array, indices = views.element(self.x, node, array, indices)
        self.store_element(node, array, indices, value)

    def store_element(self, node: ast.AST, array: ir.ArrayRef, indices: list[ir.Expr], value: Value) -> None:
        value = scalar(self.loc(node), value, "stored value")
        elem = value_type(array.type.elem)  # a bfloat16 array stores float32 values, rounded
        stored = store_value(self.loc(node), value, elem, f"array {array.name!r}", self.x.rules)
        self.emit(ir.Store(array, indices, stored, loc=self.loc(node)))

    def visit_If(self, node: ast.If) -> None:
        cond = self.x.condition(node.test)
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
        cond = self.x.inline_only(node.test, "a while loop's condition", lambda: self.x.condition(node.test))
        if isinstance(cond, Static):
            if not cond.value:
                return
            cond = ir.Lit(True, bool_, loc=self.loc(node.test))
        body = self.lower_block(node.body)
        self.emit(ir.While(cond, body, loc=self.loc(node)))

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.syntax_error(node, "for ... else is not supported")
        it = node.iter
        unrolled = isinstance(it, ast.Call) and self.x.static_value(it.func, default=None) is lang.unroll
        if unrolled:
            if len(it.args) != 1 or it.keywords:
                raise self.syntax_error(it, "unroll() takes one range(...)", "write: for i in unroll(range(n))")
            it = it.args[0]
        looped = self.x.static_value(it.func, default=None) if isinstance(it, ast.Call) else None
        if not unrolled and not (looped is range or isinstance(looped, RangeLike)):
            return loops.iterate(self, node)
        if not (looped is range or isinstance(looped, RangeLike)):
            raise self.syntax_error(it, "unroll() takes one range(...)", "write: for i in unroll(range(n))")
        allowed = RangeLike.keywords if isinstance(looped, RangeLike) else ()
        if any(k.arg not in allowed for k in it.keywords) or not 1 <= len(it.args) <= 3:
            raise self.syntax_error(it, "range() takes 1 to 3 positional arguments")
        if not isinstance(node.target, ast.Name):
            raise self.syntax_error(node.target, "the loop variable must be a single name")
        args = [scalar(self.loc(a), self.x.visit(a), "range() argument") for a in it.args]
        if unrolled:
            return self.unroll_loop(node, it, args)
        for a, v in zip(it.args, args):
            t = self.x.type_of(v)
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
            t_join = join(t_join, self.x.type_of(v))
        if name in self.pinned:
            t_join = self.pinned[name]
        self.set_type(name, t_join)
        t = self.x.rules.materialize(t_join)  # (Rules.literals: a literal-only local's width)
        var = ir.Var(name, t, loc=self.loc(node.target))
        self.env[name] = var
        bounds = [coerce(self.loc(a), v, t) for a, v in zip([node.iter] * 3, (start, stop, step))]
        body = self.lower_block(node.body)
        # The bounds are evaluated once, as in Python: hold them in temporaries if the
        # body could change what they read.
        assigned = {s.target.name for s in ir.walk_body(body) if isinstance(s, ir.Assign)}
        for i in (1, 2):
            b = bounds[i]
            reads = {n.name for n in ir.walk(b) if isinstance(n, ir.Var)}
            impure = any(n.accesses() or isinstance(n, (ir.Call, ir.WarpOp)) for n in ir.walk(b))
            if reads & assigned or impure:
                bounds[i] = self.hold(node, b, f"{name}_{'stop' if i == 1 else 'step'}")
        self.emit(ir.For(var, bounds[0], bounds[1], bounds[2], sign, body, loc=self.loc(node)))

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
        try:
            count = len(values)
        except OverflowError:  # more than sys.maxsize iterations
            count = None
        if count is None or count > self.MAX_UNROLL:
            raise self.type_error(
                it,
                f"unroll() of {'more than 2**63' if count is None else count} iterations (at most {self.MAX_UNROLL})",
                "loop with plain range()",
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
        if self.optional_return:
            return self.return_optional(node, has_value)
        if self.is_kernel and has_value:
            raise self.type_error(node, "a kernel cannot return a value", "write results into an array")
        if self.returns_value is not None and self.returns_value != has_value:
            raise self.type_error(node, "a function must return a value on every return or on none")
        self.returns_value = has_value
        if not has_value:
            self.emit(ir.Return(loc=self.loc(node)))
            return
        value = self.x.visit(node.value)
        items = self.x.items_of(node, value)
        if items is not None:
            return self.return_tuple(node, items)
        if isinstance(self.ret_type, tuple):
            raise self.type_error(node, f"this function returns a tuple of {len(self.ret_type)} items elsewhere")
        value = scalar(self.loc(node), value, "returned value")
        ret_type = join(self.ret_type, self.x.type_of(value))
        if self.ret_type is not None and ret_type != self.ret_type:
            self.unsettled = True  # an earlier return was converted to the narrower type
        self.ret_type = ret_type
        t = self.x.rules.materialize(self.ret_type, value.value if isinstance(value, Static) else None)
        self.emit(ir.Return(coerce(self.loc(node), value, t), loc=self.loc(node)))

    def return_optional(self, node: ast.Return, has_value: bool) -> None:
        """A return of a function that returns None on some paths and a number on others: the pair
        (the number, True), or (0, False) for None; the caller keeps the number only where it is one
        (``bind_optional``)."""
        self.returns_value = True
        if not has_value:
            if self.ret_type is None:  # the number's type is not known yet: the next pass knows it
                self.unsettled = True
                self.emit(ir.Return(loc=self.loc(node)))
            else:
                self.emit(self.none_return(node))
            return
        value = self.x.visit(node.value)
        if self.x.items_of(node, value) is not None:
            raise self.type_error(
                node,
                "a function that returns None on some paths must return one number on the others, not a tuple",
                "return a flag with the tuple instead of None",
            )
        value = scalar(self.loc(node), value, "returned value")
        ret_type = join(self.ret_type, self.x.type_of(value))  # type: ignore[arg-type]
        if self.ret_type is not None and ret_type != self.ret_type:
            self.unsettled = True  # an earlier return was converted to the narrower type
        self.ret_type = ret_type
        t = self.x.rules.materialize(ret_type, value.value if isinstance(value, Static) else None)
        loc = self.loc(node)
        pair = TupleType((t, bool_))
        made = ir.MakeTuple([coerce(loc, value, t), ir.Lit(True, bool_, loc=loc)], pair, loc=loc)
        self.emit(ir.Return(made, loc=loc))

    def none_return(self, node: ast.AST) -> ir.Return:
        loc = self.loc(node)
        t = self.x.rules.materialize(self.ret_type)  # type: ignore[arg-type]
        pair = TupleType((t, bool_))
        return ir.Return(ir.MakeTuple([ir.Lit(0, t, loc=loc), ir.Lit(False, bool_, loc=loc)], pair, loc=loc), loc=loc)

    def bind_optional(self, name: str, value: Value, node: ast.AST, target: ast.AST) -> bool:
        """``name = v`` where either may hold None (Python's optional value), which C cannot: ``name``
        is then a number set only where it is not None, and a bool local says which (``r is None``
        reads it; the simulator reports a read of ``name`` where it is None).  False: neither may."""
        loc = self.loc(node)
        source = value.name if isinstance(value, ir.Var) else None
        is_none = isinstance(value, Static) and value.value is None
        if not is_none and source not in self.nones and name not in self.nones:
            return False
        if name in self.tuple_locals:
            raise self.type_error(node, f"{name!r} holds a tuple elsewhere and may be None here", "use another name")
        flag = self.none_flags.get(name)
        if flag is None:
            flag = self.none_flags[name] = self.fresh(f"{name}_is_set")
        if is_none:
            self.nones[name] = (repr(name), f"assigned None at line {loc.lineno}" if loc else "assigned None")
            self.assign_var(flag, Static(False), node, target)
        elif source in self.nones and source != name:
            self.nones[name] = (repr(name), self.nones[source][1])
            held = ir.Var(self.none_flags[source], bool_, loc=loc)
            self.assign_var(flag, held, node, target)
            saved, self.block = self.block, []
            self.assign_var(name, value, node, target)
            then = self.block
            self.block = saved
            self.emit(ir.If(ir.Var(flag, bool_, loc=loc), then, [], loc=loc))
        else:  # a number into a local that may hold None elsewhere
            self.assign_var(flag, Static(True), node, target)
            self.assign_var(name, value, node, target)
        return True

    def optional_result(self, call: ir.Call, fn_name: str, node: ast.AST) -> ir.Var:
        """A call of a function returning None on some paths: its number in a local set only where
        the call returned one (``bind_optional`` copies it with its flag)."""
        loc = self.loc(node)
        pair = call.type
        holder = ir.Var(self.fresh("result"), pair, temp=True, loc=loc)  # type: ignore[arg-type]
        self.var_types[holder.name] = pair  # type: ignore[assignment]
        self.emit(ir.Assign(holder, call, loc=loc))
        name = self.fresh(f"{fn_name}_result")
        flag = self.none_flags[name] = self.fresh(f"{name}_is_set")
        self.nones[name] = (f"the result of {fn_name}()", f"{fn_name}() returned None")
        t = pair.items[0]  # type: ignore[union-attr]
        self.set_type(flag, bool_)
        held = ir.Item(ir.Var(holder.name, pair, temp=True), 1, bool_)
        self.emit(ir.Assign(ir.Var(flag, bool_, loc=loc), held, loc=loc))
        self.set_type(name, t)
        value = ir.Item(ir.Var(holder.name, pair, temp=True), 0, t, loc=loc)
        keep = ir.Assign(ir.Var(name, t, loc=loc), value, loc=loc)
        self.emit(ir.If(ir.Var(flag, bool_, loc=loc), [keep], [], loc=loc))
        return ir.Var(name, t, loc=loc)

    def is_set(self, v: Value) -> ir.Var | None:
        """The flag of a local that may hold None (``v is None`` is its negation), or None."""
        if isinstance(v, ir.Var) and v.name in self.none_flags:
            return ir.Var(self.none_flags[v.name], bool_, loc=v.loc)
        return None

    def return_tuple(self, node: ast.Return, items: tuple[Value, ...]) -> None:
        """``return a, b``: every return of the function gives as many items; each position's type
        is the join of what the returns give there, as a variable's is."""
        if not items:
            raise self.type_error(node, "a function cannot return an empty tuple", "return nothing instead")
        items = tuple(scalar(self.loc(node), v, "a returned tuple's item") for v in items)
        if self.ret_type is not None and not isinstance(self.ret_type, tuple):
            raise self.type_error(node, "this function returns a single value elsewhere, and a tuple here")
        if self.ret_type is not None and len(self.ret_type) != len(items):
            raise self.type_error(
                node, f"this function returns {len(items)} items here and {len(self.ret_type)} elsewhere"
            )
        old = self.ret_type or (None,) * len(items)
        ret_type = tuple(join(t, self.x.type_of(v)) for t, v in zip(old, items))
        if self.ret_type is not None and ret_type != self.ret_type:
            self.unsettled = True  # an earlier return was converted to narrower types
        self.ret_type = ret_type
        t = TupleType(tuple(self.x.rules.materialize(x) for x in ret_type))
        loc = self.loc(node)
        made = ir.MakeTuple([coerce(loc, v, x) for v, x in zip(items, t.items)], t, loc=loc)
        self.emit(ir.Return(made, loc=loc))

    def visit_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            raise self.syntax_error(node, "only 'with superstep():' is supported in kernels")
        item = node.items[0]
        ctx = item.context_expr
        if not (isinstance(ctx, ast.Call) and self.x.static_value(ctx.func, default=None) is lang.superstep):
            raise self.syntax_error(node, "only 'with superstep():' is supported in kernels")
        if ctx.args or ctx.keywords or item.optional_vars is not None:
            raise self.syntax_error(node, "superstep() takes no arguments and binds no name")
        for s in node.body:
            self.visit(s)
        self.emit(ir.Barrier(loc=self.loc(node)))


def _returns_none_and_value(tree: ast.FunctionDef) -> bool:
    """Whether the function returns a number (or tuple) on some paths and None (``return``,
    ``return None``, or the end of its body reached) on others."""
    values = nones = False
    for n in ast.walk(tree):
        if isinstance(n, ast.Return):
            if n.value is None or (isinstance(n.value, ast.Constant) and n.value.value is None):
                nones = True
            else:
                values = True
    return values and (nones or _falls_through(tree.body))


def _falls_through(body: list[ast.stmt]) -> bool:
    """Whether running ``body`` may reach its end: not if it ends in a return or a raise, or in an
    ``if`` whose branches both end so (a loop may always end: its condition is not known here)."""
    if not body:
        return True
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value is True:
        return any(isinstance(n, ast.Break) for n in ast.walk(last))
    return True


def _changing_tuple(value: Value) -> bool:
    """A tuple with an item whose value may change after the tuple is made (a variable, a load):
    a local bound to it keeps its own copies (``FunctionLowering.assign_tuple``)."""
    return isinstance(value, tuple) and any(isinstance(v, ir.Expr) and not isinstance(v, STEADY) for v in value)


def _names_array(value: Value) -> bool:
    """An array a name can stand for (``v = a``, ``v = a[1:3]``, ``r = a[i]``); a fresh shared() or
    local() declaration takes its name as before, and a record of a record array is not one."""
    if isinstance(value, Partial):
        return not records.is_record_array(value.array)
    return isinstance(value, ir.ArrayRef) and not value.temp


def _check_signature(tree: ast.FunctionDef, loc: Loc, kernel: bool) -> None:
    """Plain positional parameters; a kernel's last ones may have defaults (the launch fills them
    in: ``Kernel.complete``), a device function's not."""
    a = tree.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or (a.defaults and not kernel):
        raise KernelSyntaxError(
            "kernel and device function parameters must be plain positional names "
            "(no *args, **kwargs or keyword-only parameters; defaults in a kernel only)",
            loc,
        )


def _single_assignment_names(tree: ast.FunctionDef, in_branches: bool = False) -> set[str]:
    """Locals bound exactly once, at the top level of the body: they may hold
    compile-time values (constants, arrays, intrinsics) and fold like constants.  With
    ``in_branches``: those bound exactly once inside the bodies of ifs (not of loops), which may
    hold an intrinsic's or a group's compile-time value (not a number: a path without the binding
    would read it unassigned)."""
    counts: dict[str, int] = {}
    for name, _ in _assigned_names(tree):
        counts[name] = counts.get(name, 0) + 1
    top: set[str] = set()
    stmts: list[ast.stmt] = list(tree.body)
    if in_branches:
        stmts = []
        ifs = [s for s in tree.body if isinstance(s, ast.If)]
        while ifs:
            s = ifs.pop()
            for inner in s.body + s.orelse:
                (ifs if isinstance(inner, ast.If) else stmts).append(inner)
    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            top.add(stmt.targets[0].id)
    params = {a.arg for a in tree.args.args}
    return {n for n in top if counts.get(n) == 1 and n not in params}


def _check_depth(tree: ast.FunctionDef, parsed: ParsedFunction) -> None:
    """Expressions nested deeper than ``ir.MAX_DEPTH`` are refused at their line (found without recursion)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr) and node.end_lineno == node.lineno:
            if (node.end_col_offset or 0) - node.col_offset + depth < ir.MAX_DEPTH:
                continue  # a level of nesting takes a character at least: this one is not deep enough
        if depth > ir.MAX_DEPTH and isinstance(node, ast.expr):
            raise KernelSyntaxError(
                f"this expression is nested more than {ir.MAX_DEPTH} levels deep",
                parsed.loc(node),
                "split it into several statements",
            )
        inner = depth + 1 if isinstance(node, ast.expr) else 0
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
