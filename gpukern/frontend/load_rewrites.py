"""Two rewrites of a function's shared-memory loads, made once in the IR.

An optimising compiler changes which loads a kernel makes: nvcc loads an element once where
the code reads it twice with nothing in between that could change it, and ptxas merges the
reads of neighbouring elements in an unrolled loop into one 128-bit load.  Made here, in the
IR every consumer reads, the C each backend compiles, the simulator with its race and
initialisation checks, and the profiler all see the same accesses, and the profiler's counts
are the machine's (``benchmarks/profile_vs_ncu.py``).

Both keep to shared arrays: their elements change only through the array itself, where a
global array may also be reached through another parameter; local arrays the profiler does not
count (they live in registers).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..ir import nodes as ir

VECTOR_BYTES = 16  # the widest load one thread makes in one instruction (float4, double2)

_FIELDS = {ir.Lit: ("value", "type"), ir.Special: ("name", "dim", "type")}
Replace = Callable[[ir.Expr], "ir.Expr | None"]


def _key(e: ir.Node) -> Any:
    """A value two expressions share when they compute the same from the same variables; None
    for one that reads memory, calls, or reads a vector (its value can change unseen)."""
    cls = e.__class__
    if cls is ir.Var:  # the common leaves first
        return e.name  # type: ignore[attr-defined]
    if cls is ir.Lit or cls is ir.Special:
        return (cls, *(getattr(e, f) for f in _FIELDS[cls]))
    if e.accesses() or isinstance(e, (ir.Call, ir.Lane, ir.WarpOp)):
        return None
    parts: list[Any] = [type(e).__name__]
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        if f.name in ("loc", "feeds_index"):
            continue
        value = getattr(e, f.name)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ir.ArrayRef):
                parts.append(v.name)
            elif isinstance(v, ir.Node):
                k = _key(v)
                if k is None:
                    return None
                parts.append(k)
            else:
                parts.append(v)
    return tuple(parts)


def _load_key(e: ir.Node) -> Any:
    """Which element a shared-memory load reads, as a value; None for any other node."""
    if not isinstance(e, ir.Load) or e.array.type.space != "shared":
        return None
    keys = tuple(_key(i) for i in e.indices)
    return None if None in keys else (_array_key(e.array), keys)


def _array_key(array: ir.ArrayRef) -> Any:
    """The array a load reads, and the view it reads through (``gpukern.frontend.views``): a load through a view is
    checked against the view's extent, so it is not made one with a load of the same element otherwise."""
    return array.name if array.view is None else (array.name, id(array.view))


def _rebuilt(node: Any, replace: Replace, fresh: bool = False) -> Any:
    """``node`` with the substitutes ``replace`` gives, outermost first (a substitute is not
    looked into): a copy where something changed below (every node with ``fresh``: a tree that
    can stand beside the original), else the node itself; arrays and callees are shared."""
    if isinstance(node, ir.ArrayRef) or not isinstance(node, ir.Node):
        return node
    if isinstance(node, ir.Expr):
        sub = replace(node)
        if sub is not None:
            return sub
    changed = {}
    for name in node.CHILDREN:
        value = getattr(node, name)
        if isinstance(value, list):
            new = [_rebuilt(v, replace, fresh) for v in value]
            if fresh or any(a is not b for a, b in zip(new, value)):
                changed[name] = new
        else:
            new = _rebuilt(value, replace, fresh)
            if new is not value:
                changed[name] = new
    if not changed and not fresh:
        return node
    out = copy.copy(node)
    for name, value in changed.items():
        setattr(out, name, value)
    return out


def _keep(e: ir.Expr) -> None:
    """A ``replace`` for ``_rebuilt`` that substitutes nothing (to copy)."""
    return None


def _replace_in(node: ir.Node, replace: Replace, fields: Sequence[str] | None = None) -> None:
    """Substitute in place under the children ``fields`` of ``node`` (all by default)."""
    for name in node.CHILDREN if fields is None else fields:
        value = getattr(node, name)
        if isinstance(value, list):
            setattr(node, name, [_rebuilt(v, replace) for v in value])
        else:
            setattr(node, name, _rebuilt(value, replace))


def _constant_loop(n: ir.Node) -> bool:
    return isinstance(n, ir.For) and isinstance(n.start, ir.Lit) and isinstance(n.stop, ir.Lit)


def rewrite_loads(fd: ir.FuncDef, taken: set[str]) -> None:
    """Both rewrites, after one look at the function for what they could apply to (most
    functions have neither a shared element read twice nor a loop of constant bounds).
    ``taken``: every name the function uses (new temporaries are added to it)."""
    seen: set[Any] = set()
    repeated = False
    loops = []
    for n in ir.walk_body(fd.body):
        if isinstance(n, ir.Load) and not repeated and n.array.type.space == "shared":
            rough = (n.array.name, *((type(i), getattr(i, "name", None), getattr(i, "value", None)) for i in n.indices))
            repeated = rough in seen  # perhaps the same element: worth the exact look
            seen.add(rough)
        elif _constant_loop(n):
            loops.append(n)
    if repeated:
        reuse_loads(fd, taken)
        loops = [n for n in ir.walk_body(fd.body) if _constant_loop(n)]  # its loops may be copies now
    for loop in loops:
        _widen(loop, taken)


