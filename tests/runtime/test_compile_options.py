"""Compile options (``@gk.kernel(fastmath=True)``): checked names and values, their flags per
backend from the one table, part of each binary's cache key, honoured by NVRTC, nvcc and OpenCL's
build, and a flag a compiler refuses is a ``gk.CompileError`` with its log.

NVRTC and PoCL come with CI, so these run there; nvcc's skip where it is absent.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from compilers import LIB, needs_nvcc, needs_nvrtc, needs_opencl

import gpukern as gk
from gpukern import Array, float32, int32
from gpukern.backends import cuda_compile, get_backend
from gpukern.runtime.compile_options import OPTIONS, CompileOptions

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


def _ptx_ops(options: dict) -> set[str]:
    """The float32 arithmetic instructions (with their modifiers) of a multiply-add's PTX."""

    def muladd(a: Array[float32], b: Array[float32], out: Array[float32], n: int32):
        i = gk.global_id(0)
        if i < n:
            out[i] = a[i] * b[i] + out[i]

    src = gk.kernel(muladd).source(Array[float32], Array[float32], Array[float32], int32, line_directives=True)
    ptx = LIB.ptx(src, ARCH, CompileOptions.make("k", options).flags("cuda"))
    return set(re.findall(r"^\s+((?:fma|mul|add)\.[\w.]*f32)", ptx, re.MULTILINE))


@needs_nvrtc
def test_fma_and_ftz_change_the_code():
    """fma=False: the product and the sum rounded each (``.rn``: ptxas may not fuse them); the
    default and fma=True leave them fusable; ftz=True flushes denormals in each instruction."""
    plain, no_fma, fma, ftz = (_ptx_ops(o) for o in ({}, {"fma": False}, {"fma": True}, {"ftz": True}))
    assert {"mul.rn.f32", "add.rn.f32"} <= no_fma and not no_fma & {"mul.f32", "add.f32", "fma.rn.f32"}, no_fma
    assert plain == fma and plain & {"fma.rn.f32", "mul.f32"}, plain
    assert ftz and all(".ftz." in op for op in ftz) and not any(".ftz." in op for op in plain), ftz


def _registers(cubin: bytes, name: str) -> int:
    """The registers a kernel of a cubin uses: the top byte of its ``.text.NAME`` section's
    ``sh_info`` in the ELF section headers (where the CUDA tools read it)."""
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * entsize) for i in range(count)]
    strings = headers[names][4]
    for h in headers:
        if cubin[strings + h[0] : cubin.index(b"\0", strings + h[0])] == f".text.{name}".encode():
            return h[7] >> 24
    raise AssertionError(f"no .text.{name} in the cubin")


@needs_nvrtc
def test_maxrregcount_bounds_the_registers():
    def busy(a: Array[float32], out: Array[float32]):
        i = gk.global_id(0)
        v0, v1, v2, v3, v4, v5, v6, v7 = a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7]
        w0, w1, w2, w3, w4, w5, w6, w7 = (
            a[i + 8],
            a[i + 9],
            a[i + 10],
            a[i + 11],
            a[i + 12],
            a[i + 13],
            a[i + 14],
            a[i + 15],
        )
        s = 0.0
        for _ in range(16):
            s = s * v0 + v1 * v2 - v3 * v4 + v5 * v6 - v7 * w0 + w1 * w2 - w3 * w4 + w5 * w6 - w7 * s
            v0, v1, v2, v3 = v0 * 1.5 + w7, v1 * 1.25 + w6, v2 * 1.125 + w5, v3 * 0.5 + w4
        out[i] = s + v0 + v1 + v2 + v3

    src = gk.kernel(busy).source(Array[float32], Array[float32], line_directives=True)
    arch = "sm_80"  # (an sm_90 cubin keeps the count elsewhere)
    free = _registers(LIB.compile(src, arch, CompileOptions().flags("cuda")), "busy")
    bound = _registers(LIB.compile(src, arch, CompileOptions.make("k", {"maxrregcount": 24}).flags("cuda")), "busy")
    assert bound <= 24 < free, (bound, free)


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
    k.variants.clear()  # not for conftest's check of every variant's C: its flag is refused on purpose


# ---------------------------------------------------------------- OpenCL
@pytest.fixture
def fresh_cache(tmp_path: Path):
    from gpukern.runtime import cache

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
