"""Shared-memory data races: one step of the simulator's memory path (``sim_memory``).

Per element of a shared array and per epoch (from one barrier of its block to the next) the
tracker keeps the thread that wrote it, a thread that read it (and whether several did), a
thread that updated it atomically (and whether several did), and the line of each.  Two
accesses of one element by different threads of a block in one epoch race unless both are
plain reads or both are atomics; a thread never races with itself.

Reads are filed lazily, when a write or atomic of the same array follows in the epoch (or
many reads have piled up): a read can only race with those, and in tiled kernels most reads
are followed by a barrier first, which discards them unexamined.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ir
from ..errors import DataRaceError, Loc
from .sim_access import LOAD, STORE, Access, Memory

# (name, dtype, value after a barrier) of the per-element records.  The *_at records hold a
# site (source line) id, meaningful only where their thread record is set: barriers leave them.
_PLAIN = (
    ("writer", np.int16, -1),  # the thread in block (< 1024) that wrote the element; -1: none
    ("writer_at", np.int16, None),
    ("reader", np.int16, -1),  # a thread that read it
    ("reader_at", np.int16, None),
    ("readers_many", np.bool_, False),  # two or more threads read it
)
_ATOMIC = (
    ("atomic", np.int16, -1),  # a thread that updated it atomically (made on the array's first atomic)
    ("atomic_at", np.int16, None),
    ("atomics_many", np.bool_, False),
)
ELEMENT_BYTES = sum(np.dtype(t).itemsize for _, t, _ in _PLAIN)  # what tracking adds to each shared element
_NOW = {LOAD: "read", STORE: "written"}
_PENDING_PER_LANE = 64  # file unexamined reads once they hold this many elements per lane of the grid


class _Epoch:
    """The records of one shared array (every block's copy) since its block's last barrier."""

    writer: np.ndarray
    writer_at: np.ndarray
    reader: np.ndarray
    reader_at: np.ndarray
    readers_many: np.ndarray
    atomic_at: np.ndarray
    atomics_many: np.ndarray

    def __init__(self, n: int):
        for name, dtype, empty in _PLAIN:
            setattr(self, name, np.full(n, 0 if empty is None else empty, dtype))
        self.n = n
        self.atomic: np.ndarray | None = None
        # whether any write, filed read, atomic happened since a barrier of every block: an
        # access skips the records that are all empty
        self.written = False
        self.filed = False
        self.updated = False
        self.pending: list[tuple[np.ndarray, np.ndarray, int]] = []  # (elements, threads, site) of reads
        self.pending_elements = 0

    def make_atomic(self) -> None:
        for name, dtype, empty in _ATOMIC:
            setattr(self, name, np.full(self.n, 0 if empty is None else empty, dtype))

    def records(self) -> list[tuple[np.ndarray, Any]]:
        """The records a barrier resets, with their empty value."""
        fields = _PLAIN + (_ATOMIC if self.atomic is not None else ())
        return [(getattr(self, name), empty) for name, _, empty in fields if empty is not None]


class SharedRaces:
    """Race tracking for the shared arrays of one launch; ``track`` is the memory-path step."""

    def __init__(self, run: Any):
        self.run = run  # the simulator run: thread numbering, block shape, messages
        self.epochs: dict[Memory, _Epoch] = {}
        self.sites: list[Loc | None] = []
        self.site_of_loc: dict[Loc | None, int] = {}
        self.site_of_node: dict[int, int] = {}
        self.pending_budget = _PENDING_PER_LANE * run.lanes

    def attach(self, mem: Memory) -> None:
        """Track ``mem`` (a shared array just declared)."""
        self.epochs[mem] = _Epoch(mem.data.size)

    def site(self, node: ir.Node) -> int:
        s = self.site_of_node.get(id(node))
        if s is None:
            s = self.site_of_node[id(node)] = self.site_of_loc.setdefault(node.loc, len(self.site_of_loc))
            if s == len(self.sites):
                self.sites.append(node.loc)
        return s

    # ------------------------------------------------------------ the step
    def track(self, a: Access) -> None:
        ep = self.epochs.get(a.memory)
        if ep is None:  # global or local memory, or checks off
            return
        run = self.run
        t = a.per_element(run.thread_in_block if len(a.lanes) == run.lanes else run.thread_in_block[a.lanes])
        where = a.elements()
        site = self.site(a.node)
        if a.kind == LOAD:
            if ep.written:
                self.check_writer(a, ep, where, t)
            if ep.updated:
                self.check_atomics(a, ep, where, t)
            ep.pending.append((where, t, site))
            ep.pending_elements += len(where)
            if ep.pending_elements > self.pending_budget:
                self.file_reads(ep)
            return
        self.file_reads(ep)
        if ep.written:
            self.check_writer(a, ep, where, t)
        if ep.filed:
            self.check_readers(a, ep, where, t)
        if a.kind == STORE:
            if ep.updated:
                self.check_atomics(a, ep, where, t)
            ep.writer[where] = t
            ep.writer_at[where] = site
            if len(where) > 1:  # two threads of one block writing one element in this statement
                last = ep.writer[where]
                again = last != t
                if again.any():
                    k = int(np.argmax(again))
                    self.race(a, where, k, "wrote it in the same statement", int(last[k]), site)
            ep.written = True
            return
        if ep.atomic is None:
            ep.make_atomic()
        before = ep.atomic[where]
        ep.atomic[where] = t
        ep.atomic_at[where] = site
        many = (ep.atomic[where] != t) | ((before >= 0) & (before != t))
        if many.any():
            ep.atomics_many[where[many]] = True
        ep.updated = True

    def check_writer(self, a: Access, ep: _Epoch, where: np.ndarray, t: np.ndarray) -> None:
        w = ep.writer[where]
        bad = (w >= 0) & (w != t)
        if bad.any():
            k = int(np.argmax(bad))
            self.race(a, where, k, "wrote it", int(w[k]), int(ep.writer_at[where[k]]))

    def check_readers(self, a: Access, ep: _Epoch, where: np.ndarray, t: np.ndarray) -> None:
        r = ep.reader[where]
        bad = ((r >= 0) & (r != t)) | ep.readers_many[where]
        if bad.any():
            k = int(np.argmax(bad))
            other = int(r[k]) if r[k] != t[k] else -1
            self.race(a, where, k, "read it", other, int(ep.reader_at[where[k]]))

    def check_atomics(self, a: Access, ep: _Epoch, where: np.ndarray, t: np.ndarray) -> None:
        u = ep.atomic[where]
        bad = (u >= 0) & ((u != t) | ep.atomics_many[where])
        if bad.any():
            k = int(np.argmax(bad))
            other = int(u[k]) if u[k] != t[k] else -1
            self.race(a, where, k, "updated it atomically", other, int(ep.atomic_at[where[k]]))

    @staticmethod
    def file_reads(ep: _Epoch) -> None:
        """Record the pending reads: per element, a thread that read it and whether several did."""
        for where, t, site in ep.pending:
            before = ep.reader[where]
            ep.reader[where] = t
            ep.reader_at[where] = site
            many = (ep.reader[where] != t) | ((before >= 0) & (before != t))
            if many.any():
                ep.readers_many[where[many]] = True
            ep.filed = True
        ep.pending.clear()
        ep.pending_elements = 0

    def barrier(self, blocks: np.ndarray) -> None:
        """A barrier in ``blocks``: their shared memory starts a new epoch."""
        everyone = len(blocks) == self.run.nblocks
        for ep in self.epochs.values():
            if everyone:
                ep.pending.clear()
                ep.pending_elements = 0
                if ep.written or ep.filed or ep.updated:
                    for record, empty in ep.records():
                        record.fill(empty)
                ep.written = ep.filed = ep.updated = False
            else:  # other blocks are between barriers: keep their records
                self.file_reads(ep)
                for record, empty in ep.records():
                    record.reshape(self.run.nblocks, -1)[blocks] = empty

    # ------------------------------------------------------------ the report
    def race(self, a: Access, where: np.ndarray, k: int, before: str, other: int, site: int) -> None:
        """Raise the race of element ``where[k]``: accessed now by lane ``k // width`` of ``a``,
        and ``before`` (wrote it, read it...) by thread ``other`` of its block (-1: unknown) at ``site``."""
        run, mem = self.run, a.memory
        index = [int(x) for x in np.unravel_index(int(where[k]) % mem.size, mem.shape)]
        if other >= 0:
            bx, by, _ = run.block
            by_whom = f"thread {(other % bx, (other // bx) % by, other // (bx * by))}"
        else:
            by_whom = "another thread"
        loc, here = self.sites[site], a.loc
        at = f" at line {loc.lineno}" if loc is not None else ""
        now = _NOW.get(a.kind, "updated atomically")
        raise run.fault(
            DataRaceError,
            f"data race on shared array {mem.name!r}{index}: {now} by {run.who(int(a.lanes[k // a.width]))}"
            f"{f' at line {here.lineno}' if here is not None else ''} after {by_whom} {before}{at}, "
            "with no barrier between; put a barrier() between the two accesses",
            a.node,
        )
