"""Compile options (``@gk.kernel(fastmath=True)``): checked names and values, their flags per
backend from the one table, part of each binary's cache key, honoured by NVRTC, nvcc and OpenCL's
build, and a flag a compiler refuses is a ``gk.CompileError`` with its log.

NVRTC and PoCL come with CI, so these run there; nvcc's skip where it is absent.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from compilers import LIB, needs_nvcc, needs_nvrtc, needs_opencl

import gpukern as gk
from gpukern import Array, float32, int32
from gpukern.backends import cuda_compile, get_backend
from gpukern.compile_options import OPTIONS, CompileOptions

ARCH = "sm_90"
SIG = (Array[float32], Array[float32], int32)


def _sines(**options):
    """A fresh kernel of ``math.sin`` with ``options`` (each test its own, so variants are its own)."""

    def sines(a: Array[float32], out: Array[float32], n: int32):
        i = gk.global_id(0)
        if i < n:
            out[i] = math.sin(a[i]) / a[i]

    return gk.kernel(**options)(sines) if options else gk.kernel(sines)


def test_bare_and_with_options():
    assert _sines().options == CompileOptions()
    k = _sines(fastmath=True, maxrregcount=32)
    assert k.options["fastmath"] is True and k.options["maxrregcount"] == 32 and k.options["ftz"] is None
    assert k.variant(k.signature_of(tuple(np.zeros(1, np.float32) for _ in range(2)) + (1,))).options == k.options


def test_flags_per_backend_come_from_the_table():
    default = CompileOptions()
    assert default.flags("cuda") == ("--generate-line-info",) and default.flags("opencl") == ()
    o = CompileOptions.make(
        "k", dict(fastmath=True, ftz=False, fma=False, maxrregcount=40, cuda_options=("-DA=1",), opencl_options=["-DB"])
    )
    assert o.flags("cuda") == (
        "--use_fast_math", "--ftz=false", "--fmad=false", "--maxrregcount=40", "--generate-line-info", "-DA=1",
    )  # fmt: skip
    assert o.flags("opencl") == ("-cl-fast-relaxed-math", "-DB")  # maxrregcount: ignored on OpenCL
    o = CompileOptions.make("k", dict(ftz=True, fma=True, lineinfo=False))
    assert o.flags("cuda") == ("--ftz=true", "--fmad=true") and o.flags("opencl") == (
        "-cl-denorms-are-zero",
        "-cl-mad-enable",
    )
    # the options the simulator does not model, from the table (fma=True contracts: it was left out)
    assert o.inexact == [
        "fma=True (not modelled: the simulator rounds each operation on its own)",
        "ftz=True (not modelled: the simulator keeps denormals)",
    ]
    assert CompileOptions.make("k", dict(fma=False, ftz=False, fastmath=False)).inexact == []
    assert set(OPTIONS) >= {"fastmath", "ftz", "fma", "maxrregcount"}


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(fast_math=True), "unknown compile option 'fast_math'; the options are fastmath, ftz"),
        (
            dict(fastmath=1),
            f"fastmath= ({OPTIONS['fastmath'].doc}) must be True or False, not 1",
        ),
        (
            dict(maxrregcount=0),
            f"maxrregcount= ({OPTIONS['maxrregcount'].doc}) must be a positive int",
        ),
        (dict(maxrregcount=True), "must be a positive int, not True"),
        (
            dict(cuda_options="-O3"),
            f"cuda_options= ({OPTIONS['cuda_options'].doc}) must be a tuple of strings",
        ),
    ],
)
def test_bad_options_are_kernel_type_errors(options, message):
    with pytest.raises(gk.KernelTypeError, match=re.escape(message)):
        _sines(**options)


def test_options_are_part_of_the_cubin_key():
    if LIB is None and cuda_compile.find_nvcc() is None:
        pytest.skip("no CUDA compiler")
    k = _sines()
    src = k.source(*SIG, line_directives=True)
    c = cuda_compile.cuda_compiler(arch=ARCH)
    keys = {
        cuda_compile.cubin_key(src, ARCH, CompileOptions.make("k", o).flags("cuda"), c)
        for o in ({}, {"fastmath": True}, {"ftz": True}, {"fma": False}, {"maxrregcount": 32}, {"lineinfo": False})
    }
    assert len(keys) == 6


@needs_nvrtc
@pytest.mark.parametrize(
    "options",
    [
        {"fastmath": True},
        {"ftz": True},
        {"ftz": False},
        {"fma": False},
        {"maxrregcount": 32},
        {"cuda_options": ("-DX=1",)},
    ],
)
def test_nvrtc_compiles_with_each_option(options):
    src = _sines().source(*SIG, line_directives=True)
    flags = CompileOptions.make("k", options).flags("cuda")
    assert LIB.compile(src, ARCH, flags)[:4] == b"\x7fELF"


@needs_nvrtc
def test_fastmath_changes_the_code():
    src = _sines().source(*SIG, line_directives=True)
    plain = LIB.ptx(src, ARCH, CompileOptions().flags("cuda"))
    fast = LIB.ptx(src, ARCH, CompileOptions.make("k", {"fastmath": True}).flags("cuda"))
    assert "sin.approx" in fast and "sin.approx" not in plain
    assert LIB.compile(src, ARCH, CompileOptions.make("k", {"fastmath": True}).flags("cuda")) != LIB.compile(
        src, ARCH, CompileOptions().flags("cuda")
    )


@needs_nvcc
def test_nvcc_takes_the_same_flags():
    src = _sines().source(*SIG, line_directives=True)
    flags = CompileOptions.make("k", {"fastmath": True, "ftz": True, "fma": False, "maxrregcount": 32}).flags("cuda")
    assert cuda_compile.nvcc_compile(src, ARCH, flags)[:4] == b"\x7fELF"


@needs_nvrtc
def test_a_flag_nvrtc_refuses_is_a_compile_error_with_its_log():
    k = _sines(cuda_options=("--no-such-flag",))
    with pytest.raises(gk.CUDACompileError) as e:
        cuda_compile.cuda_compiler("nvrtc", ARCH).compile(
            k.source(*SIG, line_directives=True), ARCH, k.options.flags("cuda")
        )
    assert isinstance(e.value, gk.CompileError) and "--no-such-flag" in e.value.log


# ---------------------------------------------------------------- OpenCL
@pytest.fixture
def fresh_cache(tmp_path: Path):
    from gpukern import cache

    before = cache.binary_cache()
    cache.reset_cache(str(tmp_path / "cache"))
    yield
    cache.reset_cache(before.directory, before.disk)


def _program_options(k) -> str:
    b = get_backend("opencl")
    variant = k.variant(k.signature_of((np.zeros(1, np.float32), np.zeros(1, np.float32), 1)))
    knl = variant.compiled[b.key]
    prg = knl.get_info(b.cl.kernel_info.PROGRAM)
    return prg.get_build_info(b.device, b.cl.program_build_info.OPTIONS)


@needs_opencl
def test_opencl_builds_with_the_flags_and_keys_them(fresh_cache):
    a = np.linspace(0.5, 3.0, 64, dtype=np.float32)
    want = np.sin(a) / a
    outs = {}
    for fast in (False, True):
        k = _sines(fastmath=True) if fast else _sines()
        out = np.zeros_like(a)
        k[1, 64](a, out, 64, backend="opencl")
        np.testing.assert_allclose(out, want, rtol=1e-3)
        outs[fast] = _program_options(k)
    assert "-cl-fast-relaxed-math" in outs[True] and "-cl-fast-relaxed-math" not in outs[False]
    assert gk.cache_info()["entries"] == 2  # one binary per options


@needs_opencl
def test_an_option_opencl_refuses_is_a_compile_error_with_its_log(fresh_cache):
    k = _sines(opencl_options=("-no-such-option",))
    a = np.ones(4, np.float32)
    with pytest.raises(gk.OpenCLCompileError) as e:
        k[1, 4](a, np.zeros_like(a), 4, backend="opencl")
    assert isinstance(e.value, gk.CompileError) and "-no-such-option" in e.value.log


def test_the_simulator_computes_ieee_results_whatever_the_options():
    a = np.linspace(0.5, 3.0, 8, dtype=np.float32)
    out = np.zeros_like(a)
    _sines(fastmath=True)[1, 8](a, out, 8, backend="sim")
    np.testing.assert_allclose(out, np.sin(a) / a, rtol=1e-6)
