"""Hopper's copy machinery (sm_90): mbarriers and TMA copies, as functions of a kernel.

An mbarrier is an element of a shared array of ``gk.mbarrier`` (``bars = gk.shared(gk.mbarrier,
STAGES)``), named wherever it is used as ``bars[s]``; its meaning is ``gpukern.semantics.mbarrier``.
A TMA copy moves a box of a global array, described by ``gk.tensor_map(a, box, swizzle)`` in the
kernel (the descriptor is built at launch from the argument ``a``), into shared memory, and its
bytes complete on an mbarrier (``gpukern.semantics.tma``).  Each function here owns its typing
and lowering to ``ir.Mbarrier`` / ``ir.TmaLoad`` / ``ir.Fence``; the CUDA dialect spells them in
PTX (``codegen.hopper``), other dialects refuse them, the simulator runs and checks them
(``sim.mbarriers``).
"""

from __future__ import annotations

import ast

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..semantics import mbarrier as mbar
from ..semantics import tma
from ..semantics.values import Static, Value, coerce, scalar
from ..types import BarrierType, bool_, int32, uint32, uint64
from .core import Intrinsic, Lowering


def barrier_element(cx: Lowering, arg: ast.expr, name: str) -> tuple[ir.ArrayRef, list[ir.Expr]]:
    """The mbarrier ``arg`` names (``bars[s]``), without reading it."""
    v = cx.visit(arg) if isinstance(arg, ast.Subscript) else None
    if not isinstance(v, ir.Load) or not isinstance(v.array.type.elem, BarrierType):
        raise KernelTypeError(
            f"{name}() takes an mbarrier as an element of a shared array of them, not {ast.unparse(arg)}",
            cx.loc(arg),
            "declare bars = gk.shared(gk.mbarrier, n) and pass bars[i]",
        )
    return v.array, v.indices


def _count(cx: Lowering, arg: ast.expr, what: str, limit: int) -> ir.Expr:
    """A count (arrivals, bytes) as a uint32: a constant is checked against ``limit`` now."""
    loc = cx.loc(arg)
    v = scalar(loc, cx.visit(arg), what)
    if isinstance(v, Static):
        n = v.value
        if isinstance(n, bool) or not float(n).is_integer() or not 0 <= int(n) <= limit:
            raise KernelTypeError(f"{what} is an integer from 0 to {limit}, not {n!r}", loc)
        return ir.Lit(int(n), uint32, loc=loc)
    if not v.type.is_int or v.type == bool_:
        raise KernelTypeError(
            f"{what} is an integer, not {v.type.name}", loc, f"convert it: uint32({ast.unparse(arg)})"
        )
    return coerce(loc, v, uint32)


class _BarrierOp(Intrinsic):
    """``name(bar, [operand])``: one mbarrier operation (``semantics.mbarrier.OPS[op]``)."""

    def __init__(self, name: str, op: str, operand: str | None, result: object, doc: str, limit: int = 0):
        super().__init__(name, doc)
        self.op, self.operand, self.result, self.limit = op, operand, result, limit

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2 if self.operand else 1, self.name)
        bar, indices = barrier_element(cx, node.args[0], self.name)
        args = [_count(cx, node.args[1], f"{self.name}()'s {self.operand}", self.limit)] if self.operand else []
        e = ir.Mbarrier(self.op, bar, indices, args, self.result, loc=cx.loc(node))  # type: ignore[arg-type]
        if self.result is None:
            cx.emit(ir.ExprStmt(e, loc=cx.loc(node)))
            return Static(None)
        return e


