"""The warp-level matrix multiply-accumulate intrinsics (tensor cores): ``fragment``,
``fill_fragment``, ``load_matrix``, ``store_matrix``, ``mma`` and ``mma_sync``.

Each is one object whose class owns its typing and lowering, as ``gpukern.language.core``'s do; they lower
to the ``ir.MatrixOp`` statements, whose meaning is ``gpukern.semantics.mma`` (simulator) and whose C is
the dialects' ``matrix`` table (CUDA's ``nvcuda::wmma``).  A fragment is a warp-wide value: every
lane of the warp executes each of these with the same operands, so the front end refuses them under
thread-dependent control flow (``checks.check_matrix_ops``), and the simulator checks whole warps.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..errors import KernelTypeError, Loc
from ..ir import nodes as ir
from ..semantics import wgmma as wgmma_ops
from ..semantics.mma import ACCUMULATOR, FRAGMENT_SHAPES, LAYOUTS, USES, input_type
from ..semantics.values import Static, Value, coerce, describe, scalar
from ..types import FragmentType, ScalarType, bfloat16, bool_, float16, float32, int32, int64, type_named
from .core import GroupWait, Intrinsic, Lowering, Statement, func

_USE_ALIASES = {"a": "a", "matrix_a": "a", "b": "b", "matrix_b": "b", "accumulator": "accumulator", "c": "accumulator"}


def _fragment(cx: Lowering, arg: ast.expr, what: str, use: str | None = None) -> ir.Fragment:
    f = cx.visit(arg)
    if not isinstance(f, ir.Fragment):
        raise KernelTypeError(f"{what} must be a fragment (gk.fragment(...)), not {describe(f)}", cx.loc(arg))
    if use is not None and f.type.use != use:
        raise KernelTypeError(
            f"{what} must be a fragment of kind {use!r}, not {f.type.use!r} ({f.name!r}: {f.type!r})", cx.loc(arg)
        )
    return f


def _word(cx: Lowering, arg: ast.expr, what: str) -> str:
    """A compile-time string argument (a literal, or a constant of the module)."""
    value = arg.value if isinstance(arg, ast.Constant) else cx.static_value(arg, default=None)
    if not isinstance(value, str):
        raise KernelTypeError(
            f"fragment()'s {what} must be a string known at compile time, not {ast.unparse(arg)}", cx.loc(arg)
        )
    return value


class _Fragment(Intrinsic):
    """``fragment(use, m, n, k, dtype, layout="row")``: a new fragment, declared once per call site."""

    keywords = ("layout",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        use_, m_, n_, k_, elem_, layout_ = self.arguments(cx, node, ("use", "m", "n", "k", "dtype", "layout"), 5)
        loc = cx.loc(node)
        use = _USE_ALIASES.get(_word(cx, use_, "kind"))  # type: ignore[arg-type]
        if use is None:
            raise KernelTypeError(
                f"fragment() kind must be one of {', '.join(map(repr, USES))}, not {ast.unparse(use_)}", cx.loc(use_)
            )
        shape = tuple(cx.static_value(a, default=None) for a in (m_, n_, k_))  # type: ignore[arg-type]
        elem = type_named(cx.static_value(elem_, default=None))  # type: ignore[arg-type]
        layout = None if layout_ is None else _word(cx, layout_, "layout")  # type: ignore[arg-type]
        if use == "accumulator":
            if elem != ACCUMULATOR:
                raise KernelTypeError(
                    f"an accumulator fragment holds float32, not {ast.unparse(elem_)}",  # type: ignore[arg-type]
                    loc,
                    "accumulate in float32: fragment('accumulator', m, n, k, float32)",
                )
            if layout is not None:
                raise KernelTypeError("an accumulator fragment takes no layout (it is stored row by row)", loc)
            shapes = {s for v in FRAGMENT_SHAPES.values() for s in v} | wgmma_ops.shapes()
        else:
            layout = "row" if layout is None else layout
            if layout not in LAYOUTS:
                raise KernelTypeError(f"fragment() layout must be 'row' or 'col', not {layout!r}", loc)
            if elem is None or elem.name not in FRAGMENT_SHAPES:
                what = ast.unparse(elem_) if elem is None else elem.name  # type: ignore[arg-type]
                raise KernelTypeError(
                    f"matrix fragments of {what} are not supported: an 'a' or 'b' fragment holds float16, "
                    "bfloat16, or float32 (computed as TF32)",
                    loc,
                )
            shapes = set(FRAGMENT_SHAPES[elem.name])
        if shape not in shapes:
            table = "; ".join(
                f"{t}: " + ", ".join("x".join(map(str, s)) for s in v) for t, v in FRAGMENT_SHAPES.items()
            )
            raise KernelTypeError(
                f"no matrix unit computes m, n, k = {shape} "
                f"{'' if use == 'accumulator' else 'on ' + elem.name + ' '}(the shapes are {table}; a warpgroup's "  # type: ignore[union-attr]
                "accumulator for wgmma(): 64, n, 16 (8 for TF32), n a multiple of 8 up to 256)",
                loc,
            )
        t = FragmentType(use, *shape, elem, layout)  # type: ignore[misc, arg-type]
        return cx.declare(ir.Fragment(cx.fresh("frag"), t, loc=loc, temp=True), node)  # type: ignore[arg-type]


class _Fill(Intrinsic):
    """``fill_fragment(f, value)``: every element of f set to value."""

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        f = _fragment(cx, node.args[0], "fill_fragment()'s first argument")
        loc = cx.loc(node.args[1])
        v = scalar(loc, cx.visit(node.args[1]), "fill_fragment() value")
        t = cx.type_of(v)
        if not (t.is_float or t.is_int) or t.is_complex or t == bool_:
            raise KernelTypeError(f"fill_fragment() takes a real number, not {t!r}", loc)
        cx.emit(ir.FillFragment(f, coerce(loc, v, float32), loc=cx.loc(node)))
        return Static(None)


def _tile(
    cx: Lowering,
    node: ast.Call,
    what: str,
    f: ir.Fragment,
    arr: ast.expr,
    at: ast.expr,
    ldm: ast.expr | None,
    rounded: tuple[ScalarType, ...] = (),
):
    """The array, the corner's indices and the leading dimension of a load or store (``rounded``:
    the other element types it takes, each value rounded to them)."""
    loc = cx.loc(arr)
    array = cx.visit(arr)
    if not isinstance(array, ir.ArrayRef):
        raise KernelTypeError(f"{what} needs an array, not {describe(array)}", loc)
    if array.view is not None or array.record_field is not None:
        raise KernelTypeError(
            f"{what} of a slice or a record field: name the whole array and the tile's corner",
            loc,
            "load_matrix(f, a, (i, j)) reads the tile a[i:i+rows, j:j+cols]",
        )
    if array.type.space not in ("global", "shared"):
        raise KernelTypeError(f"{what} reads and writes global or shared arrays, not {array.type.space} ones", loc)
    want = ACCUMULATOR if f.type.use == "accumulator" else f.type.elem
    if array.type.elem != want and array.type.elem not in rounded:
        raise KernelTypeError(
            f"{what} of fragment {f.name!r} ({f.type!r}) needs a {want.name} array, "
            f"not {array.type!r} ({array.name!r})",
            loc,
            "matrix loads do not convert: keep the tile in an array of the fragment's type",
        )
    indices = cx.index_list(at)  # type: ignore[attr-defined]
    cx.check_indices(node, array, indices)  # type: ignore[attr-defined]
    if array.type.ndim == 1:
        if ldm is None:
            raise KernelTypeError(
                f"{what} of a 1-D array needs ldm, the elements from one row of the tile to the next", cx.loc(node)
            )
        lv = scalar(cx.loc(ldm), cx.visit(ldm), "ldm")
        if isinstance(lv, ir.Expr) and not lv.type.is_int:
            raise KernelTypeError(f"ldm must be an integer, not {lv.type.name}", cx.loc(ldm))
        ld = coerce(cx.loc(ldm), lv, int32)
    else:
        if ldm is not None:
            raise KernelTypeError(
                f"{what} of a {array.type.ndim}-D array takes no ldm: a row of the tile is a row of the array",
                cx.loc(ldm),
            )
        n = array.type.shape[-1] if array.type.shape is not None else None
        ld = (
            ir.Lit(n, int32, loc=loc)
            if n is not None
            else ir.Cast(ir.Shape(array, array.type.ndim - 1, int64, loc=loc), int32, loc=loc)
        )
    return array, indices, ld


class _Load(Intrinsic):
    """``load_matrix(f, array, index, ldm=None)``."""

    keywords = ("ldm",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        f_, arr, at, ldm = self.arguments(cx, node, ("fragment", "array", "index", "ldm"), 3)
        f = _fragment(cx, f_, "load_matrix()'s first argument")  # type: ignore[arg-type]
        if wgmma_ops.is_warpgroup(f.type):
            raise KernelTypeError(
                f"load_matrix() of a warpgroup's accumulator ({f.name!r}: {f.type!r}): wgmma() computes it "
                "and fill_fragment() sets it; it is not loaded",
                cx.loc(node),
            )
        array, indices, ld = _tile(cx, node, "load_matrix()", f, arr, at, ldm)  # type: ignore[arg-type]
        cx.emit(ir.LoadMatrix(f, array, indices, ld, loc=cx.loc(node)))
        return Static(None)


class _Store(Intrinsic):
    """``store_matrix(array, index, f, ldm=None, scale=None)``."""

    keywords = ("ldm", "scale")

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        arr, at, f_, ldm, scale_ = self.arguments(cx, node, ("array", "index", "fragment", "ldm", "scale"), 3)
        f = _fragment(cx, f_, "store_matrix()'s fragment", "accumulator")  # type: ignore[arg-type]
        group = wgmma_ops.is_warpgroup(f.type)
        narrow = (bfloat16, float16) if group else ()
        array, indices, ld = _tile(cx, node, "store_matrix()", f, arr, at, ldm, narrow)  # type: ignore[arg-type]
        cx.check_writable(node, array)  # type: ignore[attr-defined]
        scale = None
        if scale_ is not None:
            if not group:
                raise KernelTypeError(
                    "store_matrix()'s scale is for a warpgroup's accumulator (wgmma's); scale a wmma "
                    "fragment's tile after storing it",
                    cx.loc(scale_),
                )
            sv = scalar(cx.loc(scale_), cx.visit(scale_), "store_matrix()'s scale")
            if not (cx.type_of(sv).is_float or cx.type_of(sv).is_int) or cx.type_of(sv) == bool_:
                raise KernelTypeError("store_matrix()'s scale is a real number", cx.loc(scale_))
            scale = coerce(cx.loc(scale_), sv, float32)
        cx.emit(ir.StoreMatrix(array, indices, ld, f, loc=cx.loc(node), scale=scale))
        return Static(None)


def _check_mma(loc: Loc, d: ir.Fragment, a: ir.Fragment, b: ir.Fragment, c: ir.Fragment) -> None:
    if wgmma_ops.is_warpgroup(c.type) or wgmma_ops.is_warpgroup(d.type):
        raise KernelTypeError(
            "a warpgroup's accumulator (64 rows) is computed by wgmma(acc, a, a_at, b, b_at), not mma()", loc
        )
    shapes = {(x.type.m, x.type.n, x.type.k) for x in (a, b, c, d)}
    if len(shapes) != 1:
        raise KernelTypeError(
            "mma() of fragments of different shapes: " + ", ".join(f"{x.name}: {x.type!r}" for x in (a, b, c, d)), loc
        )
    if input_type(a.type) != input_type(b.type):
        raise KernelTypeError(f"mma() of a {a.type.elem.name} and a {b.type.elem.name} fragment", loc)


class _Mma(Intrinsic):
    """``mma(a, b, c)``: c = a @ b + c in place; returns c (so ``c = mma(a, b, c)``)."""

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        a, b, c = (
            _fragment(cx, x, f"mma() operand {name}", use)
            for x, name, use in zip(node.args, "abc", ("a", "b", "accumulator"))
        )
        _check_mma(cx.loc(node), c, a, b, c)
        cx.emit(ir.Mma(c, a, b, c, loc=cx.loc(node)))
        return c


class _MmaSync(Intrinsic):
    """``mma_sync(d, a, b, c)``: d = a @ b + c (CUDA's ``wmma::mma_sync``)."""

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 4, self.name)
        d, a, b, c = (
            _fragment(cx, x, f"mma_sync() operand {name}", use)
            for x, name, use in zip(node.args, "dabc", ("accumulator", "a", "b", "accumulator"))
        )
        _check_mma(cx.loc(node), d, a, b, c)
        cx.emit(ir.Mma(d, a, b, c, loc=cx.loc(node)))
        return Static(None)


