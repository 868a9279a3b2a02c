"""What each warp-level intrinsic means: one entry per ``ir.WarpOp.op``, CUDA's semantics; and the
block-wide votes (``BLOCK_VOTES``: CUDA's ``__syncthreads_count/_and/_or``).

A warp is ``n`` consecutive threads of a block in linear order (x fastest), 32 on NVIDIA's GPUs
(and in gpukern's HIP and OpenCL, which keep 32-lane warps), 64 in a wavefront of AMD's CDNA
(``LANES``: the simulator runs either); the last warp of a block may be partial.  Each entry
holds the operation's NumPy form over whole warps -- arrays of shape (warps, n), one row per
warp, with ``part`` marking the lanes taking part; a mask or a ballot is a uint32 of 32 lanes,
a uint64 of 64 (``mask_dtype``) -- which the simulator runs, and, for the shuffles, the C form
of the rule that picks the source lane at 32 lanes, which the OpenCL emulation writes
(``codegen.dialects``).  CUDA spells every entry natively.

The shuffles follow PTX's ``shfl.sync`` (the PTX ISA's semantics of the instruction that CUDA's
``__shfl*_sync`` compile to): a lane reads lane ``j`` of its warp, where ``j`` comes from the low
5 bits of the lane operand ``b`` (log2(n) bits: 6 in a wavefront of 64, as HIP's ``__shfl``
takes the lane modulo the width) and the segment ``width`` (a power of 2 up to n); where ``j``
falls outside what the mode allows, the lane gets its own value back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

WARP_SIZE = 32  # NVIDIA's, and gpukern's everywhere but the simulator's wavefront mode
LANES = (32, 64)  # the warp widths the simulator runs: NVIDIA's warp, CDNA's wavefront
FULL_MASK = 0xFFFFFFFF
# a lane's bit in a mask of n lanes (lane k -> 1 << k), per width
_BITS = {n: np.left_shift(np.dtype(f"uint{n}").type(1), np.arange(n, dtype=f"uint{n}")) for n in LANES}


def full_mask(lanes: int) -> int:
    """The mask naming every lane of a warp of ``lanes``."""
    return (1 << lanes) - 1


def mask_dtype(lanes: int) -> np.dtype:
    """A mask's or ballot's type in a warp of ``lanes``: uint32 of 32 lanes, uint64 of 64."""
    return np.dtype(f"uint{lanes}")


@dataclass(frozen=True)
class Shuffle:
    """How a shuffle mode picks the lane each lane reads.

    ``numpy(lane, b, width, n)``: the source lane in a warp of ``n`` lanes (int64 arrays: lane
    0..n-1, b 0..2**32-1, width a power of 2 from 1 to n, one per lane: a run-time width may
    differ between lanes); ``c``: the same at 32 lanes as a C expression of unsigned ints
    ``{lane}``, ``{b}`` and ``{w}`` (the width), each a name evaluated once."""

    numpy: Callable[[np.ndarray, np.ndarray, Any, int], np.ndarray]
    c: str


SHUFFLES: dict[str, Shuffle] = {
    # PTX reads b's low 5 bits only (b = 33 is b = 1; at 64 lanes, 6 bits); then:
    # lane b of the lane's own segment (modulo width)
    "shfl_idx": Shuffle(
        lambda lane, b, w, n: (lane & ~(w - 1)) | (b & (n - 1) & (w - 1)),
        "(({lane} & ~({w} - 1u)) | ({b} & 31u & ({w} - 1u)))",
    ),
    # b lanes down the segment; before its start: own value
    "shfl_up": Shuffle(
        lambda lane, b, w, n: np.where((b & (n - 1)) <= (lane & (w - 1)), lane - (b & (n - 1)), lane),
        "(({b} & 31u) <= ({lane} & ({w} - 1u)) ? {lane} - ({b} & 31u) : {lane})",
    ),
    # b lanes up the segment; past its end: own value
    "shfl_down": Shuffle(
        lambda lane, b, w, n: np.where((b & (n - 1)) <= (w - 1) - (lane & (w - 1)), lane + (b & (n - 1)), lane),
        "(({b} & 31u) <= ({w} - 1u) - ({lane} & ({w} - 1u)) ? {lane} + ({b} & 31u) : {lane})",
    ),
    # lane ^ b, if not past the end of the lane's segment (earlier segments can be read)
    "shfl_xor": Shuffle(
        lambda lane, b, w, n: np.where((lane ^ (b & (n - 1))) <= (lane | (w - 1)), lane ^ (b & (n - 1)), lane),
        "((({lane} ^ ({b} & 31u)) <= ({lane} | ({w} - 1u))) ? {lane} ^ ({b} & 31u) : {lane})",
    ),
}


def lane_bits(flags: np.ndarray) -> np.ndarray:
    """Per warp (row of n lanes), the mask (``mask_dtype(n)``) with bit k set where ``flags[:, k]``."""
    bits = _BITS[flags.shape[-1]]
    return np.bitwise_or.reduce(np.where(flags, bits, bits.dtype.type(0)), axis=-1).astype(bits.dtype)


def _ballot(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return lane_bits(part & vals[0].astype(bool))[:, None] & mask


def _all(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _ballot(vals, part, mask) == (lane_bits(part)[:, None] & mask)


def _any(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _ballot(vals, part, mask) != 0


def _activemask(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.broadcast_to(lane_bits(part)[:, None], part.shape)


def _uni(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Whether the predicate is the same in every lane of the mask: true in all, or in none."""
    b = _ballot(vals, part, mask)
    return (b == 0) | (b == (lane_bits(part)[:, None] & mask))


