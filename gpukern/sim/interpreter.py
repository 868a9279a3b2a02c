"""A CPU simulator that runs the typed IR with NumPy and finds kernel bugs.

Every thread of the grid is one *lane* of a NumPy array, and all lanes advance
together through the kernel, statement by statement; divergent control flow
runs a statement under a mask of the lanes that take it.  So a kernel costs a
few NumPy operations per executed statement, not a Python loop per thread.
Lanes are ordered block by block (lane = block * threads_per_block + thread).

With checking on (the default; ``check=False`` or ``GPUKERN_SIM_CHECK=0`` turns it
off) the simulator raises, at the statement that does it:

- ``OutOfBoundsError``: an index outside a global, shared or local array
  (``MisalignedAccessError``: a vector access not aligned to its width);
- ``DataRaceError``: two threads of a block touching one shared-memory element
  between two barriers, at least one writing or both not atomic;
- ``BarrierDivergenceError``: a barrier reached by some live threads of a block
  but not all.

Every memory access goes through one path (``sim.memory``): bounds check, race tracking
(``sim.races``), the profiler; this module only evaluates indices and values.

Arithmetic keeps the kernel's types (float32 stays float32), so results match
the GPU backends within float rounding, and exactly for integer kernels.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..errors import (
    BackendError,
    BarrierDivergenceError,
    ConversionError,
    IndexOverflowError,
    LaunchError,
    UninitializedReadError,
    ZeroDivisionFault,
)
from ..ir import nodes as ir
from ..runtime.array import DeviceArray
from ..runtime.plan import convert_scalar
from ..semantics import formats, ops, tma
from ..semantics.warp import BLOCK_VOTES, LANES, full_mask, mask_dtype
from ..types import StorageType, TupleType, value_type
from . import wave64
from .access import Memory
from .branches import Branches
from .cluster import Clusters
from .limits import memory_guard
from .memory import MemoryPath, record_slots
from .mma import Fragments
from .named_barriers import NamedBarriers
from .overflow import OverflowCheck
from .warp import Warps

# What _Run keeps per lane before any variable: int64 lane, block and six coordinates (and one
# temporary), int16 thread in block, ten int32 specials (lane_id too), two bool masks (``all``, ``returned``).
_LANE_BYTES = 9 * 8 + 2 + 10 * 4 + 2


class _Frame:
    """A function activation: its variables and which lanes have returned."""

    def __init__(self, lanes: int):
        self.vars: dict[str, np.ndarray] = {}
        self.arrays: dict[str, Memory] = {}
        self.fragments: dict[str, np.ndarray] = {}  # per fragment, one tile per warp (sim_mma)
        self.returned = np.zeros(lanes, bool)
        self.ret: np.ndarray | None = None
        self.partial: set[str] = set()  # the function's locals that some paths leave unassigned (FuncDef.partial)
        self.nones: dict[str, tuple[str, str]] = {}  # ... those that hold None there (FuncDef.nones)
        self.assigned: dict[str, np.ndarray] = {}  # ... and the lanes that assigned each


_WAITS: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _waits(program: ir.Program) -> bool:
    """Whether a program waits on mbarriers or named barriers anywhere (worked out once per program,
    not per launch)."""
    found = _WAITS.get(program)
    if found is None:
        nodes = (n for fd in (program.kernel, *program.funcs) for n in ir.walk_body(fd.body))
        found = _WAITS[program] = any(
            (isinstance(n, ir.Mbarrier) and n.op in ("wait", "try_wait")) or (isinstance(n, ir.NamedBarrier) and n.wait)
            for n in nodes
        )
    return found


class _Run:
    """One launch: the lanes, the memories, and the statement interpreter."""

    def __init__(
        self,
        variant: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        check: bool,
        faults: list[Exception] | None = None,
        dynamic_bytes: int = 0,
    ):
        self.variant = variant
        self.dynamic_bytes = dynamic_bytes  # the launch's dynamic shared memory per block
        self.kname = variant.kernel.__name__
        self.check = check
        self.faults = faults  # collect faults here instead of raising the first (None: raise)
        self.fault_keys: set[tuple[type, int | None]] = set()
        self.overflow = OverflowCheck()
        self.grid, self.block = grid, block
        self.tpb = block[0] * block[1] * block[2]
        self.width = variant.program.lanes  # the threads of a warp: 32, or 64 (wave64)
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.lanes = self.tpb * self.nblocks
        need = self.lanes * _LANE_BYTES
        with memory_guard(need, f"in kernel {self.kname}: a grid of {self.lanes:,} threads (before any variable)"):
            lane = np.arange(self.lanes, dtype=np.int64)
            self.block_of = lane // self.tpb
            t = lane % self.tpb
            b = self.block_of
            self.tid = (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))
            self.bid = (b % grid[0], (b // grid[0]) % grid[1], b // (grid[0] * grid[1]))
            self.thread_in_block = t.astype(np.int16)
            self.specials = {
                "thread_idx": [x.astype(np.int32) for x in self.tid],
                "block_idx": [x.astype(np.int32) for x in self.bid],
                "block_dim": [np.int32(n) for n in block],
                "grid_dim": [np.int32(n) for n in grid],
            }
            self.specials["global_id"] = [(self.bid[d] * block[d] + self.tid[d]).astype(np.int32) for d in range(3)]
            self.specials["lane_id"] = [(t % self.width).astype(np.int32)]
            self.all = np.ones(self.lanes, bool)
        self.lane_ids = lane
        # what differs between the sides of an if run side by side: each side's, installed in turn
        self.frames: list[_Frame] = []
        self._clusters: Clusters | None = None  # made at the first use
        self.mem = MemoryPath(self, check)
        self.tables = {  # constant tables: read-only, so no check but bounds needs to follow them
            ref.name: self.mem.table(ref, data) for ref, data in variant.program.tables
        }
        self.breaks: list[np.ndarray] = []
        self.continues: list[np.ndarray] = []
        self._warps: Warps | None = None  # made at the first warp op or fragment (warps)
        # the sides of an if that wait on each other's mbarriers run side by side (None: no waits)
        self.branches = Branches(self) if _waits(variant.program) else None
        self.maps: dict[str, Memory] = {}  # each TMA descriptor's array (KernelParam 'tensor_map')
        self._fragments: Fragments | None = None  # made at the first fragment
        self._named: NamedBarriers | None = None  # made at the first named barrier

    # ------------------------------------------------------------ the running side's state (sim.branches)
    def thread_state(self, state: Any = None) -> Any:
        """The running side's frames and loops (a copy of the lists: the frames and masks are
        shared), or, given such a copy, make it the running side's: the sides of an if run side by
        side one at a time, each installing its own when its turn comes (``Branches``)."""
        if state is None:
            return (list(self.frames), list(self.breaks), list(self.continues))
        self.frames, self.breaks, self.continues = state
        return state

    @property
    def prof(self) -> Any:
        """The gpukern.tools.profile.Profiler counting this launch, or None."""
        return self.mem.profiler

    @prof.setter
    def prof(self, profiler: Any) -> None:
        self.mem.set_profiler(profiler)

    # ------------------------------------------------------------ errors
    def place(self, lane: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """A lane's (block, thread) indices."""
        return tuple(int(x[lane]) for x in self.bid), tuple(int(x[lane]) for x in self.tid)

    def who(self, lane: int) -> str:
        b, t = self.place(lane)
        return f"block {b}, thread {t}"

    def fault(self, cls: type, message: str, node: ir.Node, lanes: tuple[int, ...] = ()) -> Exception:
        threads = tuple(self.place(k) for k in lanes)
        return cls(f"in kernel {self.kname}: {message}", node.loc, kernel=self.kname, threads=threads)

    def report(self, cls: type, message: str, node: ir.Node, lanes: tuple[int, ...] = ()) -> None:
        """A fault found: raised, or, while ``faults`` collects them (``gk.sanitize``), kept (the
        first of each class and line) and the run goes on."""
        if self.faults is None:
            raise self.fault(cls, message, node, lanes)
        key = (cls, node.loc.lineno if node.loc is not None else None)
        if key not in self.fault_keys:
            self.fault_keys.add(key)
            self.faults.append(self.fault(cls, message, node, lanes))

    # ------------------------------------------------------------ memory
    def memory_for_param(self, ref: ir.ArrayRef, data: np.ndarray, unwritten: np.ndarray | None) -> Memory:
        return self.mem.param(ref, data, ref.name in self.variant.program.kernel.written, unwritten)

    def lanes_of(self, m: np.ndarray) -> np.ndarray:
        return self.lane_ids if m.all() else np.nonzero(m)[0]

    # ------------------------------------------------------------ statements
    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def active(self, mask: np.ndarray) -> np.ndarray:
        m = mask & ~self.frame.returned
        if self.breaks:
            m &= ~self.breaks[-1] & ~self.continues[-1]
        return m

    def run_block(self, stmts: list[ir.Stmt], mask: np.ndarray) -> None:
        for s in stmts:
            m = self.active(mask)
            if not m.any():
                return
            getattr(self, f"s_{type(s).__name__}")(s, m)

    def s_DeclArray(self, s: ir.DeclArray, m: np.ndarray) -> None:
        if s.array.name not in self.frame.arrays:
            self.frame.arrays[s.array.name] = self.mem.declare(s.array, s)

    @property
    def clusters(self) -> Clusters:
        if self._clusters is None:
            self._clusters = Clusters(self)
        return self._clusters

    def e_ClusterInfo(self, e: ir.ClusterInfo, m: np.ndarray) -> Any:
        return self.clusters.ranks() if e.what == "rank" else np.int32(self.clusters.size)

    @property
    def named_barriers(self) -> NamedBarriers:
        if self._named is None:
            self._named = NamedBarriers(self)
        return self._named

    # ------------------------------------------------------------ fragments (sim_mma)
    @property
    def fragments(self) -> Fragments:
        if self._fragments is None:
            self._fragments = Fragments(self)
        return self._fragments

    def s_DeclFragment(self, s: ir.DeclFragment, m: np.ndarray) -> None:
        if s.fragment.name not in self.frame.fragments:
            self.fragments.declare(self.frame, s.fragment)

    def e_FragmentElement(self, e: ir.FragmentElement, m: np.ndarray) -> Any:
        return self.fragments.element(self.frame, e, m)

    def s_SetFragmentElement(self, s: ir.SetFragmentElement, m: np.ndarray) -> None:
        self.fragments.set_element(self.frame, s, m, self.eval(s.value, m))

    def s_FillFragment(self, s: ir.FillFragment, m: np.ndarray) -> None:
        self.fragments.fill(self.frame, s, m, self.eval(s.value, m))

    def s_LoadMatrix(self, s: ir.LoadMatrix, m: np.ndarray) -> None:
        self.fragments.load(self.frame, s, m)

    def s_StoreMatrix(self, s: ir.StoreMatrix, m: np.ndarray) -> None:
        self.fragments.store(self.frame, s, m)

    def s_Mma(self, s: ir.Mma, m: np.ndarray) -> None:
        self.fragments.mma(self.frame, s, m)

    def s_WarpgroupMma(self, s: ir.WarpgroupMma, m: np.ndarray) -> None:
        self.fragments.wgmma(self.frame, s, m)

    def s_WarpgroupMmaRegs(self, s: ir.WarpgroupMmaRegs, m: np.ndarray) -> None:
        self.fragments.wgmma(self.frame, s, m)

    def s_WgmmaCommit(self, s: ir.WgmmaCommit, m: np.ndarray) -> None:
        self.fragments.wgmma_commit(s, m)

    def s_WgmmaWait(self, s: ir.WgmmaWait, m: np.ndarray) -> None:
        self.fragments.wgmma_wait(s, m)

    def assign(self, var: ir.Var, value: Any, m: np.ndarray) -> None:
        self.assign_name(var.name, var.type.dtype, value, m)

    def assign_name(self, name: str, dtype: np.dtype, value: Any, m: np.ndarray) -> None:
        """Variables are whole-grid arrays, never changed in place (so sharing one is safe)."""
        value = np.broadcast_to(np.asarray(value).astype(dtype, copy=False), (self.lanes,))
        if name in self.frame.partial:
            self.frame.assigned[name] = self.frame.assigned.get(name, np.zeros(self.lanes, bool)) | m
        old = self.frame.vars.get(name)
        if m.all():
            self.frame.vars[name] = value
        else:
            self.frame.vars[name] = np.where(m, value, np.zeros(1, value.dtype) if old is None else old)

    def s_Assign(self, s: ir.Assign, m: np.ndarray) -> None:
        if isinstance(s.target.type, TupleType):
            return self.assign_tuple(s.target, self.eval(s.value, m), m)
        self.assign(s.target, self.eval(s.value, m), m)

    def assign_tuple(self, var: ir.Var, values: Any, m: np.ndarray) -> None:
        """A tuple variable holds one whole-grid array per item (a Python tuple of them)."""
        old = self.frame.vars.get(var.name)
        items = []
        for k, t in enumerate(var.type.items):
            v = np.broadcast_to(np.asarray(values[k]).astype(t.dtype, copy=False), (self.lanes,))
            items.append(v if m.all() else np.where(m, v, np.zeros(1, t.dtype) if old is None else old[k]))
        self.frame.vars[var.name] = tuple(items)

    def e_Item(self, e: ir.Item, m: np.ndarray) -> Any:
        return self.frame.vars[e.tuple.name][e.index]

    def e_MakeTuple(self, e: ir.MakeTuple, m: np.ndarray) -> Any:
        return tuple(np.broadcast_to(self.eval(i, m), (self.lanes,)) for i in e.items)

    def s_Store(self, s: ir.Store, m: np.ndarray) -> None:
        idx = [self.eval(i, m) for i in s.indices]
        elem, v, copied = s.array.type.elem, s.value, s.copied()
        if isinstance(elem, StorageType) and copied is not None:  # the bits (ir.Store.copied)
            value = self.mem.load(self.memory(copied.array), [self.eval(i, m) for i in copied.indices], m, copied)[0]
        elif isinstance(elem, StorageType):  # bfloat16: the float32 value rounded, as bits
            value = elem.from_value(np.broadcast_to(self.eval(v, m), (self.lanes,)))
        else:
            value = self.eval(v, m)
        self.mem.store(self.memory(s.array), idx, [value], m, s)

    def s_VecLoad(self, s: ir.VecLoad, m: np.ndarray) -> None:
        idx = [self.eval(i, m) for i in s.indices]
        elem = s.array.type.elem
        for k, values in enumerate(self.mem.load(self.memory(s.array), idx, m, s, s.width)):
            if isinstance(elem, StorageType):  # bfloat16 bits: floats
                values = elem.to_value(values)
            self.assign_name(f"{s.name}[{k}]", value_type(elem).dtype, values, m)

    def s_VecStore(self, s: ir.VecStore, m: np.ndarray) -> None:
        idx = [self.eval(i, m) for i in s.indices]
        values = [self.eval(v, m) for v in s.values]  # all read before any is written
        elem = s.array.type.elem
        if isinstance(elem, StorageType):  # bfloat16: the float32 values rounded, as bits
            values = [elem.from_value(np.broadcast_to(v, (self.lanes,))) for v in values]
        self.mem.store(self.memory(s.array), idx, values, m, s)

    def s_ExprStmt(self, s: ir.ExprStmt, m: np.ndarray) -> None:
        self.eval(s.value, m)

    def s_If(self, s: ir.If, m: np.ndarray) -> None:
        c = np.broadcast_to(self.eval(s.cond, m), (self.lanes,)).astype(bool)
        then, orelse = m & c, m & ~c
        if self.branches is not None and self.branches.side_by_side(s, then, orelse):  # (sim.branches)
            self.branches.run_sides(
                [
                    (lambda: self.run_block(s.then, then), self.thread_state()),
                    (lambda: self.run_block(s.orelse, orelse), self.thread_state()),
                ]
            )
            return
        self.run_block(s.then, then)
        if s.orelse:
            self.run_block(s.orelse, orelse)

    def loop(self, body: list[ir.Stmt], m: np.ndarray, cond: Any, step: Any = None) -> None:
        self.breaks.append(np.zeros(self.lanes, bool))
        self.continues.append(np.zeros(self.lanes, bool))
        try:
            while True:
                live = m & ~self.breaks[-1] & ~self.frame.returned
                c = live & cond(live)
                if not c.any():
                    return
                self.continues[-1][:] = False
                self.run_block(body, c)
                if step is not None:
                    step(c & ~self.breaks[-1] & ~self.frame.returned)
        finally:
            self.breaks.pop()
            self.continues.pop()

    def s_For(self, s: ir.For, m: np.ndarray) -> None:
        start = self.eval(s.start, m)
        stop = np.broadcast_to(self.eval(s.stop, m), (self.lanes,))
        step = np.broadcast_to(self.eval(s.step, m), (self.lanes,))
        self.assign(s.var, start, m)
        var = s.var.name

        def cond(live: np.ndarray) -> np.ndarray:
            v = self.frame.vars[var]
            if s.step_sign > 0:
                return v < stop
            if s.step_sign < 0:
                return v > stop
            return np.where(step > 0, v < stop, v > stop)

        def advance(lanes: np.ndarray) -> None:
            v = self.frame.vars[var]
            with np.errstate(all="ignore"):
                self.frame.vars[var] = np.where(lanes, v + step.astype(v.dtype), v)

        self.loop(s.body, m, cond, advance)

    def s_While(self, s: ir.While, m: np.ndarray) -> None:
        self.loop(s.body, m, lambda live: np.broadcast_to(self.eval(s.cond, live), (self.lanes,)).astype(bool))

    def s_Break(self, s: ir.Break, m: np.ndarray) -> None:
        self.breaks[-1] |= m

    def s_Continue(self, s: ir.Continue, m: np.ndarray) -> None:
        self.continues[-1] |= m

    def s_Return(self, s: ir.Return, m: np.ndarray) -> None:
        f = self.frame
        if isinstance(s.value, ir.MakeTuple):  # a tuple: one array per item
            items = self.eval(s.value, m)
            f.ret = tuple(v.copy() if f.ret is None else np.where(m, v, f.ret[k]) for k, v in enumerate(items))
        elif s.value is not None:
            v = np.broadcast_to(self.eval(s.value, m), (self.lanes,))
            f.ret = v.copy() if f.ret is None else np.where(m, v, f.ret)
        f.returned |= m

    def s_Print(self, s: ir.Print, m: np.ndarray) -> None:
        """The lanes that run it print, in lane order (block by block, threads in order within
        a block), each value formatted by the rule the C emitter's printf follows."""
        values = [np.broadcast_to(self.eval(v, m), (self.lanes,)) for v in s.values]
        lines = []
        for k in self.lanes_of(m):
            parts = [s.texts[0]]
            for v, x, text in zip(s.values, values, s.texts[1:]):
                parts += [formats.python_text(v.type, x[k]), text]
            lines.append("".join(parts))
        sys.stdout.write("".join(lines))
        sys.stdout.flush()

    def s_Fence(self, s: ir.Fence, m: np.ndarray) -> None:
        """Nothing to do: the simulator's lanes see memory in program order, so every fence holds.
        Nor is it a barrier to the race checks: a fence orders one thread's accesses, it does not
        make another thread wait for them."""

    def s_AsyncCopy(self, s: ir.AsyncCopy, m: np.ndarray) -> None:
        """The copy moves its data now; with checks on, ``sim.asynchronous`` keeps it in flight until it lands."""
        dst_idx = [self.eval(i, m) for i in s.dst_indices]
        src_idx = [self.eval(i, m) for i in s.src_indices]
        self.mem.async_copy(self.memory(s.dst), dst_idx, self.memory(s.src), src_idx, m, s)

    def s_AsyncCommit(self, s: ir.AsyncCommit, m: np.ndarray) -> None:
        self.mem.async_commit(m)

    def s_AsyncWait(self, s: ir.AsyncWait, m: np.ndarray) -> None:
        self.mem.async_wait(m, s.pending)

    def s_Barrier(self, s: ir.Barrier, m: np.ndarray) -> None:
        """Every live thread of the block must arrive; a vote (``semantics.warp.BLOCK_VOTES``) reduces
        the predicate of the threads that do, each evaluated before it waits."""
        if s.scope == "grid":
            self.grid_sync(s, m)
            return
        if s.scope == "cluster":
            if self.prof is not None:
                self.prof.barrier(s.loc, self.lanes_of(m))
            self.clusters.barrier(s, m)
            return
        pred = None if s.pred is None else np.broadcast_to(self.eval(s.pred, m), (self.lanes,)).astype(bool)
        if self.prof is not None:
            self.prof.barrier(s.loc, self.lanes_of(m))
        arrived = np.bincount(self.block_of[m], minlength=self.nblocks)
        if self.check:
            live = np.bincount(self.block_of[~self.frames[0].returned], minlength=self.nblocks)
            bad = (arrived > 0) & (arrived < live)
            if bad.any():
                b = int(np.argmax(bad))
                in_block = self.block_of == b
                missing = np.nonzero(in_block & ~m & ~self.frames[0].returned)[0]
                here = np.nonzero(in_block & m)[0]
                self.report(
                    BarrierDivergenceError,
                    f"barrier reached by {int(arrived[b])} of the {int(live[b])} live threads of block "
                    f"{self.place(int(here[0]))[0]}: thread {self.place(int(here[0]))[1]} arrived, "
                    f"thread {self.place(int(missing[0]))[1]} did not",
                    s,
                    (int(here[0]), int(missing[0])),
                )
            self.mem.barrier(np.nonzero(arrived > 0)[0])
        if s.vote is not None and s.result is not None and pred is not None:
            counts = np.bincount(self.block_of[m & pred], minlength=self.nblocks)
            self.assign(s.result, BLOCK_VOTES[s.vote].numpy(counts, arrived)[self.block_of], m)

    def grid_sync(self, s: ir.Barrier, m: np.ndarray) -> None:
        """``grid_sync()``: every live thread of the grid must arrive (a kernel's returns are
        structured so that the threads that took one arrive too: ``passes.structure_early_returns``);
        then every access before it is ordered before every access after it, in every block."""
        if self.prof is not None:
            self.prof.barrier(s.loc, self.lanes_of(m))
        if not self.check:
            return
        returned = self.frames[0].returned
        missing = np.nonzero(~m & ~returned)[0]
        if len(missing) and m.any():
            here, lane = int(np.argmax(m)), int(missing[0])
            self.report(
                BarrierDivergenceError,
                f"grid_sync() reached by {int(m.sum())} of the {int((~returned).sum())} live threads of the "
                f"grid: thread {self.place(here)[1]} of block {self.place(here)[0]} arrived, thread "
                f"{self.place(lane)[1]} of block {self.place(lane)[0]} did not",
                s,
                (here, lane),
            )
        self.mem.grid_sync()

    # ------------------------------------------------------------ expressions
    def memory(self, ref: ir.ArrayRef) -> Memory:
        found = self.frame.arrays.get(ref.name) or self.tables.get(ref.name)  # a function's own, or a table
        if ref.record_field is not None:  # a["x"], a[i].x: the field's view of the record array
            return self.mem.field(found, ref.record_field)
        return found

    def eval(self, e: ir.Expr, m: np.ndarray) -> Any:
        return getattr(self, f"e_{type(e).__name__}")(e, m)

    def e_Lit(self, e: ir.Lit, m: np.ndarray) -> Any:
        return e.type.dtype.type(e.value)

    def e_Var(self, e: ir.Var, m: np.ndarray) -> Any:
        if e.name in self.frame.partial:  # some paths leave it unassigned
            return self.partial_var(e, m)
        return self.frame.vars[e.name]

    def partial_var(self, e: ir.Var, m: np.ndarray) -> Any:
        """A variable some paths leave unassigned (``FuncDef.partial``): with checks on, a lane of ``m``
        that never assigned it is reported; it reads 0 there, as C's declaration gives."""
        assigned = self.frame.assigned.get(e.name)
        if self.check:
            unset = m if assigned is None else m & ~assigned
            if unset.any():
                lane = int(np.argmax(unset))
                none = self.frame.nones.get(e.name)
                if none is not None:
                    message = (
                        f"{self.who(lane)} uses {none[0]} as a number where it is None ({none[1]}): Python and "
                        "Numba raise TypeError here; CUDA and OpenCL read 0. Test it with 'is None' first"
                    )
                else:
                    message = (
                        f"{self.who(lane)} reads {e.name!r}, which no path it took assigned (Python raises "
                        "UnboundLocalError here; CUDA and OpenCL read 0)"
                    )
                self.report(UninitializedReadError, message, e, (lane,))
        return self.frame.vars[e.name] if assigned is not None else np.zeros(self.lanes, e.type.dtype)

    def e_Load(self, e: ir.Load, m: np.ndarray) -> Any:
        values = self.mem.load(self.memory(e.array), [self.eval(i, m) for i in e.indices], m, e)[0]
        elem = e.array.type.elem
        return elem.to_value(values) if isinstance(elem, StorageType) else values  # bfloat16 bits: floats

    def e_Lane(self, e: ir.Lane, m: np.ndarray) -> Any:
        return self.frame.vars[f"{e.vector}[{e.lane}]"]

    def e_BinOp(self, e: ir.BinOp, m: np.ndarray) -> Any:
        op = ops.BINARY[e.op]
        a, b = self.eval(e.left, m), self.eval(e.right, m)
        if self.prof is not None and op.flop and (e.type.is_float or e.type.is_complex):
            self.prof.flops(e.loc, int(np.count_nonzero(m)) * (op.complex_flops if e.type.is_complex else 1))
        with np.errstate(all="ignore"):
            out = op.numpy(a, b, e.type.dtype)
        if e.feeds_index and self.check:
            self.check_overflow(e, [a, b], out, m)
        if self.faults is not None and e.op in ("//", "%") and e.type.is_int:  # gk.sanitize: 0, not a trap
            zero = (np.broadcast_to(b, (self.lanes,)) == 0) & np.broadcast_to(m, (self.lanes,))
            if zero.any():
                k = int(np.nonzero(zero)[0][0])
                self.report(
                    ZeroDivisionFault,
                    f"integer {e.op} by zero gives 0 (as NumPy, where C would trap or be undefined), in "
                    f"{self.who(k)} and {int(zero.sum()) - 1} other thread(s); test the divisor where 0 can occur",
                    e,
                    (k,),
                )
        return out

    def check_overflow(self, e: ir.BinOp | ir.Unary, operands: list[Any], out: Any, m: np.ndarray) -> None:
        """``out``, 32-bit arithmetic that feeds an index, must not have wrapped (``sim.overflow``)."""
        found = self.overflow.wrapped(e.op, operands, out, e.type.dtype, m)
        if found is not None:
            k, value = found
            self.report(
                IndexOverflowError,
                f"{e.type.name} arithmetic that feeds an array index overflows: its value is "
                f"{value:,}, which {e.type.name} cannot hold (it wraps to "
                f"{int(np.broadcast_to(out, (self.lanes,))[k]):,}), in {self.who(k)}; "
                "compute the index in int64 (int64(row) * n + col)",
                e,
                (k,),
            )

    def e_Compare(self, e: ir.Compare, m: np.ndarray) -> Any:
        return ops.COMPARE[e.op].numpy(self.eval(e.left, m), self.eval(e.right, m))

    def e_Logic(self, e: ir.Logic, m: np.ndarray) -> Any:
        left = np.broadcast_to(self.eval(e.left, m), (self.lanes,))
        if e.op == "and":
            return left & np.broadcast_to(self.eval(e.right, m & left), (self.lanes,))
        return left | np.broadcast_to(self.eval(e.right, m & ~left), (self.lanes,))

    def e_Unary(self, e: ir.Unary, m: np.ndarray) -> Any:
        v = self.eval(e.operand, m)
        with np.errstate(all="ignore"):
            out = ops.UNARY[e.op].numpy(v, e.type.dtype)
        if e.feeds_index and self.check:
            self.check_overflow(e, [v], out, m)
        return out

    def e_Cast(self, e: ir.Cast, m: np.ndarray) -> Any:
        v = np.asarray(self.eval(e.value, m))
        if e.type.dtype == np.bool_:
            out = v != 0
        else:
            with np.errstate(all="ignore"):
                out = v.astype(e.type.dtype)
        if self.width == 64 and self.check and wave64.narrows(e):  # a mask of 64 lanes cut to 32
            wave64.narrowed(self, e, v, m)
        elif e.implicit and self.faults is not None:  # gk.sanitize: a store's conversion that changed a value
            self.check_conversion(e, v, out, m)
        return out

    def check_conversion(self, e: ir.Cast, v: np.ndarray, out: np.ndarray, m: np.ndarray) -> None:
        src, dst = e.value.type, e.type
        v, out = np.broadcast_to(v, (self.lanes,)), np.broadcast_to(out, (self.lanes,))
        with np.errstate(all="ignore"):
            if dst.dtype == np.bool_:
                changed = (v != 0) & (v != 1)
            elif dst.is_float:  # rounding is not a change; an overflow to inf is
                changed = np.isinf(out) & np.isfinite(v)
            else:
                changed = out.astype(src.dtype) != v
        changed = changed & np.broadcast_to(m, (self.lanes,))
        if changed.any():
            lanes = np.nonzero(changed)[0]
            k = int(lanes[0])
            self.report(
                ConversionError,
                f"the {src.name} value {v[k].item()!r} stored as {dst.name} becomes {out[k].item()!r} "
                f"({lanes.size} thread(s)); convert it yourself where that is meant",
                e,
                (k,),
            )

    def e_Select(self, e: ir.Select, m: np.ndarray) -> Any:
        c = np.broadcast_to(self.eval(e.cond, m), (self.lanes,)).astype(bool)
        a = self.eval(e.a, m & c)
        b = self.eval(e.b, m & ~c)
        return np.where(c, a, b).astype(e.type.dtype, copy=False)

    def e_MathCall(self, e: ir.MathCall, m: np.ndarray) -> Any:
        args = [self.eval(a, m) for a in e.args]
        fn = ops.function(e.name)
        if self.prof is not None and fn.flop:
            results = e.type.items if isinstance(e.type, TupleType) else (e.type,)
            if any(t.is_float or t.is_complex for t in results):
                self.prof.flops(e.loc, int(np.count_nonzero(m)))  # one operation, of one result or several
        return fn.evaluate(args, e.args[0].type)

    def e_Special(self, e: ir.Special, m: np.ndarray) -> Any:
        return self.specials[e.name][e.dim]

    def e_Shape(self, e: ir.Shape, m: np.ndarray) -> Any:
        return np.int64(self.memory(e.array).shape[e.dim])

    def e_Atomic(self, e: ir.Atomic, m: np.ndarray) -> Any:
        idx = [self.eval(i, m) for i in e.indices]
        operands = [np.broadcast_to(self.eval(o, m), (self.lanes,)) for o in e.operands]
        return self.mem.atomic(self.memory(e.array), e.op, idx, operands, m, e)

    def e_Mbarrier(self, e: ir.Mbarrier, m: np.ndarray) -> Any:
        """An mbarrier operation (``sim.mbarriers``); a wait the lanes' order cannot satisfy is reported."""
        return self.mem.barriers.op(e, m, [self.eval(a, m) for a in e.args])

    def s_TmaLoad(self, s: ir.TmaLoad, m: np.ndarray) -> None:
        self.mem.copies.tma_load(s, m, self.maps)

    def s_TmaStore(self, s: ir.TmaStore, m: np.ndarray) -> None:
        self.mem.copies.tma_store(s, m, self.maps)

    def s_NamedBarrier(self, s: ir.NamedBarrier, m: np.ndarray) -> None:
        if self.prof is not None:
            self.prof.barrier(s.loc, self.lanes_of(m))
        self.named_barriers.arrive(s, m)

    def e_Elect(self, e: ir.Elect, m: np.ndarray) -> Any:
        """True in the lowest of each warp's lanes in ``m``."""
        lanes = self.lanes_of(m)
        warp = self.block_of[lanes] * self.tpb + self.thread_in_block[lanes] // self.width
        out = np.zeros(self.lanes, bool)
        out[lanes[np.unique(warp, return_index=True)[1]]] = True
        return out

    def s_SetMaxNreg(self, s: ir.SetMaxNreg, m: np.ndarray) -> None:
        self.fragments.groups_of(s, m)  # (checked: whole warpgroups; the registers are the hardware's)

    def s_BulkCommit(self, s: ir.BulkCommit, m: np.ndarray) -> None:
        self.mem.copies.bulk_commit(s, m)

    def s_BulkWait(self, s: ir.BulkWait, m: np.ndarray) -> None:
        self.mem.copies.bulk_wait(m, s.pending)

    def s_StoreAsync(self, s: ir.StoreAsync, m: np.ndarray) -> None:
        self.mem.copies.store_async(s, m)

    def s_BulkCopy(self, s: ir.BulkCopy, m: np.ndarray) -> None:
        if s.bar is not None:
            self.mem.copies.bulk_load(s, m)
        else:
            self.mem.copies.bulk_store(s, m)

    def e_WarpOp(self, e: ir.WarpOp, m: np.ndarray) -> Any:
        """A warp intrinsic among the lanes of ``m`` (``sim.warp``); it touches no memory."""
        mask = self.eval(e.mask, m) if e.mask is not None else mask_dtype(self.width).type(full_mask(self.width))
        v = e.args[0] if e.args else None
        if isinstance(v, ir.Var) and v.name in self.frame.partial:  # set on some lanes only: the source lane's counts
            assigned = self.frame.assigned.get(v.name, np.zeros(self.lanes, bool))
            value = self.frame.vars[v.name] if v.name in self.frame.assigned else np.zeros(self.lanes, v.type.dtype)
            args = [value] + [self.eval(a, m) for a in e.args[1:]]
            return self.warps.run_op(e, m, mask, args, assigned=(v.name, assigned))
        args = [self.eval(a, m) for a in e.args]
        return self.warps.run_op(e, m, mask, args)

    @property
    def warps(self) -> Warps:
        """The launch's warps (``sim.warp``), made at the first warp op or fragment."""
        if self._warps is None:
            self._warps = Warps(self)
        return self._warps

    def e_Call(self, e: ir.Call, m: np.ndarray) -> Any:
        frame = _Frame(self.lanes)
        frame.partial, frame.nones = e.func.partial, e.func.nones
        for p, a in zip(e.func.params, e.args):
            if isinstance(a, ir.ArrayRef):
                frame.arrays[p.name] = self.memory(a)
            else:
                frame.vars[p.name] = np.broadcast_to(np.asarray(self.eval(a, m), p.type.dtype), (self.lanes,)).copy()
        frame.returned = ~m
        self.frames.append(frame)
        saved = self.breaks, self.continues
        self.breaks, self.continues = [], []
        try:
            self.run_block(e.func.body, m)
        finally:
            self.frames.pop()
            self.breaks, self.continues = saved
        if e.type is None:
            return None
        if frame.ret is None and isinstance(e.type, TupleType):
            return tuple(np.zeros(self.lanes, t.dtype) for t in e.type.items)
        return frame.ret if frame.ret is not None else np.zeros(self.lanes, e.type.dtype)