def _operand(cx: Lowering, arr: ast.expr, at: ast.expr, what: str) -> tuple[ir.ArrayRef, ir.Expr]:
    """A wgmma operand: a whole shared array, and the element its operand starts at."""
    array = cx.visit(arr)
    if not isinstance(array, ir.ArrayRef) or array.view is not None or array.record_field is not None:
        raise KernelTypeError(f"wgmma()'s {what} must name a whole shared array, not {describe(array)}", cx.loc(arr))
    if array.type.space != "shared" or array.type.ndim != 1:
        raise KernelTypeError(
            f"wgmma() reads its {what} from a 1-D shared array (the stage's elements, as "
            f"gpukern.semantics.wgmma lays them out), not {array.type!r} ({array.name!r})",
            cx.loc(arr),
            "s = gk.dynamic_shared(float16); copy the tiles in at gk.swizzle128(row, col, width, 8)",
        )
    v = scalar(cx.loc(at), cx.visit(at), f"wgmma()'s {what} offset")
    if isinstance(v, ir.Expr) and not v.type.is_int:
        raise KernelTypeError(f"wgmma()'s {what} offset must be an integer, not {v.type.name}", cx.loc(at))
    return array, coerce(cx.loc(at), v, int32)


class _Wgmma(Intrinsic):
    """``wgmma(acc, a, a_at, b, b_at, b_width=None, b_panel=None, accumulate=True)``: acc += A @ B
    (or acc = A @ B) by the warpgroup; returns acc."""

    keywords = ("b_width", "b_panel", "accumulate")

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        names = ("acc", "a", "a_at", "b", "b_at", "b_width", "b_panel", "accumulate")
        acc_, a_, a_at, b_, b_at, width_, panel_, accumulate_ = self.arguments(cx, node, names, 5)
        loc = cx.loc(node)
        d = _fragment(cx, acc_, "wgmma()'s accumulator", "accumulator")  # type: ignore[arg-type]
        if not wgmma_ops.is_warpgroup(d.type):
            raise KernelTypeError(
                f"wgmma() accumulates into a warpgroup's accumulator, fragment('accumulator', 64, n, k, float32), "
                f"not {d.name!r}: {d.type!r}",
                loc,
            )
        b, b_off = _operand(cx, b_, b_at, "B")  # type: ignore[arg-type]
        p = cx.visit(a_)
        if isinstance(p, ir.Fragment):  # A from registers: 16 columns of an accumulator, as B's type
            return self.from_registers(
                cx, node, d, p, a_at, b, b_off, width_, panel_, _accumulate(cx, accumulate_)  # type: ignore[arg-type]
            )
        a, a_off = _operand(cx, a_, a_at, "A")  # type: ignore[arg-type]
        elem = a.type.elem
        if elem.name not in wgmma_ops.K or b.type.elem != elem:
            raise KernelTypeError(
                f"wgmma() multiplies float16, bfloat16, float32 (TF32), float8_e4m3fn or float8_e5m2 operands of "
                "one type, not "
                f"{a.type.elem.name} and {b.type.elem.name}",
                loc,
            )
        if d.type.k != wgmma_ops.K[elem.name]:
            raise KernelTypeError(
                f"wgmma() of {elem.name} operands steps k by {wgmma_ops.K[elem.name]}: its accumulator is "
                f"fragment('accumulator', 64, {d.type.n}, {wgmma_ops.K[elem.name]}, float32), not {d.type!r}",
                loc,
            )
        width, panel = _b_layout(cx, node, width_, panel_, elem, d.type.n)
        if (width is not None or panel is not None) and elem.name in wgmma_ops.K_MAJOR_ONLY:
            what = "TF32" if elem == float32 else elem.name
            raise KernelTypeError(
                f"wgmma() of {what} operands reads B K-major only (stored n x k, as A is): leave out b_width and "
                "b_panel",
                loc,
            )
        cx.emit(ir.WarpgroupMma(d, a, a_off, b, b_off, width, panel, _accumulate(cx, accumulate_), loc=loc))
        return d

    def from_registers(
        self, cx: Lowering, node: ast.Call, d: ir.Fragment, p: ir.Fragment, step_: ast.expr, b: ir.ArrayRef,
        b_off: ir.Expr, width_: ast.expr | None, panel_: ast.expr | None, accumulate: bool,
    ) -> ir.Fragment:  # fmt: skip
        """``wgmma(acc, p, step, b, b_at)``: A is columns 16 step .. 16 step + 15 of accumulator p."""
        loc = cx.loc(node)
        if not wgmma_ops.is_warpgroup(p.type):
            raise KernelTypeError(
                f"wgmma()'s A from registers is a warpgroup accumulator, fragment('accumulator', 64, n, k, float32), "
                f"not {p.name!r}: {p.type!r}",
                loc,
            )
        elem = b.type.elem
        if elem not in (float16, bfloat16) or d.type.k != 16:
            raise KernelTypeError(
                f"wgmma() with A from registers multiplies float16 or bfloat16 (A rounded to B's type; k 16), not "
                f"B of {elem.name} into {d.type!r}",
                loc,
            )
        steps = p.type.cols // 16
        step = cx.static_value(step_, default=None)
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < steps:
            raise KernelTypeError(
                f"wgmma()'s A from accumulator {p.name!r} takes 16 of its {p.type.cols} columns: a step known at "
                f"compile time, 0 to {steps - 1}, not {ast.unparse(step_)}",
                loc,
            )
        width, panel = _b_layout(cx, node, width_, panel_, elem, d.type.n)
        cx.emit(ir.WarpgroupMmaRegs(d, p, int(step), b, b_off, width, panel, accumulate, loc=loc))
        return d


