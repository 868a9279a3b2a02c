"""The warp-level intrinsics: lane id, shuffles, votes, ballot, match, syncwarp (CUDA's ``__*_sync``);
and the block-wide votes (CUDA's ``__syncthreads_count/_and/_or``), barriers that reduce a predicate.

Each is one object whose class owns its typing and lowering, as the intrinsics of
``gpukern.language.core`` do; they all lower to one generic IR node, ``ir.WarpOp``, whose meaning is
``gpukern.semantics.warp`` and whose C spelling is the dialects' ``warp`` table.  A mask is a uint32
of lanes (bit k: lane k of the warp), a uint64 in a variant compiled for 64-lane wavefronts
(``Rules.lanes``, the simulator's wave64 mode), as are ballots; a value shuffled or matched is a
32- or 64-bit integer or float, as CUDA's functions take (a bool or narrower integer goes through
int32 and back).  A block vote is an ``ir.Barrier`` with a ``vote`` (``semantics.warp.BLOCK_VOTES``),
so everything that knows barriers (the divergence check, early returns, the simulator's race
checks) knows it.
"""

from __future__ import annotations

import ast

from ..errors import KernelTypeError, Loc
from ..ir import nodes as ir
from ..semantics.values import Static, Value, coerce, materialized, scalar
from ..semantics.warp import BLOCK_VOTES, WARP_OPS, full_mask
from ..types import ScalarType, TupleType, bool_, int32, uint32, uint64
from .core import Intrinsic, Lowering


def _mask_type(cx: Lowering) -> ScalarType:
    """A mask's and a ballot's type: uint32, or uint64 in a variant of 64-lane wavefronts."""
    return uint64 if cx.rules.lanes == 64 else uint32


def _integer(cx: Lowering, arg: ast.expr, what: str, t: ScalarType = uint32) -> ir.Expr:
    """A mask or lane operand: an integer as ``t`` (a constant may be written -1 or 0xFFFFFFFF)."""
    loc = cx.loc(arg)
    v = scalar(loc, cx.visit(arg), what)
    bits = 8 * t.itemsize
    if isinstance(v, Static):
        value = v.value
        if isinstance(value, bool) or not float(value).is_integer() or not -(2**31) <= int(value) < 2**bits:
            raise KernelTypeError(f"{what} must be an integer that fits in {bits} bits, not {value!r}", loc)
        return ir.Lit(int(value) & full_mask(bits), t, loc=loc)
    if not v.type.is_int or v.type == bool_:
        raise KernelTypeError(f"{what} must be an integer, not {v.type.name}", loc, f"convert it: {t.name}({what})")
    return coerce(loc, v, t)


def _mask(cx: Lowering, arg: ast.expr) -> ir.Expr:
    return _integer(cx, arg, "mask", _mask_type(cx))


def _operand(cx: Lowering, arg: ast.expr, name: str) -> tuple[ir.Expr, ScalarType]:
    """A value to shuffle or match, as CUDA's overloads take it (32/64-bit integer or float), and
    the type the result goes back to (a bool or narrower integer travels as int32)."""
    loc = cx.loc(arg)
    v = materialized(loc, scalar(loc, cx.visit(arg), f"{name}() value"))
    t = v.type
    if t.kind in "iuf" and t.itemsize in (4, 8):
        return v, t
    if t == bool_ or t.is_int:
        return coerce(loc, v, int32), t
    raise KernelTypeError(
        f"{name}() moves 32- or 64-bit integers and floats (as CUDA's does), not {t.name}",
        loc,
        "convert the value, e.g. float32(x), and back after",
    )


def _predicate(cx: Lowering, arg: ast.expr, name: str) -> ir.Expr:
    loc = cx.loc(arg)
    v = materialized(loc, scalar(loc, cx.visit(arg), f"{name}() predicate"))
    return v if v.type == bool_ else ir.Cast(v, bool_, loc=loc)


def _back(e: ir.WarpOp, t: ScalarType) -> ir.Expr:
    return e if e.type == t else ir.Cast(e, t, loc=e.loc)


