"""Shared fixtures: the backends to run on, and the CUDA check of every kernel.

Every kernel variant a test compiles also has its CUDA C compiled for sm_90 after the test
by NVRTC and by nvcc (each where it is found; where both are, nvcc takes the eighth of the
variants whose source hash starts with 0 or 1, since each nvcc run is a process), so the CUDA
dialect is checked with both compilers on machines without a GPU.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile

import pytest
from hypothesis import settings

import gpukern as gk
from gpukern.backends import nvrtc
from gpukern.backends.cuda_compile import cubin, kernel_arch
from gpukern.kernel import iter_kernels

# A fresh binary cache for the session, so tests neither use nor litter the user's; removed when
# the process that made it ends (xdist's workers and the tests' subprocesses inherit it)
if "GPUKERN_CACHE_DIR" not in os.environ:
    os.environ["GPUKERN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpukern-test-cache-")
    atexit.register(shutil.rmtree, os.environ["GPUKERN_CACHE_DIR"], ignore_errors=True)

RUNTIME_BACKENDS = gk.available_backends()

from compilers import COMPILERS, LIB  # noqa: E402 - after the cache directory is chosen

if LIB is None and os.environ.get("GPUKERN_REQUIRE_NVRTC") == "1":
    raise pytest.UsageError(f"GPUKERN_REQUIRE_NVRTC=1 but NVRTC is {nvrtc.why_not()}")

# In CI, property tests and the fuzzer draw the same examples every run (a failure there is
# then reproducible, and a landing never depends on luck); elsewhere they explore afresh.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

if os.environ.get("GPUKERN_REQUIRE_OPENCL") == "1" and "opencl" not in RUNTIME_BACKENDS:
    raise pytest.UsageError("GPUKERN_REQUIRE_OPENCL=1 but no OpenCL device was found (install pocl-opencl-icd)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped cleanly without one)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "cuda" in RUNTIME_BACKENDS:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=RUNTIME_BACKENDS or [pytest.param(None, marks=pytest.mark.skip(reason="no backend"))])
def backend(request: pytest.FixtureRequest):
    """Run the test once per runtime backend available here, with it selected."""
    gk.set_backend(request.param)
    try:
        yield request.param
    finally:
        gk.set_backend(None)


@pytest.fixture
def on_simulator():
    """Run the test with the simulator selected (its checks are what the test is about)."""
    gk.set_backend("sim")
    try:
        yield
    finally:
        gk.set_backend(None)


_CUDA_COMPILERS = COMPILERS
_compiled: set[str] = set()
_SOURCES = os.environ.get("GPUKERN_SOURCES")
_dialects_written: set[int] = set()


def _write_dialect_sources() -> None:
    """Each new variant's HIP C++ generated (a dialect's refusal is a ``gk.GpukernError``; anything
    else fails the test), and, where GPUKERN_SOURCES names a folder, its HIP C++ and OpenCL C kept
    there (``hip/``, ``opencl/``) for scripts/hip_check.py and scripts/opencl_check.py."""
    for k in iter_kernels():
        for variant in list(k.variants.values()):
            if id(variant) in _dialects_written or variant.program.lanes != 32:  # (wave64: the simulator's only)
                continue
            _dialects_written.add(id(variant))
            for dialect, ext in (("hip", "hip"), ("opencl", "cl")):
                if dialect != "hip" and not _SOURCES:
                    continue
                try:
                    src = variant.source(dialect, line_directives=True)
                except gk.GpukernError as e:  # a refusal (a matrix unit the dialect does not write)
                    src = "// refused: " + str(e).replace("\n", "\n// ")
                if _SOURCES:
                    folder = os.path.join(_SOURCES, dialect)
                    os.makedirs(folder, exist_ok=True)
                    name = hashlib.sha256(src.encode()).hexdigest()[:20]
                    with open(os.path.join(folder, f"{name}.{ext}"), "w") as f:
                        f.write(src)


@pytest.fixture(autouse=True)
def _cuda_source_compiles():
    """After each test, compile the CUDA C of every kernel variant not yet checked, with each compiler."""
    yield
    _write_dialect_sources()
    if not _CUDA_COMPILERS:
        return
    for k in iter_kernels():
        for variant in list(k.variants.values()):
            if variant.program.lanes != 32:  # a variant of the simulator's 64-lane wavefronts: no C for it
                continue
            src = variant.source("cuda", line_directives=True)
            digest = hashlib.sha256(src.encode()).hexdigest()
            if digest not in _compiled:
                _compiled.add(digest)  # report a failure once, in the test that made the variant
                for compiler in _CUDA_COMPILERS:  # through the binary cache: free where the backend compiled it
                    if compiler == "nvcc" and len(_CUDA_COMPILERS) > 1 and digest[0] not in "01":
                        continue  # with NVRTC checking every variant, nvcc (a process each) checks a fixed eighth
                    arch = kernel_arch("sm_90", variant.matrix_capability)
                    cubin(src, arch, variant.options.flags("cuda"), compiler=compiler)