def _accumulate(cx: Lowering, arg: ast.expr | None) -> bool:
    """wgmma()'s ``accumulate``: True (acc += A @ B) unless a compile-time False (acc = A @ B)."""
    if arg is None:
        return True
    v = cx.static_value(arg, default=None)
    if not isinstance(v, (bool, np.bool_)):
        raise KernelTypeError(
            f"wgmma()'s accumulate is True or False known at compile time, not {ast.unparse(arg)}",
            cx.loc(arg),
            "unroll the loop whose first step starts the sum: accumulate=(kk > 0) with kk a gk.unroll index",
        )
    return bool(v)


def _b_layout(
    cx: Lowering, node: ast.Call, width_: ast.expr | None, panel_: ast.expr | None, elem: Any, n: int
) -> tuple[int | None, int | None]:
    """wgmma()'s ``b_width`` and ``b_panel`` (``semantics.wgmma``: a row-major B's two arrangements),
    checked: at most one, each a positive constant, a width a multiple of the atom at least n, a
    panel's height a multiple of the atom's 8 rows."""
    loc = cx.loc(node)
    width = None if width_ is None else cx.static_value(width_, default=0)  # (None: as left out)
    panel = None if panel_ is None else cx.static_value(panel_, default=0)
    if width is not None and panel is not None:
        raise KernelTypeError(
            "wgmma()'s B is row-major either in a tile b_width wide or in panels b_panel rows tall, not both", loc
        )
    for what, v, v_ in (("b_width is B's tile width", width, width_), ("b_panel is B's panel height", panel, panel_)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0):
            raise KernelTypeError(f"wgmma()'s {what} in elements, a positive constant, not {ast.unparse(v_)}", loc)
    atom = wgmma_ops.ROW_BYTES // elem.itemsize
    if width is not None and (width % atom or width < n):
        raise KernelTypeError(
            f"wgmma()'s b_width ({width}) is B's tile width: a multiple of {atom} elements (128-byte "
            f"swizzled atoms side by side) and at least n ({n})",
            loc,
        )
    if panel is not None and panel % wgmma_ops.ATOM_ROWS:
        raise KernelTypeError(
            f"wgmma()'s b_panel ({panel}) is the rows of each of B's panels (one 128-byte atom wide): a multiple "
            f"of {wgmma_ops.ATOM_ROWS}",
            loc,
        )
    return (None if width is None else int(width)), (None if panel is None else int(panel))


