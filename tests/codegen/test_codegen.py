"""The generated C: readable, folded, renamed where needed, and valid in both dialects."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from compilers import LIB, needs_nvcc, needs_nvrtc

import gpukern as gk
from gpukern import Array, Const, barrier, float32, int32, kernel, shared, thread_idx

SCALE = 3


@kernel
def scaled_copy(src: Array[float32], dst: Array[float32], n: int32, MODE: Const[int]):
    i = gk.global_id(0)
    if i < n:
        if MODE == 0:
            dst[i] = src[i] * SCALE
        else:
            dst[i] = src[i] - 1.0


@kernel
def reserved_names(out: Array[int32], n: int32):
    int = gk.global_id(0)  # noqa: A001 - a C keyword as a Python name
    half = int * 2
    kernel = half + 1
    if int < n:
        out[int] = kernel


@kernel
def shared_reverse(a: Array[float32], TILE: Const[int]):
    buf = shared(float32, TILE)
    t = thread_idx.x
    buf[t] = a[t]
    barrier()
    a[t] = buf[TILE - 1 - t]


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
def test_const_branches_fold_and_constants_inline(dialect):
    src0 = scaled_copy.source(Array[float32], Array[float32], int32, 0, backend=dialect)
    src1 = scaled_copy.source(Array[float32], Array[float32], int32, 1, backend=dialect)
    assert "* 3.0f" in src0 and "- 1.0f" not in src0
    assert "- 1.0f" in src1 and "* 3.0f" not in src1
    assert "MODE" not in src0.split("{", 1)[1].split("//")[0]  # no run-time parameter for a Const


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
def test_reserved_words_are_renamed(dialect):
    src = reserved_names.source(Array[int32], int32, backend=dialect)
    code = "\n".join(line.split("//")[0] for line in src.splitlines())
    assert re.search(r"\bint int_ = ", code)
    assert re.search(r"\bint half_ = ", code)
    assert re.search(r"\bint kernel_ = ", code)


def test_reserved_words_run(backend):
    out = np.zeros(50, np.int32)
    reserved_names[1, 64](out, 50)
    assert np.array_equal(out, np.arange(50) * 2 + 1)


@pytest.mark.parametrize(
    ("dialect", "words"),
    [
        ("cuda", ["__shared__ float buf[8];", "__syncthreads();", "(int)threadIdx.x"]),
        ("opencl", ["__local float buf[8];", "barrier(CLK_LOCAL_MEM_FENCE", "(int)get_local_id(0)"]),
    ],
)
def test_dialect_spellings(dialect, words):
    src = shared_reverse.source(Array[float32], 8, backend=dialect)
    for w in words:
        assert w in src


def test_python_lines_are_trailing_comments():
    src = shared_reverse.source(Array[float32], 8, backend="cuda")
    line = next(x for x in src.splitlines() if "buf[t] = a[t];" in x)
    assert line.rstrip().endswith("buf[t] = a[t]")
    assert re.search(r"// \d+: buf\[t\] = a\[t\]$", line)


def test_read_only_arrays_are_const_restrict():
    src = scaled_copy.source(Array[float32], Array[float32], int32, 0, backend="cuda")
    assert "const float* __restrict__ src" in src
    assert "float* dst" in src and "const float* __restrict__ dst" not in src  # written: never restrict


def test_float_literals_round_trip():
    @kernel
    def lits(out: Array[float32], out64: Array[gk.float64]):
        out[0] = 0.1
        out[1] = 1e-30
        out[2] = 3.4028234663852886e38
        out64[0] = 0.1
        out64[1] = 1e-300
        out64[2] = 2.0 / 3.0

    src = lits.source(Array[float32], Array[gk.float64], backend="cuda")
    floats = re.findall(r"= (-?[0-9.e+-]+)f?;", src)
    assert floats
    for text in re.findall(r"= ([-0-9.e+]+f);", src):
        assert np.float32(text[:-1]) in (np.float32(0.1), np.float32(1e-30), np.float32(3.4028234663852886e38))
    assert "0.6666666666666666;" in src


@kernel
def abs_of_unsigned_sum(x: Array[gk.uint32], out: Array[float32]):
    i = gk.global_id(0)
    a = x[i]
    out[i] = float(abs(a + a))  # abs of an unsigned value is spelt as the value itself


def test_unsigned_abs_keeps_its_parentheses(backend):
    x = np.array([4294967295, 7], np.uint32)
    out = np.zeros(2, np.float32)
    abs_of_unsigned_sum[1, 2](x, out)
    np.testing.assert_array_equal(out, np.abs(x + x).astype(np.float32))


@kernel
def special_constants(f: Array[float32], d: Array[gk.float64]):
    f[0] = math.inf
    f[1] = -math.inf
    f[2] = math.nan
    f[3] = 1e-45  # the smallest float32 subnormal
    f[4] = 3.4028234663852886e38
    f[5] = 0.1
    d[0] = math.inf
    d[1] = -math.inf
    d[2] = math.nan
    d[3] = 5e-324
    d[4] = 1.7976931348623157e308
    d[5] = 0.1


def test_special_constants_round_trip(backend):
    f, d = np.zeros(6, np.float32), np.zeros(6, np.float64)
    special_constants[1, 1](f, d)
    want_f = np.array([np.inf, -np.inf, np.nan, 1e-45, 3.4028234663852886e38, 0.1], np.float32)
    want_d = np.array([np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308, 0.1])
    assert np.isnan(f[2]) and np.isnan(d[2])
    mask = np.arange(6) != 2
    assert f[mask].tobytes() == want_f[mask].tobytes()  # bit for bit
    assert d[mask].tobytes() == want_d[mask].tobytes()


@kernel
def handed_over(a: Array[int32]):
    """Thread 0 writes a[0]; after the barrier every thread reads it (a global array as a mailbox)."""
    i = gk.global_id(0)
    if i == 0:
        a[0] = 42
    barrier()
    if i > 0:
        a[i] = a[0]


def test_written_arrays_are_not_restrict_so_loads_stay_after_barriers(backend):
    """With ``int* __restrict__ a``, nvcc loads a[0] before bar.sync in every thread but thread 0
    (seen on the H100: 31 of 32 kept the old value); without it the load follows the barrier."""
    a = np.full(64, 7, np.int32)
    handed_over[1, 64](a)
    np.testing.assert_array_equal(a, np.full(64, 42))
    src = handed_over.source(Array[int32], backend="cuda")
    assert "int* a)" in src and "__restrict__" not in src


@needs_nvrtc
def test_written_arrays_load_after_the_barrier_in_ptx():
    """The same kernel's PTX (NVRTC's front end, as nvcc's): the load of a[0] follows bar.sync."""
    ptx = LIB.ptx(handed_over.source(Array[int32], backend="cuda"), "sm_90")
    assert ptx.index("bar.sync") < ptx.rindex("ld.global"), ptx


