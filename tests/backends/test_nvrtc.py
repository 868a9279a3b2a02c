"""The CUDA compilers without a GPU: NVRTC (through ctypes, from the ``nvidia-cuda-nvrtc`` wheel)
and nvcc compile what gpukern generates, one cache keeps their binaries apart, the choice between
them, and their errors as ``gk.CUDACompileError`` at the Python line.

NVRTC comes with the ``test`` extra, so CI runs these; ``GPUKERN_REQUIRE_NVRTC=1`` makes its
absence a failure rather than a skip.  Tests that need nvcc skip where it is absent.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest
from compilers import LIB, needs_nvcc, needs_nvrtc
from kernel_source import load_example

import gpukern as gk
from gpukern import Array, complex64, float16, float32, int32, uint32
from gpukern.backends import compile_errors, cuda_compile, nvrtc
from gpukern.tools.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
ARCH = "sm_90"  # the H100's; NVRTC 12 and 13 both know it


def matmul_source() -> str:
    k = load_example("matmul_tiled").matmul_tiled
    return k.source(Array[float32], Array[float32], Array[float32], int32, int32, int32, 16, backend="cuda")


# ---------------------------------------------------------------- representative kernels
TABLE = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
RECORD = np.dtype([("flag", "?"), ("x", "f4"), ("n", "i4"), ("v", "f8")], align=True)


@gk.kernel
def k_half(a: Array[float16], out: Array[float16]):
    i = gk.global_id(0)
    if i < len(a):
        out[i] = a[i] * a[i] + float16(1.5)


@gk.kernel
def k_complex(a: Array[complex64], out: Array[complex64], s: complex64):
    i = gk.global_id(0)
    if i < len(a):
        out[i] = a[i] * s + abs(a[i])


@gk.kernel
def k_warp(a: Array[float32], out: Array[float32], votes: Array[uint32]):
    i = gk.global_id(0)
    v = a[i]
    v += gk.shfl_down_sync(0xFFFFFFFF, v, 16)
    v += gk.shfl_xor_sync(0xFFFFFFFF, v, 1)
    b = gk.ballot_sync(0xFFFFFFFF, v > 0.0)
    if gk.lane_id() == 0:
        out[i // 32] = v
        votes[i // 32] = b


@gk.kernel
def k_atomics(a: Array[float32], total: Array[float32], most: Array[int32], bits: Array[uint32]):
    i = gk.global_id(0)
    if i < len(a):
        gk.atomic_add(total, 0, a[i])
        gk.atomic_max(most, 0, int32(a[i]))
        gk.atomic_or(bits, 0, uint32(1) << uint32(i % 32))


@gk.kernel
def k_print(a: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        print("thread", i, "has", a[i])


@gk.kernel
def k_records(a, out: Array[float32]):
    i = gk.global_id(0)
    if i < len(a):
        out[i] = a[i].x * 2.0 + a[i]["n"] if a[i].flag else a["v"][i]


@gk.kernel
def k_table(idx: Array[int32], out: Array[float32]):
    i = gk.global_id(0)
    if i < len(idx):
        out[i] = TABLE[idx[i] % 4]


@gk.kernel
def k_dynamic(a: Array[float32], out: Array[float32]):
    s = gk.dynamic_shared(float32)
    t = gk.thread_idx.x
    i = gk.block_idx.x * gk.block_dim.x + t
    s[t] = a[i]
    gk.barrier()
    out[i] = s[len(s) - 1 - t]


def representative() -> dict[str, tuple[str, str]]:
    """name -> (generated CUDA C, the C name of its kernel)."""
    f32, i32 = Array[float32], Array[int32]
    records = np.zeros(4, RECORD)
    out = {
        "matmul_tiled": (matmul_source(), "matmul_tiled"),
        "half": (k_half.source(Array[float16], Array[float16]), "k_half"),
        "complex": (k_complex.source(Array[complex64], Array[complex64], complex64), "k_complex"),
        "warp": (k_warp.source(f32, f32, Array[uint32]), "k_warp"),
        "atomics": (k_atomics.source(f32, f32, i32, Array[uint32]), "k_atomics"),
        "printf": (k_print.source(f32, int32), "k_print"),
        "records": (k_records.source(records, f32), "k_records"),
        "table": (k_table.source(i32, f32), "k_table"),
        "dynamic_shared": (k_dynamic.source(f32, f32), "k_dynamic"),
    }
    return out


def test_the_representative_sources_are_what_they_say():
    src = representative()
    assert "#include <cuda_fp16.h>" in src["half"][0]
    assert "__shfl_down_sync" in src["warp"][0] and "__ballot_sync" in src["warp"][0]
    assert "atomicAdd" in src["atomics"][0] and "printf(" in src["printf"][0]
    assert "extern __shared__" in src["dynamic_shared"][0]


@needs_nvrtc
@pytest.mark.parametrize("name", list(representative()))
def test_nvrtc_compiles_to_a_cubin(name: str):
    source, symbol = representative()[name]
    binary = LIB.compile(source, ARCH)
    assert binary[:4] == b"\x7fELF"
    assert symbol.encode() in binary


@needs_nvrtc
def test_nvrtc_library_knows_itself():
    assert LIB.version >= (11, 2)
    assert 90 in LIB.archs
    assert os.path.isfile(LIB.path) or not os.path.isabs(LIB.path)
    assert LIB.include is not None and os.path.isfile(os.path.join(LIB.include, nvrtc.HEADER))
    assert LIB.version_text in LIB.fingerprint


@needs_nvrtc
def test_nvrtc_refuses_an_arch_it_does_not_know():
    with pytest.raises(gk.CUDACompileError, match="does not know sm_999"):
        LIB.compile(matmul_source(), "sm_999")
    old = f"sm_{min(LIB.archs) - 5}"
    with pytest.raises(gk.CUDACompileError, match=f"no longer compiles for {old}"):
        LIB.check_arch(old)


def test_with_two_nvrtcs_a_gpu_gets_the_first_that_compiles_for_it(monkeypatch: pytest.MonkeyPatch):
    """Both wheels installed: CUDA 13's NVRTC comes first but dropped sm_70, so a V100 gets CUDA
    12's; a GPU neither knows gets the first (whose check_arch says what to install)."""
    fakes = {
        "13": nvrtc.NVRTC(None, "/x/libnvrtc.so.13", "the nvidia-cuda-nvrtc wheel", (13, 0), (75, 80, 90, 120), None),
        "12": nvrtc.NVRTC(
            None, "/x/libnvrtc.so.12", "the nvidia-cuda-nvrtc wheel", (12, 9), (50, 70, 75, 80, 90), None
        ),
    }
    monkeypatch.setattr(nvrtc, "_candidates", lambda: [("/x/missing.so", "CUDA_HOME"), ("13", "w"), ("12", "w")])
    monkeypatch.setattr(nvrtc, "_open", lambda target, where: fakes.get(target, f"{target}: no such file"))
    nvrtc._load.cache_clear()
    try:
        assert nvrtc.library() is fakes["13"]
        assert nvrtc.library("sm_90") is fakes["13"]
        assert nvrtc.library("sm_70") is fakes["12"]
        assert nvrtc.library("sm_30") is fakes["13"]
        with pytest.raises(gk.CUDACompileError, match="no longer compiles for sm_30"):
            nvrtc.library("sm_30").check_arch("sm_30")
        monkeypatch.setattr(nvrtc, "_candidates", lambda: [("/x/missing.so", "CUDA_HOME")])
        nvrtc._load.cache_clear()
        assert nvrtc.library("sm_90") is None and "/x/missing.so: no such file" in nvrtc.why_not()
    finally:
        nvrtc._load.cache_clear()


