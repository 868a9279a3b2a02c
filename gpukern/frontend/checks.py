"""Static checks on a lowered function: definite assignment, and collective operations
(barriers, fragment operations, warp ops) that not every thread may reach.

They run on the typed IR, after the front end has folded constants, so a branch on a
``Const`` that disappeared cannot cause a false alarm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from ..errors import BarrierDivergenceError, KernelTypeError, warn_at
from ..ir import nodes as ir
from ..semantics import wgmma as wgmma_ops
from ..types import BarrierType

# ---------------------------------------------------------------- definite assignment


def _reads(e: ir.Node) -> Iterator[ir.Var]:
    return (n for n in ir.walk(e) if isinstance(n, ir.Var))


def _fragment_uses(s: ir.MatrixOp) -> tuple[list[ir.Fragment], list[ir.Fragment]]:
    """The fragments a fragment operation reads, and those it sets (all of their elements)."""
    if isinstance(s, ir.Mma):
        return [s.a, s.b, s.c], [s.d]
    if isinstance(s, ir.WarpgroupMma):
        return [s.d] if s.accumulate else [], [s.d]
    if isinstance(s, ir.WarpgroupMmaRegs):
        return [s.d, s.p] if s.accumulate else [s.p], [s.d]
    if isinstance(s, ir.StoreMatrix):
        return [s.fragment], []
    if isinstance(s, (ir.FillFragment, ir.LoadMatrix)):
        return [], [s.fragment]
    return [], []  # a declaration sets nothing: its registers hold whatever was there


def check_definite_assignment(fd: ir.FuncDef, unbound: str = "error") -> None:
    """Every read of a local must follow an assignment on every path to it, as Python requires
    (Python raises UnboundLocalError; C would read garbage); and every fragment an ``mma`` or
    ``store_matrix`` reads must be loaded, filled or computed first (its registers would be garbage
    on a GPU, NaN on the simulator).  Fragments are tracked under keys no local can have.  A read
    some path leaves unassigned is refused, except a shuffle's value (read in the source lane only)
    and, with ``unbound="check"``, any: those are ``fd.partial``, 0 in C and checked by the simulator."""
    params = {p.name for p in fd.params}
    breaks: list[list[set[str]]] = []  # per enclosing loop: what is assigned at each break
    continues: list[list[set[str]]] = []  # ... and at each continue
    # a shuffle's value operand: read in the source lane only, which the simulator checks set it
    shuffled = {
        id(n.args[0]) for n in ir.walk_body(fd.body) if isinstance(n, ir.WarpOp) and n.op.startswith("shfl")
    }
    somewhere = {  # names some statement assigns (a read of another is refused in every mode)
        n.target.name if isinstance(n, ir.Assign) else n.var.name
        for n in ir.walk_body(fd.body)
        if isinstance(n, (ir.Assign, ir.For))
    }

    def check(e: ir.Node, defined: set[str]) -> None:
        for v in _reads(e):
            if v.name not in defined and not v.temp and v.name in somewhere:
                if id(v) in shuffled or unbound == "check" or v.name in fd.nones:  # checked when read, by the simulator
                    fd.partial.add(v.name)
                    continue
            if v.name not in defined and not v.temp:
                raise KernelTypeError(
                    f"{v.name!r} may be used before it is assigned: not every path to here assigns it",
                    v.loc,
                    f"assign {v.name} before the branch or loop that sets it",
                )

    def meet(a: set[str] | None, b: set[str] | None) -> set[str] | None:
        if a is None:
            return b
        if b is None:
            return a
        return a & b

    def block(stmts: list[ir.Stmt], defined: set[str] | None) -> set[str] | None:
        for s in stmts:
            if defined is None:  # unreachable: after return/break/continue
                return None
            defined = stmt(s, defined)
        return defined

    def stmt(s: ir.Stmt, d: set[str]) -> set[str] | None:
        if isinstance(s, ir.Assign):
            check(s.value, d)
            return d | {s.target.name}
        if isinstance(s, ir.If):
            check(s.cond, d)
            return meet(block(s.then, set(d)), block(s.orelse, set(d)))
        if isinstance(s, ir.For):
            for e in (s.start, s.stop, s.step):
                check(e, d)
            breaks.append([])
            continues.append([])
            end = block(s.body, d | {s.var.name})
            exits = breaks.pop() + continues.pop()
            if not _runs_at_least_once(s):
                return d  # the body may run zero times
            out = end  # the first pass ran: what it assigns on every way out of it, as Python's flow
            for e in exits:
                out = meet(out, e)
            return out
        if isinstance(s, ir.While):
            check(s.cond, d)
            breaks.append([])
            continues.append([])
            block(s.body, set(d))
            continues.pop()
            exits = breaks.pop()
            if isinstance(s.cond, ir.Lit) and s.cond.value:  # while True: left only by break
                out: set[str] | None = None
                for b in exits:
                    out = meet(out, b)
                return out
            return d
        if isinstance(s, ir.MatrixOp):
            read, written = _fragment_uses(s)
            for f in read:
                if f"fragment {f.name}" not in d and not f.temp:
                    raise KernelTypeError(
                        f"fragment {f.name!r} may be read by {s.WHAT} before it is set: not every path to "
                        "here loads, fills or computes it (its registers would hold garbage)",
                        s.loc,
                        f"fill it first (gk.fill_fragment({f.name}, 0.0)) or load it (gk.load_matrix)",
                    )
            for child in ir.children(s):
                check(child, d)
            return d | {f"fragment {f.name}" for f in written}
        if isinstance(s, ir.Break):
            if breaks:
                breaks[-1].append(set(d))
            return None
        if isinstance(s, ir.Continue):
            if continues:
                continues[-1].append(set(d))
            return None
        if isinstance(s, ir.Return):
            if isinstance(s, ir.Return) and s.value is not None:
                check(s.value, d)
            return None
        for child in ir.children(s):
            check(child, d)
        return d

    block(fd.body, set(params))


def _runs_at_least_once(s: ir.For) -> bool:
    """Whether a loop's body surely runs: bounds and step known at compile time, the range not empty
    (``for i in range(4)``; Python then leaves ``i`` and whatever the body assigns defined)."""
    bounds = (s.start, s.stop, s.step)
    if not all(isinstance(e, ir.Lit) for e in bounds):
        return False
    start, stop, step = (e.value for e in bounds)  # type: ignore[union-attr]
    return len(range(int(start), int(stop), int(step))) > 0 if step else False


# ---------------------------------------------------------------- collective operations

_THREAD = frozenset({"thread_idx", "global_id", "lane_id"})  # what differs between a block's threads
_GRID = _THREAD | {"block_idx"}  # ... and between the grid's (a grid_sync's reach, a cluster_barrier's)
_BARRIER_NAMES = {"block": "barrier", "grid": "grid_sync", "cluster": "cluster_barrier"}


def contains_barrier(node: ir.Node) -> bool:
    """Whether a statement or expression holds a barrier, or calls a function that does."""
    return any(isinstance(n, ir.Barrier) or isinstance(n, ir.Call) and has_barrier(n.func) for n in ir.walk(node))


def has_barrier(fd: ir.FuncDef) -> bool:
    """Whether a function (or one it calls) contains a barrier."""
    return any(contains_barrier(s) for s in fd.body)


def _varies(n: ir.Node, indices: frozenset[str] = _THREAD) -> bool:
    """Whether a node's value may differ between threads whatever its operands: an index of those
    named in ``indices`` (none: only what data makes differ), a value read from memory
    (``Node.accesses``: other threads may have written it), a lane of a vector load, a warp op's result."""
    return (
        isinstance(n, ir.Special)
        and n.name in indices
        or isinstance(n, (ir.Lane, ir.WarpOp, ir.Elect))
        or (isinstance(n, ir.ClusterInfo) and n.what == "rank" and "block_idx" in indices)
        or any(a.read for a in n.accesses())
    )


