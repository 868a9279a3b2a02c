"""A CPU simulator that runs the typed IR with NumPy and finds kernel bugs.

Every thread of the grid is one *lane* of a NumPy array, and all lanes advance
together through the kernel, statement by statement; divergent control flow
runs a statement under a mask of the lanes that take it.  So a kernel costs a
few NumPy operations per executed statement, not a Python loop per thread.
Lanes are ordered block by block (lane = block * threads_per_block + thread).

With checking on (the default; ``check=False`` or ``GPUKERN_SIM_CHECK=0`` turns it
off) the simulator raises, at the statement that does it:

- ``OutOfBoundsError``: an index outside a global, shared or local array;
- ``DataRaceError``: two threads of a block touching one shared-memory element
  between two barriers, at least one writing;
- ``BarrierDivergenceError``: a barrier reached by some live threads of a block
  but not all.

Arithmetic keeps the kernel's types (float32 stays float32), so results match
the GPU backends within float rounding, and exactly for integer kernels.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import ir, ops
from ..array import DeviceArray
from ..errors import BarrierDivergenceError, DataRaceError, LaunchError, MisalignedAccessError, OutOfBoundsError
from .base import Backend, convert_scalar


@dataclass
class _Memory:
    """One array's storage, and (for shared memory) who touched each element this epoch."""

    name: str
    space: str
    data: np.ndarray  # global: the array; shared: (blocks, *shape); local: (lanes, *shape)
    shape: tuple[int, ...]  # the shape the kernel indexes
    writer: np.ndarray | None = None  # shared: thread (in block) that wrote, -1 none
    reader: np.ndarray | None = None  # shared: a thread that read, -1 none
    readers_many: np.ndarray | None = None  # shared: read by two or more threads
    where: dict[str, Any] = field(default_factory=dict)  # 'w'/'r' -> loc of the last access
    dirty: bool = False  # written since the last barrier
    pending_reads: list[tuple[np.ndarray, np.ndarray, Any]] = field(default_factory=list)


class _Frame:
    """A function activation: its variables and which lanes have returned."""

    def __init__(self, lanes: int):
        self.vars: dict[str, np.ndarray] = {}
        self.arrays: dict[str, _Memory] = {}
        self.returned = np.zeros(lanes, bool)
        self.ret: np.ndarray | None = None


