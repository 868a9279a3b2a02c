"""A memory-traffic profiler: the simulator counts what a GPU's memory system would see.

The simulator knows the address every thread touches, so it can count, per kernel
and per Python source line, what Nsight Compute reports on an NVIDIA GPU:

- global loads and stores, in elements and bytes (what the code asks for);
- global memory *sectors* moved: each warp-wide access moves every distinct
  ``sector_bytes`` piece of memory its active threads touch, so 32 consecutive
  floats move 4 sectors and 32 threads reading one address move 1; coalescing
  efficiency is bytes requested / bytes moved;
- shared-memory loads and stores and their bank conflicts: ``banks`` banks of
  ``bank_bytes``; a warp access whose threads touch n distinct words in one bank
  takes n wavefronts, n - 1 of them extra (threads reading the same word share it);
- barriers executed (per warp), floating-point operations (per thread: + - * / and
  math functions on floats), and arithmetic intensity (FLOPs per global byte).

Warps are ``warp_size`` consecutive threads of a block, threads numbered x fastest,
as CUDA does; arrays are taken to start on a sector boundary (device allocations do).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .errors import Loc

COUNTERS = (
    "global_load_requests",
    "global_store_requests",
    "global_load_elems",
    "global_load_bytes",
    "global_load_sectors",
    "global_store_elems",
    "global_store_bytes",
    "global_store_sectors",
    "shared_load_elems",
    "shared_store_elems",
    "shared_load_wavefronts",
    "shared_store_wavefronts",
    "shared_load_conflicts",
    "shared_store_conflicts",
    "barriers",
    "flops",
)


@dataclass
class LineCounts:
    """Counters for one Python source line (or the whole kernel)."""

    global_load_requests: int = 0  # warp-wide load instructions (one per warp with a thread taking part)
    global_store_requests: int = 0
    global_load_elems: int = 0
    global_load_bytes: int = 0
    global_load_sectors: int = 0
    global_store_elems: int = 0
    global_store_bytes: int = 0
    global_store_sectors: int = 0
    shared_load_elems: int = 0
    shared_store_elems: int = 0
    shared_load_wavefronts: int = 0
    shared_store_wavefronts: int = 0
    shared_load_conflicts: int = 0
    shared_store_conflicts: int = 0
    barriers: int = 0
    flops: int = 0

    def add(self, other: LineCounts) -> None:
        for k in COUNTERS:
            setattr(self, k, getattr(self, k) + getattr(other, k))


@dataclass
class ProfileReport:
    """What one profiled launch did to memory; ``str()`` gives a table, ``source_view()``
    the kernel's source with counters beside each line, ``to_json()`` everything."""

    kernel: str
    filename: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    warp_size: int
    sector_bytes: int
    banks: int
    bank_bytes: int
    lines: dict[int, LineCounts] = field(default_factory=dict)

    @property
    def total(self) -> LineCounts:
        t = LineCounts()
        for c in self.lines.values():
            t.add(c)
        return t

    @staticmethod
    def efficiency(requested: int, sectors: int, sector_bytes: int) -> float:
        return requested / (sectors * sector_bytes) if sectors else 1.0

    def summary(self) -> dict[str, Any]:
        t = self.total
        global_bytes = t.global_load_bytes + t.global_store_bytes
        return {
            **asdict(t),
            "load_efficiency": self.efficiency(t.global_load_bytes, t.global_load_sectors, self.sector_bytes),
            "store_efficiency": self.efficiency(t.global_store_bytes, t.global_store_sectors, self.sector_bytes),
            "arithmetic_intensity": t.flops / global_bytes if global_bytes else 0.0,
        }

    def to_json(self) -> str:
        data = {
            "kernel": self.kernel,
            "filename": self.filename,
            "grid": self.grid,
            "block": self.block,
            "parameters": {
                "warp_size": self.warp_size,
                "sector_bytes": self.sector_bytes,
                "banks": self.banks,
                "bank_bytes": self.bank_bytes,
            },
            "total": self.summary(),
            "lines": {str(k): asdict(v) for k, v in sorted(self.lines.items())},
        }
        return json.dumps(data, indent=2)

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            f.write(self.to_json() + "\n")

    def __str__(self) -> str:
        s = self.summary()
        rows = [
            ("global loads", f"{s['global_load_elems']:,} elements, {s['global_load_bytes']:,} B"),
            ("  sectors moved", f"{s['global_load_sectors']:,} ({s['load_efficiency']:.1%} of moved bytes used)"),
            ("global stores", f"{s['global_store_elems']:,} elements, {s['global_store_bytes']:,} B"),
            ("  sectors moved", f"{s['global_store_sectors']:,} ({s['store_efficiency']:.1%} of moved bytes used)"),
            ("shared loads", f"{s['shared_load_elems']:,} elements, {s['shared_load_conflicts']:,} bank conflicts"),
            ("shared stores", f"{s['shared_store_elems']:,} elements, {s['shared_store_conflicts']:,} bank conflicts"),
            ("barriers (per warp)", f"{s['barriers']:,}"),
            ("floating-point ops", f"{s['flops']:,}"),
            ("arithmetic intensity", f"{s['arithmetic_intensity']:.3f} FLOP/B (global)"),
        ]
        head = (
            f"profile of {self.kernel} grid={self.grid} block={self.block} "
            f"(warp {self.warp_size}, {self.sector_bytes}-byte sectors, {self.banks} banks x {self.bank_bytes} B)"
        )
        return head + "\n" + "\n".join(f"  {k:<22} {v}" for k, v in rows)

    def source_view(self) -> str:
        """The kernel's source with global elements/sectors, shared conflicts and FLOPs per line."""
        import linecache

        if not self.lines:
            return ""
        first, last = min(self.lines), max(self.lines)
        head = f"{'line':>5}  {'gld elem':>10} {'gld sect':>10} {'gst elem':>9} {'gst sect':>9} "
        head += f"{'shld':>9} {'shst':>8} {'confl':>7} {'flops':>11}  source"
        out = [head]
        for n in range(first, last + 1):
            src = linecache.getline(self.filename, n).rstrip()
            c = self.lines.get(n)
            if c is None:
                out.append(f"{n:>5}  {'':>10} {'':>10} {'':>9} {'':>9} {'':>9} {'':>8} {'':>7} {'':>11}  {src}")
                continue
            conf = c.shared_load_conflicts + c.shared_store_conflicts
            out.append(
                f"{n:>5}  {c.global_load_elems:>10,} {c.global_load_sectors:>10,} {c.global_store_elems:>9,} "
                f"{c.global_store_sectors:>9,} {c.shared_load_elems:>9,} {c.shared_store_elems:>8,} {conf:>7,} "
                f"{c.flops:>11,}  {src}"
            )
        return "\n".join(out)


