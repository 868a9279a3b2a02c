"""Numba's meaning where it differs from gpukern's own (docs/numba.md), as compile options: a store
converts any real number (``gk.sanitize`` reports one that changes the value), bools count (``True +
True == 2``), a negative index counts from the end, and a variable some path leaves unassigned is
checked when read (by the simulator), not refused, and a local only Python literals are assigned is
Python's int64 or float64 (``c = 0.0; c += 0.1`` adds in float64).  Every kernel the Numba layer makes takes them:
``cuda.jit``'s and ``cuda.reduce``'s."""

from __future__ import annotations

NUMBA_RULES = {
    "casting": "unsafe",
    "bools": "python",
    "negative_indices": "wrap",
    "unbound": "check",
    "literals": "wide",
}
