"""What a TMA copy moves (sm_90's Tensor Memory Accelerator: ``cp.async.bulk.tensor``), once,
for the front end (which boxes are valid), the simulator (which elements go where) and the CUDA
back end (the descriptor ``cuTensorMapEncodeTiled`` builds, its enums).

A *tensor map* describes a global array (its address, shape and strides, taken at launch) and a
*box*: the elements one copy moves, ``box[d]`` along each dimension d (C order: the last
dimension contiguous).  A load copies the box whose first element is at ``coords`` of the array
into shared memory, laid out row-major from the destination element on (the last dimension
fastest), then *swizzled*: within each 1024 bytes, the 16-byte chunk bits 4-6 of a byte address
are XORed with its bits 7-9 (128-byte swizzle; 64-byte: bits 4-5 with 7-8; 32-byte: bit 4 with
bit 7), the layout ``wgmma`` reads (``semantics.wgmma.swizzled``).  Box elements outside the
array are written as zeros (a load) or not written (a store), and a load's bytes -- the whole
box's, outside or not -- complete on its mbarrier (``semantics.mbarrier``).
"""

from __future__ import annotations

import numpy as np

MAX_BOX = 256  # elements along one dimension of a box
MAX_RANK = 5
SWIZZLES = (0, 32, 64, 128)  # bytes; 0: none
SHARED_ALIGN = 128  # a copy's shared address: 128-byte aligned (1024 for a swizzled box, so its pattern starts)
GLOBAL_ALIGN = 16  # the array's address, and its strides but the last dimension's, in bytes
BULK_ALIGN = 16  # a plain bulk copy (cp.async.bulk): both addresses and its size, in bytes

# cuTensorMapEncodeTiled's enums (cuda.h: CUtensorMapDataType, CUtensorMapSwizzle)
DATA_TYPES = {
    "uint8": 0, "int8": 0, "uint16": 1, "int16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5,
    "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9,
    "float8_e4m3fn": 0, "float8_e5m2": 0,  # (bytes: the copy moves bits)
}  # fmt: skip
SWIZZLE_ENUM = {0: 0, 32: 1, 64: 2, 128: 3}


def swizzle(byte: np.ndarray, mode: int) -> np.ndarray:
    """Where the hardware puts byte ``byte`` (relative to a 1024-byte aligned address) of a box
    laid out row-major, under ``mode``-byte swizzle."""
    if mode == 0:
        return byte
    bits = {32: 1, 64: 3, 128: 7}[mode]
    return byte ^ (((byte >> 7) & bits) << 4)


def box_problem(box: tuple[int, ...], itemsize: int, swizzle_mode: int, rank: int) -> str | None:
    """Why ``box`` cannot describe copies of an array of ``rank`` dimensions, or None."""
    if len(box) != rank:
        return f"a box has one size per dimension of the array: {rank}, not {len(box)}"
    if not 1 <= rank <= MAX_RANK:
        return f"TMA copies arrays of 1 to {MAX_RANK} dimensions, not {rank}"
    if any(not 1 <= b <= MAX_BOX for b in box):
        return f"each of a box's sizes is 1 to {MAX_BOX} elements; this box is {box}"
    inner = box[-1] * itemsize
    if inner % 16:
        return f"a box's rows (its last dimension) are a multiple of 16 bytes; {box[-1]} elements are {inner}"
    if swizzle_mode not in SWIZZLES:
        return f"swizzle is one of {', '.join(map(str, SWIZZLES))} bytes (0: none), not {swizzle_mode}"
    if swizzle_mode and inner > swizzle_mode:
        return (
            f"with {swizzle_mode}-byte swizzle a box's rows are at most {swizzle_mode} bytes; "
            f"{box[-1]} elements are {inner}"
        )
    return None


def array_problem(name: str, shape: tuple[int, ...], itemsize: int, address: int = 0) -> str | None:
    """Why the hardware cannot copy from a C-contiguous array of ``shape`` at ``address``, or None:
    its start and its rows (all strides but the last dimension's) are multiples of 16 bytes."""
    row = (shape[-1] if shape else 1) * itemsize
    if address % GLOBAL_ALIGN or (len(shape) > 1 and row % GLOBAL_ALIGN):
        return (
            f"gk.tensor_map({name}): TMA copies an array whose data starts at a multiple of {GLOBAL_ALIGN} bytes "
            f"and whose rows are a multiple of {GLOBAL_ALIGN} bytes long; {name!r} (shape {shape}) has rows of "
            f"{row} bytes and starts {address % GLOBAL_ALIGN} bytes past one: pad its rows (allocate it wider "
            "and copy into it)"
        )
    return None


def box_elements(box: tuple[int, ...]) -> int:
    return int(np.prod(box))