class Profiler:
    """Collects counts from the simulator (see ``backends.sim``); one per profiled launch."""

    def __init__(self, warp_size: int = 32, sector_bytes: int = 32, banks: int = 32, bank_bytes: int = 4):
        self.warp_size = warp_size
        self.sector_bytes = sector_bytes
        self.banks = banks
        self.bank_bytes = bank_bytes
        self.lines: dict[int, LineCounts] = {}

    def start(self, run: Any) -> None:
        """Set up warp numbering for a launch of ``run`` (a simulator run)."""
        self.run = run
        wpb = -(-run.tpb // self.warp_size)
        t = run.thread_in_block.astype(np.int64)
        self.warp_of = run.block_of * wpb + t // self.warp_size
        self.slot = t % self.warp_size
        self.nwarps = run.nblocks * wpb

    def at(self, loc: Loc | None) -> LineCounts:
        key = loc.lineno if loc is not None else 0
        c = self.lines.get(key)
        if c is None:
            c = self.lines[key] = LineCounts()
        return c

    def _rows(self, lanes: np.ndarray, values: np.ndarray, per_lane: int) -> np.ndarray:
        """Values per warp: a (warps touched, warp_size * per_lane) array, -1 where no thread."""
        if len(lanes) == self.run.lanes and self.run.tpb % self.warp_size == 0:  # every warp full: a reshape
            return np.asarray(values).reshape(-1, self.warp_size * per_lane)
        warps = self.warp_of[lanes]  # ascending, since lanes are
        first = np.ones(len(warps), bool)
        first[1:] = warps[1:] != warps[:-1]
        row = np.cumsum(first) - 1
        rows = np.full((int(row[-1]) + 1 if len(row) else 0, self.warp_size * per_lane), -1, np.int64)
        cols = self.slot[lanes] * per_lane
        for k in range(per_lane):
            rows[row, cols + k] = values[:, k] if values.ndim == 2 else values
        return rows

    @staticmethod
    def _distinct_per_row(rows: np.ndarray) -> np.ndarray:
        """Distinct values >= 0 per row (-1 marks no thread).  A row sort is cheaper here than
        any pattern test measured (32 values a row)."""
        s = np.sort(rows, axis=1)
        new = np.ones(s.shape, bool)
        new[:, 1:] = s[:, 1:] != s[:, :-1]
        return (new & (s >= 0)).sum(axis=1)

    def global_access(self, loc: Loc | None, lanes: np.ndarray, flat: np.ndarray, itemsize: int, write: bool) -> None:
        n = len(lanes)
        if self.sector_bytes % itemsize == 0:  # elements never straddle sectors
            rows = self._rows(lanes, flat // (self.sector_bytes // itemsize), 1)
            self._count_global(loc, rows, n, itemsize, write)
            return
        byte = flat.astype(np.int64) * itemsize
        first = byte // self.sector_bytes
        last = (byte + itemsize - 1) // self.sector_bytes
        if np.array_equal(first, last):
            rows = self._rows(lanes, first, 1)
        else:
            rows = self._rows(lanes, np.stack([first, last], 1), 2)
        self._count_global(loc, rows, n, itemsize, write)

    def _count_global(self, loc: Loc | None, rows: np.ndarray, n: int, itemsize: int, write: bool) -> None:
        c = self.at(loc)
        sectors = int(self._distinct_per_row(rows).sum())
        if write:
            c.global_store_requests += len(rows)
            c.global_store_elems += n
            c.global_store_bytes += n * itemsize
            c.global_store_sectors += sectors
        else:
            c.global_load_requests += len(rows)
            c.global_load_elems += n
            c.global_load_bytes += n * itemsize
            c.global_load_sectors += sectors

    def shared_access(self, loc: Loc | None, lanes: np.ndarray, offset: np.ndarray, itemsize: int, write: bool) -> None:
        """``offset``: element offsets within the block's shared array (arrays start on bank 0)."""
        c = self.at(loc)
        per = max(itemsize // self.bank_bytes, 1)
        word0 = offset if itemsize == self.bank_bytes else offset.astype(np.int64) * itemsize // self.bank_bytes
        words = word0[:, None] + np.arange(per)[None, :] if per > 1 else word0
        rows = self._rows(lanes, words, per)
        # Quick answer for most accesses: a warp whose words all lie within `banks` consecutive
        # words (a broadcast, a row, a column of a small tile) needs one wavefront.
        hi = rows.max(axis=1)
        lo = rows.min(axis=1)
        partial = lo < 0
        if partial.any():
            lo[partial] = np.where(rows[partial] >= 0, rows[partial], hi[partial, None]).min(axis=1)
        slow = hi - lo >= self.banks
        wavefronts = np.ones(len(rows), np.int64)
        if slow.any():
            wavefronts[slow] = self._wavefronts(rows[slow])
        total = int(wavefronts.sum())
        conflicts = int((wavefronts - 1).sum())
        if write:
            c.shared_store_elems += len(lanes)
            c.shared_store_wavefronts += total
            c.shared_store_conflicts += conflicts
        else:
            c.shared_load_elems += len(lanes)
            c.shared_load_wavefronts += total
            c.shared_load_conflicts += conflicts

    def _wavefronts(self, rows: np.ndarray) -> np.ndarray:
        """Per warp (row of word addresses, -1 for no thread): the most distinct words in one bank."""
        rows = rows.astype(np.int64, copy=False)
        key = np.where(rows >= 0, (rows % self.banks) * (1 << 40) + rows, -1)
        s = np.sort(key, axis=1)
        new = np.ones(s.shape, bool)
        new[:, 1:] = s[:, 1:] != s[:, :-1]
        distinct = new & (s >= 0)
        banks = np.where(distinct, s >> 40, self.banks)  # the bank of each distinct word; banks = none
        slots = (np.arange(len(rows))[:, None] * (self.banks + 1) + banks).ravel()
        counts = np.bincount(slots, minlength=len(rows) * (self.banks + 1)).reshape(len(rows), self.banks + 1)
        return counts[:, : self.banks].max(axis=1).clip(min=1)

    def barrier(self, loc: Loc | None, lanes: np.ndarray) -> None:
        self.at(loc).barriers += int(np.unique(self.warp_of[lanes]).size)

    def flops(self, loc: Loc | None, count: int) -> None:
        self.at(loc).flops += count

    def report(self, kernel: Any, grid: tuple[int, int, int], block: tuple[int, int, int]) -> ProfileReport:
        fd = kernel.parsed
        return ProfileReport(
            kernel=kernel.__name__,
            filename=fd.filename,
            grid=grid,
            block=block,
            warp_size=self.warp_size,
            sector_bytes=self.sector_bytes,
            banks=self.banks,
            bank_bytes=self.bank_bytes,
            lines=self.lines,
        )


def profile(
    launch: Any,
    *args: Any,
    warp_size: int = 32,
    sector_bytes: int = 32,
    banks: int = 32,
    bank_bytes: int = 4,
    check: bool = False,
) -> ProfileReport:
    """Run ``launch`` (``kernel[grid, block]``) on the simulator with ``args`` and count its
    memory traffic; output arrays are written as by any launch.

    The defaults are NVIDIA's: 32-thread warps, 32-byte sectors, 32 banks of 4 bytes.
    ``check=True`` also runs the simulator's race, barrier and bounds checks.
    """
    from .backends import get_backend
    from .errors import LaunchError
    from .kernel import Kernel, Launch

    if not isinstance(launch, Launch):
        what = f"the kernel {launch.__name__} itself" if isinstance(launch, Kernel) else repr(launch)
        raise LaunchError(f"profile() takes a configured launch, kernel[grid, block], not {what}")
    sim = get_backend("sim")
    kernel = launch.kernel
    variant = kernel.variant(kernel.signature_of(args))
    prof = Profiler(warp_size, sector_bytes, banks, bank_bytes)
    sim.launch(variant, launch.grid, launch.block, args, check=check, profiler=prof)
    return prof.report(kernel, launch.grid, launch.block)