class _LaneId(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return ir.Special("lane_id", 0, int32, loc=cx.loc(node))


class _WarpSize(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return Static(cx.rules.lanes)


class _Shuffle(Intrinsic):
    """``shfl_<mode>_sync(mask, value, b, width=32)``: the value of another lane of the warp."""

    keywords = ("width",)

    def __init__(self, op: str, operand: str, doc: str):
        super().__init__(WARP_OPS[op].name, doc)
        self.op, self.operand = op, operand

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        mask, value, b, width = self.arguments(cx, node, ("mask", "value", self.operand, "width"), 3)
        m = _mask(cx, mask)
        v, t = _operand(cx, value, self.name)
        lane = _integer(cx, b, self.operand)
        w = _width(cx, node, width, self.name)
        return _back(ir.WarpOp(self.op, m, [v, lane, w], v.type, loc=cx.loc(node)), t)


def _width(cx: Lowering, node: ast.Call, width: ast.expr | None, name: str) -> ir.Expr:
    """A shuffle's width as an int32: a constant must be a power of 2 from 1 to the warp's lanes
    (CUDA's rule); a run-time one is checked where it runs (the simulator reports any other value)."""
    loc = cx.loc(width or node)
    lanes = cx.rules.lanes
    if width is None:
        return ir.Lit(lanes, int32, loc=loc)
    v = scalar(loc, cx.visit(width), f"{name}() width")
    if isinstance(v, Static):
        w = v.value
        if isinstance(w, bool) or w not in [1 << k for k in range(lanes.bit_length())]:
            raise KernelTypeError(
                f"{name}() width must be a power of 2 from 1 to {lanes}, not {ast.unparse(width)}", loc
            )
        return ir.Lit(int(w), int32, loc=loc)
    if not v.type.is_int or v.type == bool_:
        raise KernelTypeError(f"{name}() width must be an integer, not {v.type.name}", loc, "convert it: int32(w)")
    return coerce(loc, v, int32)


class _Vote(Intrinsic):
    """``vote_all`` / ``vote_any`` / ``eq_sync`` / ``ballot`` ``(mask, predicate)``."""

    def __init__(self, op: str, doc: str):
        super().__init__(WARP_OPS[op].name, doc)
        self.op = op

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        m = _mask(cx, node.args[0])
        p = _predicate(cx, node.args[1], self.name)
        t = _mask_type(cx) if self.op == "ballot" else bool_
        return ir.WarpOp(self.op, m, [p], t, loc=cx.loc(node))


class _MatchAny(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        m = _mask(cx, node.args[0])
        v, _ = _operand(cx, node.args[1], self.name)
        return ir.WarpOp("match_any", m, [v], _mask_type(cx), loc=cx.loc(node))


class _MatchAll(Intrinsic):
    """``match_all(mask, value)``: the tuple (the lanes of mask if all of them pass the same value,
    else 0; whether they do), as Numba's ``match_all_sync`` returns CUDA's result and predicate."""

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        loc = cx.loc(node)
        m = _mask(cx, node.args[0])
        v, _ = _operand(cx, node.args[1], self.name)
        mt = _mask_type(cx)
        held = ir.Var(cx.fresh("matched"), mt, loc=loc, temp=True)  # one call, two results
        cx.emit(ir.Assign(held, ir.WarpOp("match_all", m, [v], mt, loc=loc), loc=loc))
        lanes = ir.Var(held.name, mt, loc=loc, temp=True)
        same = ir.Compare("!=", lanes, ir.Lit(0, mt, loc=loc), bool_, loc=loc)  # CUDA's predicate
        # held as a tuple, as a call returning one is (``r = match_all(...); r[1]`` as well as ``m, p = ...``)
        t = TupleType((mt, bool_))
        pair = ir.Var(cx.fresh("match"), t, loc=loc, temp=True)  # type: ignore[arg-type]
        cx.emit(ir.Assign(pair, ir.MakeTuple([ir.Var(held.name, mt, loc=loc, temp=True), same], t, loc=loc), loc=loc))
        return tuple(
            ir.Item(ir.Var(pair.name, t, loc=loc, temp=True), k, item, loc=loc)  # type: ignore[arg-type]
            for k, item in enumerate(t.items)
        )


class _LaneMaskLt(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        loc = cx.loc(node)
        mt = _mask_type(cx)
        lane = ir.Cast(ir.Special("lane_id", 0, int32, loc=loc), mt, loc=loc)
        below = ir.BinOp("<<", ir.Lit(1, mt, loc=loc), lane, mt, loc=loc)
        return ir.BinOp("-", below, ir.Lit(1, mt, loc=loc), mt, loc=loc)


class _ActiveMask(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return ir.WarpOp("activemask", None, [], _mask_type(cx), loc=cx.loc(node))


class _SyncWarp(Intrinsic):
    keywords = ("mask",)

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        (mask,) = self.arguments(cx, node, ("mask",), 0)
        loc: Loc = cx.loc(node)
        mt = _mask_type(cx)
        m = ir.Lit(full_mask(cx.rules.lanes), mt, loc=loc) if mask is None else _mask(cx, mask)
        cx.emit(ir.ExprStmt(ir.WarpOp("syncwarp", m, [], None, loc=loc), loc=loc))
        return Static(None)


class _BlockVote(Intrinsic):
    """``syncthreads_count`` / ``_and`` / ``_or`` ``(predicate)``: a barrier whose value is the
    predicate reduced over the threads of the block."""

    def __init__(self, op: str, doc: str):
        super().__init__(BLOCK_VOTES[op].name, doc)
        self.op = op

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        loc = cx.loc(node)
        p = _predicate(cx, node.args[0], self.name)
        t = bool_ if BLOCK_VOTES[self.op].boolean else int32
        result = ir.Var(cx.fresh("vote"), t, loc=loc, temp=True)
        cx.emit(ir.Barrier(self.op, p, result, loc=loc))
        return ir.Var(result.name, t, loc=loc, temp=True)


# ---------------------------------------------------------------- the names
lane_id = _LaneId(
    "lane_id", "lane_id(): this thread's lane in its warp, 0..31 (its linear index in the block % warp_size())."
)
warp_size = _WarpSize(
    "warp_size", "warp_size(): 32, the threads of a warp (a compile-time constant; 64 in the simulator's wave64 mode)."
)
shfl_sync = _Shuffle(
    "shfl_idx",
    "src_lane",
    "shfl_sync(mask, value, src_lane, width=32): value of lane src_lane (mod width) of this lane's "
    "width-lane segment of the warp (CUDA __shfl_sync).",
)
shfl_up_sync = _Shuffle(
    "shfl_up",
    "delta",
    "shfl_up_sync(mask, value, delta, width=32): value of the lane delta below this one; a lane "
    "fewer than delta from its segment's start gets its own value (CUDA __shfl_up_sync).",
)
shfl_down_sync = _Shuffle(
    "shfl_down",
    "delta",
    "shfl_down_sync(mask, value, delta, width=32): value of the lane delta above this one; a lane "
    "fewer than delta from its segment's end gets its own value (CUDA __shfl_down_sync).",
)
shfl_xor_sync = _Shuffle(
    "shfl_xor",
    "lane_mask",
    "shfl_xor_sync(mask, value, lane_mask, width=32): value of lane (lane ^ lane_mask), or its own "
    "value where that is past the end of its segment (CUDA __shfl_xor_sync).",
)
vote_all = _Vote("all", "vote_all(mask, pred): whether pred holds in every lane of mask (CUDA __all_sync).")
vote_any = _Vote("any", "vote_any(mask, pred): whether pred holds in some lane of mask (CUDA __any_sync).")
eq_sync = _Vote(
    "uni",
    "eq_sync(mask, pred): whether pred is the same (true in every lane or in none) in the lanes of mask "
    "(Numba cuda.eq_sync; PTX vote.sync.uni).",
)
ballot = _Vote("ballot", "ballot(mask, pred): uint32, bit k set where lane k of mask has pred (CUDA __ballot_sync).")
activemask = _ActiveMask(
    "activemask", "activemask(): uint32 of the lanes of the warp executing this call (CUDA __activemask)."
)
syncwarp = _SyncWarp(
    "syncwarp",
    "syncwarp(mask=0xFFFFFFFF): the lanes of mask wait for each other, memory ordered among them (CUDA __syncwarp).",
)
match_any = _MatchAny(
    "match_any",
    "match_any(mask, value): uint32 of the lanes of mask whose value has the same bits as this lane's "
    "(CUDA __match_any_sync).",
)
match_all = _MatchAll(
    "match_all",
    "match_all(mask, value): the tuple (mask_or_0, pred): pred is whether every lane of mask passes a value "
    "with the same bits, and mask_or_0 the lanes of mask then, else 0 (CUDA __match_all_sync).",
)
lanemask_lt = _LaneMaskLt(
    "lanemask_lt",
    "lanemask_lt(): uint32 with the bits of the lanes below this one, (1 << lane_id()) - 1 (CUDA %lanemask_lt).",
)
syncthreads_count = _BlockVote(
    "count",
    "syncthreads_count(pred): barrier() that also gives, in every thread, how many threads of the block "
    "have pred true (int32; CUDA __syncthreads_count).",
)
syncthreads_and = _BlockVote(
    "and",
    "syncthreads_and(pred): barrier() that also gives whether pred is true in every thread of the block "
    "(CUDA __syncthreads_and).",
)
syncthreads_or = _BlockVote(
    "or",
    "syncthreads_or(pred): barrier() that also gives whether pred is true in some thread of the block "
    "(CUDA __syncthreads_or).",
)
# Numba's spellings: the same objects
all_sync, any_sync, ballot_sync, match_any_sync, match_all_sync = vote_all, vote_any, ballot, match_any, match_all
