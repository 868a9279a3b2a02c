"""The HIP dialect (issue 36): HIP C++ for AMD GPUs, its spellings, its 32-lane warps on wave64,
and, where hipcc is installed, code objects for CDNA (wave64) and RDNA (wave32) targets.

Every variant the whole suite compiles is also compiled for AMD in CI (tests/conftest.py writes
the HIP sources, scripts/hip_check.py compiles them); these tests check what that cannot see."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpukern as gk
from gpukern import Array, float16, float32, int32, int64, kernel, uint32

HIPCC = shutil.which("hipcc")
if HIPCC is None and os.environ.get("GPUKERN_REQUIRE_HIPCC") == "1":
    raise pytest.UsageError("GPUKERN_REQUIRE_HIPCC=1 but hipcc is not installed (apt-get install hipcc)")
needs_hipcc = pytest.mark.skipif(HIPCC is None, reason="hipcc is not installed")
ROOT = Path(__file__).resolve().parents[2]


@kernel
def warp_everything(a: Array[float32], h: Array[float16], c: Array[int64], out: Array[uint32]):
    gk.launch_bounds(256, 2)
    i = gk.global_id(0)
    lane = gk.lane_id()
    s = gk.shared(float32, 256)
    s[gk.thread_idx.x] = a[i]
    gk.barrier()
    v = gk.shfl_down_sync(0xFFFFFFFF, s[gk.thread_idx.x], 1)
    w = gk.shfl_xor_sync(0xFFFFFFFF, c[i], 3)
    b = gk.ballot_sync(0xFFFFFFFF, v > 0)
    h[i] = h[i] * h[i] + h[i]
    gk.atomic_max(c, 0, w)
    if gk.all_sync(0xFFFFFFFF, lane < 40):
        out[i] = b + gk.match_any_sync(0xFFFFFFFF, w)


def test_hip_spellings():
    src = warp_everything.source(Array[float32], Array[float16], Array[int64], Array[uint32], backend="hip")
    assert src.splitlines()[1] == "#include <hip/hip_runtime.h>"
    assert "#include <hip/hip_fp16.h>" in src and "cuda_fp16" not in src
    # HIP's second launch bound counts waves per execution unit: only the thread count is given
    assert "__launch_bounds__(256)" in src
    assert "__launch_bounds__(256, 2)" in warp_everything.source(
        Array[float32], Array[float16], Array[int64], Array[uint32], backend="cuda"
    )
    # no CUDA-only names: the *_sync intrinsics, the long long max atomic HIP lacks
    for cuda_only in ("__shfl_down_sync", "__ballot_sync", "__all_sync", "__match_any_sync", "atomicMax((long long"):
        assert cuda_only not in src
    assert "__hadd(" in src and "__hmul(" in src
    assert "__builtin_amdgcn_ds_bpermute" in src  # the shuffles, within the 32-lane half
    assert "atomicCAS" in src  # int64 max as a compare-and-swap loop


def test_the_matrix_units_are_refused_naming_what_is_missing():
    @kernel
    def one_tile(a: Array[gk.float16, 2], b: Array[gk.float16, 2], c: Array[float32, 2]):
        fa = gk.fragment("a", 16, 16, 16, gk.float16, "row")
        fb = gk.fragment("b", 16, 16, 16, gk.float16, "row")
        fc = gk.fragment("accumulator", 16, 16, 16, float32)
        gk.fill_fragment(fc, 0.0)
        gk.load_matrix(fa, a, (0, 0))
        gk.load_matrix(fb, b, (0, 0))
        fc = gk.mma(fa, fb, fc)
        gk.store_matrix(c, (0, 0), fc)

    with pytest.raises(gk.CompileError, match="MFMA"):
        one_tile.source(Array[gk.float16, 2], Array[gk.float16, 2], Array[float32, 2], backend="hip")


def test_gpukern_show_and_check_take_hip(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(
        "import gpukern as gk\n\n@gk.kernel\ndef twice(a: gk.Array[gk.float32], n: gk.int32):\n"
        "    i = gk.global_id(0)\n    if i < n:\n        a[i] *= 2\n"
    )
    cli = [sys.executable, "-m", "gpukern"]
    shown = subprocess.run([*cli, "show", f"{f}:twice", "--backend", "hip"], capture_output=True, text=True)
    assert shown.returncode == 0 and "#include <hip/hip_runtime.h>" in shown.stdout, shown.stderr
    checked = subprocess.run([*cli, "check", str(f), "--backend", "hip"], capture_output=True, text=True)
    assert checked.returncode == 0 and "1 ok" in checked.stdout and "(hip)" in checked.stdout, checked.stdout


@needs_hipcc
def test_hipcc_compiles_for_wave64_and_wave32_targets(tmp_path):
    """The kernel above, and one of each kind of value a shuffle takes, become code objects for
    gfx90a (CDNA, wave64) and gfx1030 (RDNA, wave32) through scripts/hip_check.py."""

    @kernel
    def shuffles(a: Array[gk.int8], b: Array[gk.uint16], c: Array[gk.float64], d: Array[gk.bool_]):
        i = gk.global_id(0)
        a[i] = gk.shfl_sync(0xFFFFFFFF, a[i], 5)
        b[i] = gk.shfl_up_sync(0xFFFFFFFF, b[i], 2, 16)
        c[i] = gk.shfl_sync(0xFFFFFFFF, c[i], 31)
        d[i] = gk.shfl_xor_sync(0xFFFFFFFF, d[i], 1)

    sources = {
        "warps": warp_everything.source(
            Array[float32], Array[float16], Array[int64], Array[uint32], backend="hip", line_directives=True
        ),
        "shuffles": shuffles.source(
            Array[gk.int8], Array[gk.uint16], Array[gk.float64], Array[gk.bool_], backend="hip", line_directives=True
        ),
    }
    for name, src in sources.items():
        (tmp_path / f"{name}.hip").write_text(src)
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "hip_check.py"), str(tmp_path), "--arch", "gfx90a,gfx1030"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 variants compiled for gfx90a, gfx1030" in run.stdout


@needs_hipcc
def test_hip_check_names_a_failing_variant_and_its_line(tmp_path):
    good = warp_everything.source(Array[float32], Array[float16], Array[int64], Array[uint32], backend="hip")
    (tmp_path / "good.hip").write_text(good)
    (tmp_path / "bad.hip").write_text(
        '// Generated by gpukern from demo.py:3 (bad)\n#include <hip/hip_runtime.h>\n'
        'extern "C" __global__ void bad(float* a) { a[0] = undefined_name; }\n'
    )
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "hip_check.py"), str(tmp_path), "--arch", "gfx90a"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "; 1 failed" in run.stdout and "FAILED bad.hip (demo.py:3 (bad))" in run.stdout
    assert "undefined_name" in run.stdout and "FAILED good.hip" not in run.stdout


def test_hip_source_of_every_dtype_and_grid_sync():
    """Each scalar type's element copy, and grid_sync (CUDA's cooperative barrier, which HIP keeps)."""

    @kernel
    def copy(a: Array, b: Array):
        i = gk.global_id(0)
        b[i] = b[i] + b[i]
        a[i] = a[i] + a[i]

    for t in (gk.int8, gk.uint8, gk.int16, gk.uint16, int32, uint32, int64, gk.uint64):
        for f in (float16, gk.bfloat16, float32, gk.float64, gk.complex64, gk.complex128):
            src = copy.source(Array[t], Array[f], backend="hip")
            # a half is stored as its bits there (hip_fp16 has no constexpr __half): read and written so
            assert ("__ushort_as_half(" in src and "__half_as_ushort(" in src) == (f == float16)

    @kernel
    def two_phases(a: Array[float32]):
        i = gk.global_id(0)
        a[i] = 1.0
        gk.grid_sync()
        a[i] += a[(i + 1) % a.shape[0]]

    src = two_phases.source(Array[float32], backend="hip")
    assert "gk_grid_sync();" in src and "__threadfence();" in src  # CUDA's grid barrier, which HIP keeps


@needs_hipcc
def test_show_resources_reads_the_code_objects(tmp_path):
    """``gpukern show --backend hip --resources``: 256 floats of shared memory are 1024 bytes of LDS
    on every target; gfx90a runs wave64, gfx1030 wave32 (the code objects' own metadata)."""
    f = tmp_path / "k.py"
    f.write_text(
        "import gpukern as gk\n\n@gk.kernel\ndef rev(a: gk.Array[gk.float32]):\n"
        "    s = gk.shared(gk.float32, 256)\n    t = gk.thread_idx.x\n    s[t] = a[t]\n    gk.barrier()\n"
        "    a[t] = s[255 - t]\n"
    )
    cli = [sys.executable, "-m", "gpukern", "show", f"{f}:rev", "--backend", "hip", "--resources"]
    run = subprocess.run([*cli, "--arch", "gfx90a,gfx1030"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("// rev: gfx")]
    assert len(lines) == 2
    assert lines[0].startswith("// rev: gfx90a: ") and "1024 bytes LDS" in lines[0] and "wave64" in lines[0]
    assert lines[1].startswith("// rev: gfx1030: ") and "1024 bytes LDS" in lines[1] and "wave32" in lines[1]
    bad = subprocess.run([*cli, "--arch", "sm_90"], capture_output=True, text=True)
    assert bad.returncode != 0 and "not an AMD GPU target" in bad.stderr


def test_resources_parse_each_kernel_of_the_metadata():
    from gpukern.backends.hip_compile import describe, resources

    assembly = "\n".join(
        [
            "; Occupancy: 8",
            "; Occupancy: 5",
            "amdhsa.kernels:",
            "  - .args:",
            "      - .offset:         0",
            "        .size:           8",
            "    .group_segment_fixed_size: 512",
            "    .name:           first",
            "    .private_segment_fixed_size: 16",
            "    .sgpr_count:     20",
            "    .vgpr_count:     40",
            "    .vgpr_spill_count: 2",
            "    .wavefront_size: 64",
            "  - .args:           []",
            "    .name:           second",
            "    .vgpr_count:     9",
            "    .wavefront_size: 32",
            "amdhsa.target:   amdgcn-amd-amdhsa--gfx90a",
        ]
    )
    found = resources(assembly)
    assert found["first"] == {
        "lds_bytes": 512, "scratch_bytes": 16, "sgprs": 20, "vgprs": 40, "vgpr_spills": 2, "wavefront": 64,
        "occupancy": 8,
    }  # fmt: skip
    assert found["second"] == {"vgprs": 9, "wavefront": 32, "occupancy": 5}
    assert describe("gfx90a", found["first"]) == (
        "gfx90a: 40 VGPRs, 20 SGPRs, 512 bytes LDS, 16 bytes scratch, 2 registers spilled, wave64, "
        "occupancy 8 waves/SIMD"
    )


def test_the_hip_runtime_is_absent_here_and_says_why():
    """No AMD GPU on this machine: the HIP backend is not among the available ones, and choosing it
    says what is missing (the runtime, or a device); where one is, every backend-parametrized test
    runs on it too (tests/conftest.py's ``backend`` fixture)."""
    if "hip" in gk.available_backends():
        pytest.skip("an AMD GPU is here: the backend-parametrized tests run on it")
    assert "hip" not in gk.available_backends()
    with pytest.raises(gk.BackendError, match="backend 'hip' is not available: the HIP runtime"):
        gk.set_backend("hip")
    with pytest.raises(gk.BackendError, match="HIP runtime"):
        gk.Device(0, "hip").backend()


@needs_hipcc
def test_the_runtime_code_object_bundles_each_target():
    """What the HIP backend loads: one bundle (hipcc --genco) with a code object per target."""
    from gpukern.backends.hip_compile import code_object

    src = warp_everything.source(Array[float32], Array[float16], Array[int64], Array[uint32], backend="hip")
    image = code_object(src, ("gfx90a", "gfx1030"))
    assert image.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    assert b"amdgcn-amd-amdhsa--gfx90a" in image and b"amdgcn-amd-amdhsa--gfx1030" in image
    with pytest.raises(gk.HIPCompileError, match="not an AMD GPU target"):
        code_object(src, ("sm_90",))
