"""gpukern: GPU kernels written as restricted Python, compiled to CUDA C and OpenCL C.

import gpukern as gk

@gk.kernel
def add(a: gk.Array[gk.float32], b: gk.Array[gk.float32], out: gk.Array[gk.float32], n: gk.int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = a[i] + b[i]

add[blocks, threads](a, b, out, n)
"""

from __future__ import annotations

from . import testing  # test helpers; Hypothesis is imported only when they are used
from ._version import __version__
from .array import DeviceArray
from .autotune import autotune
from .backends import available_backends, empty, get_backend, set_backend, to_device, zeros
from .cache import cache_info, clear_cache
from .errors import (
    BackendError,
    BarrierDivergenceError,
    CompileError,
    DataRaceError,
    GpukernError,
    IndexOverflowError,
    KernelFault,
    KernelSyntaxError,
    KernelTypeError,
    LaunchError,
    MisalignedAccessError,
    OutOfBoundsError,
    UninitializedReadError,
)
from .kernel import Kernel, kernel
from .lang import (
    DeviceFunction,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_dec,
    atomic_exch,
    atomic_inc,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_sub,
    atomic_xor,
    barrier,
    block_dim,
    block_idx,
    brev,
    clz,
    dynamic_shared,
    exp10,
    ffs,
    fma,
    func,
    global_id,
    grid_dim,
    launch_bounds,
    local,
    popc,
    rsqrt,
    shared,
    superstep,
    thread_idx,
    threadfence,
    threadfence_block,
    threadfence_system,
    unroll,
    vload,
    vstore,
)
from .profile import ProfileReport, profile
from .sanitize import sanitize
from .timing import benchmark, synchronize
from .types import Array, Const, bool_, float32, float64, int32, int64, uint32

__all__ = [
    "__version__",
    "Array",
    "BackendError",
    "BarrierDivergenceError",
    "CompileError",
    "DataRaceError",
    "OutOfBoundsError",
    "UninitializedReadError",
    "IndexOverflowError",
    "ProfileReport",
    "profile",
    "sanitize",
    "Const",
    "DeviceArray",
    "DeviceFunction",
    "GpukernError",
    "Kernel",
    "KernelFault",
    "KernelSyntaxError",
    "KernelTypeError",
    "LaunchError",
    "MisalignedAccessError",
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_dec",
    "atomic_exch",
    "atomic_inc",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_sub",
    "atomic_xor",
    "autotune",
    "available_backends",
    "barrier",
    "benchmark",
    "cache_info",
    "clear_cache",
    "block_dim",
    "block_idx",
    "bool_",
    "brev",
    "clz",
    "empty",
    "exp10",
    "ffs",
    "fma",
    "float32",
    "float64",
    "func",
    "get_backend",
    "global_id",
    "grid_dim",
    "int32",
    "int64",
    "kernel",
    "launch_bounds",
    "local",
    "popc",
    "rsqrt",
    "set_backend",
    "shared",
    "superstep",
    "synchronize",
    "testing",
    "thread_idx",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "to_device",
    "uint32",
    "unroll",
    "vload",
    "vstore",
    "zeros",
]

# shared memory sized at launch and record dtypes (issue 14)
__all__ += ["dynamic_shared"]