# ---------------------------------------------------------------- one load for repeated reads
def reuse_loads(fd: ir.FuncDef, taken: set[str]) -> None:
    """Read a shared element once where the code reads it again before anything can change it.

    The first read must be one its statement always makes (not under ``and``/``or`` or in a
    branch of a conditional expression) and the statement must make no atomic or call; the
    later reads are in the same statement, in the branches of an ``if`` whose condition holds
    the first, and in the statements after it.  A store to the array, an atomic on it, a call,
    a barrier, or an assignment to a variable of the index ends the reuse.  The first read
    becomes a temporary assigned just before its statement (``taken``: the names in use)."""
    pending = [fd.body]
    while pending:
        block = pending.pop()
        i = 0
        while i < len(block):
            for load in _first_reads(block[i]):
                if _reuse(block, i, load, taken):
                    i += 1  # the temporary's assignment went in before the statement
            pending.extend(ir.child_blocks(block[i]))
            i += 1


def _roots(s: ir.Stmt) -> list[str]:
    """The fields of a statement that are evaluated before it does anything else."""
    if isinstance(s, ir.Assign):
        return ["value"]
    if isinstance(s, ir.Store):
        return ["indices", "value"]
    if isinstance(s, ir.If):
        return ["cond"]
    return []


def _acts(node: ir.Node) -> bool:
    """Does evaluating ``node`` do more than read (an atomic, a call)?"""
    return any(isinstance(n, (ir.Atomic, ir.Call, ir.WarpOp, ir.MatrixOp)) for n in ir.walk(node))


def _first_reads(s: ir.Stmt) -> list[ir.Load]:
    """The shared loads the statement always makes, one per element, if it makes no atomic or
    call."""
    roots = [n for f in _roots(s) for n in (getattr(s, f) if isinstance(getattr(s, f), list) else [getattr(s, f)])]
    if any(_acts(r) for r in roots):
        return []
    out: dict[Any, ir.Load] = {}
    stack = list(reversed(roots))
    while stack:
        e = stack.pop()
        key = _load_key(e)
        if key is not None:
            out.setdefault(key, e)
        if isinstance(e, ir.Logic):
            stack.append(e.left)  # the right operand may not be evaluated
        elif isinstance(e, ir.Select):
            stack.append(e.cond)
        else:
            stack.extend(reversed(list(ir.children(e))))
    return list(out.values())


def _memory_of(array: ir.ArrayRef) -> str:
    """The memory an array's stores change: its own, except that every dynamic_shared() array (shape
    unknown, in a kernel or a @func's parameter) is a view of the one buffer the launch sizes."""
    if array.type.space == "shared" and array.type.shape is None:
        return " dynamic shared"  # no Python name has a space
    return array.name


def _reuse(block: list[ir.Stmt], at: int, load: ir.Load, taken: set[str]) -> bool:
    """Replace every read of ``load``'s element it reaches; False (and nothing changed) when the
    first read is the only one."""
    key = _load_key(load)
    array = _memory_of(load.array)
    index_vars = {n.name for i in load.indices for n in ir.walk(i) if isinstance(n, ir.Var)}

    def ends(s: ir.Node) -> bool:
        """May running ``s`` change the element or its index?"""
        for c in ir.walk(s):
            if isinstance(c, (ir.Barrier, ir.Call, ir.WarpOp, ir.MatrixOp, ir.AsyncWait)):  # these order other lanes'
                return True  # writes (and at an async_wait, copies land)
            if any(a.write and _memory_of(a.array) == array for a in c.accesses()):
                return True
            if isinstance(c, ir.Assign) and c.target.name in index_vars:
                return True
            if isinstance(c, ir.For) and c.var.name in index_vars:
                return True
        return False

    def region(visit: Callable[[ir.Node, Sequence[str] | None], None]) -> None:
        """Visit what the first read reaches, in program order (``visit(node, fields)``)."""

        def scan(stmts: list[ir.Stmt]) -> bool:
            for s in stmts:
                if isinstance(s, ir.If) and not _acts(s.cond):  # the condition, then each branch
                    visit(s, ["cond"])
                    if not (scan(s.then) & scan(s.orelse)):
                        return False
                elif isinstance(s, (ir.If, ir.For, ir.While)) or _acts(s):
                    if ends(s):  # may change it somewhere inside, or before it reads
                        return False
                    visit(s, None)
                else:  # a plain statement reads, then writes
                    visit(s, None)
                    if ends(s):
                        return False
            return True

        s = block[at]
        visit(s, _roots(s))
        if isinstance(s, ir.If):
            if scan(s.then) & scan(s.orelse):
                scan(block[at + 1 :])
        elif not ends(s):
            scan(block[at + 1 :])

    reads = 0

    def count(node: ir.Node, fields: Sequence[str] | None) -> None:
        nonlocal reads
        for name in node.CHILDREN if fields is None else fields:
            value = getattr(node, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, ir.Node):
                    reads += sum(1 for e in ir.walk(v) if _load_key(e) == key)

    region(count)
    if reads < 2:
        return False
    temp = ir.Var(ir.fresh_name(f"{array}_elem", taken), load.type, loc=load.loc, temp=True)

    def substitute(node: ir.Node, fields: Sequence[str] | None) -> None:
        _replace_in(
            node, lambda e: ir.Var(temp.name, temp.type, loc=e.loc, temp=True) if _load_key(e) == key else None, fields
        )

    region(substitute)
    block.insert(at, ir.Assign(temp, load, declare=True, loc=load.loc))  # the read the statement no longer has
    return True


