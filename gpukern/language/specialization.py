"""Warp specialization's statements as functions of a kernel: named barriers, ``elect_one``,
``setmaxnreg`` (their meaning: ``gpukern.semantics.specialization``).

Each lowers to one IR node (``ir.NamedBarrier``, ``ir.Elect``, ``ir.SetMaxNreg``); the CUDA dialect
spells them in PTX (``codegen.hopper``), other dialects refuse them, the simulator runs and checks
them (``sim.named_barriers``; setmaxnreg's whole warpgroups as ``sim.mma`` checks a wgmma's).
"""

from __future__ import annotations

import ast

from ..errors import KernelTypeError
from ..ir import nodes as ir
from ..semantics import specialization as spec
from ..semantics.values import Static, Value, coerce, scalar
from ..types import bool_, uint32
from .core import Intrinsic, Lowering


def _operand(cx: Lowering, arg: ast.expr, what: str, problem: object) -> ir.Expr:
    """A barrier number or count as a uint32: a constant is checked now, a run-time one by the simulator."""
    loc = cx.loc(arg)
    v = scalar(loc, cx.visit(arg), what)
    if isinstance(v, Static):
        n = v.value
        if isinstance(n, bool) or not float(n).is_integer():
            raise KernelTypeError(f"{what} is an integer, not {n!r}", loc)
        why = problem(int(n))  # type: ignore[operator]
        if why is not None:
            raise KernelTypeError(why, loc)
        return ir.Lit(int(n), uint32, loc=loc)
    if not v.type.is_int or v.type == bool_:
        fix = f"convert it: uint32({ast.unparse(arg)})"
        raise KernelTypeError(f"{what} is an integer, not {v.type.name}", loc, fix)
    return coerce(loc, v, uint32)


class _NamedBarrier(Intrinsic):
    """``named_barrier(id, count)`` / ``named_barrier_arrive(id, count)``."""

    def __init__(self, name: str, wait: bool, doc: str):
        super().__init__(name, doc)
        self.wait = wait

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        i = _operand(cx, node.args[0], f"{self.name}()'s barrier number", spec.id_problem)
        n = _operand(cx, node.args[1], f"{self.name}()'s thread count", spec.count_problem)
        cx.emit(ir.NamedBarrier(i, n, self.wait, loc=cx.loc(node)))
        return Static(None)


class _Elect(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return ir.Elect(bool_, loc=cx.loc(node))


class _SetMaxNreg(Intrinsic):
    def __init__(self, name: str, inc: bool, doc: str):
        super().__init__(name, doc)
        self.inc = inc

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 1, self.name)
        n = cx.static_value(node.args[0], default=None)
        why = (
            spec.nreg_problem(int(n))
            if isinstance(n, int) and not isinstance(n, bool)
            else f"{self.name}() takes a compile-time register count, not {ast.unparse(node.args[0])}"
        )
        if why is not None:
            raise KernelTypeError(why, cx.loc(node))
        cx.emit(ir.SetMaxNreg(int(n), self.inc, loc=cx.loc(node)))  # type: ignore[arg-type]
        return Static(None)


named_barrier = _NamedBarrier(
    "named_barrier",
    True,
    "named_barrier(id, count): wait at the block's barrier id (1 to 15) until count threads (a multiple of "
    "32: warps arrive whole) have arrived there; their memory accesses before it are seen by each other after "
    "it.  Synchronises part of a block (the consumer warpgroups) where barrier() would need every thread.",
)
named_barrier_arrive = _NamedBarrier(
    "named_barrier_arrive",
    False,
    "named_barrier_arrive(id, count): arrive at barrier id without waiting (count: as the waiters give it); "
    "this thread's memory accesses before it are seen by the threads that wait there after it.",
)
elect_one = _Elect(
    "elect_one",
    "elect_one(): true in exactly one of the warp's threads that execute it (the lowest-numbered; PTX "
    "elect.sync): 'if gk.elect_one():' is one thread of the warp issuing a copy.",
)
setmaxnreg_inc = _SetMaxNreg(
    "setmaxnreg_inc",
    True,
    "setmaxnreg_inc(n): the warpgroup's threads may use up to n registers (24 to 256, a multiple of 8) from "
    "here on -- consumers taking the registers a producer gave up.  All four warps of the warpgroup execute "
    "it together.  CUDA sm_90a and the simulator (where it changes nothing).",
)
setmaxnreg_dec = _SetMaxNreg(
    "setmaxnreg_dec",
    False,
    "setmaxnreg_dec(n): the warpgroup's threads give registers up, keeping n (24 to 256, a multiple of 8): "
    "a producer warpgroup that only issues copies.  All four warps execute it together.",
)
