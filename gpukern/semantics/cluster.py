"""What a thread-block cluster is (sm_90; CUDA Programming Guide, "Thread Block Clusters"), once, for
the front end, the simulator and the launchers.

A kernel declaring ``cluster_dims(x, y, z)`` runs its grid in clusters of x * y * z blocks (the grid a
multiple of it in each dimension), each cluster's blocks on one GPC at the same time.  A block's
*rank* in its cluster counts x fastest: ``(bx % x) + (by % y) * x + (bz % z) * x * y``.  The blocks of
a cluster read and write each other's shared memory (distributed shared memory: ``peer(a, rank)``)
and meet at ``cluster_barrier()``, which every live thread of the cluster reaches; its arrival
releases and its wait acquires, so what a thread wrote before it, in any block's shared memory, is
seen after it by every thread of the cluster.  A block's shared memory exists while the block runs:
a peer must not be read or written after it may have exited -- a cluster_barrier() after the last
access, before the peer's end, orders them.  A kernel without clusters is one of one block.

``store_async(dst, value(s), bar)`` (PTX ``st.async``) stores 1, 2 or 4 elements of 4 bytes, or 1 or 2
of 8 (``STORE_ASYNC``), into a block's shared memory (``peer(a, r)[i]``, or the block's own), the
bytes completing on an mbarrier of that block (``peer(bars, r)[s]``: the same block): a weak store
whose completion releases at cluster scope, so the block that waits for the phase (its waits acquire
at cluster scope) reads what was stored, with no cluster barrier -- and no wait, in the storing
thread, for its own earlier stores to global memory, which a cluster barrier's release makes.  The
target waits for the bytes before it may exit, so the store needs no cluster barrier after it either;
its destination is the value's size aligned.
"""

from __future__ import annotations

import numpy as np

STORE_ASYNC = {4: (1, 2, 4), 8: (1, 2)}  # element bytes -> the elements one store_async may move
PORTABLE_BLOCKS = 8  # the portable cluster size: every sm_90 device runs it
MAX_BLOCKS = 16  # more than 8 is "non-portable" (the launcher opts in: an H100 or H200 runs 16)


def size(dims: tuple[int, ...]) -> int:
    """The blocks of a cluster of shape ``dims``."""
    return int(np.prod(dims))


def dims_problem(dims: tuple[int, ...]) -> str | None:
    """Why ``dims`` cannot be a cluster's shape (None: it can)."""
    if len(dims) > 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
        return f"a cluster's shape is 1 to 3 positive integers, not {dims!r}"
    if size(dims) > MAX_BLOCKS:
        return f"a cluster has at most {MAX_BLOCKS} blocks, not {size(dims)} {dims!r}"
    return None


def grid_problem(grid: tuple[int, int, int], dims: tuple[int, int, int]) -> str | None:
    """Why a grid cannot run in clusters of ``dims`` (None: it can)."""
    if any(g % d for g, d in zip(grid, dims)):
        return f"the grid {grid} is not a whole number of clusters of {dims} blocks in each dimension"
    return None


def ranks(block_idx: tuple[np.ndarray, np.ndarray, np.ndarray], dims: tuple[int, int, int]) -> np.ndarray:
    """Each block's rank in its cluster."""
    x, y, z = dims
    return (block_idx[0] % x) + (block_idx[1] % y) * x + (block_idx[2] % z) * (x * y)


def clusters(block_idx: tuple[np.ndarray, ...], grid: tuple[int, int, int], dims: tuple[int, int, int]) -> np.ndarray:
    """Each block's cluster, numbered x fastest over the grid of clusters."""
    nx, ny = grid[0] // dims[0], grid[1] // dims[1]
    return (block_idx[0] // dims[0]) + (block_idx[1] // dims[1]) * nx + (block_idx[2] // dims[2]) * (nx * ny)