# ---------------------------------------------------------------- a thread's elements of an accumulator
def _index(cx: Lowering, node: ast.AST, f: ir.Fragment, index: ast.expr, what: str) -> int:
    """The element a subscript of ``f`` names: a constant below n / 2 of a warpgroup accumulator."""
    if not wgmma_ops.is_warpgroup(f.type):
        raise KernelTypeError(
            f"{what} of fragment {f.name!r} ({f.type!r}): only a warpgroup accumulator, fragment('accumulator', "
            "64, n, k, float32), lays its elements out as the language says (wmma's layout is the hardware's own)",
            cx.loc(node),
        )
    i = cx.static_value(index, default=None)
    count = f.type.cols // 2
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < count:
        raise KernelTypeError(
            f"{f.name}[{ast.unparse(index)}]: a thread holds {count} elements of {f.name!r} (n / 2), indexed by a "
            f"constant 0 to {count - 1}",
            cx.loc(node),
            "loop with unroll(range(n // 2)), or index with a Const",
        )
    return int(i)


def element(cx: Lowering, node: ast.Subscript, f: ir.Fragment) -> ir.FragmentElement:
    """``acc[i]`` read: element i of the calling thread's part (``semantics.wgmma.position``)."""
    return ir.FragmentElement(f, _index(cx, node, f, node.slice, "an element"), float32, loc=cx.loc(node))


