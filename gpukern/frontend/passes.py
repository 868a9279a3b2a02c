"""Passes over a lowered function's IR: early returns around barriers, where locals are declared,
which arrays are written; and over a whole program: a @func's shared arrays declared in the kernel."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ..ir import nodes as ir
from ..semantics.warp import BLOCK_VOTES
from ..types import bool_, int64
from .checks import contains_barrier as barrier_in
from .checks import has_barrier


def _var_refs(node: ir.Node) -> Counter[str]:
    return Counter(n.name for n in ir.walk(node) if isinstance(n, ir.Var))


def _hide_loop_counters(fd: ir.FuncDef) -> None:
    """A loop variable used outside its loops, or assigned in its body, iterates
    through a hidden counter: Python's loop variable keeps the last value it was
    given, where C's would overshoot, and assigning it must not change the iteration."""
    outside: set[str] = set()

    def scan(stmts: list[ir.Stmt], loop_vars: tuple[str, ...]) -> None:
        for s in stmts:
            if isinstance(s, ir.For):
                for e in (s.start, s.stop, s.step):
                    scan_expr(e, loop_vars)
                scan(s.body, loop_vars + (s.var.name,))
            elif isinstance(s, ir.Assign):
                if s.target.name in loop_vars:
                    outside.add(s.target.name)  # assigned in its own loop
                scan_expr(s, loop_vars)
            else:
                for child in ir.children(s):
                    if isinstance(child, ir.Stmt):
                        scan([child], loop_vars)
                    else:
                        scan_expr(child, loop_vars)

    def scan_expr(e: ir.Node, loop_vars: tuple[str, ...]) -> None:
        outside.update(n.name for n in ir.walk(e) if isinstance(n, ir.Var) and n.name not in loop_vars)

    scan(fd.body, ())
    taken: set[str] = set()  # the function's names, found when a counter first needs a fresh one
    for s in ir.walk_body(fd.body):
        if not isinstance(s, ir.For):
            continue
        unit_step = isinstance(s.step, ir.Lit) and s.step.value in (1, -1)
        if not unit_step and s.var.type.itemsize < 8:
            # Python's range never overflows, but i += step can pass the type's limit near
            # it: count in 64 bits (a unit step stops at ``stop`` and cannot overflow).
            user, wide = s.var, int64
            taken = taken or ir.names_in(fd)
            s.var = ir.Var(ir.fresh_name(f"{user.name}_it", taken), wide, loc=user.loc, temp=True)
            s.start, s.stop, s.step = (ir.Cast(e, wide, loc=e.loc) for e in (s.start, s.stop, s.step))
            # declared here unless the name is also used outside its loops (then at the top)
            declare = user.name not in outside
            s.body.insert(0, ir.Assign(user, ir.Cast(s.var, user.type, loc=s.loc), declare, loc=s.loc))
        elif s.var.name in outside:
            user = s.var
            taken = taken or ir.names_in(fd)
            s.var = ir.Var(ir.fresh_name(f"{user.name}_it", taken), user.type, loc=user.loc, temp=True)
            s.body.insert(0, ir.Assign(user, s.var, loc=s.loc))


def finish_declarations(fd: ir.FuncDef, param_names: set[str]) -> None:
    """Decide where each local is declared, so the C reads like hand-written code.

    A variable is declared where it is first assigned, in the innermost block that
    holds every use of it, when that assignment comes before any use in the block
    (then each pass through the block assigns it before reading it).  Loop
    variables are declared in their ``for`` header.  The rest are declared at the
    top of the function.
    """
    _hide_loop_counters(fd)
    memo: dict[int, Counter[str]] = {}

    def refs_of(s: ir.Stmt) -> Counter[str]:
        """Variable references in a statement and everything under it (computed once per statement)."""
        c = memo.get(id(s))
        if c is None:
            c = Counter()
            for child in ir.children(s):
                c.update(refs_of(child) if isinstance(child, ir.Stmt) else _var_refs(child))
            memo[id(s)] = c
        return c

    total: Counter[str] = Counter()
    for s in fd.body:
        total.update(refs_of(s))
    for_vars = {s.var.name for s in ir.walk_body(fd.body) if isinstance(s, ir.For)}
    top: dict[str, ir.Var] = {}

    def place(name: str, block: list[ir.Stmt]) -> bool:
        for s in block:
            refs = refs_of(s)
            if not refs[name]:
                continue
            if isinstance(s, ir.Assign) and s.target.name == name and not _var_refs(s.value)[name]:
                s.declare = True
                return True
            if refs[name] != total[name]:
                return False
            header = [e for e in ir.children(s) if not isinstance(e, ir.Stmt)]
            if any(_var_refs(e)[name] for e in header):
                return False
            for child in ir.child_blocks(s):
                inside = sum(refs_of(c)[name] for c in child)
                if inside == total[name]:
                    return place(name, child)
            return False
        return False

    for n in ir.walk_body(fd.body):
        if isinstance(n, ir.Var) and n.name not in param_names and n.name not in for_vars and n.name not in top:
            top[n.name] = n
    fd.locals = [v for name, v in top.items() if not place(name, fd.body)]


