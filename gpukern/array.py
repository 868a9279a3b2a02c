"""Device arrays: data that stays on a device between launches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import LaunchError
from .types import from_dtype

if TYPE_CHECKING:
    from .backends import Backend


class DeviceArray:
    """A C-contiguous array in one backend's device memory.

    Launches use it in place (no copies); ``get()`` copies it back to a NumPy array.
    """

    def __init__(self, backend: Backend, handle: Any, shape: tuple[int, ...], dtype: np.dtype):
        self.backend = backend
        self.handle = handle
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def get(self) -> np.ndarray:
        """Copy to a new NumPy array (waits for pending work on the array)."""
        return self.backend.download(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.get()
        return out if dtype is None else out.astype(dtype)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, backend={self.backend.name})"


def _backend(name: str | None) -> Backend:
    from .backends import get_backend

    return get_backend(name)


def to_device(array: Any, backend: str | None = None) -> DeviceArray:
    """Copy a NumPy array (or anything ``numpy.asarray`` takes) to the device."""
    a = np.ascontiguousarray(array)
    from_dtype(a.dtype, " for a device array")
    return _backend(backend).to_device(a)


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """An uninitialised device array."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(int(s) < 0 for s in shape):
        raise LaunchError(f"negative dimension in shape {shape}")
    dt = np.dtype(dtype)
    from_dtype(dt, " for a device array")
    return _backend(backend).empty(shape, dt)


def zeros(shape: int | tuple[int, ...], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """A device array of zeros."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return to_device(np.zeros(shape, dtype), backend)