def _bare(e: ir.Node) -> ir.Node:
    while isinstance(e, ir.Cast):
        e = e.value
    return e


def _is_thread_x(e: ir.Node, names: AbstractSet[str]) -> bool:
    e = _bare(e)
    return (isinstance(e, ir.Special) and e.name == "thread_idx" and e.dim == 0) or (
        isinstance(e, ir.Var) and e.name in names
    )


def _thread_x_names(fd: ir.FuncDef) -> frozenset[str]:
    """The locals every assignment of which is ``thread_idx.x`` (``t = thread_idx.x``)."""
    values: dict[str, list[ir.Expr]] = {}
    for n in ir.walk_body(fd.body):
        if isinstance(n, ir.Assign):
            values.setdefault(n.target.name, []).append(n.value)
        elif isinstance(n, ir.For):
            values.setdefault(n.var.name, []).append(n.var)  # (a loop variable: never thread_idx.x)
    return frozenset(name for name, vs in values.items() if all(_is_thread_x(v, frozenset()) for v in vs))


def _group_number(n: ir.Node, granule: int, thread_x: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``n`` is ``thread_idx.x // k`` with k a multiple of ``granule`` (casts around either;
    ``thread_x``: locals that hold ``thread_idx.x``)."""
    if not (isinstance(n, ir.BinOp) and n.op == "//"):
        return False
    right = _bare(n.right)
    return (
        _is_thread_x(n.left, thread_x)
        and isinstance(right, ir.Lit)
        and isinstance(right.value, int)
        and right.value > 0
        and right.value % granule == 0
    )


def _cluster_number(n: ir.Node, dims: tuple[int, int, int]) -> bool:
    """Whether ``n`` is the same in every block of a cluster of shape ``dims``: ``block_idx.d // k``
    with k a multiple of the cluster's size along d (casts around either), or ``block_idx.d`` where
    the cluster is one block along d."""
    if isinstance(n, ir.Special) and n.name == "block_idx":
        return dims[n.dim] == 1
    if not (isinstance(n, ir.BinOp) and n.op == "//"):
        return False
    left, right = _bare(n.left), _bare(n.right)
    return (
        isinstance(left, ir.Special)
        and left.name == "block_idx"
        and isinstance(right, ir.Lit)
        and isinstance(right.value, int)
        and right.value > 0
        and right.value % dims[left.dim] == 0
    )


def _outside(e: ir.Node, same: Callable[[ir.Node], bool]) -> Iterator[ir.Node]:
    """``e``'s nodes (``ir.walk``'s order), leaving out those ``same`` finds the same in every thread
    that is asked about (a group's number, a cluster's) and what lies under them."""
    stack = [e]
    while stack:
        n = stack.pop()
        if same(n):
            continue
        yield n
        if n.CHILDREN:
            sub = list(ir.children(n))
            sub.reverse()
            stack.extend(sub)


def _reads_thread_state(fd: ir.FuncDef, indices: frozenset[str] = _THREAD) -> bool:
    """Whether a function's result may differ between threads for the same arguments."""
    for n in ir.walk_body(fd.body):
        if _varies(n, indices):
            return True
        if isinstance(n, ir.Call) and _reads_thread_state(n.func, indices):
            return True
    return False