class _Run:
    """One launch: the lanes, the memories, and the statement interpreter."""

    def __init__(self, variant: Any, grid: tuple[int, int, int], block: tuple[int, int, int], check: bool):
        self.variant = variant
        self.kname = variant.kernel.__name__
        self.check = check
        self.grid, self.block = grid, block
        self.tpb = block[0] * block[1] * block[2]
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.lanes = self.tpb * self.nblocks
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
        self.all = np.ones(self.lanes, bool)
        self.lane_ids = lane
        self.bases: dict[tuple[int, bool], np.ndarray] = {}
        self.frames: list[_Frame] = []
        self.prof: Any = None  # a gpukern.profile.Profiler when profiling
        self.breaks: list[np.ndarray] = []
        self.continues: list[np.ndarray] = []

    # ------------------------------------------------------------ errors
    def _tid(self, lane: int) -> tuple[int, ...]:
        return tuple(int(x[lane]) for x in self.tid)

    def who(self, lane: int) -> str:
        b = tuple(int(x[lane]) for x in self.bid)
        t = tuple(int(x[lane]) for x in self.tid)
        return f"block {b}, thread {t}"

    def fault(self, cls: type, message: str, node: ir.Node) -> Exception:
        return cls(f"in kernel {self.kname}: {message}", node.loc)

    # ------------------------------------------------------------ memory
    def memory_for_param(self, ref: ir.ArrayRef, data: np.ndarray) -> _Memory:
        return _Memory(ref.name, "global", data.reshape(-1), tuple(data.shape))  # flat view, C order

    def declare(self, ref: ir.ArrayRef) -> _Memory:
        """A shared array (one row per block) or local array (one row per lane), stored flat."""
        t = ref.type
        shape = t.shape or ()
        rows = self.nblocks if t.space == "shared" else self.lanes
        size = int(np.prod(shape))
        mem = _Memory(ref.name, t.space, np.zeros(rows * size, t.elem.dtype), shape)
        if t.space == "shared" and self.check:
            mem.writer = np.full(rows * size, -1, np.int16)  # thread in block: < 1024
            mem.reader = np.full(rows * size, -1, np.int16)
            mem.readers_many = np.zeros(rows * size, bool)
        return mem

    def locate(self, mem: _Memory, idx: list[np.ndarray], lanes: np.ndarray, node: ir.Node) -> np.ndarray:
        """Flat positions in ``mem.data`` of the element each active lane indexes (bounds checked)."""
        full = len(lanes) == self.lanes  # every lane active: no gathers needed
        wide = mem.data.size >= 2**31 or any(np.asarray(i).dtype.itemsize > 4 for i in idx)
        itype = np.int64 if wide else np.int32
        idx = [
            (np.broadcast_to(i, (self.lanes,)) if full else np.broadcast_to(i, (self.lanes,))[lanes]).astype(
                itype, copy=False
            )
            for i in idx
        ]
        if self.check:
            unsigned = np.uint64 if wide else np.uint32
            for d, (i, n) in enumerate(zip(idx, mem.shape)):
                bad = i.view(unsigned) >= n  # negative indices are huge as unsigned
                if bad.any():
                    k = int(np.argmax(bad))
                    full = tuple(int(x[k]) for x in idx)
                    raise self.fault(
                        OutOfBoundsError,
                        f"index {full} is out of bounds for {mem.space} array {mem.name!r} of shape {mem.shape} "
                        f"(dimension {d}) in {self.who(int(lanes[k]))}",
                        node,
                    )
        flat = idx[0]
        for i, n in zip(idx[1:], mem.shape[1:]):
            flat = flat * n + i
        if mem.space == "global":
            return flat
        size = int(np.prod(mem.shape))
        if mem.space == "shared":
            base = self.block_base(size, wide)
        else:
            base = self.lane_ids.astype(itype) * size
        return (base if full else base[lanes]) + flat

    def block_base(self, size: int, wide: bool) -> np.ndarray:
        """Per lane, where its block's row of a shared array of ``size`` elements starts."""
        key = (size, wide)
        base = self.bases.get(key)
        if base is None:
            base = self.bases[key] = self.block_of.astype(np.int64 if wide else np.int32) * size
        return base

    def track(self, mem: _Memory, where: np.ndarray, lanes: np.ndarray, write: bool, node: ir.Node) -> None:
        """Race bookkeeping for one statement's shared-memory access by ``lanes``.

        Per element and epoch (between barriers) the memory keeps the thread that wrote it,
        a thread that read it, and whether two or more threads read it.
        """
        if mem.writer is None:
            return
        t = self.thread_in_block if len(lanes) == self.lanes else self.thread_in_block[lanes]
        if not write:
            # a read races only with a write of this epoch; who read matters only if a write
            # follows before the barrier, so reads are filed and examined only then
            if mem.dirty:
                prev_w = mem.writer[where]
                other_writer = (prev_w >= 0) & (prev_w != t)
                if other_writer.any():
                    k = int(np.argmax(other_writer))
                    self.race(mem, where, lanes, k, node, "written by another thread since the last barrier", prev_w, t)
            mem.pending_reads.append((where, t, node.loc))
            return
        self.file_reads(mem)
        prev_w = mem.writer[where]
        other_writer = (prev_w >= 0) & (prev_w != t)
        prev_r = mem.reader[where]
        clash = other_writer | mem.readers_many[where] | ((prev_r >= 0) & (prev_r != t))
        if clash.any():
            k = int(np.argmax(clash))
            kind = "written" if other_writer[k] else "read"
            self.race(mem, where, lanes, k, node, f"{kind} by another thread since the last barrier", prev_w, t)
        mem.writer[where] = t
        if len(where) > 1:  # two threads of one block writing one element in this statement
            again = mem.writer[where] != t
            if again.any():
                k = int(np.argmax(again))
                self.race(mem, where, lanes, k, node, "written by two threads at once", mem.writer[where], t)
        mem.where["w"] = node.loc
        mem.dirty = True

    @staticmethod
    def file_reads(mem: _Memory) -> None:
        """Record the pending reads: per element, a thread that read it and whether several did."""
        for where, t, loc in mem.pending_reads:
            prev_r = mem.reader[where]
            mem.reader[where] = t
            many = (mem.reader[where] != t) | ((prev_r >= 0) & (prev_r != t))
            if many.any():
                mem.readers_many[where[many]] = True
            mem.where["r"] = loc
        mem.pending_reads.clear()

    def race(
        self, mem: _Memory, where: np.ndarray, lanes: np.ndarray, k: int, node: ir.Node, what: str, prev: Any, t: Any
    ) -> None:
        lane = int(lanes[k])
        size = int(np.prod(mem.shape))
        index = [int(x) for x in np.unravel_index(int(where[k]) % size, mem.shape)]
        other = ""
        if prev is not None and int(prev[k]) >= 0 and int(prev[k]) != int(t[k]):
            p, (bx, by, _) = int(prev[k]), self.block
            other = f" (by thread {(p % bx, (p // bx) % by, p // (bx * by))})"
        earlier = mem.where.get("w" if "written" in what else "r")
        at = f", earlier access at line {earlier.lineno}" if earlier is not None else ""
        raise self.fault(
            DataRaceError,
            f"data race on shared array {mem.name!r}{index}: accessed by {self.who(lane)} after it was "
            f"{what}{other}{at}; put a barrier() between the two accesses",
            node,
        )

    def reset_epoch(self, blocks: np.ndarray) -> None:
        """A barrier in ``blocks``: their shared memory starts a new epoch."""
        everyone = len(blocks) == self.nblocks
        for mem in self.frames[0].arrays.values():
            if mem.writer is None:
                continue
            if everyone:
                mem.pending_reads.clear()
                mem.writer.fill(-1)
                mem.reader.fill(-1)
                mem.readers_many.fill(False)
                mem.dirty = False
            else:  # other blocks are between barriers: keep their history
                self.file_reads(mem)
                rows = (self.nblocks, -1)
                mem.writer.reshape(rows)[blocks] = -1
                mem.reader.reshape(rows)[blocks] = -1
                mem.readers_many.reshape(rows)[blocks] = False
            mem.where.clear()

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
            self.frame.arrays[s.array.name] = self.declare(s.array)

    def assign(self, var: ir.Var, value: Any, m: np.ndarray) -> None:
        self.assign_name(var.name, var.type.dtype, value, m)

    def assign_name(self, name: str, dtype: np.dtype, value: Any, m: np.ndarray) -> None:
        """Variables are whole-grid arrays, never changed in place (so sharing one is safe)."""
        value = np.broadcast_to(np.asarray(value).astype(dtype, copy=False), (self.lanes,))
        old = self.frame.vars.get(name)
        if m.all():
            self.frame.vars[name] = value
        else:
            self.frame.vars[name] = np.where(m, value, np.zeros(1, value.dtype) if old is None else old)

    def s_Assign(self, s: ir.Assign, m: np.ndarray) -> None:
        self.assign(s.target, self.eval(s.value, m), m)

    def s_Store(self, s: ir.Store, m: np.ndarray) -> None:
        self.write(s.array, [self.eval(i, m) for i in s.indices], self.eval(s.value, m), m, s)

    def write(self, array: ir.ArrayRef, idx: list[Any], value: Any, m: np.ndarray, node: ir.Node) -> None:
        mem = self.memory(array)
        lanes = self.lanes_of(m)
        where = self.locate(mem, idx, lanes, node)
        if mem.space == "shared" and self.check:
            self.track(mem, where, lanes, True, node)
        if self.prof is not None:
            self.profile_access(mem, where, lanes, True, node)
        value = np.broadcast_to(np.asarray(value, mem.data.dtype), (self.lanes,))
        self.access(mem, where, node, value if len(lanes) == self.lanes else value[lanes])

    def vector_lanes(self, s: ir.VecLoad | ir.VecStore, m: np.ndarray) -> list[list[Any]]:
        """The indices of each element of a vector access, after checking its alignment."""
        width = s.width
        idx = [self.eval(i, m) for i in s.indices]
        if self.check:
            shape = self.memory(s.array).shape
            flat = np.broadcast_to(idx[0], (self.lanes,))[m].astype(np.int64)
            for i, n in zip(idx[1:], shape[1:]):
                flat = flat * n + np.broadcast_to(i, (self.lanes,))[m]
            bad = flat % width != 0
            if bad.any():
                k = int(np.argmax(bad))
                raise self.fault(
                    MisalignedAccessError,
                    f"a vector access of {width} elements of {s.array.name!r} starts at element {int(flat[k])}, "
                    f"which is not a multiple of {width}, in {self.who(int(self.lanes_of(m)[k]))}",
                    s,
                )
        last = idx[-1]
        return [idx[:-1] + [last + np.asarray(k, np.asarray(last).dtype)] for k in range(width)]

    def s_VecLoad(self, s: ir.VecLoad, m: np.ndarray) -> None:
        dtype = s.array.type.elem.dtype
        for k, idx in enumerate(self.vector_lanes(s, m)):
            self.assign_name(f"{s.name}[{k}]", dtype, self.read(s.array, idx, m, s), m)

    def s_VecStore(self, s: ir.VecStore, m: np.ndarray) -> None:
        values = [self.eval(v, m) for v in s.values]  # all read before any is written
        for idx, value in zip(self.vector_lanes(s, m), values):
            self.write(s.array, idx, value, m, s)

    def s_ExprStmt(self, s: ir.ExprStmt, m: np.ndarray) -> None:
        self.eval(s.value, m)

    def s_If(self, s: ir.If, m: np.ndarray) -> None:
        c = np.broadcast_to(self.eval(s.cond, m), (self.lanes,)).astype(bool)
        self.run_block(s.then, m & c)
        if s.orelse:
            self.run_block(s.orelse, m & ~c)

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
        if s.value is not None:
            v = np.broadcast_to(self.eval(s.value, m), (self.lanes,))
            f.ret = v.copy() if f.ret is None else np.where(m, v, f.ret)
        f.returned |= m

    def s_Barrier(self, s: ir.Barrier, m: np.ndarray) -> None:
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
                raise self.fault(
                    BarrierDivergenceError,
                    f"barrier reached by {int(arrived[b])} of the {int(live[b])} live threads of block "
                    f"{tuple(int(x[here[0]]) for x in self.bid)}: thread {self._tid(int(here[0]))} arrived, "
                    f"thread {self._tid(int(missing[0]))} did not",
                    s,
                )
            self.reset_epoch(np.nonzero(arrived > 0)[0])

    # ------------------------------------------------------------ expressions
    def memory(self, ref: ir.ArrayRef) -> _Memory:
        return self.frame.arrays[ref.name]

    def eval(self, e: ir.Expr, m: np.ndarray) -> Any:
        return getattr(self, f"e_{type(e).__name__}")(e, m)

    def e_Lit(self, e: ir.Lit, m: np.ndarray) -> Any:
        return e.type.dtype.type(e.value)

    def e_Var(self, e: ir.Var, m: np.ndarray) -> Any:
        return self.frame.vars[e.name]

    def e_Load(self, e: ir.Load, m: np.ndarray) -> Any:
        return self.read(e.array, [self.eval(i, m) for i in e.indices], m, e)

    def e_Lane(self, e: ir.Lane, m: np.ndarray) -> Any:
        return self.frame.vars[f"{e.vector}[{e.lane}]"]

    def read(self, array: ir.ArrayRef, idx: list[Any], m: np.ndarray, node: ir.Node) -> Any:
        mem = self.memory(array)
        lanes = self.lanes_of(m)
        where = self.locate(mem, idx, lanes, node)
        if mem.space == "shared" and self.check:
            self.track(mem, where, lanes, False, node)
        if self.prof is not None:
            self.profile_access(mem, where, lanes, False, node)
        values = self.access(mem, where, node)
        if len(lanes) == self.lanes:
            return values
        out = np.zeros(self.lanes, mem.data.dtype)
        out[lanes] = values
        return out

    def profile_access(self, mem: _Memory, where: np.ndarray, lanes: np.ndarray, write: bool, node: ir.Node) -> None:
        itemsize = mem.data.dtype.itemsize
        if mem.space == "global":
            self.prof.global_access(node.loc, lanes, where, itemsize, write)
        elif mem.space == "shared":
            self.prof.shared_access(node.loc, lanes, where % int(np.prod(mem.shape)), itemsize, write)

    def access(self, mem: _Memory, where: np.ndarray, node: ir.Node, value: Any = None) -> Any:
        """Read (or write ``value`` to) ``mem`` at ``where``; unchecked bad indices still fail cleanly."""
        try:
            if value is None:
                return mem.data[where]
            mem.data[where] = value
        except IndexError:
            raise self.fault(
                OutOfBoundsError,
                f"an index is out of bounds for {mem.space} array {mem.name!r} "
                "(run with checks on to see which thread and index)",
                node,
            ) from None
        return None

    def e_BinOp(self, e: ir.BinOp, m: np.ndarray) -> Any:
        op = ops.BINARY[e.op]
        a, b = self.eval(e.left, m), self.eval(e.right, m)
        if self.prof is not None and e.type.is_float and op.flop:
            self.prof.flops(e.loc, int(np.count_nonzero(m)))
        with np.errstate(all="ignore"):
            return op.numpy(a, b, e.type.dtype)

    def e_Compare(self, e: ir.Compare, m: np.ndarray) -> Any:
        return ops.COMPARE[e.op].numpy(self.eval(e.left, m), self.eval(e.right, m))

    def e_Logic(self, e: ir.Logic, m: np.ndarray) -> Any:
        left = np.broadcast_to(self.eval(e.left, m), (self.lanes,))
        if e.op == "and":
            return left & np.broadcast_to(self.eval(e.right, m & left), (self.lanes,))
        return left | np.broadcast_to(self.eval(e.right, m & ~left), (self.lanes,))

    def e_Unary(self, e: ir.Unary, m: np.ndarray) -> Any:
        with np.errstate(all="ignore"):
            return ops.UNARY[e.op].numpy(self.eval(e.operand, m), e.type.dtype)

    def e_Cast(self, e: ir.Cast, m: np.ndarray) -> Any:
        v = np.asarray(self.eval(e.value, m))
        if e.type.dtype == np.bool_:
            return v != 0
        with np.errstate(all="ignore"):
            return v.astype(e.type.dtype)

    def e_Select(self, e: ir.Select, m: np.ndarray) -> Any:
        c = np.broadcast_to(self.eval(e.cond, m), (self.lanes,)).astype(bool)
        a = self.eval(e.a, m & c)
        b = self.eval(e.b, m & ~c)
        return np.where(c, a, b).astype(e.type.dtype, copy=False)

    def e_MathCall(self, e: ir.MathCall, m: np.ndarray) -> Any:
        args = [self.eval(a, m) for a in e.args]
        if self.prof is not None and e.type.is_float:
            self.prof.flops(e.loc, int(np.count_nonzero(m)))
        return ops.MATH[e.name].evaluate(args, e.args[0].type)

    def e_Special(self, e: ir.Special, m: np.ndarray) -> Any:
        return self.specials[e.name][e.dim]

    def e_Shape(self, e: ir.Shape, m: np.ndarray) -> Any:
        return np.int64(self.memory(e.array).shape[e.dim])

    def e_Atomic(self, e: ir.Atomic, m: np.ndarray) -> Any:
        """Atomics take effect one lane at a time, in lane order (one order a GPU may pick)."""
        mem = self.memory(e.array)
        idx = [self.eval(i, m) for i in e.indices]
        ops = [np.broadcast_to(self.eval(o, m), (self.lanes,)) for o in e.operands]
        lanes = self.lanes_of(m)
        where = self.locate(mem, idx, lanes, e)
        out = np.zeros(self.lanes, mem.data.dtype)
        flat_data, flat = mem.data, where
        vals = [o[lanes] for o in ops]
        if e.op in ("add", "sub"):
            v = vals[0] if e.op == "add" else np.negative(vals[0])
            order = np.argsort(flat, kind="stable")
            f, v = flat[order], v[order].astype(mem.data.dtype)
            first = np.ones(len(f), bool)
            first[1:] = f[1:] != f[:-1]
            group_start = np.maximum.accumulate(np.where(first, np.arange(len(f)), 0))
            with np.errstate(all="ignore"):
                incl = _segmented_cumsum(v, first, group_start)
                old = flat_data[f] + (incl - v)
                olds = np.empty(len(f), mem.data.dtype)
                olds[order] = old
                last = np.ones(len(f), bool)
                last[:-1] = f[1:] != f[:-1]
                flat_data[f[last]] = flat_data[f[last]] + incl[last]
            out[lanes] = olds
            return out
        for j, (k, lane) in enumerate(zip(flat, lanes)):
            cur = flat_data[k]
            out[lane] = cur
            a = vals[0][j]
            if e.op == "min":
                flat_data[k] = a if a < cur else cur
            elif e.op == "max":
                flat_data[k] = a if a > cur else cur
            elif e.op == "exch":
                flat_data[k] = a
            elif e.op == "cas":  # compares bit patterns, as the float CAS of the C backends
                if np.asarray(cur).view(np.uint32) == np.asarray(a, cur.dtype).view(np.uint32):
                    flat_data[k] = vals[1][j]
        return out

    def e_Call(self, e: ir.Call, m: np.ndarray) -> Any:
        frame = _Frame(self.lanes)
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
        return frame.ret if frame.ret is not None else np.zeros(self.lanes, e.type.dtype)