@needs_nvrtc
@needs_nvcc
def test_nvrtc_and_nvcc_keys_differ(tmp_path: Path):
    src = matmul_source()
    by = {c: cuda_compile.cuda_compiler(c, ARCH) for c in ("nvrtc", "nvcc")}
    keys = {c: cuda_compile.cubin_key(src, ARCH, (), by[c]) for c in by}
    assert keys["nvrtc"] != keys["nvcc"]
    assert keys["nvrtc"] == cuda_compile.cubin_key(src, ARCH, (), cuda_compile.cuda_compiler("nvrtc", ARCH))


@needs_nvrtc
def test_nvrtc_key_follows_its_version_and_file(monkeypatch: pytest.MonkeyPatch):
    src, c = matmul_source(), cuda_compile.cuda_compiler("nvrtc", ARCH)
    before = cuda_compile.cubin_key(src, ARCH, (), c)
    monkeypatch.setattr(LIB, "version", (LIB.version[0], LIB.version[1] + 1))
    monkeypatch.delattr(LIB, "fingerprint")  # the cached_property's value: read again
    assert cuda_compile.cubin_key(src, ARCH, (), c) != before


@needs_nvrtc
def test_cubins_of_both_compilers_share_one_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from gpukern.runtime import cache

    before = cache.binary_cache()
    cache.reset_cache(str(tmp_path / "cache"))
    try:
        src = k_half.source(Array[float16], Array[float16])
        a = cuda_compile.cubin(src, ARCH, compiler="nvrtc")
        assert cuda_compile.cubin(src, ARCH, compiler="nvrtc") is a or gk.cache_info()["hits"] == 1
        if cuda_compile.find_nvcc():
            b = cuda_compile.cubin(src, ARCH, compiler="nvcc")
            assert b[:4] == b"\x7fELF"
            assert gk.cache_info()["entries"] == 2
    finally:
        cache.reset_cache(before.directory, before.disk)


@needs_nvrtc
def test_a_bad_option_is_a_compile_error_with_nvrtcs_log():
    with pytest.raises(gk.CUDACompileError) as e:
        cuda_compile.cuda_compiler("nvrtc").compile(matmul_source(), ARCH, ("--no-such-option",))
    err = e.value
    assert isinstance(err, gk.CompileError) and isinstance(err, gk.BackendError)
    assert err.compiler == "nvrtc" and "--no-such-option" in err.log and "--no-such-option" in str(err)
    assert "NVRTC_ERROR_INVALID_OPTION" in str(err)