def written_params(fd: ir.FuncDef) -> set[str]:
    """Names of the arrays the function (or a callee) writes (``ir.MemoryAccess.write``: stores, atomics,
    asynchronous copies' destinations, fragment stores)."""
    out: set[str] = set()
    for n in ir.walk_body(fd.body):
        out.update(a.array.name for a in n.accesses() if a.write)
        if isinstance(n, ir.Call):
            for param, arg in zip(n.func.params, n.args):
                if isinstance(arg, ir.ArrayRef) and param.name in n.func.written:
                    out.add(arg.name)
    return out


_WRAPPING = {"+", "-", "*", "//", "**", "<<"}  # 32-bit results of these can wrap around


def mark_index_arithmetic(fd: ir.FuncDef) -> None:
    """Set ``feeds_index`` on the 32-bit integer arithmetic whose value reaches an array index,
    through variables (every assignment of a variable used in an index, a loop's bounds for its
    variable), casts, conditional expressions and math functions.  The simulator checks those for
    wrap-around (``IndexOverflowError``); ``%``, ``&``, ``|``, ``^`` and ``>>`` stop the search, so
    a hash that wraps on purpose and is reduced before it indexes is left alone.  Within one
    function: a value passed to a ``@func`` is checked where the callee indexes with it only if the
    callee computes it."""
    sources: dict[str, list[ir.Expr]] = {}
    todo: list[ir.Expr] = []
    for n in ir.walk_body(fd.body):
        for a in n.accesses():
            todo.extend(a.indices)
        if isinstance(n, ir.Assign):
            sources.setdefault(n.target.name, []).append(n.value)
        elif isinstance(n, ir.For):
            sources.setdefault(n.var.name, []).extend((n.start, n.stop, n.step))
    seen: set[str] = set()
    while todo:
        e = todo.pop()
        if isinstance(e, (ir.BinOp, ir.Unary)):
            if isinstance(e, ir.BinOp) and e.op not in _WRAPPING:
                continue
            if e.op in _WRAPPING or e.op == "-":
                e.feeds_index = e.type.is_int and e.type.itemsize == 4
            todo.extend(ir.children(e))
        elif isinstance(e, (ir.Cast, ir.MathCall)):
            todo.extend(ir.children(e))
        elif isinstance(e, ir.Select):
            todo.extend((e.a, e.b))
        elif isinstance(e, ir.Var) and e.name not in seen:
            seen.add(e.name)
            todo.extend(sources.get(e.name, ()))


_NONNEG_OPS = {"+", "*", "//", "%", ">>", "|"}


def is_nonnegative(e: ir.Node, nonneg: set[str]) -> bool:
    """Whether an integer expression can never be negative (given the variables in ``nonneg``)."""
    if isinstance(e, ir.Lit):
        return e.type.is_int and e.value >= 0
    if isinstance(e, ir.Var):
        return e.name in nonneg or e.type.kind in "ub"
    if isinstance(e, (ir.Special, ir.Shape)):
        return True
    if isinstance(e, ir.BinOp):
        return (
            e.type.is_int and e.op in _NONNEG_OPS and is_nonnegative(e.left, nonneg) and is_nonnegative(e.right, nonneg)
        )
    if isinstance(e, ir.Cast):  # and every never-negative value of the source stays so in the target
        src, dst = e.value.type, e.type
        keeps = dst.kind in "ub" or dst.itemsize > src.itemsize or (src.kind == "i" and dst.itemsize >= src.itemsize)
        return dst.is_int and src.is_int and keeps and is_nonnegative(e.value, nonneg)
    if isinstance(e, ir.Select):
        return is_nonnegative(e.a, nonneg) and is_nonnegative(e.b, nonneg)
    return False