def set_element(cx: Lowering, node: ast.AST, target: ast.Subscript, value: Value) -> ir.SetFragmentElement:
    """``acc[i] = value`` (a float32, as stored into an accumulator)."""
    f = cx.visit(target.value)
    i = _index(cx, target, f, target.slice, "an element")
    return ir.SetFragmentElement(f, i, coerce(cx.loc(node), scalar(cx.loc(node), value, "the element"), float32),
                                 loc=cx.loc(node))  # fmt: skip


class _Thread:
    """The calling thread's rank in its block as a front-end value, with the operators
    ``semantics.wgmma.position`` uses (so the rule is written once, for the simulator and here)."""

    def __init__(self, cx: Lowering, node: ast.AST, value: Value):
        self.cx, self.node, self.value = cx, node, value

    def _op(self, op: type, other: Any) -> _Thread:
        other = other.value if isinstance(other, _Thread) else Static(other)
        return _Thread(self.cx, self.node, self.cx.binop(self.node, op, self.value, other))

    def __floordiv__(self, other: Any) -> _Thread:
        return self._op(ast.FloorDiv, other)

    def __mod__(self, other: Any) -> _Thread:
        return self._op(ast.Mod, other)

    def __mul__(self, other: Any) -> _Thread:
        return self._op(ast.Mult, other)

    def __add__(self, other: Any) -> _Thread:
        return self._op(ast.Add, other)

    __radd__ = __add__
    __rmul__ = __mul__