def shared_offsets(box: tuple[int, ...], itemsize: int, swizzle_mode: int, start_byte: int) -> np.ndarray:
    """The element index (in the destination array) of each box element, box-shaped: the box laid
    out row-major from ``start_byte`` and swizzled on the array's byte addresses (the array itself
    1024-byte aligned)."""
    flat = np.arange(box_elements(box), dtype=np.int64) * itemsize
    return (swizzle(start_byte + flat, swizzle_mode) // itemsize).reshape(box)


def global_indices(
    box: tuple[int, ...], coords: tuple[int, ...], shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Per box element, its flat index in the global array (C order) and whether it is inside it."""
    grids = np.meshgrid(*[np.arange(b, dtype=np.int64) + c for b, c in zip(box, coords)], indexing="ij")
    inside = np.ones(box, bool)
    flat = np.zeros(box, np.int64)
    for g, n in zip(grids, shape):
        inside &= (g >= 0) & (g < n)
        flat = flat * n + np.clip(g, 0, max(n - 1, 0))
    return flat, inside


# ---------------------------------------------------------------- the traffic (the profiler's count)
REQUEST_BYTES = 128  # a TMA request never crosses a 128-byte boundary of shared memory
SECTOR_BYTES = 32


def _pieces(lo: int, hi: int, cuts: tuple[int, ...], smem: int | None = None) -> list[tuple[int, int]]:
    """Byte offsets [lo, hi) of a row cut at ``cuts`` and, given ``smem``, where ``smem + offset`` is a
    multiple of 128 (a boundary of shared memory)."""
    points = {lo, hi} | {c for c in cuts if lo < c < hi}
    if smem is not None:
        points |= set(range(lo + (-(smem + lo)) % REQUEST_BYTES, hi, REQUEST_BYTES))
    p = sorted(x for x in points if lo <= x <= hi)
    return list(zip(p, p[1:]))


def _sectors(a: int, b: int) -> int:
    return (b - 1) // SECTOR_BYTES - a // SECTOR_BYTES + 1


def traffic(
    box: tuple[int, ...],
    coords: tuple[int, ...],
    shape: tuple[int, ...],
    itemsize: int,
    load: bool,
    smem: int = 0,
) -> tuple[int, int]:
    """(bytes, sectors) of global memory one copy of a box moves, as Nsight Compute counts the TMA
    unit's traffic on an H200 (measured: ``benchmarks/profile_vs_ncu.py``, the ``tma`` cases).  The
    bytes are those inside the array.  The unit moves each row of the box (its last dimension) in
    requests: the part inside the array in requests that never cross a 128-byte boundary of shared
    memory (the box laid out row after row from byte ``smem``), each counting the 32-byte sectors
    its global bytes touch (128 bytes starting 16 bytes into a sector: 5); a load's part past the
    array's first or last column, and a row past its other edges, counts the sectors of the
    shared memory its zeros fill.  A store moves only the parts inside the array."""
    outer = [np.arange(b, dtype=np.int64) + c for b, c in zip(box[:-1], coords[:-1])]
    grids = [g.ravel() for g in np.meshgrid(*outer, indexing="ij")] if outer else []
    nrows = int(np.prod(box[:-1], dtype=np.int64)) if outer else 1
    inside = np.ones(nrows, bool)
    row = np.zeros(nrows, np.int64)
    for g, n in zip(grids, shape[:-1]):
        inside &= (g >= 0) & (g < n)
        row = row * n + g
    cols, c0, bc = shape[-1], coords[-1], box[-1]
    width = bc * itemsize
    edges = tuple((e - c0) * itemsize for e in (0, cols))  # the array's columns, as byte offsets in the row
    nbytes = sectors = 0
    for k in range(nrows):
        here = smem + k * width  # the row's first byte in shared memory
        if not inside[k]:  # a row past the array's edges: a load's zero fill, in shared memory's sectors
            sectors += _sectors(here, here + width) if load else 0
            continue
        base = (int(row[k]) * cols + c0) * itemsize  # the row's first byte, as if the array went on
        for lo, hi in _pieces(0, width, edges):  # (cut at the array's columns)
            if edges[0] <= lo and hi <= edges[1]:
                nbytes += hi - lo
                sectors += sum(_sectors(base + a, base + b) for a, b in _pieces(lo, hi, (), here))
            elif load:
                sectors += _sectors(here + lo, here + hi)
    return nbytes, sectors


def bulk_traffic(start_byte: int, nbytes: int, smem: int = 0) -> int:
    """The sectors a plain bulk copy of ``nbytes`` from global byte ``start_byte`` moves (requests that
    never cross a 128-byte boundary of shared memory, from byte ``smem``, as a TMA row's)."""
    return sum(_sectors(start_byte + a, start_byte + b) for a, b in _pieces(0, nbytes, (), smem))
