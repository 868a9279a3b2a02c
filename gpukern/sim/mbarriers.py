"""mbarriers and TMA copies on the simulator (``semantics.mbarrier``, ``semantics.tma``).

Each shared array of ``gk.mbarrier`` gets a ``semantics.mbarrier.State`` with one entry per
element of each block's copy; an operation finds its lanes' barriers through the memory path
(indices checked, no access event: a barrier's word is the hardware's) and changes the state as
the hardware does.  A TMA load moves its box when issued -- zeros where the box leaves the array
-- and its bytes complete on its barrier then; the destination's elements remember the barrier
and the phase they land in, and a thread reading one before it has *seen* that phase complete
(an ``mbarrier_wait`` or a true ``mbarrier_try_wait`` on the barrier after it) is a
``DataRaceError``: on a GPU it could read the tile before the copy wrote it.  The copy counts as
the destination's write for the uninitialised-read step; race tracking is left out of its
elements, whose ordering is the barrier's.

Reported at the line (``_Run.report``): a barrier used before ``mbarrier_init`` or, by another
thread, before a ``barrier()`` after it; more arrivals than a phase expects; a wait that cannot
complete -- the phase still expects arrivals or bytes and no thread can move it, the sides of an
``if`` that wait on each other run side by side (``sim.branches``) -- a deadlock on a GPU, which
would hang; a box whose destination runs past its shared array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BarrierDivergenceError, DataRaceError, OutOfBoundsError, UninitializedReadError
from ..ir import nodes as ir
from ..semantics import mbarrier as mbar
from ..semantics import tma
from .access import LANDED, LOAD, STORE, Access, Memory

NONE = -1


class _Tiles:
    """Per element of one shared array: the barrier (its state entry) and the phase in which a TMA
    copy into it completes, or NONE."""

    def __init__(self, n: int):
        self.bar = np.full(n, NONE, np.int64)
        self.phase = np.zeros(n, np.int64)
        self.barriers: Memory | None = None  # the barrier array they refer to


class Barriers:
    """The mbarriers of one launch and the TMA copies that complete on them."""

    def __init__(self, run: Any):
        self.run = run
        self.states: dict[Memory, mbar.State] = {}
        self.seen: dict[Memory, np.ndarray] = {}  # per barrier array: per lane, per element, phases seen done
        self.inits: dict[Memory, tuple[np.ndarray, np.ndarray]] = {}  # per array: initialising lane, epoch
        self.tiles: dict[Memory, _Tiles] = {}
        self.spins: dict[int, tuple[int, int]] = {}  # per try_wait: the progress it last said no at, how often
        self.forced: set[int] = set()  # barriers whose wait was reported a deadlock and let pass
        # TMA stores: per shared array, the lane whose store still reads each element (or NONE) and its
        # bulk group; per lane, the groups it has committed
        self.reading: dict[Memory, np.ndarray] = {}
        self.reading_group: dict[Memory, np.ndarray] = {}
        self.committed: dict[int, int] = {}

    # ------------------------------------------------------------ finding barriers
    def state(self, mem: Memory) -> mbar.State:
        s = self.states.get(mem)
        if s is None:
            s = self.states[mem] = mbar.State.make(mem.data.size)
            self.seen[mem] = np.zeros((self.run.lanes, mem.size), np.int32)
            self.inits[mem] = (np.full(mem.data.size, NONE, np.int64), np.zeros(mem.data.size, np.int64))
        return s

    def locate(self, mem: Memory, idx: list[Any], m: np.ndarray, node: ir.Node) -> Access:
        return self.run.mem.access(mem, idx, m, node, STORE, steps=False)

    def name(self, node: ir.Mbarrier | ir.TmaLoad, a: Access, k: int) -> str:
        """The barrier lane ``k`` of ``a`` uses, as the kernel names it (``bars[1]``)."""
        idx = ", ".join(str(int(np.broadcast_to(i, (self.run.lanes,))[a.lanes[k]])) for i in a.indices)
        return f"mbarrier {node.bar.name}[{idx}]"

    def ready(self, node: ir.Node, a: Access, s: mbar.State, op: str) -> bool:
        """Check the lanes' barriers are initialised and that initialisation is theirs to see."""
        if not self.run.check:
            return True
        bad = ~s.valid[a.where]
        if bad.any():
            k = int(np.argmax(bad))
            self.run.report(
                UninitializedReadError,
                f"{mbar.OPS[op]}: {self.run.who(int(a.lanes[k]))} uses {self.name(node, a, k)}, which no thread "
                "has initialised (mbarrier_init)",
                node,
                (int(a.lanes[k]),),
            )
            return False
        lane, epoch = self.inits[a.memory]
        races = self.run.mem.races
        if races is not None:
            by_other = lane[a.where] != a.lanes
            early = by_other & (races.epoch[self.run.block_of[a.lanes]] <= epoch[a.where])
            if early.any():
                k = int(np.argmax(early))
                self.run.report(
                    DataRaceError,
                    f"{mbar.OPS[op]}: {self.run.who(int(a.lanes[k]))} uses {self.name(node, a, k)} before a "
                    f"barrier() after {self.run.who(int(lane[a.where[k]]))} initialised it: it may see the "
                    "barrier uninitialised; put fence_mbarrier_init() and barrier() after mbarrier_init",
                    node,
                    (int(a.lanes[k]), int(lane[a.where[k]])),
                )
        return True

    # ------------------------------------------------------------ operations
    def op(self, e: ir.Mbarrier, m: np.ndarray, args: list[Any]) -> Any:
        run = self.run
        mem = run.memory(e.bar)
        s = self.state(mem)
        a = self.locate(mem, [run.eval(i, m) for i in e.bar_indices], m, e)
        lanes = a.lanes
        vals = [np.broadcast_to(np.asarray(v), (run.lanes,))[lanes].astype(np.int64) for v in args]
        if run.branches is not None and e.op not in ("wait", "try_wait"):
            run.branches.moved()  # the state changes: a side waiting on it may pass
        if e.op == "init":
            s.init(a.where, vals[0])
            epoch = run.mem.races.epoch[run.block_of[lanes]] if run.mem.races is not None else 0
            self.inits[mem][0][a.where], self.inits[mem][1][a.where] = lanes, epoch
            return None
        if not self.ready(e, a, s, e.op):
            return self._result(e, lanes, np.zeros(len(lanes), bool))
        order = run.mem.races.order if run.mem.races is not None else None
        if e.op in ("arrive", "arrive_tx"):
            self.check_arrivals(e, a, s)
            before = s.phase[a.where].copy()
            if order is not None:
                order.arrive(mem, a.where, lanes)
            done = s.arrive(a.where, vals[0] if e.op == "arrive_tx" else None)
            if order is not None:
                order.completed(mem, done)
            return self._result(e, lanes, before.astype(np.uint64))
        if e.op == "expect_tx":
            s.expect_tx(a.where, vals[0])
            done = s.complete(np.unique(a.where))  # (bytes expected after the copies completed: nothing pending)
            if order is not None:
                order.completed(mem, done)
            return None
        passed = s.passed(a.where, vals[0])
        seen = self.seen[mem]
        while not passed.all():  # the other side of an if may move it (sim.branches)
            if run.branches is None or not run.branches.wait_turn():
                break
            passed = s.passed(a.where, vals[0])
            if e.op == "try_wait":
                break  # (a try_wait answers after one turn: a loop of them asks again)
        if not passed.all() and (e.op == "wait" or self.spinning(e)):
            # nothing can complete the phase: reported; to go on, the lanes take the phase as seen
            self.deadlock(e, a, s, vals[0], passed)
            stuck = ~passed
            seen[lanes[stuck], a.offsets[stuck]] = s.phase[a.where[stuck]] + 1
            if order is not None:
                order.acquire(mem, a.where[stuck], lanes[stuck], forced=True)
            passed[:] = True
        ok = lanes[passed]
        seen[ok, a.offsets[passed]] = np.maximum(seen[ok, a.offsets[passed]], s.phase[a.where[passed]])
        if order is not None:  # (a barrier whose wait was let pass: its arrivals so far, as that wait took)
            after_fault = np.isin(a.where[passed], list(self.forced))
            order.acquire(mem, a.where[passed][~after_fault], ok[~after_fault])
            order.acquire(mem, a.where[passed][after_fault], ok[after_fault], forced=True)
        return self._result(e, lanes, passed) if e.op == "try_wait" else None

    def spinning(self, e: ir.Mbarrier) -> bool:
        """Whether a try_wait that answers no has answered no three times running with nothing moved
        in between: a loop of them would never end."""
        stamp = self.run.branches.progress if self.run.branches is not None else 0
        last = self.spins.get(id(e))
        count = last[1] + 1 if last is not None and last[0] == stamp else 0
        self.spins[id(e)] = (stamp, count)
        return count >= 2

    def _result(self, e: ir.Mbarrier, lanes: np.ndarray, values: np.ndarray) -> Any:
        if e.type is None:
            return None
        out = np.zeros(self.run.lanes, e.type.dtype)
        out[lanes] = values
        return out

    def check_arrivals(self, e: ir.Mbarrier, a: Access, s: mbar.State) -> None:
        if not self.run.check:
            return
        where, counts = np.unique(a.where, return_counts=True)
        over = (counts > s.pending[where]) & ~np.isin(where, list(self.forced))
        if over.any():
            w = int(where[np.argmax(over)])
            k = int(np.nonzero(a.where == w)[0][0])
            self.run.report(
                BarrierDivergenceError,
                f"{mbar.OPS[e.op]}: {int(counts[np.argmax(over)])} thread(s) arrive at {self.name(e, a, k)}, whose "
                f"phase {int(s.phase[w])} expects {int(s.pending[w])} more arrival(s) (of {int(s.count[w])}): "
                "more arrivals than its count, which PTX leaves undefined",
                e,
                (int(a.lanes[k]),),
            )

    def deadlock(self, e: ir.Mbarrier, a: Access, s: mbar.State, parity: np.ndarray, passed: np.ndarray) -> None:
        k = int(np.argmin(passed))
        w = int(a.where[k])
        self.forced.update(int(x) for x in a.where[~passed])  # what follows on them is this fault's doing
        self.run.report(
            BarrierDivergenceError,
            f"{self.run.who(int(a.lanes[k]))} waits on {self.name(e, a, k)} for its phase of parity "
            f"{int(parity[k]) & 1}, which cannot complete: phase {int(s.phase[w])} still expects "
            f"{int(s.pending[w])} arrival(s) and {int(s.tx[w])} byte(s), and no thread arrives or copies before "
            "this wait returns: on a GPU the kernel would hang",
            e,
            (int(a.lanes[k]),),
        )

    # ------------------------------------------------------------ TMA
    def tma_load(self, s: ir.TmaLoad, m: np.ndarray, maps: dict[str, Memory]) -> None:
        run = self.run
        dst = run.memory(s.dst)
        src = maps[s.map.name]
        box, itemsize = s.map.box, dst.data.dtype.itemsize
        d = run.mem.access(dst, [run.eval(i, m) for i in s.dst_indices], m, s, STORE, steps=False, ref=s.dst)
        if not len(d.lanes):
            return
        coords = [np.broadcast_to(np.asarray(run.eval(c, m)), (run.lanes,))[d.lanes].astype(np.int64) for c in s.coords]
        bmem = run.memory(s.bar)
        state = self.state(bmem)
        b = self.locate(bmem, [run.eval(i, m) for i in s.bar_indices], m, s)
        if not self.ready(s, b, state, "tma"):
            return
        nbytes = tma.box_elements(box) * itemsize
        races = run.mem.races
        tiles = self.tiles.get(dst)
        if tiles is None:
            tiles = self.tiles[dst] = _Tiles(dst.data.size)
        tiles.barriers = bmem
        landed = []
        for k, lane in enumerate(d.lanes):
            start = int(d.offsets[k])
            offsets = tma.shared_offsets(box, itemsize, s.map.swizzle, start * itemsize)
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
            values = np.where(inside, src.data[flat], np.zeros((), src.data.dtype))
            where = d.where[k] - start + offsets.ravel()
            if run.check:  # what was read or written there before must be ordered before the issue
                write = Access(dst, s, STORE, np.full(len(where), lane), where - (d.where[k] - start), where, 1, [])
                if run.mem.in_flight is not None:
                    run.mem.in_flight.track(write)
                if races is not None:
                    races.tma_write(write)
            dst.data[where] = values.ravel()
            tiles.bar[where] = b.where[k]
            tiles.phase[where] = state.phase[b.where[k]]
            landed.append((int(lane), where))
            done = state.complete_tx(b.where[k : k + 1], np.array([nbytes]))
            if races is not None and races.order is not None:
                races.order.completed(bmem, done)
            if run.branches is not None:
                run.branches.moved()
        init = run.mem.initialised
        if init is not None:  # written, for the uninitialised-read step
            for lane, where in landed:
                event = Access(dst, s, LANDED, np.full(len(where), lane), where, where, 1, [], copy=True)
                init.track(event)

    def check_read(self, a: Access) -> None:
        """A load of a TMA destination: each lane must have seen its copy's phase complete."""
        tiles = self.tiles.get(a.memory)
        if tiles is None or tiles.barriers is None:
            return
        where = a.elements()
        lanes = a.per_element(a.lanes)
        bar = tiles.bar[where]
        pending = bar != NONE
        if not pending.any():
            return
        seen = self.seen[tiles.barriers]
        bmem = tiles.barriers
        size = bmem.size
        early = np.zeros(len(where), bool)
        early[pending] = seen[lanes[pending], bar[pending] % size] <= tiles.phase[where[pending]]
        if early.any():
            k = int(np.argmax(early))
            w = int(where[k])
            self.run.report(
                DataRaceError,
                f"{self.run.who(int(lanes[k]))} reads {a.memory.name!r} element {int(a.per_element(a.offsets)[k])}, "
                f"which a tma_load fills in phase {int(tiles.phase[w])} of mbarrier {bmem.name}[{int(bar[k]) % size}], "
                "before it has waited for that phase: on a GPU it may read the tile before the copy wrote it; "
                "mbarrier_wait on it first",
                a.node,
                (int(lanes[k]),),
            )

    def written(self, a: Access) -> None:
        """An ordinary write of a TMA destination: the element is no longer the copy's; of a TMA
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
                    f"which a tma_store of {self.run.who(int(lane[k]))} may still be reading: that thread's "
                    "tma_store_wait(read=True) (and a barrier() after it) must come first",
                    a.node,
                    (writer, int(lane[k])),
                )

    # ------------------------------------------------------------ TMA stores (bulk groups)
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
        reading = self.reading.setdefault(src, np.full(src.data.size, NONE, np.int64))
        group = self.reading_group.setdefault(src, np.zeros(src.data.size, np.int64))
        for k, lane in enumerate(a.lanes):
            start = int(a.offsets[k])
            offsets = tma.shared_offsets(box, itemsize, s.map.swizzle, start * itemsize)
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
            lanes = np.full(int(keep.sum()), lane)
            read = Access(src, s, LOAD, lanes, offsets.ravel()[keep], where[keep], 1, [])
            out = flat.ravel()[keep]
            write = Access(dst, s, STORE, lanes, out, out, 1, [])
            for event in (read, write):
                for step in run.mem.steps:
                    step(event)
            dst.data[out] = src.data[where[keep]]
            reading[where], group[where] = lane, self.open_group(int(lane))

    def open_group(self, lane: int) -> int:
        return self.committed.get(lane, 0)

    def bulk_commit(self, m: np.ndarray) -> None:
        for lane in self.run.lanes_of(m):
            self.committed[int(lane)] = self.committed.get(int(lane), 0) + 1

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
