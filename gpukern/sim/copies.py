"""sm_90's bulk copies on the simulator: TMA loads and stores (``semantics.tma``), multicast to a
cluster's blocks, and plain bulk copies of contiguous elements.

A load moves its data when issued -- a TMA box's zeros where it leaves the array -- into its block's
shared memory or, multicast, into each chosen block of the cluster at the same place, and its bytes
complete on the mbarrier at the same place of each block then (``sim.mbarriers``).  The
destination's elements remember the barrier and phase they land in, and a thread reading one before
it has *seen* that phase complete is a ``DataRaceError``: on a GPU it could read the data before
the copy wrote it.  Whatever was read or written there before must be ordered before the issue
(``sim.races``: a stage a consumer still reads, a wgmma operand in flight).  The copy counts as the
destination's write for the uninitialised-read step; race tracking leaves its elements to the
barrier's ordering.

A store (TMA, or a plain bulk store) reads its shared source and writes the global array when
issued, both checked as accesses; the source counts as read, for the writes that follow, until the
thread's ``tma_store_wait`` covers its bulk group.

Reported at the line: a destination or source running past its shared array or off its alignment
(``gk.OutOfBoundsError``, ``gk.MisalignedAccessError``), a multicast to a block outside the cluster,
and the races above.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataRaceError, MisalignedAccessError, OutOfBoundsError, UninitializedReadError
from ..ir import nodes as ir
from ..semantics import tma
from .access import LANDED, LOAD, STORE, Access, Memory
from .asynchronous import paired

NONE = -1


class _Tiles:
    """Per element of one shared array: the barrier (its array, one of ``arrays``, and its state
    entry) and the phase in which a copy into it completes, or NONE.  (Copies into one array may
    complete on barriers of several arrays: Q on one, K and V on others.)"""

    def __init__(self, n: int):
        self.bar = np.full(n, NONE, np.int64)
        self.array = np.zeros(n, np.int64)  # which of ``arrays``
        self.phase = np.zeros(n, np.int64)
        self.arrays: list[Memory] = []

    def array_index(self, m: Memory) -> int:
        if m not in self.arrays:
            self.arrays.append(m)
        return self.arrays.index(m)


class Copies:
    """The bulk copies of one launch and what they leave behind."""

    def __init__(self, run: Any, barriers: Any):
        self.run = run
        self.barriers = barriers  # sim.mbarriers.Barriers: the states copies complete on
        self.tiles: dict[Memory, _Tiles] = {}
        # stores: per shared array, the lane whose store still reads each element (or NONE) and its
        # bulk group; per lane, the groups it has committed
        self.reading: dict[Memory, np.ndarray] = {}
        self.reading_group: dict[Memory, np.ndarray] = {}
        self.committed: dict[int, int] = {}
        # store_async's into another block, for ``finish``: per (its block, barrier array, element, phase)
        # it completes, the first storing lane and its node
        self.stored: dict[tuple[int, Memory, int, int], tuple[int, ir.Node]] = {}

    # ------------------------------------------------------------ loads
    def tma_load(self, s: ir.TmaLoad, m: np.ndarray, maps: dict[str, Memory]) -> None:
        run = self.run
        dst = run.memory(s.dst)
        src = maps[s.map.name]
        box, itemsize = s.map.box, dst.data.dtype.itemsize
        d = run.mem.access(dst, [run.eval(i, m) for i in s.dst_indices], m, s, STORE, steps=False, ref=s.dst)
        if not len(d.lanes):
            return
        coords = [np.broadcast_to(np.asarray(run.eval(c, m)), (run.lanes,))[d.lanes].astype(np.int64) for c in s.coords]
        masks = None if s.multicast is None else np.broadcast_to(run.eval(s.multicast, m), (run.lanes,))[d.lanes]
        bar = self.barrier(s, m)
        if bar is None:
            return
        nbytes = tma.box_elements(box) * itemsize
        for k, lane in enumerate(d.lanes):
            start = int(d.offsets[k])
            offsets = tma.shared_offsets(box, itemsize, s.map.swizzle, start * itemsize)
            if run.check:  # (reported; the copy still moves, so what follows is not this fault's doing)
                self.inner_aligned(s, "tma_load", int(coords[-1][k]), itemsize, int(lane))
            if run.check and (start % (tma.SHARED_ALIGN // itemsize) or offsets.max() >= dst.size):
                why = (
                    f"starts at element {start}, not a multiple of {tma.SHARED_ALIGN} bytes"
                    if start % (tma.SHARED_ALIGN // itemsize)
                    else f"runs past the end of {dst.name!r} ({dst.size} elements)"
                )
                run.report(
                    OutOfBoundsError,
                    f"tma_load: {run.who(int(lane))} copies a box of {box} elements into {dst.name!r} that {why}",
                    s,
                    (int(lane),),
                )
                continue
            flat, inside = tma.global_indices(box, tuple(int(c[k]) for c in coords), src.shape)
            values = np.where(inside, src.data[flat], np.zeros((), src.data.dtype)).ravel()
            mask = None if masks is None else int(masks[k])
            blocks = self.blocks(s, int(lane), mask)
            if run.prof is not None:  # (a multicast: its sectors counted once per block it lands in)
                at = tuple(int(c[k]) for c in coords)
                nb, sectors = tma.traffic(box, at, src.shape, itemsize, True, start * itemsize)
                run.prof.bulk(s.loc, True, nb, sectors * len(blocks))
                self.read_global(s, src, flat[inside], flat[inside], int(lane))
            within = offsets.ravel()  # (in its block's copy: the block's start added per block)
            for block in blocks:
                self.land(s, dst, within + block * dst.size, values, int(lane), bar, block, nbytes)

    def bulk_load(self, s: ir.BulkCopy, m: np.ndarray) -> None:
        """``count`` contiguous elements from each lane's global element on into its shared ones."""
        run = self.run
        dst, src = run.memory(s.dst), run.memory(s.src)
        d = run.mem.access(dst, [run.eval(i, m) for i in s.dst_indices], m, s, STORE, steps=False, ref=s.dst)
        a = run.mem.access(src, [run.eval(i, m) for i in s.src_indices], m, s, LOAD, steps=False, ref=s.src)
        d, a = paired(d, a)  # (a lane out of bounds at either end skips its copy)
        counts = np.broadcast_to(np.asarray(run.eval(s.count, m)), (run.lanes,))
        bar = self.barrier(s, m)
        if bar is None or not len(d.lanes):
            return
        itemsize = dst.data.dtype.itemsize
        for k, lane in enumerate(d.lanes):
            n = int(counts[lane])
            if not self.bulk_range(s, dst, int(d.offsets[k]), src, int(a.where[k]), n, int(lane)):
                continue
            within = (d.where[k] % dst.size) + np.arange(n)
            block = int(d.where[k] // dst.size)
            values = src.data[int(a.where[k]) : int(a.where[k]) + n]
            if run.prof is not None:
                moved = tma.bulk_traffic(int(a.where[k]) * itemsize, n * itemsize, int(d.offsets[k]) * itemsize)
                run.prof.bulk(s.loc, True, n * itemsize, moved)
                span = np.arange(n)
                self.read_global(s, src, int(a.offsets[k]) + span, int(a.where[k]) + span, int(lane))
            self.land(s, dst, within + block * dst.size, values, int(lane), bar, block, n * itemsize)

    def read_global(self, s: ir.Node, src: Memory, offsets: np.ndarray, where: np.ndarray, lane: int) -> None:
        """A bulk load's reads of global memory, which the profiler counts as DRAM traffic like any
        other first touch of a sector (the TMA unit's, through no load instruction: ``bulk``)."""
        if len(offsets):
            self.run.prof.access(Access(src, s, LOAD, np.full(len(offsets), lane), offsets, where, 1, [], bulk=True))

    def inner_aligned(self, s: ir.Node, name: str, col: int, itemsize: int, lane: int) -> bool:
        """Whether a box's first element along the last dimension lies on a 16-byte boundary of its row
        (else reported: the H200 stops the kernel with an illegal instruction, measured)."""
        if col * itemsize % tma.GLOBAL_ALIGN == 0:
            return True
        self.run.report(
            MisalignedAccessError,
            f"{name}: {self.run.who(lane)} copies a box whose first element is at column {col} of the array, byte "
            f"{col * itemsize} of its row: a TMA box starts on a {tma.GLOBAL_ALIGN}-byte boundary of its last "
            f"dimension (a column that is a multiple of {tma.GLOBAL_ALIGN // itemsize}); on a GPU the kernel stops "
            "with an illegal instruction",
            s,
            (lane,),
        )
        return False

    def barrier(self, s: ir.TmaLoad | ir.BulkCopy, m: np.ndarray) -> tuple[Memory, Any, Access] | None:
        """The mbarrier a load completes on: its memory, state and the lanes' elements (None: not
        ready, reported)."""
        run, bars = self.run, self.barriers
        assert s.bar is not None
        bmem = run.memory(s.bar)
        state = bars.state(bmem)
        b = bars.locate(bmem, [run.eval(i, m) for i in s.bar_indices], m, s)
        return (bmem, state, b) if bars.ready(s, b, state, "tma") else None

    def blocks(self, s: ir.TmaLoad, lane: int, mask: int | None) -> list[int]:
        """The blocks a load lands in: the lane's own, or those of its cluster ``mask`` names."""
        run = self.run
        own = int(run.block_of[lane])
        if mask is None:
            return [own]
        clusters = run.clusters
        ranks = [r for r in range(16) if mask >> r & 1]
        bad = [r for r in ranks if r >= clusters.size]
        if run.check and (bad or not ranks):
            run.report(
                OutOfBoundsError,
                f"tma_load: {run.who(lane)} multicasts to the blocks of mask {mask:#x}, but its cluster has "
                f"{clusters.size} blocks (ranks 0 to {clusters.size - 1})",
                s,
                (lane,),
            )
        first = int(clusters.first[own])
        return [first + int(clusters.offset(np.array(r))) for r in ranks if r < clusters.size]

    def land(
        self,
        s: ir.Node,
        dst: Memory,
        where: np.ndarray,
        values: np.ndarray,
        lane: int,
        bar: tuple[Memory, Any, Access],
        block: int,
        nbytes: int,
    ) -> None:
        """Data of one lane's load arriving at elements ``where`` of ``dst`` (in ``block``'s copy), its
        bytes completing on the lane's mbarrier at the same place of that block."""
        run = self.run
        bmem, state, b = bar
        k = int(np.searchsorted(b.lanes, lane))
        bwhere = int(b.where[k] % bmem.size + block * bmem.size)
        if run.check and not state.valid[bwhere]:  # (a multicast's other blocks: their own barriers)
            run.report(
                UninitializedReadError,
                f"{run.who(lane)} multicasts into the block of rank {int(run.clusters.rank[block])} of its cluster, "
                f"whose mbarrier {bmem.name}[{int(b.where[k]) % bmem.size}] no thread has initialised yet: "
                "mbarrier_init in every block, then cluster_barrier(), before the copies",
                s,
                (lane,),
            )
            return
        races = run.mem.races
        if run.check:  # what was read or written there before must be ordered before the issue
            write = Access(dst, s, STORE, np.full(len(where), lane), where % dst.size, where, 1, [])
            if run.mem.in_flight is not None:
                run.mem.in_flight.track(write)
            if races is not None:
                races.tma_write(write)
        dst.data[where] = values
        tiles = self.tiles.get(dst)
        if tiles is None:
            tiles = self.tiles[dst] = _Tiles(dst.data.size)
        tiles.array[where] = tiles.array_index(bmem)
        tiles.bar[where] = bwhere
        tiles.phase[where] = state.phase[bwhere]
        done = state.complete_tx(np.array([bwhere]), np.array([nbytes]))
        if races is not None and races.order is not None:
            races.order.completed(bmem, done)
        if run.branches is not None:
            run.branches.moved()
        init = run.mem.initialised
        if init is not None:  # written, for the uninitialised-read step
            init.track(Access(dst, s, LANDED, np.full(len(where), lane), where, where, 1, [], copy=True))

    # ------------------------------------------------------------ stores into a cluster's blocks
    def store_async(self, s: ir.StoreAsync, m: np.ndarray) -> None:
        """Each active lane's values into its destination block's shared memory, completing on that
        block's mbarrier (``semantics.cluster``): a landing as a copy's (what was read or written
        there before must be ordered before the store; a read before the waited phase is a race),
        whose completion also releases what the storing thread did before it (``sim.ordering``)."""
        run = self.run
        dst, bmem = run.memory(s.dst), run.memory(s.bar)
        d = run.mem.access(dst, [run.eval(i, m) for i in s.dst_indices], m, s, STORE, steps=False, ref=s.dst)
        b = run.mem.access(bmem, [run.eval(i, m) for i in s.bar_indices], m, s, STORE, steps=False, ref=s.bar)
        d, b = paired(d, b)
        state = self.barriers.state(bmem)
        if not len(d.lanes) or not self.barriers.ready(s, b, state, "st_async"):
            return
        n, itemsize = len(s.values), dst.data.dtype.itemsize
        values = [np.broadcast_to(np.asarray(run.eval(v, m)), (run.lanes,)) for v in s.values]
        order = run.mem.races.order if run.mem.races is not None else None
        for k, lane in enumerate(d.lanes.tolist()):
            block, bblock = int(d.where[k] // dst.size), int(b.where[k] // bmem.size)
            if run.check and block != bblock:
                run.report(
                    OutOfBoundsError,
                    f"{run.who(lane)} stores into the shared memory of the block of rank "
                    f"{int(run.clusters.rank[block])} but completes on an mbarrier of the block of rank "
                    f"{int(run.clusters.rank[bblock])}: store_async's mbarrier is in the block it stores into",
                    s,
                    (lane,),
                )
                continue
            start = int(d.offsets[k])
            if run.check and start % n:
                run.report(
                    MisalignedAccessError,
                    f"{run.who(lane)} stores {n} elements of {itemsize} bytes from element {start} of "
                    f"{dst.name!r}: store_async's destination is aligned to its {n * itemsize} bytes",
                    s,
                    (lane,),
                )
                continue
            if run.check and start + n > dst.size:
                run.report(OutOfBoundsError, f"{run.who(lane)} stores past the end of {dst.name!r}", s, (lane,))
                continue
            if order is not None:  # (the completion releases what the storing thread did before)
                order.arrive(bmem, np.array([int(b.where[k])]), np.array([lane]))
            within = d.where[k] + np.arange(n)
            if block != int(run.block_of[lane]):
                where = int(b.where[k])
                self.stored.setdefault((block, bmem, where % bmem.size, int(state.phase[where])), (lane, s))
            one = Access(bmem, s, STORE, b.lanes[k : k + 1], b.offsets[k : k + 1], b.where[k : k + 1], 1, [])
            data = np.array([v[lane] for v in values], dst.data.dtype)
            self.land(s, dst, within, data, lane, (bmem, state, one), block, n * itemsize)

    def finish(self) -> None:
        """At the end of the launch: a store_async into another block whose phase no thread of that block
        waited for -- on a GPU the block may have exited before the bytes came, its shared memory gone."""
        run = self.run
        for (block, bmem, at, phase), (lane, node) in self.stored.items():
            mine = slice(block * run.tpb, (block + 1) * run.tpb)  # (the block's lanes)
            if not (self.barriers.seen[bmem][mine, at] > phase).any():
                run.report(
                    DataRaceError,
                    f"{run.who(lane)} stores into the shared memory of the block of rank "
                    f"{int(run.clusters.rank[block])} "
                    f"(store_async), which never waits for phase {phase} of mbarrier {bmem.name}[{at}] that the "
                    "store completes: on a GPU that block may have exited before the bytes came; wait for them there",
                    node,
                    (lane,),
                )
                return

    def bulk_range(self, s: ir.BulkCopy, shared: Memory, start: int, glob: Memory, g: int, n: int, lane: int) -> bool:
        """Whether a bulk copy of ``n`` elements fits both arrays, 16-byte aligned (else reported)."""
        run = self.run
        itemsize = shared.data.dtype.itemsize
        per = tma.BULK_ALIGN // itemsize if itemsize < tma.BULK_ALIGN else 1
        if not run.check:
            return n > 0
        if n <= 0 or start + n > shared.size or g + n > glob.data.size:
            where = shared.name if n > 0 and start + n > shared.size else glob.name
            run.report(
                OutOfBoundsError,
                f"{run.who(lane)} copies {n} elements, which run past the end of {where!r}"
                if n > 0
                else f"{run.who(lane)} copies {n} elements: a bulk copy moves at least 16 bytes",
                s,
                (lane,),
            )
            return False
        if start % per or g % per or n % per:
            run.report(
                MisalignedAccessError,
                f"{run.who(lane)} copies {n} elements ({n * itemsize} bytes) from element {g} of {glob.name!r} "
                f"and element {start} of {shared.name!r}: a bulk copy's size and both ends are multiples of "
                f"{tma.BULK_ALIGN} bytes",
                s,
                (lane,),
            )
            return False
        return True

    def check_read(self, a: Access) -> None:
        """A load of a copy's destination: each lane must have seen its copy's phase complete."""
        tiles = self.tiles.get(a.memory)
        if tiles is None or not tiles.arrays:
            return
        where = a.elements()
        lanes = a.per_element(a.lanes)
        bar = tiles.bar[where]
        pending = bar != NONE
        if not pending.any():
            return
        early = np.zeros(len(where), bool)
        for i, bmem in enumerate(tiles.arrays):
            mine = pending & (tiles.array[where] == i)
            if mine.any():
                seen = self.barriers.seen[bmem]
                early[mine] = seen[lanes[mine], bar[mine] % bmem.size] <= tiles.phase[where[mine]]
        if early.any():
            k = int(np.argmax(early))
            w = int(where[k])
            bmem = tiles.arrays[int(tiles.array[w])]
            name = f"{bmem.name}[{int(bar[k]) % bmem.size}]"
            self.run.report(
                DataRaceError,
                f"{self.run.who(int(lanes[k]))} reads {a.memory.name!r} element {int(a.per_element(a.offsets)[k])}, "
                f"which a copy fills in phase {int(tiles.phase[w])} of mbarrier {name}, "
                "before it has waited for that phase: on a GPU it may read the data before the copy wrote it; "
                "mbarrier_wait on it first",
                a.node,
                (int(lanes[k]),),
            )

    def written(self, a: Access) -> None:
        """An ordinary write of a copy's destination: the element is no longer the copy's; of a
        store's source still being read: a ``DataRaceError``."""
        tiles = self.tiles.get(a.memory)
        if tiles is not None:
            tiles.bar[a.elements()] = NONE
        reading = self.reading.get(a.memory)
        if reading is not None and self.run.check:
            lane = reading[a.elements()]
            busy = lane != NONE
            if busy.any():
                k = int(np.argmax(busy))
                writer = int(a.per_element(a.lanes)[k])
                self.run.report(
                    DataRaceError,
                    f"{self.run.who(writer)} writes {a.memory.name!r} element {int(a.per_element(a.offsets)[k])}, "
                    f"which a bulk store of {self.run.who(int(lane[k]))} may still be reading: that thread's "
                    "tma_store_wait(read=True) (and a barrier() after it) must come first",
                    a.node,
                    (writer, int(lane[k])),
                )

    # ------------------------------------------------------------ stores (bulk groups)
    def tma_store(self, s: ir.TmaStore, m: np.ndarray, maps: dict[str, Memory]) -> None:
        """Each active lane's box: read from shared memory now (checked as reads: written, and
        ordered after the writes of other threads), written into the array where it lies inside it;
        the source stays read, for the writes that follow, until the lane's wait covers its group."""
        run = self.run
        src = run.memory(s.src)
        dst = maps[s.map.name]
        box, itemsize = s.map.box, src.data.dtype.itemsize
        a = run.mem.access(src, [run.eval(i, m) for i in s.src_indices], m, s, LOAD, steps=False, ref=s.src)
        coords = [np.broadcast_to(np.asarray(run.eval(c, m)), (run.lanes,))[a.lanes].astype(np.int64) for c in s.coords]
        for k, lane in enumerate(a.lanes):
            start = int(a.offsets[k])
            offsets = tma.shared_offsets(box, itemsize, s.map.swizzle, start * itemsize)
            if run.check:
                self.inner_aligned(s, "tma_store", int(coords[-1][k]), itemsize, int(lane))
            if run.check and (start % (tma.SHARED_ALIGN // itemsize) or offsets.max() >= src.size):
                run.report(
                    OutOfBoundsError,
                    f"tma_store: {run.who(int(lane))} copies a box of {box} elements from {src.name!r} that runs "
                    f"past its end ({src.size} elements) or starts off a {tma.SHARED_ALIGN}-byte boundary",
                    s,
                    (int(lane),),
                )
                continue
            where = a.where[k] - start + offsets.ravel()
            flat, inside = tma.global_indices(box, tuple(int(c[k]) for c in coords), dst.shape)
            keep = inside.ravel()
            moved = tma.traffic(box, tuple(int(c[k]) for c in coords), dst.shape, itemsize, False, start * itemsize)
            self.store(s, src, where, offsets.ravel(), dst, flat.ravel(), keep, int(lane), moved)

    def bulk_store(self, s: ir.BulkCopy, m: np.ndarray) -> None:
        """``count`` contiguous shared elements from each lane's first on into its global ones."""
        run = self.run
        dst, src = run.memory(s.dst), run.memory(s.src)
        a = run.mem.access(src, [run.eval(i, m) for i in s.src_indices], m, s, LOAD, steps=False, ref=s.src)
        d = run.mem.access(dst, [run.eval(i, m) for i in s.dst_indices], m, s, STORE, steps=False, ref=s.dst)
        a, d = paired(a, d)
        counts = np.broadcast_to(np.asarray(run.eval(s.count, m)), (run.lanes,))
        itemsize = dst.data.dtype.itemsize
        for k, lane in enumerate(a.lanes):
            n = int(counts[lane])
            if not self.bulk_range(s, src, int(a.offsets[k]), dst, int(d.where[k]), n, int(lane)):
                continue
            span = np.arange(n)
            out = int(d.where[k]) + span
            smem = int(a.offsets[k]) * itemsize
            moved = (n * itemsize, tma.bulk_traffic(int(d.where[k]) * itemsize, n * itemsize, smem))
            self.store(s, src, a.where[k] + span, a.offsets[k] + span, dst, out, np.ones(n, bool), int(lane), moved)

    def store(
        self,
        s: ir.Node,
        src: Memory,
        where: np.ndarray,
        offsets: np.ndarray,
        dst: Memory,
        out: np.ndarray,
        keep: np.ndarray,
        lane: int,
        traffic: tuple[int, int],
    ) -> None:
        """One lane's store of ``src`` elements ``where`` (``keep``: those that are written) into
        ``dst`` elements ``out``: a read and a write for the steps, the source busy until its wait;
        ``traffic``: its (bytes, sectors) for the profiler."""
        run = self.run
        lanes = np.full(int(keep.sum()), lane)
        read = Access(src, s, LOAD, lanes, offsets[keep], where[keep], 1, [], bulk=True)
        write = Access(dst, s, STORE, lanes, out[keep], out[keep], 1, [], bulk=True)
        if run.prof is not None:
            run.prof.bulk(s.loc, False, *traffic)
        for event in (read, write):
            for step in run.mem.steps:
                step(event)
        dst.data[out[keep]] = src.data[where[keep]]
        reading = self.reading.setdefault(src, np.full(src.data.size, NONE, np.int64))
        group = self.reading_group.setdefault(src, np.zeros(src.data.size, np.int64))
        reading[where], group[where] = lane, self.committed.get(lane, 0)

    def bulk_commit(self, s: ir.Node, m: np.ndarray) -> None:
        lanes = self.run.lanes_of(m)
        for lane in lanes:
            self.committed[int(lane)] = self.committed.get(int(lane), 0) + 1
        if self.run.prof is not None:  # (a commit is a request to the TMA unit: measured)
            self.run.prof.bulk(s.loc, False, 0, 0, requests=len(lanes))

    def bulk_wait(self, m: np.ndarray, pending: int) -> None:
        """The lanes' bulk groups but the ``pending`` latest are done: their sources free again."""
        lanes = self.run.lanes_of(m)
        for src, reading in self.reading.items():
            busy = reading != NONE
            if not busy.any():
                continue
            owner = reading[busy]
            done = np.isin(owner, lanes)
            limit = np.array([self.committed.get(int(x), 0) for x in owner]) - pending
            done &= self.reading_group[src][busy] < limit
            idx = np.nonzero(busy)[0][done]
            reading[idx] = NONE
