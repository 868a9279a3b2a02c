"""Streams and events: ordering device work against other work, and timing it.

A ``Stream`` is an ordered queue of launches and copies on one backend (CUDA: a stream;
OpenCL: an in-order command queue; the simulator: every operation finishes when it is made,
so its streams are trivially in order).  An ``Event`` marks a point in a stream: another
stream can wait for it, the host can wait for it, and two events time what ran between them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backends import get_backend
from .errors import LaunchError
from .runtime.array import stream_handle
from .types import array_element


class Stream:
    """An ordered queue of device work: ``k[grid, block, stream](...)``, ``a.set_async(x, stream)``.

    ``Stream()`` makes a new stream on the current backend; ``Stream.default()`` is the backend's
    default stream (what launches without a stream use).
    """

    __slots__ = ("backend", "handle", "_keep")

    def __init__(self, backend: str | None = None):
        self.backend = get_backend(backend)
        self._keep = self.backend.new_stream()  # the runtime's stream object; destroyed with this one
        self.handle = self.backend.stream_ref(self._keep)

    @classmethod
    def default(cls, backend: str | None = None) -> Stream:
        """The backend's default stream."""
        s = cls.__new__(cls)
        s.backend = get_backend(backend)
        s.handle = s._keep = None
        return s

    @classmethod
    def wrap(cls, stream: Any, backend: str | None = None) -> Stream:
        """Another library's stream as a gpukern one, sharing it: a CuPy or PyTorch stream, an
        object with ``__cuda_stream__`` on CUDA; a ``pyopencl.CommandQueue`` of the backend's
        context on OpenCL.  (Launches and copies also take such streams directly.)"""
        return cls._shared(stream, backend, False)

    @classmethod
    def from_handle(cls, handle: int, backend: str | None = None) -> Stream:
        """A stream made elsewhere, by its CUstream handle (an int; 1 and 2 are CUDA's legacy and
        per-thread default streams): the caller keeps it alive while gpukern uses it."""
        return cls._shared(handle, backend, True)

    @classmethod
    def _shared(cls, stream: Any, backend: str | None, handles: bool) -> Stream:
        s = cls.__new__(cls)
        s.backend = get_backend(backend)
        s.handle = s.backend.foreign_stream(stream, handles)
        s._keep = stream  # the owner's object keeps its stream alive
        return s

    def synchronize(self) -> None:
        """Wait on the host until everything queued on this stream has finished."""
        self.backend.stream_synchronize(self.handle)

    def record(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) at this point of the stream, and return it."""
        if event is not None and not isinstance(event, Event):
            raise LaunchError(f"Stream.record() takes a gpukern.Event or None, not {event!r}")
        return (event or Event(self.backend.name)).record(self)

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on starts after ``event`` has happened."""
        if not isinstance(event, Event):
            raise LaunchError(f"wait_event() takes a gpukern.Event, not {event!r}")
        self.backend.stream_wait(self.handle, event.recorded("wait_event()", self.backend))

    def wait_stream(self, other: Stream) -> None:
        """Work queued on this stream from now on starts after what is queued on ``other`` now."""
        if not isinstance(other, Stream):
            raise LaunchError(f"wait_stream() takes a gpukern.Stream, not {other!r}")
        self.wait_event(other.record())

    def __repr__(self) -> str:
        which = "default " if self.handle is None else ""
        return f"<gpukern {which}Stream on {self.backend.name}>"


class Event:
    """A point in a stream, once recorded: ``e = Event().record(stream)``.

    ``end.synchronize()`` waits for it; ``start.elapsed_time(end)`` is the device time between
    two, in milliseconds (as CuPy and PyTorch give it).
    """

    __slots__ = ("backend", "handle")

    def __init__(self, backend: str | None = None):
        self.backend = get_backend(backend)
        self.handle: Any = None

    def record(self, stream: Stream | None = None) -> Event:
        """Mark the current end of ``stream`` (None: the default stream); returns the event."""
        self.handle = self.backend.record(stream_handle(stream, self.backend, "Event.record()"))
        return self

    def recorded(self, what: str, backend: Any) -> Any:
        """This event's handle, or a LaunchError saying why ``what`` cannot use it."""
        if self.handle is None:
            raise LaunchError(f"{what}: the event was never recorded (call event.record(stream) first)")
        if backend is not self.backend:
            raise LaunchError(f"{what}: the event belongs to backend {self.backend.name!r}, not {backend.name!r}")
        return self.handle

    def synchronize(self) -> None:
        """Wait on the host until the event has happened."""
        self.backend.event_synchronize(self.recorded("Event.synchronize()", self.backend))

    def query(self) -> bool:
        """Whether the event has happened (never waits)."""
        return self.backend.event_done(self.recorded("Event.query()", self.backend))

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds of device time from this event to ``end`` (waits for ``end``)."""
        if not isinstance(end, Event):
            raise LaunchError(f"Event.elapsed_time() takes the end gpukern.Event, not {end!r}")
        start = self.recorded("Event.elapsed_time()", self.backend)
        return self.backend.elapsed(start, end.recorded("Event.elapsed_time()", self.backend)) * 1e3

    def __repr__(self) -> str:
        state = "recorded" if self.handle is not None else "not recorded"
        return f"<gpukern Event on {self.backend.name}, {state}>"


def default_stream(backend: str | None = None) -> Stream:
    """The backend's default stream."""
    return Stream.default(backend)


def pinned_empty(shape: int | tuple[int, ...], dtype: Any = np.float32, backend: str | None = None) -> np.ndarray:
    """A NumPy array in page-locked host memory (CUDA) or runtime-allocated host memory (OpenCL):
    copies from and to it can overlap with kernels and run at the bus's full speed.  On the
    simulator it is an ordinary array."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise LaunchError(f"negative dimension in shape {shape}")
    array_element(np.dtype(dtype), " for a pinned array")  # what gk.empty takes, refused alike
    b = get_backend(backend)
    if 0 in shape:  # no memory to pin (OpenCL cannot map an empty buffer)
        return np.empty(shape, dtype)
    return b.pinned_empty(shape, np.dtype(dtype))