def _match_any(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The lanes taking part whose value has the same bits as this lane's (so NaN matches NaN)."""
    v = vals[0]
    bits = v.view(np.uint32 if v.dtype.itemsize == 4 else np.uint64)
    same = (bits[:, :, None] == bits[:, None, :]) & part[:, None, :]  # [warp, lane, other lane]
    return lane_bits(same) & mask


def _match_all(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The lanes of the mask taking part, if every one of them has the same bits as this lane's; else 0."""
    matching = _match_any(vals, part, mask)
    return np.where(matching == (lane_bits(part)[:, None] & mask), matching, matching.dtype.type(0))


def _syncwarp(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> Any:
    return None


@dataclass(frozen=True)
class WarpOpDef:
    """One warp intrinsic: its name in messages, and its NumPy form over warps (``vals``: the
    value operands as (warps, lanes) arrays; ``part``: lanes taking part; ``mask``: each lane's
    mask), or for a shuffle its source-lane rule (``SHUFFLES``)."""

    op: str
    name: str
    numpy: Callable[[list[np.ndarray], np.ndarray, np.ndarray], Any] | None = None

    @property
    def shuffle(self) -> Shuffle | None:
        return SHUFFLES.get(self.op)


WARP_OPS: dict[str, WarpOpDef] = {
    "shfl_idx": WarpOpDef("shfl_idx", "shfl_sync"),
    "shfl_up": WarpOpDef("shfl_up", "shfl_up_sync"),
    "shfl_down": WarpOpDef("shfl_down", "shfl_down_sync"),
    "shfl_xor": WarpOpDef("shfl_xor", "shfl_xor_sync"),
    "all": WarpOpDef("all", "vote_all", _all),
    "any": WarpOpDef("any", "vote_any", _any),
    "ballot": WarpOpDef("ballot", "ballot", _ballot),
    "activemask": WarpOpDef("activemask", "activemask", _activemask),
    "match_any": WarpOpDef("match_any", "match_any", _match_any),
    "match_all": WarpOpDef("match_all", "match_all", _match_all),
    "uni": WarpOpDef("uni", "eq_sync", _uni),
    "syncwarp": WarpOpDef("syncwarp", "syncwarp", _syncwarp),
}


# ---------------------------------------------------------------- block-wide votes
@dataclass(frozen=True)
class BlockVote:
    """A barrier that also reduces a predicate over the threads of the block that reach it (an
    ``ir.Barrier`` whose ``vote`` names the entry): ``numpy(counts, arrived)``, per block, from how
    many of its threads arrived with the predicate true and how many arrived; ``neutral``: the
    predicate of a thread that has returned, which arrives but counts for nothing; ``boolean``:
    whether the result is a bool (else an int32 count)."""

    op: str
    name: str
    numpy: Callable[[np.ndarray, np.ndarray], np.ndarray]
    neutral: bool
    boolean: bool


BLOCK_VOTES: dict[str, BlockVote] = {
    "count": BlockVote("count", "syncthreads_count", lambda n, arrived: n.astype(np.int32), False, False),
    "and": BlockVote("and", "syncthreads_and", lambda n, arrived: n == arrived, True, True),
    "or": BlockVote("or", "syncthreads_or", lambda n, arrived: n > 0, False, True),
}
