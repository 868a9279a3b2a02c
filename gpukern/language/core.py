"""The names a kernel uses -- thread geometry, memory, barriers, atomics -- each defined once.

Every intrinsic is one object whose class owns its typing and its lowering to IR
(``lower``); the IR it produces is generic (``Barrier``, ``Atomic``, ``VecLoad``...) and the
meaning of an atomic lives in ``gpukern.semantics.ops``.  The front end finds an intrinsic by
identity, whatever the user imported it as (``gk.barrier``, ``from gpukern import barrier
as sync``), and calls its ``lower``: adding an intrinsic is adding a class here, not a
method to the front end.  Called from ordinary Python, an intrinsic says it only works
inside a kernel rather than doing something wrong quietly.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..errors import GpukernError, KernelSyntaxError, KernelTypeError, Loc
from ..ir import nodes as ir
from ..ir.source import ParsedFunction, parse_function
from ..semantics import ops
from ..semantics.values import Rules, Static, Value, describe, scalar, store_value
from ..types import ArrayType, Const, RecordType, ScalarType, StorageType, Type, bool_, int32, type_named, value_type


class Lowering(Protocol):
    """What an intrinsic's ``lower`` may use of the front end (``gpukern.frontend.expressions``)."""

    is_kernel: bool
    rules: Rules  # what stores convert, what bool arithmetic gives: the kernel's

    def loc(self, node: ast.AST) -> Loc: ...

    def visit(self, node: ast.AST) -> Value: ...

    def static_value(self, node: ast.AST, default: Any = ...) -> Any: ...

    def type_of(self, v: Value) -> Type: ...

    def nargs(self, node: ast.Call, n: int | tuple[int, ...], name: str) -> None: ...

    def emit(self, stmt: ir.Stmt) -> None: ...

    def declare(self, ref: ir.ArrayRef, site: ast.AST) -> ir.ArrayRef: ...

    def fresh(self, base: str) -> str: ...

    def array_and_index(self, node: ast.Call, what: str) -> tuple[ir.ArrayRef, list[ir.Expr]]: ...

    def set_launch_bounds(self, node: ast.AST, bounds: tuple[int, ...]) -> None: ...

    def set_cluster(self, node: ast.AST, dims: tuple[int, int, int]) -> None: ...

    @property
    def cluster(self) -> tuple[int, int, int] | None: ...

    def call(self, fn: Any, node: ast.Call, values: list[Value] | None = None) -> Value: ...

    def binop(self, node: ast.AST, op_type: type, left: Value, right: Value) -> Value: ...

    def compare(self, node: ast.AST, op: str, a: Value, b: Value) -> ir.Compare: ...


class Intrinsic:
    """A function that exists only inside kernels; subclasses lower its calls."""

    keywords: tuple[str, ...] = ()  # keyword arguments its ``lower`` reads (``width=``); others are refused
    # the positions of the arguments it needs at compile time (a type, a shape): a @func parameter
    # passed there is specialised on the caller's constant (``DeviceFunction.compile_time_params``)
    compile_time: tuple[int, ...] = ()

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise GpukernError(f"{self.name}() can only be used inside a @kernel or @func")

    def __repr__(self) -> str:
        return f"<gpukern intrinsic {self.name}>"

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        """The call ``node`` as IR (statements go through ``cx.emit``) or a compile-time value."""
        raise NotImplementedError

    def arguments(self, cx: Lowering, node: ast.Call, names: tuple[str, ...], required: int) -> list[ast.expr | None]:
        """The call's arguments by parameter (positional, then keywords: ``calls.lower_call`` let
        through only ``keywords``), None where left out; the first ``required`` must be given."""
        if len(node.args) > len(names):
            raise KernelTypeError(
                f"{self.name}() takes at most {len(names)} arguments, {len(node.args)} given", cx.loc(node)
            )
        out: list[ast.expr | None] = list(node.args) + [None] * (len(names) - len(node.args))
        for kw in node.keywords:
            k = names.index(kw.arg)
            if out[k] is not None:
                raise KernelTypeError(f"{self.name}() got {kw.arg} twice", cx.loc(node))
            out[k] = kw.value
        missing = [n for n, a in zip(names[:required], out) if a is None]
        if missing:
            raise KernelTypeError(
                f"{self.name}() needs {', '.join(missing)}: {self.name}({', '.join(names)})", cx.loc(node)
            )
        return out


