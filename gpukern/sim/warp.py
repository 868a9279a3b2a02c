"""Warps on the simulator: the warp intrinsics run exactly as CUDA defines them, and their masks checked.

A warp is 32 consecutive threads of a block in linear order, 64 where the variant is compiled for
AMD's wavefronts (``ir.Program.lanes``; the last warp of a block may be partial).  The simulator's
lanes advance together, so the lanes executing a warp op together are the statement's execution
mask; each op gathers its warps into rows of slots, one per lane, runs the NumPy form of
``semantics.warp``, and scatters the results back.  Masks CUDA leaves undefined are reported as
``WarpMaskError`` through ``_Run.report`` (raised, or collected by ``gk.sanitize``): a lane whose
mask names a lane passing a different mask (disjoint groups of a warp may pass their own masks,
as CUDA allows), a lane missing from its own mask, a mask naming a live lane that is not
executing the call, a shuffle reading a lane that is not taking part, and a shuffle's run-time
width that is not a power of 2 from 1 to the warp's lanes.  A syncwarp also tells the race checks
(``sim.races``) which lanes it orders.  At 64 lanes, what only a 32-lane warp makes right is
``WarpWidthError`` (``sim.wave64``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UninitializedReadError, WarpMaskError
from ..ir import nodes as ir
from ..semantics.warp import WARP_OPS, lane_bits, mask_dtype
from .wave64 import Reach


class Warps:
    """The warps of one launch: for each warp, the grid lane of each of its slots (one per lane)."""

    def __init__(self, run: Any):
        self.run = run
        self.width = n = run.width
        per_block = -(-run.tpb // n)
        t = run.thread_in_block.astype(np.int64)
        self.warp = run.block_of * per_block + t // n  # each lane's warp
        slots = np.full((run.nblocks * per_block, n), -1, np.int64)
        slots[self.warp, t % n] = run.lane_ids
        self.exists = slots >= 0  # slots past a partial warp's end hold no thread
        self.slots = np.where(self.exists, slots, 0)
        self.lane = np.arange(n, dtype=np.int64)
        self.mask_type = mask_dtype(n)
        self.reach = Reach(run) if n == 64 else None  # the shuffles' offsets and widths, per call site

    def run_op(
        self, e: ir.WarpOp, m: np.ndarray, mask: Any, args: list[Any], assigned: tuple[str, Any] | None = None
    ) -> Any:
        """The op's value in every lane (meaningful in the lanes of ``m``, those executing it);
        ``assigned``: for a shuffle of a variable some lanes never set, its name and the lanes that did."""
        run, op = self.run, WARP_OPS[e.op]
        rows = np.unique(self.warp[m]) if not m.all() else slice(None)
        slots, exists = self.slots[rows], self.exists[rows]
        active = m[slots] & exists
        masks = np.broadcast_to(np.asarray(mask, self.mask_type), (run.lanes,))[slots]
        if self.reach is not None and e.op != "activemask":
            masks = self.reach.widened(e, slots, active, masks)
        if run.check and e.op != "activemask":
            self.check_masks(e, slots, exists, active, masks)
        vals = [np.broadcast_to(np.asarray(a), (run.lanes,))[slots] for a in args]
        if op.shuffle is not None:
            w = self.widths(e, slots, active, vals[2])
            if self.reach is not None:
                self.reach.shuffled(e, active, vals[1], w)
            out = self.shuffle(e, slots, active, masks, vals[0], vals[1], w, assigned)
        else:
            out = op.numpy(vals, active, masks)
            if out is None:  # syncwarp: no value, but memory ordered among the lanes it syncs
                run.mem.syncwarp(slots, active, masks)
                return None
        result = np.zeros(run.lanes, e.type.dtype)
        result[slots[active]] = np.broadcast_to(out, active.shape)[active]
        return result

    def widths(self, e: ir.WarpOp, slots: np.ndarray, active: np.ndarray, w: np.ndarray) -> np.ndarray:
        """A shuffle's width in each lane, int64: a run-time width that is not a power of 2 from 1 to
        the warp's lanes (CUDA leaves the result undefined) is reported, and taken as the warp to go on."""
        w = w.astype(np.int64)
        bad = active & ((w < 1) | (w > self.width) | ((w & (w - 1)) != 0))
        if bad.any():
            r, k = (int(x[0]) for x in np.nonzero(bad))
            self.report(
                e,
                f"lane {k} ({self.run.who(int(slots[r, k]))}) passes width {int(w[r, k])}: a shuffle's width must be "
                f"a power of 2 from 1 to {self.width} (CUDA leaves the result undefined otherwise)",
                (int(slots[r, k]),),
            )
            w = np.where(bad, self.width, w)
        return w

    def shuffle(
        self,
        e: ir.WarpOp,
        slots: np.ndarray,
        active: np.ndarray,
        masks: np.ndarray,
        v: np.ndarray,
        b: np.ndarray,
        w: np.ndarray,
        assigned: tuple[str, Any] | None = None,
    ) -> np.ndarray:
        """Each lane reads its source lane's value (its own where the mode says so); ``assigned``: the
        variable's name and the lanes that set it, where some did not (the source lane must have)."""
        lane = np.broadcast_to(self.lane, slots.shape)
        j = WARP_OPS[e.op].shuffle.numpy(lane, b.astype(np.int64), w, self.width)  # type: ignore[union-attr]
        rows = np.arange(slots.shape[0])[:, None]
        taking_part = active[rows, j] & ((masks >> j.astype(masks.dtype)) & 1).astype(bool)
        if self.run.check:
            bad = active & (j != lane) & ~taking_part
            if bad.any():
                r, k = (int(x[0]) for x in np.nonzero(bad))
                src = int(j[r, k])
                self.report(
                    e,
                    f"lane {k} ({self.run.who(int(slots[r, k]))}) reads lane {src} of its warp, which is "
                    "not taking part (not in the mask, not executing this call, or past the block's last "
                    "thread): CUDA leaves the value it gets undefined",
                    (int(slots[r, k]),),
                )
            if assigned is not None:
                name, lanes = assigned
                unset = active & ~lanes[slots[rows, j]]
                if unset.any():
                    r, k = (int(x[0]) for x in np.nonzero(unset))
                    src = int(slots[r, j[r, k]])
                    self.run.report(
                        UninitializedReadError,
                        f"{WARP_OPS[e.op].name}(): lane {k} ({self.run.who(int(slots[r, k]))}) reads {name!r} from "
                        f"lane {int(j[r, k])} ({self.run.who(src)}), which never assigned it (it is set on some "
                        "paths only)",
                        e,
                        (int(slots[r, k]), src),
                    )
        return v[rows, j]

    def check_masks(
        self, e: ir.WarpOp, slots: np.ndarray, exists: np.ndarray, active: np.ndarray, masks: np.ndarray
    ) -> None:
        run = self.run
        for other in range(self.width):  # a lane the mask names, executing it too, must pass the same mask
            names = ((masks >> masks.dtype.type(other)) & 1).astype(bool)
            differ = active & active[:, other : other + 1] & names & (masks != masks[:, other : other + 1])
            if differ.any():
                r, k = (int(x[0]) for x in np.nonzero(differ))
                self.report(
                    e,
                    f"lanes that name each other pass different masks: lane {k} ({run.who(int(slots[r, k]))}) "
                    f"passes {self.hex(masks[r, k])}, lane {other} ({run.who(int(slots[r, other]))}) "
                    f"{self.hex(masks[r, other])}; every lane of a mask must pass that same mask",
                    (int(slots[r, k]), int(slots[r, other])),
                )
                break
        own = active & (((masks >> self.lane.astype(masks.dtype)) & 1) == 0)
        if own.any():
            r, k = (int(x[0]) for x in np.nonzero(own))
            self.report(
                e,
                f"lane {k} ({run.who(int(slots[r, k]))}) calls it with mask {self.hex(masks[r, k])}, which "
                "leaves out the lane itself: every calling lane must be in its mask",
                (int(slots[r, k]),),
            )
        live = exists & ~run.frames[0].returned[slots]  # threads that have not left the kernel
        absent = lane_bits(live & ~active)[:, None] & masks
        named = active & (absent != 0)
        if named.any():
            r, k = (int(x[0]) for x in np.nonzero(named))
            gone = int(absent[r, k])
            missing = (gone & -gone).bit_length() - 1
            self.report(
                e,
                f"lane {k} ({run.who(int(slots[r, k]))}) passes mask {self.hex(masks[r, k])}, which names lane "
                f"{missing} ({run.who(int(slots[r, missing]))}), a thread that is not executing this call "
                "with it: every lane of the mask that has not exited must reach the same call",
                (int(slots[r, k]), int(slots[r, missing])),
            )

    def hex(self, mask: Any) -> str:
        return f"0x{int(mask):0{self.width // 4}x}"

    def report(self, e: ir.WarpOp, message: str, lanes: tuple[int, ...]) -> None:
        self.run.report(WarpMaskError, f"{WARP_OPS[e.op].name}(): {message}", e, lanes)
