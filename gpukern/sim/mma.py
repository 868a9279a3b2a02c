"""Fragments on the simulator: the matrix multiply-accumulate statements (``ir.MatrixOp``) run
exactly as ``gpukern.semantics.mma`` defines them, a fragment being one (rows, cols) float32 tile per warp.

Loads and stores go through the one memory path (``sim.memory``) as the warp-wide accesses of
``semantics.mma.moves`` (the hardware's instructions), which bounds, races, uninitialised reads and the
profiler see as any others.  Every statement is warp-collective: a
warp of which some lanes execute it and some do not (or a partial warp) is reported as a
``WarpMaskError``; a tile whose first element or row stride is not aligned as CUDA needs
(``ir.TILE_ALIGNMENT``, ``ir.TILE_ROW_ALIGNMENT``) as a ``MisalignedAccessError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataRaceError, LaunchError, MisalignedAccessError, WarpMaskError
from ..ir import nodes as ir
from ..semantics import mma as mma_ops
from ..semantics import wgmma as wgmma_ops
from ..semantics.warp import WARP_SIZE
from ..types import FragmentType, StorageType


class Fragments:
    """The fragments of one launch's frames: per fragment name, a (warps, rows, cols) float32 array.
    Which lanes make up which warp is the launch's ``sim.warp.Warps``."""

    def __init__(self, run: Any):
        if run.width != WARP_SIZE:
            raise LaunchError(
                f"in kernel {run.kname}: tensor-core fragments are NVIDIA's, laid out over warps of 32 lanes; "
                f"this run has wavefronts of {run.width} (GPUKERN_SIM_LANES): run it at 32 lanes"
            )
        self.run = run
        self.warps = run.warps
        t = run.thread_in_block.astype(np.int64)
        self.slot = (t % WARP_SIZE).astype(np.int32)  # each lane's lane in its warp
        self.partial = run.tpb % WARP_SIZE != 0
        # each lane's first row of a warpgroup accumulator: its warp's 16 within the group's 64
        self.group_row = (t // WARP_SIZE % wgmma_ops.WARPS * wgmma_ops.WARP_ROWS).astype(np.int64)
        # per accumulator array (kept, so that its id stays its own): per warp, the group of its latest
        # wgmma still in flight, or -1; and that wgmma.  ``reading``: the same for accumulators a
        # wgmma in flight reads as its A (registers it reads until its wait: not to be set before)
        self.pending: dict[int, tuple[np.ndarray, np.ndarray, ir.Node]] = {}
        self.reading: dict[int, tuple[np.ndarray, np.ndarray, ir.Node]] = {}
        self.positions: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # element i -> (row, column) per lane

    def declare(self, frame: Any, f: ir.Fragment) -> None:
        # NaN until filled or loaded, so a result computed from an unset fragment shows it
        rows = wgmma_ops.warp_rows(f.type)
        frame.fragments[f.name] = np.full((len(self.warps.slots), rows, f.type.cols), np.nan, np.float32)

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
        self.check_landed(s, frame, s.fragment, warps, m)
        v = np.broadcast_to(np.asarray(value, np.float32), (self.run.lanes,))
        if self.run.check:
            self.uniform(s, warps, m, v, "value")
        first = self.first_lanes(warps, m)
        t = s.fragment.type
        frame.fragments[s.fragment.name][warps] = mma_ops.round_input(v[first], t)[:, None, None]

    def tile_access(self, s: ir.LoadMatrix | ir.StoreMatrix, m: np.ndarray, warps: np.ndarray) -> Any:
        """Per instruction of ``semantics.mma.moves``: the memory, each lane's indices of its first
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
        below = self.group_row if wgmma_ops.is_warpgroup(t) else 0  # the warp's rows of a warpgroup's tile
        for rows, cols, width in mma_ops.moves(t, mem.space):
            sr, sc = rows[self.slot], cols[self.slot]
            part = m & (sr >= 0)
            sr = np.maximum(sr, 0)
            if len(corner) == 1:
                idx = [corner[0] + (sr + below) * ldm + sc]
            else:
                idx = corner[:-2] + [corner[-2] + sr + below, corner[-1] + sc]
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
        self.check_landed(s, frame, s.fragment, warps, m, sets=False)
        f = frame.fragments[s.fragment.name]
        w = self.warps.warp
        elem = s.array.type.elem
        scale = None if s.scale is None else np.broadcast_to(self.run.eval(s.scale, m), (self.run.lanes,))
        for mem, idx, part, _, at in self.tile_access(s, m, warps):
            values = [f[w, r, c] if scale is None else (f[w, r, c] * scale).astype(np.float32) for r, c in at]
            if isinstance(elem, StorageType):  # bfloat16: each value rounded once, as bits
                values = [elem.from_value(v) for v in values]
            self.run.mem.store(mem, idx, values, part, s)

    def mma(self, frame: Any, s: ir.Mma, m: np.ndarray) -> None:
        warps = self.warps_of(s, m)
        get = frame.fragments
        a, b, c = (get[x.name][warps] for x in (s.a, s.b, s.c))
        get[s.d.name][warps] = mma_ops.mma(a, b, c)

    # ------------------------------------------------------------ warpgroups (wgmma_ops)
    def groups_of(self, s: ir.MatrixOp, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The warps executing warpgroup statement ``s`` and each one's warpgroup (a number unique in
        the grid), checked: whole warps, whole warpgroups of a block whose threads are a multiple of 128."""
        run = self.run
        warps = self.warps_of(s, m)
        first = self.first_lanes(warps, m)
        group = run.block_of[first].astype(np.int64) * run.tpb + run.thread_in_block[first] // wgmma_ops.THREADS
        if run.check:
            lane = int(first[0])
            if run.tpb % wgmma_ops.THREADS:
                self.report(s, f"the block has {run.tpb} threads, not a multiple of 128 (whole warpgroups)", lane)
            groups, counts = np.unique(group, return_counts=True)
            if (counts < wgmma_ops.WARPS).any():
                g = int(groups[np.argmax(counts < wgmma_ops.WARPS)])
                lane = int(first[np.argmax(group == g)])
                self.report(
                    s,
                    f"of the warpgroup of {run.who(lane)}, only {int(counts[groups == g][0])} of its 4 warps "
                    "execute it; every warp of the group must",
                    lane,
                )
        return warps, group

    def check_landed(
        self, s: ir.MatrixOp, frame: Any, f: ir.Fragment, warps: np.ndarray, m: np.ndarray, sets: bool = True
    ) -> None:
        """A warpgroup accumulator read or set while a wgmma into it is in flight is a race; so is one
        set (``sets``) while a wgmma in flight reads it as its A (registers it reads until its wait)."""
        if not self.run.check:
            return
        arr = frame.fragments[f.name]
        for table, what in ((self.pending, "into it"), (self.reading, "reading it as A")):
            held = table.get(id(arr)) if (sets or table is self.pending) else None
            if held is None or not (held[1][warps] >= 0).any():
                continue
            _, pending, node = held
            w = int(warps[np.argmax(pending[warps] >= 0)])
            lane = int(self.first_lanes(np.array([w]), m)[0])
            line = f" at line {node.loc.lineno}" if node.loc is not None else ""
            self.run.report(
                DataRaceError,
                f"data race on accumulator {f.name!r}: {s.WHAT} uses it in {self.run.who(lane)} while the "
                f"wgmma(){line} {what} is in flight; wgmma_commit() and wgmma_wait() for its group first",
                s,
                (lane,),
            )
            return

    def element_at(
        self, frame: Any, node: Any, m: np.ndarray, sets: bool = False
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
        """``acc[i]``'s place for every lane: the warp's tile, and (warp, row, column) in it; an
        accumulator a wgmma into is in flight is a race (``check_landed``)."""
        f = node.fragment
        if f.name not in frame.fragments:
            self.declare(frame, f)
        tile = frame.fragments[f.name]
        if self.pending or self.reading:  # (a wgmma may be in flight: the warps taking part)
            self.check_landed(node, frame, f, np.unique(self.warps.warp[m]), m, sets)
        at = self.positions.get(node.index)
        if at is None:  # each lane's (row in its warp's 16, column) of element i: once a launch
            row, col = wgmma_ops.position(self.run.thread_in_block.astype(np.int64), node.index)
            at = self.positions[node.index] = (row % wgmma_ops.WARP_ROWS, col)
        return tile, (self.warps.warp, *at)

    def element(self, frame: Any, e: ir.FragmentElement, m: np.ndarray) -> np.ndarray:
        tile, at = self.element_at(frame, e, m)
        return tile[at]

    def set_element(self, frame: Any, s: ir.SetFragmentElement, m: np.ndarray, value: Any) -> None:
        tile, (warp, row, col) = self.element_at(frame, s, m, sets=True)
        v = np.broadcast_to(np.asarray(value, np.float32), m.shape)
        tile[warp[m], row[m], col[m]] = v[m]

    def wgmma(self, frame: Any, s: ir.WarpgroupMma | ir.WarpgroupMmaRegs, m: np.ndarray) -> None:
        """Each warp's 16 rows of the accumulator += its rows of A times B, read now through the memory
        path (a read the profiler does not count: the matrix units read shared memory themselves),
        kept in flight by ``sim.asynchronous`` until the ``wgmma_wait`` that covers them.  A from
        registers (``WarpgroupMmaRegs``): the warp's rows of 16 columns of accumulator ``p``, rounded
        to B's type."""
        run, t = self.run, s.d.type
        regs = isinstance(s, ir.WarpgroupMmaRegs)
        warps, group = self.groups_of(s, m)
        first = self.first_lanes(warps, m)
        starts = []
        for e, what in ((None, "") if regs else (s.a_at, "A offset"), (s.b_at, "B offset")):
            if e is None:  # (A in registers: no offset)
                starts.append(np.zeros(len(first), np.int64))
                continue
            at = np.broadcast_to(run.eval(e, m), (run.lanes,)).astype(np.int64)
            if run.check:
                self.uniform(s, warps, m, at, what)
                self.uniform_in_groups(s, group, first, at[first], what)
            starts.append(at[first])
        mem_b = run.memory(s.b)
        size = mem_b.data.dtype.itemsize
        acc = frame.fragments[s.d.name]
        if regs:
            self.check_landed(s, frame, s.p, warps, m, sets=False)
            cols = slice(16 * s.step, 16 * s.step + 16)
            a_regs = mma_ops.round_elements(frame.fragments[s.p.name][:, :, cols].copy(), s.b.type.elem)
        for a0, b0 in sorted(set(zip(starts[0].tolist(), starts[1].tolist()))):
            pick = (starts[0] == a0) & (starts[1] == b0)
            mine, lane = warps[pick], int(first[pick][0])
            b_major = s.b_width is None and s.b_panel is None
            for start, major in ((b0, b_major),) if regs else ((a0, True), (b0, b_major)):
                why = wgmma_ops.misplaced(start, size, t.k, major)
                if why is not None:
                    run.report(
                        MisalignedAccessError,
                        f"wgmma() operand at element {start} of a shared array: {why}, in {run.who(lane)}",
                        s,
                        (lane,),
                    )
            aa, bb = wgmma_ops.operands(t, size, a0, b0, s.b_width, s.b_panel)
            if regs:
                a_vals = a_regs[mine]
            else:
                rows = self.group_row[first[pick]] // wgmma_ops.WARP_ROWS
                a_vals = self.operand(s, run.memory(s.a), aa, mine, rows, s.a)
            b_vals = self.operand(s, mem_b, bb, mine, None, s.b)
            c = acc[mine] if s.accumulate else np.zeros_like(acc[mine])  # (accumulate=False: its old values unread)
            acc[mine] = mma_ops.mma(a_vals, b_vals, c)
        if run.check:  # (keyed by the accumulator's array: a func's fragment of the same name is another)
            group_of = run.mem.in_flight.wgmma_group(first)
            held = [(self.pending, acc)] + ([(self.reading, frame.fragments[s.p.name])] if regs else [])
            for table, arr in held:
                entry = table.get(id(arr))
                pending = np.full(len(self.warps.slots), -1, np.int64) if entry is None else entry[1]
                pending[warps] = group_of
                table[id(arr)] = (arr, pending, s)

    def uniform_in_groups(self, s: ir.MatrixOp, group: np.ndarray, first: np.ndarray, v: np.ndarray, what: str):
        """wgmma takes its operands as one for the whole warpgroup: a warp whose ``v`` differs from its
        group's first warp's is reported."""
        _, lead, which = np.unique(group, return_index=True, return_inverse=True)
        bad = v != v[lead][which]
        if bad.any():
            lane = int(first[np.argmax(bad)])
            self.report(s, f"its {what} differs between the warps of a warpgroup ({self.run.who(lane)})", lane)

    def operand(self, s: ir.WarpgroupMma, mem: Any, elements: np.ndarray, warps: np.ndarray, rows: Any, ref: Any):
        """The operand each of ``warps`` reads (A: its 16 rows, ``rows`` its warp in the group; B:
        all of it), as float32 in the input precision, shaped (warps, rows, cols): the elements
        read through the memory path, spread over the warp's lanes, 32 an access."""
        run = self.run
        if rows is not None:  # A: each warp its own 16 rows
            per_warp = elements.reshape(wgmma_ops.WARPS, -1, elements.shape[1])[rows]
        else:
            per_warp = np.broadcast_to(elements, (len(warps), *elements.shape))
        flat = per_warp.reshape(len(warps), -1)
        slots = self.warps.slots[warps]
        out = np.empty(flat.shape, np.float32)
        elem = ref.type.elem
        lanes_m = np.zeros(run.lanes, bool)
        lanes_m[slots.ravel()] = True
        for j in range(0, flat.shape[1], WARP_SIZE):
            idx = np.zeros(run.lanes, np.int64)
            idx[slots] = flat[:, j : j + WARP_SIZE]
            values = run.mem.load(mem, [idx], lanes_m, s, operand=True)[0]
            values = values[slots]
            if isinstance(elem, StorageType):
                values = elem.to_value(values)
            out[:, j : j + WARP_SIZE] = values
        return mma_ops.round_elements(out, elem).reshape(per_warp.shape)

    def wgmma_commit(self, s: ir.WgmmaCommit, m: np.ndarray) -> None:
        self.groups_of(s, m)
        if self.run.check:
            self.run.mem.in_flight.wgmma_commit(self.run.lanes_of(m))

    def wgmma_wait(self, s: ir.WgmmaWait, m: np.ndarray) -> None:
        warps, _ = self.groups_of(s, m)
        run = self.run
        if not run.check:
            return
        first = self.first_lanes(warps, m)
        run.mem.in_flight.wgmma_wait(run.lanes_of(m), s.pending)
        order = run.mem.races.order if run.mem.races is not None else None
        if order is not None:  # the group's operand reads, one collective read, seen done by each of its warps
            lanes = run.lanes_of(m)
            group = run.block_of[lanes] * run.tpb + run.thread_in_block[lanes] // wgmma_ops.THREADS
            for g in np.unique(group):
                order.join(lanes[group == g])
        for table in (self.pending, self.reading):
            for key, (_, pending, _) in list(table.items()):
                p = pending[warps]
                done = run.mem.in_flight.wgmma_retired(p, first, s.pending)
                pending[warps] = np.where(done, -1, p)
                if not (pending >= 0).any():  # nothing of it in flight: forgotten (a func's accumulator, made per call)
                    del table[key]