class _Uniformity:
    """Which values may differ between the threads of a block ('varying'), or of the grid (with
    ``indices=_GRID``)."""

    def __init__(
        self,
        fd: ir.FuncDef,
        varying_params: frozenset[str] = frozenset(),
        indices: frozenset[str] = _THREAD,
        by_data: _Uniformity | None = None,
        granule: int = 0,
        cluster: tuple[int, int, int] | None = None,
    ):
        self.indices = indices  # none: only values that data makes differ (memory, warp ops) count
        # where not 0: ``thread_idx.x // k`` (k a multiple of it) counts as the same in every thread of a
        # group of ``granule`` consecutive threads (a warp's 32, a warpgroup's 128), as a branch on the
        # warp or warpgroup number is (warp specialization); the simulator checks the groups whole
        self.granule = granule
        self.thread_x = _thread_x_names(fd) if granule else frozenset()  # locals that are thread_idx.x
        # given (with ``indices=_GRID``): the threads asked about are a cluster's of this shape, in whose
        # blocks ``block_idx.x // k`` (k a multiple of the cluster's width) is the same (``_cluster_number``)
        self.cluster = cluster
        # given (the same function's by data alone): an if on the thread's index against values known
        # at launch is taken to be taken by every thread of the block (``_launch_bound``)
        self.by_data = by_data
        self.varying: set[str] = set(varying_params)  # the names varying somewhere (flow-insensitive)
        self.varying_loops: set[int] = set()
        while True:  # to a fixpoint: loops carry values around
            before = (set(self.varying), set(self.varying_loops))
            self.block(fd.body, False)
            if (self.varying, self.varying_loops) == before:
                break
        # flow-sensitive: the names varying just before each statement (a loop's: at its head), so
        # that a name reassigned a uniform value is uniform again (``stride`` reused under ``if t ==
        # 0:`` after a reduction's loop), and why each became varying (the assignment)
        self.before: dict[int, frozenset[str]] = {}
        self.made_varying: dict[str, ir.Assign] = {}
        self._exits: list[tuple[list[frozenset[str]], list[frozenset[str]]]] = []  # per loop: breaks, continues
        self.flow(fd.body, frozenset(varying_params), False)

    def expr(self, e: ir.Node, at: ir.Stmt | None = None) -> bool:
        """Whether ``e`` may differ between threads (``at``: the statement it is part of, whose
        state is known; None: anywhere in the function)."""
        names = self.before.get(id(at), self.varying) if at is not None else self.varying
        return self._depends(e, names)

    def _same(self, n: ir.Node) -> bool:
        """Whether node ``n`` is the same in every thread asked about whatever its operands."""
        return bool(self.granule and _group_number(n, self.granule, self.thread_x)) or bool(
            self.cluster and _cluster_number(n, self.cluster)
        )

    def _depends(self, e: ir.Node, names: AbstractSet[str]) -> bool:
        for n in ir.walk(e) if not (self.granule or self.cluster) else _outside(e, self._same):
            if _varies(n, self.indices):
                return True
            if isinstance(n, ir.Var) and n.name in names:
                return True
            if isinstance(n, ir.Call) and _reads_thread_state(n.func, self.indices):
                return True
        return False

    def varying_at(self, at: ir.Stmt) -> AbstractSet[str]:
        return self.before.get(id(at), self.varying)

    # ------------------------------------------------------------ flow-sensitive
    def flow(self, stmts: list[ir.Stmt], state: frozenset[str], ctx: bool) -> frozenset[str]:
        for st in stmts:
            if not isinstance(st, (ir.For, ir.While)):
                self.before[id(st)] = state
            state = self.step(st, state, ctx)
        return state

    def step(self, st: ir.Stmt, state: frozenset[str], ctx: bool) -> frozenset[str]:
        if isinstance(st, ir.Assign):
            name = st.target.name
            if ctx or self._depends(st.value, state):
                self.made_varying.setdefault(name, st)
                return state | {name}
            return state - {name}
        if isinstance(st, ir.Barrier) and st.result is not None:  # a block-wide vote: one answer for all
            return state - {st.result.name}
        if isinstance(st, ir.If):
            inner = ctx or self._branches(st.cond, state)
            return self.flow(st.then, state, inner) | self.flow(st.orelse, state, inner)
        if isinstance(st, (ir.For, ir.While)):
            head = state
            while True:  # to a fixpoint: the values the body carries around to the next iteration
                self._exits.append(([], []))
                if isinstance(st, ir.For):
                    inner = ctx or id(st) in self.varying_loops
                    inner = inner or any(self._depends(e, head) for e in (st.start, st.stop, st.step))
                    entry = head | {st.var.name} if inner else head - {st.var.name}
                else:
                    inner = ctx or id(st) in self.varying_loops or self._depends(st.cond, head)
                    entry = head
                self.before[id(st)] = head
                out = self.flow(st.body, entry, inner)
                breaks, continues = self._exits.pop()
                new = head | out | frozenset().union(*continues)
                if isinstance(st, ir.For) and not inner:
                    new = new - {st.var.name} if st.var.name not in state else new
                if new == head:
                    return head | frozenset().union(*breaks)
                head = new
        if isinstance(st, (ir.Break, ir.Continue)) and self._exits:
            self._exits[-1][0 if isinstance(st, ir.Break) else 1].append(state)
        return state

    def block(self, stmts: list[ir.Stmt], ctx: bool) -> None:
        for s in stmts:
            self.stmt(s, ctx)

    def stmt(self, s: ir.Stmt, ctx: bool) -> None:
        if isinstance(s, ir.Assign):
            if ctx or self.expr(s.value):
                self.varying.add(s.target.name)
        elif isinstance(s, ir.If):
            inner = ctx or self.branches(s.cond)
            self.block(s.then, inner)
            self.block(s.orelse, inner)
        elif isinstance(s, (ir.For, ir.While)):
            if isinstance(s, ir.For):
                inner = ctx or any(self.expr(e) for e in (s.start, s.stop, s.step))
                if inner:
                    self.varying.add(s.var.name)
            else:
                inner = ctx or self.expr(s.cond)
            if id(s) in self.varying_loops:
                inner = True
            if not inner and self.exits_early(s.body):
                self.varying_loops.add(id(s))
                inner = True
                if isinstance(s, ir.For):
                    self.varying.add(s.var.name)
            self.block(s.body, inner)

    def branches(self, cond: ir.Expr) -> bool:
        """Whether threads may go different ways at an if on ``cond`` (flow-insensitively)."""
        return self._branches(cond, self.varying)

    def _branches(self, cond: ir.Expr, names: AbstractSet[str]) -> bool:
        if not self._depends(cond, names):
            return False
        return not (self.by_data is not None and _launch_bound(cond, names, self.by_data))

    def divergent(self, s: ir.Stmt) -> bool:
        """Whether the threads that reach an if or a loop may go different ways through it: its
        condition or bounds depend on the thread there, or it is a loop that some threads leave early."""
        names = self.varying_at(s)
        if isinstance(s, ir.If):
            return self._branches(s.cond, names)
        if isinstance(s, ir.For):
            return id(s) in self.varying_loops or any(self._depends(e, names) for e in (s.start, s.stop, s.step))
        if isinstance(s, ir.While):
            return id(s) in self.varying_loops or self._depends(s.cond, names)
        return False

    def exits_early(self, body: list[ir.Stmt]) -> bool:
        """A break or continue (of this loop) under thread-dependent control."""

        def scan(stmts: list[ir.Stmt], ctx: bool) -> bool:
            for s in stmts:
                if isinstance(s, (ir.Break, ir.Continue)) and ctx:
                    return True
                if isinstance(s, ir.If) and scan(s.then + s.orelse, ctx or self.expr(s.cond)):
                    return True
            return False

        return scan(body, False)


