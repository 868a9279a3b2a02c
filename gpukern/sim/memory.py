"""The simulator's memory path: every load, store, vector access and atomic takes it.

A statement asks the path for one access (``load``, ``store``, ``atomic``; ``width`` elements
a lane).  The path finds each active lane's elements, checking indices against the array's
shape and vector accesses for alignment (checks on), makes one ``Access`` event, hands it to
each *step* in turn (with checks on: asynchronous copies in flight, uninitialised reads, race
tracking; then the profiler when profiling; any step may raise), and only then moves the data.
An asynchronous copy is two accesses (its source read, its destination written) when issued, and
a ``LANDED`` event for the steps when an ``async_wait`` lands it (``sim.asynchronous``).  An analysis joins the path by
being one more step: it sees every access in program order (with checks on, known in bounds).

Arrays are allocated here too, within this machine's memory: a launch whose arrays cannot
fit is a ``LaunchError`` that says how much it would need, not a NumPy error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..errors import MisalignedAccessError, OutOfBoundsError
from ..ir import nodes as ir
from ..semantics import ops
from .access import ATOMIC, LOAD, STORE, Access, Memory
from .asynchronous import AsyncCopies, paired
from .copies import Copies
from .init import FLAG_BYTES, Initialised
from .limits import memory_guard
from .mbarriers import Barriers
from .races import ELEMENT_BYTES, Races

_RUN = 32  # updates of one element folded side by side with other elements' (longer runs: on their own)


class _Runs(NamedTuple):
    """An atomic's updates sorted by element (stable: in lane order within an element)."""

    pos: np.ndarray  # the element of each update
    starts: np.ndarray  # per element: where its run of updates starts
    lengths: np.ndarray  # per element: how many updates it gets
    run: np.ndarray  # per update: the index of its element's run
    rank: np.ndarray  # per update: how many updates of its element precede it


def apply_atomic(data: np.ndarray, where: np.ndarray, rule: Callable[..., np.ndarray], operands: list) -> np.ndarray:
    """Apply ``rule`` at ``where`` one lane at a time, in lane order (one order a GPU may pick), and
    return the value each lane found."""
    n = len(where)
    order = np.argsort(where, kind="stable")
    pos = where[order]
    first = np.ones(n, bool)
    first[1:] = pos[1:] != pos[:-1]
    starts = np.nonzero(first)[0]
    run = np.cumsum(first) - 1
    runs = _Runs(pos, starts, np.diff(np.append(starts, n)), run, np.arange(n) - starts[run])
    sorted_operands = [o[order] for o in operands]
    fold = _accumulate if isinstance(rule, np.ufunc) else _in_rounds
    out = np.empty(n, data.dtype)
    out[order] = fold(data, runs, rule, sorted_operands)
    return out


def _accumulate(data: np.ndarray, runs: _Runs, rule: Any, ops: list[np.ndarray]) -> np.ndarray:
    """A ufunc rule: each run is one ``rule.accumulate`` from the element's value, the same updates in
    the same order; runs of up to ``_RUN`` updates side by side, as the rows of one table."""
    pos, starts, lengths, run, rank = runs
    found = np.empty(len(pos), data.dtype)
    short = lengths <= _RUN
    if short.any():
        row_of = np.cumsum(short) - 1
        mine = short[run]
        rows, cols = row_of[run[mine]], rank[mine] + 1
        heads = pos[starts[short]]
        table = np.zeros((len(heads), int(lengths[short].max()) + 1), data.dtype)
        table[:, 0] = data[heads]
        table[rows, cols] = ops[0][mine]
        table = rule.accumulate(table, axis=1, dtype=data.dtype)
        found[mine] = table[rows, cols - 1]
        data[heads] = table[np.arange(len(heads)), lengths[short]]
    for r in np.nonzero(~short)[0]:
        span = slice(starts[r], starts[r] + lengths[r])
        p = pos[starts[r]]
        values = rule.accumulate(np.concatenate([data[p : p + 1], ops[0][span]]), dtype=data.dtype)
        found[span], data[p] = values[:-1], values[-1]
    return found


