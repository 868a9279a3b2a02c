"""Ordering between warps by mbarriers, named and cluster barriers: vector clocks for ``sim.races``.

A block barrier orders every thread of a block (``sim.races`` counts them as epochs); mbarriers,
named barriers and cluster barriers order some threads after others: a consumer that waited for a
phase is ordered after what the threads that arrived at it did before arriving, the threads
meeting at a named barrier after each other, the threads of a cluster after a cluster barrier.
In a kernel with any of them, each thread keeps a vector clock over its block's warps -- its
cluster's, where the kernel has clusters (``vc[thread, warp]``): an access records its thread's
own entry (its *clock*); an arrival publishes the thread's clock into the mbarrier's phase, then
moves its own entry on; a wait that sees the phase complete takes in what the phase's arrivals
published; the threads of a named, block or cluster barrier take in each other's.  A later access
by thread t is then ordered after an access of warp w at clock c when ``vc[t, w] >= c``.

The unit is the warp: a thread's arrival covers its warp's accesses before it (CUDA's pipelines
arrive with one thread of a warp or warpgroup, after collective operations), and a warpgroup's
``wgmma_wait`` takes in its four warps' clocks (their operand reads are one collective read).
Threads of one warp are ordered by the rules ``sim.races`` already has (program order,
``syncwarp``, and the warp-wide sync a named barrier makes), and by what a thread has taken in of its
warp-mates' clocks (``mates``: an arrival it waited for, a join): a thread's own column of ``vc`` is
its own clock, so that knowledge is kept apart.  What TMA copies write is checked
here too: a ``tma_load`` into elements that a warp has read, and that warp's arrival after the
read has not reached the issuing thread, may overwrite them before they are read on a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .access import Memory


class Ordering:
    """The vector clocks of one launch, and what each mbarrier's phases publish."""

    def __init__(self, run: Any):
        self.run = run
        per_block = -(-run.tpb // run.width)
        clusters = run.clusters
        self.per_block = per_block * clusters.size  # the warps of a cluster (of a block, without clusters)
        # per lane: its warp in its cluster (the block's rank first)
        self.warp = clusters.rank[run.block_of] * per_block + run.thread_in_block.astype(np.int64) // run.width
        self.cluster = clusters.cluster
        self.vc = np.zeros((run.lanes, self.per_block), np.int32)
        self.vc[run.lane_ids, self.warp] = 1
        # per lane: what it has taken in of its own warp's clocks (its warp-mates' accesses it is ordered
        # after); the own warp's column of ``vc`` is the lane's own clock, which its ticks move on
        self.mates = np.zeros(run.lanes, np.int32)
        self.now = 1
        self.flush: Any = None  # files the accesses not yet recorded, with the clocks they were made at
        self.pending: dict[tuple[Memory, int], np.ndarray] = {}  # per mbarrier: its current phase's arrivals'
        self.released: dict[tuple[Memory, int], np.ndarray] = {}  # ... and its completed phases'

    def clock(self, lanes: np.ndarray) -> np.ndarray:
        """The lanes' own entries: what an access of theirs records."""
        return self.vc[lanes, self.warp[lanes]]

    def tick(self, lanes: np.ndarray) -> None:
        """The lanes' accesses from here on are after what they have published."""
        if self.flush is not None:
            self.flush()
        self.now += 1
        self.vc[lanes, self.warp[lanes]] = self.now

    def ordered(self, t: np.ndarray, warp: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """Whether threads t are ordered after accesses of (their block's) warps ``warp`` at ``clock``."""
        return self.vc[t, warp] >= clock

    def take_in(self, lanes: np.ndarray, rows: np.ndarray) -> None:
        """Lanes take in clocks ``rows`` (one a lane): their vector clocks, and of their own warp's
        column, what their warp-mates did (``mates``)."""
        self.mates[lanes] = np.maximum(self.mates[lanes], rows[np.arange(len(lanes)), self.warp[lanes]])
        self.vc[lanes] = np.maximum(self.vc[lanes], rows)

    # ------------------------------------------------------------ mbarriers
    def arrive(self, mem: Memory, where: np.ndarray, lanes: np.ndarray) -> None:
        """Lanes arriving at mbarriers (elements ``where`` of ``mem``, one each) publish their clocks."""
        for w in np.unique(where).tolist():
            row = self.vc[lanes[where == w]].max(axis=0)
            got = self.pending.get((mem, w))
            self.pending[(mem, w)] = row if got is None else np.maximum(got, row)
        self.tick(lanes)

    def completed(self, mem: Memory, where: np.ndarray) -> None:
        """Phases of the mbarriers ``where`` completed: what their arrivals published is released."""
        for w in np.unique(where).tolist():
            got = self.pending.pop((mem, w), None)
            if got is not None:
                old = self.released.get((mem, w))
                self.released[(mem, w)] = got if old is None else np.maximum(old, got)

    def acquire(self, mem: Memory, where: np.ndarray, lanes: np.ndarray, forced: bool = False) -> None:
        """Lanes that saw the phases of mbarriers ``where`` complete take in what they released
        (``forced``: a wait reported as a deadlock and let pass takes in its phase's arrivals so far,
        so that what follows is not reported again as that fault's consequence)."""
        for w in np.unique(where).tolist():
            mine = lanes[where == w]
            for got in (self.released.get((mem, w)), self.pending.get((mem, w)) if forced else None):
                if got is not None:
                    self.take_in(mine, np.broadcast_to(got, (len(mine), len(got))))

    # ------------------------------------------------------------ barriers
    def join(self, lanes: np.ndarray) -> None:
        """Lanes of one block meeting (a named barrier's phase, a warpgroup's wgmma_wait): each takes in
        the others' clocks."""
        if len(lanes):
            row = self.vc[lanes].max(axis=0)
            self.take_in(lanes, np.broadcast_to(row, (len(lanes), len(row))))
            self.tick(lanes)

    def cluster_join(self, blocks: np.ndarray, clusters: np.ndarray) -> None:
        """A cluster_barrier() of the clusters of ``blocks`` (``clusters``: each one's): every thread of
        each takes in the others'."""
        tpb = self.run.tpb
        for c in np.unique(clusters).tolist():
            mine = blocks[clusters == c]
            self.join((mine[:, None] * tpb + np.arange(tpb)).ravel())

    def block_join(self, blocks: np.ndarray) -> None:
        """A barrier() of ``blocks``: every thread of each takes in the others'."""
        tpb = self.run.tpb
        per = self.vc.reshape(self.run.nblocks, tpb, self.per_block)
        lanes = (blocks[:, None] * tpb + np.arange(tpb)).ravel()
        rows = np.broadcast_to(per[blocks].max(axis=1, keepdims=True), (len(blocks), tpb, self.per_block))
        self.take_in(lanes, rows.reshape(-1, self.per_block))
        self.tick(lanes)
