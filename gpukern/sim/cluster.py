"""Thread-block clusters on the simulator (``semantics.cluster``): ranks, ``cluster_barrier``, and
the accesses of another block's shared memory (``peer``).

A peer access reaches the target block's copy of the array through the one memory path
(``sim.memory``, its ``block`` argument), so bounds, races and uninitialised reads are checked as
for the block's own; races across the cluster are ordered by cluster barriers (``sim.races``,
``sim.ordering``: a cluster barrier joins the clocks of every thread of the cluster).

Reported at the line: a cluster barrier some live threads of the cluster reach and others not
(``gk.BarrierDivergenceError``); a rank outside the cluster (``gk.OutOfBoundsError``); an access of
another block before the cluster's first barrier (the block may not have started), of a block whose
threads have all exited, and, at the end of the launch, one after which no cluster
barrier came before the target block's end (``gk.DataRaceError``: on a GPU the block may have
exited and its shared memory be gone).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BarrierDivergenceError, DataRaceError, OutOfBoundsError
from ..ir import nodes as ir
from ..semantics import cluster as cl


class Clusters:
    """The clusters of one launch."""

    def __init__(self, run: Any):
        self.run = run
        self.dims = run.variant.program.kernel.cluster or (1, 1, 1)
        self.size = cl.size(self.dims)
        b = np.arange(run.nblocks)
        grid = run.grid
        bidx = (b % grid[0], (b // grid[0]) % grid[1], b // (grid[0] * grid[1]))
        self.rank = cl.ranks(bidx, self.dims).astype(np.int64)  # per block
        self.cluster = cl.clusters(bidx, grid, self.dims).astype(np.int64)  # per block
        self.first = b - self.offset(self.rank)  # per block: the block of rank 0 of its cluster
        self.epoch = np.zeros(int(self.cluster.max()) + 1 if run.nblocks else 1, np.int64)  # cluster barriers passed
        # per block: the cluster epoch of the last access by another block (-1: none), its lane and node
        self.touch_epoch = np.full(run.nblocks, -1, np.int64)
        self.touch_lane = np.zeros(run.nblocks, np.int64)
        self.touch_node = np.empty(run.nblocks, object)

    def offset(self, rank: np.ndarray) -> np.ndarray:
        """The linear block offset of the block of ``rank`` from its cluster's rank 0."""
        x, y, _ = self.dims
        gx, gy = self.run.grid[0], self.run.grid[1]
        return (rank % x) + ((rank // x) % y) * gx + (rank // (x * y)) * (gx * gy)

    def ranks(self) -> np.ndarray:
        """Per lane, its block's rank (int32)."""
        return self.rank[self.run.block_of].astype(np.int32)

    # ------------------------------------------------------------ peers
    def targets(self, lanes: np.ndarray, rank: np.ndarray, node: ir.Node) -> tuple[np.ndarray, np.ndarray]:
        """Per lane of ``lanes``, the block whose copy ``peer(a, rank)`` reaches, and which lanes may
        go on (a rank outside the cluster, or a block whose threads have all exited, reported)."""
        run = self.run
        r = np.broadcast_to(np.asarray(rank), (run.lanes,))[lanes].astype(np.int64)
        own = run.block_of[lanes]
        ok = r < self.size
        if run.check and not ok.all():
            k = int(np.argmin(ok))
            run.report(
                OutOfBoundsError,
                f"{run.who(int(lanes[k]))} reaches the shared memory of the block of rank {int(r[k])} of its "
                f"cluster, which has {self.size} blocks (cluster_dims{self.dims})",
                node,
                (int(lanes[k]),),
            )
        block = np.where(ok, self.first[own] + self.offset(np.where(ok, r, 0)), own)
        if run.check:
            gone = ok & self._exited(block)
            if gone.any():
                k = int(np.argmax(gone))
                run.report(
                    DataRaceError,
                    f"{run.who(int(lanes[k]))} reaches the shared memory of the block of rank {int(r[k])}, whose "
                    "threads have all exited: a block's shared memory is gone when it ends; put a "
                    "cluster_barrier() after the last access of it, before its threads return",
                    node,
                    (int(lanes[k]),),
                )
                ok &= ~gone
            other = ok & (block != own)
            early = other & (self.epoch[self.cluster[own]] == 0)
            if early.any():  # (CUDA: a cluster's blocks are not known to have started before its first barrier)
                k = int(np.argmax(early))
                run.report(
                    DataRaceError,
                    f"{run.who(int(lanes[k]))} reaches the shared memory of the block of rank {int(r[k])} before "
                    "the cluster's first cluster_barrier(): on a GPU that block may not have started yet; put a "
                    "cluster_barrier() between the kernel's start and the first access of another block",
                    node,
                    (int(lanes[k]),),
                )
            if isinstance(node, ir.StoreAsync):  # (its target waits for it before it may end: copies.finish checks)
                return block, ok
            target = block[other]
            self.touch_epoch[target] = self.epoch[self.cluster[target]]
            self.touch_lane[target] = lanes[other]
            self.touch_node[target] = node
        return block, ok

    def _exited(self, blocks: np.ndarray) -> np.ndarray:
        run = self.run
        live = np.bincount(run.block_of[~run.frames[0].returned], minlength=run.nblocks)
        return live[blocks] == 0

    # ------------------------------------------------------------ the barrier
    def barrier(self, s: ir.Barrier, m: np.ndarray) -> None:
        """Every live thread of each cluster with an arriving thread must arrive; then each such
        cluster's threads are ordered after one another's accesses."""
        run = self.run
        arrived = np.bincount(self.cluster[run.block_of[m]], minlength=len(self.epoch))
        if run.check:
            live = np.bincount(self.cluster[run.block_of[~run.frames[0].returned]], minlength=len(self.epoch))
            bad = (arrived > 0) & (arrived < live)
            if bad.any():
                c = int(np.argmax(bad))
                in_c = self.cluster[run.block_of] == c
                here = int(np.nonzero(in_c & m)[0][0])
                missing = int(np.nonzero(in_c & ~m & ~run.frames[0].returned)[0][0])
                run.report(
                    BarrierDivergenceError,
                    f"cluster_barrier() reached by {int(arrived[c])} of the {int(live[c])} live threads of the "
                    f"cluster: {run.who(here)} arrived, {run.who(missing)} did not",
                    s,
                    (here, missing),
                )
        done = np.nonzero(arrived > 0)[0]
        self.epoch[done] += 1
        blocks = np.nonzero(np.isin(self.cluster, done))[0]
        run.mem.cluster_barrier(blocks, self.cluster[blocks])

    def finish(self) -> None:
        """At the end of the launch: a peer access after which the target's cluster had no barrier."""
        run = self.run
        late = np.nonzero((self.touch_epoch >= 0) & (self.touch_epoch >= self.epoch[self.cluster]))[0]
        if not len(late):
            return
        blk = int(late[0])
        lane = int(self.touch_lane[blk])
        run.report(
            DataRaceError,
            f"{run.who(lane)} reaches the shared memory of the block of rank {int(self.rank[blk])} of its "
            "cluster with no cluster_barrier() after it: on a GPU that block may have exited by then and "
            "its shared memory be gone; end the kernel with cluster_barrier()",
            self.touch_node[blk],
            (lane,),
        )