class Dim3:
    """A thread-geometry vector with ``.x``, ``.y``, ``.z`` (``thread_idx`` etc.)."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc

    def __getattr__(self, attr: str) -> Any:
        if attr in ("x", "y", "z"):
            raise GpukernError(f"{self.name}.{attr} can only be used inside a @kernel or @func")
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"<gpukern {self.name}>"

    def lower_attribute(self, cx: Lowering, node: ast.Attribute) -> Value:
        if node.attr not in ("x", "y", "z"):
            raise KernelTypeError(f"{self.name} has only .x, .y and .z", cx.loc(node))
        return ir.Special(self.name, "xyz".index(node.attr), int32, loc=cx.loc(node))


class Property:
    """An intrinsic read as a name instead of called (Numba's ``cuda.laneid``, ``cuda.warpsize``):
    reading it lowers the argument-less call of ``of``, the one definition."""

    def __init__(self, name: str, of: Intrinsic):
        self.name, self.of = name, of
        self.__doc__ = f"{name}: {of.name}(), read as a name"

    def __repr__(self) -> str:
        return f"<gpukern {self.name}>"

    def read(self, cx: Lowering, node: ast.expr) -> Value:
        return self.of.lower(cx, ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node))


class KernelObject:
    """Base of ``@kernel`` objects: device code can tell it was handed a kernel (which it may
    not call) without the front end importing the kernel layer above it."""


class DeviceFunction:
    """A ``@func`` helper: callable from kernels and other helpers, specialised per call types."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._parsed: ParsedFunction | None = None
        self._compile_time: frozenset[str] | None = None
        # per parameter, the type a call's argument is converted to first (None: the argument's own),
        # as a Numba device function's signature declares them (``cuda.jit("int32(int32)", device=True)``)
        self.arg_types: tuple[Any, ...] | None = None

    @property
    def parsed(self) -> ParsedFunction:
        if self._parsed is None:
            self._parsed = parse_function(self.fn)
        return self._parsed

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gpukern func {self.__name__}>"

    @property
    def compile_time_params(self) -> frozenset[str]:
        """The parameters this function uses where a compile-time value is needed (the type or shape
        of ``shared``/``local``, directly or through another @func): a call passes its constant there
        as a constant, and the function is specialised on it, as Numba does (``cuda.shared.array(n,
        dtype)`` in a device function).  Found once, from the source, resolving names as the module
        and closure bind them."""
        if self._compile_time is None:
            self._compile_time = frozenset()  # a recursive call sees none while this is worked out
            self._compile_time = _compile_time_params(self)
        return self._compile_time


def _resolve(fn: Any, node: ast.expr) -> Any:
    """What a callee expression (``shared``, ``gk.shared``, ``cuda.shared.array``) names in ``fn``'s
    module and closure, or None where that is not known from the source alone."""
    if isinstance(node, ast.Attribute):
        base = _resolve(fn, node.value)
        return getattr(base, node.attr, None) if base is not None else None
    if not isinstance(node, ast.Name):
        return None
    code = fn.__code__
    if node.id in code.co_freevars and fn.__closure__:
        try:
            return fn.__closure__[code.co_freevars.index(node.id)].cell_contents
        except ValueError:
            return None
    return fn.__globals__.get(node.id, getattr(builtins, node.id, None))


def _compile_time_params(df: DeviceFunction) -> frozenset[str]:
    fn = df.fn
    params = {a.arg for a in df.parsed.tree.args.args}
    found: set[str] = set()
    for a in df.parsed.tree.args.args:  # declared so: def f(..., at: Const[int])
        ann = a.annotation
        if ann is not None and _resolve(fn, ann.value if isinstance(ann, ast.Subscript) else ann) is Const:
            found.add(a.arg)
    for node in ast.walk(df.parsed.tree):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and node.iter.args:
            if _resolve(fn, node.iter.func) is unroll:  # for i in unroll(range(...)): its bounds
                found |= {n.id for n in ast.walk(node.iter.args[0]) if isinstance(n, ast.Name) and n.id in params}
        if not isinstance(node, ast.Call):
            continue
        callee = _resolve(fn, node.func)
        if isinstance(callee, Intrinsic):
            positions = callee.compile_time
        elif isinstance(callee, DeviceFunction):
            inner = [a.arg for a in callee.parsed.tree.args.args]
            positions = tuple(k for k, name in enumerate(inner) if name in callee.compile_time_params)
        else:
            continue
        for k in positions:
            if k < len(node.args):
                found |= {n.id for n in ast.walk(node.args[k]) if isinstance(n, ast.Name) and n.id in params}
    return frozenset(found)


def func(fn: Any) -> DeviceFunction:
    """Decorate a helper callable from kernels (``__device__`` in CUDA)."""
    return DeviceFunction(fn)


# ---------------------------------------------------------------- synchronisation
class Statement(Intrinsic):
    """A call with no arguments that is one IR statement (``barrier()``, the fences)."""

    def __init__(self, name: str, doc: str, make: Callable[[Loc], ir.Stmt]):
        super().__init__(name, doc)
        self.make = make

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        cx.emit(self.make(cx.loc(node)))
        return Static(None)


class _Misplaced(Intrinsic):
    """An intrinsic that is part of a statement's syntax (``for ... in unroll(...)``, ``with``)."""

    def __init__(self, name: str, doc: str, usage: str):
        super().__init__(name, doc)
        self.usage = usage

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        raise KernelSyntaxError(self.usage, cx.loc(node))


class _GlobalId(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        d = cx.static_value(node.args[0])
        if d not in (0, 1, 2) or isinstance(d, bool):
            raise KernelTypeError(f"global_id() takes a dimension 0, 1 or 2, not {d!r}", cx.loc(node))
        return ir.Special("global_id", int(d), int32, loc=cx.loc(node))


class _LaunchBounds(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, (1, 2), self.name)
        if not cx.is_kernel:
            raise KernelSyntaxError("launch_bounds() belongs in the kernel, not in a @func", cx.loc(node))
        bounds = tuple(cx.static_value(a) for a in node.args)
        if not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) and 0 < b < 2**31 for b in bounds):
            raise KernelTypeError(f"launch_bounds() takes positive integers below 2**31, not {bounds!r}", cx.loc(node))
        cx.set_launch_bounds(node, tuple(int(b) for b in bounds))
        return Static(None)


