"""What each warp-level intrinsic means: one entry per ``ir.WarpOp.op``, CUDA's semantics; and the
block-wide votes (``BLOCK_VOTES``: CUDA's ``__syncthreads_count/_and/_or``).

A warp is 32 consecutive threads of a block in linear order (x fastest); the last warp of a
block may be partial.  Each entry holds the operation's NumPy form over whole warps -- arrays of
shape (warps, 32), one row per warp, with ``part`` marking the lanes taking part -- which the
simulator runs, and, for the shuffles, the C form of the rule that picks the source lane, which
the OpenCL emulation writes (``codegen.dialects``).  CUDA spells every entry natively.

The shuffles follow PTX's ``shfl.sync`` (the PTX ISA's semantics of the instruction that CUDA's
``__shfl*_sync`` compile to): a lane reads lane ``j`` of its warp, where ``j`` comes from the low
5 bits of the lane operand ``b`` and the segment ``width`` (a power of 2 up to 32); where ``j``
falls outside what the mode allows, the lane gets its own value back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF
_BIT = np.left_shift(np.uint32(1), np.arange(WARP_SIZE, dtype=np.uint32))  # lane k -> 1 << k


@dataclass(frozen=True)
class Shuffle:
    """How a shuffle mode picks the lane each lane reads.

    ``numpy(lane, b, width)``: the source lane (int64 arrays: lane 0..31, b 0..2**32-1, width a
    power of 2 from 1 to 32, one per lane: a run-time width may differ between lanes);
    ``c``: the same as a C expression of unsigned ints ``{lane}``, ``{b}`` and ``{w}`` (the
    width), each a name evaluated once."""

    numpy: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    c: str


SHUFFLES: dict[str, Shuffle] = {
    # PTX reads b's low 5 bits only (b = 33 is b = 1); then:
    # lane b of the lane's own segment (modulo width)
    "shfl_idx": Shuffle(
        lambda lane, b, w: (lane & ~(w - 1)) | (b & 31 & (w - 1)),
        "(({lane} & ~({w} - 1u)) | ({b} & 31u & ({w} - 1u)))",
    ),
    # b lanes down the segment; before its start: own value
    "shfl_up": Shuffle(
        lambda lane, b, w: np.where((b & 31) <= (lane & (w - 1)), lane - (b & 31), lane),
        "(({b} & 31u) <= ({lane} & ({w} - 1u)) ? {lane} - ({b} & 31u) : {lane})",
    ),
    # b lanes up the segment; past its end: own value
    "shfl_down": Shuffle(
        lambda lane, b, w: np.where((b & 31) <= (w - 1) - (lane & (w - 1)), lane + (b & 31), lane),
        "(({b} & 31u) <= ({w} - 1u) - ({lane} & ({w} - 1u)) ? {lane} + ({b} & 31u) : {lane})",
    ),
    # lane ^ b, if not past the end of the lane's segment (earlier segments can be read)
    "shfl_xor": Shuffle(
        lambda lane, b, w: np.where((lane ^ (b & 31)) <= (lane | (w - 1)), lane ^ (b & 31), lane),
        "((({lane} ^ ({b} & 31u)) <= ({lane} | ({w} - 1u))) ? {lane} ^ ({b} & 31u) : {lane})",
    ),
}


def lane_bits(flags: np.ndarray) -> np.ndarray:
    """Per warp (row), the uint32 with bit k set where ``flags[:, k]``."""
    return np.bitwise_or.reduce(np.where(flags, _BIT, np.uint32(0)), axis=1).astype(np.uint32)


def _ballot(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (lane_bits(part & vals[0].astype(bool))[:, None] & mask).astype(np.uint32)


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
    out = np.bitwise_or.reduce(np.where(same, _BIT, np.uint32(0)), axis=2)
    return (out & mask).astype(np.uint32)


def _match_all(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The lanes of the mask taking part, if every one of them has the same bits as this lane's; else 0."""
    matching = _match_any(vals, part, mask)
    return np.where(matching == (lane_bits(part)[:, None] & mask), matching, np.uint32(0)).astype(np.uint32)


def _syncwarp(vals: list[np.ndarray], part: np.ndarray, mask: np.ndarray) -> Any:
    return None


@dataclass(frozen=True)
class WarpOpDef:
    """One warp intrinsic: its name in messages, and its NumPy form over warps (``vals``: the
    value operands as (warps, 32) arrays; ``part``: lanes taking part; ``mask``: each lane's
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
