"""Ahead-of-time export (issue 36): a kernel's C header and source, built into a C program that runs
it with no Python, gives what gpukern's own launch gives on the same device.

OpenCL: built with the system's C compiler against the OpenCL headers and run on PoCL (skipped
where either is missing; ``.ci/run`` installs them and sets ``GPUKERN_REQUIRE_EXPORT=1``).  CUDA:
on the GPU machine, against the toolkit's ``cuda.h`` and the driver (``gpu`` marker)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, Const, bool_, float16, float32, int32, uint8
from gpukern.tools.export import export

CC = shutil.which("cc") or shutil.which("gcc")
CL_HEADERS = any(Path(p, "CL", "cl.h").exists() for p in ("/usr/include", "/usr/local/include"))
if os.environ.get("GPUKERN_REQUIRE_EXPORT") == "1" and not (CC and CL_HEADERS):
    raise pytest.UsageError("GPUKERN_REQUIRE_EXPORT=1 but a C compiler or the OpenCL headers are missing")
needs_c_opencl = pytest.mark.skipif(
    not (CC and CL_HEADERS and "opencl" in gk.available_backends()),
    reason="needs a C compiler, the OpenCL headers (apt-get install ocl-icd-opencl-dev) and an OpenCL device",
)
ROWS, COLS = 5, 37  # not multiples of the block: the kernel's guard matters


@gk.kernel
def blend(a: float32, x: Array[float32], y: Array[float32, 2], on: bool_, h: float16, k: uint8, SHIFT: Const[int]):
    i = gk.global_id(0)
    j = gk.global_id(1)
    if on and j < y.shape[0] and i < y.shape[1]:
        y[j, i] = a * x[(i + SHIFT) % x.shape[0]] + y[j, i] + h * k


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    """The same data the C program makes: x[i] = 0.5 i - 3, y[j, i] = j - 0.25 i."""
    x = (0.5 * np.arange(COLS) - 3).astype(np.float32)
    y = (np.arange(ROWS)[:, None] - 0.25 * np.arange(COLS)).astype(np.float32)
    return x, y


MAIN_OPENCL = r"""
#include <stdio.h>
#include <stdlib.h>
#include "gk_blend.h"

