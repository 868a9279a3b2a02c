"""What the warpgroup matrix multiply-accumulate means (``gk.wgmma``, sm_90's ``wgmma.mma_async``),
once, for the front end (shapes, operands), the simulator (which shared elements it reads, where
each warp's accumulator rows are) and the CUDA emitter (descriptors, capability).

A *warpgroup* is four consecutive warps of a block (threads ``128 g`` to ``128 g + 127``); together
they hold a 64 x N float32 accumulator (``gk.fragment("accumulator", 64, N, K, float32)``), warp
``w`` of the group its rows ``16 w`` to ``16 w + 15``, each lane (g, t) = (lane // 4, lane % 4) its
rows g and g + 8 at columns ``8 j + 2 t`` and ``8 j + 2 t + 1`` (``mma``'s accumulator layout,
repeated along n).  ``wgmma`` multiplies A (64 x K) and B (K x N) that it reads itself from shared
memory, asynchronously: the reads and the accumulation happen between the instruction and the
``wgmma_wait`` that covers its commit group.

Operands lie in shared memory in 128-byte *swizzled atoms*: 8 rows of 128 bytes, the 16-byte chunk
``c`` of row ``r`` stored at chunk ``c ^ (r % 8)`` (``swizzled``, on byte addresses, as the
hardware applies it; every atom 1024-byte aligned).  A is K-major: its rows along k, a tile one
atom wide (64 halves, 32 floats a row), row r of the operand 128 bytes after row r - 1, atoms of 8
rows 1024 bytes apart; the operand starts anywhere in an atom's first row (k steps within it).
B is either the same (stored transposed, n x k: ``b_width=None``; TF32 allows only this) or, for
16-bit inputs, row-major k x n in one of two arrangements of its atoms of 8 k rows x 128 bytes:
in a tile ``b_width`` elements wide (atoms side by side along n, the next 8 k rows ``b_width / atom
width`` atoms on), or in *panels* one atom wide and ``b_panel`` rows tall (the next 8 k rows one
atom on, the next atom along n a panel, ``b_panel`` rows, on: what TMA boxes of ``b_panel`` x 64
halves put one after another).  ``b_strides`` is the two byte offsets the descriptor holds.
``gk.swizzle128`` (``language/mma.py``) is the index of a tile's element in these layouts, for the
copies that fill them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import OPERAND_ALIGNMENT
from ..types import FragmentType

LOWERING = "wgmma"  # the CUDA dialect's matrix table for these (``semantics.mma.lowering``)
ROWS = 64  # an accumulator of 64 rows is a warpgroup's
WARPS = 4
THREADS = WARPS * 32
WARP_ROWS = ROWS // WARPS
N_SIZES = tuple(range(8, 257, 8))
# each input type's k (float32: TF32; the 8-bit floats: 32)
K = {"float16": 16, "bfloat16": 16, "float32": 8, "float8_e4m3fn": 32, "float8_e5m2": 32}
K_MAJOR_ONLY = ("float32", "float8_e4m3fn", "float8_e5m2")  # inputs whose B wgmma reads K-major only
ROW_BYTES = 128  # a swizzled atom's row
ATOM_ROWS = 8
ATOM_BYTES = ROW_BYTES * ATOM_ROWS


def is_warpgroup(t: FragmentType) -> bool:
    """Whether fragments of ``t`` are a warpgroup's (wgmma's accumulators)."""
    return t.use == "accumulator" and t.m == ROWS


def shapes() -> set[tuple[int, int, int]]:
    """Every (m, n, k) of a warpgroup accumulator."""
    return {(ROWS, n, k) for n in N_SIZES for k in set(K.values())}


def swizzled(byte: np.ndarray) -> np.ndarray:
    """Where the hardware puts byte ``byte`` of an unswizzled layout: chunk bits 4-6 XOR row bits 7-9."""
    return byte ^ (((byte >> 7) & 7) << 4)


def b_strides(width: int | None, panel: int | None, itemsize: int) -> tuple[int, int]:
    """A B operand's descriptor's byte offsets (leading, stride): from an atom to the next along n,
    and from one band of 8 k rows to the next.  Row-major in a tile ``width`` elements wide: atoms
    side by side (1024 bytes) and a band the atoms across the tile; in panels ``panel`` rows tall:
    a panel (``panel`` x 128 bytes) and one atom; K-major (neither): the rows' 16 (unused with the
    swizzle) and an atom."""
    if width is not None:
        return ATOM_BYTES, width * itemsize // ROW_BYTES * ATOM_BYTES
    if panel is not None:
        return panel * ROW_BYTES, ATOM_BYTES
    return 16, ATOM_BYTES


def tile(start: int, itemsize: int, rows: int, cols: int, strides: tuple[int, int]) -> np.ndarray:
    """The element indices (rows x cols) of an operand read from swizzled atoms, its element (0, 0)
    at element ``start``, as the hardware addresses it: the next atom along a row (cols) ``strides[0]``
    bytes on, the next band of 8 rows ``strides[1]`` (``b_strides``; a K-major operand: its k along
    the atom's rows, one atom across)."""
    per_row = ROW_BYTES // itemsize
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    byte = (
        start * itemsize
        + (r // ATOM_ROWS) * strides[1]
        + (c // per_row) * strides[0]
        + (r % ATOM_ROWS) * ROW_BYTES
        + (c % per_row) * itemsize
    )
    return swizzled(byte) // itemsize


def operands(
    t: FragmentType, itemsize: int, a: int, b: int, width: int | None, panel: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The element indices of A (64 x k) and B (k x n) that a wgmma into ``t`` reads, its operands
    starting at elements ``a`` and ``b`` (B row-major in a tile ``width`` wide or in panels ``panel``
    rows tall, else K-major)."""
    k_major = b_strides(None, None, itemsize)
    aa = tile(a, itemsize, ROWS, t.k, k_major)
    if width is None and panel is None:
        return aa, tile(b, itemsize, t.n, t.k, k_major).T
    return aa, tile(b, itemsize, t.k, t.n, b_strides(width, panel, itemsize))


def misplaced(start: int, itemsize: int, k: int, k_major_operand: bool) -> str | None:
    """Why an operand starting at element ``start`` does not lie as wgmma reads one, or None (a
    row-major B's tile width, a multiple of the atom width, the front end checks)."""
    at = start * itemsize % ATOM_BYTES
    if k_major_operand:
        if at % OPERAND_ALIGNMENT or at + k * itemsize > ROW_BYTES:
            return (
                f"a K-major operand starts in the first 128-byte row of a 1024-byte aligned atom, at a multiple "
                f"of {OPERAND_ALIGNMENT} bytes, and its {k} elements of k fit in that row; this one starts {at} "
                "bytes into its atom"
            )
        return None
    if at:
        return f"a row-major B starts at a 1024-byte aligned atom; this one starts {at} bytes into its atom"
    return None


def position(thread: Any, i: int) -> tuple[Any, Any]:
    """(row, column) of element ``i`` of the part of a warpgroup accumulator that the thread ``thread``
    of the block holds (``acc[i]`` in a kernel; C's ``x[i]``): lane (g, t) of warp w of the group
    holds x[4 j + 2 h + e] = (16 w + g + 8 h, 8 j + 2 t + e).  ``thread`` is anything with ``//``,
    ``%``, ``*`` and ``+``: NumPy arrays for the simulator, the front end's values for ``acc_row``."""
    j, h, e = i // 4, (i // 2) % 2, i % 2
    lane = thread % 32
    return (thread // 32) % WARPS * WARP_ROWS + lane // 4 + 8 * h, lane % 4 * 2 + (8 * j + e)


def warp_rows(t: FragmentType) -> int:
    """The rows of a fragment each warp holds on the simulator (a warpgroup accumulator: 16 of 64)."""
    return WARP_ROWS if is_warpgroup(t) else t.rows
