"""Fragments on the simulator: the matrix multiply-accumulate statements (``ir.MatrixOp``) run
exactly as ``gpukern.mma_ops`` defines them, a fragment being one (rows, cols) float32 tile per warp.

Loads and stores go through the one memory path (``sim_memory``) as the warp-wide accesses of
``mma_ops.moves`` (the hardware's instructions), which bounds, races, uninitialised reads and the
profiler see as any others.  Every statement is warp-collective: a
warp of which some lanes execute it and some do not (or a partial warp) is reported as a
``WarpMaskError``; a tile whose first element or row stride is not aligned as CUDA needs
(``ir.TILE_ALIGNMENT``, ``ir.TILE_ROW_ALIGNMENT``) as a ``MisalignedAccessError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ir, mma_ops
from ..errors import MisalignedAccessError, WarpMaskError
from ..types import FragmentType, StorageType
from ..warp_ops import WARP_SIZE


class Fragments:
    """The fragments of one launch's frames: per fragment name, a (warps, rows, cols) float32 array.
    Which lanes make up which warp is the launch's ``sim_warp.Warps``."""

    def __init__(self, run: Any):
        self.run = run
        self.warps = run.warps
        t = run.thread_in_block.astype(np.int64)
        self.slot = (t % WARP_SIZE).astype(np.int32)  # each lane's lane in its warp
        self.partial = run.tpb % WARP_SIZE != 0

    def declare(self, frame: Any, f: ir.Fragment) -> None:
        # NaN until filled or loaded, so a result computed from an unset fragment shows it
        frame.fragments[f.name] = np.full((len(self.warps.slots), f.type.rows, f.type.cols), np.nan, np.float32)

    def warps_of(self, s: ir.MatrixOp, m: np.ndarray) -> np.ndarray:
        """The warps executing ``s``; checked whole (every lane of each executes it)."""
        run, ws = self.run, self.warps
        warps = np.unique(ws.warp[m])
        if run.check:
            if self.partial:
                lane = int(np.nonzero(m)[0][0])
                self.report(s, f"the block has {run.tpb} threads, not a multiple of 32, so a warp is partial", lane)
            slots, exists = ws.slots[warps], ws.exists[warps]
            absent = exists & ~m[slots]
            short = absent.any(axis=1)
            if short.any():
                w = int(np.argmax(short))
                lane = int(slots[w][absent[w]][0])
                self.report(
                    s,
                    f"lanes of warp {int(warps[w]) % -(-run.tpb // WARP_SIZE)} of a block do not execute it "
                    f"({run.who(lane)}, among {int(absent[w].sum())}, does not)",
                    lane,
                )
        return warps

    def uniform(self, s: ir.MatrixOp, warps: np.ndarray, m: np.ndarray, values: np.ndarray, what: str) -> None:
        """CUDA takes a fragment operation's pointer, leading dimension and fill value as the same in
        every lane of the warp; a lane whose ``values`` differ from its warp's first executing lane's
        is reported (the simulator would otherwise give each lane its own, as no GPU does)."""
        slots = self.warps.slots[warps]
        live = self.live(warps, m)
        v = np.broadcast_to(values, (self.run.lanes,))[slots]
        first = v[np.arange(len(warps)), np.argmax(live, axis=1)]
        bad = live & (v != first[:, None])
        if bad.any():
            w = int(np.argmax(bad.any(axis=1)))
            lane = int(slots[w][bad[w]][0])
            self.report(s, f"its {what} differs between lanes of a warp ({self.run.who(lane)})", lane)

    def live(self, warps: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Per warp of ``warps`` and slot: whether the lane exists (a partial warp's last slots do
        not) and executes (``m``)."""
        return self.warps.exists[warps] & m[self.warps.slots[warps]]

    def first_lanes(self, warps: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The grid lane of each warp's first live lane: whose operands CUDA takes for the warp's."""
        return self.warps.slots[warps][np.arange(len(warps)), np.argmax(self.live(warps, m), axis=1)]

    def report(self, s: ir.MatrixOp, message: str, lane: int) -> None:
        self.run.report(
            WarpMaskError,
            f"{s.WHAT} is warp-collective, every lane of a warp must execute it: {message}",
            s,
            (lane,),
        )

    def fill(self, frame: Any, s: ir.FillFragment, m: np.ndarray, value: Any) -> None:
        warps = self.warps_of(s, m)
        v = np.broadcast_to(np.asarray(value, np.float32), (self.run.lanes,))
        if self.run.check:
            self.uniform(s, warps, m, v, "value")
        first = self.first_lanes(warps, m)
        t = s.fragment.type
        frame.fragments[s.fragment.name][warps] = mma_ops.round_input(v[first], t)[:, None, None]

    def tile_access(self, s: ir.LoadMatrix | ir.StoreMatrix, m: np.ndarray, warps: np.ndarray) -> Any:
        """Per instruction of ``mma_ops.moves``: the memory, each lane's indices of its first
        element, the lanes taking part, how many elements each moves, and per element each lane's
        (r, c) in the fragment."""
        run = self.run
        t: FragmentType = s.fragment.type
        corner = [np.broadcast_to(run.eval(i, m), (run.lanes,)).astype(np.int64) for i in s.indices]
        ldm = np.broadcast_to(run.eval(s.ldm, m), (run.lanes,)).astype(np.int64)
        mem = run.memory(s.array)
        if run.check:
            for i, c in enumerate(corner):
                self.uniform(s, warps, m, c, "tile's corner" if len(corner) == 1 else f"tile's corner (index {i})")
            self.uniform(s, warps, m, ldm, "ldm")
            self.check_alignment(s, mem, corner, ldm, m)
        transpose = t.layout == "col"
        for rows, cols, width in mma_ops.moves(t, mem.space):
            sr, sc = rows[self.slot], cols[self.slot]
            part = m & (sr >= 0)
            sr = np.maximum(sr, 0)
            if len(corner) == 1:
                idx = [corner[0] + sr * ldm + sc]
            else:
                idx = corner[:-2] + [corner[-2] + sr, corner[-1] + sc]
            at = [(sc + k, sr) if transpose else (sr, sc + k) for k in range(width)]
            yield mem, idx, part, width, at

    def check_alignment(self, s: ir.MatrixOp, mem: Any, corner: list[np.ndarray], ldm: np.ndarray, m: np.ndarray):
        run = self.run
        itemsize = mem.data.dtype.itemsize
        flat = corner[0]
        for i, n in zip(corner[1:], mem.shape[1:]):
            flat = flat * n + i
        bad = m & (((flat * itemsize) % ir.TILE_ALIGNMENT != 0) | ((ldm * itemsize) % ir.TILE_ROW_ALIGNMENT != 0))
        if bad.any():
            k = int(np.argmax(bad))
            run.report(
                MisalignedAccessError,
                f"{s.WHAT} of {mem.name!r}: its tile starts at element {int(flat[k])} "
                f"({int(flat[k]) * itemsize} bytes) with rows {int(ldm[k])} elements apart; CUDA's fragment loads "
                f"and stores need the start a multiple of {ir.TILE_ALIGNMENT} bytes and the row stride of "
                f"{ir.TILE_ROW_ALIGNMENT} bytes, in {run.who(k)}",
                s,
                (k,),
            )

    def load(self, frame: Any, s: ir.LoadMatrix, m: np.ndarray) -> None:
        warps = self.warps_of(s, m)
        f = frame.fragments[s.fragment.name]
        elem = s.array.type.elem
        for mem, idx, part, width, at in self.tile_access(s, m, warps):
            lanes = self.run.lanes_of(part)
            for values, (r, c) in zip(self.run.mem.load(mem, idx, part, s, width), at):
                values = values[lanes]
                if isinstance(elem, StorageType):
                    values = elem.to_value(values)
                f[self.warps.warp[lanes], r[lanes], c[lanes]] = mma_ops.round_input(values, s.fragment.type)

    def store(self, frame: Any, s: ir.StoreMatrix, m: np.ndarray) -> None:
        warps = self.warps_of(s, m)
        f = frame.fragments[s.fragment.name]
        w = self.warps.warp
        for mem, idx, part, _, at in self.tile_access(s, m, warps):
            self.run.mem.store(mem, idx, [f[w, r, c] for r, c in at], part, s)

    def mma(self, frame: Any, s: ir.Mma, m: np.ndarray) -> None:
        warps = self.warps_of(s, m)
        get = frame.fragments
        a, b, c = (get[x.name][warps] for x in (s.a, s.b, s.c))
        get[s.d.name][warps] = mma_ops.mma(a, b, c)
