"""Numba-CUDA programs on gpukern: change ``from numba import cuda`` to ``from gpukern.numba import cuda``.

The layer is names only: each Numba name is an entry that points at gpukern's one definition of the
intrinsic, type or host call (``cuda.syncthreads`` is ``gk.barrier``, ``cuda.atomic.add`` is
``gk.atomic_add``, ``numba.float32`` is ``gk.float32``), or a small class that reorders arguments
onto it (``cuda.shared.array(shape, dtype)``).  A kernel compiled through it is a ``gk.Kernel``: it
runs on CUDA, OpenCL and the simulator, whose checks (races, uninitialised reads, out-of-bounds
accesses, divergent barriers) are the sanitizer Numba's simulator never had.  What differs from Numba
is listed in docs/numba.md.

Layer: with ``tools``, the top; it imports the face and the layers below, and nothing imports it.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from .. import errors as _errors
from ..language.compat import Identity, RangeLike
from ..language.core import func
from . import api as cuda
from . import random as _random
from . import types
from .gufunc import guvectorize
from .types import (
    b1,
    bool_,
    boolean,
    complex64,
    complex128,
    f2,
    f4,
    f8,
    float16,
    float32,
    float64,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intp,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)
from .vectorize import vectorize

# ``gpukern.numba.cuda`` is a name, not a file: numba-cuda's import redirector (installed with it)
# takes every module name containing "numba.cuda" for its own and recurses on ours; a module found
# in sys.modules is never looked for
sys.modules[f"{__name__}.cuda"] = cuda
sys.modules[f"{__name__}.cuda.compiler"] = cuda.compiler = ModuleType(f"{__name__}.cuda.compiler", "compile_ptx")
cuda.compiler.compile_ptx = cuda.compile_ptx
cuda.compiler.compile_ptx_for_current_device = cuda.compile_ptx_for_current_device
cuda.api = cuda  # (numba.cuda.api: where numba.cuda's host functions are defined, external_stream among them)
sys.modules[f"{__name__}.cuda.random"] = cuda.random = _random
sys.modules[f"{__name__}.cuda.cudadrv"] = _cudadrv = ModuleType(f"{__name__}.cuda.cudadrv", "numba.cuda.cudadrv")
_cudadrv.devicearray = sys.modules[f"{__name__}.cuda.cudadrv.devicearray"] = cuda.devicearray
# ``import numba.cuda.fp16``: namespaces of the cuda module
for _name in ("fp16", "libdevice", "cg", "config", "devicearray"):
    sys.modules[f"{__name__}.cuda.{_name}"] = getattr(cuda, _name)
# numba.np.numpy_support (numba.cuda.np.numpy_support): from_dtype, as_dtype
_np = ModuleType(f"{__name__}.np", "numba.np's names programs import")
_np.numpy_support = ModuleType(f"{__name__}.np.numpy_support", "from_dtype and as_dtype")
_np.numpy_support.from_dtype, _np.numpy_support.as_dtype = types.from_dtype, types.as_dtype
for _base in (__name__, f"{__name__}.cuda"):
    sys.modules[f"{_base}.np"], sys.modules[f"{_base}.np.numpy_support"] = _np, _np.numpy_support
sys.modules[f"{__name__}.cuda.types"] = types  # numba.cuda.types: the same names as numba.types
# numba.core.types: where Numba defines them (programs import f2, the half type, from there)
sys.modules[f"{__name__}.core"] = core = ModuleType(f"{__name__}.core", "numba.core's names programs import")
sys.modules[f"{__name__}.core.types"] = core.types = types
# numba.core.errors (numba.cuda.core.errors): a program that expects a typing error catches gpukern's
core.errors = ModuleType(f"{__name__}.core.errors", "numba.core.errors' names: gpukern's errors")
core.errors.TypingError = core.errors.NumbaError = _errors.KernelTypeError
core.errors.NumbaValueError = core.errors.UnsupportedError = _errors.CompileError
sys.modules[f"{__name__}.core.errors"] = sys.modules[f"{__name__}.cuda.core.errors"] = core.errors
sys.modules[f"{__name__}.cuda.core"] = core


def jit(fn: Any = None, **options: Any) -> Any:
    """``numba.jit`` / ``numba.njit``: a function a kernel calls is a device function, as in Numba;
    called from the host it is the Python function itself (options and signatures change nothing)."""
    if fn is None or isinstance(fn, (str, tuple, list)):
        return lambda f: func(f)
    return func(fn)


njit = jit
prange = RangeLike("numba.prange")  # (a kernel's loop over it is a range loop; on the host, range)
literal_unroll = Identity("literal_unroll", "literal_unroll(t): t (a loop over a tuple is unrolled)")
config = cuda.config
errors = core.errors
from_dtype = types.from_dtype

__all__ = [
    "cuda",
    "jit",
    "njit",
    "prange",
    "literal_unroll",
    "config",
    "errors",
    "from_dtype",
    "types",
    "vectorize",
    "guvectorize",
    "b1",
    "boolean",
    "bool_",
    "complex64",
    "complex128",
    "f2",
    "f4",
    "f8",
    "float16",
    "float32",
    "float64",
    "i1",
    "i2",
    "i4",
    "i8",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "u1",
    "u2",
    "u4",
    "u8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintp",
    "void",
]