def nonnegative_vars(fd: ir.FuncDef) -> set[str]:
    """Integer variables that are never negative: every value assigned to them is a sum, product,
    quotient... of thread indices, sizes, non-negative constants and such variables.  The
    emitters then spell Python's ``//`` and ``%`` by a positive constant as C's ``/`` and ``%``
    (they agree there), as a hand-writer would, instead of calling a floor-division helper."""
    sources: dict[str, list[ir.Expr]] = {}
    for n in ir.walk_body(fd.body):
        if isinstance(n, ir.Assign) and n.target.type.is_int:
            sources.setdefault(n.target.name, []).append(n.value)
        elif isinstance(n, ir.For) and n.var.type.is_int:
            step_ok = n.step_sign > 0
            sources.setdefault(n.var.name, []).append(n.start if step_ok else ir.Lit(-1, n.var.type))
    nonneg = set(sources)  # optimistic start; drop variables until every source agrees
    changed = True
    while changed:
        changed = False
        for name in list(nonneg):
            if not all(is_nonnegative(v, nonneg) for v in sources[name]):
                nonneg.discard(name)
                changed = True
    return nonneg


def wrap_indices(fd: ir.FuncDef) -> None:
    """Each ``WrapIndex`` (an index that counts from the end when negative) becomes its index where
    that can never be negative (a thread index, a loop from 0...: ``nonnegative_vars``), else
    ``index + extent if index < 0 else index``."""
    found = [n for n in ir.walk_body(fd.body) if any(isinstance(c, ir.WrapIndex) for c in ir.children(n))]
    if not found:
        return
    nonneg = nonnegative_vars(fd)

    def resolve(w: Any) -> Any:
        if not isinstance(w, ir.WrapIndex):
            return w
        i = w.index
        if is_nonnegative(i, nonneg):
            return i
        ext = w.extent if w.extent.type == i.type else ir.Cast(w.extent, i.type, loc=w.loc)
        below = ir.Compare("<", i, ir.Lit(0, i.type), bool_, loc=w.loc)
        return ir.Select(below, ir.BinOp("+", i, ext, i.type, loc=w.loc), i, i.type, loc=w.loc)

    for n in found:  # (the children a node names: ir.children's)
        for name in n.CHILDREN:
            v = getattr(n, name)
            if isinstance(v, list):
                v[:] = [resolve(x) for x in v]
            else:
                setattr(n, name, resolve(v))


def structure_early_returns(fd: ir.FuncDef, for_warps: bool = False) -> None:
    """Threads that return early from a kernel with barriers stop running, but still arrive
    at the barriers the others reach, so no barrier waits for a thread that left (the
    language's promise; OpenCL leaves a barrier after an early return undefined).

    Each ``return`` becomes ``returned = True`` (and ``break`` out of barrier-free loops);
    what follows it runs under ``if not returned``, except barriers and the loops and ifs that
    hold them, which every thread still reaches (the static check made their conditions
    uniform).  ``for_warps``: also for warp ops that a dialect emulates with block barriers
    (``frontend.predication``, which then predicates what the guard holds): a loop holding one
    keeps going for the threads that returned, the statement holding one runs under the guard."""
    if not fd.is_kernel or not any(isinstance(n, ir.Return) for n in ir.walk_body(fd.body)):
        return
    warps = for_warps and any(isinstance(n, ir.WarpOp) for n in ir.walk_body(fd.body))
    if not has_barrier(fd) and not warps:
        return

    def contains_barrier(n: ir.Node) -> bool:  # what every thread must still reach
        if warps and isinstance(n, (ir.For, ir.While)) and any(isinstance(x, ir.WarpOp) for x in ir.walk(n)):
            return True
        return barrier_in(n)
    flag = ir.Var(ir.fresh_name("returned", ir.names_in(fd)), bool_, temp=True)

    def returned() -> ir.Var:
        return ir.Var(flag.name, bool_, temp=True)

    def block(stmts: list[ir.Stmt], active: bool, breakable: bool) -> tuple[list[ir.Stmt], bool]:
        """``active``: a return may already have happened here; ``breakable``: inside a barrier-free loop."""
        out: list[ir.Stmt] = []
        run: list[ir.Stmt] = []  # statements to run only in threads that have not returned
        sets_any = False

        def flush() -> None:
            if run:
                out.append(ir.If(ir.Unary("not", returned(), bool_), list(run), [], loc=run[0].loc))
                run.clear()

        for s in stmts:
            new, sets = stmt(s, active, breakable)
            if isinstance(s, ir.Return):  # setting the flag again is harmless: no guard needed
                flush()
                out.extend(new)
            elif active and not any(contains_barrier(n) for n in new):
                run.extend(new)
            else:
                flush()
                out.extend(new)
            active = active or sets
            sets_any = sets_any or sets
        flush()
        return out, sets_any

    def stmt(s: ir.Stmt, active: bool, breakable: bool) -> tuple[list[ir.Stmt], bool]:
        if isinstance(s, ir.Barrier) and s.vote is not None and s.pred is not None and active:
            # a thread that has returned arrives at the vote without its predicate, which counts for nothing
            neutral = ir.Lit(BLOCK_VOTES[s.vote].neutral, bool_, loc=s.loc)
            return [replace(s, pred=ir.Select(returned(), neutral, s.pred, bool_, loc=s.loc))], False
        if isinstance(s, ir.Return):
            done: list[ir.Stmt] = [ir.Assign(returned(), ir.Lit(True, bool_), loc=s.loc)]
            return done + ([ir.Break(loc=s.loc)] if breakable else []), True
        if isinstance(s, ir.If):
            then, a = block(s.then, active, breakable)
            orelse, b = block(s.orelse, active, breakable)
            return [replace(s, then=then, orelse=orelse)], a or b
        if isinstance(s, (ir.For, ir.While)):
            inner = not contains_barrier(s)  # a loop with a barrier keeps going for returned threads
            body, sets = block(s.body, active, inner)
            if sets and not active:  # a later iteration runs after a return in an earlier one
                body, sets = block(s.body, True, inner)
            after = [ir.If(returned(), [ir.Break(loc=s.loc)], [], loc=s.loc)] if sets and breakable else []
            return [replace(s, body=body), *after], sets
        return [s], False

    body, _ = block(fd.body, False, False)
    decls = [s for s in body if isinstance(s, ir.DeclArray)]
    rest = [s for s in body if not isinstance(s, ir.DeclArray)]
    fd.body = [*decls, ir.Assign(flag, ir.Lit(False, bool_), declare=True), *rest]


