"""Timing kernels with device events, the way benchmarks must."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from .backends import get_backend
from .errors import GpukernError
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


def problem_size(given: int | None, full: int, simulator: int, backend: str | None = None) -> int:
    """The size of an example's or a benchmark's problem: ``given`` where the user chose one, else
    ``full`` on a device and ``simulator`` on the simulator, which runs every thread on this CPU
    (a device-sized problem takes it minutes), saying so in one line.  ``backend``: the one the
    program will use (None: the current one)."""
    if given is not None:
        return given
    try:
        name = get_backend(backend).name
    except GpukernError:  # (the program reports an unavailable backend itself)
        return full
    if name != "sim":
        return full
    print(f"the simulator runs every thread on this CPU: size {simulator} instead of {full} (--size to choose)")
    return simulator
