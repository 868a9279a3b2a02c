"""Line information: the C handed to the compilers names the user's Python file and line in
``#line`` directives, so compiler errors, the PTX/cubin line table (``.file``/``.loc``: what
compute-sanitizer and Nsight Compute show) and OpenCL build errors point at Python; the text shown
by ``kernel.source()`` and ``gpukern show`` stays free of them.

NVRTC comes with the ``test`` extra, so these run in CI; nvcc's tests skip where it is absent.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator

import pytest
from compilers import LIB, needs_nvcc, needs_nvrtc, needs_opencl

import gpukern as gk
from gpukern import Array, complex64, float32, int32
from gpukern.backends import cuda_compile
from gpukern.codegen import lines
from gpukern.codegen.dialects import CUDA, OPENCL
from gpukern.tools.cli import main as cli_main

ARCH = "sm_90"
SIG = (Array[float32], Array[float32], int32)


@gk.func
def squared(x: float32) -> float32:
    return x * x


@gk.kernel
def k_lines(a: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        v = math.sin(a[i])
        out[i] = squared(v) + 1.0


def _line_of(fn, text: str) -> int:
    """The file line of ``text`` (a statement) in ``fn``'s source."""
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(src) if line.strip() == text)


FILE = __file__
SIN_LINE = _line_of(k_lines.fn, "v = math.sin(a[i])")


def test_the_compiled_text_names_each_statements_python_line():
    compiled = k_lines.source(*SIG, line_directives=True)
    shown = k_lines.source(*SIG)
    assert "#line" not in shown and lines.strip(compiled) == shown
    assert compiled.splitlines()[0].startswith("#line ")
    mapping = lines.line_map(compiled, CUDA.generated_file)
    assert len(mapping) == len(shown.split("\n"))
    kernel_at = next(i for i, text in enumerate(shown.split("\n")) if text.startswith('extern "C"'))
    first = int(re.search(r"  // (\d+): ", shown.split("\n")[kernel_at + 2]).group(1))
    assert mapping[kernel_at] == (FILE, first - 1)  # the signature: the line before the first statement
    last = None
    for text, (where, number) in list(zip(shown.split("\n"), mapping))[kernel_at:]:
        m = re.search(r"  // (\d+): ", text)
        if m:  # a statement: at its Python line, in this file
            assert (where, number) == (FILE, int(m.group(1))), text
            last = number
        elif last is not None and text.strip():  # a closing brace: the statement before it
            assert (where, number) == (FILE, last), text
        if text == "}":
            break
    assert (FILE, _line_of(squared.fn, "return x * x")) in mapping  # a @func's line: its own file and line
    assert (FILE, SIN_LINE) in mapping


def test_opencl_text_has_them_too():
    compiled = k_lines.source(*SIG, backend="opencl", line_directives=True)
    assert compiled.splitlines()[0].startswith("#line ")
    assert (FILE, _line_of(k_lines.fn, "i = gk.global_id(0)")) in lines.line_map(compiled, "kernel.cl")


@gk.kernel
def k_helpers(a: Array[complex64], out: Array[complex64]):
    i = gk.global_id(0)
    out[i] = a[i] * a[i]


def test_support_functions_are_never_attributed_to_a_user_line():
    compiled = k_helpers.source(Array[complex64], Array[complex64], line_directives=True)
    shown = lines.strip(compiled).splitlines()
    mapping = lines.line_map(compiled, CUDA.generated_file)
    body = next(i for i, text in enumerate(shown) if text.startswith('extern "C"'))
    helpers_end = max(i for i in range(body) if shown[i] == "}")  # the helpers before the kernel
    assert helpers_end > 3 and all(where is None for where, _ in mapping[: helpers_end + 1])
    assert mapping[body][0] == FILE  # the kernel itself: the user's file from its first line


@gk.kernel
def k_half(a: Array[gk.float16], out: Array[gk.float16]):
    i = gk.global_id(0)
    out[i] = a[i]


def test_the_header_before_a_first_function_stays_the_generated_files():
    """With no support function before the kernel, the header comment and #includes still belong
    to the generated file (they were given the kernel's def line, so an error in an include was
    reported at the user's def with 'the first error is at line 1 of the generated C')."""
    compiled = k_half.source(Array[gk.float16], Array[gk.float16], line_directives=True)
    shown = lines.strip(compiled).splitlines()
    mapping = lines.line_map(compiled, CUDA.generated_file)
    body = next(i for i, text in enumerate(shown) if text.startswith('extern "C"'))
    assert any("#include" in text for text in shown[:body])
    assert all(where is None for where, _ in mapping[:body]) and mapping[body][0] == FILE