class _Site(NamedTuple):
    """A statement or expression node, and why not every thread that runs the function may reach it."""

    stmt: ir.Stmt  # the node itself, or the statement the expression is part of
    node: ir.Node
    reasons: tuple[ir.Node, ...]  # none: every thread that runs the function reaches it


def _collective_sites(fd: ir.FuncDef, u: _Uniformity) -> Iterator[_Site]:
    """Every node of ``fd``'s body, in program order (a statement, its expressions, the statements
    it holds), with the reasons that not every thread of the block may reach it (none: every
    thread that runs the function does), in the order errors prefer them:

    - the outermost if or loop around it that threads may go through different ways;
    - a return under such control that some threads took before it;
    - a thread-dependent ``a if c else b`` or and/or it is an operand of (evaluated in some threads);
    - the thread-dependent while whose condition it is in (evaluated again by the threads still
      looping);
    - a return under such control later in a loop around it (taken in an earlier iteration).

    The one account that the checks of barriers, fragment operations and warp ops share, so
    that what one refuses the others refuse too.  Barriers pass over the returns:
    ``passes.structure_early_returns`` keeps the threads that took one arriving at them."""
    walk = list(_statements(fd.body, None, (), u))
    returns: dict[int, ir.Return] = {}  # a loop's first return that only some threads take
    for s, why, loops in walk:
        if isinstance(s, ir.Return) and why is not None:
            for loop in loops:
                returns.setdefault(id(loop), s)
    left: ir.Return | None = None
    for s, why, loops in walk:
        if isinstance(s, ir.Return) and why is not None and left is None:
            left = s
        before = _present(why, left)
        again = _present(*(returns.get(id(loop)) for loop in reversed(loops)))
        yield _Site(s, s, before + again)
        for e in ir.children(s):
            if isinstance(e, ir.Stmt):
                continue
            after = again
            if isinstance(s, ir.While):  # the condition: evaluated again after each iteration
                after = _present(s if u.divergent(s) else None, returns.get(id(s))) + again
            stack: list[tuple[ir.Node, tuple[ir.Node, ...]]] = [(e, ())]
            while stack:  # the expression's nodes, parents first, in order
                n, inside = stack.pop()
                yield _Site(s, n, before + inside + after)
                some = _conditional_operands(n, u, s)
                for c in reversed(list(ir.children(n))):
                    stack.append((c, (*inside, n) if any(c is o for o in some) else inside))


