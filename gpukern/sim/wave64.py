"""What only a 32-lane warp makes right, found where the simulator runs 64-lane wavefronts.

AMD's CDNA GPUs run 64 threads to a wavefront.  A kernel written for NVIDIA's 32-lane warps that
uses ``warp_size()``, ``lane_id()``, ``-1`` or ``activemask()`` for its masks runs unchanged at
64; one that writes 32 into its masks, loops, offsets and lane arithmetic computes something
else there, silently.  The simulator compiles such a run's variant for 64 lanes
(``ir.Program.lanes``; ``GPUKERN_SIM_LANES=64`` or ``gk.sanitize(..., lanes=64)``) and reports
each place as ``WarpWidthError`` at its line:

- ``static_findings``: lane and warp numbers computed with 32 (``t % 32``, ``t // 32``, ``t & 31``,
  ``t >> 5``) or compared with it (``lane < 32``), in a kernel that uses warp intrinsics; found in
  the IR before the run.
- ``Reach.widened``: a mask of 32 bits passed by lanes 32-63 (``0xFFFFFFFF``, a 32-lane warp's full
  mask); taken as the whole wavefront to go on.
- ``Reach.finish``: a shuffle whose width is 32, or whose offsets over the whole run reach 32 lanes
  only (``16, 8, 4, 2, 1``: the halves of the wavefront never meet), or a shuffle that read each
  of lanes 0-31 and none above (a loop over 32 lanes).
- ``narrowed``: a ballot, match or active mask converted to 32 bits with lanes 32-63 set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import WarpWidthError
from ..ir import nodes as ir
from ..semantics.warp import WARP_OPS

_LOW = 0xFFFFFFFF  # lanes 0-31
_HIGH = 0xFFFFFFFF_00000000  # lanes 32-63
_MASK_RESULTS = ("ballot", "activemask", "match_any", "match_all")
_THREAD_NUMBERS = ("thread_idx", "global_id", "lane_id")
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _report(run: Any, e: ir.Node, message: str, lanes: tuple[int, ...] = ()) -> None:
    run.report(WarpWidthError, f"with 64-lane wavefronts, {message}", e, lanes)


class Reach:
    """Per shuffle call site of a 64-lane run: the offsets its lanes passed (OR-ed), the lanes
    ``shfl_sync`` read (a bit each) and the widest width; judged when the run ends (``finish``)."""

    def __init__(self, run: Any):
        self.run = run
        self.sites: dict[int, list[Any]] = {}  # id(op) -> [op, offsets OR-ed, lanes read, widest width]

    def widened(self, e: ir.WarpOp, slots: np.ndarray, active: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masks, those of 32 bits widened to the wavefront in each warp where lanes 32-63
        pass one (reported once per call site)."""
        narrow = (masks & np.uint64(_HIGH)) == 0
        upper = active & narrow & (np.arange(masks.shape[1]) >= 32) & (masks != 0)
        if not upper.any():
            return masks
        r, k = (int(x[0]) for x in np.nonzero(upper))
        _report(
            self.run,
            e,
            f"{WARP_OPS[e.op].name}(): lane {k} ({self.run.who(int(slots[r, k]))}) passes mask "
            f"0x{int(masks[r, k]):016x}, which names lanes 0-31 only, a 32-lane warp's full mask: pass -1, "
            "activemask() or a mask of 64 bits (taken as the whole wavefront to go on)",
            (int(slots[r, k]),),
        )
        rows = upper.any(axis=1)[:, None]
        return np.where(rows & narrow, masks | np.uint64(_HIGH), masks)

    def shuffled(self, e: ir.WarpOp, active: np.ndarray, b: np.ndarray, w: np.ndarray) -> None:
        if not active.any():
            return
        site = self.sites.setdefault(id(e), [e, 0, 0, 0])
        b = np.broadcast_to(b, active.shape)[active].astype(np.int64) & 63
        site[1] |= int(np.bitwise_or.reduce(b))
        site[2] |= int(np.bitwise_or.reduce(np.left_shift(np.uint64(1), b.astype(np.uint64))))
        site[3] = max(site[3], int(np.broadcast_to(w, active.shape)[active].max()))

    def finish(self) -> None:
        for e, offsets, read, width in self.sites.values():
            name = WARP_OPS[e.op].name
            if width == 32:
                _report(
                    self.run,
                    e,
                    f"{name}() with width 32 shuffles within halves of the wavefront: write width=warp_size() "
                    "for the whole warp (or keep 32 where halves are meant, and pass the width as a variable)",
                )
            elif e.op != "shfl_idx" and offsets == 31:
                _report(
                    self.run,
                    e,
                    f"{name}() took offsets that reach 32 lanes only ({', '.join(str(1 << k) for k in range(5))} "
                    "and no larger): lanes 32-63 never meet lanes 0-31; start from warp_size() // 2 "
                    "(or go up to it)",
                )
            elif e.op == "shfl_idx" and read == _LOW:
                _report(
                    self.run,
                    e,
                    f"{name}() read each of lanes 0-31 and none above, as a loop over a 32-lane warp does: "
                    "loop to warp_size()",
                )


