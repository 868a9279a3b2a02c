"""Other languages' names that are not gpukern's under another name (Numba-CUDA's, CuPy-JIT's): small
classes that lower onto gpukern's own intrinsics and IR, for ``gpukern.numba`` and ``gpukern.cupy``
(``grid(ndim)``, ``gridsize(ndim)``, ``shared.array(shape, dtype)`` with Numba's argument order,
``const.array_like``, ``selp``, CuPy's ``shared_memory(dtype, size)``), and the namespaces that group
names (``cuda.atomic``).  Nothing here defines an operation: each lowers to what ``core`` and
``warp`` define."""

from __future__ import annotations

import ast
from collections import namedtuple
from typing import Any

import numpy as np

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..semantics.values import Static, Value, store_value
from ..types import ScalarType, float16, float32, float64, from_dtype, int32, int64, uint32
from . import core as lang


def _ndim(cx: lang.Lowering, node: ast.Call, name: str) -> int:
    cx.nargs(node, 1, name)
    n = cx.static_value(node.args[0], default=None)
    if n not in (1, 2, 3) or isinstance(n, bool):
        raise KernelTypeError(f"{name}() takes 1, 2 or 3 (a constant): the dimensions to give", cx.loc(node))
    return int(n)


class Grid(lang.Intrinsic):
    """``cuda.grid(ndim)``: the thread's absolute position, an int for 1, a tuple for 2 or 3
    (``gk.global_id`` along each dimension)."""

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        n = _ndim(cx, node, "grid")
        ids = tuple(ir.Special("global_id", d, int32, loc=cx.loc(node)) for d in range(n))
        return ids[0] if n == 1 else ids


class GridSize(lang.Intrinsic):
    """``cuda.gridsize(ndim)``: the threads of the whole grid along each dimension
    (``block_dim * grid_dim``), an int for 1, a tuple for 2 or 3."""

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        n = _ndim(cx, node, "gridsize")
        loc = cx.loc(node)
        sizes = tuple(
            ir.BinOp(
                "*",
                ir.Special("block_dim", d, int32, loc=loc),
                ir.Special("grid_dim", d, int32, loc=loc),
                int32,
                loc=loc,
            )
            for d in range(n)
        )
        return sizes[0] if n == 1 else sizes


class ArrayIn(lang.Intrinsic):
    """``cuda.shared.array(shape, dtype)`` / ``cuda.local.array(shape, dtype)``: gpukern's
    ``shared(dtype, shape)`` / ``local(dtype, shape)`` with Numba's order and keywords."""

    keywords = ("shape", "dtype")
    compile_time = (0, 1)

    def __init__(self, name: str, of: lang.Intrinsic):
        super().__init__(name, f"cuda.{name}(shape, dtype): {of.name}(dtype, shape)")
        self.of = of

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        shape, dtype = self.arguments(cx, node, ("shape", "dtype"), 2)
        call = ast.copy_location(ast.Call(func=node.func, args=[dtype, shape], keywords=[]), node)
        return self.of.lower(cx, call)


class ArrayLike(lang.Intrinsic):
    """``cuda.const.array_like(table)``: a NumPy array of the module read as a constant table,
    which gpukern makes of any module array a kernel reads."""

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, "const.array_like")
        table = cx.visit(node.args[0])
        if not isinstance(table, ir.ArrayRef) or table.type.space != "constant":
            raise KernelTypeError(
                "cuda.const.array_like() takes a NumPy array of the kernel's module (a constant table)",
                cx.loc(node),
            )
        return table


class Select(lang.Intrinsic):
    """``cuda.selp(cond, a, b)``: ``a if cond else b`` (both evaluated, as a select instruction)."""

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, "selp")
        expr = ast.copy_location(ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2]), node)
        return cx.visit(expr)


class Namespace:
    """``cuda.shared``, ``cuda.atomic``...: a group of names a kernel reaches as attributes."""

    def __init__(self, name: str, **names: Any):
        self._name = name
        self.__dict__.update(names)

    def __repr__(self) -> str:
        return f"<gpukern.numba cuda.{self._name}>"


class SharedMemory(lang.Intrinsic):
    """``jit.shared_memory(dtype, size, alignment=None)``: ``gk.shared(dtype, size)``, or with
    ``size=None`` the launch's dynamic shared memory (``gk.dynamic_shared(dtype)``)."""

    keywords = ("dtype", "size", "alignment")
    compile_time = (0, 1)

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        dtype, size, _alignment = self.arguments(cx, node, ("dtype", "size", "alignment"), 1)
        if size is None or cx.static_value(size, default=0) is None:
            call = ast.copy_location(ast.Call(func=node.func, args=[dtype], keywords=[]), node)
            return lang.dynamic_shared.lower(cx, call)
        return lang.shared.lower(cx, ast.copy_location(ast.Call(func=node.func, args=[dtype, size], keywords=[]), node))


