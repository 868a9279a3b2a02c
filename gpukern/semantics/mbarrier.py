"""What an mbarrier is (sm_90's ``mbarrier`` objects in shared memory, PTX ISA "Parallel
Synchronization and Communication Instructions: mbarrier"), once, for the front end, the
simulator and the CUDA emitter.

An mbarrier counts one *phase* at a time.  ``init(count)`` starts phase 0 expecting ``count``
arrivals and no transaction bytes.  Each ``arrive`` takes one arrival off the pending count;
``expect_tx(n)`` adds n bytes to the phase's transaction count and an asynchronous copy that
completes on the barrier (``tma_load``) takes its bytes off it (the count may go below zero on
the way: a copy may complete before its bytes are expected).  When both reach zero the phase
completes: the barrier moves to the next phase, expecting ``count`` arrivals again.  A thread
waits for a phase by its *parity* (``wait(bar, p)``: until the phase of parity p has completed,
that is, until the current phase's parity is not p), so a loop over a ring of barriers flips the
parity it waits for each time round.

``State`` holds every barrier of a launch as arrays (one entry per barrier element and block);
the operations below change them as the hardware does.  What is not defined -- an arrival with
none pending, a wait or arrival on a barrier never initialised -- is reported by the simulator
(``sim.mbarriers``) at the line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_COUNT = (1 << 20) - 1  # an mbarrier's arrival count: 1 to 2**20 - 1
MAX_TX = (1 << 20) - 1  # the transaction bytes one expect_tx or copy may add or take
BYTES = 8  # one mbarrier: a 64-bit word of shared memory, 8-byte aligned

# each operation's name in messages and its PTX instruction
OPS = {
    "init": "mbarrier.init",
    "arrive": "mbarrier.arrive",
    "arrive_tx": "mbarrier.arrive.expect_tx",
    "expect_tx": "mbarrier.expect_tx",
    "try_wait": "mbarrier.try_wait.parity",
    "wait": "mbarrier.try_wait.parity (in a loop)",
    "tma": "cp.async.bulk.tensor (tma_load)",
    "st_async": "st.async (store_async)",
}


@dataclass
class State:
    """Barriers as arrays, one entry each: the arrivals a phase expects, those still pending, the
    transaction bytes still pending, the phase (how many have completed), whether initialised."""

    count: np.ndarray
    pending: np.ndarray
    tx: np.ndarray
    phase: np.ndarray
    valid: np.ndarray

    @staticmethod
    def make(n: int) -> State:
        return State(
            np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.zeros(n, bool),
        )  # fmt: skip

    def init(self, at: np.ndarray, count: np.ndarray) -> None:
        self.count[at] = count
        self.pending[at] = count
        self.tx[at] = 0
        self.phase[at] = 0
        self.valid[at] = True

    def arrive(self, at: np.ndarray, tx: np.ndarray | None = None) -> np.ndarray:
        """Arrivals at barriers ``at`` (repeats allowed: several threads at one), each first adding
        ``tx`` bytes; returns the barriers whose phase then completed (the phase each arrival saw is
        the phase before: CUDA's state token)."""
        if tx is not None:
            np.add.at(self.tx, at, tx)
        np.subtract.at(self.pending, at, 1)
        return self.complete(np.unique(at))

    def expect_tx(self, at: np.ndarray, tx: np.ndarray) -> None:
        np.add.at(self.tx, at, tx)

    def complete_tx(self, at: np.ndarray, tx: np.ndarray) -> np.ndarray:
        """Copies completing on barriers ``at``, ``tx`` bytes each; the barriers whose phase completed."""
        np.subtract.at(self.tx, at, tx)
        return self.complete(np.unique(at))

    def complete(self, at: np.ndarray) -> np.ndarray:
        """Barriers among ``at`` whose pending arrivals and bytes are both zero move to the next phase."""
        done = at[(self.pending[at] == 0) & (self.tx[at] == 0) & self.valid[at]]
        self.phase[done] += 1
        self.pending[done] = self.count[done]
        return done

    def passed(self, at: np.ndarray, parity: np.ndarray) -> np.ndarray:
        """``try_wait.parity``: whether the phase of parity ``parity`` has completed, that is the
        current phase's parity is the other one."""
        return (self.phase[at] & 1) != (parity & 1)
