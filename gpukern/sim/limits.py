"""The simulator's allocations against this machine's memory: one guard that every step of a
launch that allocates per element (the arrays, race and initialisation tracking, copies in
flight) goes through, so that too large a launch is a ``LaunchError`` saying what needed how much,
not a MemoryError or a swapping machine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LaunchError


def physical_memory() -> int | None:
    """Bytes of RAM in this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError


@contextmanager
def memory_guard(need: int, what: str) -> Iterator[None]:
    """Allocate inside: ``what``, needing ``need`` bytes, is a LaunchError if that is more than this
    machine's memory or NumPy cannot allocate it (MemoryError, or ValueError for absurd sizes)."""
    total = physical_memory()
    advice = "the simulator holds every block's and thread's copy at once: launch fewer threads or use less memory"
    if total is not None and need > total:
        raise LaunchError(
            f"{what} needs {format_bytes(need)}, more than this machine's {format_bytes(total)}; {advice}"
        )
    try:
        yield
    except (MemoryError, ValueError):
        raise LaunchError(f"{what} needs {format_bytes(need)}, which could not be allocated; {advice}") from None