def _statements(
    stmts: list[ir.Stmt], why: ir.Node | None, loops: tuple[ir.Stmt, ...], u: _Uniformity
) -> Iterator[tuple[ir.Stmt, ir.Node | None, tuple[ir.Stmt, ...]]]:
    """Every statement in ``stmts`` and nested in them, with the outermost if or loop around it
    that threads may go through different ways (``why``), and the loops around it."""
    for s in stmts:
        yield s, why, loops
        inner = why or (s if u.divergent(s) else None)
        around = (*loops, s) if isinstance(s, (ir.For, ir.While)) else loops
        for body in ir.child_blocks(s):
            yield from _statements(body, inner, around, u)


def _conditional_operands(e: ir.Node, u: _Uniformity, at: ir.Stmt) -> list[ir.Node]:
    """The operands of an expression that only some threads evaluate: those of ``a if c else b``
    and the right side of and/or, whose condition depends on the thread (at statement ``at``)."""
    if isinstance(e, ir.Select) and u.expr(e.cond, at):
        return [e.a, e.b]
    if isinstance(e, ir.Logic) and u.expr(e.left, at):
        return [e.right]
    return []


def _present(*nodes: ir.Node | None) -> tuple[ir.Node, ...]:
    """The nodes that are there."""
    return tuple(n for n in nodes if n is not None)