# ---------------------------------------------------------------- memory
class _ArrayDecl(Intrinsic):
    """``shared(dtype, shape)`` / ``local(dtype, shape)``: a static-shape array in one space."""

    MAX_ELEMENTS = 2**31 - 1
    compile_time = (0, 1)  # the type and the shape

    def __init__(self, name: str, doc: str, space: str):
        super().__init__(name, doc)
        self.space = space

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        space = self.space
        cx.nargs(node, 2, space)
        t = node.args[0]  # a type, or a dtype's name as a string literal ("int32", as Numba takes)
        named = _dtype_named(t.value) if isinstance(t, ast.Constant) else cx.static_value(t, default=None)
        elem = type_named(named)
        if elem is None:
            record = isinstance(named, RecordType) or getattr(getattr(named, "dtype", None), "names", None)
            raise KernelTypeError(
                f"{space}() needs an element type such as float32, not {ast.unparse(node.args[0])}"
                + (" (a record type: records live in global arrays only)" if record else ""),
                cx.loc(node.args[0]),
                f"a {space}() array per field of the record" if record else None,
            )
        shape = cx.static_value(node.args[1], default=None)
        if shape is None:
            raise KernelTypeError(
                f"{space}() needs a compile-time shape",
                cx.loc(node.args[1]),
                "make the sizes Const[int] parameters or module-level constants",
            )
        if space == "shared" and isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) and shape == 0:
            return _dynamic_array(cx, node, elem)  # Numba's spelling of memory sized at launch
        shape = shape if isinstance(shape, tuple) else (shape,)
        ok = all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in shape)
        if not shape or not ok:
            raise KernelTypeError(
                f"{space}() shape must be one or more positive integers, not {shape!r}", cx.loc(node.args[1])
            )
        shape = tuple(int(s) for s in shape)
        if int(np.prod(shape, dtype=object)) > self.MAX_ELEMENTS:
            raise KernelTypeError(f"{space}() array of shape {shape} is too large for a GPU", cx.loc(node.args[1]))
        # declarations are hoisted to the top of the function (OpenCL requires it of __local
        # arrays; a @func's shared ones go on to the kernel: passes.hoist_shared_declarations); a
        # fresh name until the assignment that binds the array gives it the user's
        ref = ir.ArrayRef(cx.fresh(space), ArrayType(elem, len(shape), space, shape), loc=cx.loc(node), temp=True)
        return cx.declare(ref, node)


