"""What the warp-level matrix multiply-accumulate means (``gk.mma`` and its fragments), once, for
the front end (which shapes and types exist), the simulator (the NumPy forms) and the CUDA emitter
(which compute capability each needs).

A fragment is a tile of a matrix spread over the 32 lanes of a warp.  CUDA leaves unspecified
which lane holds which element; ``moves`` gives the simulator the memory instructions of the C
gpukern writes (``lowering``: wmma, or its own for TF32) as an H100 runs them (measured with
Nsight Compute, ``benchmarks/profile_vs_ncu.py``), so that races,
bounds and the profiler see each element touched by one deterministic lane, in accesses shaped
as the hardware's: ``ldmatrix`` for float16 tiles in shared memory, the ``mma`` register layout
(pairs, or TF32's single elements) otherwise.

Arithmetic: the inputs are rounded to the input precision as they are loaded (float16 and bfloat16
arrays hold such values already; TF32 rounds a float32's mantissa to 10 bits, to nearest with ties
away from zero, as CUDA's ``wmma::__float_to_tf32`` -- PTX ``cvt.rna.tf32.f32`` -- does).  Each
``mma`` computes every element of ``d`` as ``float32(c + sum_k a * b)``: products exact and the sum
in float64, rounded once into float32.  The hardware's order and intermediate rounding are
unspecified (tensor cores align the products to the largest exponent and may truncate), so a GPU's
result differs from the simulator's by a few float32 roundings of the terms' magnitude:
``tolerance`` gives the bound the tests use.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..types import FragmentType, StorageType, bfloat16, float16, float32
from . import wgmma as wgmma_ops

# (m, n, k) of each input type's tiles; the accumulator is float32 in all of them
FRAGMENT_SHAPES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "float16": ((16, 16, 16), (32, 8, 16), (8, 32, 16)),
    "bfloat16": ((16, 16, 16), (32, 8, 16), (8, 32, 16)),
    "float32": ((16, 16, 8),),  # TF32 inputs from float32 arrays
}
ACCUMULATOR = float32
USES = ("a", "b", "accumulator")
LAYOUTS = ("row", "col")


class Capability(NamedTuple):
    """The compute capability (major * 10 + minor) a kernel's matrix units need, and why; ``exact``:
    that one only, its architecture-specific instructions compiled for ``sm_XYa`` (none later has them)."""

    cc: int
    why: str
    exact: bool = False


# the least compute capability of each input type's tiles; a warpgroup's, exactly
CAPABILITY: dict[str, Capability] = {
    "float16": Capability(70, "float16 tensor cores (sm_70, Volta)"),
    "bfloat16": Capability(80, "bfloat16 tensor cores (sm_80, Ampere)"),
    "float32": Capability(80, "TF32 tensor cores (sm_80, Ampere)"),
}
WARPGROUP = Capability(90, "warpgroup matrix multiply-accumulate (wgmma: sm_90, Hopper)", exact=True)


def precision(t: FragmentType) -> str:
    """The name of the precision an a/b fragment computes in: 'float16', 'bfloat16' or 'tf32'."""
    return "tf32" if t.elem == float32 else t.elem.name


def input_type(t: FragmentType) -> str:
    """The input type of the mma a fragment takes part in (an accumulator's is its a/b's: unknown, so '')."""
    return "" if t.use == "accumulator" else t.elem.name


def capability(types: list[FragmentType], warpgroup: bool = False) -> Capability:
    """What the fragments need (an accumulator alone: float16's); a kernel with warpgroup
    statements (``warpgroup``) or accumulators, sm_90's, exactly (``semantics.wgmma``)."""
    if warpgroup or any(wgmma_ops.is_warpgroup(t) for t in types):
        return WARPGROUP
    need = [CAPABILITY[input_type(t)] for t in types if t.use != "accumulator"] or [CAPABILITY["float16"]]
    return max(need)


def to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 mantissa bits), to nearest, ties away from zero (PTX
    ``cvt.rna.tf32.f32``, CUDA's ``wmma::__float_to_tf32``); infinities and NaNs kept; as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return np.where(np.isfinite(x), rounded.view(np.float32), x).astype(np.float32)


def lowering(t: FragmentType) -> str:
    """How CUDA runs fragments of ``t``: ``'tf32'``, gpukern's own code for TF32's 16 x 16 x 8 tiles
    (accumulators included), two PTX ``mma.sync.m16n8k8`` per ``mma`` with ``ldmatrix`` loads (wmma
    moves a TF32 tile one 32-bit element a lane an instruction, four times the shared-memory
    instructions of a 16-bit tile's ``ldmatrix``); ``'wgmma'``, gpukern's own for a warpgroup's
    accumulators (``semantics.wgmma``); ``'wmma'``, ``nvcuda::wmma``, for every other."""
    if wgmma_ops.is_warpgroup(t):
        return wgmma_ops.LOWERING
    return "tf32" if (t.m, t.n, t.k) == (16, 16, 8) else "wmma"


def by_ldmatrix(t: FragmentType, space: str) -> bool:
    """Whether a warp moves an a/b tile of ``t`` in ``space`` with ``ldmatrix``: float16 tiles in
    shared memory (wmma's choice, measured), and gpukern's TF32 tiles in shared memory whose rows
    run along k (a 'row' a, a 'col' b), whose 8 x 4 blocks of 32-bit elements ``ldmatrix`` hands
    out as ``mma.m16n8k8`` wants them; the other TF32 tiles go an element a lane."""
    if t.use == "accumulator" or space != "shared":
        return False
    if lowering(t) == "tf32":
        return (t.use == "a") == (t.layout == "row")
    return t.elem == float16


@functools.cache
def moves(t: FragmentType, space: str) -> tuple[tuple[np.ndarray, np.ndarray, int], ...]:
    """How a warp moves fragment ``t`` between its registers and ``space`` ('global' or 'shared'):
    per memory instruction, each lane's (row, column) of the tile *as stored* (an a/b fragment of
    layout 'col' is stored transposed) and how many consecutive elements of that stored row from
    there it moves; row -1: the lane takes no part.  Lane ``l`` is (g, t) = (l // 4, l % 4).

    wmma (``lowering``), as an H100 runs it:

    - float16 a/b tiles in shared memory: ``ldmatrix`` (LDSM), the stored tile in 8 x 8 blocks of
      16-byte rows, four blocks an instruction, lane ``l`` giving row ``l % 8`` of block ``l // 8``,
      one shared-memory phase per block;
    - the 8 x 32 accumulator (m8n32k16): a stored row an instruction, lane ``l`` at column ``l``;
    - every other (16-bit tiles in global memory, bfloat16 tiles in shared memory, the
      accumulators): two consecutive elements a lane, lane (g, t) at (g, 2t) of each 8 x 8 block of
      the stored tile, as ``mma``'s accumulator layout; a warpgroup accumulator (wgmma) so too, each
      warp its 16 rows (``semantics.wgmma.warp_rows``).

    gpukern's TF32 code: ``tf32_lanes``'s layout, each lane's elements in as few instructions as
    they are adjacent in memory; ``ldmatrix`` where ``by_ldmatrix`` says so (four 8 x 4 blocks).

    Made once per fragment type and space (cached: the simulator asks at every execution).  Each
    was measured on an H100 against Nsight Compute (``benchmarks/profile_vs_ncu.py``'s
    ``tensor-core fragments`` cases: each shape, each input type and each layout at least once,
    from global and shared memory; not every combination)."""
    if lowering(t) == "tf32":
        return _frozen(_tf32_moves(t, space))
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    rows = wgmma_ops.warp_rows(t)  # a warpgroup accumulator: each warp stores its 16 rows
    stored = (t.cols, rows) if t.layout == "col" else (rows, t.cols)
    if t.use == "accumulator" and t.rows == 8:
        return _frozen([(np.full(32, r), lane, 1) for r in range(8)])
    blocks = [(br, bc) for br in range(0, stored[0], 8) for bc in range(0, stored[1], 8)]
    if by_ldmatrix(t, space):
        rows = [(br + np.arange(8), bc) for br, bc in blocks]
        return _frozen([_ldmatrix(rows[i : i + 4], 8) for i in range(0, len(rows), 4)])
    return _frozen([(br + g, bc + 2 * q, 2) for br, bc in blocks])


def tf32_lanes(use: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """gpukern's TF32 fragments (16 x 16 x 8): per register ``x[i]`` of a lane, each lane's (row,
    column) of the fragment, which is ``mma.m16n8k8``'s layout with B's and the accumulator's
    columns permuted (column ``2c + h`` in place of column ``c`` of the mma's half ``h``), so that a
    lane's elements of a B row, and of an accumulator row, lie side by side in memory: a 'row' B
    moves in two 64-bit loads, an accumulator in two 128-bit ones.  Lane (g, t) holds of a
    (g + 8 (i % 2), t + 4 (i // 2)); of b x[2h + j] = (t + 4j, 2g + h); of the accumulator
    x[4h + 2i + e] = (g + 8i, 4t + 2e + h).  The C of ``codegen.tf32`` is this."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    if use == "a":
        return [(g + 8 * (i % 2), t + 4 * (i // 2)) for i in range(4)]
    if use == "b":
        return [(t + 4 * (i % 2), 2 * g + i // 2) for i in range(4)]
    return [(g + 8 * ((i // 2) % 2), 4 * t + 2 * (i % 2) + i // 4) for i in range(8)]


def _ldmatrix(blocks: list[tuple[np.ndarray, int]], width: int) -> tuple[np.ndarray, np.ndarray, int]:
    """One ``ldmatrix.x4`` of ``blocks`` (each its 8 stored rows and its first column): lane ``l``
    gives row ``l % 8`` of block ``l // 8``, 16 bytes (``width`` elements)."""
    lane = np.arange(32)
    rows = np.full(32, -1)
    cols = np.zeros(32, np.int64)
    for j, (block_rows, bc) in enumerate(blocks):
        at = lane // 8 == j
        rows[at] = block_rows[lane[at] % 8]
        cols[at] = bc
    return rows, cols, width


def _tf32_moves(t: FragmentType, space: str) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """``moves`` of gpukern's TF32 fragments: ``tf32_lanes``'s registers, grouped where a lane's
    are adjacent in the stored tile (one instruction of 2 or 4), or ``ldmatrix``."""
    regs = tf32_lanes(t.use)
    g8 = np.arange(8)
    if by_ldmatrix(t, space):  # x[i] is block i: row g, column t of the 8 x 4 block (k along rows)
        if t.use == "a":
            blocks = [(8 * (i % 2) + g8, 4 * (i // 2)) for i in range(4)]
        else:  # stored as (n, k): block 2h + j holds n = 2g + h, k = 4j..4j + 3
            blocks = [(2 * g8 + i // 2, 4 * (i % 2)) for i in range(4)]
        return [_ldmatrix(blocks, 4)]
    if t.use == "accumulator":  # x[4h + 2i + e]: row g + 8i, columns 4t..4t + 3
        return [(regs[2 * i][0], regs[2 * i][1], 4) for i in range(2)]
    if t.use == "b" and t.layout == "row":  # x[j] and x[2 + j]: row t + 4j, columns 2g, 2g + 1
        return [(regs[j][0], regs[j][1], 2) for j in range(2)]
    return [(c, r, 1) if t.layout == "col" else (r, c, 1) for r, c in regs]


def _frozen(moves: list[tuple[np.ndarray, np.ndarray, int]]) -> tuple[tuple[np.ndarray, np.ndarray, int], ...]:
    """``moves``'s answer as it is cached: shared by every caller, so read-only."""
    out = []
    for rows, cols, width in moves:
        rows, cols = np.array(rows, np.int64), np.array(cols, np.int64)
        rows.flags.writeable = cols.flags.writeable = False
        out.append((rows, cols, width))
    return tuple(out)


def round_input(values: np.ndarray, t: FragmentType) -> np.ndarray:
    """Values (float32, as the array's elements read) as a fragment of ``t`` holds them, float32."""
    v = np.asarray(values, np.float32)
    return v if t.use == "accumulator" else round_elements(v, t.elem)


def round_elements(v: np.ndarray, elem: object) -> np.ndarray:
    """float32 values as the matrix units take inputs of type ``elem`` (float32: TF32), float32."""
    v = np.asarray(v, np.float32)
    if elem == float32:
        return to_tf32(v)
    if elem == float16:
        return v.astype(np.float16).astype(np.float32)
    t = elem if isinstance(elem, StorageType) else bfloat16  # bfloat16, the 8-bit floats: their own rounding
    return np.asarray(t.to_value(t.from_value(v)), np.float32)


def mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a @ b + c`` per warp (arrays of shape (warps, m, k), (warps, k, n), (warps, m, n)), each
    element's exact products summed in float64 and rounded once to float32."""
    return (np.matmul(a.astype(np.float64), b.astype(np.float64)) + c.astype(np.float64)).astype(np.float32)


# Hopper's FP8 wgmma does not accumulate in full float32: measured on the H200, its C is within
# 2**-11.3 of |a| @ |b| of the exact product (e4m3 and e5m2, k up to 4096; float32 accumulation
# would be ~2**-20): the bound taken, doubled
FP8_ACCUMULATION = 2.0**-10


def tolerance(
    abs_a: np.ndarray, abs_b: np.ndarray, k: int, abs_c: np.ndarray | float = 0.0, inputs: str = ""
) -> np.ndarray:
    """How far a GPU's (or the simulator's) ``a @ b + c`` may be from the exact one, elementwise,
    for inputs already in the input precision: each of the ``K / k`` mma steps rounds once, and
    hardware accumulating in float32 in an unspecified order may lose up to ``k`` roundings more,
    each at most 2**-23 of the terms' magnitude ``|a| @ |b| + |c|``; doubled for safety.  8-bit
    float ``inputs``: ``FP8_ACCUMULATION`` of that magnitude."""
    if inputs.startswith("float8"):
        return FP8_ACCUMULATION * (abs_a.astype(np.float64) @ abs_b.astype(np.float64) + abs_c)
    steps = max(1, abs_a.shape[-1] // k)
    return 2.0 * (steps + k) * 2.0**-23 * (abs_a.astype(np.float64) @ abs_b.astype(np.float64) + abs_c)
