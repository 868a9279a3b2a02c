"""A kernel compiled with a Numba signature takes its scalar arguments as the signature declares them
(Numba converts each one, wrapping integers as C does), and the module paths programs import Numba's
names from (``numba.core.types``, ``numba.cuda.fp16``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from gpukern.numba import cuda, float32, int32, uint32, void


def clz_of(out, c):
    out[0] = cuda.clz(c)


def brev_of(out, c):
    out[0] = cuda.brev(c)


def store(out, c):
    out[0] = c


@pytest.mark.parametrize(
    "sig, value, expected",
    [
        ("void(int32[:], int32)", 0x00100000, 11),  # clz of a 32-bit value (of int64 it would be 43)
        ("void(int32[:], int32)", 0xFFFFFFFF, 0),  # wraps to -1: no zero bit leads
        ("void(int32[:], int64)", 0x00010000, 47),
        ("void(int32[:], uint32)", 0x80000000, 0),
    ],
)
def test_a_signature_gives_a_scalar_its_declared_width(backend, sig, value, expected):
    k = cuda.jit(sig)(clz_of)
    out = np.full(1, -7, np.int32)
    k[1, 1](out, value)
    assert out[0] == expected


@pytest.mark.parametrize("sig", ["void(uint32[:], uint32)", void(uint32[:], uint32), (uint32[:], uint32)])
def test_every_spelling_of_a_signature_converts(backend, sig):
    k = cuda.jit(sig)(brev_of)
    out = np.zeros(1, np.uint32)
    k[1, 1](out, 0x000030F0)
    assert out[0] == 0x0F0C0000  # reversed in 32 bits, not 64


def test_integers_wrap_and_floats_round_to_the_declared_type(backend):
    k = cuda.jit("void(int64[:], int32)")(store)
    out = np.zeros(1, np.int64)
    k[1, 1](out, 0x80000000)
    assert out[0] == -(2**31)
    f = cuda.jit((float32[:], float32))(store)
    out32 = np.zeros(1, np.float32)
    f[1, 1](out32, 1 / 3)
    assert out32[0] == np.float32(1 / 3)


def test_without_a_signature_or_with_several_the_values_choose(backend):
    k = cuda.jit(store)
    out = np.zeros(1, np.int64)
    k[1, 1](out, 0x80000000)
    assert out[0] == 0x80000000
    several = cuda.jit(["void(int64[:], int32)", "void(int64[:], int64)"])(store)
    several[1, 1](out, 2**40)
    assert out[0] == 2**40


def test_hrcp_is_the_float16_reciprocal(backend):
    @cuda.jit("void(f2[:], f2[:])")
    def rcp(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = cuda.fp16.hrcp(x[i])

    x = np.random.default_rng(0).integers(1, 65505, 32).astype(np.float16)
    r = np.zeros_like(x)
    rcp[1, 32](r, x)
    np.testing.assert_array_equal(r, np.reciprocal(x, dtype=np.float16))


def test_numba_module_paths():
    assert importlib.import_module("gpukern.numba.core.types").f2 is importlib.import_module("gpukern.numba").float16
    for name in ("fp16", "libdevice", "cg"):
        assert importlib.import_module(f"gpukern.numba.cuda.{name}") is getattr(cuda, name)
    assert importlib.import_module("gpukern.numba.core").types.int32 is int32
    errors = importlib.import_module("gpukern.numba.core.errors")
    assert errors.TypingError is importlib.import_module("gpukern").KernelTypeError


def scale(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] = a[i] * 2


@pytest.mark.parametrize("sig", ["void(float32[:], int32)", (float32[:], int32), void(float32[:], int32)])
def test_compile_ptx_gives_the_kernels_ptx(sig):
    from gpukern.backends.nvrtc import library

    if library() is None:
        pytest.skip("NVRTC is not installed")
    ptx, resty = cuda.compile_ptx(scale, sig, cc=(9, 0))
    assert resty is void
    assert ".target sm_90" in ptx and ".entry scale(" in ptx and ".param .u32" in ptx  # (n: an int32)
    assert "mul.f32" in ptx or "add.f32" in ptx


def test_compile_ptx_of_a_device_function_says_what_to_do_instead():
    import gpukern as gk

    with pytest.raises(gk.BackendError, match="compile a kernel that calls it"):
        cuda.compile_ptx(scale, (float32,), device=True)
    with pytest.raises(gk.BackendError, match="PTX only"):
        cuda.compile_ptx(scale, (float32[:], int32), output="ltoir")


def shared_of_an_element(a):
    sa = cuda.shared.array(shape=a[0], dtype=float32)
    a[0] = sa[0]


def test_a_kernel_with_a_signature_is_compiled_when_decorated():
    """As Numba: ``cuda.jit(sig)(f)`` compiles at once, so a kernel's error is raised there (and the
    launch finds the variant made); without a signature, at the first launch."""
    import gpukern as gk

    with pytest.raises(gk.KernelTypeError, match="compile-time shape"):
        cuda.jit((float32[:],))(shared_of_an_element)
    lazy = cuda.jit(shared_of_an_element)  # (no error until launched)
    with pytest.raises(gk.KernelTypeError, match="compile-time shape"):
        lazy[1, 1](np.zeros(1, np.float32))
    k = cuda.jit("void(float32[:], int32)")(scale)
    assert len(k.variants) == 1


def muladd(r, x, y, z):
    r[0] = x * y + z


def test_fma_option_and_inspect_asm():
    """``cuda.jit(sig, fma=False)`` is gpukern's ``fma`` compile option; ``kernel.inspect_asm(sig)``
    and ``numba.cuda.compiler.compile_ptx_for_current_device`` give the PTX (numba-cuda's test_fma)."""
    from gpukern.numba.cuda.compiler import compile_ptx_for_current_device

    from gpukern.backends.nvrtc import library

    if library() is None:
        pytest.skip("NVRTC is not installed")
    sig = (float32[::1], float32, float32, float32)
    fused, plain = cuda.jit(sig)(muladd), cuda.jit(sig, fma=False)(muladd)
    assert "fma.rn.f32" in fused.inspect_asm(sig) and "fma.rn.f32" not in plain.inspect_asm(sig)
    assert "fma.rn.f32" in fused.inspect_asm()  # (the signature it was given)
    assert "fma.rn.f32" not in compile_ptx_for_current_device(muladd, sig, fma=False)[0]


def test_an_argument_the_signature_cannot_take_is_a_launch_error(backend):
    import gpukern as gk

    k = cuda.jit("void(int64[:], float32)")(store)
    with pytest.raises(gk.LaunchError, match="argument 2 is 1j, which does not convert to float32"):
        k[1, 1](np.zeros(1, np.int64), 1j)