def _segmented_cumsum(v: np.ndarray, first: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Inclusive running sums that restart where ``first`` is set (values sorted by group)."""
    c = np.cumsum(v, dtype=v.dtype)
    base = np.where(group_start > 0, c[np.maximum(group_start - 1, 0)], 0).astype(v.dtype)
    return c - base


class SimBackend(Backend):
    """Runs kernels on the CPU with NumPy, checking for races, divergent barriers and bad indices."""

    name = "sim"
    dialect = None  # type: ignore[assignment]
    max_group = 1024
    max_items = (1024, 1024, 64)
    max_shared = 48 * 1024

    def __init__(self) -> None:
        self.check = os.environ.get("GPUKERN_SIM_CHECK", "1") not in ("0", "false", "no")

    def device_name(self) -> str:
        return "gpukern simulator (CPU, NumPy)" + ("" if self.check else ", checks off")

    def launch(
        self,
        variant: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        check: bool | None = None,
        profiler: Any = None,
    ) -> None:
        """Run ``variant`` on the CPU.  Every thread is a lane of NumPy arrays (about 128 bytes
        each before the kernel's own variables), so a launch of more than 2**24 threads (2 GiB),
        or ``GPUKERN_SIM_MAX_THREADS``, is refused rather than left to exhaust memory."""
        self.check_limits(variant, grid, block)
        threads = math.prod(grid) * math.prod(block)
        setting = os.environ.get("GPUKERN_SIM_MAX_THREADS", "").strip()
        if setting and not setting.isdigit():
            raise LaunchError(f"GPUKERN_SIM_MAX_THREADS={setting!r} is not a number of threads")
        limit = int(setting) if setting else 2**24
        if threads > limit:
            source = "set by GPUKERN_SIM_MAX_THREADS" if setting else "its default; GPUKERN_SIM_MAX_THREADS changes it"
            raise LaunchError(
                f"{variant.kernel.__name__}[{grid}, {block}] asks for {threads} threads; the simulator runs at "
                f"most {limit} per launch ({source}), each thread costing it memory"
            )
        self.check_arrays(variant, args)
        run = _Run(variant, grid, block, self.check if check is None else check)
        if profiler is not None:
            run.prof = profiler
            profiler.start(run)
        frame = _Frame(run.lanes)
        run.frames.append(frame)
        fd = variant.program.kernel
        position = {spec.name: i for i, spec in enumerate(variant.kernel.params)}
        copy_back: list[tuple[np.ndarray, np.ndarray]] = []
        for p in fd.params:
            a = args[position[p.name]]
            if isinstance(p, ir.ArrayRef):
                data = self.host_view(a, p.name, copy_back if p.name in fd.written else None)
                frame.arrays[p.name] = run.memory_for_param(p, data)
            else:
                v = convert_scalar(a, p.type, p.name, variant.kernel.__name__)
                frame.vars[p.name] = np.full(run.lanes, v, p.type.dtype)
        with np.errstate(all="ignore"), ir.deep_recursion():
            run.run_block(fd.body, run.all)
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
        return DeviceArray(self, np.zeros(shape, dtype), shape, dtype)

    def download(self, array: DeviceArray) -> np.ndarray:
        return array.handle.copy()

    def synchronize(self) -> None:
        pass

    def timer(self) -> Any:
        return time.perf_counter()

    def elapsed(self, start: Any, end: Any) -> float:
        return end - start