def test_file_names_are_escaped_and_read_back():
    for name in ('a"b\\c.py', "new\nline.py", "caf\u00e9.py", "plain/path.py"):
        text = lines.directives(f"{lines.mark(0)}int x;\n", [(name, 7)], "kernel.cu")
        assert "\n" not in text.split("\n")[0] and lines.line_map(text, "kernel.cu")[0] == (name, 7)


def test_show_as_compiled(capsys: pytest.CaptureFixture[str]):
    assert cli_main(["show", f"{FILE}:k_lines", "--color", "never"]) == 0
    assert "#line" not in capsys.readouterr().out
    assert cli_main(["show", f"{FILE}:k_lines", "--color", "never", "--as-compiled"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#line ") and (FILE, SIN_LINE) in lines.line_map(out, "kernel.cu")


# ---------------------------------------------------------------- errors at the Python line
@gk.kernel
def k_broken(a: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        v = math.sin(a[i])
        out[i] = v


BROKEN_LINE = _line_of(k_broken.fn, "v = math.sin(a[i])")


@pytest.fixture
def broken_sin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``math.sin`` spelled as a function no C compiler knows; the broken variants dropped after,
    so the conftest does not compile them."""
    monkeypatch.setitem(CUDA.math, ("sin", "float32"), "gk_no_such_sin({0})")
    monkeypatch.setitem(OPENCL.math, ("sin", "float32"), "gk_no_such_sin({0})")
    k_broken.variants.clear()
    yield
    k_broken.variants.clear()


@pytest.mark.parametrize("compiler", [pytest.param("nvrtc", marks=needs_nvrtc), pytest.param("nvcc", marks=needs_nvcc)])
def test_a_compile_error_names_the_python_file_and_line(broken_sin, compiler: str):
    compiled = k_broken.source(*SIG, line_directives=True)
    with pytest.raises(gk.CUDACompileError) as e:
        cuda_compile.cuda_compiler(compiler, ARCH).compile(compiled, ARCH)
    err = e.value
    assert f"{FILE}({BROKEN_LINE})" in err.log  # the compiler itself names the Python line
    assert err.loc is not None and (err.loc.filename, err.loc.lineno) == (FILE, BROKEN_LINE)
    assert err.source == k_broken.source(*SIG) and "gk_no_such_sin" in err.source.splitlines()[err.c_line - 1]
    assert f"{FILE}:{BROKEN_LINE}:" in str(err) and "v = math.sin(a[i])" in str(err)


@needs_opencl
def test_an_opencl_build_error_names_the_python_line(broken_sin):
    import numpy as np

    a = np.ones(4, np.float32)
    with pytest.raises(gk.OpenCLCompileError) as e:
        k_broken[1, 4](a, np.zeros(4, np.float32), 4, backend="opencl")
    err = e.value
    assert isinstance(err, gk.CompileError) and isinstance(err, gk.BackendError)
    assert "gk_no_such_sin" in err.log
    assert err.loc is not None and (err.loc.filename, err.loc.lineno) == (FILE, BROKEN_LINE)


# ---------------------------------------------------------------- the line table
@needs_nvrtc
def test_the_ptx_line_table_names_the_python_file():
    ptx = LIB.ptx(k_lines.source(*SIG, line_directives=True), ARCH, ("--generate-line-info",))
    files = re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.MULTILINE)
    numbers = {n for n, f in files if f == FILE}
    assert numbers, files
    locs = {int(line) for n, line in re.findall(r"^\s*\.loc\s+(\d+)\s+(\d+)\s", ptx, re.MULTILINE) if n in numbers}
    assert {_line_of(k_lines.fn, t) for t in ("i = gk.global_id(0)", "v = math.sin(a[i])")} <= locs


@needs_nvrtc
def test_the_cubin_has_a_line_table():
    cubin = LIB.compile(k_lines.source(*SIG, line_directives=True), ARCH, ("--generate-line-info",))
    assert b".nv_debug_line_sass" in cubin or b".debug_line" in cubin
    assert b"test_line_info.py" in cubin  # the line table's file (DWARF keeps folder and name apart)
