"""CUDA C: the dialect table, and compiling generated source with nvcc.

Running CUDA kernels (through PyCUDA) comes with the CUDA runtime issue; today
this module generates CUDA C and checks it with ``nvcc -cubin``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ..errors import BackendError
from ..types import bool_, float32, float64, int32, int64, uint32
from .c import Dialect

_I = ("int32", "uint32")

CUDA = Dialect(
    name="cuda",
    kernel_prefix='extern "C" __global__',
    func_prefix="static __device__ inline ",
    types={bool_: "bool", int32: "int", uint32: "unsigned int", int64: "long long", float32: "float", float64: "double"},
    storage_types={},
    global_ptr="{const}{T}* __restrict__ {name}",
    qualifiers={"shared": "__shared__ ", "local": ""},
    barrier="__syncthreads();",
    specials={
        "thread_idx": "threadIdx.{c}", "block_idx": "blockIdx.{c}", "block_dim": "blockDim.{c}",
        "grid_dim": "gridDim.{c}", "global_id": "(blockIdx.{c} * blockDim.{c} + threadIdx.{c})",
    },
    int_suffix={int64: "LL", uint32: "u"},
    float_specials={
        ("inf", float32): "__int_as_float(0x7f800000)", ("nan", float32): "__int_as_float(0x7fc00000)",
        ("inf", float64): "__longlong_as_double(0x7ff0000000000000LL)",
        ("nan", float64): "__longlong_as_double(0x7ff8000000000000LL)",
    },
    math={
        ("*", "float32"): "{name}f({args})", ("*", "*"): "{name}({args})",
        ("abs", "int32"): "abs({0})", ("abs", "int64"): "llabs({0})", ("abs", "uint32"): "{0}",
        ("abs", "float32"): "fabsf({0})", ("abs", "float64"): "fabs({0})",
        ("min", "*"): "min({0}, {1})", ("max", "*"): "max({0}, {1})",
        ("isnan", "*"): "isnan({0})", ("isinf", "*"): "isinf({0})", ("isfinite", "*"): "isfinite({0})",
    },
    native_atomics={
        **{("add", t): "atomicAdd({p}, {0})" for t in _I + ("float32",)},
        **{("sub", t): "atomicSub({p}, {0})" for t in _I},
        ("sub", "float32"): "atomicAdd({p}, -({0}))",
        **{("min", t): "atomicMin({p}, {0})" for t in _I},
        **{("max", t): "atomicMax({p}, {0})" for t in _I},
        **{("exch", t): "atomicExch({p}, {0})" for t in _I + ("float32",)},
        ("cas", "int32"): "atomicCAS({p}, {0}, {1})", ("cas", "uint32"): "atomicCAS({p}, {0}, {1})",
    },
    bits={float32: ("__float_as_uint", "__uint_as_float")},
)


def find_nvcc() -> str | None:
    """Path of nvcc: ``$CUDA_HOME/bin/nvcc`` or the one on PATH."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc")


def nvcc_compile(source: str, arch: str = "sm_90", options: tuple[str, ...] = ()) -> bytes:
    """Compile CUDA C to a cubin for ``arch``; raises BackendError with nvcc's output."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise BackendError("nvcc was not found; install the CUDA toolkit or set CUDA_HOME")
    with tempfile.TemporaryDirectory(prefix="gpukern-") as tmp:
        src = os.path.join(tmp, "kernel.cu")
        out = os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", *options, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BackendError(f"nvcc failed ({' '.join(cmd)}):\n{proc.stderr}{proc.stdout}\n--- source ---\n{source}")
        with open(out, "rb") as f:
            return f.read()


class CUDABackend:
    """Placeholder until kernels launch through PyCUDA: says why CUDA cannot run."""

    name = "cuda"
    dialect = CUDA

    def __init__(self) -> None:
        try:
            import pycuda.driver  # noqa: F401
        except ImportError:
            raise BackendError("pycuda is not installed (pip install 'gpukern[cuda]')") from None
        raise BackendError(
            "launching CUDA kernels through PyCUDA is not implemented in this version; "
            "generate CUDA C with kernel.source(..., backend='cuda') or use the opencl backend"
        )
