"""Timing kernels with device events, the way benchmarks must."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from .backends import get_backend


def synchronize(backend: str | None = None) -> None:
    """Wait until all work queued on the backend's device has finished."""
    get_backend(backend).synchronize()


def benchmark(fn: Callable[[], Any], repeat: int = 10, warmup: int = 2, backend: str | None = None) -> float:
    """Median seconds of ``fn()`` (which enqueues device work), timed by device events.

    ``fn`` runs ``warmup`` times untimed first (compilation, caches), then ``repeat``
    times, each between two events recorded on the device.
    """
    b = get_backend(backend)
    for _ in range(warmup):
        fn()
    b.synchronize()
    times = []
    for _ in range(repeat):
        start = b.timer()
        fn()
        end = b.timer()
        times.append(b.elapsed(start, end))
    return statistics.median(times)
