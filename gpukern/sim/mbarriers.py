"""mbarriers on the simulator (``semantics.mbarrier``); the copies that complete on them are
``sim.copies``'.

Each shared array of ``gk.mbarrier`` gets a ``semantics.mbarrier.State`` with one entry per
element of each block's copy; an operation finds its lanes' barriers through the memory path
(indices checked, no access event: a barrier's word is the hardware's) and changes the state as
the hardware does.  Per lane and barrier, the phases it has *seen* complete (an ``mbarrier_wait``
or a true ``mbarrier_try_wait``): what a copy landed in a phase may be read after that.  Arrivals
and waits order the threads (``sim.ordering``).

Reported at the line (``_Run.report``): a barrier used before ``mbarrier_init`` or, by another
thread, before a ``barrier()`` after it; more arrivals than a phase expects; a wait that cannot
complete -- the phase still expects arrivals or bytes and no thread can move it, the sides of an
``if`` that wait on each other run side by side (``sim.branches``) -- a deadlock on a GPU, which
would hang.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BarrierDivergenceError, DataRaceError, UninitializedReadError
from ..ir import nodes as ir
from ..semantics import mbarrier as mbar
from .access import STORE, Access, Memory

NONE = -1


class Barriers:
    """The mbarriers of one launch."""

    def __init__(self, run: Any):
        self.run = run
        self.states: dict[Memory, mbar.State] = {}
        self.seen: dict[Memory, np.ndarray] = {}  # per barrier array: per lane, per element, phases seen done
        self.inits: dict[Memory, tuple[np.ndarray, np.ndarray]] = {}  # per array: initialising lane, epoch
        self.spins: dict[int, tuple[int, int]] = {}  # per try_wait: the progress it last said no at, how often
        self.forced: set[int] = set()  # barriers whose wait was reported a deadlock and let pass

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