# A kernel, a device function and a constant table named after functions the C library declares
# with C linkage (div, clock, index): as written, nvcc refuses the kernel ("more than one instance
# of overloaded function has C linkage"), so their C names take a "_".
index = np.arange(8, dtype=np.int32) * 3


@gk.func
def clock(x: int32) -> int32:
    return x + 1


@kernel
def div(out: Array[int32], n: int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = clock(index[i % 8])


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
def test_c_library_names_are_renamed_at_file_scope(dialect):
    code = div.source(Array[int32], int32, backend=dialect)
    assert re.search(r"\bvoid div_\(", code) and re.search(r"\bint clock_\(", code), code
    assert re.search(r"\bindex_\[", code), code


def test_c_library_names_run(backend):
    out = np.zeros(20, np.int32)
    div[1, 32](out, 20)
    assert np.array_equal(out, (np.arange(20) % 8) * 3 + 1)


@needs_nvcc
def test_c_library_names_compile_with_nvcc():
    from gpukern.backends.cuda_compile import nvcc_compile

    assert nvcc_compile(div.source(Array[int32], int32, backend="cuda"), "sm_90")[:4] == b"\x7fELF"


@needs_nvcc
@pytest.mark.parametrize("form", ["kernel", "table"])
def test_no_header_function_is_a_file_scope_name(tmp_path, form):
    """Every name CUDA's headers write before a "(" becomes, through global_identifier, a name
    nvcc takes for an extern "C" kernel and for a constant table (scripts/c_library_names.py
    regenerates the list after a CUDA or C library upgrade)."""
    import importlib.util
    import pathlib

    from gpukern.backends.cuda_compile import find_nvcc
    from gpukern.codegen.names import global_identifier

    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "c_library_names.py"
    spec = importlib.util.spec_from_file_location("c_library_names", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    names = script.header_names(find_nvcc(), tmp_path)
    assert len(names) > 1000  # the preprocessed headers were read
    assert script.refused(find_nvcc(), tmp_path, names[:50], form)  # as written, C refuses some
    assert script.refused(find_nvcc(), tmp_path, sorted({global_identifier(n) for n in names}), form) == set()


def test_float_type_variants_of_another_c_library_are_kept_clear():
    """Another C library declares the math functions for more float types (glibc's acosf128...):
    with this machine's wide variants left out of the list, the rule still finds every one."""
    from gpukern.codegen import c_library, names

    suffixes = ("f128x", "f64x", "f32x", "f128", "f16", "f32", "f64")
    wide = {n for n in c_library.C_LIBRARY if n.endswith(suffixes)}
    assert len(wide) > 100
    narrow = frozenset(c_library.C_LIBRARY - wide)
    original = names.C_LIBRARY
    try:
        names.C_LIBRARY = narrow
        assert [n for n in sorted(wide) if not names.in_c_library(n)] == []
        assert not names.in_c_library("to_f32") and not names.in_c_library("matmul")
    finally:
        names.C_LIBRARY = original