class _DynamicShared(Intrinsic):
    """``dynamic_shared(dtype)``: the block's shared memory sized at launch, as a 1-D array."""

    compile_time = (0,)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        elem = type_named(cx.static_value(node.args[0], default=None))
        if elem is None:
            raise KernelTypeError(
                f"dynamic_shared() needs an element type such as float32, not {ast.unparse(node.args[0])}",
                cx.loc(node.args[0]),
            )
        return _dynamic_array(cx, node, elem)


def _dynamic_array(cx: Lowering, node: ast.Call, elem: ScalarType) -> ir.ArrayRef:
    """A shared array whose length the launch decides: shape None, every one from byte 0 of the
    launch's dynamic shared memory (CUDA's ``extern __shared__``)."""
    ref = ir.ArrayRef(cx.fresh("shared"), ArrayType(elem, 1, "shared", None), loc=cx.loc(node), temp=True)
    return cx.declare(ref, node)


class _Vector(Intrinsic):
    """``vload(a, i, n)`` / ``vstore(a, i, values)``: n consecutive elements in one access."""

    def check(self, cx: Lowering, node: ast.Call, array: ir.ArrayRef, indices: list[ir.Expr], width: Any) -> int:
        elem, what, loc = array.type.elem, self.name, cx.loc(node)
        if array.type.ndim == 0:
            raise KernelTypeError(f"{what}() of a 0-dimensional array, which holds one element", loc)
        if array.record_field is not None:
            raise KernelTypeError(f"{what}() of a record field: fields are read one element at a time", loc)
        if width not in (2, 4, 8) or isinstance(width, bool):
            raise KernelTypeError(f"{what}() moves 2, 4 or 8 elements at a time, not {width!r}", loc)
        if elem == bool_ or elem.itemsize * width > 16 or elem.itemsize < 2 or elem.is_complex:
            raise KernelTypeError(
                f"{what}() of {width} {elem.name} elements: vector accesses move 16 bytes at most, "
                "of 2-, 4- or 8-byte elements (8 at a time: 2-byte ones), and no bools or complex numbers",
                loc,
            )
        last = indices[-1]
        if isinstance(last, ir.Lit):
            if last.value % width:
                raise KernelTypeError(
                    f"{what}() at index {last.value}, which is not a multiple of {width} (misaligned)", loc
                )
            if array.type.shape is not None and last.value + width > array.type.shape[-1]:
                raise KernelTypeError(
                    f"{what}() of elements {last.value}..{last.value + width - 1} is out of bounds "
                    f"for dimension {array.type.ndim - 1} of size {array.type.shape[-1]}",
                    loc,
                )
        return int(width)


class _VLoad(_Vector):
    compile_time = (2,)  # the width

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        array, indices = cx.array_and_index(node, self.name)
        width = self.check(cx, node, array, indices, cx.static_value(node.args[2]))
        name = cx.fresh(f"{array.name}_v")
        cx.emit(ir.VecLoad(name, array, indices, width, loc=cx.loc(node)))
        elem = value_type(array.type.elem)  # (bfloat16's values are float32)
        return tuple(ir.Lane(name, k, elem, loc=cx.loc(node)) for k in range(width))