def _broken_matmul() -> tuple[str, int]:
    """The flagship's C with the statement of Python line ``acc = 0.0`` broken; that line's number."""
    src = matmul_source()
    lines = src.splitlines()
    [n] = [i for i, line in enumerate(lines) if line.strip().startswith("float acc = 0.0f;")]
    lines[n] = lines[n].replace("float acc = 0.0f;", "float acc = no_such_name;")
    py = (ROOT / "examples" / "matmul_tiled.py").read_text().splitlines()
    first = load_example("matmul_tiled").matmul_tiled.fn.__code__.co_firstlineno
    py_line = next(i + 1 for i, line in enumerate(py) if i >= first and line.strip() == "acc = 0.0")
    return "\n".join(lines) + "\n", py_line


@pytest.mark.parametrize("compiler", [pytest.param("nvrtc", marks=needs_nvrtc), pytest.param("nvcc", marks=needs_nvcc)])
def test_a_source_error_names_the_python_line(compiler: str):
    src, py_line = _broken_matmul()
    with pytest.raises(gk.CUDACompileError) as e:
        cuda_compile.cuda_compiler(compiler).compile(src, ARCH)
    err = e.value
    assert err.compiler == compiler and "no_such_name" in err.log
    assert err.loc is not None and err.loc.lineno == py_line
    assert err.loc.filename.endswith("matmul_tiled.py")
    assert src.splitlines()[err.c_line - 1].strip().startswith("float acc = no_such_name;")
    text = str(err)
    assert f"matmul_tiled.py:{py_line}:" in text and "acc = 0.0" in text and "no_such_name" in text


def test_python_loc_refuses_a_comment_that_is_not_the_file():
    src = "// Generated by gpukern from /no/such/file.py:3 (k)\nint x;  // 2: x = 1\n"
    assert compile_errors.python_loc(src, 2) is None
    assert compile_errors.python_loc(src, 9) is None


# ---------------------------------------------------------------- the choice
@pytest.fixture
def no_choice(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(cuda_compile.ENV, raising=False)
    gk.set_cuda_compiler(None)
    yield
    gk.set_cuda_compiler(None)


@needs_nvrtc
def test_nvrtc_is_the_default_where_found(no_choice):
    c = cuda_compile.cuda_compiler(arch=ARCH)
    assert c.name == "nvrtc" and "default" in c.why and c.version == LIB.version_text


@needs_nvrtc
@needs_nvcc
def test_the_environment_and_set_cuda_compiler_choose(no_choice, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPUKERN_CUDA_COMPILER", "nvcc")
    c = cuda_compile.cuda_compiler(arch=ARCH)
    assert c.name == "nvcc" and "GPUKERN_CUDA_COMPILER" in c.why
    gk.set_cuda_compiler("nvrtc")  # the Python choice wins over the environment
    c = cuda_compile.cuda_compiler(arch=ARCH)
    assert c.name == "nvrtc" and "set_cuda_compiler" in c.why
    assert cuda_compile.cuda_compiler("nvcc").name == "nvcc"  # asked for by name: that one


def test_unknown_or_missing_compilers_are_backend_errors(no_choice, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPUKERN_CUDA_COMPILER", "clang")
    with pytest.raises(gk.BackendError, match="unknown CUDA compiler 'clang'"):
        cuda_compile.cuda_compiler()
    with pytest.raises(gk.BackendError, match="unknown CUDA compiler"):
        gk.set_cuda_compiler("gcc")
    monkeypatch.setenv("GPUKERN_CUDA_COMPILER", "nvcc")
    monkeypatch.setattr(cuda_compile, "find_nvcc", lambda: None)
    with pytest.raises(gk.BackendError, match="nvcc .* was not found"):
        cuda_compile.cuda_compiler()
    monkeypatch.delenv("GPUKERN_CUDA_COMPILER")
    monkeypatch.setattr(nvrtc, "library", lambda arch=None: None)
    monkeypatch.setattr(nvrtc, "why_not", lambda: "not found (test)")
    with pytest.raises(gk.BackendError, match="no CUDA compiler: NVRTC not found .test.; nvcc not found"):
        cuda_compile.cuda_compiler()


@needs_nvrtc
@needs_nvcc
def test_an_arch_nvrtc_cannot_do_falls_back_to_nvcc(no_choice):
    old = f"sm_{min(LIB.archs) - 5}"
    c = cuda_compile.cuda_compiler(arch=old)
    assert c.name == "nvcc" and "no longer compiles" in c.why
    with pytest.raises(gk.BackendError, match="no longer compiles"):
        cuda_compile.cuda_compiler("nvrtc", arch=old)


def test_gpukern_info_names_the_cuda_compiler(no_choice):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["info"]) == 0
    text = out.getvalue()
    assert "CUDA C " in text and "nvrtc " in text and "nvcc " in text
    if LIB is not None:
        assert f"compiled by nvrtc {LIB.version_text}" in text and LIB.path in text
    elif cuda_compile.find_nvcc() is None:
        assert "no compiler" in text
