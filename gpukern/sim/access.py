"""What the simulator's analyses see of memory: arrays (``Memory``) and accesses (``Access``).

Every read, write, vector access and atomic the simulator runs becomes one ``Access`` event,
which each step of the memory path (``sim.memory``) consumes in turn: the bounds check, race
tracking (``sim.races``), the profiler (``gpukern.tools.profile``).  This module is the contract
between them, so an analysis needs to know nothing of the interpreter that made the event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import Loc
from ..ir import nodes as ir

LOAD, STORE, ATOMIC = "load", "store", "atomic"
# an asynchronous copy's destination elements landing (at the async_wait that covers them): the
# moment they count as written, for uninitialised reads and races; no data moves, nothing to count
LANDED = "landed"


@dataclass(eq=False)
class Memory:
    """One array's storage, flat in C order.

    ``data`` holds the whole grid's copy: a global array (or a constant table) itself, a shared array once per block
    (block b's row starts at ``b * size``), a local array once per thread (lane l's at ``l * size``).
    """

    name: str
    space: str  # 'global' | 'shared' | 'local'
    data: np.ndarray
    shape: tuple[int, ...]  # the shape the kernel indexes
    # a field of a record array (``data`` a view of it): the bytes from one element to the next,
    # and the field's byte offset in its record; 0, 0 for a plain array (elements ``itemsize`` apart)
    stride: int = 0
    offset: int = 0
    sub: int = 1  # a sub-array field: its elements in each record (element k of record r is r * sub + k)

    @property
    def size(self) -> int:
        """Elements of one copy (a block's, a thread's, or the global array)."""
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(eq=False)
class Access:
    """One memory instruction executed by the active lanes ``lanes`` (ascending).

    Each lane touches ``width`` consecutive elements (1, or 2/4 for a vector access) from
    ``offsets`` on: flat element offsets within the array as the kernel sees it (within its
    block's copy for shared memory, its own copy for local memory).  ``where`` is the same
    position in ``memory.data``.  ``kind`` is LOAD, STORE or ATOMIC (a read-modify-write), or
    LANDED (see above).  ``copy``: the access is an asynchronous copy's read of its source or
    write of its destination at issue (``sim.asynchronous``); ``operand``: the matrix units' read of a
    ``wgmma`` operand from shared memory, in flight until its ``wgmma_wait`` (no instruction of the
    thread's: the profiler counts none).
    ``bulk``: a bulk copy's read or write (the TMA unit's: the profiler counts it apart).
    ``indices`` are the kernel's index values per dimension, before any conversion (broadcastable
    to every lane of the grid), so messages can show them as the kernel computed them.
    """

    memory: Memory
    node: ir.Node
    kind: str
    lanes: np.ndarray
    offsets: np.ndarray
    where: np.ndarray
    width: int
    indices: list[np.ndarray]
    copy: bool = False
    operand: bool = False
    bulk: bool = False  # a bulk copy's (TMA, cp.async.bulk) read or write: no LSU instruction's

    @property
    def space(self) -> str:
        return self.memory.space

    @property
    def itemsize(self) -> int:
        return self.memory.data.dtype.itemsize

    @property
    def loc(self) -> Loc | None:
        return self.node.loc

    def byte_offsets(self) -> np.ndarray:
        """Each lane's first byte within the array (its block's or thread's copy): the address the
        hardware sees, which for a record field is the record's plus the field's offset."""
        mem = self.memory
        if mem.stride == 0:
            return self.offsets.astype(np.int64) * self.itemsize
        if mem.sub == 1:
            return self.offsets.astype(np.int64) * mem.stride + mem.offset
        record, k = np.divmod(self.offsets.astype(np.int64), mem.sub)
        return record * mem.stride + mem.offset + k * self.itemsize

    def elements(self) -> np.ndarray:
        """Every element touched, as positions in ``memory.data`` (lane by lane, ``width`` each)."""
        if self.width == 1:
            return self.where
        return (self.where[:, None] + np.arange(self.width, dtype=self.where.dtype)).ravel()

    def per_element(self, per_lane: np.ndarray) -> np.ndarray:
        """A per-lane array repeated to line up with ``elements()``."""
        return per_lane if self.width == 1 else np.repeat(per_lane, self.width)