_KINDS = {
    ir.If: "an if",
    ir.For: "a for loop",
    ir.While: "a while loop",
    ir.Select: "a conditional expression",
    ir.Logic: "an and/or",
}


def describe_divergence(why: ir.Node) -> str:
    """Where an operation is that not every thread reaches, as errors say it: ``why`` is a reason
    ``_collective_sites`` gives."""
    line = why.loc.lineno if why.loc else "?"
    if isinstance(why, ir.Return):
        return f"after a return (line {line}) that only some threads take"
    return f"inside {_KINDS[type(why)]} (line {line}) whose condition depends on the thread"


def check_barriers(fd: ir.FuncDef, varying_params: frozenset[str] = frozenset()) -> None:
    """Reject a barrier (or a call of a function with one) that not every thread of the block
    reaches: some threads would wait at it forever, or pass different barriers; and a
    ``grid_sync()`` that not every thread of the grid reaches (a condition on ``block_idx`` too).

    A ``@func`` is checked on its own with its parameters taken as the same in every thread,
    and again at each call that passes a thread-dependent value (``varying_params``).  A kernel's
    barriers pass over its returns (``passes.structure_early_returns`` keeps the threads that took
    one arriving at them, and out of the rest); a ``@func``'s are not restructured so, and a call
    of a function with a barrier is not either: after a return only some threads take, those
    divide the threads as a branch does."""
    if not has_barrier(fd):
        return
    scopes = {n.scope for n in ir.walk_body(fd.body) if isinstance(n, ir.Barrier)}
    # (the block's threads for every barrier; the grid's blocks for a grid_sync; a cluster's blocks,
    # in which a cluster's number is the same, for a cluster_barrier)
    passes = [("block", _THREAD, None)]
    passes += [(sc, _GRID, fd.cluster if sc == "cluster" else None) for sc in sorted(scopes - {"block"})]
    for scope, indices, cluster in passes:
        u = _Uniformity(fd, varying_params, indices, cluster=cluster)
        assumed: dict[int, tuple[ir.Node, ...]] | None = None  # the reasons left if launch-bound ifs are taken by all
        for site in _collective_sites(fd, u):
            n = site.node
            why = next((r for r in site.reasons if not (fd.is_kernel and isinstance(r, ir.Return))), None)
            if isinstance(n, ir.Barrier) and why is not None and (indices is _THREAD or n.scope == scope):
                name = _BARRIER_NAMES[n.scope]
                what = f"this {name}() is"
                if assumed is None:
                    data = _Uniformity(fd, varying_params, frozenset())
                    at_launch = _Uniformity(fd, varying_params, indices, by_data=data, cluster=cluster)
                    assumed = {id(t.node): t.reasons for t in _collective_sites(fd, at_launch)}
                left = [r for r in assumed[id(n)] if not (fd.is_kernel and isinstance(r, ir.Return))]
                if not left:
                    whose = f"of the {n.scope}"
                    warn_at(
                        f"{what} {describe_divergence(why)} only through its index and values known "
                        f"at launch: accepted, since at a launch every thread {whose} may take that branch. "
                        f"The simulator checks at run time that all do; on CUDA and OpenCL a "
                        f"{n.scope} whose threads do not all take it would "
                        "hang or misbehave",
                        n.loc,
                        f"move the {name} out of the branch to be "
                        "safe at every launch",
                    )
                    continue
                raise _divergence(n, why, what, u)
            if isinstance(n, ir.Call) and has_barrier(n.func) and indices is _THREAD:
                # a call passes over no return: the restructuring keeps the threads that returned out
                # of a statement's effects only where it holds no barrier, so they would run the callee
                called = next(iter(site.reasons), None)
                if called is not None:
                    raise _divergence(n, called, f"{n.func.name}() contains a barrier and is called")
                _check_call(n, u)