def _in_rounds(data: np.ndarray, runs: _Runs, rule: Callable[..., np.ndarray], ops: list[np.ndarray]) -> np.ndarray:
    """Any elementwise rule: round r applies every element's r-th update at once (distinct
    elements); the updates of a run past its ``_RUN``-th are applied one by one."""
    pos, starts, lengths, _, rank = runs
    found = np.empty(len(pos), data.dtype)
    by_rank = np.argsort(rank, kind="stable")
    ends = np.cumsum(np.bincount(rank, minlength=1))
    for r in range(min(len(ends), _RUN)):
        sel = by_rank[(ends[r - 1] if r else 0) : ends[r]]
        p = pos[sel]
        found[sel] = data[p]
        data[p] = rule(data[p], *(o[sel] for o in ops))
    for r in np.nonzero(lengths > _RUN)[0]:
        p = pos[starts[r]]
        for j in range(starts[r] + _RUN, starts[r] + lengths[r]):
            found[j] = data[p]
            data[p] = rule(data[p : p + 1], *(o[j : j + 1] for o in ops))[0]
    return found


def record_slots(dtype: np.dtype) -> dict[str, tuple[int, int]]:
    """Per field of a structured dtype, in the dtype's order: its first flag column and how many
    scalars it holds (a sub-array field has one per element), for the empty() flags of records."""
    out, at = {}, 0
    for name in dtype.names:
        sub = dtype.fields[name][0]
        count = int(np.prod(sub.shape, dtype=np.int64)) if sub.shape else 1
        out[name], at = (at, count), at + count
    return out


