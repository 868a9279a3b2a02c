"""Asynchronous copies in flight: one step of the simulator's memory path (``sim.memory``).

``async_copy`` (CUDA's ``cp.async``) starts a copy from global to shared memory that lands at the
issuing thread's ``async_wait`` covering its group; other threads may rely on it only after a
barrier following that wait.  The simulator moves the data when the copy is issued, and this step
keeps, per element, which copies are in flight, so that no kernel can tell the difference: any
access of a destination element, and any write of a source element, while a copy of it is in
flight is a ``DataRaceError`` (reading a source is fine).  When a copy lands, the path hands the
other steps a ``LANDED`` event for its destination: uninitialised-read tracking counts the elements
written then (not at issue), and race tracking records the write then, in the waiting thread's
epoch, so another thread reading it before a barrier that follows the wait is a race as usual.

Groups: each thread counts its commits; a copy belongs to the group its thread has open (the
number of commits so far); ``async_wait(n)`` lands the thread's copies of every group but the
``n`` most recently committed (copies not yet committed stay in flight, as in CUDA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataRaceError
from ..ir import nodes as ir
from .access import LANDED, LOAD, Access, Memory
from .limits import memory_guard

NONE = -1
FLIGHT_BYTES = 2 * np.dtype(np.int32).itemsize  # per element of an array a copy reads or writes: _Flight's


@dataclass(eq=False)
class _Copy:
    """One execution of an ``async_copy`` statement, by its lanes, not yet landed (per lane: its
    group, and the first element of each end)."""

    node: ir.Node
    dst: Access
    src: Access
    group: np.ndarray


@dataclass(eq=False)
class _Reads:
    """One execution of a ``wgmma``'s operand read (``Access.operand``), not yet covered by a
    ``wgmma_wait`` (per lane: its wgmma group)."""

    node: ir.Node
    src: Access
    group: np.ndarray


class _Flight:
    """Per element of one array: the lane whose copy into it is in flight (or NONE), and how many
    copies in flight read it."""

    def __init__(self, n: int):
        self.lane = np.full(n, NONE, np.int32)
        self.readers = np.zeros(n, np.int32)
        self.busy = 0  # elements in flight, either way (0: nothing to check)


class AsyncCopies:
    """The in-flight tracking of one launch (checks on)."""

    def __init__(self, run: Any):
        self.run = run
        self.committed = np.zeros(run.lanes, np.int32)  # per lane: its commits so far (= its open group)
        self.copies: dict[int, _Copy] = {}
        self.next_id = 0
        self.flights: dict[Memory, _Flight] = {}
        self.source: Access | None = None  # the copy's source access, until its destination's
        self.wg_committed = np.zeros(run.lanes, np.int32)  # per lane: its wgmma commits (= its open group)
        self.reads: dict[int, _Reads] = {}

    def flight(self, mem: Memory) -> _Flight:
        f = self.flights.get(mem)
        if f is None:
            with memory_guard(mem.data.size * FLIGHT_BYTES, f"tracking the asynchronous copies of array {mem.name!r}"):
                f = self.flights[mem] = _Flight(mem.data.size)
        return f

    # ------------------------------------------------------------ the step
    def track(self, a: Access) -> None:
        if a.kind == LANDED:
            return
        f = self.flights.get(a.memory)
        if f is not None and f.busy:
            where = a.elements()
            lane = f.lane[where]
            bad = lane != NONE
            if bad.any():
                k = int(np.argmax(bad))
                self.race(a, int(where[k]), k, into=True)
            if a.kind != LOAD:
                bad = f.readers[where] > 0
                if bad.any():
                    k = int(np.argmax(bad))
                    self.race(a, int(where[k]), k, into=False)
        if a.operand:
            self.reads[self.next_id] = _Reads(a.node, a, self.wg_committed[a.lanes].copy())
            self.next_id += 1
            self.mark_read(a, 1)
            return
        if not a.copy:
            return
        if a.kind == LOAD:  # the source: its destination's access comes next
            self.source = a
            return
        src, self.source = self.source, None
        if src is None:
            return
        src, a = paired(src, a)
        cid = self.next_id
        self.next_id += 1
        self.copies[cid] = _Copy(a.node, a, src, self.committed[a.lanes].copy())
        self.mark(a, src, 1)

    def mark(self, dst: Access, src: Access, sign: int) -> None:
        """Put a copy's elements in flight (``sign`` 1) or land them (-1)."""
        f = self.flight(dst.memory)
        where = dst.elements()
        f.lane[where] = dst.per_element(dst.lanes.astype(np.int32)) if sign > 0 else NONE
        f.busy += sign * len(where)
        self.mark_read(src, sign)

    def mark_read(self, src: Access, sign: int) -> None:
        """Count a read in flight of the elements of ``src`` (``sign`` 1), or its end (-1)."""
        g = self.flight(src.memory)
        where = src.elements()
        np.add.at(g.readers, where, sign)
        g.busy += sign * len(where)

    # ------------------------------------------------------------ groups
    def commit(self, lanes: np.ndarray) -> None:
        self.committed[lanes] += 1

    def wait(self, lanes: np.ndarray, pending: int) -> list[Access]:
        """Lanes ``lanes`` wait until at most ``pending`` of their committed groups are in flight:
        the ``LANDED`` events of the copies that land."""
        waiting = np.zeros(self.run.lanes, bool)
        waiting[lanes] = True
        out = []
        for cid, c in list(self.copies.items()):
            done = waiting[c.dst.lanes] & retired(c.group, self.committed[c.dst.lanes], pending)
            if not done.any():
                continue
            dst, src = only_lanes(c.dst, c.dst.lanes[done]), only_lanes(c.src, c.src.lanes[done])
            self.mark(dst, src, -1)
            out.append(Access(dst.memory, c.node, LANDED, dst.lanes, dst.offsets, dst.where, dst.width, dst.indices))
            if done.all():
                del self.copies[cid]
            else:
                left = c.dst.lanes[~done]
                c.dst, c.src, c.group = only_lanes(c.dst, left), only_lanes(c.src, left), c.group[~done]
        return out

    # ------------------------------------------------------------ wgmma groups
    def wgmma_commit(self, lanes: np.ndarray) -> None:
        self.wg_committed[lanes] += 1

    def wgmma_group(self, lanes: np.ndarray) -> np.ndarray:
        """The wgmma group each of ``lanes`` has open."""
        return self.wg_committed[lanes].astype(np.int64)

    def wgmma_retired(self, group: np.ndarray, lanes: np.ndarray, pending: int) -> np.ndarray:
        """Whether wgmma group ``group`` (-1: none) of each of ``lanes`` is done at its ``wgmma_wait(pending)``."""
        return (group >= 0) & retired(group, self.wg_committed[lanes], pending)

    def wgmma_wait(self, lanes: np.ndarray, pending: int) -> None:
        """Lanes ``lanes`` wait until at most ``pending`` of their wgmma groups are in flight: the
        operand reads of the others end."""
        waiting = np.zeros(self.run.lanes, bool)
        waiting[lanes] = True
        for rid, r in list(self.reads.items()):
            done = waiting[r.src.lanes] & retired(r.group, self.wg_committed[r.src.lanes], pending)
            if not done.any():
                continue
            self.mark_read(only_lanes(r.src, r.src.lanes[done]), -1)
            if done.all():
                del self.reads[rid]
            else:
                r.src, r.group = only_lanes(r.src, r.src.lanes[~done]), r.group[~done]

    # ------------------------------------------------------------ the report
    def race(self, a: Access, element: int, k: int, into: bool) -> None:
        """Report access ``a`` (its ``k``-th element, ``element`` of its memory) of an element a copy
        in flight writes (``into``) or reads."""
        run, mem = self.run, a.memory
        lane = int(a.lanes[k // a.width])
        issuer, node, operand = lane, a.node, False
        ends = [(c.node, c.dst if into else c.src, False) for c in self.copies.values()]
        ends += [] if into else [(r.node, r.src, True) for r in self.reads.values()]
        for end_node, end, is_read in ends:  # the first copy (or wgmma) in flight with that element at that end
            if end.memory is mem:
                hit = np.nonzero(end.elements() == element)[0]
                if len(hit):
                    issuer, node, operand = int(end.per_element(end.lanes)[hit[0]]), end_node, is_read
                    break
        index = [int(x) for x in np.unravel_index(element % mem.size, mem.shape)]
        verb = {LOAD: "read", "store": "written", "atomic": "updated atomically"}[a.kind]
        if a.copy and a.kind != LOAD:
            verb = "copied into asynchronously"
        here = f" at line {a.loc.lineno}" if a.loc is not None else ""
        line = f" at line {node.loc.lineno}" if node.loc is not None else ""
        by = "this thread" if issuer == lane else run.who(issuer)
        if operand:
            flight = f"the wgmma() started by {by}{line} reads it (before its wgmma_wait)"
            fix = (
                "a wgmma's operands must not change until wgmma_wait() covers its group, and a barrier() after it "
                "before other threads write them"
            )
        else:
            flight = (
                f"the asynchronous copy {'into' if into else 'from'} it started by {by}{line} is in flight (before "
                "its async_wait)"
            )
            if not into:
                fix = "the source of a copy must not change until the copy has landed: async_wait() for its group first"
            elif issuer == lane:
                fix = "async_wait() for the copy's group before touching its destination"
            else:
                fix = (
                    "the copying thread must async_wait() for the copy's group, then barrier(), before other threads "
                    "touch its destination"
                )
        run.report(
            DataRaceError,
            f"data race on {mem.space} array {mem.name!r}{index}: {verb} by {run.who(lane)}{here} while {flight}; "
            f"{fix}",
            a.node,
            (lane,) if issuer == lane else (lane, issuer),
        )


def retired(group: np.ndarray, committed: np.ndarray, pending: int) -> np.ndarray:
    """Whether group ``group`` of a lane that has committed ``committed`` groups is done when the lane
    waits with ``pending`` groups left in flight (async_wait, wgmma_wait): all but the latest ``pending``."""
    return group < committed - pending


def only_lanes(a: Access, lanes: np.ndarray) -> Access:
    """The part of access ``a`` made by ``lanes`` (a subset of its lanes, ascending)."""
    if len(lanes) == len(a.lanes):
        return a
    pick = np.searchsorted(a.lanes, lanes)
    return Access(
        a.memory, a.node, a.kind, lanes, a.offsets[pick], a.where[pick], a.width, a.indices, a.copy, a.operand
    )


def paired(a: Access, b: Access) -> tuple[Access, Access]:
    """A copy's source and destination accesses by the same lanes (where faults were collected, a
    lane out of bounds at one end skipped that access: it skips the copy)."""
    if len(a.lanes) == len(b.lanes) and (a.lanes == b.lanes).all():
        return a, b
    keep = np.intersect1d(a.lanes, b.lanes)
    return only_lanes(a, keep), only_lanes(b, keep)