class _VStore(_Vector):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        array, indices = cx.array_and_index(node, self.name)
        values = cx.visit(node.args[2])
        if isinstance(values, Static) and isinstance(values.value, tuple):
            values = tuple(Static(v) for v in values.value)
        if not isinstance(values, tuple):
            raise KernelTypeError(f"vstore() stores a tuple of values, not {describe(values)}", cx.loc(node.args[2]))
        self.check(cx, node, array, indices, len(values))
        elem, loc = value_type(array.type.elem), cx.loc(node.args[2])  # (bfloat16: float32 values, rounded)
        out = []
        for v in values:
            v = scalar(loc, v, "stored value")
            out.append(store_value(loc, v, elem, f"array {array.name!r}", cx.rules))
        cx.check_writable(node, array)
        cx.emit(ir.VecStore(array, indices, out, loc=cx.loc(node)))
        return Static(None)


class _AsyncCopy(Intrinsic):
    """``async_copy(dst[i, j], src[k, l], count=1)``: one thread's asynchronous copy of ``count``
    elements, global to shared (CUDA's ``cp.async``; see ``ir.AsyncCopy``)."""

    keywords = ("dst", "src", "count")
    EXAMPLE = "async_copy(tile[ty, tx], a[row, col])"

    def element(self, cx: Lowering, arg: ast.expr, what: str) -> ir.Load:
        """The element ``arg`` names (``a[i, j]``, through views too), without reading it."""
        v = cx.visit(arg) if isinstance(arg, ast.Subscript) else None
        if not isinstance(v, ir.Load) or v.array.record_field is not None:
            raise KernelTypeError(
                f"{self.name}() names its {what} as one array element, not {ast.unparse(arg)}",
                cx.loc(arg),
                f"write {self.EXAMPLE}: destination first, each indexed down to its first element",
            )
        return v

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        dst_, src_, count_ = self.arguments(cx, node, ("dst", "src", "count"), 2)
        assert dst_ is not None and src_ is not None  # required
        dst = self.element(cx, dst_, "destination")
        src = self.element(cx, src_, "source")
        loc = cx.loc(node)
        if dst.array.type.space != "shared":
            raise KernelTypeError(
                f"{self.name}() copies into shared memory; {dst.array.name!r} is a {dst.array.type.space} array",
                cx.loc(dst_),
                f"copy into a shared() tile ({self.EXAMPLE}), or store plainly: {ast.unparse(dst_)} = ...",
            )
        if src.array.type.space != "global":
            raise KernelTypeError(
                f"{self.name}() copies from global memory (a kernel's array argument); {src.array.name!r} is a "
                f"{src.array.type.space} array",
                cx.loc(src_),
                f"copy it with an ordinary store: {ast.unparse(dst_)} = {ast.unparse(src_)}",
            )
        elem = dst.array.type.elem
        if src.array.type.elem != elem:
            raise KernelTypeError(
                f"{self.name}() copies bytes, so both arrays need one element type: {dst.array.name!r} holds "
                f"{elem.name}, {src.array.name!r} {src.array.type.elem.name}",
                loc,
                f"make the tile {src.array.type.elem.name}, or convert with an ordinary store: "
                f"{ast.unparse(dst_)} = {ast.unparse(src_)}",
            )
        count = 1 if count_ is None else cx.static_value(count_, default=None)
        nbytes = elem.itemsize * count if isinstance(count, int) and not isinstance(count, bool) else 0
        if (
            count not in (1, 2, 4, 8, 16)
            or nbytes not in (4, 8, 16)
            or elem == bool_
            or elem.is_complex
        ):
            raise KernelTypeError(
                f"{self.name}() of {count!r} {elem.name} element(s): a copy moves 4, 8 or 16 bytes (cp.async's "
                "sizes) of numbers: 1, 2 or 4 int32/uint32/float32 elements, 1 or 2 int64/uint64/float64 "
                "ones, 2, 4 or 8 int16/uint16/float16/bfloat16 ones, 4, 8 or 16 int8/uint8/float8 ones (their bits)",
                loc,
                "pass a count that makes the copy 4, 8 or 16 bytes (count=8 for 16 bytes of float16), "
                "or copy with ordinary stores",
            )
        for e in (dst, src):  # a constant flat index (a 1-D array's) can be checked now; the rest at run time
            last = e.indices[-1] if len(e.indices) == 1 else None
            if count > 1 and isinstance(last, ir.Lit) and last.value % count:
                raise KernelTypeError(
                    f"{self.name}() of {count} elements at index {last.value} of {e.array.name!r}, which is not "
                    f"a multiple of {count} (misaligned)",
                    loc,
                )
        cx.emit(ir.AsyncCopy(dst.array, dst.indices, src.array, src.indices, count, loc=loc))
        return Static(None)