# ---------------------------------------------------------------- the path
class MemoryPath:
    """Memory of one launch: its arrays, and the access path with its steps."""

    def __init__(self, run: Any, check: bool):
        self.run = run  # the simulator run: lanes, blocks, messages
        self.check = check
        self.races = Races(run) if check else None
        self.initialised = Initialised(run) if check else None
        self.in_flight = AsyncCopies(run) if check else None
        self.barriers = Barriers(run)  # mbarriers and bulk copies: their state is the program's, checks or not
        self.copies = Copies(run, self.barriers)
        self.profiler: Any = None
        self.steps: list[Callable[[Access], None]] = []
        self.bases: dict[tuple[int, bool], np.ndarray] = {}
        self.dynamic_buffer: np.ndarray | None = None  # the dynamic shared bytes of every block
        self.dynamic_views: dict[np.dtype, Memory] = {}  # that buffer per element type
        # record arrays: whether the kernel writes each, its empty() flags (a column per scalar of a
        # record: ``record_slots``), and the memory of each field reached
        self.record_arrays: dict[Memory, tuple[bool, np.ndarray | None]] = {}
        self.fields: dict[tuple[Memory, str], Memory] = {}
        self.write_backs: list[Callable[[], None]] = []  # sub-array fields: copies to put back (``finish``)
        self.set_profiler(None)

    def set_profiler(self, profiler: Any) -> None:
        """Count accesses with ``profiler.access(event)`` (None: stop).  Steps run in this order."""
        self.profiler = profiler
        self.steps = []
        if self.in_flight is not None:  # first: touching a copy in flight is a race, not a read of nothing
            self.steps.append(self.in_flight.track)
        if self.initialised is not None:
            self.steps.append(self.initialised.track)
        if self.races is not None:
            self.steps.append(self.races.track)
        if profiler is not None:
            self.steps.append(profiler.access)

    def barrier(self, blocks: np.ndarray) -> None:
        if self.races is not None:
            self.races.barrier(blocks)

    def grid_sync(self) -> None:
        if self.races is not None:
            self.races.grid_sync()

    def cluster_barrier(self, blocks: np.ndarray, clusters: np.ndarray) -> None:
        """A cluster_barrier() of the clusters of ``blocks`` (each one's cluster: ``clusters``)."""
        if self.races is not None:
            self.races.barrier(blocks, cluster=True)
            if self.races.order is not None:
                self.races.order.cluster_join(blocks, clusters)

    def sync_threads(self, block: int, lanes: np.ndarray) -> None:
        """Threads ``lanes`` of ``block`` met at a named barrier: all of its live ones, a barrier();
        some, ordered among themselves (``sim.ordering``)."""
        if self.races is None:
            return
        run = self.run
        live = np.nonzero((run.block_of == block) & ~run.frames[0].returned)[0]
        if np.isin(live, lanes).all():
            self.races.barrier(np.array([block]))
        else:
            self.races.sync_threads(np.unique(lanes))

    def async_copy(
        self, dst: Memory, dst_idx: list[Any], src: Memory, src_idx: list[Any], m: np.ndarray, s: ir.AsyncCopy
    ) -> None:
        """Each active lane's asynchronous copy: its source read and destination written now, as two
        accesses the steps see (the profiler counts them as a load and a store), the data moved now;
        with checks on, ``sim.asynchronous`` keeps them in flight until an ``async_wait`` lands them."""
        a = self.access(src, src_idx, m, s, LOAD, s.width, s.src, copy=True)
        b = self.access(dst, dst_idx, m, s, STORE, s.width, s.dst, copy=True)
        a, b = paired(a, b)
        for k in range(s.width):
            self.move(b, k, self.move(a, k))

    def async_commit(self, m: np.ndarray) -> None:
        if self.in_flight is not None:
            self.in_flight.commit(self.run.lanes_of(m))

    def async_wait(self, m: np.ndarray, pending: int) -> None:
        """The copies that land: each a ``LANDED`` event for the steps."""
        if self.in_flight is None:
            return
        for event in self.in_flight.wait(self.run.lanes_of(m), pending):
            for step in self.steps:
                step(event)

    def syncwarp(self, slots: np.ndarray, active: np.ndarray, masks: np.ndarray) -> None:
        """A syncwarp() of lanes ``active`` of the warps ``slots`` (grid lanes), each with its mask."""
        if self.races is not None:
            self.races.syncwarp(slots, active, masks)

    # ------------------------------------------------------------ arrays
    def param(self, ref: ir.ArrayRef, data: np.ndarray, written: bool, unwritten: np.ndarray | None) -> Memory:
        """A global array: ``written`` if the kernel may write it (only those can race);
        ``unwritten``: the flags of an array from ``empty()`` not yet wholly written."""
        mem = Memory(ref.name, "global", data.reshape(-1), tuple(data.shape))  # flat view, C order
        if data.dtype.names is not None:  # a record array: its fields are tracked, as they are reached
            self.record_arrays[mem] = (written, unwritten)
            return mem
        if self.check:
            if written:
                what = (
                    f"in kernel {self.run.kname}: race tracking of global array {ref.name!r} ({data.size:,} elements)"
                )
                with memory_guard(data.size * ELEMENT_BYTES, what):
                    self.races.attach(mem)
            if unwritten is not None:
                self.initialised.attach(mem, unwritten)
        return mem

    def table(self, ref: ir.ArrayRef, data: np.ndarray) -> Memory:
        """A constant table: read-only (nothing to track but bounds); a table of records reaches its
        fields through views, as a global record array does."""
        mem = Memory(ref.name, "constant", data.reshape(-1), tuple(data.shape))
        if data.dtype.names is not None:
            self.record_arrays[mem] = (False, None)
        return mem

    def declare(self, ref: ir.ArrayRef, node: ir.Node) -> Memory:
        """A shared array (a copy per block) or local array (a copy per lane)."""
        if ref.type.shape is None:
            return self.declare_dynamic(ref, node)
        run, t = self.run, ref.type
        shape = t.shape or ()
        shared = t.space == "shared"
        copies = run.nblocks if shared else run.lanes
        n = copies * int(np.prod(shape, dtype=object))
        tracked = shared and self.races is not None
        need = n * (t.elem.dtype.itemsize + (ELEMENT_BYTES if tracked else 0) + (FLAG_BYTES if self.check else 0))
        line = f", line {node.loc.lineno}" if node.loc is not None else ""
        what = (
            f"in kernel {run.kname}{line}: {t.space} array {ref.name!r} of shape {shape}, one copy per "
            f"{'block' if shared else 'thread'} for {copies:,} {'blocks' if shared else 'threads'},"
        )
        with memory_guard(need, what):
            mem = Memory(ref.name, t.space, np.zeros(n, t.elem.dtype), shape)
            if tracked:
                self.races.attach(mem)
            if self.initialised is not None:
                self.initialised.attach(mem)
        return mem

    def field(self, mem: Memory, name: str) -> Memory:
        """Field ``name`` of record array ``mem``: a view of the field in every record, so each access
        moves the field's own bytes; its events give its real addresses (``stride``, ``offset``) to
        the profiler, and each field has its own race tracking and empty() flags (fields of one
        record are distinct memory: two threads writing two fields of a record do not race).
        A sub-array field (``h[2]`` in each record) is no flat view of the records: the kernel gets
        a flat copy of it, put back by ``finish``."""
        found = self.fields.get((mem, name))
        if found is not None:
            return found
        written, unwritten = self.record_arrays[mem]
        dtype = mem.data.dtype
        sub, offset = dtype.fields[name][:2]
        start, count = record_slots(dtype)[name]
        flags = None if unwritten is None else unwritten[:, start]
        if sub.shape:
            records, base = mem.data[name], sub.base
            data = np.ascontiguousarray(records).reshape(-1)
            if unwritten is not None:
                flags = unwritten[:, start : start + count].reshape(-1)  # (a copy, put back too)
            view = Memory(f"{mem.name}.{name}", mem.space, data, mem.shape + sub.shape, dtype.itemsize, offset, count)

            def put_back(records: np.ndarray = records, data: np.ndarray = data, flags: Any = flags) -> None:
                if written:
                    records[...] = data.reshape(records.shape).view(base)
                if flags is not None:
                    unwritten[:, start : start + count] = flags.reshape(-1, count)

            self.write_backs.append(put_back)
        else:
            view = Memory(f"{mem.name}.{name}", mem.space, mem.data[name], mem.shape, dtype.itemsize, offset)
        if self.check:
            if written:
                what = f"in kernel {self.run.kname}: race tracking of field {name!r} of {mem.name!r}"
                with memory_guard(view.data.size * ELEMENT_BYTES, what):
                    self.races.attach(view)
            if flags is not None:
                self.initialised.attach(view, flags)
        self.fields[(mem, name)] = view
        return view

    def finish(self) -> None:
        """Put back what the kernel wrote into copies (sub-array fields of records), also after a fault."""
        for put_back in self.write_backs:
            put_back()
        self.write_backs.clear()

    def declare_dynamic(self, ref: ir.ArrayRef, node: ir.Node) -> Memory:
        """A dynamic_shared() array: a view, as its element type, of the launch's dynamic shared bytes
        (one buffer of ``dynamic_bytes`` per block, shared by every such array of the kernel, from
        byte 0).  Arrays of one element type are one ``Memory``, so races and uninitialised reads are
        tracked across them; where a kernel views the bytes as several types, only bounds are checked
        (a write through one view would look like nothing to the other's tracking)."""
        run, t = self.run, ref.type
        mem = self.dynamic_views.get(t.elem.dtype)
        if mem is not None:
            return mem
        nbytes = run.dynamic_bytes
        if self.dynamic_buffer is None:
            line = f", line {node.loc.lineno}" if node.loc is not None else ""
            what = (
                f"in kernel {run.kname}{line}: {nbytes:,} bytes of dynamic shared memory, one copy per block "
                f"for {run.nblocks:,} blocks,"
            )
            with memory_guard(run.nblocks * nbytes * (1 + ELEMENT_BYTES + FLAG_BYTES), what):
                self.dynamic_buffer = np.zeros(run.nblocks * nbytes, np.uint8)
        kinds = {r.type.elem.dtype for r in run.variant.dynamic_shared}
        name = "/".join(r.name for r in run.variant.dynamic_shared if r.type.elem == t.elem)
        mem = self.dynamic_views[t.elem.dtype] = Memory(
            name, "shared", self.dynamic_buffer.view(t.elem.dtype), (nbytes // t.elem.itemsize,)
        )
        if len(kinds) == 1:
            if self.races is not None:
                self.races.attach(mem)
            if self.initialised is not None:
                self.initialised.attach(mem)
        return mem

    # ------------------------------------------------------------ accesses
    def load(
        self, mem: Memory, idx: list[Any], m: np.ndarray, node: ir.Node, width: int = 1, operand: bool = False
    ) -> list[np.ndarray]:
        """The ``width`` elements each active lane reads, one whole-grid array per element
        (``operand``: a wgmma's operand read, ``Access.operand``)."""
        a = self.access(mem, idx, m, node, LOAD, width, operand=operand)
        if self.check and mem in self.copies.tiles:  # a bulk copy's destination: waited for?
            self.copies.check_read(a)
        full = len(a.lanes) == self.run.lanes
        out = []
        for k in range(width):
            values = self.move(a, k)
            if not full:
                values, part = np.zeros(self.run.lanes, mem.data.dtype), values
                values[a.lanes] = part
            out.append(values)
        return out

    def store(self, mem: Memory, idx: list[Any], values: list[Any], m: np.ndarray, node: ir.Node) -> None:
        """Each active lane writes ``values`` (one per element: a whole-grid array or a scalar)."""
        a = self.access(mem, idx, m, node, STORE, len(values))
        if mem in self.copies.tiles or mem in self.copies.reading:
            self.copies.written(a)
        full = len(a.lanes) == self.run.lanes
        for k, v in enumerate(values):
            v = np.broadcast_to(np.asarray(v, mem.data.dtype), (self.run.lanes,))
            self.move(a, k, v if full else v[a.lanes])

    def atomic(
        self, mem: Memory, op: str, idx: list[Any], operands: list[np.ndarray], m: np.ndarray, node: ir.Node
    ) -> np.ndarray:
        """A read-modify-write by each active lane; returns the old values (whole-grid array)."""
        a = self.access(mem, idx, m, node, ATOMIC)
        full = len(a.lanes) == self.run.lanes
        values = [(o if full else o[a.lanes]).astype(mem.data.dtype, copy=False) for o in operands]
        try:
            found = apply_atomic(mem.data, a.where, ops.ATOMIC[op].update, values)
        except IndexError:
            raise self.unchecked_fault(a) from None
        out = np.zeros(self.run.lanes, mem.data.dtype)
        out[a.lanes] = found
        return out

    def move(self, a: Access, k: int, value: Any = None) -> Any:
        """Read (or write ``value`` to) element ``k`` of every lane's access."""
        where = a.where if k == 0 else a.where + k
        try:
            if value is None:
                return a.memory.data[where]
            a.memory.data[where] = value
        except IndexError:
            raise self.unchecked_fault(a) from None
        return None

    def unchecked_fault(self, a: Access) -> Exception:
        mem = a.memory
        return self.run.fault(
            OutOfBoundsError,
            f"an index is out of bounds for {mem.space} array {mem.name!r} "
            "(run with checks on to see which thread and index)",
            a.node,
        )

    def access(
        self,
        mem: Memory,
        idx: list[Any],
        m: np.ndarray,
        node: ir.Node,
        kind: str,
        width: int = 1,
        ref: ir.ArrayRef | None = None,
        copy: bool = False,
        operand: bool = False,
        steps: bool = True,
    ) -> Access:
        """Locate the active lanes' elements (checked), make the event, and run the steps on it.
        ``ref``: the array as the statement names it, where it is not ``node.array`` (an async copy's
        two); ``copy``: an asynchronous copy's access (``Access.copy``); ``steps``: False to locate
        only (an mbarrier's word, a TMA copy's first element: ``sim.mbarriers`` tracks them)."""
        run = self.run
        lanes = run.lanes_of(m)
        full = len(lanes) == run.lanes  # every lane active: no gathers needed
        wide = mem.data.size >= 2**31 or any(np.asarray(i).dtype.itemsize > 4 for i in idx)
        itype = np.int64 if wide else np.int32
        ix = [(np.broadcast_to(i, (run.lanes,)) if full else np.broadcast_to(i, (run.lanes,))[lanes]) for i in idx]
        ix = [i.astype(itype, copy=False) for i in ix]
        flat = ix[0] if ix else np.zeros(len(lanes), itype)  # a 0-dimensional array: its one element
        for i, n in zip(ix[1:], mem.shape[1:]):
            flat = flat * n + i
        if self.check:
            view = getattr(ref or getattr(node, "array", None), "view", None)  # an access through a view
            keep = None if view is None else self.check_view(view, mem, ix, m, lanes, width, node)
            if keep is not None:  # faults being collected: the lanes outside the view skip the access
                lanes, ix, flat, full = lanes[keep], [i[keep] for i in ix], flat[keep], False
            keep = self.check_bounds(mem, ix, flat, idx, lanes, width, wide, node, view)
            if keep is not None:  # faults being collected: the lanes out of bounds skip the access
                lanes, flat, full = lanes[keep], flat[keep], False
        peer = getattr(ref or getattr(node, "array", None), "peer", None)
        if mem.space in ("global", "constant"):  # one copy for the whole grid
            where = flat
        elif peer is not None:  # another block's copy (peer(a, rank): sim.cluster)
            blocks, ok = run.clusters.targets(lanes, run.eval(peer, m), node)
            if not ok.all():
                lanes, flat, blocks, full = lanes[ok], flat[ok], blocks[ok], False
            where = blocks.astype(itype) * mem.size + flat
        else:
            base = self.block_base(mem.size, wide) if mem.space == "shared" else run.lane_ids.astype(itype) * mem.size
            where = (base if full else base[lanes]) + flat
        a = Access(mem, node, kind, lanes, flat, where, width, idx, copy, operand)
        if steps:
            for step in self.steps:
                step(a)
        return a

    def block_base(self, size: int, wide: bool) -> np.ndarray:
        """Per lane, where its block's copy of a shared array of ``size`` elements starts."""
        key = (size, wide)
        base = self.bases.get(key)
        if base is None:
            base = self.bases[key] = self.run.block_of.astype(np.int64 if wide else np.int32) * size
        return base

    def check_view(
        self,
        view: ir.View,
        mem: Memory,
        ix: list[np.ndarray],
        m: np.ndarray,
        lanes: np.ndarray,
        width: int,
        node: ir.Node,
    ) -> np.ndarray | None:
        """An access through a view (``gpukern.frontend.views``): each lane's index, as the view's own (found
        from the base's: ``(index - start) // step``), within the view's extent, which is checked
        per lane as the view was made.  Returns None, or (faults being collected) the lanes within it."""
        run = self.run

        def per_lane(e: ir.Expr) -> np.ndarray:
            return np.broadcast_to(run.eval(e, m), (run.lanes,))[lanes].astype(np.int64)

        dims = [d for d, step in enumerate(view.steps) if step != 0]
        ks = [(ix[d].astype(np.int64) - per_lane(view.starts[d])) // view.steps[d] for d in dims]
        ns = [per_lane(n) for n in view.lengths]
        outside = None
        for j, (k, n) in enumerate(zip(ks, ns)):
            valid = n - (width - 1 if j == len(ks) - 1 else 0)
            bad = (k < 0) | (k >= valid)
            if bad.any():
                at = int(np.argmax(bad))
                index = tuple(int(kk[at]) for kk in ks)
                shape = tuple(int(nn[at]) for nn in ns)
                what = f"index {index}" if width == 1 else f"a vector access of {width} elements at index {index}"
                run.report(
                    OutOfBoundsError,
                    f"{what} is out of bounds for the view {view.label} of shape {shape} (dimension {j}), "
                    f"a view of {mem.space} array {mem.name!r} of shape {mem.shape}, in {run.who(int(lanes[at]))}",
                    node,
                    (int(lanes[at]),),
                )
                outside = bad if outside is None else outside | bad
        return None if outside is None else ~outside

    def check_bounds(
        self,
        mem: Memory,
        ix: list[np.ndarray],
        flat: np.ndarray,
        idx: list[Any],
        lanes: np.ndarray,
        width: int,
        wide: bool,
        node: ir.Node,
        view: ir.View | None = None,
    ) -> np.ndarray | None:
        """Every index within its dimension (a vector's last element too), vectors aligned.
        Returns None, or (faults being collected) which lanes are within bounds.

        Messages show the kernel's own index values (``idx``), not the converted ``ix``."""
        run = self.run

        def true_index(k: int) -> tuple[int, ...]:
            return tuple(int(np.broadcast_to(i, (run.lanes,))[lanes[k]]) for i in idx)

        if width > 1:
            bad = flat % width != 0
            if bad.any():
                k = int(np.argmax(bad))
                start = sum(i * int(np.prod(mem.shape[d + 1 :])) for d, i in enumerate(true_index(k)))
                run.report(
                    MisalignedAccessError,
                    f"a vector access of {width} elements of {mem.name!r} starts at element {start}, "
                    f"which is not a multiple of {width}, in {run.who(int(lanes[k]))}",
                    node,
                    (int(lanes[k]),),
                )
        unsigned = np.uint64 if wide else np.uint32
        last = len(ix) - 1
        outside = None
        for d, (i, n) in enumerate(zip(ix, mem.shape)):
            valid = n - (width - 1 if d == last else 0)  # valid (start) indices are 0 .. valid - 1
            bad = i.view(unsigned) >= max(valid, 0)  # negative indices are huge as unsigned
            if bad.any():
                k = int(np.argmax(bad))
                at = true_index(k)
                what = f"index {at}" if width == 1 else f"a vector access of {width} elements at index {at}"
                through = "" if view is None else f", through the view {view.label},"
                run.report(
                    OutOfBoundsError,
                    f"{what} is out of bounds for {mem.space} array {mem.name!r} of shape {mem.shape} "
                    f"(dimension {d}){through} in {run.who(int(lanes[k]))}",
                    node,
                    (int(lanes[k]),),
                )
                outside = bad if outside is None else outside | bad
        return None if outside is None else ~outside
