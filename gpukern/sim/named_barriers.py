"""Named barriers on the simulator (``semantics.specialization``): per block and barrier number,
the threads arrived at its current phase and the count they gave.

A statement's lanes arrive together, a warp at a time (each warp counts as its 32 threads); when
the count is reached the phase completes, and the threads that arrived at it are ordered after
each other's earlier accesses (``sim.ordering``; all of the block's live threads: a ``barrier()``).
A ``named_barrier`` whose phase is not complete waits: the sides of an ``if`` run side by side
(``sim.branches``), so consumers and a producer each arriving on their side meet.

Reported at the line: a warp some of whose live threads arrive and some not (the hardware makes a
thread wait for its whole warp), a run-time barrier number or count out of range, counts that
differ within one phase, more threads arriving at once than the phase has room for, and a wait
that nothing can complete -- a count larger than the threads that come: on a GPU the kernel would
hang (each a ``gk.BarrierDivergenceError``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BarrierDivergenceError
from ..ir import nodes as ir
from ..semantics import specialization as spec


class NamedBarriers:
    """The 16 hardware barriers of each block of one launch."""

    def __init__(self, run: Any):
        self.run = run
        shape = (run.nblocks, spec.BARRIERS)
        self.arrived = np.zeros(shape, np.int64)  # threads arrived at the current phase
        self.count = np.zeros(shape, np.int64)  # the count they gave (0: none yet)
        self.phase = np.zeros(shape, np.int64)  # phases completed
        self.members: dict[tuple[int, int], list[np.ndarray]] = {}  # the lanes arrived at a current phase
        per_block = -(-run.tpb // run.width)  # (a block's last warp may be partial: warps never span blocks)
        self.warp_of = run.block_of * per_block + run.thread_in_block.astype(np.int64) // run.width

    def arrive(self, s: ir.NamedBarrier, m: np.ndarray) -> None:
        run = self.run
        lanes = run.lanes_of(m)
        if not len(lanes):
            return
        ids = np.broadcast_to(np.asarray(run.eval(s.id, m)), (run.lanes,))[lanes].astype(np.int64)
        counts = np.broadcast_to(np.asarray(run.eval(s.count, m)), (run.lanes,))[lanes].astype(np.int64)
        if run.check and not self._valid(s, lanes, ids, counts, m):
            return
        blocks = run.block_of[lanes]
        warp = self.warp_of[lanes]
        waiting: list[tuple[int, int, int]] = []  # (block, id, phase) the waiting lanes wait for
        for b, i in sorted(set(zip(blocks.tolist(), ids.tolist()))):
            here = (blocks == b) & (ids == i)
            who = lanes[here]
            n = spec.WARP_THREADS * len(np.unique(warp[here]))
            c = int(counts[here][0])
            if run.check and ((counts[here] != c).any() or self.count[b, i] not in (0, c)):
                given = int(self.count[b, i]) or int(counts[here][counts[here] != c][0])
                run.report(
                    BarrierDivergenceError,
                    f"named barrier {i} of block {run.place(int(who[0]))[0]}: {run.who(int(who[0]))} arrives "
                    f"with count {c}, another thread of its phase with {given}; every thread arriving at one "
                    "phase gives the same count",
                    s,
                    (int(who[0]),),
                )
            total = int(self.arrived[b, i]) + n
            if run.check and total > c and total % c:
                run.report(
                    BarrierDivergenceError,
                    f"named barrier {i} of block {run.place(int(who[0]))[0]}: {n} threads arrive together where "
                    f"{c - int(self.arrived[b, i])} complete its phase (count {c}): which of them wait for the "
                    "next phase is up to the hardware; give each group of threads a barrier number of its own",
                    s,
                    (int(who[0]),),
                )
            self.count[b, i] = c
            self.members.setdefault((b, i), []).append(who)
            if total >= c:
                self._complete(b, i, total // c)
                self.arrived[b, i] = total % c
            else:
                self.arrived[b, i] = total
                if s.wait:
                    waiting.append((b, i, int(self.phase[b, i])))
        if waiting:
            self._wait(s, waiting)

    def _complete(self, b: int, i: int, phases: int) -> None:
        run = self.run
        lanes = np.concatenate(self.members.pop((b, i)))
        self.phase[b, i] += phases
        self.count[b, i] = 0
        if run.branches is not None:
            run.branches.moved()
        run.mem.sync_threads(b, lanes)

    def _wait(self, s: ir.NamedBarrier, waiting: list[tuple[int, int, int]]) -> None:
        """Until each (block, barrier) has passed the phase its lanes arrived at; else a deadlock."""
        run = self.run

        def open_() -> list[tuple[int, int, int]]:
            return [(b, i, p) for b, i, p in waiting if self.phase[b, i] <= p]

        left = open_()
        while left and run.branches is not None and run.branches.wait_turn():
            left = open_()
        if left and run.check:
            b, i, _ = left[0]
            lane = int(self.members[(b, i)][0][0])
            run.report(
                BarrierDivergenceError,
                f"named_barrier({i}, {int(self.count[b, i])}) in block {run.place(lane)[0]}: {int(self.arrived[b, i])} "
                f"of its {int(self.count[b, i])} threads have arrived ({run.who(lane)} among them) and no other "
                "thread can arrive: on a GPU the kernel would hang",
                s,
                (lane,),
            )
        for b, i, _ in left:  # (to go on: the phase taken as complete)
            self._complete(b, i, 1)
            self.arrived[b, i] = 0

    def _valid(self, s: ir.NamedBarrier, lanes: np.ndarray, ids: np.ndarray, counts: np.ndarray, m: np.ndarray) -> bool:
        run = self.run
        for values, problem in ((ids, spec.id_problem), (counts, spec.count_problem)):
            for v in np.unique(values):
                why = problem(int(v))
                if why is not None:
                    lane = int(lanes[np.argmax(values == v)])
                    run.report(BarrierDivergenceError, f"{run.who(lane)}: {why}", s, (lane,))
                    return False
        # a warp arrives whole: its live threads that do not execute this wait for those that do
        live = ~run.frames[0].returned
        warp_of = self.warp_of
        here = np.unique(warp_of[lanes])
        inside = np.isin(warp_of, here)
        missing = inside & live & ~m
        if missing.any():
            lane = int(np.argmax(missing))
            other = int(lanes[np.argmax(warp_of[lanes] == warp_of[lane])])
            run.report(
                BarrierDivergenceError,
                f"a named barrier is reached by {run.who(other)} but not by {run.who(lane)} of the same warp: "
                "the hardware has a thread wait for its whole warp; keep the warp together (branch on the warp's "
                "number, thread_idx.x // 32)",
                s,
                (other, lane),
            )
        return True
