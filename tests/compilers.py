"""The device compilers and OpenCL of this machine, found once for every test module: the skip
marks the tests share, and the CUDA compilers to check generated C with."""

from __future__ import annotations

import pytest

import gpukern as gk
from gpukern.backends import nvrtc
from gpukern.backends.cuda_compile import find_nvcc

LIB = nvrtc.library()  # NVRTC, or None
COMPILERS = [name for name, found in (("nvrtc", LIB), ("nvcc", find_nvcc())) if found]
needs_nvrtc = pytest.mark.skipif(LIB is None, reason=f"NVRTC: {nvrtc.why_not()}")
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
needs_opencl = pytest.mark.skipif("opencl" not in gk.available_backends(), reason="no OpenCL device")
