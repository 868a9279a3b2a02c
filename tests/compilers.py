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


def need_sm90(backend: str, what: str) -> None:
    """Skip unless ``backend`` runs sm_90's machinery (``what``, for the reason): the simulator, or
    CUDA on an sm_90 GPU; OpenCL refuses it (each file's ``test_other_dialects_refuse``)."""
    if backend == "opencl":
        pytest.skip(f"OpenCL has no {what}")
    if backend == "cuda" and getattr(gk.get_backend(), "arch", None) != "sm_90":
        pytest.skip(f"{what} needs an sm_90 GPU")