class GroupWait(Intrinsic):
    """``name(n=0)``: wait until at most n committed groups of asynchronous work are in flight
    (``async_wait``'s copies, ``wgmma_wait``'s matrix products): one statement, ``make(n, loc)``."""

    def __init__(self, name: str, doc: str, make: Callable[[int, Loc], ir.Stmt]):
        super().__init__(name, doc)
        self.make = make

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, (0, 1), self.name)
        n = cx.static_value(node.args[0], default=None) if node.args else 0
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= 7:
            raise KernelTypeError(
                f"{self.name}() takes how many groups may stay in flight, a constant from 0 to 7, not "
                f"{ast.unparse(node.args[0])}",
                cx.loc(node),
                f"{self.name}(0) waits for every group; {self.name}(1) leaves the latest one in flight",
            )
        cx.emit(self.make(int(n), cx.loc(node)))
        return Static(None)


class _Atomic(Intrinsic):
    """``atomic_<op>(a, i, *operands)``: the operation ``ops.ATOMIC[op]`` on one element."""

    TYPES = ops.ATOMIC_TYPES  # the element types any atomic works on; each entry says its own

    def __init__(self, op: str, doc: str, name: str = ""):
        super().__init__(name or f"atomic_{op}", doc)
        self.op = ops.ATOMIC[op]

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2 + self.op.nargs, self.name)
        return self.update(cx, node, node.args[2:])

    def update(self, cx: Lowering, node: ast.Call, operand_nodes: list[ast.expr]) -> Value:
        """The atomic on the element ``node.args[:2]`` names, with these operands."""
        array, indices = cx.array_and_index(node, self.name)
        cx.check_writable(node, array)
        if array.type.space == "local":
            raise KernelTypeError("atomics work on global or shared arrays, not local() ones", cx.loc(node.args[0]))
        elem = array.type.elem
        if elem.name not in self.TYPES:
            raise KernelTypeError(
                f"atomics support {', '.join(self.TYPES)} arrays, not {elem.name}",
                cx.loc(node.args[0]),
                "keep the values in a float32 array (bfloat16 is a storage type)"
                if isinstance(elem, StorageType)
                else "keep the flags in an int32 or uint32 array"
                if elem == bool_
                else None,
            )
        if elem.name not in self.op.types:
            raise KernelTypeError(
                f"{self.name}() works on {', '.join(self.op.types)} arrays, not {elem.name} "
                f"(array {array.name!r}): {self.op.why_types}",
                cx.loc(node.args[0]),
            )
        operands = []
        for a in operand_nodes:
            loc = cx.loc(a)
            v = scalar(loc, cx.visit(a), f"{self.name}() operand")
            operands.append(store_value(loc, v, elem, f"array {array.name!r}", cx.rules))
        return ir.Atomic(self.op.name, array, indices, operands, elem, loc=cx.loc(node))


class _CompareAndSwap(_Atomic):
    """``atomic_compare_and_swap(a, cmp, v)``: Numba's ``cuda.atomic.compare_and_swap``, which is
    ``atomic_cas`` on the first element of a 1-D array."""

    def __init__(self, doc: str):
        super().__init__("cas", doc, "atomic_compare_and_swap")

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        at = ast.copy_location(ast.Call(node.func, [node.args[0], ast.Constant(0)], []), node)
        ast.copy_location(at.args[1], node.args[0])
        array = cx.visit(node.args[0]) if isinstance(node.args[0], ast.Name) else None  # a name: no effects
        if isinstance(array, ir.ArrayRef) and array.type.ndim != 1:
            raise KernelTypeError(
                f"{self.name}() works on the first element of a 1-D array; {array.name!r} has "
                f"{array.type.ndim} dimensions",
                cx.loc(node.args[0]),
                "use atomic_cas(a, i, cmp, v) with the element's index",
            )
        return self.update(cx, at, node.args[1:])