class Half(lang.Intrinsic):
    """One of Numba's ``cuda.fp16`` functions (``hadd(a, b)``, ``hsqrt(a)``...): the operator or
    function it names, on float16 operands only, its result float16 (as NumPy's float16 math).
    ``build(cx, node, values)`` makes it of the arguments, each lowered once."""

    def __init__(self, name: str, nargs: int, build: Any):
        super().__init__(name, f"cuda.fp16.{name}: float16 only")
        self.nargs, self.build = nargs, build

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, self.nargs, f"fp16.{self.name}")
        values = [cx.visit(a) for a in node.args]
        for k, (a, v) in enumerate(zip(node.args, values)):
            if isinstance(v, Static) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                values[k] = v = store_value(cx.loc(a), v, float16, f"cuda.fp16.{self.name}()", cx.rules)  # as Numba
            if cx.type_of(v) != float16:
                raise KernelTypeError(
                    f"cuda.fp16.{self.name}() takes float16 values, not {cx.type_of(v)!r}",
                    cx.loc(a),
                    "convert it first: numba.float16(x)",
                )
        return self.build(cx, node, values)


def _operator(op: type) -> Any:
    return lambda cx, node, values: cx.binop(node, op, *values)


def _comparison(op: str) -> Any:
    return lambda cx, node, values: cx.compare(node, op, *values)


def _negate(cx: lang.Lowering, node: ast.Call, values: list[Value]) -> Value:
    """``-x`` of a float16 value, the IR the front end makes of ``-x`` (``ops.UNARY['-']``)."""
    (v,) = values
    return Static(-v.value) if isinstance(v, Static) else ir.Unary("-", v, v.type, loc=cx.loc(node))


def _reciprocal(cx: lang.Lowering, node: ast.Call, values: list[Value]) -> Value:
    """``1 / x`` of a float16 value: the front end's division (``ops.BINARY['/']``), rounded once."""
    return cx.binop(node, ast.Div, Static(1.0), values[0])


def _function(fn: Any) -> Any:
    return lambda cx, node, values: cx.call(fn, node, values)


def fp16_names(math: dict[str, Any]) -> dict[str, Half]:
    """Numba's ``cuda.fp16`` namespace: ``math`` gives the functions by gpukern's names
    (``ops.MATH``'s entries: ``sqrt``, ``fma``...), so each name means the one definition."""
    binary = {"hadd": ast.Add, "hsub": ast.Sub, "hmul": ast.Mult, "hdiv": ast.Div}
    compare = {"heq": "==", "hne": "!=", "hge": ">=", "hgt": ">", "hle": "<=", "hlt": "<"}
    unary = {"hsqrt": "sqrt", "hrsqrt": "rsqrt", "hexp": "exp", "hexp2": "exp2", "hexp10": "exp10", "hlog": "log",
             "hlog2": "log2", "hlog10": "log10", "hsin": "sin", "hcos": "cos", "hceil": "ceil", "hfloor": "floor",
             "hrint": "rint", "htrunc": "trunc", "habs": "abs"}  # fmt: skip
    names = {n: Half(n, 2, _operator(op)) for n, op in binary.items()}
    names |= {n: Half(n, 2, _comparison(op)) for n, op in compare.items()}
    names |= {n: Half(n, 1, _function(math[f])) for n, f in unary.items()}
    names["hneg"] = Half("hneg", 1, _negate)
    names["hrcp"] = Half("hrcp", 1, _reciprocal)
    names["hfma"] = Half("hfma", 3, _function(math["fma"]))
    names["hmax"] = Half("hmax", 2, _function(math["max"]))
    names["hmin"] = Half("hmin", 2, _function(math["min"]))
    return names


