"""``print(...)`` in kernels: the simulator's text (block by block, thread by thread) against
Python's own print of the same values under the documented float format, and PoCL's printf
(native code: captured with capfd) giving the same lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, bool_, float32, float64, func, global_id, int32, int64, kernel, thread_idx, uint32


def expected_float(x: float, digits: int) -> str:
    """The documented format: %.9g / %.17g, NaN as nan or -nan by its sign (CUDA's printf)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"%.{digits}g" % x


@kernel
def show(a: Array[float32], b: Array[float64], n: Array[int64]):
    i = global_id(0)
    if i < a.shape[0]:
        print("i =", i, "a:", a[i], b[i], n[i], uint32(i), a[i] > 0, "100%", 7)


A = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 1e-45, 0.1, 3.4028235e38], np.float32)
B = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 5e-324, 0.1, 1.7976931348623157e308])
N = np.array([0, -1, 2**62, -(2**63), 5, 6, 7, 8], np.int64)


def want_lines() -> list[str]:
    return [
        f"i = {i} a: {expected_float(float(x), 9)} {expected_float(float(y), 17)} {int(z)} {i} {x > 0} 100% 7"
        for i, (x, y, z) in enumerate(zip(A, B, N))
    ]


def test_simulator_prints_every_type_in_the_documented_format(capsys):
    show[1, 8](A, B, N, backend="sim")
    assert capsys.readouterr().out.splitlines() == want_lines()


def test_pocl_printf_prints_the_same_lines(capfd):
    pytest.importorskip("pyopencl")
    show[1, 8](A, B, N, backend="opencl")
    gk.synchronize("opencl")
    got = sorted(capfd.readouterr().out.splitlines())
    # PoCL's printf drops a NaN's sign (docs/language.md): the only difference from CUDA and the simulator
    assert got == sorted(line.replace("-nan", "nan") for line in want_lines())


def test_cuda_source_is_one_printf_with_the_rule_s_conversions():
    src = show.source(A, B, N, backend="cuda")
    assert (
        'printf("i = %d a: %.9g %.17g %lld %u %s 100%% 7\\n", i, a[i], b[i], n[i], (unsigned int)i, '
        'a[i] > 0.0f ? "True" : "False");'
    ) in src
    assert 'printf("i = %d a: %.9g %.17lg %ld %u %s 100%% 7\\n"' in show.source(A, B, N, backend="opencl")


@kernel
def show_complex(z: Array[gk.complex64], w: Array[gk.complex128]):
    i = global_id(0)
    if i < z.shape[0]:
        print(z[i], w[i])


Z = np.array([1.5 - 2.25j, complex(np.nan, np.inf), complex(-0.0, 0.1), 1e-45j], np.complex64)
W = np.array([0.1 + 3j, complex(np.inf, -np.nan), complex(2.5, -0.0), 5e-324 - 1j])


def complex_text(z: complex, digits: int) -> str:
    """Python's ``(re+imj)``, each part in the documented float format, the imaginary one signed."""
    re, im = expected_float(z.real, digits), expected_float(z.imag, digits)
    return f"({re}{im if im.startswith('-') else '+' + im}j)"


def test_complex_numbers_print_as_python_writes_them_on_every_backend(capfd, backend):
    """issue 33: complex64 printed 0 on OpenCL (%u), complex128 printed 1 for 1.5-2.25j on the
    simulator, a raw TypeError for complex64 there, and did not compile on OpenCL."""
    show_complex[1, 4](Z, W)
    gk.synchronize()
    got = sorted(capfd.readouterr().out.splitlines())
    want = [f"{complex_text(complex(z), 9)} {complex_text(complex(w), 17)}" for z, w in zip(Z, W)]
    if backend == "opencl":  # PoCL's printf drops a NaN's sign, as for floats (the signed part: +nan)
        want = [line.replace("-nanj", "+nanj").replace("-nan", "nan") for line in want]
    assert got == sorted(want)
    assert want[0] == "(1.5-2.25j) (0.10000000000000001+3j)"  # the documented rule, spelt out once


@func
def report(x, tag):
    print("f", tag, x, sep=":", end=";\n")


@kernel
def ordered(out: Array[int32]):
    t = thread_idx.x
    b = gk.block_idx.x
    if t % 2 == 0:
        print("block", b, "thread", t)
    report(t * 10 + b, 7)  # a constant argument prints as Python writes it
    out[b * gk.block_dim.x + t] = t


def test_simulator_order_is_block_then_thread_for_the_lanes_that_run(capsys):
    out = np.zeros(12, np.int32)
    ordered[3, 4](out, backend="sim")
    lines = capsys.readouterr().out.splitlines()
    evens = [f"block {b} thread {t}" for b in range(3) for t in range(0, 4, 2)]
    funcs = [f"f:7:{t * 10 + b};" for b in range(3) for t in range(4)]
    assert lines == evens + funcs


@kernel
def constants(out: Array[bool_]):
    print(0.1, 2**40, True, float32(0.1), -0.0)
    out[0] = True


def test_constants_print_as_python_writes_them_typed_ones_by_the_rule(capsys, backend):
    out = np.zeros(1, bool)
    constants[1, 1](out)
    gk.synchronize()
    want = "0.1 1099511627776 True 0.100000001 -0.0\n"
    if backend == "sim":
        assert capsys.readouterr().out == want
    assert f'printf("{want[:-1]}\\n");' in constants.source(out, backend="cuda")


@pytest.mark.parametrize(
    "call, error, message",
    [
        ("print(a[0], file=None)", gk.KernelSyntaxError, "takes sep= and end= only, not file="),
        ("print(a[0], sep=a)", gk.KernelTypeError, "sep= must be a string literal"),
        ("print(a)", gk.KernelTypeError, "a printed value"),
    ],
)
def test_print_refuses_what_it_cannot_write(call, error, message):
    from kernel_source import load_kernel

    k = load_kernel(f"import gpukern as gk\nfrom gpukern import *\n\n@kernel\ndef k(a: Array[float32]):\n    {call}\n")
    with pytest.raises(error, match=message):
        k.source(np.zeros(1, np.float32))