class _Position(Intrinsic):
    """``acc_row(acc, i)`` / ``acc_col(acc, i)``: where element i of the thread's part lies."""

    def __init__(self, name: str, doc: str, which: int):
        super().__init__(name, doc)
        self.which = which

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        f = _fragment(cx, node.args[0], f"{self.name}()'s first argument", "accumulator")
        i = _index(cx, node, f, node.args[1], f"{self.name}()")
        from .compat import _linear  # the thread's rank in its block (x fastest)

        thread = _Thread(cx, node, _linear(cx, node, "thread_idx", "block_dim"))
        return wgmma_ops.position(thread, i)[self.which].value


acc_row = _Position(
    "acc_row",
    "acc_row(acc, i): the row (0..63) of the warpgroup accumulator that element acc[i] of the calling thread is "
    "(16 w + lane // 4 + 8 ((i // 2) % 2) for warp w of the group).",
    0,
)
acc_col = _Position(
    "acc_col",
    "acc_col(acc, i): the column (0..n-1) of the warpgroup accumulator that element acc[i] of the calling thread "
    "is (8 (i // 4) + 2 (lane % 4) + i % 2).",
    1,
)


# ---------------------------------------------------------------- the names
fragment = _Fragment(
    "fragment",
    "fragment(kind, m, n, k, dtype, layout='row'): a warp-wide tile for the matrix units: kind 'a' (m x k), "
    "'b' (k x n) or 'accumulator' (m x n, float32); dtype float16 or bfloat16 (m, n, k = 16,16,16, 32,8,16 or "
    "8,32,16) or float32 (TF32, 16,16,8); layout 'row' or 'col' for a and b (CUDA wmma::fragment).",
)
fill_fragment = _Fill(
    "fill_fragment", "fill_fragment(f, value): every element of fragment f set to value (CUDA wmma::fill_fragment)."
)
load_matrix = _Load(
    "load_matrix",
    "load_matrix(f, array, index, ldm=None): fragment f loaded by the warp from the tile of a global or shared "
    "array whose first element is array[index]: a[i:i+rows, j:j+cols] of a 2-D array (index (i, j)); a 1-D "
    "array needs ldm, the elements between rows (CUDA wmma::load_matrix_sync).",
)
store_matrix = _Store(
    "store_matrix",
    "store_matrix(array, index, f, ldm=None): accumulator fragment f stored to the tile at array[index], row by "
    "row, as load_matrix reads one (CUDA wmma::store_matrix_sync, mem_row_major).",
)
mma = _Mma("mma", "mma(a, b, c): c = a @ b + c on the warp's matrix units, in place; returns c: c = mma(a, b, c).")
mma_sync = _MmaSync("mma_sync", "mma_sync(d, a, b, c): d = a @ b + c on the warp's matrix units (CUDA wmma::mma_sync).")
wgmma = _Wgmma(
    "wgmma",
    "wgmma(acc, a, a_at, b, b_at, b_width=None, b_panel=None, accumulate=True): acc += A @ B (accumulate=False: "
    "acc = A @ B, its old values unread) by the four warps of a warpgroup "
    "on sm_90 (wgmma.mma_async); returns acc.  acc is fragment('accumulator', 64, n, k, float32); A (64 x k) "
    "and B (k x n) are read from shared arrays a and b from elements a_at and b_at, in 128-byte swizzled atoms "
    "(gk.swizzle128; B row-major in a tile b_width wide, or in panels 64 halves wide and b_panel rows tall as "
    "TMA boxes of (b_panel, 64) lay them side by side, or stored n x k as A is).  Or A from registers: "
    "wgmma(acc, p, step, b, b_at) takes columns 16 step .. 16 step + 15 of warpgroup accumulator p, rounded to "
    "B's type (float16 or bfloat16; FlashAttention's P @ V).  Asynchronous: the reads "
    "and the sum are done only at the wgmma_wait() covering the group wgmma_commit() closes.",
)
wgmma_commit = Statement(
    "wgmma_commit",
    "wgmma_commit(): the warpgroup's wgmma()s since its last commit form one group.",
    lambda loc: ir.WgmmaCommit(loc=loc),
)
wgmma_wait = GroupWait(
    "wgmma_wait",
    "wgmma_wait(n=0): the warpgroup waits until at most n of its committed wgmma groups are in flight (n a "
    "constant, 0 to 7); until then their operands must not be written nor their accumulators read.",
    lambda n, loc: ir.WgmmaWait(n, loc=loc),
)


@func
def swizzle128(row: int32, col: int32, width: int32, chunk: int32) -> int32:
    """The index of element (row, col) of a row-major tile ``width`` elements wide (a multiple of
    ``8 * chunk``) stored in 128-byte swizzled atoms, ``chunk`` elements to 16 bytes (8 for 16-bit
    types, 4 for float32): where a copy puts it so that ``gk.wgmma`` reads it as that element."""
    e = 8 * chunk  # elements in a 128-byte row
    atom = (row // 8) * (width // e) + col // e
    return atom * 8 * e + (row % 8) * e + (((col % e) // chunk) ^ (row % 8)) * chunk + col % chunk