def hoist_shared_declarations(program: ir.Program) -> None:
    """Each ``shared()``/``dynamic_shared()`` a @func declares becomes a hidden array parameter of it
    (and of every @func on a call chain from the kernel to it), declared once in the kernel, which
    passes it down every such chain.  This is CUDA's meaning, one array per block per declaration
    (a ``__shared__`` in a function is static: every call, from any call site, sees the same), in
    the form OpenCL C requires (``__local`` arrays are declared in a kernel's outermost scope only);
    the emitter, the simulator and its checks see shared arrays passed to @funcs, as they know them.
    The kernel's array is named after the function and the array (``helper_s``)."""
    hidden: dict[int, list[ir.DeclArray]] = {}  # id(FuncDef) -> the declarations it takes, in parameter order
    owner: dict[int, str] = {}  # id(declaration) -> the name of the @func declaring it
    for fd in [*program.funcs, program.kernel]:  # callees first
        mine: dict[int, ir.ArrayRef] = {}  # id(declaration) -> this function's array for it
        order: list[ir.DeclArray] = []
        if not fd.is_kernel:
            for s in fd.body:
                if isinstance(s, ir.DeclArray) and s.array.type.space == "shared":
                    mine[id(s)] = s.array
                    order.append(s)
                    owner[id(s)] = fd.name
            fd.body = [s for s in fd.body if id(s) not in mine]
        decls: list[ir.DeclArray] = []
        taken: set[str] | None = None
        calls = {id(n): n for n in ir.walk_body(fd.body) if isinstance(n, ir.Call) and hidden.get(id(n.func))}
        for call in calls.values():
            for decl in hidden[id(call.func)]:
                ref = mine.get(id(decl))
                if ref is None:
                    taken = ir.names_in(fd) if taken is None else taken
                    name = ir.fresh_name(f"{owner[id(decl)]}_{decl.array.name}", taken)
                    ref = mine[id(decl)] = ir.ArrayRef(name, decl.array.type, loc=decl.loc)
                    order.append(decl)
                    if fd.is_kernel:
                        decls.append(ir.DeclArray(ref, loc=decl.loc))
                call.args.append(ir.ArrayRef(ref.name, ref.type, loc=call.loc))
        if fd.is_kernel:
            lead = next((k for k, s in enumerate(fd.body) if not isinstance(s, ir.DeclArray)), len(fd.body))
            fd.body[lead:lead] = decls
        else:
            hidden[id(fd)] = order
            fd.params += [mine[id(d)] for d in order]
        if order or calls:
            fd.written = written_params(fd)