class _TensorMap(Intrinsic):
    """``tensor_map(a, box, swizzle=0)``: a TMA descriptor of the kernel's array argument ``a``."""

    keywords = ("swizzle",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        a_, box_, swizzle_ = self.arguments(cx, node, ("a", "box", "swizzle"), 2)
        assert a_ is not None and box_ is not None
        loc = cx.loc(node)
        a = cx.visit(a_)
        if not isinstance(a, ir.ArrayRef) or a.type.space != "global" or a.view is not None or a.temp:
            raise KernelTypeError(
                f"{self.name}() describes one of the kernel's array arguments as a whole, not {ast.unparse(a_)}",
                cx.loc(a_),
                "pass the array parameter itself; a TMA box moves a part of it",
            )
        if not cx.is_kernel:
            raise KernelTypeError(
                f"{self.name}() is made in the kernel itself (its descriptor is a kernel parameter), not in a @func",
                loc,
                "make the map in the kernel and do the copies there",
            )
        box = cx.static_value(box_, default=None)
        box = (box,) if isinstance(box, int) and not isinstance(box, bool) else box
        swizzle = 0 if swizzle_ is None else cx.static_value(swizzle_, default=None)
        if not isinstance(box, tuple) or not all(isinstance(b, int) and not isinstance(b, bool) for b in box):
            raise KernelTypeError(f"{self.name}()'s box is a tuple of compile-time sizes, not {ast.unparse(box_)}", loc)
        elem = a.type.elem
        if elem.name not in tma.DATA_TYPES:
            raise KernelTypeError(
                f"TMA copies arrays of {', '.join(tma.DATA_TYPES)}, not {elem.name} ({a.name!r})", cx.loc(a_)
            )
        why = tma.box_problem(box, elem.itemsize, swizzle if isinstance(swizzle, int) else -1, a.type.ndim)
        if why is not None:
            raise KernelTypeError(f"{self.name}({a.name}, {box!r}, swizzle={swizzle!r}): {why}", loc)
        return ir.TensorMap(cx.fresh(f"{a.name}_map"), a, tuple(box), int(swizzle), loc=loc)


class _BoxBytes(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        m = cx.visit(node.args[0])
        if not isinstance(m, ir.TensorMap):
            raise KernelTypeError(
                f"{self.name}() takes a gk.tensor_map(), not {ast.unparse(node.args[0])}", cx.loc(node)
            )
        return Static(tma.box_elements(m.box) * m.array.type.elem.itemsize)


def shared_element(cx: Lowering, arg: ast.expr, what: str, example: str) -> ir.Load:
    """The shared element ``arg`` names (a peer's too), without reading it; else a KernelTypeError
    saying ``what`` the function takes there, and ``example``."""
    tile = cx.visit(arg) if isinstance(arg, ast.Subscript) else None
    if not isinstance(tile, ir.Load) or tile.array.type.space != "shared" or tile.array.record_field is not None:
        raise KernelTypeError(f"{what}, not {ast.unparse(arg)}", cx.loc(arg), f"write {example}")
    return tile


def _tile(cx: Lowering, arg: ast.expr, name: str, example: str) -> ir.Load:
    """A box's first element in shared memory."""
    what = f"{name}() copies between a global array and a shared one, named at the box's first element"
    return shared_element(cx, arg, what, example)


def _map_and_coords(
    cx: Lowering, node: ast.Call, name: str, tile: ir.Load, map_arg: ast.expr, coords_arg: ast.expr
) -> tuple[ir.TensorMap, list[ir.Expr]]:
    """A copy's tensor map (of the tile's element type) and the box's first element, as int32s."""
    loc = cx.loc(node)
    m = cx.visit(map_arg)
    if not isinstance(m, ir.TensorMap):
        raise KernelTypeError(f"{name}() takes a gk.tensor_map(), not {ast.unparse(map_arg)}", cx.loc(map_arg))
    if tile.array.type.elem != m.array.type.elem:
        raise KernelTypeError(
            f"{name}() copies bytes, so the tile and the array have one element type: {tile.array.name!r} "
            f"holds {tile.array.type.elem.name}, {m.array.name!r} {m.array.type.elem.name}",
            loc,
        )
    coords = cx.visit(coords_arg)
    items = cx.items_of(coords_arg, coords) or (coords,)  # type: ignore[attr-defined]
    if len(items) != len(m.box):
        raise KernelTypeError(
            f"{name}() takes the box's first element as {len(m.box)} coordinates (one per dimension of "
            f"{m.array.name!r}), not {ast.unparse(coords_arg)}",
            cx.loc(coords_arg),
        )
    cs = []
    for c in items:
        v = scalar(loc, c, f"{name}() coordinate")
        if not (isinstance(v, Static) or (v.type.is_int and v.type != bool_)):
            raise KernelTypeError(f"{name}()'s coordinates are integers, not {v.type.name}", loc)
        cs.append(coerce(loc, v, int32))
    return m, cs


class _TmaLoad(Intrinsic):
    """``tma_load(dst[i, j], map, coords, bar[s], multicast=None)``."""

    keywords = ("multicast",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        dst_, map_, coords_, bar_, mask_ = self.arguments(cx, node, ("dst", "map", "coords", "bar", "multicast"), 4)
        assert dst_ is not None and map_ is not None and coords_ is not None and bar_ is not None
        dst = _tile(cx, dst_, self.name, "tma_load(tile[0, 0], amap, (row, col), bars[s])")
        m, cs = _map_and_coords(cx, node, self.name, dst, map_, coords_)
        bar, indices = barrier_element(cx, bar_, self.name)
        mask = None if mask_ is None else _count(cx, mask_, f"{self.name}()'s multicast mask", 0xFFFF)
        cx.emit(ir.TmaLoad(dst.array, dst.indices, m, cs, bar, indices, loc=cx.loc(node), multicast=mask))
        return Static(None)


def _bulk_count(cx: Lowering, arg: ast.expr, name: str, elem: object) -> ir.Expr:
    """A bulk copy's element count (a constant: a positive multiple of 16 bytes, checked now)."""
    n = _count(cx, arg, f"{name}()'s element count", (1 << 20) - 1)
    size = elem.itemsize  # type: ignore[attr-defined]
    if isinstance(n, ir.Lit) and (n.value <= 0 or n.value * size % tma.BULK_ALIGN):
        raise KernelTypeError(
            f"{name}() moves a positive multiple of {tma.BULK_ALIGN} bytes: {n.value} elements of {size} bytes "
            f"are {n.value * size}",
            cx.loc(arg),
        )
    return n


def _global_element(cx: Lowering, arg: ast.expr, name: str, example: str) -> ir.Load:
    v = cx.visit(arg) if isinstance(arg, ast.Subscript) else None
    if not isinstance(v, ir.Load) or v.array.type.space != "global" or v.array.record_field is not None:
        raise KernelTypeError(
            f"{name}() copies between a global array and a shared one, each named at its first element, not "
            f"{ast.unparse(arg)}",
            cx.loc(arg),
            f"write {example}",
        )
    return v


class _BulkCopy(Intrinsic):
    """``bulk_load(dst[i], src[j], count, bar[s])`` (global to shared) or ``bulk_store(dst[j], src[i],
    count)`` (shared to global): one ``ir.BulkCopy``, ``bar`` None for a store."""

    def __init__(self, name: str, load: bool, doc: str):
        super().__init__(name, doc)
        self.load = load

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 4 if self.load else 3, self.name)
        example = "bulk_load(buf[0], a[i], n, bars[s])" if self.load else "bulk_store(out[i], buf[0], n)"
        shared_, global_ = (node.args[0], node.args[1]) if self.load else (node.args[1], node.args[0])
        tile = _tile(cx, shared_, self.name, example)
        glob = _global_element(cx, global_, self.name, example)
        dst, src = (tile, glob) if self.load else (glob, tile)
        _same_type(cx, node, self.name, dst.array, src.array)
        if not self.load:
            cx.check_writable(node, dst.array)  # type: ignore[attr-defined]
        n = _bulk_count(cx, node.args[2], self.name, tile.array.type.elem)
        bar, indices = barrier_element(cx, node.args[3], self.name) if self.load else (None, [])
        cx.emit(ir.BulkCopy(dst.array, dst.indices, src.array, src.indices, n, bar, indices, loc=cx.loc(node)))
        return Static(None)


def _same_type(cx: Lowering, node: ast.Call, name: str, a: ir.ArrayRef, b: ir.ArrayRef) -> None:
    if a.type.elem != b.type.elem:
        raise KernelTypeError(
            f"{name}() copies bytes, so both arrays have one element type: {a.name!r} holds {a.type.elem.name}, "
            f"{b.name!r} {b.type.elem.name}",
            cx.loc(node),
        )


class _TmaStore(Intrinsic):
    """``tma_store(map, coords, src[i, j])``."""

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        src = _tile(cx, node.args[2], self.name, "tma_store(cmap, (row, col), tile[0, 0])")
        m, cs = _map_and_coords(cx, node, self.name, src, node.args[0], node.args[1])
        cx.check_writable(node, m.array)  # type: ignore[attr-defined]
        cx.emit(ir.TmaStore(m, cs, src.array, src.indices, loc=cx.loc(node)))
        return Static(None)


class _BulkCommit(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        cx.emit(ir.BulkCommit(loc=cx.loc(node)))
        return Static(None)


class _BulkWait(Intrinsic):
    """``tma_store_wait(n=0, read=False)``."""

    keywords = ("read",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        n_, read_ = self.arguments(cx, node, ("n", "read"), 0)
        n = 0 if n_ is None else cx.static_value(n_, default=None)
        read = False if read_ is None else cx.static_value(read_, default=None)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 7 or not isinstance(read, bool):
            raise KernelTypeError(
                f"{self.name}(n, read) takes how many bulk groups may stay in flight, a constant from 0 to 7, and "
                "whether to wait for their reads of shared memory only (a constant bool)",
                cx.loc(node),
            )
        cx.emit(ir.BulkWait(n, read, loc=cx.loc(node)))
        return Static(None)


class _Fence(Intrinsic):
    def __init__(self, name: str, scope: str, doc: str):
        super().__init__(name, doc)
        self.scope = scope

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        cx.emit(ir.Fence(self.scope, loc=cx.loc(node)))
        return Static(None)


# ---------------------------------------------------------------- the names
tensor_map = _TensorMap(
    "tensor_map",
    "tensor_map(a, box, swizzle=0): a TMA descriptor of the kernel's array argument a (built at launch), for "
    "copies of box elements (a tuple, C order; each size 1 to 256, rows a multiple of 16 bytes), swizzled 0, 32, "
    "64 or 128 bytes in shared memory (128: the layout wgmma reads).  CUDA sm_90 and the simulator.",
)
box_bytes = _BoxBytes("box_bytes", "box_bytes(map): the bytes one copy of the map's box moves (a constant).")
tma_load = _TmaLoad(
    "tma_load",
    "tma_load(dst[i, j], map, coords, bar[s], multicast=None): start a TMA copy of map's box whose first element "
    "is at coords (a tuple, C order; parts outside the array are read as zeros) into shared memory from dst[i, j] "
    "on; its bytes complete on mbarrier bar[s] (expect them there: mbarrier_arrive_expect_tx).  A thread may read "
    "the tile once it has waited for that phase (mbarrier_wait).  multicast: a mask of the cluster's blocks (bit "
    "r: rank r) the box lands in, each at the same place, completing on its own bar[s].",
)
mbarrier_init = _BarrierOp(
    "mbarrier_init", "init", "count", None,
    "mbarrier_init(bar[s], count): phase 0 of the barrier expects count arrivals (one thread inits it; then "
    "fence_mbarrier_init() and barrier() before others use it).",
    mbar.MAX_COUNT,
)  # fmt: skip
mbarrier_arrive = _BarrierOp(
    "mbarrier_arrive", "arrive", None, uint64,
    "mbarrier_arrive(bar[s]): this thread arrives at the barrier's current phase (the phase completes when "
    "its arrivals and expected bytes are all in); returns the state token (uint64).",
)  # fmt: skip
mbarrier_arrive_expect_tx = _BarrierOp(
    "mbarrier_arrive_expect_tx", "arrive_tx", "nbytes", uint64,
    "mbarrier_arrive_expect_tx(bar[s], nbytes): expect nbytes more of copies completing on this phase, then "
    "arrive; returns the state token.",
    mbar.MAX_TX,
)  # fmt: skip
mbarrier_expect_tx = _BarrierOp(
    "mbarrier_expect_tx", "expect_tx", "nbytes", None,
    "mbarrier_expect_tx(bar[s], nbytes): expect nbytes more of copies completing on this phase (no arrival).",
    mbar.MAX_TX,
)  # fmt: skip
mbarrier_try_wait = _BarrierOp(
    "mbarrier_try_wait", "try_wait", "parity", bool_,
    "mbarrier_try_wait(bar[s], parity): whether the barrier's phase of this parity (0 or 1) has completed.",
    (1 << 32) - 1,
)  # fmt: skip
mbarrier_wait = _BarrierOp(
    "mbarrier_wait", "wait", "parity", None,
    "mbarrier_wait(bar[s], parity): wait until the barrier's phase of this parity has completed; what the "
    "phase's copies wrote may then be read.",
    (1 << 32) - 1,
)  # fmt: skip
bulk_load = _BulkCopy(
    "bulk_load",
    True,
    "bulk_load(dst[i], src[j], n, bar[s]): start copying n contiguous elements of a global array from src[j] on "
    "into shared memory from dst[i] on (cp.async.bulk: no tensor map; n * the element size a positive multiple "
    "of 16 bytes, both ends 16-byte aligned); its bytes complete on mbarrier bar[s], as a tma_load's.",
)
bulk_store = _BulkCopy(
    "bulk_store",
    False,
    "bulk_store(dst[j], src[i], n): start copying n contiguous elements of shared memory from src[i] on into a "
    "global array from dst[j] on (sizes and alignment as bulk_load's), in this thread's bulk group "
    "(tma_store_commit(), tma_store_wait()).",
)
tma_store = _TmaStore(
    "tma_store",
    "tma_store(map, coords, src[i, j]): start a TMA copy of map's box from shared memory (src[i, j] on, laid out "
    "as tma_load lays it) to the array at coords (elements outside the array are not written).  Write the tile, "
    "fence_proxy_async(), barrier(), then one thread stores; tma_store_commit() closes the thread's group, "
    "tma_store_wait() waits for it.",
)
tma_store_commit = _BulkCommit(
    "tma_store_commit", "tma_store_commit(): this thread's TMA stores since its last commit form a bulk group."
)
tma_store_wait = _BulkWait(
    "tma_store_wait",
    "tma_store_wait(n=0, read=False): wait until at most n of this thread's bulk groups are in flight: their "
    "writes done and seen by the grid, or with read=True only their reads of shared memory (the tile may then "
    "be written again).",
)
fence_mbarrier_init = _Fence(
    "fence_mbarrier_init", "mbarrier_init",
    "fence_mbarrier_init(): this thread's mbarrier_init()s are seen by the copies and other threads after it "
    "(PTX fence.mbarrier_init).",
)  # fmt: skip
fence_proxy_async = _Fence(
    "fence_proxy_async", "proxy_async",
    "fence_proxy_async(): this thread's writes to shared memory are seen by TMA copies and wgmma after it "
    "(PTX fence.proxy.async.shared::cta).",
)  # fmt: skip