class RangeLike:
    """A loop's range under another name (CuPy's ``jit.range(start, stop, step, unroll=None)``):
    the front end loops over it as over ``range``; ``unroll=`` is a hint to the C compiler, which
    unrolls what it judges worth it, and so changes nothing here."""

    keywords = ("unroll",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<gpukern {self.name}>"

    def __call__(self, *args: int) -> range:
        """On the host (a ``numba.njit`` function run as Python): Python's range."""
        return range(*args)


class Identity(lang.Intrinsic):
    """A name for its argument (Numba's ``literal_unroll(t)``: a loop over a tuple is unrolled here
    anyway); on the host, the argument itself."""

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        return cx.visit(node.args[0])

    def __call__(self, value: Any) -> Any:
        return value


class VectorType(lang.Intrinsic):
    """A CUDA vector type (Numba's ``cuda.float32x4``, alias ``cuda.float4``): ``v = float32x4(a, b, c,
    d)`` makes a value with ``.x``, ``.y``, ``.z``, ``.w`` -- a named tuple of ``n`` numbers of the base
    type, each argument converted as a store converts (a vector argument gives its components)."""

    def __init__(self, name: str, base: ScalarType, n: int):
        super().__init__(name, f"cuda.{name}(...): a vector of {n} {base.name}")
        self.base, self.n = base, n
        self.make = namedtuple(name, list("xyzw"[:n]))  # type: ignore[misc]  # (a tuple: kernels' tuples hold it)

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        parts: list[tuple[ast.AST, Value]] = []
        for a in node.args:
            v = cx.visit(a)
            parts += [(a, item) for item in v] if isinstance(v, tuple) else [(a, v)]
        if len(parts) != self.n:
            raise KernelTypeError(
                f"cuda.{self.name}() takes {self.n} components (numbers, or vectors giving theirs), not {len(parts)}",
                cx.loc(node),
            )
        what = f"a {self.name} component"
        return self.make(*(store_value(cx.loc(a), v, self.base, what, cx.rules) for a, v in parts))


def vector_types() -> dict[str, VectorType]:
    """Numba's CUDA vector types: ``int8x1`` ... ``float64x4`` and CUDA C's names for the same objects
    (``char1``, ``short2``, ``int3``, ``long4`` and ``longlong4`` (64-bit), ``uchar1``..., ``float4``, ``double2``)."""
    c_names = {"int8": ["char"], "int16": ["short"], "int32": ["int"], "int64": ["long", "longlong"],
               "uint8": ["uchar"], "uint16": ["ushort"], "uint32": ["uint"], "uint64": ["ulong", "ulonglong"],
               "float32": ["float"], "float64": ["double"]}  # fmt: skip
    out: dict[str, VectorType] = {}
    for base, aliases in c_names.items():
        for n in (1, 2, 3, 4):
            v = VectorType(f"{base}x{n}", from_dtype(np.dtype(base)), n)
            out[v.name] = v
            out.update({f"{alias}{n}": v for alias in aliases})
    return out


class Group(lang.Intrinsic):
    """``cg.this_thread_block()`` / ``cg.this_grid()`` (Numba's and CuPy's cooperative groups): a
    group whose ``.sync()`` is the block's barrier, or the grid's (``grid_sync``), and whose methods
    (``thread_rank()``, ``size()``, ``group_index()``...) are the thread geometry they name."""

    def __init__(self, name: str, grid: bool):
        super().__init__(name, f"cg.{name}(): a group of threads with .sync()")
        self.grid = grid

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, f"cg.{self.name}")
        return Static(_GRID_GROUP if self.grid else _BLOCK_GROUP)


def _special(name: str, d: int, node: ast.AST, cx: lang.Lowering) -> ir.Expr:
    return ir.Special(name, d, int32, loc=cx.loc(node))


def _linear(cx: lang.Lowering, node: ast.AST, index: str, dims: str, t: Any = int32) -> Value:
    """x + dx * (y + dy * z) of the index and the dimensions named (a rank), in type ``t``."""
    x, y, z = (ir.Cast(_special(index, d, node, cx), t) for d in range(3))
    dx, dy = (ir.Cast(_special(dims, d, node, cx), t) for d in range(2))
    inner = cx.binop(node, ast.Add, y, cx.binop(node, ast.Mult, dy, z))
    return cx.binop(node, ast.Add, x, cx.binop(node, ast.Mult, dx, inner))


def _volume(cx: lang.Lowering, node: ast.AST, dims: str, t: Any = int32) -> Value:
    x, y, z = (ir.Cast(_special(dims, d, node, cx), t) for d in range(3))
    return cx.binop(node, ast.Mult, cx.binop(node, ast.Mult, x, y), z)


class _Method(lang.Intrinsic):
    """A group's method of no arguments: ``g.thread_rank()`` is ``value(cx, node)``."""

    def __init__(self, name: str, doc: str, value: Any):
        super().__init__(name, doc)
        self.value = value

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return self.value(cx, node)


def _grid_rank(cx: lang.Lowering, node: ast.AST) -> Value:
    block = _linear(cx, node, "block_idx", "grid_dim", int64)
    return cx.binop(node, ast.Add, cx.binop(node, ast.Mult, block, _volume(cx, node, "block_dim", int64)),
                    _linear(cx, node, "thread_idx", "block_dim", int64))  # fmt: skip


class _GroupValue:
    """The group a ``cg`` call gives; a kernel reaches its methods as attributes."""

    def __init__(self, name: str, **methods: Any):
        self.name = name
        for k, v in methods.items():
            setattr(self, k, v)