class SimBackend(Backend):
    """Runs kernels on the CPU with NumPy, checking for races, divergent barriers and bad indices."""

    name = "sim"
    dialect = None  # type: ignore[assignment]
    max_group = 1024
    max_items = (1024, 1024, 64)
    max_shared = 48 * 1024
    max_shared_optin = 227 * 1024  # a block's shared memory with dynamic bytes, as an sm_90 GPU's opt-in

    def __init__(self, index: int | None = None) -> None:
        """Simulated device ``index``: ``GPUKERN_SIM_DEVICES`` (default 1) devices, each its own
        memory, so programs for several GPUs can be tried without them."""
        names = self.device_names()
        self.index = 0 if index is None else index
        if not 0 <= self.index < len(names):
            raise BackendError(
                f"simulated device {self.index} does not exist "
                f"(there are {len(names)}; GPUKERN_SIM_DEVICES sets how many)"
            )
        self.device_label = names[self.index]  # as made (GPUKERN_SIM_DEVICES may change later)
        self.check = os.environ.get("GPUKERN_SIM_CHECK", "1") not in ("0", "false", "no")
        # per array from empty() not yet wholly written: which elements have been (sim_init)
        self.unwritten: weakref.WeakKeyDictionary[DeviceArray, np.ndarray] = weakref.WeakKeyDictionary()

    def device_name(self) -> str:
        return self.device_label + ("" if self.lanes == 32 else ", 64-lane wavefronts") + (
            "" if self.check else ", checks off"
        )

    @property
    def lanes(self) -> int:  # type: ignore[override]
        """The threads of a warp it runs: ``GPUKERN_SIM_LANES``, 32 (NVIDIA's warps, the default) or
        64 (AMD CDNA's wavefronts, to find code that assumes 32: ``sim.wave64``), read at each launch."""
        value = os.environ.get("GPUKERN_SIM_LANES", "32")
        if value not in {str(n) for n in LANES}:
            raise BackendError(f"GPUKERN_SIM_LANES={value!r}: the simulator runs warps of 32 or 64 lanes")
        return int(value)

    @staticmethod
    def device_names() -> list[str]:
        try:
            count = int(os.environ.get("GPUKERN_SIM_DEVICES", "1"))
        except ValueError:
            count = 0
        if count < 1:
            raise BackendError(f"GPUKERN_SIM_DEVICES={os.environ['GPUKERN_SIM_DEVICES']!r} is not a positive number")
        return [f"gpukern simulator{'' if count == 1 else f' {i}'} (CPU, NumPy)" for i in range(count)]

    def launch(
        self,
        variant: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        check: bool | None = None,
        profiler: Any = None,
        faults: list[Exception] | None = None,
        shared: int | None = None,
        stream: Any = None,
    ) -> None:
        """Run ``variant`` on the CPU.  Every thread is a lane of NumPy arrays, so a launch whose
        lanes and arrays would not fit in this machine's memory is a ``LaunchError`` (``sim.memory``).
        With ``faults`` (a list; checks on), faults are put there and the run goes on.  ``stream`` is
        accepted and needs nothing: every launch has finished when this returns."""
        self.check_limits(variant, grid, block, shared)
        self.check_arrays(variant, args)
        checked = faults is not None or (self.check if check is None else check)
        run = _Run(variant, grid, block, checked, faults, shared or 0)
        if profiler is not None:
            run.prof = profiler
            profiler.start(run)
        frame = _Frame(run.lanes)
        run.frames.append(frame)
        fd = variant.program.kernel
        frame.partial, frame.nones = fd.partial, fd.nones
        position = {p.name: p.arg_index for p in variant.kernel_params}  # (a tuple's items: flattened)
        copy_back: list[tuple[np.ndarray, np.ndarray]] = []
        for p in fd.params:
            a = args[position[p.name]]
            if isinstance(p, ir.ArrayRef):
                data = self.host_view(a, p.name, copy_back if p.name in fd.written else None)
                if p.name in fd.written and not data.flags.writeable:  # a read-only array taken by from_dlpack
                    raise LaunchError(
                        f"{variant.kernel.__name__}: argument {p.name!r} is a read-only device array (taken with "
                        "gk.from_dlpack of a read-only one) but the kernel writes it; pass a writable array"
                    )
                if isinstance(p.type.elem, StorageType):  # bfloat16 (ml_dtypes or uint16): the bits
                    data = data.view(p.type.elem.dtype)
                flags = self.unwritten.get(a) if isinstance(a, DeviceArray) else None
                if flags is not None and not checked and p.name in fd.written:
                    flags[...] = True  # (through a view: its array's flags, which it shares, too)
                    del self.unwritten[a]  # written unseen: which elements is not known any more
                    flags = None
                frame.arrays[p.name] = run.memory_for_param(p, data, flags)
            else:
                v = convert_scalar(a, p.type, p.name, variant.kernel.__name__)
                frame.vars[p.name] = np.full(run.lanes, v, p.type.dtype)
        for p in variant.kernel_params:
            if p.kind == "tensor_map":  # (the array's address: the simulator's arrays start aligned)
                found = frame.arrays[p.map.array.name]
                why = tma.array_problem(p.map.array.name, found.shape, found.data.dtype.itemsize)
                if why is not None:
                    raise LaunchError(f"{variant.kernel.__name__}: {why}")
                run.maps[p.name] = found
        try:
            if run.width == 64 and checked:
                wave64.report_static(run, wave64.static_findings(variant.program))
            with np.errstate(all="ignore"), ir.deep_recursion():
                run.run_block(fd.body, run.all)
                if run._clusters is not None and checked:
                    run._clusters.finish()
                    run.mem.copies.finish()
            if run._warps is not None and run._warps.reach is not None and checked:
                run._warps.reach.finish()
        finally:
            run.mem.finish()
            for a in args:
                if isinstance(a, DeviceArray) and a in self.unwritten and self.unwritten[a].all():
                    del self.unwritten[a]
        for host, data in copy_back:
            host[...] = data

    def host_view(self, a: Any, name: str, copy_back: list | None) -> np.ndarray:
        if isinstance(a, DeviceArray):
            self._own(a, name)
            return a.handle
        if isinstance(a, np.ndarray):
            data = a.copy()  # the kernel works on a copy, as on a device; written arrays come back
            if copy_back is not None:
                copy_back.append((a, data))
            return data
        raise LaunchError(f"argument {name!r}: the simulator takes NumPy or its own device arrays")

    def to_device(self, array: np.ndarray) -> DeviceArray:
        return DeviceArray(self, array.copy(), array.shape, array.dtype)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        """Zeros, but reads before writes are ``UninitializedReadError`` with checks on."""
        a = DeviceArray(self, np.zeros(shape, dtype), shape, dtype)
        if a.size:  # a record array: a flag per scalar of each record (sim.memory.record_slots)
            names = np.dtype(dtype).names
            slots = sum(count for _, count in record_slots(np.dtype(dtype)).values()) if names else 0
            self.unwritten[a] = np.zeros((a.size, slots) if names else a.size, bool)
        return a

    def download(self, array: DeviceArray) -> np.ndarray:
        return array.handle.copy()

    def view(self, array: DeviceArray, shape: tuple[int, ...]) -> DeviceArray:
        """The memory as NumPy's view of another shape, sharing ``array``'s written flags (they are
        per element in C order), so reads of unwritten elements are found through either."""
        v = DeviceArray(self, array.handle.reshape(shape), shape, array.dtype, owner=array)
        flags = self.unwritten.get(array)
        if flags is not None:
            self.unwritten[v] = flags
        return v

    def address(self, root: DeviceArray, offset: int, shape: tuple[int, ...]) -> Any:
        data = root.handle
        if not data.flags.c_contiguous:
            return None
        return np.ndarray(shape, data.dtype, buffer=data, offset=offset)

    def share_flags(self, root: DeviceArray, view: DeviceArray, offset: int) -> None:
        """A contiguous view's written flags are the slice of its array's (a NumPy view of them)."""
        flags = self.unwritten.get(root)
        if flags is not None:
            start = offset // root.dtype.itemsize
            self.unwritten[view] = flags[start : start + view.size]

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes: the simulator's arrays live in this machine's memory."""
        try:
            page = os.sysconf("SC_PAGE_SIZE")
            return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
        except (AttributeError, ValueError, OSError):  # (no sysconf, or not these names: Windows, macOS)
            return super().memory_info()

    def synchronize(self) -> None:
        pass

    def elapsed(self, start: Any, end: Any) -> float:
        return end - start

    # Streams: every launch and copy runs to completion when it is made, so each stream is already
    # in order with every other and an event is the moment it was recorded.
    def new_stream(self) -> Any:
        return object()

    def stream_synchronize(self, stream: Any) -> None:
        pass

    def stream_wait(self, stream: Any, event: Any) -> None:
        pass

    def record(self, stream: Any) -> Any:
        return time.perf_counter()

    def event_synchronize(self, event: Any) -> None:
        pass

    def event_done(self, event: Any) -> bool:
        return True

    # DLPack: the simulator's device memory is host memory (DLPack's CPU device), NumPy's own.
    def dlpack_device(self) -> tuple[int, int]:
        return (1, 0)

    def dlpack_export(self, array: DeviceArray, stream: Any, max_version: Any) -> Any:
        self.unwritten.pop(array, None)  # the consumer may write it unseen
        if max_version is None:
            return array.handle.__dlpack__()
        return array.handle.__dlpack__(max_version=max_version)

    def dlpack_import(self, x: Any) -> DeviceArray:
        if x.__dlpack_device__()[0] != 1:
            raise LaunchError(
                f"gk.from_dlpack(): the simulator takes host (CPU) memory; this {type(x).__name__} lives on "
                f"DLPack device {tuple(x.__dlpack_device__())}"
            )
        view = np.from_dlpack(x)
        if not view.flags.c_contiguous:
            raise LaunchError("gk.from_dlpack(): the array is not C-contiguous; pass a contiguous copy")
        return DeviceArray(self, view, view.shape, view.dtype)

    def copy_to_device(self, dst: DeviceArray, src: np.ndarray, stream: Any, wait: bool) -> None:
        dst.handle[...] = src
        self.unwritten.pop(dst, None)

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        dst[...] = src.handle

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        dst.handle[...] = src.handle
        flags = self.unwritten.get(src)
        if flags is None:
            self.unwritten.pop(dst, None)
        else:
            self.unwritten[dst] = flags.copy()  # what was not yet written in src is not in dst either