# ---------------------------------------------------------------- the names
thread_idx = Dim3("thread_idx", "Index of the thread within its block (CUDA threadIdx).")
block_idx = Dim3("block_idx", "Index of the block within the grid (CUDA blockIdx).")
block_dim = Dim3("block_dim", "Threads per block along each dimension (CUDA blockDim).")
grid_dim = Dim3("grid_dim", "Blocks in the grid along each dimension (CUDA gridDim).")

global_id = _GlobalId("global_id", "global_id(d): block_idx[d] * block_dim[d] + thread_idx[d].")
barrier = Statement(
    "barrier",
    "barrier(): every thread of the block waits here; shared memory is then consistent.",
    lambda loc: ir.Barrier(loc=loc),
)
grid_sync = Statement(
    "grid_sync",
    "grid_sync(): every thread of the grid waits here; global memory is then consistent across blocks. "
    "On CUDA the kernel is launched cooperatively (every block resident at once: a launch with more blocks "
    "than the device holds is refused); OpenCL has no grid-wide barrier and refuses it.",
    lambda loc: ir.Barrier(scope="grid", loc=loc),
)
threadfence = Statement(
    "threadfence",
    "threadfence(): this thread's writes before it are seen by every thread of the device before its "
    "writes after it (CUDA __threadfence); it does not wait for other threads, as barrier() does.",
    lambda loc: ir.Fence("device", loc=loc),
)
threadfence_block = Statement(
    "threadfence_block",
    "threadfence_block(): as threadfence(), for the threads of this block (CUDA __threadfence_block).",
    lambda loc: ir.Fence("block", loc=loc),
)
threadfence_system = Statement(
    "threadfence_system",
    "threadfence_system(): as threadfence(), for the host and other devices too (CUDA __threadfence_system).",
    lambda loc: ir.Fence("system", loc=loc),
)
shared = _ArrayDecl(
    "shared", "shared(dtype, shape): an array shared by the threads of a block; shape is compile-time.", "shared"
)
dynamic_shared = _DynamicShared(
    "dynamic_shared",
    "dynamic_shared(dtype): the block's shared memory sized at launch (k[grid, block, nbytes]), as a 1-D array "
    "of nbytes // itemsize elements; every dynamic_shared array of a kernel starts at the same address "
    "(CUDA's extern __shared__).  shared(dtype, 0) means the same.",
)
local = _ArrayDecl("local", "local(dtype, shape): a per-thread array (registers or private memory).", "local")
superstep = _Misplaced(
    "superstep",
    "with superstep(): ... runs its body and then a barrier (bulk-synchronous style).",
    "superstep() is used as 'with superstep():'",
)
unroll = _Misplaced(
    "unroll",
    "for i in unroll(range(...)): the loop is repeated at compile time, once per value of i, which is then "
    "a constant in each copy (bounds must be compile-time; local arrays indexed by i stay in registers).",
    "unroll() can only be the iterable of a for loop: for i in unroll(range(n))",
)
vload = _VLoad(
    "vload",
    "vload(a, i, n): the n (2 or 4) elements a[i], a[i+1]... in one access (float4 and the like), as a tuple; "
    "i (the last index) must be a multiple of n.",
)
vstore = _VStore(
    "vstore",
    "vstore(a, i, (x, y, ...)): store 2 or 4 values (2, 4 or 8 of 2-byte elements) to a[i], a[i+1]... in one "
    "access; i must be a multiple of n.",
)
async_copy = _AsyncCopy(
    "async_copy",
    "async_copy(dst[i, j], src[k, l], count=1): start copying count elements (4, 8 or 16 bytes) from global src "
    "to shared dst, without waiting (CUDA's cp.async; a plain copy in OpenCL).  The copy belongs to the group "
    "async_commit() closes; it has landed only after async_wait() covers that group, and other threads see it "
    "only after a barrier() after that wait.  Until then neither the destination may be read or written, nor "
    "the source written.",
)
async_commit = Statement(
    "async_commit",
    "async_commit(): the asynchronous copies this thread started since its last commit form one group.",
    lambda loc: ir.AsyncCommit(loc=loc),
)
async_wait = GroupWait(
    "async_wait",
    "async_wait(n=0): this thread waits until at most n of its most recently committed groups of asynchronous "
    "copies are in flight (n a constant, 0 to 7: async_wait(0) waits for all).  It covers this thread's own "
    "copies; follow it with barrier() before reading what other threads copied.",
    lambda n, loc: ir.AsyncWait(n, loc=loc),
)
launch_bounds = _LaunchBounds(
    "launch_bounds",
    "launch_bounds(max_threads[, min_blocks]): the kernel is never launched with more threads per block "
    "(CUDA __launch_bounds__: lets the compiler budget registers); larger launches are refused.",
)