def _launch_bound(cond: ir.Expr, varying: AbstractSet[str], by_data: _Uniformity) -> bool:
    """Whether an if's condition depends on the thread only through its index compared with values
    known at launch (a parameter, a shape, ``block_dim``): ``if tid < n:`` around a whole reduction,
    which every thread of a block takes at the launches it is written for.  A condition on data
    (memory, a warp op) or on the index against constants alone (``tid < 16``) is not."""
    if by_data.expr(cond):  # (by data anywhere in the function: conservative)
        return False
    return any(
        isinstance(n, ir.Shape)
        or (isinstance(n, ir.Var) and n.name not in varying)
        or (isinstance(n, ir.Special) and n.name in ("block_dim", "grid_dim"))
        for n in ir.walk(cond)
    )


def check_matrix_ops(fd: ir.FuncDef) -> None:
    """Reject a fragment operation (warp-collective: every lane of the warp executes it with the
    same operands) that not every thread may reach: under control flow whose condition depends on
    the thread, or after a ``return`` that only some threads take.  Conservative as the barrier
    check is: a branch the same in the whole warp but not the whole block (``if thread_idx.x //
    32 == 0``) is refused too."""
    if not has_matrix_op(fd):
        return
    # a branch on the warp's number (thread_idx.x // 32k) keeps warps whole, on the warpgroup's
    # (// 128k) warpgroups: warp specialization; the simulator checks at run time that they are whole
    warps, groups = _Uniformity(fd, granule=32), _Uniformity(fd, granule=wgmma_ops.THREADS)
    for u, level, number in ((warps, "warp", "32"), (groups, "warpgroup", "128")):
        for site in _collective_sites(fd, u):
            what = _matrix_op_of(site.node)
            if what is None or not site.reasons or _matrix_level(site.node) != level:
                continue
            raise KernelTypeError(
                f"{what} {describe_divergence(site.reasons[0])}: fragment operations are {level}-collective, every "
                f"lane of the {level} must execute them together",
                site.stmt.loc,
                "keep fragment operations out of thread-dependent branches: guard the loads that stage "
                f"the tiles instead (zero-padding), and the copies of the results; a branch on the {level}'s "
                f"number (thread_idx.x // {number}) is allowed",
            )


def _matrix_level(n: ir.Node) -> str:
    """Whose operation a matrix node is: a warpgroup's (wgmma, its commit and wait, a warpgroup
    accumulator's fill and store, a call of a function with one) or a warp's."""
    if isinstance(n, ir.WarpgroupOp):
        return "warpgroup"
    if isinstance(n, ir.MatrixOp):
        t = n.fragment.type if hasattr(n, "fragment") else None
        return "warpgroup" if t is not None and wgmma_ops.is_warpgroup(t) else "warp"
    if isinstance(n, ir.Call):
        nodes = ir.walk_body(n.func.body)
        return "warpgroup" if any(_matrix_level(m) == "warpgroup" for m in nodes if _matrix_op_of(m)) else "warp"
    return "warp"


def has_matrix_op(fd: ir.FuncDef) -> bool:
    """Whether a function (or one it calls) has a fragment operation."""
    return any(_matrix_op_of(n) is not None for n in ir.walk_body(fd.body))


def _matrix_op_of(n: ir.Node) -> str | None:
    """The fragment operation a node performs, as messages name it: a statement's own, or a call's
    of a function that has one (None: none; a declaration performs none)."""
    if isinstance(n, ir.MatrixOp):
        return None if isinstance(n, ir.DeclFragment) else n.WHAT
    if isinstance(n, ir.Call) and has_matrix_op(n.func):
        return f"{n.func.name}() (which has fragment operations)"
    return None


def warp_divergence(fd: ir.FuncDef) -> tuple[ir.WarpOp, ir.Node] | None:
    """The first warp op that not every thread of the block may reach, and why (a reason of
    ``_collective_sites``).  For a dialect that emulates warp ops with work-group barriers."""
    for site in _collective_sites(fd, _Uniformity(fd)):
        if isinstance(site.node, ir.WarpOp) and site.reasons:
            return site.node, site.reasons[0]
    return None


