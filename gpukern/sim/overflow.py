"""Index overflow: 32-bit arithmetic that feeds an array index must not wrap around.

The front end marks such arithmetic (``passes.mark_index_arithmetic``: ``feeds_index``); the
simulator, with checks on, hands each marked result here with its operands.  Recomputing every
marked operation in 64 bits would double the cost of index arithmetic, so the operands' ranges
come first: from their smallest and largest values (cached per array, since thread indices,
sizes and parameters are the same arrays statement after statement), the result's range; only
when that range leaves the type's does the exact 64-bit result decide, lane by lane.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..semantics import ops

_INT64 = np.dtype(np.int64)


class OverflowCheck:
    """The index-overflow check of one launch."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[np.ndarray, int, int]] = {}  # id(array) -> (array, min, max)

    def bounds(self, x: Any) -> tuple[int, int]:
        """The smallest and largest value of an operand (a scalar or a whole-grid array)."""
        if np.ndim(x) == 0:
            v = int(x)
            return v, v
        hit = self.known.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1], hit[2]
        lo, hi = int(x.min()), int(x.max())
        if len(self.known) >= 32:  # arrays kept alive here: a few
            self.known.clear()
        self.known[id(x)] = (x, lo, hi)
        return lo, hi

    def may_wrap(self, op: str, operands: list[Any], dtype: np.dtype) -> bool:
        """Whether ``op`` of these operands can leave ``dtype``'s range in any lane."""
        info = np.iinfo(dtype)
        (alo, ahi), *rest = (self.bounds(x) for x in operands)
        if op == "-" and not rest:
            lo, hi = -ahi, -alo
        elif op in ("+", "-", "*"):
            blo, bhi = rest[0]
            if op == "+":
                lo, hi = alo + blo, ahi + bhi
            elif op == "-":
                lo, hi = alo - bhi, ahi - blo
            else:
                ends = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
                lo, hi = min(ends), max(ends)
        elif op == "<<":
            blo, bhi = rest[0]
            if blo < 0 or bhi >= info.bits:
                return True
            ends = (alo << blo, alo << bhi, ahi << blo, ahi << bhi)
            lo, hi = min(ends), max(ends)
        elif op == "//":
            blo, bhi = rest[0]
            return alo == info.min and blo <= -1 <= bhi
        else:  # '**': no cheap bound
            return True
        return lo < info.min or hi > info.max

    def wrapped(self, op: str, operands: list[Any], out: Any, dtype: np.dtype, m: np.ndarray) -> tuple[int, int] | None:
        """The first active lane where ``out`` (``op`` of ``operands`` in ``dtype``) wrapped, and the
        value it should have had (Python's, from ``ops``: 64 bits can wrap too), or None."""
        if not self.may_wrap(op, operands, dtype):
            return None
        entry = ops.BINARY[op] if len(operands) == 2 else ops.UNARY[op]
        wide = [np.asarray(x).astype(np.int64) for x in operands]
        with np.errstate(all="ignore"):
            exact = entry.numpy(*wide, _INT64)
        bad = np.broadcast_to(exact != out, m.shape) & m
        if not bad.any():
            return None
        k = int(np.argmax(bad))
        try:
            value = int(entry.python(*(int(np.broadcast_to(x, m.shape)[k]) for x in operands)))
        except (ArithmeticError, ValueError):  # a shift by a negative count: NumPy's meaning stands
            value = int(np.broadcast_to(exact, m.shape)[k])
        return k, value
