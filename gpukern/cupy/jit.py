"""``cupyx.jit`` names over gpukern's definitions, and ``rawkernel`` with CuPy's launch spelling."""

from __future__ import annotations

from typing import Any

from ..errors import KernelTypeError, LaunchError
from ..kernel import Kernel
from ..kernel import kernel as _kernel
from ..language import core as _lang
from ..language import warp as _warp
from ..language.compat import Grid, GridSize, Group, Namespace, RangeLike, SharedMemory

threadIdx = _lang.thread_idx
blockIdx = _lang.block_idx
blockDim = _lang.block_dim
gridDim = _lang.grid_dim
grid = Grid("grid", "jit.grid(ndim): the thread's absolute position")
gridsize = GridSize("gridsize", "jit.gridsize(ndim): the grid's threads along each dimension")
laneid = _warp.lane_id
warpsize = _lang.Property("warpsize", _warp.warp_size)

range = RangeLike("jit.range")  # noqa: A001 - CuPy's name
cg = Namespace("cg", this_grid=Group("this_grid", grid=True), this_thread_block=Group("this_thread_block", grid=False))
syncthreads = _lang.barrier
syncwarp = _warp.syncwarp
shfl_sync = _warp.shfl_sync
shfl_up_sync = _warp.shfl_up_sync
shfl_down_sync = _warp.shfl_down_sync
shfl_xor_sync = _warp.shfl_xor_sync
activemask = _warp.activemask
match_any_sync = _warp.match_any
match_all_sync = _warp.match_all  # (the pair CuPy's returns: the matching lanes, whether all match)
popc = _lang.popc
ffs = _lang.ffs

atomic_add = _lang.atomic_add
atomic_sub = _lang.atomic_sub
atomic_exch = _lang.atomic_exch
atomic_min = _lang.atomic_min
atomic_max = _lang.atomic_max
atomic_inc = _lang.atomic_inc
atomic_dec = _lang.atomic_dec
atomic_cas = _lang.atomic_cas
atomic_and = _lang.atomic_and
atomic_or = _lang.atomic_or
atomic_xor = _lang.atomic_xor


shared_memory = SharedMemory("shared_memory", "jit.shared_memory(dtype, size): a shared array")


class RawKernel:
    """A ``@jit.rawkernel()`` kernel: ``k((grid,), (block,), (args...), shared_mem=0, stream=None)``
    as CuPy launches it, or ``k[grid, block](args...)``; the ``gk.Kernel`` is ``.kernel``."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.__name__ = kernel.__name__
        self.__doc__ = kernel.__doc__

    def __call__(self, grid: Any, block: Any, args: Any, *, shared_mem: int = 0, stream: Any = None) -> None:
        if not isinstance(args, tuple):
            raise LaunchError(f"{self.__name__}(grid, block, args): args must be a tuple of the kernel's arguments")
        if shared_mem or stream is not None:
            self.kernel[grid, block, stream, shared_mem](*args)
        else:
            self.kernel[grid, block](*args)

    def __getitem__(self, config: Any) -> Any:
        return self.kernel[config]

    def source(self, *args: Any, **kwargs: Any) -> str:
        return self.kernel.source(*args, **kwargs)


def rawkernel(*, mode: str = "cuda", device: bool = False) -> Any:
    """``@jit.rawkernel()``: a kernel specialised at each launch on its arguments' types, whose stores
    convert and whose bools count as CuPy's C++ does (compile options ``casting="unsafe"``,
    ``bools="python"``, ``unbound="check"``; a negative index is out of bounds, as in CuPy's C++
    arrays), or with
    ``device=True`` a ``@gk.func``."""
    if mode != "cuda":
        raise KernelTypeError(f"jit.rawkernel(mode={mode!r}): gpukern compiles the 'cuda' mode's kernels only")

    def make(fn: Any) -> Any:
        rules = {"casting": "unsafe", "bools": "python", "unbound": "check", "literals": "wide"}
        return _lang.func(fn) if device else RawKernel(_kernel(**rules)(fn))

    return make
