"""``cuda.reduce``: Numba's reduction of a 1-d array by a binary function, made of gpukern kernels.

``@cuda.reduce def add(a, b): return a + b`` gives an object that reduces an array with ``add``
(``add(arr)``, ``add(arr, size=n, res=out, init=0)``).  Each launch reduces blocks of 256 threads in
shared memory, a grid-stride loop first, with a flag for the threads that hold nothing (so no identity
element is needed); the blocks' results are reduced by one block; ``init`` joins at the end, as
Numba's does.  The order of operations is a tree, so the function should be associative (and
commutative), as Numba requires.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import empty, to_device
from ..errors import LaunchError
from ..kernel import kernel
from ..language.core import barrier, block_dim, block_idx, func, grid_dim, shared, thread_idx
from ..runtime.array import DeviceArray
from .rules import NUMBA_RULES

THREADS = 256
MAX_BLOCKS = 1024


def _reducer(op: Any, dtype: Any) -> Any:
    """The kernel reducing ``src[:n]`` into ``out[block]`` with ``op`` on ``dtype`` values."""

    @kernel(**NUMBA_RULES)  # (the functor is the user's Numba code)
    def reduce_blocks(src, n, out):
        vals = shared(dtype, THREADS)
        held = shared(np.int32, THREADS)
        t = thread_idx.x
        i = block_idx.x * block_dim.x + t
        stride = block_dim.x * grid_dim.x
        acc = dtype(0)
        has = 0
        if i < n:
            acc = src[i]
            has = 1
            i += stride
            while i < n:
                acc = op(acc, src[i])
                i += stride
        vals[t] = acc
        held[t] = has
        barrier()
        step = THREADS // 2
        while step > 0:
            if t < step and held[t + step] == 1:
                if held[t] == 1:
                    vals[t] = op(vals[t], vals[t + step])
                else:
                    vals[t] = vals[t + step]
                    held[t] = 1
            barrier()
            step //= 2
        if t == 0:
            out[block_idx.x] = vals[0]

    return reduce_blocks


class Reduce:
    """What ``@cuda.reduce`` gives: call it on a 1-d NumPy or device array."""

    def __init__(self, functor: Any) -> None:
        self.functor = functor
        self._device = func(functor)
        self._kernels: dict[np.dtype, Any] = {}

    def __call__(self, arr: Any, size: int | None = None, res: Any = None, init: Any = 0, stream: Any = 0) -> Any:
        if np.ndim(arr) != 1:
            raise LaunchError(f"cuda.reduce: the array must be 1-d, not {np.ndim(arr)}-d")
        n = len(arr) if size is None else int(size)
        if not 0 <= n <= len(arr):
            raise LaunchError(f"cuda.reduce: size={size} is outside the array's {len(arr)} elements")
        dtype = np.dtype(arr.dtype)
        if n == 0:
            total = dtype.type(init)
        else:
            k = self._kernels.get(dtype)
            if k is None:
                k = self._kernels[dtype] = _reducer(self._device, dtype.type)
            src = arr if isinstance(arr, DeviceArray) else to_device(np.ascontiguousarray(arr))
            blocks = min(-(-n // THREADS), MAX_BLOCKS)
            partial = empty(blocks, dtype)
            k[blocks, THREADS](src, n, partial)
            if blocks > 1:
                final = empty(1, dtype)
                k[1, THREADS](partial, blocks, final)
                partial = final
            total = dtype.type(self.functor(dtype.type(init), partial.get()[0]))
        if res is None:
            return total
        if isinstance(res, DeviceArray):  # Numba writes res[0] on the device
            host = res.get()
            host[0] = total
            res.set(host)
        else:
            res[0] = total
        return None


def reduce(functor: Any) -> Reduce:
    """``@cuda.reduce``: see ``Reduce``."""
    return Reduce(functor)