atomic_add = _Atomic("add", "atomic_add(a, i, v): a[i] += v atomically; returns the old value.")
atomic_sub = _Atomic("sub", "atomic_sub(a, i, v): a[i] -= v atomically; returns the old value.")
atomic_min = _Atomic("min", "atomic_min(a, i, v): a[i] = min(a[i], v) atomically; returns the old value.")
atomic_max = _Atomic("max", "atomic_max(a, i, v): a[i] = max(a[i], v) atomically; returns the old value.")
atomic_exch = _Atomic("exch", "atomic_exch(a, i, v): a[i] = v atomically; returns the old value.")
atomic_cas = _Atomic(
    "cas", "atomic_cas(a, i, cmp, v): if a[i] == cmp then a[i] = v, atomically; returns the old value."
)
atomic_compare_and_swap = _CompareAndSwap(
    "atomic_compare_and_swap(a, cmp, v): atomic_cas(a, 0, cmp, v) on a 1-D array (Numba's "
    "cuda.atomic.compare_and_swap): if a[0] == cmp then a[0] = v, atomically; returns the old value."
)
atomic_and = _Atomic("and", "atomic_and(a, i, v): a[i] &= v atomically (integers); returns the old value.")
atomic_or = _Atomic("or", "atomic_or(a, i, v): a[i] |= v atomically (integers); returns the old value.")
atomic_xor = _Atomic("xor", "atomic_xor(a, i, v): a[i] ^= v atomically (integers); returns the old value.")
atomic_inc = _Atomic(
    "inc",
    "atomic_inc(a, i, v): a[i] = 0 if a[i] >= v else a[i] + 1, atomically (uint32, uint64; CUDA's "
    "atomicInc: a counter that wraps after v); returns the old value.",
)
atomic_dec = _Atomic(
    "dec",
    "atomic_dec(a, i, v): a[i] = v if a[i] == 0 or a[i] > v else a[i] - 1, atomically (uint32, uint64; "
    "CUDA's atomicDec: a counter that wraps from 0 to v); returns the old value.",
)
atomic_nanmax = _Atomic(
    "nanmax",
    "atomic_nanmax(a, i, v): a[i] = max(a[i], v) atomically, a NaN being a missing value: v replaces a NaN, "
    "a NaN v changes nothing (Numba's cuda.atomic.nanmax); returns the old value.",
)
atomic_nanmin = _Atomic(
    "nanmin",
    "atomic_nanmin(a, i, v): a[i] = min(a[i], v) atomically, a NaN being a missing value: v replaces a NaN, "
    "a NaN v changes nothing (Numba's cuda.atomic.nanmin); returns the old value.",
)

# Math functions Python has no name for (CUDA's intrinsics): the entries of ``ops.MATH``
# themselves, so a kernel names them as ``gk.popc`` and the host can call them too.
popc, clz, ffs, brev, fma, rsqrt, exp10, sad = (
    ops.MATH[n] for n in ("popc", "clz", "ffs", "brev", "fma", "rsqrt", "exp10", "sad")
)
sincos = ops.MATH["sincos"]  # (sin(x), cos(x)): a function of two results, unpacked like a @func's tuple


def _dtype_named(name: Any) -> Any:
    """The dtype a string names (``"int32"``), for an element type; None for anything else."""
    try:
        return np.dtype(name) if isinstance(name, str) else None
    except TypeError:
        return None
