"""Device arrays: data that stays on a device between launches."""

from __future__ import annotations

from typing import Any

import numpy as np


class DeviceArray:
    """A C-contiguous array in one backend's device memory.

    Launches use it in place (no copies); ``get()`` copies it back to a NumPy array.
    """

    def __init__(self, backend: Any, handle: Any, shape: tuple[int, ...], dtype: np.dtype):
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
