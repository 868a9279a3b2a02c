"""Warp ops under thread-dependent branches, for a dialect that emulates warps with block barriers.

OpenCL C without sub-groups exchanges a warp op's operands through local memory between
work-group barriers, so every work-item of the group must call every op.  CUDA lets part of a
warp call one (``if lane % 2 == 0: ballot_sync(0x55555555, ...)``, independent thread
scheduling).  ``predicate_warp_ops`` gives such a kernel a form the emulation can run: each
branch holding a warp op becomes straight-line code under a per-thread predicate (``taking_part
= lane % 2 == 0``), every thread calls each op, and only those whose predicate holds take part
(``WarpOp.active``: their operands count, the others' are ignored; the result is kept only
where the predicate holds).  The statements around an op run under ``if (taking_part)``.

A ``return`` that only some threads take first becomes a flag (``passes.structure_early_returns``),
so what follows it is such a branch too.  A branch is predicated only where that is exactly its
meaning: its warp ops are not inside a ``while`` loop, a short-circuit operand or a conditional
expression, and no ``break``, ``continue`` or ``return`` leaves it.  Otherwise nothing changes
and the emitter refuses the kernel, as before.  The simulator and CUDA never see this form; it is made for the emitter.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from ..ir import nodes as ir
from ..types import bool_
from .checks import warp_divergence
from .passes import finish_declarations, structure_early_returns


class _Unchanged(Exception):
    """The kernel has a warp op this pass cannot predicate exactly (the emitter refuses it)."""


def predicate_warp_ops(fd: ir.FuncDef) -> ir.FuncDef | None:
    """A copy of kernel ``fd`` in which no warp op is under a thread-dependent branch, or None
    where ``fd`` has none there or one cannot be moved out exactly (``fd`` itself is not changed)."""
    if not fd.is_kernel or warp_divergence(fd) is None:
        return None
    staged = replace(fd, body=[_copy(s) for s in fd.body])
    structure_early_returns(staged, for_warps=True)  # a thread that returned takes part in none
    try:
        body = _Predicator(ir.names_in(staged)).block(staged.body, None)
    except _Unchanged:
        return None
    new = replace(fd, body=body, locals=[])
    finish_declarations(new, {p.name for p in fd.params})
    return new if warp_divergence(new) is None else None


def _has_warp(node: Any) -> bool:
    return any(isinstance(n, ir.WarpOp) for n in ir.walk(node))


def _copy(s: ir.Stmt) -> ir.Stmt:
    """``s`` with its statements copied (its expressions shared): declarations are placed anew."""
    changes: dict[str, Any] = {}
    if isinstance(s, ir.Assign):
        changes["declare"] = False
    for f in fields(s):
        v = getattr(s, f.name)
        if isinstance(v, list) and v and all(isinstance(x, ir.Stmt) for x in v):
            changes[f.name] = [_copy(x) for x in v]
    return replace(s, **changes)


def _substitute(node: Any, table: dict[int, ir.Expr]) -> Any:
    """``node`` with each sub-node whose id is in ``table`` replaced (the path to it copied)."""
    if id(node) in table:
        return table[id(node)]
    if not isinstance(node, ir.Node) or not node.CHILDREN:
        return node
    changes: dict[str, Any] = {}
    for name in node.CHILDREN:
        v = getattr(node, name)
        new = [_substitute(x, table) for x in v] if isinstance(v, list) else _substitute(v, table)
        if (new != v) if isinstance(v, list) else (new is not v):
            changes[name] = new
    return replace(node, **changes) if changes else node


class _Predicator:
    def __init__(self, taken: set[str]):
        self.taken = taken
        self.implies: dict[str, set[tuple[str, str]]] = {}  # a predicate's name -> the flag tests it includes

    def var(self, base: str, t: Any) -> ir.Var:
        return ir.Var(ir.fresh_name(base, self.taken), t, temp=True)

    def block(self, stmts: list[ir.Stmt], p: ir.Var | None) -> list[ir.Stmt]:
        """``stmts`` run by the threads where ``p`` holds (all where None)."""
        out: list[ir.Stmt] = []
        guarded: list[ir.Stmt] = []

        def flush() -> None:
            if guarded:
                out.append(ir.If(_read(p), list(guarded), [], loc=guarded[0].loc))
                guarded.clear()

        for s in stmts:
            if not _has_warp(s):
                if p is None:
                    out.append(_copy(s))
                else:
                    if isinstance(s, (ir.Break, ir.Continue, ir.Return)) or any(
                        isinstance(n, (ir.Break, ir.Continue, ir.Return, ir.Barrier)) for n in ir.walk(s)
                    ):
                        raise _Unchanged  # leaves (or waits in) a predicated region: not straight-line code
                    guarded.append(_copy(s))
                continue
            flush()
            out.extend(self.statement(s, p))
        flush()
        return out

    def statement(self, s: ir.Stmt, p: ir.Var | None) -> list[ir.Stmt]:
        """A statement holding a warp op, run where ``p`` holds."""
        if isinstance(s, ir.If):
            if _has_warp(s.cond):
                raise _Unchanged
            known = self.implies.get(p.name, set()) if p is not None else set()
            if not s.orelse and _flag_test(s.cond) in known:  # ``if not returned`` where that holds already
                return self.block(s.then, p)
            out: list[ir.Stmt] = []
            taken = self.var("taking_part", bool_)
            cond = s.cond if p is None else ir.Logic("and", _read(p), s.cond, bool_, loc=s.loc)
            out.append(ir.Assign(taken, cond, loc=s.loc))
            self.implies[taken.name] = known | {_flag_test(s.cond)}
            out += self.block(s.then, taken)
            if s.orelse:
                other = self.var("taking_part", bool_)
                rest = ir.Unary("not", _read(taken), bool_, loc=s.loc)
                out.append(ir.Assign(other, rest if p is None else ir.Logic("and", _read(p), rest, bool_), loc=s.loc))
                self.implies[other.name] = known
                out += self.block(s.orelse, other)
            return out
        if isinstance(s, ir.For):
            if any(_has_warp(e) for e in (s.start, s.stop, s.step)):
                raise _Unchanged
            return [replace(s, body=self.block(s.body, p))]
        if isinstance(s, ir.While):
            if p is not None or _has_warp(s.cond):
                raise _Unchanged  # a per-thread trip count: not one straight line for the warp
            return [replace(s, body=self.block(s.body, None))]
        if ir.child_blocks(s):
            raise _Unchanged
        if p is None:
            return [_copy(s)]
        return self.hoist(s, p)

    def hoist(self, s: ir.Stmt, p: ir.Var) -> list[ir.Stmt]:
        """A simple statement's warp ops called by every thread (``p`` says which take part), then
        the statement itself where ``p`` holds, reading their results."""
        found = _warp_ops(s)
        out: list[ir.Stmt] = []
        table: dict[int, ir.Expr] = {}
        for op in found:  # innermost first: an op's operands may hold another op's result
            mask = None if op.mask is None else _guard(_substitute(op.mask, table), p)
            args = [_guard(_substitute(a, table), p) for a in op.args]
            called = replace(op, mask=mask, args=args, active=_read(p))
            if op.type is None:  # syncwarp, a statement of its own: nothing to keep
                out.append(ir.ExprStmt(called, loc=op.loc))
                continue
            result = self.var("warp_result", op.type)
            out.append(ir.Assign(result, called, loc=op.loc))
            table[id(op)] = _read(result)
        if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.WarpOp) and s.value.type is None:
            return out
        return out + [ir.If(_read(p), [_substitute(_copy(s), table)], [], loc=s.loc)]


def _flag_test(cond: ir.Expr) -> tuple[str, str]:
    """A condition that tests a flag (``returned``, ``not returned``) as a key; others key to nothing."""
    if isinstance(cond, ir.Var):
        return ("is", cond.name)
    if isinstance(cond, ir.Unary) and cond.op == "not" and isinstance(cond.operand, ir.Var):
        return ("not", cond.operand.name)
    return ("", str(id(cond)))


def _read(v: ir.Var) -> ir.Var:
    return ir.Var(v.name, v.type, temp=True)


def _guard(e: ir.Expr, p: ir.Var) -> ir.Expr:
    """``e`` evaluated only where ``p`` holds (elsewhere a zero of its type, which is ignored)."""
    if isinstance(e, (ir.Lit, ir.Var)):
        return e
    zero = ir.Lit(False if e.type == bool_ else 0, e.type, loc=e.loc)
    return ir.Select(_read(p), e, zero, e.type, loc=e.loc)


def _warp_ops(s: ir.Stmt) -> list[ir.WarpOp]:
    """The warp ops of a simple statement, innermost first; none may sit where C evaluates only
    sometimes (a conditional expression's arms, a short-circuit's right operand)."""
    found: list[ir.WarpOp] = []

    def visit(n: Any, conditional: bool) -> None:
        if not isinstance(n, ir.Node):
            return
        if isinstance(n, ir.WarpOp) and conditional:
            raise _Unchanged
        for name in n.CHILDREN:
            v = getattr(n, name)
            sometimes = conditional or (isinstance(n, ir.Select) and name in ("a", "b"))
            sometimes = sometimes or (isinstance(n, ir.Logic) and name == "right")
            for x in v if isinstance(v, list) else [v]:
                visit(x, sometimes)
        if isinstance(n, ir.WarpOp):
            found.append(n)

    visit(s, False)
    return found