def narrowed(run: Any, e: ir.Cast, v: np.ndarray, m: np.ndarray) -> None:
    """A ballot, match or active mask (64 bits here) converted to a narrower integer while lanes
    32-63 are set in it: what a kernel keeping its masks in 32 bits loses."""
    lost = np.broadcast_to(np.asarray(v).astype(np.uint64) & np.uint64(_HIGH), m.shape) != 0
    lost &= m
    if lost.any():
        k = int(np.nonzero(lost)[0][0])
        op = WARP_OPS[e.value.op].name  # type: ignore[attr-defined]
        _report(
            run,
            e,
            f"{op}() is 0x{int(np.broadcast_to(v, m.shape)[k]):016x} ({run.who(k)}): converted to {e.type.name}, its "
            "lanes 32-63 are lost; keep masks in a uint64 or an untyped variable",
            (k,),
        )


def narrows(e: ir.Cast) -> bool:
    """Whether ``e`` converts a ballot, match or active mask to an integer of fewer than 64 bits."""
    return (
        isinstance(e.value, ir.WarpOp)
        and e.value.op in _MASK_RESULTS
        and e.type.is_int
        and e.type.itemsize < 8
        and e.type.kind != "b"
    )


def _bare(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast):
        e = e.value
    return e


def _constant(e: ir.Expr) -> int | None:
    e = _bare(e)
    if isinstance(e, ir.Lit) and not isinstance(e.value, bool) and float(e.value).is_integer():
        return int(e.value)
    return None


def _numbers(funcs: list[ir.FuncDef]) -> set[str]:
    """The variables that hold a thread or lane number or something computed from one."""
    names: set[str] = set()
    while True:
        before = len(names)
        for fd in funcs:
            for node in ir.walk_body(fd.body):
                if isinstance(node, ir.Assign) and node.target.name not in names and _counts(node.value, names):
                    names.add(node.target.name)
        if len(names) == before:
            return names


def _counts(e: ir.Expr, names: set[str]) -> bool:
    return any(
        (isinstance(n, ir.Special) and n.name in _THREAD_NUMBERS) or (isinstance(n, ir.Var) and n.name in names)
        for n in ir.walk(e)
    )


_PATTERNS = {  # (op, constant): what the expression computes, and what to write instead
    ("%", 32): ("a lane number with % 32", "lane_id(), or % warp_size()"),
    ("&", 31): ("a lane number with & 31", "lane_id(), or & (warp_size() - 1)"),
    ("//", 32): ("a warp number with // 32", "// warp_size()"),
    (">>", 5): ("a warp number with >> 5", "// warp_size()"),
}


def static_findings(program: ir.Program) -> list[tuple[ir.Node, str]]:
    """Lane and warp numbers computed or compared with 32, in a kernel that uses warp intrinsics
    (elsewhere 32 is a tile's size, not a warp's): each with its message."""
    funcs = [program.kernel, *program.funcs]
    nodes = [n for fd in funcs for n in ir.walk_body(fd.body)]
    if not any(isinstance(n, ir.WarpOp) or (isinstance(n, ir.Special) and n.name == "lane_id") for n in nodes):
        return []
    names = _numbers(funcs)
    found: list[tuple[ir.Node, str]] = []
    for n in nodes:
        if not isinstance(n, (ir.BinOp, ir.Compare)):
            continue
        for a, b in ((n.left, n.right), (n.right, n.left)):
            c = _constant(b)
            if c is None or not _counts(a, names):
                continue
            if isinstance(n, ir.BinOp) and (n.op, c) in _PATTERNS and a is n.left:
                what, instead = _PATTERNS[(n.op, c)]
                found.append((n, f"computes {what}, a 32-lane warp's: write {instead}"))
            elif isinstance(n, ir.Compare) and n.op in _COMPARISONS and c in (31, 32):
                found.append(
                    (n, f"compares a thread or lane number with {c}, a 32-lane warp's size: compare with warp_size()")
                )
            break
    return found


def report_static(run: Any, findings: list[tuple[ir.Node, str]]) -> None:
    for node, message in findings:
        _report(run, node, message)
