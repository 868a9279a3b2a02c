"""What the warp-level matrix multiply-accumulate means (``gk.mma`` and its fragments), once, for
the front end (which shapes and types exist), the simulator (the NumPy forms) and the CUDA emitter
(which compute capability each needs).

A fragment is a tile of a matrix spread over the 32 lanes of a warp.  CUDA leaves unspecified
which lane holds which element; ``moves`` gives the simulator the memory instructions an H100's
wmma compiles to (measured with Nsight Compute, ``benchmarks/profile_vs_ncu.py``), so that races,
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

import numpy as np

from .types import FragmentType, bfloat16, float16, float32

# (m, n, k) of each input type's tiles; the accumulator is float32 in all of them
FRAGMENT_SHAPES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "float16": ((16, 16, 16), (32, 8, 16), (8, 32, 16)),
    "bfloat16": ((16, 16, 16), (32, 8, 16), (8, 32, 16)),
    "float32": ((16, 16, 8),),  # TF32 inputs from float32 arrays
}
ACCUMULATOR = float32
USES = ("a", "b", "accumulator")
LAYOUTS = ("row", "col")
# the least compute capability (major * 10 + minor) of each input type's tiles, and why
CAPABILITY: dict[str, tuple[int, str]] = {
    "float16": (70, "float16 tensor cores (sm_70, Volta)"),
    "bfloat16": (80, "bfloat16 tensor cores (sm_80, Ampere)"),
    "float32": (80, "TF32 tensor cores (sm_80, Ampere)"),
}


def precision(t: FragmentType) -> str:
    """The name of the precision an a/b fragment computes in: 'float16', 'bfloat16' or 'tf32'."""
    return "tf32" if t.elem == float32 else t.elem.name


def input_type(t: FragmentType) -> str:
    """The input type of the mma a fragment takes part in (an accumulator's is its a/b's: unknown, so '')."""
    return "" if t.use == "accumulator" else t.elem.name


def capability(types: list[FragmentType]) -> tuple[int, str]:
    """The least compute capability the fragments need, and why (an accumulator alone: float16's)."""
    need = [CAPABILITY[input_type(t)] for t in types if t.use != "accumulator"] or [CAPABILITY["float16"]]
    return max(need)


def to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 mantissa bits), to nearest, ties away from zero (PTX
    ``cvt.rna.tf32.f32``, CUDA's ``wmma::__float_to_tf32``); infinities and NaNs kept; as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return np.where(np.isfinite(x), rounded.view(np.float32), x).astype(np.float32)


@functools.cache
def moves(t: FragmentType, space: str) -> tuple[tuple[np.ndarray, np.ndarray, int], ...]:
    """How a warp moves fragment ``t`` between its registers and ``space`` ('global' or 'shared'):
    per memory instruction, each lane's (row, column) of the tile *as stored* (an a/b fragment of
    layout 'col' is stored transposed) and how many consecutive elements of that stored row from
    there it moves; row -1: the lane takes no part.

    - float16 a/b tiles in shared memory: ``ldmatrix`` (LDSM), the stored tile in 8 x 8 blocks of
      16-byte rows, four blocks an instruction, lane ``l`` giving row ``l % 8`` of block ``l // 8``,
      one shared-memory phase per block;
    - float32 (TF32) a/b tiles: one element a lane an instruction, as ``mma.m16n8k8`` holds them
      (a: lane (g, t) = (l // 4, l % 4) at (g, t) of each 8 x 4 block; b: at (t, g) of each 4 x 8);
    - the 8 x 32 accumulator (m8n32k16): a stored row an instruction, lane ``l`` at column ``l``;
    - every other (16-bit tiles in global memory, bfloat16 tiles in shared memory, the other
      accumulators): two consecutive elements a lane, lane (g, t) at (g, 2t) of each 8 x 8 block of
      the stored tile, as ``mma``'s accumulator layout.

    Made once per fragment type and space (cached: the simulator asks at every execution).  Each
    was measured on an H100 against Nsight Compute (``benchmarks/profile_vs_ncu.py``'s
    ``tensor-core fragments`` cases: each shape, each input type and each layout at least once,
    from global and shared memory; not every combination)."""
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    stored = (t.cols, t.rows) if t.layout == "col" else (t.rows, t.cols)
    out = []
    if t.use != "accumulator" and t.elem == float32:
        bh, bw, r, c = (8, 4, g, q) if t.use == "a" else (4, 8, q, g)
        for br in range(0, t.rows, bh):
            for bc in range(0, t.cols, bw):
                rr, cc = br + r, bc + c
                out.append((cc, rr, 1) if t.layout == "col" else (rr, cc, 1))
        return _frozen(out)
    if t.use == "accumulator" and t.rows == 8:
        return _frozen([(np.full(32, r), lane, 1) for r in range(8)])
    blocks = [(br, bc) for br in range(0, stored[0], 8) for bc in range(0, stored[1], 8)]
    if t.use != "accumulator" and space == "shared" and t.elem == float16:
        for i in range(0, len(blocks), 4):
            group = blocks[i : i + 4]
            which = lane // 8
            rows = np.full(32, -1)
            cols = np.zeros(32, np.int64)
            for j, (br, bc) in enumerate(group):
                rows[which == j] = br + lane[which == j] % 8
                cols[which == j] = bc
            out.append((rows, cols, 8))
        return _frozen(out)
    return _frozen([(br + g, bc + 2 * q, 2) for br, bc in blocks])


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
    if t.use == "accumulator":
        return v
    if t.elem == float32:
        return to_tf32(v)
    if t.elem == float16:
        return v.astype(np.float16).astype(np.float32)
    return np.asarray(bfloat16.to_value(bfloat16.from_value(v)), np.float32)


def mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a @ b + c`` per warp (arrays of shape (warps, m, k), (warps, k, n), (warps, m, n)), each
    element's exact products summed in float64 and rounded once to float32."""
    return (np.matmul(a.astype(np.float64), b.astype(np.float64)) + c.astype(np.float64)).astype(np.float32)


def tolerance(abs_a: np.ndarray, abs_b: np.ndarray, k: int, abs_c: np.ndarray | float = 0.0) -> np.ndarray:
    """How far a GPU's (or the simulator's) ``a @ b + c`` may be from the exact one, elementwise,
    for inputs already in the input precision: each of the ``K / k`` mma steps rounds once, and
    hardware accumulating in float32 in an unspecified order may lose up to ``k`` roundings more,
    each at most 2**-23 of the terms' magnitude ``|a| @ |b| + |c|``; doubled for safety."""
    steps = max(1, abs_a.shape[-1] // k)
    return 2.0 * (steps + k) * 2.0**-23 * (abs_a.astype(np.float64) @ abs_b.astype(np.float64) + abs_c)