_BLOCK_SIZE = _Method("size", "the block's threads", lambda cx, n: _volume(cx, n, "block_dim"))
_BLOCK_GROUP = _GroupValue(
    "this_thread_block",
    sync=lang.barrier,
    thread_rank=_Method(
        "thread_rank", "the thread's rank in its block", lambda cx, n: _linear(cx, n, "thread_idx", "block_dim")
    ),
    size=_BLOCK_SIZE,
    num_threads=_BLOCK_SIZE,
    group_index=_Method("group_index", "the block's index (block_idx)", lambda cx, n: Static(lang.block_idx)),
    thread_index=_Method("thread_index", "the thread's index (thread_idx)", lambda cx, n: Static(lang.thread_idx)),
    group_dim=_Method("group_dim", "the block's shape (block_dim)", lambda cx, n: Static(lang.block_dim)),
    dim_threads=_Method("dim_threads", "the block's shape (block_dim)", lambda cx, n: Static(lang.block_dim)),
)
_GRID_SIZE = _Method(
    "size", "the grid's threads",
    lambda cx, n: cx.binop(n, ast.Mult, _volume(cx, n, "grid_dim", int64), _volume(cx, n, "block_dim", int64)),
)  # fmt: skip
_GRID_GROUP = _GroupValue(
    "this_grid",
    sync=lang.grid_sync,
    thread_rank=_Method("thread_rank", "the thread's rank in the grid", _grid_rank),
    size=_GRID_SIZE,
    num_threads=_GRID_SIZE,
    is_valid=_Method(
        "is_valid", "whether the grid can sync: a launch with grid_sync() is cooperative", lambda cx, n: Static(True)
    ),
    group_dim=_Method("group_dim", "the grid's shape in blocks (grid_dim)", lambda cx, n: Static(lang.grid_dim)),
    dim_blocks=_Method("dim_blocks", "the grid's shape in blocks (grid_dim)", lambda cx, n: Static(lang.grid_dim)),
    block_rank=_Method(
        "block_rank", "the block's rank in the grid", lambda cx, n: _linear(cx, n, "block_idx", "grid_dim")
    ),
    num_blocks=_Method("num_blocks", "the grid's blocks", lambda cx, n: _volume(cx, n, "grid_dim")),
    block_index=_Method("block_index", "the block's index (block_idx)", lambda cx, n: Static(lang.block_idx)),
)


class Typed(lang.Intrinsic):
    """A function of a C library under its typed name (libdevice's ``sqrtf``, ``sqrt``, ``popcll``):
    its arguments converted to the one type it takes, then gpukern's own function of that name."""

    def __init__(self, name: str, of: Any, t: Any, nargs: int):
        super().__init__(name, f"{name}: {getattr(of, 'name', of)} of {t.name} values")
        self.of, self.t, self.nargs = of, t, nargs

    def lower(self, cx: lang.Lowering, node: ast.Call) -> Value:
        cx.nargs(node, self.nargs, self.name)
        values = [
            cx.call(self.t, ast.copy_location(ast.Call(func=node.func, args=[a], keywords=[]), a)) for a in node.args
        ]
        return cx.call(self.of, node, values)


def libdevice_names(math: dict[str, Any]) -> dict[str, Typed]:
    """Numba's ``cuda.libdevice``: each function by its libdevice name (``sinf`` of float32, ``sin``
    of float64; ``fast_sinf`` the same function, at least as accurate), the integer bit functions of
    int32 and, with ``ll``, int64 values; ``math`` gives gpukern's functions by name."""
    floats = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign", "cos",
              "cosh", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "floor", "fma", "fmod", "hypot",
              "lgamma", "log", "log10", "log1p", "log2", "nextafter", "pow", "remainder", "rint", "rsqrt", "sin",
              "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc", "sincos", "frexp", "modf"]  # fmt: skip
    names: dict[str, Typed] = {}
    for f in floats:
        n = math[f].nargs
        names[f] = Typed(f, math[f], float64, n)
        names[f + "f"] = Typed(f + "f", math[f], float32, n)
    for fast in ("exp", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "pow"):
        names[f"fast_{fast}f"] = Typed(f"fast_{fast}f", math[fast], float32, math[fast].nargs)
    for short, of in (("fmax", "max"), ("fmin", "min")):
        names[short] = Typed(short, math[of], float64, 2)
        names[short + "f"] = Typed(short + "f", math[of], float32, 2)
    for bits in ("popc", "clz", "ffs", "brev"):
        names[bits] = Typed(bits, math[bits], int32, 1)
        names[bits + "ll"] = Typed(bits + "ll", math[bits], int64, 1)
    names["sad"] = Typed("sad", math["sad"], int32, 3)  # (|x - y| + z: CUDA's __sad, __usad)
    names["usad"] = Typed("usad", math["sad"], uint32, 3)
    names["nearbyint"], names["nearbyintf"] = (
        Typed("nearbyint", math["rint"], float64, 1),
        Typed("nearbyintf", math["rint"], float32, 1),
    )
    return names
