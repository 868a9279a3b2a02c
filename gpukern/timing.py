"""Timing kernels with device events, the way benchmarks must."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from .backends import get_backend
from .runtime.array import stream_handle


def synchronize(backend: str | None = None) -> None:
    """Wait until all work queued on the backend's device has finished."""
    get_backend(backend).synchronize()


def benchmark(
    fn: Callable[[], Any], repeat: int = 10, warmup: int = 2, backend: str | None = None, stream: Any = None
) -> float:
    """Median seconds of ``fn()`` (which enqueues device work), timed by device events.

    ``fn`` runs ``warmup`` times untimed first (compilation, caches), then ``repeat``
    times, each between two events recorded on ``stream`` (a ``gk.Stream``; None: the default
    stream), which is where ``fn`` must queue its work.
    """
    b = get_backend(backend)
    handle = stream_handle(stream, b, "benchmark()")
    for _ in range(warmup):
        fn()
    b.synchronize()
    times = []
    for _ in range(repeat):
        start = b.record(handle)
        fn()
        end = b.record(handle)
        times.append(b.elapsed(start, end))
    return statistics.median(times)
