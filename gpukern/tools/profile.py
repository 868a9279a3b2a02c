"""A memory-traffic profiler: the simulator counts what a GPU's memory system would see.

The simulator knows the address every thread touches, so it can count, per kernel
and per Python source line, what Nsight Compute reports on an NVIDIA GPU:

- global loads and stores, in elements and bytes (what the code asks for);
- global memory *sectors* moved: each warp-wide access moves every distinct
  ``sector_bytes`` piece of memory its active threads touch, so 32 consecutive
  floats move 4 sectors and 32 threads reading one address move 1; coalescing
  efficiency is bytes requested / bytes moved;
- requests: one per warp-wide instruction of a warp with an active thread, whatever
  its width (a float4 access by a full warp is 1 request over 512 bytes, 16 sectors);
- global atomics (``atomic_*`` on global memory: ATOM, or RED when the result is
  unused) apart from loads and stores, in requests, elements and sectors, as ncu
  counts them under ``op_atom`` and ``op_red``.  A warp's atomics move, per sector they
  touch, as many sectors as the most threads updating one element of it (updates of
  one element take turns): 32 threads on one element are 32 sectors, on 32 elements of
  4 sectors 4 (measured on an H100).  ptxas makes a warp's 32-bit integer ``add``,
  ``sub``, ``min``, ``max``, ``and``, ``or`` and ``xor`` at an index the code makes the
  same in every thread (a constant, a parameter, ``atomic_add(counter, 0, 1)``;
  ``Atomic.uniform_address``) one atomic of the warp, whatever the values: one sector.
  Float and 64-bit atomics, ``exch``, ``cas``, ``inc`` and ``dec``, and an index that is
  the same in every thread only by the data, stay one per thread;
- shared-memory loads and stores and their bank conflicts: ``banks`` banks of
  ``bank_bytes``, one wavefront serving ``banks * bank_bytes`` bytes (128).  A warp
  access of B bytes a thread is served in phases of ``banks * bank_bytes // B``
  consecutive threads (the whole warp for B <= 4; half-warps of 16 for 64-bit
  accesses, quarter-warps of 8 for 128-bit ones: threads 0-7, 8-15, ...).  A phase
  whose threads touch n distinct words in one bank takes n wavefronts (threads
  touching the same word share it); a phase with no active thread takes none.  The
  wavefronts beyond one per phase are the bank conflicts: a warp's float4 read of
  512 contiguous bytes is 4 wavefronts and no conflict, a float4 read at a stride of
  32 bytes 8 wavefronts and 4 conflicts, and 32 threads reading one float4 4 and 0.
  One more rule, measured: two neighbouring phases of a load (the two quarter-warps of
  a half-warp, the two half-warps of a warp) whose threads start at no more than two
  distinct addresses are served as one phase (32 threads reading one float4: 2
  wavefronts, not 4; one float2: 1).  With it every 64- and 128-bit access measured
  agrees with Nsight Compute on an H100, wavefronts and conflicts alike
  (``benchmarks/profile_vs_ncu.py``: strides, broadcasts, quarter- and half-warp
  patterns).  The front end makes two of an optimising compiler's changes itself, so
  that the counts are of the code that runs (``gpukern.frontend.load_rewrites``): a shared
  element read again with nothing in between that could change it is loaded once, and
  a loop of constant bounds along a shared row reads it in 16-byte vectors;
- shared-memory atomics, as elements and requests (their wavefronts are not modelled);
- bulk copies (sm_90's TMA unit: ``tma_load``/``tma_store`` boxes, ``bulk_load``/``bulk_store``): one
  request per thread and copy (a multicast is one) and per ``tma_store_commit``, the global bytes
  each reads or writes inside the array, and the sectors the TMA pipe moves as ncu counts them
  (``l1tex__tmain_requests``, ``l1tex__m_xbar2l1tex_read_sectors_pipe_tma``,
  ``l1tex__m_l1tex2xbar_write_sectors_pipe_tma``): a box's rows in requests of 128 bytes, past
  the array's edges too for a load, and a multicast's once per block it lands in
  (``semantics.tma.traffic``, measured on an H200); ncu's bytes of the pipe are its sectors times
  32.  Their shared side goes through no load or store instruction and is not counted;
- barriers executed (per warp), floating-point operations (per thread: + - * / and
  math functions on floats; on complex numbers the float operations of the C each
  operation is (``ops.BinaryOp.complex_flops``: + and - 2, * 6, / 10), a math function
  one, taking a number apart or putting it together none), and arithmetic intensity
  (FLOPs per global byte).

Warps are ``warp_size`` consecutive threads of a block, threads numbered x fastest,
as CUDA does; arrays are taken to start on a sector boundary (device allocations do)
and shared arrays on bank 0.  Local (per-thread) arrays are not counted: they live in
registers when their indices are constants.  The simulator hands the profiler every
access as one event (``sim.access.Access``), through ``Profiler.access``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import Loc
from ..ir import nodes as ir
from ..sim.access import LANDED, STORE

if TYPE_CHECKING:
    from ..sim.access import Access

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
    "global_atomic_requests",
    "global_atomic_elems",
    "global_atomic_sectors",
    "shared_atomic_requests",
    "shared_atomic_elems",
    "tma_requests",
    "tma_load_bytes",
    "tma_load_sectors",
    "tma_store_bytes",
    "tma_store_sectors",
    "dram_read_bytes",
    "dram_write_bytes",
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
    global_atomic_requests: int = 0  # atomics: ATOM and RED instructions (ncu: op_atom + op_red)
    global_atomic_elems: int = 0
    global_atomic_sectors: int = 0
    shared_atomic_requests: int = 0
    shared_atomic_elems: int = 0
    tma_requests: int = 0  # bulk copies (TMA boxes, cp.async.bulk) issued: one per thread and copy
    tma_load_bytes: int = 0  # global bytes they read (a box's inside the array: the rest is zero fill)
    tma_load_sectors: int = 0
    tma_store_bytes: int = 0
    tma_store_sectors: int = 0
    # DRAM traffic, sectors the launch touches first here: read (not yet read or written in the
    # launch) and written (not yet written), as a cache holding all the launch reuses would see it
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
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
            ("global atomics", f"{s['global_atomic_elems']:,} elements, {s['global_atomic_sectors']:,} sectors"),
            ("DRAM traffic", f"{s['dram_read_bytes']:,} B read, {s['dram_write_bytes']:,} B written (a sector once)"),
            ("shared atomics", f"{s['shared_atomic_elems']:,} elements"),
            ("barriers (per warp)", f"{s['barriers']:,}"),
            ("floating-point ops", f"{s['flops']:,}"),
            ("arithmetic intensity", f"{s['arithmetic_intensity']:.3f} FLOP/B (global)"),
        ]
        head = (
            f"profile of {self.kernel} grid={self.grid} block={self.block} "
            f"(warp {self.warp_size}, {self.sector_bytes}-byte sectors, {self.banks} banks x {self.bank_bytes} B)"
        )
        if not (s["global_atomic_elems"] or s["shared_atomic_elems"]):
            rows = [r for r in rows if not r[0].endswith("atomics")]
        return head + "\n" + "\n".join(f"  {k:<22} {v}" for k, v in rows)

    def source_view(self) -> str:
        """The kernel's source with global elements/sectors, shared elements and conflicts, atomic
        elements (global and shared) and FLOPs per line."""
        import linecache

        if not self.lines:
            return ""
        first, last = min(self.lines), max(self.lines)
        head = f"{'line':>5}  {'gld elem':>10} {'gld sect':>10} {'gst elem':>9} {'gst sect':>9} "
        head += f"{'shld':>9} {'shst':>8} {'confl':>7} {'atom':>8} {'flops':>11}  source"
        out = [head]
        for n in range(first, last + 1):
            src = linecache.getline(self.filename, n).rstrip()
            c = self.lines.get(n)
            if c is None:
                out.append(f"{n:>5}  {'':>10} {'':>10} {'':>9} {'':>9} {'':>9} {'':>8} {'':>7} {'':>8} {'':>11}  {src}")
                continue
            conf = c.shared_load_conflicts + c.shared_store_conflicts
            atom = c.global_atomic_elems + c.shared_atomic_elems
            out.append(
                f"{n:>5}  {c.global_load_elems:>10,} {c.global_load_sectors:>10,} {c.global_store_elems:>9,} "
                f"{c.global_store_sectors:>9,} {c.shared_load_elems:>9,} {c.shared_store_elems:>8,} {conf:>7,} "
                f"{atom:>8,} {c.flops:>11,}  {src}"
            )
        return "\n".join(out)


    def _repr_html_(self) -> str:
        """The picture a notebook shows: the summary, then each source line with its global
        traffic and a bar of the share of moved bytes it used (its coalescing), bank conflicts
        and FLOPs; lines that move most are the longest bars."""
        import html
        import linecache

        s = self.summary()
        head = html.escape(str(self).splitlines()[0])
        summary = (
            f"<p><b>{head}</b><br>loads: {s['load_efficiency']:.1%} of moved bytes used, stores: "
            f"{s['store_efficiency']:.1%}; {s['shared_load_conflicts'] + s['shared_store_conflicts']:,} bank "
            f"conflicts; {s['arithmetic_intensity']:.3f} FLOP/B</p>"
        )
        if not self.lines:
            return summary
        most = max(c.global_load_sectors + c.global_store_sectors for c in self.lines.values()) or 1
        rows = []
        for n in range(min(self.lines), max(self.lines) + 1):
            src = html.escape(linecache.getline(self.filename, n).rstrip())
            c = self.lines.get(n)
            if c is None:
                rows.append(f"<tr><td>{n}</td><td></td><td></td><td></td><td></td><td><code>{src}</code></td></tr>")
                continue
            sectors = c.global_load_sectors + c.global_store_sectors
            used = self.efficiency(c.global_load_bytes + c.global_store_bytes, sectors, self.sector_bytes)
            width = int(120 * sectors / most)
            colour = "#2a9d8f" if used >= 0.8 else "#e9c46a" if used >= 0.4 else "#e76f51"
            bar = (
                f'<div style="background:{colour};width:{width}px;height:0.8em" title="{used:.0%} used"></div>'
                if sectors
                else ""
            )
            conf = c.shared_load_conflicts + c.shared_store_conflicts
            rows.append(
                f"<tr><td>{n}</td><td>{sectors:,}</td><td>{bar}</td><td>{conf:,}</td><td>{c.flops:,}</td>"
                f"<td><code>{src}</code></td></tr>"
            )
        table = (
            '<table style="font-size:90%"><tr><th>line</th><th>sectors</th><th>used (bar: sectors, colour: '
            "share of moved bytes used)</th><th>bank conflicts</th><th>FLOPs</th><th>source</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        return summary + table


_WARP_COMBINED = frozenset({"add", "sub", "min", "max", "and", "or", "xor"})  # of 32-bit integers (measured, H100)


def _combined_in_warp(a: Access) -> bool:
    """A global integer atomic that ptxas makes one of the warp (see the module docstring)."""
    node = a.node
    return (
        isinstance(node, ir.Atomic)
        and node.uniform_address
        and node.op in _WARP_COMBINED
        and a.memory.data.dtype.kind in "iu"
        and a.memory.data.dtype.itemsize == 4
    )


class Profiler:
    """Collects counts from the simulator (see ``sim.interpreter``); one per profiled launch."""

    def __init__(self, warp_size: int = 32, sector_bytes: int = 32, banks: int = 32, bank_bytes: int = 4):
        self.warp_size = warp_size
        self.sector_bytes = sector_bytes
        self.banks = banks
        self.bank_bytes = bank_bytes
        self.lines: dict[int, LineCounts] = {}
        # per global array (by name: a record's fields are one array): its sectors read, written so far
        self.touched: dict[str, tuple[np.ndarray, np.ndarray]] = {}

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

    def _rows(self, lanes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Values per warp: a (warps touched, warp_size * per_lane) array, -1 where no thread;
        ``values`` has a row of ``per_lane`` values per lane (or is 1-D: one value a lane)."""
        per_lane = 1 if values.ndim == 1 else values.shape[1]
        if len(lanes) == self.run.lanes and self.run.tpb % self.warp_size == 0:  # every warp full: a reshape
            return values.reshape(-1, self.warp_size * per_lane)
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

    @staticmethod
    def _spans(start: np.ndarray, nbytes: int, unit: int) -> np.ndarray:
        """The ``unit``-byte pieces (sectors, bank words) that ``nbytes`` from byte ``start`` on
        touch: 1-D if one a lane, else a row per lane (the last piece repeated to fill it)."""
        first = start // unit
        if unit % nbytes == 0 and not (start % nbytes).any():  # aligned, no bigger than a piece: one
            return first
        count = (start + nbytes - 1) // unit - first + 1
        most = int(count.max()) if len(count) else 1
        if most == 1:
            return first
        return first[:, None] + np.minimum(np.arange(most), count[:, None] - 1)

    def access(self, a: Access) -> None:
        """Count one access event of the simulator (called for every load, store and atomic).  An
        asynchronous copy is counted where it is issued, as the global load of its source (cp.async,
        LDGSTS, is a global load request); its write into shared memory goes through no shared-memory
        store instruction (ncu counts none), and its landing moves nothing more.  A wgmma's operands
        are read by the matrix units themselves, through no load instruction (``Access.operand``)."""
        if a.space == "global" and a.kind != LANDED:
            self._dram(a)
        if a.kind == LANDED or (a.copy and a.kind == STORE) or a.operand or a.bulk:
            return
        if a.space == "global":
            self._global(a)
        elif a.space == "shared":
            self._shared(a)

    def _dram(self, a: Access) -> None:
        """First touches of global sectors (every global access: the LSU's, asynchronous copies',
        the TMA unit's, wgmma's): DRAM reads of sectors neither read nor written before in the
        launch, DRAM writes of sectors not written before (an atomic does both)."""
        start = a.byte_offsets()
        if a.width > 1:
            start = (start[:, None] + np.arange(a.width) * a.itemsize).ravel()
        sectors = np.unique(np.concatenate([start, start + a.itemsize - 1]) // self.sector_bytes)
        name = a.memory.name.split(".")[0]
        read, written = self.touched.get(name, (np.zeros(0, bool), np.zeros(0, bool)))
        if len(sectors) and sectors[-1] >= len(read):
            grow = max(int(sectors[-1]) + 1, 2 * len(read)) - len(read)
            read, written = np.append(read, np.zeros(grow, bool)), np.append(written, np.zeros(grow, bool))
        c = self.at(a.loc)
        if a.kind != STORE:  # a load or an atomic (read-modify-write)
            c.dram_read_bytes += int(np.count_nonzero(~(read[sectors] | written[sectors]))) * self.sector_bytes
            read[sectors] = True
        if a.kind != "load":
            c.dram_write_bytes += int(np.count_nonzero(~written[sectors])) * self.sector_bytes
            written[sectors] = True
        self.touched[name] = (read, written)

    def _global(self, a: Access) -> None:
        c = self.at(a.loc)
        n = len(a.lanes)
        nbytes = a.itemsize * a.width
        plain = a.memory.stride == 0  # not a record field (whose elements lie a record apart)
        if plain and a.width == 1 and self.sector_bytes % a.itemsize == 0:  # elements never straddle sectors
            sectors = a.offsets // (self.sector_bytes // a.itemsize)
        else:
            sectors = self._spans(a.byte_offsets(), nbytes, self.sector_bytes)
        rows = self._rows(a.lanes, sectors)
        if a.kind == "atomic" and _combined_in_warp(a):
            moved = len(rows)  # one atomic a warp, on one element
        elif a.kind == "atomic" and not plain:  # elements named by their first byte
            moved = self._atomic_sectors(self._rows(a.lanes, a.byte_offsets()), 1)
        elif a.kind == "atomic":
            moved = self._atomic_sectors(self._rows(a.lanes, a.offsets), a.itemsize)
        else:
            moved = int(self._distinct_per_row(rows).sum())
        if a.kind == "load":
            c.global_load_requests += len(rows)
            c.global_load_elems += n * a.width
            c.global_load_bytes += n * nbytes
            c.global_load_sectors += moved
        elif a.kind == "store":
            c.global_store_requests += len(rows)
            c.global_store_elems += n * a.width
            c.global_store_bytes += n * nbytes
            c.global_store_sectors += moved
        else:
            c.global_atomic_requests += len(rows)
            c.global_atomic_elems += n
            c.global_atomic_sectors += moved

    def _atomic_sectors(self, elements: np.ndarray, itemsize: int) -> int:
        """Sectors of a warp's atomics as ncu counts them (measured on an H100, see
        ``benchmarks/profile_vs_ncu.py``): per sector touched, as many as the most threads that
        update one element of it (updates of one element take turns; distinct elements of a
        sector go together).  ``elements``: a row per warp, -1 where no thread."""
        warp = np.broadcast_to(np.arange(len(elements), dtype=np.int64)[:, None], elements.shape)
        live = elements >= 0
        span = int(elements.max()) + 1 if elements.size else 1
        key, count = np.unique(warp[live] * span + elements[live], return_counts=True)  # by warp, element
        group = (key // span) * span + (key % span) * itemsize // self.sector_bytes  # (warp, sector), ascending
        new = np.ones(len(group), bool)
        new[1:] = group[1:] != group[:-1]
        return int(np.maximum.reduceat(count, np.nonzero(new)[0]).sum()) if len(count) else 0

    def _shared(self, a: Access) -> None:
        """Wavefronts by the phase rule of the module docstring (offsets within the block's array)."""
        c = self.at(a.loc)
        n = len(a.lanes)
        if a.kind == "atomic":
            c.shared_atomic_requests += len(self._rows(a.lanes, a.offsets))
            c.shared_atomic_elems += n
            return
        nbytes = a.itemsize * a.width
        if a.itemsize == self.bank_bytes and a.width == 1:  # offsets count words
            words = a.offsets
        else:  # 16-bit pairs, bytes in fours, vectors: the words the bytes span
            words = self._spans(a.offsets.astype(np.int64) * a.itemsize, nbytes, self.bank_bytes)
        rows = self._rows(a.lanes, words)
        per_phase = max(1, min(self.warp_size, self.banks * self.bank_bytes // nbytes))  # threads
        if per_phase < self.warp_size:
            width = rows.shape[1] // self.warp_size  # values per thread
            phases = -(-self.warp_size // per_phase)
            if phases * per_phase != self.warp_size:
                rows = np.pad(rows, ((0, 0), (0, (phases * per_phase - self.warp_size) * width)), constant_values=-1)
            if a.kind == "load":  # measured for loads; stores of one address by many threads race anyway
                rows = self._pair_phases(rows, phases, per_phase * width, width)
            else:
                rows = rows.reshape(-1, per_phase * width)
            rows = rows[rows.max(axis=1) >= 0]  # phases with an active thread
        # Quick answer for most accesses: a phase whose words all lie within `banks` consecutive
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
        conflicts = total - len(rows)
        if a.kind == "store":
            c.shared_store_elems += n * a.width
            c.shared_store_wavefronts += total
            c.shared_store_conflicts += conflicts
        else:
            c.shared_load_elems += n * a.width
            c.shared_load_wavefronts += total
            c.shared_load_conflicts += conflicts

    @staticmethod
    def _pair_phases(rows: np.ndarray, phases: int, length: int, width: int) -> np.ndarray:
        """The phases of each warp (rows of ``length`` words, ``width`` a thread), with each pair
        of neighbouring phases (0 and 1, 2 and 3...) whose threads start at two distinct addresses
        or fewer made one phase: as an H100 serves them (measured with ncu,
        ``benchmarks/profile_vs_ncu.py``).  Rows come back ``2 * length`` long, -1 padded."""
        if phases % 2:
            return rows.reshape(-1, length)
        pairs = rows.reshape(-1, 2 * length)
        starts = np.sort(pairs[:, ::width], axis=1)  # each thread's first word
        new = np.ones(starts.shape, bool)
        new[:, 1:] = starts[:, 1:] != starts[:, :-1]
        few = (new & (starts >= 0)).sum(axis=1) <= 2
        single = pairs[~few].reshape(-1, length)  # each phase on its own, padded to a pair's width
        return np.concatenate([pairs[few], np.pad(single, ((0, 0), (0, length)), constant_values=-1)])

    def _wavefronts(self, rows: np.ndarray) -> np.ndarray:
        """Per phase (row of word addresses, -1 for no thread): the most distinct words in one bank."""
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

    def bulk(self, loc: Loc | None, load: bool, nbytes: int, sectors: int, requests: int = 1) -> None:
        """Bulk copies (a TMA box, a cp.async.bulk; a commit of a bulk group): ``requests`` to the TMA
        unit, the global bytes they read or write inside the array and the sectors ncu counts
        (``semantics.tma.traffic``)."""
        c = self.at(loc)
        c.tma_requests += requests
        if load:
            c.tma_load_bytes += nbytes
            c.tma_load_sectors += sectors
        else:
            c.tma_store_bytes += nbytes
            c.tma_store_sectors += sectors

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
    from ..backends import get_backend
    from ..kernel import configured

    launch = configured(launch, "profile")
    sim = get_backend("sim")
    kernel = launch.kernel
    args = kernel.complete(tuple(args))
    variant = kernel.variant(kernel.signature_of(args))
    prof = Profiler(warp_size, sector_bytes, banks, bank_bytes)
    args = variant.launch_args(args)
    sim.launch(variant, launch.grid, launch.block, args, check=check, profiler=prof, shared=launch.shared)
    return prof.report(kernel, launch.grid, launch.block)
