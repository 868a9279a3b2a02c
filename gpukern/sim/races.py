"""Data races in shared and global memory: one step of the simulator's memory path (``sim.memory``).

Two accesses of one element race when they are by different threads, at least one writes, they
are not both atomics, and no barrier orders them.  A barrier orders only the threads of its block:
each block counts the barriers it has passed (its *epoch*), and an access by thread t of block b
is ordered after an earlier one by thread u when u is t, or u is of block b and made it in an
earlier epoch.  Threads of different blocks are ordered only by a ``grid_sync()``, which orders
every access before it before every access after it (the records start afresh).  Shared memory is
one copy per block, so only its own block's threads meet there; global memory is where blocks meet.

Per element of a tracked array the tracker keeps the thread that last wrote it and its epoch; the
latest thread that read it, its epoch, the block of its readers (or ``SEVERAL``) and whether
several threads read it in that epoch; and the same for atomic updates.  That is enough to decide
every race exactly: a reader or updater kept is the latest, and earlier ones of its block are
ordered before any later access that the latest one is.

``syncwarp(mask)`` orders memory among the lanes it syncs (CUDA's ``__syncwarp`` is a memory
barrier among the participating threads), which block epochs cannot say.  In a kernel that calls
it, each thread also keeps a vector clock over the lanes of its warp (``_Clocks``): a syncwarp
advances each participant's own entry, then gives all of them the latest of theirs.  An access
records its thread's own entry (its *clock*); a later access by thread t is also ordered after it
when t's entry for that thread is past the recorded clock (the two synced, directly or through
other lanes, after it).  Several readers of one epoch keep their warp, the lanes they are of and
the latest of their clocks: t is ordered after them when its entry for each of those lanes is past
that clock (exact for one reader; never ordering what is not).

Reads are filed lazily, when a write or atomic of the same array follows (or many have piled up):
a read can only race with those.  After a barrier of every block, nothing recorded in shared
memory can race with what follows, so shared arrays skip their records until they are written
again; in tiled kernels most reads are followed by such a barrier and are never filed.  Global
arrays the kernel never writes cannot race and are not tracked.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..errors import DataRaceError, Loc
from ..ir import nodes as ir
from ..semantics.warp import mask_dtype
from .access import ATOMIC, LANDED, LOAD, STORE, Access, Memory
from .ordering import Ordering

NONE = -1  # no thread recorded
SEVERAL = -2  # readers (or updaters) of several blocks
# The per-element records, as (name, dtype, empty value): a writer's, and a group's (the readers;
# the atomic updaters, made on an array's first atomic).  ``at`` holds a site (source line) id,
# meaningful only where its thread is set.
_WRITER = (("writer", np.int32, NONE), ("writer_epoch", np.int32, 0), ("writer_at", np.int16, 0))
_GROUP = (
    ("thread", np.int32, NONE),
    ("epoch", np.int32, 0),
    ("block", np.int32, NONE),
    ("many", np.bool_, False),
    ("at", np.int16, 0),
)
# under syncwarp, a writer's clock and a group's warp, lanes (bits of the warp) and latest clock
_WRITER_SYNC = (("writer_clock", np.int32, 0),)
_GROUP_SYNC = (("warp", np.int32, NONE), ("lanes", np.uint64, 0), ("clock", np.int32, 0))
ELEMENT_BYTES = sum(np.dtype(t).itemsize for _, t, _ in _WRITER + _GROUP)  # what tracking adds an element


def _make(obj: object, layout: tuple[tuple[str, type, object], ...], n: int) -> None:
    for name, dtype, empty in layout:
        setattr(obj, name, np.full(n, empty, dtype))


_NOW = {LOAD: "read", STORE: "written", ATOMIC: "updated atomically", LANDED: "copied into asynchronously"}
_PENDING_PER_LANE = 64  # file unexamined reads once they hold this many elements per lane of the grid


_NEEDS: weakref.WeakKeyDictionary[Any, tuple[bool, bool, bool]] = weakref.WeakKeyDictionary()


def _needs(program: ir.Program) -> tuple[bool, bool, bool]:
    """What a program's race tracking needs, worked out once per program (not per launch): lane
    clocks (syncwarp, named barriers), warp clocks (``sim.ordering``: named barriers, mbarrier
    arrivals, cluster barriers, peers' shared memory), and whether blocks touch each other's shared
    memory (``peer``)."""
    found = _NEEDS.get(program)
    if found is None:
        nodes = [n for fd in [program.kernel, *program.funcs] for n in ir.walk_body(fd.body)]
        named = any(isinstance(n, ir.NamedBarrier) for n in nodes)
        synced = named or any(isinstance(n, ir.WarpOp) and n.op == "syncwarp" for n in nodes)
        peers = any(isinstance(n, ir.ArrayRef) and n.peer is not None for n in nodes)
        ordered = (
            named
            or peers
            or any(isinstance(n, ir.Mbarrier) and n.op in ("arrive", "arrive_tx") for n in nodes)
            or any(isinstance(n, ir.Barrier) and n.scope == "cluster" for n in nodes)
        )
        found = _NEEDS[program] = (synced, ordered, peers)
    return found


class _Clocks:
    """syncwarp's ordering: per thread, a vector clock over the lanes of its warp (32, or 64)."""

    def __init__(self, run: Any):
        self.width = n = run.width
        per_block = -(-run.tpb // n)
        tib = run.thread_in_block.astype(np.int64)
        self.warp = (run.block_of * per_block + tib // n).astype(np.int32)
        self.lane = tib % n
        t = mask_dtype(n).type
        self.bit = np.left_shift(t(1), self.lane.astype(t))
        self.vc = np.zeros((run.lanes, n), np.int32)  # [thread, lane of its warp]
        self.now = 0  # the last syncwarp's number (one count for the launch: only a lane's own entries compare)

    def own(self, t: np.ndarray) -> np.ndarray:
        """Threads t's clocks: their own entries."""
        return self.vc[t, self.lane[t]]

    def after(self, t: np.ndarray, u: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """Whether thread t has synced, directly or through other lanes, with thread u after u's
        ``clock``."""
        return (self.warp[t] == self.warp[u]) & (self.vc[t, self.lane[u]] > clock)

    def after_all(self, t: np.ndarray, warp: np.ndarray, lanes: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """Whether thread t has synced with each of ``lanes`` (bits, of warp ``warp``) after ``clock``
        (t's own lane is its own program order)."""
        others = lanes & ~self.bit[t]
        named = ((others[:, None] >> np.arange(self.width, dtype=others.dtype)) & 1).astype(bool)
        return (warp == self.warp[t]) & (~named | (self.vc[t] > clock[:, None])).all(axis=1)

    def sync(self, slots: np.ndarray, active: np.ndarray, masks: np.ndarray) -> None:
        """A syncwarp of the lanes ``active`` (warps as rows of grid lanes ``slots``), each with the
        lanes of its mask that execute it."""
        self.now += 1
        lanes = slots[active]
        self.vc[lanes, self.lane[lanes]] = self.now
        clocks = self.vc[slots]  # [warp, lane, entry]
        joint = np.zeros_like(clocks)
        for j in range(self.width):  # lane k takes in lane j's clock where j syncs with it
            member = active[:, j : j + 1] & (((masks >> masks.dtype.type(j)) & 1) == 1)
            joint = np.maximum(joint, np.where(member[:, :, None], clocks[:, j : j + 1, :], 0))
        self.vc[lanes] = joint[active]


class _Group:
    """The readers (or atomic updaters) of each element of an array: the latest one's thread,
    epoch and site, the block they are of (``SEVERAL``: more than one), and whether several
    threads of that block did so in that epoch."""

    thread: np.ndarray
    epoch: np.ndarray
    block: np.ndarray
    many: np.ndarray
    at: np.ndarray

    def __init__(self, n: int, synced: bool, warps: int = 0):
        _make(self, _GROUP, n)
        self.synced = synced
        if synced:
            _make(self, _GROUP_SYNC, n)
        # under sim.ordering: per element, per warp of the block, the latest clock a member read at,
        # and the one thread of that warp that did (SEVERAL: more than one)
        self.wc = np.zeros((n, warps), np.int32) if warps else None
        self.wt = np.full((n, warps), NONE, np.int64) if warps else None

    def unordered(self, where: np.ndarray, t: np.ndarray, b: np.ndarray, e: np.ndarray) -> np.ndarray:
        """Per element: whether some thread of the group is not ordered before thread t (of block
        b in epoch e)."""
        u = self.thread[where]
        blk = self.block[where]
        same_epoch = self.epoch[where] == e
        return (u != NONE) & ((blk != b) | (same_epoch & (self.many[where] | (u != t))))

    def add(
        self,
        where: np.ndarray,
        t: np.ndarray,
        b: np.ndarray,
        e: np.ndarray,
        site: int,
        clocks: _Clocks | None,
        ordering: Ordering | None = None,
    ) -> None:
        """File accesses by lanes t (blocks b, epochs e) of elements ``where`` (repeats allowed)."""
        order = np.argsort(where, kind="stable")
        e = np.broadcast_to(e, where.shape)
        w, t, b, e = where[order], t[order], b[order], e[order]
        first = np.ones(len(w), bool)
        first[1:] = w[1:] != w[:-1]
        starts = np.nonzero(first)[0]
        w_u = w[starts]
        t_last = t[np.append(starts[1:], len(w)) - 1]  # the last lane of each element's run
        e_u = e[starts]
        b_min = np.minimum.reduceat(b, starts)
        b_max = np.maximum.reduceat(b, starts)
        t_min = np.minimum.reduceat(t, starts)
        t_max = np.maximum.reduceat(t, starts)
        new_block = np.where(b_min == b_max, b_min, SEVERAL)
        new_many = t_min != t_max
        old_t, old_b = self.thread[w_u], self.block[w_u]
        old_e, old_many = self.epoch[w_u], self.many[w_u]
        empty = old_t == NONE
        one_block = (old_b == new_block) & (new_block != SEVERAL)
        replace = empty | (one_block & (old_e < e_u))  # earlier ones are ordered before the new ones
        join = one_block & (old_e == e_u)
        many = np.where(replace, new_many, np.where(join, old_many | new_many | (old_t != t_last), True))
        self.block[w_u] = np.where(replace | join, new_block, SEVERAL)
        self.many[w_u] = many
        self.thread[w_u] = t_last
        self.epoch[w_u] = e_u
        self.at[w_u] = site
        if self.wc is not None and self.wt is not None and ordering is not None:
            self.wc[w_u[replace]] = 0  # (those before are ordered before these)
            self.wt[w_u[replace]] = NONE
            warp = ordering.warp[t]
            np.maximum.at(self.wc, (w, warp), ordering.clock(t))
            pair, which = np.unique(w * ordering.per_block + warp, return_inverse=True)
            lo = np.full(len(pair), np.iinfo(np.int64).max)
            hi = np.full(len(pair), -1)
            np.minimum.at(lo, which, t)
            np.maximum.at(hi, which, t)
            pw, pk = pair // ordering.per_block, pair % ordering.per_block
            new = np.where(lo == hi, lo, SEVERAL)
            old = self.wt[pw, pk]
            self.wt[pw, pk] = np.where(old == NONE, new, np.where(old == new, old, SEVERAL))
        if self.synced and clocks is not None:
            warp = clocks.warp[t]
            new_warp = np.where(
                np.minimum.reduceat(warp, starts) == np.maximum.reduceat(warp, starts), warp[starts], SEVERAL
            )
            new_lanes = np.bitwise_or.reduceat(clocks.bit[t], starts)
            new_clock = np.maximum.reduceat(clocks.own(t), starts)
            old_warp, old_lanes, old_clock = self.warp[w_u], self.lanes[w_u], self.clock[w_u]
            self.warp[w_u] = np.where(
                replace, new_warp, np.where(join & (old_warp == new_warp), new_warp, SEVERAL)
            ).astype(np.int32)
            self.lanes[w_u] = np.where(replace, new_lanes, old_lanes | new_lanes)
            self.clock[w_u] = np.where(replace, new_clock, np.maximum(old_clock, new_clock))


class _Records:
    """What the tracker knows of one array (every block's copy of a shared one)."""

    writer: np.ndarray
    writer_epoch: np.ndarray
    writer_at: np.ndarray

    def __init__(self, n: int, shared: bool, synced: bool, warps: int = 0):
        self.shared = shared
        _make(self, _WRITER, n)
        if synced:
            _make(self, _WRITER_SYNC, n)
        self.synced = synced
        self.warps = warps
        self.writer_wc = np.zeros(n, np.int32) if warps else None  # the writer's clock (sim.ordering)
        self.readers = _Group(n, synced, warps)
        self.updaters: _Group | None = None
        self.n = n
        # whether records may hold accesses not ordered before everything to come: after a barrier
        # of every block, a shared array's records are all ordered before what follows
        self.written = False
        self.filed = False
        self.updated = False
        self.pending: list[tuple[np.ndarray, np.ndarray, int, int]] = []  # (elements, lanes, width, site)
        self.pending_elements = 0


class Races:
    """Race tracking for the shared arrays and written global arrays of one launch."""

    def __init__(self, run: Any):
        self.run = run  # the simulator run: lanes, blocks, messages
        self.records: dict[Memory, _Records] = {}
        self.epoch = np.zeros(run.nblocks, np.int32)  # barriers each block has passed
        self.same_epoch: int | None = 0  # the epoch of every block, while they all have one
        self.lane32 = run.lane_ids.astype(np.int32)
        self.block32 = run.block_of.astype(np.int32)
        self.sites: list[Loc | None] = []
        self.site_of_loc: dict[Loc | None, int] = {}
        self.site_of_node: dict[int, int] = {}
        self.pending_budget = _PENDING_PER_LANE * run.lanes
        self.copy_sites: set[int] = set()  # the sites of asynchronous copies (sim_async), for messages
        synced, ordered, self.peers = _needs(run.variant.program)
        self.clocks = _Clocks(run) if synced else None  # only kernels that call syncwarp() need them
        self.order = Ordering(run) if ordered else None
        self.warps = self.order.per_block if self.order is not None else 0
        if self.order is not None:
            self.order.flush = self.file_all

    def file_all(self) -> None:
        for rec in self.records.values():
            self.file_reads(rec)

    def attach(self, mem: Memory) -> None:
        """Track ``mem``: a shared array just declared, or a global array the kernel writes."""
        self.records[mem] = _Records(mem.data.size, mem.space == "shared", self.clocks is not None, self.warps)

    def site(self, node: ir.Node) -> int:
        s = self.site_of_node.get(id(node))
        if s is None:
            s = self.site_of_node[id(node)] = self.site_of_loc.setdefault(node.loc, len(self.site_of_loc))
            if s == len(self.sites):
                self.sites.append(node.loc)
        return s

    # ------------------------------------------------------------ the step
    def track(self, a: Access) -> None:
        rec = self.records.get(a.memory)
        if rec is None:  # local memory, a global array never written, or checks off
            return
        where = a.elements()
        site = self.site(a.node)
        if a.kind == LOAD:
            if rec.written or rec.updated:
                lanes, b, e = self.threads(a.lanes, a.width)
                if rec.written:
                    self.check_writer(a, rec, where, lanes, b, e)
                if rec.updated:
                    self.check_group(a, rec, rec.updaters, where, lanes, b, e, "updated it atomically")
            rec.pending.append((where, a.lanes, a.width, site))
            rec.pending_elements += len(where)
            if rec.pending_elements > self.pending_budget:
                self.file_reads(rec)
            return
        self.file_reads(rec)
        lanes, b, e = self.threads(a.lanes, a.width)
        if rec.written:
            self.check_writer(a, rec, where, lanes, b, e)
        if rec.filed:
            self.check_group(a, rec, rec.readers, where, lanes, b, e, "read it")
        if a.kind == LANDED:  # an asynchronous copy's write, recorded again when (and where) it lands
            self.copy_sites.add(site)
        if a.kind in (STORE, LANDED):
            if rec.updated:
                self.check_group(a, rec, rec.updaters, where, lanes, b, e, "updated it atomically")
            rec.writer[where] = lanes
            rec.writer_epoch[where] = e
            rec.writer_at[where] = site
            if self.clocks is not None:
                rec.writer_clock[where] = self.clocks.own(lanes)
            if rec.writer_wc is not None and self.order is not None:
                rec.writer_wc[where] = self.order.clock(lanes)
            rec.written = True
            if len(where) > 1:  # two threads writing one element in this statement
                again = rec.writer[where] != lanes
                if again.any():
                    k = int(np.argmax(again))
                    self.race(
                        a, where, k, int(lanes[k]), "wrote it in the same statement", int(rec.writer[where[k]]), site
                    )
            return
        if rec.updaters is None:
            rec.updaters = _Group(rec.n, self.clocks is not None, rec.warps)
        rec.updaters.add(where, lanes, b, e, site, self.clocks, self.order)
        rec.updated = True

    def threads(self, lanes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, Any]:
        """Per element of an access by ``lanes`` (``width`` elements each): the lane, its block and
        the block's epoch (one number while every block has the same)."""
        n = self.run.lanes
        if len(lanes) == n and lanes[0] == 0 and lanes[-1] == n - 1:  # every lane of the grid, once each
            t, b = self.lane32, self.block32
        else:
            t, b = lanes.astype(np.int32), self.block32[lanes]
        if width > 1:
            t, b = np.repeat(t, width), np.repeat(b, width)
        return t, b, (np.int32(self.same_epoch) if self.same_epoch is not None else self.epoch[b])

    def check_writer(
        self, a: Access, rec: _Records, where: np.ndarray, t: np.ndarray, b: np.ndarray, e: np.ndarray
    ) -> None:
        w = rec.writer[where]
        ordered = (w == t) | ((w // self.run.tpb == b) & (rec.writer_epoch[where] < e))
        bad = (w != NONE) & ~ordered
        if bad.any() and self.clocks is not None:  # or ordered by syncwarp()s
            k = np.nonzero(bad)[0]
            bad[k] = ~self.clocks.after(t[k], w[k], rec.writer_clock[where[k]])
        if bad.any() and self.order is not None and rec.writer_wc is not None:  # or by mbarriers, named barriers
            k = np.nonzero(bad)[0]
            wk, tk = w[k].astype(np.int64), t[k].astype(np.int64)
            same = self.order.cluster[wk // self.run.tpb] == self.order.cluster[b[k]]  # (warps of one cluster)
            other_warp = same & (self.order.warp[wk] != self.order.warp[tk])
            bad[k] = ~(other_warp & self.order.ordered(tk, self.order.warp[wk], rec.writer_wc[where[k]]))
        if bad.any():
            k = int(np.argmax(bad))
            site = int(rec.writer_at[where[k]])
            wrote = "wrote it"
            if site in self.copy_sites:
                wrote = "copied into it asynchronously (landed at its async_wait)"
            self.race(a, where, k, int(t[k]), wrote, int(w[k]), site)

    def check_group(
        self,
        a: Access,
        rec: _Records,
        group: _Group,
        where: np.ndarray,
        t: np.ndarray,
        b: np.ndarray,
        e: np.ndarray,
        before: str,
    ) -> None:
        bad = group.unordered(where, t, b, e)
        if bad.any() and self.clocks is not None:  # or ordered by syncwarp()s
            k = np.nonzero(bad)[0]
            at = where[k]
            same_block = group.block[at] == b[k]
            bad[k] = ~(same_block & self.clocks.after_all(t[k], group.warp[at], group.lanes[at], group.clock[at]))
        if bad.any() and self.order is not None and group.wc is not None:  # or by mbarriers, named barriers
            k = np.nonzero(bad)[0]
            bad[k] = ~self.group_ordered(group, where[k], t[k].astype(np.int64), b[k], rec.shared)
        if bad.any():
            k = int(np.argmax(bad))
            other = int(group.thread[where[k]])
            self.race(a, where, k, int(t[k]), before, other if other != t[k] else NONE, int(group.at[where[k]]))

    def group_ordered(
        self, group: _Group, at: np.ndarray, t: np.ndarray, b: np.ndarray, shared: bool
    ) -> np.ndarray:
        """Whether threads t (of blocks b) are ordered after every member of ``group`` at elements
        ``at`` by the clocks of ``sim.ordering``: the members are of t's cluster (in ``shared``
        memory, always), those of other warps read before clocks t has taken in, and t's own warp's
        were t itself or before what t has taken in of its warp-mates (``Ordering.mates``)."""
        order = self.order
        assert order is not None and group.wc is not None and group.wt is not None
        wc = group.wc[at]
        own = order.warp[t]
        rows = order.vc[t]
        others = (wc <= rows) | (np.arange(order.per_block) == own[:, None])
        k = np.arange(len(t))
        mine = (wc[k, own] == 0) | (group.wt[at, own] == t) | (wc[k, own] <= order.mates[t])
        same = (group.block[at] == b) | (group.block[at] >= 0) & (order.cluster[group.block[at]] == order.cluster[b])
        return (same | shared) & others.all(axis=1) & mine

    def tma_write(self, a: Access) -> None:
        """A TMA copy into shared elements, issued by ``a.lanes``: every read and write of them before
        must be ordered before the issue (its writes are the copy's, ordered by its mbarrier:
        ``sim.mbarriers``)."""
        rec = self.records.get(a.memory)
        if rec is None:
            return
        self.file_reads(rec)
        where = a.elements()
        lanes, b, e = self.threads(a.lanes, a.width)
        if rec.written:
            self.check_writer(a, rec, where, lanes, b, e)
        if rec.filed:
            self.check_group(a, rec, rec.readers, where, lanes, b, e, "read it")

    def sync_threads(self, lanes: np.ndarray) -> None:
        """Threads of one block meeting at a named barrier: ordered after each other's accesses, their
        warps' lanes among themselves as by a syncwarp (the hardware waits for the whole warp)."""
        if self.order is not None:
            self.order.join(lanes)
        if self.clocks is not None:
            n, c = self.run.width, self.clocks
            warps, first = np.unique(c.warp[lanes], return_index=True)  # (lanes ascending)
            slots = (lanes[first] - c.lane[lanes[first]])[:, None] + np.arange(n)
            inside = slots < self.run.lanes
            slots = np.where(inside, slots, 0)
            inside &= c.warp[slots] == warps[:, None]
            active = inside & np.isin(slots, lanes)
            t = mask_dtype(n).type
            self.syncwarp(slots, active, np.full(slots.shape, ~t(0), mask_dtype(n)))

    def file_reads(self, rec: _Records) -> None:
        """Record the pending reads."""
        for where, lanes, width, site in rec.pending:
            t, b, e = self.threads(lanes, width)
            rec.readers.add(where, t, b, e, site, self.clocks, self.order)
            rec.filed = True
        rec.pending.clear()
        rec.pending_elements = 0

    def barrier(self, blocks: np.ndarray, cluster: bool = False) -> None:
        """A barrier in ``blocks``: their threads' later accesses are ordered after earlier ones (of the
        same block; of the same cluster too, at a ``cluster`` barrier)."""
        everyone = len(blocks) == self.run.nblocks
        clear = everyone and (cluster or not self.peers)  # (another block's accesses of shared memory)
        for rec in self.records.values():
            if rec.shared and clear:  # every record is ordered before whatever comes next
                rec.pending.clear()
                rec.pending_elements = 0
                rec.written = rec.filed = rec.updated = False
            else:  # filed in the epoch they were made in, before it ends
                self.file_reads(rec)
        self.epoch[blocks] += 1
        self.same_epoch = self.same_epoch + 1 if everyone and self.same_epoch is not None else None
        if self.order is not None:
            self.order.block_join(blocks)

    def grid_sync(self) -> None:
        """A barrier of the whole grid: every access recorded so far, in any block and any memory,
        is ordered before every access to come, so the records start afresh."""
        for mem, rec in self.records.items():
            self.records[mem] = _Records(rec.n, rec.shared, rec.synced, rec.warps)
        self.epoch += 1
        self.same_epoch = self.same_epoch + 1 if self.same_epoch is not None else None

    def syncwarp(self, slots: np.ndarray, active: np.ndarray, masks: np.ndarray) -> None:
        """A syncwarp() of the lanes ``active`` (rows: warps of grid lanes ``slots``; ``masks``: each
        lane's): their later accesses are ordered after the earlier ones of the lanes they sync with."""
        if self.clocks is None:
            return
        for rec in self.records.values():  # filed with the clocks they were made at
            self.file_reads(rec)
        self.clocks.sync(slots, active, masks)

    # ------------------------------------------------------------ the report
    def race(self, a: Access, where: np.ndarray, k: int, lane: int, before: str, other: int, site: int) -> None:
        """Report the race at element ``where[k]``: accessed now by ``lane`` and ``before`` (wrote
        it, read it...) by lane ``other`` (NONE: another thread) at ``site``."""
        run, mem = self.run, a.memory
        index = [int(x) for x in np.unravel_index(int(where[k]) % mem.size, mem.shape)]
        by_whom = run.who(other) if other != NONE else "another thread"
        loc, here = self.sites[site], a.loc
        at = f" at line {loc.lineno}" if loc is not None else ""
        if other != NONE and run.block_of[other] != run.block_of[lane] and mem.space == "shared":
            fix = (  # (another block of the cluster: peer, store_async)
                "blocks of a cluster are ordered by a cluster_barrier(), or by an mbarrier phase one waits for "
                "that the other's store_async completes: put one between the two accesses (a second buffer lets "
                "a block run a row ahead)"
            )
        elif other != NONE and run.block_of[other] != run.block_of[lane]:
            fix = (
                "threads of different blocks are ordered only by a grid_sync() (a cooperative launch): make "
                "each element one block's, or put a grid_sync() between the two accesses"
            )
        elif other != NONE and self.clocks is not None and self.clocks.warp[other] == self.clocks.warp[lane]:
            fix = "put a barrier() between the two accesses, or a syncwarp() whose mask has both lanes"
        else:
            fix = "put a barrier() between the two accesses"
        lanes = (lane,) if other == NONE else (lane, other)
        run.report(
            DataRaceError,
            f"data race on {mem.space} array {mem.name!r}{index}: {_NOW[a.kind]} by {run.who(lane)}"
            f"{f' at line {here.lineno}' if here is not None else ''} after {by_whom} {before}{at}, "
            f"with no barrier between; {fix}",
            a.node,
            lanes,
        )