# ---------------------------------------------------------------- vector loads of rows
def _lit_int(e: ir.Expr) -> int | None:
    return e.value if isinstance(e, ir.Lit) and isinstance(e.value, int) and not isinstance(e.value, bool) else None


def _widen(loop: ir.For, taken: set[str]) -> None:
    """Read a shared row in 16-byte vectors where a loop of constant bounds walks along it.

    ``for i in range(C): ... s[r, i] ...`` with ``r`` the same in every iteration, ``s`` not
    written in the loop, and a body of plain assignments becomes ``for i in range(0, C, W)``
    with one W-wide load of ``s[r, i:i+W]`` and the body W times, for ``i``, ``i + 1`` ...
    (W = 16 bytes / element size).  The rows must start at multiples of W elements, so the
    vectors are aligned; ``C`` and the loop's start must be multiples of W too."""
    start, stop, step = _lit_int(loop.start), _lit_int(loop.stop), _lit_int(loop.step)
    if start is None or stop is None or step != 1:
        return
    i = loop.var.name
    body_nodes = list(ir.walk_body(loop.body))
    if not all(isinstance(s, (ir.Assign, ir.Store)) for s in loop.body) or any(
        isinstance(n, (ir.Atomic, ir.Call, ir.VecLoad, ir.VecStore, ir.Lane, ir.WarpOp)) for n in body_nodes
    ):
        return
    assigned = {s.target.name for s in loop.body if isinstance(s, ir.Assign)}
    if i in assigned:
        return
    stored = {s.array.name for s in loop.body if isinstance(s, ir.Store)}
    rows: dict[Any, tuple[ir.Load, int]] = {}  # (array, the other indices) -> a load and its width
    for n in body_nodes:
        if not (isinstance(n, ir.Load) and n.array.type.space == "shared" and n.array.name not in stored):
            continue
        last, others = n.indices[-1], n.indices[:-1]
        if not (isinstance(last, ir.Var) and last.name == i):
            continue
        names = {v.name for o in others for v in ir.walk(o) if isinstance(v, ir.Var)}
        keys = tuple(_key(o) for o in others)
        if i in names or names & assigned or None in keys:
            continue
        shape, size = n.array.type.shape or (), n.array.type.elem.itemsize
        if n.array.type.elem.is_complex:
            continue  # a complex element is a vector of two already
        width = VECTOR_BYTES // size
        if VECTOR_BYTES % size or not 2 <= width <= 4 or not shape or shape[-1] % width:  # lanes .x to .w
            continue
        if start % width or (stop - start) % width or stop - start < width or start < 0 or stop > shape[-1]:
            continue
        rows.setdefault((_array_key(n.array), keys), (n, width))
    if not rows:
        return
    widths = {w for _, w in rows.values()}
    if len(widths) != 1:
        return  # rows of elements of different sizes: one step cannot serve both
    (width,) = widths
    vectors = {}
    loads: list[ir.Stmt] = []
    for key, (n, _) in rows.items():
        name = ir.fresh_name(f"{n.array.name}_row", taken)
        vectors[key] = name
        loads.append(ir.VecLoad(name, n.array, [_rebuilt(o, _keep, fresh=True) for o in n.indices], width, loc=n.loc))

    def lane(j: int) -> Replace:
        def replace(e: ir.Expr) -> ir.Expr | None:
            if isinstance(e, ir.Load) and e.array.type.space == "shared":
                last = e.indices[-1]
                key = (_array_key(e.array), tuple(_key(o) for o in e.indices[:-1]))
                if key in vectors and isinstance(last, ir.Var) and last.name == i:
                    return ir.Lane(vectors[key], j, e.type, loc=e.loc)
            if isinstance(e, ir.Var) and e.name == i and j:
                return ir.BinOp("+", copy.copy(e), ir.Lit(j, e.type, loc=e.loc), e.type, loc=e.loc)
            return None

        return replace

    body: list[ir.Stmt] = list(loads)
    for j in range(width):
        copies = [_rebuilt(s, lane(j), fresh=j > 0) for s in loop.body]  # each copy its own nodes
        for s in copies if j else ():  # the body's own variables are declared once, by the first copy
            if isinstance(s, ir.Assign) and s.declare:
                s.declare = False
        body.extend(copies)
    loop.body = body
    loop.step = ir.Lit(width, loop.step.type, loc=loop.step.loc)
