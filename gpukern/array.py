"""Device arrays: data that stays on a device between launches."""

from __future__ import annotations

from typing import Any

import numpy as np

_KINDS: dict[tuple[Any, np.dtype, int], tuple[Any, np.dtype, int]] = {}


def array_kind(backend: Any, dtype: np.dtype, ndim: int) -> tuple[Any, np.dtype, int]:
    """The one object standing for (backend, dtype, rank): a launch plan tests a device array with
    one identity comparison (``a.kind is kind``) instead of three attribute tests."""
    key = (backend, np.dtype(dtype), ndim)
    return _KINDS.setdefault(key, key)


class DeviceArray:
    """A C-contiguous array in one backend's device memory.

    Launches use it in place (no copies); ``get()`` copies it back to a NumPy array.  Its backend,
    shape and dtype are fixed when it is made (``kind`` holds them for launch plans).
    """

    def __init__(self, backend: Any, handle: Any, shape: tuple[int, ...], dtype: np.dtype):
        self._backend = backend
        self.handle = handle
        self._shape = tuple(int(s) for s in shape)
        self._dtype = np.dtype(dtype)
        self.kind = array_kind(backend, self._dtype, len(self._shape))

    @property
    def backend(self) -> Any:
        return self._backend

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

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