def mark_uniform_addresses(program: ir.Program) -> None:
    """Set ``Atomic.uniform_address`` where the code makes the index the same in every thread
    (ptxas makes such a warp's integer atomics one; the profiler counts them so).  An atomic in
    a ``@func`` is uniform when it is at every call."""
    if not any(isinstance(n, ir.Atomic) for fd in [program.kernel, *program.funcs] for n in ir.walk_body(fd.body)):
        return
    uniform: dict[int, tuple[ir.Atomic, bool]] = {}
    done: set[tuple[int, frozenset[str]]] = set()
    pending = [(program.kernel, frozenset[str]())]
    while pending:
        fd, varying = pending.pop()
        if (id(fd), varying) in done:
            continue
        done.add((id(fd), varying))
        u = _Uniformity(fd, varying)
        for n in ir.walk_body(fd.body):
            if isinstance(n, ir.Atomic):
                same = not any(u.expr(i) for i in n.indices)
                uniform[id(n)] = (n, same and uniform.get(id(n), (n, True))[1])
            elif isinstance(n, ir.Call):
                passed = frozenset(
                    p.name
                    for p, a in zip(n.func.params, n.args)
                    if isinstance(p, ir.Var) and isinstance(a, ir.Expr) and u.expr(a)
                )
                pending.append((n.func, passed))
    for atomic, same in uniform.values():
        atomic.uniform_address = same


def _check_call(c: ir.Call, u: _Uniformity) -> None:
    """A call of a function with a barrier, passing thread-dependent values to some parameters."""
    varying = frozenset(
        p.name for p, a in zip(c.func.params, c.args) if isinstance(p, ir.Var) and isinstance(a, ir.Expr) and u.expr(a)
    )
    if not varying:
        return
    try:
        check_barriers(c.func, varying)
    except BarrierDivergenceError as e:
        names = ", ".join(sorted(varying))
        raise BarrierDivergenceError(
            f"{c.func.name}() is called with thread-dependent values for {names}, and then {e.message}",
            c.loc,
            "pass values that are the same in every thread of the block, or move the barrier out of the function",
        ) from None


def _divergence(at: ir.Node, why: ir.Node, what: str, u: _Uniformity | None = None) -> BarrierDivergenceError:
    return BarrierDivergenceError(
        f"{what} {describe_divergence(why)} "
        "(thread_idx, global_id, a value loaded from memory, or something computed from them)"
        f"{_through(why, u)}, so some threads of a block would not reach it",
        at.loc,
        "move the barrier out of the branch or loop so that every thread of the block reaches it",
    )


def _through(why: ir.Node, u: _Uniformity | None) -> str:
    """Which names in ``why``'s condition are thread-dependent there, and the assignment that made
    each so: where the error's reader must look when the condition itself looks uniform."""
    if u is None or not isinstance(why, (ir.If, ir.While, ir.For)):
        return ""
    parts = [why.cond] if isinstance(why, (ir.If, ir.While)) else [why.start, why.stop, why.step]
    here = u.varying_at(why)
    said = []
    for n in (n for e in parts for n in ir.walk(e)):
        made = u.made_varying.get(n.name) if isinstance(n, ir.Var) and n.name in here else None
        if made is not None and made.loc is not None and n.name not in [s[0] for s in said]:
            said.append((n.name, made.loc.lineno))
    if not said:
        return ""
    return ": through " + ", ".join(f"{name!r} (set at line {line})" for name, line in said)


def check_barrier_objects(fd: ir.FuncDef) -> None:
    """An mbarrier (an element of a shared array of ``gk.mbarrier``) is used only through the
    mbarrier functions and the copies that complete on it: its 64 bits are the hardware's."""
    for n in ir.walk_body(fd.body):
        if isinstance(n, (ir.Load, ir.Store)) and isinstance(n.array.type.elem, BarrierType):
            raise KernelTypeError(
                f"{n.array.name!r} holds mbarriers, which are not read or written as numbers",
                n.loc,
                "use mbarrier_init/arrive/wait(bars[i], ...) on them",
            )
        if isinstance(n, ir.ArrayRef) and isinstance(n.type.elem, BarrierType) and n.type.space != "shared":
            raise KernelTypeError(f"mbarriers live in shared memory; {n.name!r} is a {n.type.space} array", n.loc)