#define ROWS %(rows)d
#define COLS %(cols)d
#define CHECK(e) do { cl_int rc_ = (e); \
    if (rc_ != CL_SUCCESS) { fprintf(stderr, "%%s: %%d\n", #e, rc_); return 1; } } while (0)

int main(void)
{
    cl_platform_id platforms[8];
    cl_uint n_platforms = 0, p;
    cl_device_id dev = NULL;
    cl_int err;
    float x[COLS], y[ROWS * COLS];
    int i, j;
    CHECK(clGetPlatformIDs(8, platforms, &n_platforms));
    for (p = 0; p < n_platforms && dev == NULL; p++) {
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
    }
    if (dev == NULL) { fprintf(stderr, "no OpenCL device\n"); return 1; }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    for (i = 0; i < COLS; i++) x[i] = 0.5f * (float)i - 3.0f;
    for (j = 0; j < ROWS; j++) for (i = 0; i < COLS; i++) y[j * COLS + i] = (float)j - 0.25f * (float)i;
    cl_mem dx = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    CHECK(err);
    cl_mem dy = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &err);
    CHECK(err);
    const size_t block[3] = {8, 2, 1};
    const size_t grid[3] = {(COLS + 7) / 8, (ROWS + 1) / 2, 1};
    CHECK(gk_blend_launch(queue, grid, block, 1.5f, dx, COLS, dy, ROWS, COLS, true, 0.1f, 3));
    /* on = false: no change */
    CHECK(gk_blend_launch(queue, grid, block, 1.5f, dx, COLS, dy, ROWS, COLS, false, 0.1f, 3));
    CHECK(clEnqueueReadBuffer(queue, dy, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    for (i = 0; i < ROWS * COLS; i++) printf("%%.9g\n", y[i]);
    return 0;
}
"""


def _build_and_run(tmp: Path, main: str, libs: list[str], includes: list[str]) -> np.ndarray:
    (tmp / "main.c").write_text(main)
    exe = tmp / "blend"
    build = subprocess.run(
        [CC, "-std=c99", "-Wall", "-Wextra", "-Werror", *includes, str(tmp / "main.c"), str(tmp / "gk_blend.c"),
         "-o", str(exe), *libs],
        capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return np.array([float(v) for v in run.stdout.split()], np.float32).reshape(ROWS, COLS)


def _gpukern_result(backend: str) -> np.ndarray:
    x, y = _inputs()
    with gk.Device(0, backend):
        blend[gk.grid_for((ROWS, COLS), (8, 2)), (8, 2)](np.float32(1.5), x, y, True, 0.1, 3, 4)
    return y


@needs_c_opencl
def test_an_opencl_export_runs_from_c_as_gpukern_runs_it(tmp_path):
    files = export(blend, float32, Array[float32], Array[float32, 2], bool_, float16, uint8, 4, out=tmp_path,
                   backend="opencl")  # fmt: skip
    assert [f.name for f in files] == ["gk_blend.h", "gk_blend.c"]
    header = files[0].read_text()
    assert (
        "cl_int gk_blend_launch(cl_command_queue queue, const size_t grid[3], const size_t block[3], float a, "
        "cl_mem x, int64_t x_shape0, cl_mem y, int64_t y_shape0, int64_t y_shape1, bool on, float h, uint8_t k)"
    ) in header
    got = _build_and_run(tmp_path, MAIN_OPENCL % {"rows": ROWS, "cols": COLS}, ["-lOpenCL"], [f"-I{tmp_path}"])
    want = _gpukern_result("opencl")
    x, y = _inputs()
    assert not np.array_equal(want, y)  # the kernel changed y: the comparison means something
    np.testing.assert_array_equal(got, want)


def test_the_cli_writes_the_files_and_refuses_what_export_cannot_take(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(
        "import gpukern as gk\n\n@gk.kernel\ndef twice(a: gk.Array[gk.float32], n: gk.int32):\n"
        "    i = gk.global_id(0)\n    if i < n:\n        a[i] *= 2\n\n"
        "@gk.kernel\ndef dyn(out: gk.Array[gk.float32]):\n    s = gk.dynamic_shared(gk.float32)\n"
        "    s[0] = 1.0\n    out[0] = s[0]\n"
    )
    cli = [sys.executable, "-m", "gpukern", "export"]
    made = subprocess.run([*cli, f"{f}:twice", "--backend", "opencl", "-o", str(tmp_path / "out")],
                          capture_output=True, text=True)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "out" / "gk_twice.h").exists() and "wrote" in made.stdout
    assert '"__kernel void twice(' in (tmp_path / "out" / "gk_twice.c").read_text()
    dynamic = subprocess.run([*cli, f"{f}:dyn", "--backend", "opencl", "-o", str(tmp_path / "out")],
                             capture_output=True, text=True)  # fmt: skip
    assert dynamic.returncode != 0 and "dynamic_shared" in dynamic.stderr

    @gk.kernel
    def pairs(t, out: Array[float32]):
        out[0] = t[0] + t[1]

    with pytest.raises(gk.CompileError, match="tuple argument; pass its items"):
        export(pairs, (np.float32(1), np.float32(2)), Array[float32], out=tmp_path)
    with pytest.raises(gk.LaunchError, match="'cuda', 'opencl' or 'hip'"):
        export(blend, float32, Array[float32], Array[float32, 2], bool_, float16, uint8, 4, backend="metal")


def test_a_cuda_export_embeds_a_cubin_per_architecture(tmp_path):
    from compilers import LIB

    if LIB is None:
        pytest.skip("NVRTC is not installed")
    h, c = export(blend, float32, Array[float32], Array[float32, 2], bool_, float16, uint8, 4, backend="cuda",
                  out=tmp_path, archs=("sm_80", "sm_90"))  # fmt: skip
    text = c.read_text()
    assert "static const unsigned char gk_cubin_sm_80[]" in text
    assert "static const unsigned char gk_cubin_sm_90[]" in text
    assert "{80, gk_cubin_sm_80}, {90, gk_cubin_sm_90}" in text and ".target sm_90" in text  # the PTX
    assert "gk_half_round(h)" in text
    assert "CUresult gk_blend_launch(CUstream stream, const unsigned int grid[3], const unsigned int block[3]" in (
        h.read_text()
    )
    include = _cuda_include()
    if CC is not None and include is not None:  # a machine with the toolkit's cuda.h: the C compiles cleanly
        built = subprocess.run(
            [CC, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{include}", "-c", str(c), "-o", str(tmp_path / "c.o")],
            capture_output=True, text=True,
        )  # fmt: skip
        assert built.returncode == 0, built.stderr


def _cuda_include() -> str | None:
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and Path(home, "include", "cuda.h").exists():
            return str(Path(home, "include"))
    return None


MAIN_CUDA = r"""
#include <stdio.h>
#include "gk_blend.h"

#define ROWS %(rows)d
#define COLS %(cols)d
#define CHECK(e) do { CUresult rc_ = (e); \
    if (rc_ != CUDA_SUCCESS) { fprintf(stderr, "%%s: %%d\n", #e, (int)rc_); return 1; } } while (0)

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr dx, dy;
    float x[COLS], y[ROWS * COLS];
    int i, j;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    for (i = 0; i < COLS; i++) x[i] = 0.5f * (float)i - 3.0f;
    for (j = 0; j < ROWS; j++) for (i = 0; i < COLS; i++) y[j * COLS + i] = (float)j - 0.25f * (float)i;
    CHECK(cuMemAlloc(&dx, sizeof x));
    CHECK(cuMemAlloc(&dy, sizeof y));
    CHECK(cuMemcpyHtoD(dx, x, sizeof x));
    CHECK(cuMemcpyHtoD(dy, y, sizeof y));
    const unsigned int block[3] = {8, 2, 1};
    const unsigned int grid[3] = {(COLS + 7) / 8, (ROWS + 1) / 2, 1};
    CHECK(gk_blend_launch(0, grid, block, 1.5f, dx, COLS, dy, ROWS, COLS, true, 0.1f, 3));
    CHECK(gk_blend_launch(0, grid, block, 1.5f, dx, COLS, dy, ROWS, COLS, false, 0.1f, 3));
    CHECK(cuMemcpyDtoH(y, dy, sizeof y));
    for (i = 0; i < ROWS * COLS; i++) printf("%%.9g\n", y[i]);
    return 0;
}
"""


@pytest.mark.gpu
def test_a_cuda_export_runs_from_c_as_gpukern_runs_it(tmp_path):
    include = _cuda_include()
    if CC is None or include is None:
        pytest.skip("needs a C compiler and the CUDA toolkit's cuda.h")
    export(blend, float32, Array[float32], Array[float32, 2], bool_, float16, uint8, 4, backend="cuda",
           out=tmp_path)  # fmt: skip
    main = MAIN_CUDA % {"rows": ROWS, "cols": COLS}
    got = _build_and_run(tmp_path, main, ["-lcuda"], [f"-I{tmp_path}", f"-I{include}"])
    np.testing.assert_array_equal(got, _gpukern_result("cuda"))


HIP_HEADERS = Path("/usr/include/hip/hip_runtime_api.h").exists() or Path("/opt/rocm/include/hip").exists()


@pytest.mark.skipif(not (CC and HIP_HEADERS and shutil.which("hipcc")), reason="needs hipcc, the HIP headers and cc")
def test_a_hip_export_bundles_the_targets_and_builds_against_rocm(tmp_path):
    """The HIP export: one code object bundle for the named gfx targets inside the C, and a launch
    function that compiles (``-Werror``) against ROCm's headers and links with ``libamdhip64``; not
    run: no AMD GPU here."""
    h, c = export(blend, float32, Array[float32], Array[float32, 2], bool_, float16, uint8, 4, backend="hip",
                  out=tmp_path, archs=("gfx90a", "gfx1030"))  # fmt: skip
    assert "hipError_t gk_blend_launch(hipStream_t stream, const unsigned int grid[3]" in h.read_text()
    text = c.read_text()
    array = text.split("gk_bundle[] = {", 1)[1].split("};")[0]
    bundle = bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", array))
    assert bundle.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    assert b"amdgcn-amd-amdhsa--gfx90a" in bundle and b"amdgcn-amd-amdhsa--gfx1030" in bundle
    main = tmp_path / "main.c"
    main.write_text('#include "gk_blend.h"\nint main(void) { return hipGetDevice(&(int){0}) == hipSuccess ? 0 : 0; }\n')
    built = subprocess.run(
        [CC, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path}", str(main), str(c), "-o", str(tmp_path / "m"),
         "-lamdhip64"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr


def test_export_refuses_a_kernel_that_is_not_one():
    with pytest.raises(gk.LaunchError, match="@gk.kernel"):
        export(lambda a: a, int32)


def test_export_refuses_a_kernel_that_copies_with_tma():
    """A TMA descriptor is made at launch by the driver: the exported C has no such step."""
    from language.test_hopper import copy_boxes

    with pytest.raises(gk.CompileError, match=r"copies with TMA \(gk.tensor_map"):
        export(copy_boxes, Array[float32, 2], Array[float32, 2], 16, 32)
