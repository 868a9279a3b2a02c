"""The names a kernel uses: thread geometry, memory, barriers, atomics.

These are markers.  The front end recognises them by identity when it resolves a
name, whatever the user imported them as (``gk.barrier``, ``from gpukern import
barrier as sync``).  Called from ordinary Python they say they only work inside
a kernel, rather than doing something wrong quietly.
"""

from __future__ import annotations

from typing import Any

from .errors import GpukernError


class Intrinsic:
    """A function that exists only inside kernels; ``name`` selects its lowering."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise GpukernError(f"{self.name}() can only be used inside a @kernel or @func")

    def __repr__(self) -> str:
        return f"<gpukern intrinsic {self.name}>"


class KernelObject:
    """Base of ``@kernel`` objects: device code can tell it was handed a kernel (which it may
    not call) without the front end importing the kernel layer above it."""


class Dim3:
    """A thread-geometry vector with ``.x``, ``.y``, ``.z`` (``thread_idx`` etc.)."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc

    def __getattr__(self, attr: str) -> Any:
        if attr in ("x", "y", "z"):
            raise GpukernError(f"{self.name}.{attr} can only be used inside a @kernel or @func")
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"<gpukern {self.name}>"


thread_idx = Dim3("thread_idx", "Index of the thread within its block (CUDA threadIdx).")
block_idx = Dim3("block_idx", "Index of the block within the grid (CUDA blockIdx).")
block_dim = Dim3("block_dim", "Threads per block along each dimension (CUDA blockDim).")
grid_dim = Dim3("grid_dim", "Blocks in the grid along each dimension (CUDA gridDim).")

global_id = Intrinsic("global_id", "global_id(d): block_idx[d] * block_dim[d] + thread_idx[d].")
barrier = Intrinsic("barrier", "barrier(): every thread of the block waits here; shared memory is then consistent.")
shared = Intrinsic("shared", "shared(dtype, shape): an array shared by the threads of a block; shape is compile-time.")
local = Intrinsic("local", "local(dtype, shape): a per-thread array (registers or private memory).")
superstep = Intrinsic("superstep", "with superstep(): ... runs its body and then a barrier (bulk-synchronous style).")

unroll = Intrinsic(
    "unroll",
    "for i in unroll(range(...)): the loop is repeated at compile time, once per value of i, which is then "
    "a constant in each copy (bounds must be compile-time; local arrays indexed by i stay in registers).",
)
vload = Intrinsic(
    "vload",
    "vload(a, i, n): the n (2 or 4) elements a[i], a[i+1]... in one access (float4 and the like), as a tuple; "
    "i (the last index) must be a multiple of n.",
)
vstore = Intrinsic(
    "vstore",
    "vstore(a, i, (x, y, ...)): store 2 or 4 values to a[i], a[i+1]... in one access; i must be a multiple of n.",
)
launch_bounds = Intrinsic(
    "launch_bounds",
    "launch_bounds(max_threads[, min_blocks]): the kernel is never launched with more threads per block "
    "(CUDA __launch_bounds__: lets the compiler budget registers); larger launches are refused.",
)

atomic_add = Intrinsic("atomic_add", "atomic_add(a, i, v): a[i] += v atomically; returns the old value.")
atomic_sub = Intrinsic("atomic_sub", "atomic_sub(a, i, v): a[i] -= v atomically; returns the old value.")
atomic_min = Intrinsic("atomic_min", "atomic_min(a, i, v): a[i] = min(a[i], v) atomically; returns the old value.")
atomic_max = Intrinsic("atomic_max", "atomic_max(a, i, v): a[i] = max(a[i], v) atomically; returns the old value.")
atomic_exch = Intrinsic("atomic_exch", "atomic_exch(a, i, v): a[i] = v atomically; returns the old value.")
atomic_cas = Intrinsic(
    "atomic_cas", "atomic_cas(a, i, cmp, v): if a[i] == cmp then a[i] = v, atomically; returns the old value."
)

ATOMICS = {f.name: f for f in (atomic_add, atomic_sub, atomic_min, atomic_max, atomic_exch, atomic_cas)}
