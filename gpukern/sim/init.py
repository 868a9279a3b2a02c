"""Reads of memory nothing wrote: one step of the simulator's memory path (``sim.memory``).

A GPU does not clear shared or local memory, nor memory from ``empty()``: a kernel that reads an
element before any thread wrote it gets whatever was there, and the simulator's zeros would hide
the bug.  Per element of each shared and local array of a launch, and of each global array made
by ``empty()`` until every element is written, a flag says whether anything wrote it; a load or an
atomic update (which reads too) of an element whose flag is clear is an ``UninitializedReadError``.
A global array's flags live with the array (``SimBackend.unwritten``), across launches.

Once every flag of an array is set the array costs nothing more; in most kernels that happens
with the first stores (a tile, an accumulator), so only kernels that really leave holes pay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UninitializedReadError
from .access import ATOMIC, LANDED, LOAD, STORE, Access, Memory

FLAG_BYTES = np.dtype(bool).itemsize  # what tracking adds to each shared or local element


class _Flags:
    """Which elements of one array have been written; ``complete`` once all have."""

    def __init__(self, written: np.ndarray):
        self.written = written
        self.complete = bool(written.all())
        self.dirty = False  # written since ``complete`` was last worked out


class Initialised:
    """The uninitialised-read step of one launch."""

    def __init__(self, run: Any):
        self.run = run
        self.flags: dict[Memory, _Flags] = {}

    def attach(self, mem: Memory, written: np.ndarray | None = None) -> None:
        """Track ``mem``: from nothing written (a shared or local array just declared), or from
        ``written``, flags kept by a global array across launches (updated in place)."""
        self.flags[mem] = _Flags(np.zeros(mem.data.size, bool) if written is None else written)

    def track(self, a: Access) -> None:
        f = self.flags.get(a.memory)
        if f is None or f.complete:
            return
        where = a.elements()
        if a.kind == STORE and a.copy:  # an asynchronous copy: written when it lands (LANDED)
            return
        if a.kind in (STORE, LANDED):
            f.written[where] = True
            f.dirty = True
            return
        if f.dirty:
            f.complete = bool(f.written.all())
            f.dirty = False
            if f.complete:
                return
        ok = f.written[where]
        if not ok.all():
            k = int(np.argmin(ok))
            self.report(a, where, k)
        if a.kind == ATOMIC:  # an atomic update writes as it reads
            f.written[where] = True
            f.dirty = True

    def report(self, a: Access, where: np.ndarray, k: int) -> None:
        run, mem = self.run, a.memory
        lane = int(a.lanes[k // a.width])
        index = [int(x) for x in np.unravel_index(int(where[k]) % mem.size, mem.shape)]
        verb = "read" if a.kind == LOAD else "updated atomically"
        if mem.space == "global":
            what = "an array from empty() that no launch has written there yet"
            fix = "write every element before reading it, or make the array with zeros() or to_device()"
        else:
            what = f"{mem.space} memory that no thread has written in this launch"
            fix = f"{mem.space} memory starts with whatever was there: write it (and barrier()) before reading"
        run.report(
            UninitializedReadError,
            f"uninitialised read of {mem.space} array {mem.name!r}{index}: {verb} by {run.who(lane)}, "
            f"but the element is {what}; {fix}",
            a.node,
            (lane,),
        )
