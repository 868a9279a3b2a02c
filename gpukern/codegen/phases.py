"""A grid-wide barrier where the dialect has none (OpenCL): the kernel runs in phases, a launch each.

OpenCL cannot make every work-group of a launch resident at once, so a barrier across them could
wait forever.  The end of a launch is one, though: a kernel with ``grid_sync()`` is launched again
and again (the backend's loop, ``Layout``), each launch running every thread from where the last
one stopped to the next grid barrier.  There each thread saves what it holds (its scalars and
``local()`` arrays; with its group, the ``shared()`` arrays) to global scratch, thread 0 records the
barrier's number, and the launch ends.  The next launch restores them and *resumes*: it walks the
kernel's structure with ``gk_resuming`` set, running no statement, entering only the branches and
loops that hold that barrier (their counters restored, not set again), until it reaches the
barrier and goes on normally.  A launch that stops nowhere ends the loop.

Exact because the front end has made every grid barrier one that every thread of the grid reaches
(``checks``; a ``return`` some threads take became a flag they carry to it), so all threads stop
at the same barrier: the values each thread saves are all it needs, the grid's memory is the
global arrays, which persist between launches, and the launches of one queue run in order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import nodes as ir
from ..types import ScalarType
from .expressions import ExpressionEmitter

SLOT = 16  # bytes a saved scalar takes (any scalar type fits, and stays aligned)


@dataclass(frozen=True)
class Layout:
    """What a phased kernel's launches need besides its arguments: scratch of ``thread_bytes`` per
    thread and ``group_bytes`` per group, and a pair of ints (the barrier to resume at, the one
    this launch stopped at: 0 for none)."""

    thread_bytes: int
    group_bytes: int


def _slots(nbytes: int) -> int:
    """The bytes ``nbytes`` take in a record: whole slots, so what follows stays aligned."""
    return -(-nbytes // SLOT) * SLOT


@dataclass
class Plan:
    """The grid barriers of a kernel, numbered from 1, and what each thread saves at one."""

    numbers: dict[int, int]  # id(Barrier) -> its number
    values: list[ir.Var]  # scalars, at SLOT * k of the thread's record
    # (array, offset in the thread's or the group's record, its bytes: the copies move these, each
    # taking a multiple of SLOT in the record)
    local_arrays: list[tuple[ir.ArrayRef, int, int]]
    shared_arrays: list[tuple[ir.ArrayRef, int, int]]
    holds: dict[int, frozenset[int]] = field(default_factory=dict)  # id(statement) -> numbers under it

    @property
    def layout(self) -> Layout:
        thread = SLOT * len(self.values) + sum(_slots(n) for _, _, n in self.local_arrays)
        return Layout(thread, sum(_slots(n) for _, _, n in self.shared_arrays))

    @functools.cached_property
    def names(self) -> frozenset[str]:
        return frozenset(v.name for v in self.values)

    def under_block(self, stmts: list[ir.Stmt]) -> frozenset[int]:
        return frozenset().union(*(self.under(s) for s in stmts))

    def under(self, s: ir.Stmt) -> frozenset[int]:
        """The numbers of the grid barriers in statement ``s``."""
        found = self.holds.get(id(s))
        if found is None:
            found = frozenset(self.numbers[id(n)] for n in ir.walk(s) if id(n) in self.numbers)
            self.holds[id(s)] = found
        return found


def plan(fd: ir.FuncDef, lang: str) -> Plan | None:
    """The plan of kernel ``fd`` (None: it has no grid barrier), or a CompileError at what a kernel
    run in phases cannot hold across one."""
    barriers = [n for n in ir.walk_body(fd.body) if isinstance(n, ir.Barrier) and n.scope == "grid"]
    if not barriers:
        return None
    hint = "run it on CUDA or the simulator, or end the kernel at the grid_sync() and launch a second one"
    assigned: set[str] = set()
    values: dict[str, ir.Var] = {}
    local_arrays: list[tuple[ir.ArrayRef, int, int]] = []
    shared_arrays: list[tuple[ir.ArrayRef, int, int]] = []
    for n in ir.walk_body(fd.body):
        if isinstance(n, (ir.VecLoad, ir.DeclFragment, ir.WarpgroupOp, ir.AsyncCopy)):
            raise CompileError(
                f"a kernel with grid_sync() cannot hold {type(n).__name__} values on {lang}, which runs it "
                "in phases (a launch each, saving each thread's values at the grid barrier)",
                n.loc,
                hint,
            )
        if isinstance(n, ir.Assign):
            assigned.add(n.target.name)
        elif isinstance(n, ir.For):
            assigned.add(n.var.name)
        elif isinstance(n, ir.Barrier) and n.result is not None:
            assigned.add(n.result.name)
        if isinstance(n, ir.Var) and n.name not in values:
            values[n.name] = n
        if isinstance(n, ir.DeclArray):
            t = n.array.type
            if t.shape is None:
                raise CompileError(
                    f"a kernel with grid_sync() cannot use dynamic_shared() on {lang}, which runs it in phases "
                    "and saves its shared arrays at the grid barrier: their size must be known",
                    n.loc,
                    "declare the array with shared(dtype, shape), or " + hint,
                )
            size = int(np.prod(t.shape)) * t.elem.itemsize
            kept = local_arrays if t.space == "local" else shared_arrays
            kept.append((n.array, sum(_slots(b) for _, _, b in kept), size))
    saved = [v for name, v in values.items() if name in assigned]  # (a parameter too, where assigned)
    for v in saved:
        if not isinstance(v.type, ScalarType):
            raise CompileError(
                f"{v.name!r} holds a {v.type} across a grid_sync(), which {lang} runs in phases saving each "
                "thread's scalars: keep its parts in scalars",
                v.loc,
                hint,
            )
    base = SLOT * len(saved)  # the thread's local arrays follow its scalars
    local_arrays = [(a, base + off, n) for a, off, n in local_arrays]
    return Plan({id(b): k + 1 for k, b in enumerate(barriers)}, saved, local_arrays, shared_arrays)


PARAMS = ("gk_saved", "gk_saved_shared", "gk_phase")  # after the kernel's own: what each launch gets


class PhaseEmitter(ExpressionEmitter):
    """The C of a kernel run in phases (mixed into ``Emitter``, which sets ``phases``)."""

    phases: Plan | None = None
    # the statement emitter's, which this calls
    block: Callable[[list[ir.Stmt], int], list[str]]
    line: Callable[[int, str, ir.Node], str]
    for_condition: Callable[[ir.For], str]
    for_increment: Callable[[ir.For], str]

    def phase_params(self) -> list[str]:
        g = self.d.pointer_spaces["global"]
        return [f"{g}uchar* gk_saved", f"{g}uchar* gk_saved_shared", f"{g}int* gk_phase"]

    phasing = False  # emitting the phased kernel itself (not a @func of its program)

    def declared_at_top(self, name: str) -> bool:
        """Whether local ``name`` is declared at the kernel's top (saved across phases), not where set."""
        return self.phasing and self.phases is not None and name in self.phases.names

    def phase_declarations(self, fd: ir.FuncDef) -> list[str]:
        """The saved scalars not among ``fd.locals`` (declared where first set, elsewhere)."""
        assert self.phases is not None
        known = {v.name for v in fd.locals} | {p.name for p in fd.params}
        return [f"{self.type(v.type)} {self.name(v.name)};" for v in self.phases.values if v.name not in known]

    def _slot(self, t: ScalarType, where: str) -> str:
        g = self.d.pointer_spaces["global"]
        return f"*({g}{self.type(t)}*)({where})"

    def _copies(self, save: bool) -> list[str]:
        """Each thread's scalars and local arrays, and its share of the group's shared arrays, to
        the scratch (``save``) or back from it."""
        p = self.phases
        assert p is not None
        sh = self.d.pointer_spaces["shared"]
        me, out = f"gk_saved + gk_me * {p.layout.thread_bytes}", []
        for k, v in enumerate(p.values):
            slot, var = self._slot(v.type, f"{me} + {SLOT * k}"), self.name(v.name)
            out.append(f"{slot} = {var};" if save else f"{var} = {slot};")
        for a, off, n in p.local_arrays:
            mine, there = f"((uchar*){self.name(a.name)})", f"({me} + {off})"
            pair = (f"{there}[k]", f"{mine}[k]") if save else (f"{mine}[k]", f"{there}[k]")
            out.append(f"for (int k = 0; k < {n}; k++) {pair[0]} = {pair[1]};")
        if p.shared_arrays:
            group = f"gk_saved_shared + gk_group * {p.layout.group_bytes}"
            if save:
                out.append(self.d.barrier)  # (the group's writes, then the copy)
            for a, off, n in p.shared_arrays:
                mine, there = f"(({sh}uchar*){self.name(a.name)})", f"({group} + {off})"
                pair = (f"{there}[k]", f"{mine}[k]") if save else (f"{mine}[k]", f"{there}[k]")
                out.append(f"for (size_t k = gk_lid; k < {n}; k += gk_lsize) {pair[0]} = {pair[1]};")
            if not save:
                out.append(self.d.barrier)
        return out

    def phased_body(self, fd: ir.FuncDef, depth: int) -> list[str]:
        """The kernel's body: its arrays, the resuming prologue, then its statements phased."""
        pad = "    " * depth
        decls = [s for s in fd.body if isinstance(s, ir.DeclArray)]
        rest = [s for s in fd.body if not isinstance(s, ir.DeclArray)]
        out = self.block(decls, depth)
        out += [pad + line for line in self.d.phase_ids.splitlines()]
        out.append(f"{pad}const int gk_resume = gk_phase[0];  // the grid barrier the last launch stopped at")
        out.append(f"{pad}bool gk_resuming = gk_resume != 0;  // until this thread is back there")
        out.append(f"{pad}if (gk_resuming) {{")
        out += [f"{pad}    {line}" for line in self._copies(save=False)]
        out.append(f"{pad}}}")
        return out + self.phased_block(rest, depth)

    def phased_block(self, stmts: list[ir.Stmt], depth: int) -> list[str]:
        """Statements of a block holding a grid barrier: those before the barrier to resume at are
        skipped while resuming, the ones holding it are entered."""
        assert self.phases is not None
        pad, out, run = "    " * depth, [], []

        def flush() -> None:
            if run:
                out.append(f"{pad}if (!gk_resuming) {{")
                out.extend(self.block(list(run), depth + 1))
                out.append(f"{pad}}}")
                run.clear()

        for s in stmts:
            holds = self.phases.under(s)
            if not holds:
                run.append(s)
                continue
            flush()
            out += self.phased_stmt(s, holds, depth)
        flush()
        return out

    @staticmethod
    def _resuming_in(holds: frozenset[int]) -> str:
        return "(" + " || ".join(f"gk_resume == {k}" for k in sorted(holds)) + ")" if holds else "false"

    def phased_stmt(self, s: ir.Stmt, holds: frozenset[int], depth: int) -> list[str]:
        assert self.phases is not None
        pad = "    " * depth
        if isinstance(s, ir.Barrier):
            k = self.phases.numbers[id(s)]
            save = [f"{pad}    {line}" for line in self._copies(save=True)]
            return [
                self.line(depth, "if (gk_resuming) {", s),
                f"{pad}    if (gk_resume == {k}) gk_resuming = false;  // back where the last launch stopped",
                f"{pad}}} else {{  // stop here: the launch's end is the grid's barrier",
                *save,
                f"{pad}    if (gk_me == 0) gk_phase[1] = {k};",
                f"{pad}    return;",
                f"{pad}}}",
            ]
        if isinstance(s, ir.If):
            into_then = self._resuming_in(self.phases.under_block(s.then))
            cond = f"gk_resuming ? {into_then} : ({self.expr(s.cond)})"
            out = [self.line(depth, f"if ({cond}) {{", s)]
            out += self.phased_block(s.then, depth + 1)
            if s.orelse:
                out.append(f"{pad}}} else {{")
                out += self.phased_block(s.orelse, depth + 1)
            return out + [f"{pad}}}"]
        if isinstance(s, ir.While):
            cond = f"gk_resuming ? {self._resuming_in(holds)} : ({self.expr(s.cond)})"
            out = [self.line(depth, f"while ({cond}) {{", s)]
            return out + self.phased_block(s.body, depth + 1) + [f"{pad}}}"]
        if isinstance(s, ir.For):
            v = self.name(s.var.name)
            cond = self.for_condition(s)
            inc = self.for_increment(s)
            start = f"{v} = gk_resuming ? {v} : {self.expr(s.start)}"  # a counter restored, not set again
            head = f"for ({start}; gk_resuming ? {self._resuming_in(holds)} : {cond}; {inc}) {{"
            return [self.line(depth, head, s)] + self.phased_block(s.body, depth + 1) + [f"{pad}}}"]
        raise CompileError(
            f"grid_sync() inside {type(s).__name__} cannot be run in phases on {self.d.name}",
            s.loc,
            "run it on CUDA or the simulator",
        )
