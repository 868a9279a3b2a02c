"""``shared()`` declared in a ``@func`` and ``shared()``/``local()`` bound inside an if or loop.

CUDA's meaning: a ``__shared__`` array declared in a device function is one array per block per
declaration, the same in every call from any call site.  gpukern declares it once in the kernel
and passes it down as a hidden parameter (OpenCL C declares ``__local`` arrays in the kernel only).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, barrier, block_idx, dynamic_shared, float32, int32, local, shared, thread_idx, unroll

N = 64


@gk.func
def reverse_in_block(a, i, t):
    s = shared(int32, N)
    s[t] = a[i]
    barrier()
    return s[N - 1 - t]


@gk.kernel
def k_reverse(a: Array[int32], out: Array[int32]):
    t = thread_idx.x
    i = block_idx.x * N + t
    out[i] = reverse_in_block(a, i, t)


@gk.kernel
def k_reverse_twice(a: Array[int32], out: Array[int32]):
    """A second kernel calling the same @func: its own declaration of the array."""
    t = thread_idx.x
    i = block_idx.x * N + t
    r = reverse_in_block(a, i, t)
    barrier()
    out[i] = r + reverse_in_block(a, i, t)


def _blocks_reversed(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, N)[:, ::-1].reshape(-1)


def test_block_reverse_in_a_func(backend):
    a = np.arange(3 * N, dtype=np.int32)
    out = np.zeros_like(a)
    k_reverse[3, N](a, out)
    np.testing.assert_array_equal(out, _blocks_reversed(a))


def test_two_kernels_calling_the_same_func(backend):
    a = np.arange(2 * N, dtype=np.int32) * 3
    out = np.zeros_like(a)
    k_reverse_twice[2, N](a, out)
    np.testing.assert_array_equal(out, 2 * _blocks_reversed(a))
    out[:] = 0
    k_reverse[2, N](a, out)
    np.testing.assert_array_equal(out, _blocks_reversed(a))


@gk.func
def mailbox(t, v, write):
    """Posts ``v`` when ``write``, else reads what the mirror thread posted: the same array in every call."""
    box = shared(int32, N)
    got = 0
    if write != 0:
        box[t] = v
    else:
        got = box[N - 1 - t]
    return got


@gk.func
def read_back(t):
    return mailbox(t, 0, 0)


@gk.kernel
def k_mailbox(a: Array[int32], out: Array[int32], out2: Array[int32]):
    t = thread_idx.x
    i = block_idx.x * N + t
    mailbox(t, a[i], 1)  # first call site: posts
    barrier()
    out[i] = mailbox(t, 0, 0)  # second call site: reads the first call's values
    out2[i] = read_back(t)  # through another @func: the same array


def test_calls_from_two_call_sites_share_the_array(backend):
    a = np.arange(2 * N, dtype=np.int32) + 100
    out, out2 = np.zeros_like(a), np.zeros_like(a)
    k_mailbox[2, N](a, out, out2)
    np.testing.assert_array_equal(out, _blocks_reversed(a))
    np.testing.assert_array_equal(out2, _blocks_reversed(a))
    src = k_mailbox.source(a, out, out2, backend="cuda")
    assert src.count("__shared__") == 1  # one array for the declaration, however many calls


@gk.func
def outer(a, i, t):
    return reverse_in_block(a, i, t) * 2


@gk.kernel
def k_outer(a: Array[int32], out: Array[int32]):
    t = thread_idx.x
    i = block_idx.x * N + t
    out[i] = outer(a, i, t)


def test_func_calling_a_func_that_declares_shared(backend):
    a = np.arange(2 * N, dtype=np.int32)
    out = np.zeros_like(a)
    k_outer[2, N](a, out)
    np.testing.assert_array_equal(out, 2 * _blocks_reversed(a))
    src = k_outer.source(a, out, backend="opencl")
    assert "__local int reverse_in_block_s[64];" in src  # declared in the kernel
    assert "__local int reverse_in_block_s[64])" in src  # the middle @func passes it along
    assert "__local int s[64])" in src  # the declaring @func's parameter keeps the user's name


def test_sources_hold_the_hoisted_declaration():
    a = np.zeros(N, np.int32)
    cuda = k_reverse.source(a, a, backend="cuda")
    assert "__shared__ int reverse_in_block_s[64];" in cuda
    assert "int s[64])" in cuda
    assert "reverse_in_block(a, a_shape0, i, t, reverse_in_block_s)" in cuda
    opencl = k_reverse.source(a, a, backend="opencl")
    assert "__local int reverse_in_block_s[64];" in opencl
    assert "__local int s[64])" in opencl


@gk.kernel
def k_shared_in_if(a: Array[int32], out: Array[int32]):
    t = thread_idx.x
    i = block_idx.x * N + t
    if block_idx.x % 2 == 0:  # the same in every thread of a block: the barrier is reached by all
        shr = shared(int32, N)
        shr[t] = a[i]
        barrier()
        out[i] = shr[N - 1 - t]
    else:
        out[i] = a[i]


def test_shared_inside_an_if(backend):
    a = np.arange(4 * N, dtype=np.int32)
    out = np.zeros_like(a)
    k_shared_in_if[4, N](a, out)
    want = _blocks_reversed(a).reshape(4, N)
    want[1::2] = a.reshape(4, N)[1::2]
    np.testing.assert_array_equal(out, want.reshape(-1))
    assert "__shared__ int shr[64];" in k_shared_in_if.source(a, out, backend="cuda")


@gk.kernel
def k_shared_in_loops(a: Array[int32], out: Array[int32]):
    t = thread_idx.x
    acc = 0
    for k in range(2):
        s = shared(int32, N)
        s[t] = a[t] + k
        barrier()
        acc += s[N - 1 - t]
        barrier()
    for j in unroll(range(3)):
        r = local(int32, 3)  # one array for the source's one declaration, in every unrolled copy
        r[j] = j
    out[t] = acc + r[0] + r[1] + r[2]


def test_shared_and_local_inside_loops(backend):
    a = np.arange(N, dtype=np.int32)
    out = np.zeros_like(a)
    k_shared_in_loops[1, N](a, out)
    np.testing.assert_array_equal(out, 2 * a[::-1] + 1 + 3)
    src = k_shared_in_loops.source(a, out, backend="cuda")
    assert src.count("__shared__") == 1 and src.count("int r[3];") == 1


@gk.func
def private_sum(t):
    r = local(int32, 2)  # local() in a @func: per call, per thread
    r[0] = t
    r[1] = t * 2
    return r[0] + r[1]


@gk.kernel
def k_private(out: Array[int32]):
    t = thread_idx.x
    out[t] = private_sum(t) + private_sum(t + 1)


def test_local_in_a_func_is_per_call(backend):
    out = np.zeros(N, np.int32)
    k_private[1, N](out)
    t = np.arange(N)
    np.testing.assert_array_equal(out, 3 * t + 3 * (t + 1))


@gk.func
def reverse_dynamic(t, n):
    s = dynamic_shared(float32)  # the launch's dynamic shared memory, as in the kernel
    s[t] = t
    barrier()
    return s[n - 1 - t]


@gk.kernel
def k_dynamic(out: Array[float32]):
    t = thread_idx.x
    out[t] = reverse_dynamic(t, N)


def test_dynamic_shared_in_a_func(backend):
    out = np.zeros(N, np.float32)
    k_dynamic[1, N, N * 4](out)
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32)[::-1])


@gk.func
def racy(t):
    s = shared(int32, 4)
    s[0] = t  # every thread of the block writes one element, with no barrier
    return s[0]


@gk.kernel
def k_racy(out: Array[int32]):
    t = thread_idx.x
    out[t] = racy(t)


def test_race_inside_the_func_is_reported(on_simulator):
    with pytest.raises(gk.DataRaceError, match="racy_s"):
        k_racy[1, 8](np.zeros(8, np.int32))


@gk.kernel
def k_after_if(out: Array[int32]):
    t = thread_idx.x
    if t < 4:
        s = shared(int32, 8)
        s[t] = 1
    out[t] = s[t]


@gk.kernel
def k_array_and_number(out: Array[int32]):
    t = thread_idx.x
    if t < 4:
        s = shared(int32, 8)
        s[t] = 1
    else:
        s = 3
        out[t] = s


@gk.kernel
def k_arithmetic_on_a_declaration(out: Array[int32]):
    out[0] = shared(int32, 8) + 1


@gk.func
def dynamic_length(t):
    s = dynamic_shared(float32)
    return len(s)


@gk.kernel
def k_dynamic_length(out: Array[float32]):
    out[0] = dynamic_length(thread_idx.x)


@pytest.mark.parametrize(
    ("kernel", "dtype", "words"),
    [
        (k_after_if, np.int32, "bind it at the top level"),
        (k_array_and_number, np.int32, "use another name"),
        (k_arithmetic_on_a_declaration, np.int32, r"a new shared\(int32, \(8,\)\) array"),
        (k_dynamic_length, np.float32, "pass it to the @func"),
    ],
)
def test_refusals_say_what_to_write(kernel, dtype, words):
    with pytest.raises(gk.KernelTypeError, match=words) as e:
        kernel.source(np.zeros(8, dtype), backend="cuda")
    assert not re.search(r"\bshared_\d", str(e.value))  # never the compiler's own name for the array


# ---------------------------------------------------------------- sizes and types passed to a @func
# Numba-CUDA programs write ``cuda.shared.array(n, dtype)`` in a device function whose n and dtype the
# caller passes as constants (issue 32: "shared() needs a compile-time shape"); the function is then
# specialised on them, through as many @funcs as pass them on.


@gk.func
def _block_sum(x, n, dtype):
    s = shared(dtype, n)
    t = thread_idx.x
    s[t] = x[block_idx.x * n + t]
    barrier()
    stride = n // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        barrier()
        stride //= 2
    return s[0]


@gk.func
def _sum_of_float32(x, m):
    return _block_sum(x, m, np.float32)  # m goes on to a shape: specialised here too


@gk.kernel
def k_sums_sized_by_caller(x: Array[float32], out: Array[float32]):
    a = _sum_of_float32(x, 64)
    b = _block_sum(x, 64, np.float64)  # a second type: a second specialisation, a second array
    if thread_idx.x == 0:
        out[block_idx.x] = a + b


def test_a_funcs_shared_size_and_type_come_from_its_callers_constants(backend):
    x = np.random.default_rng(5).integers(-50, 50, 128).astype(np.float32)
    out = np.zeros(2, np.float32)
    k_sums_sized_by_caller[2, 64](x, out)
    blocks = x.reshape(2, 64)
    np.testing.assert_array_equal(out, 2 * blocks.sum(1))  # integers: exact in both types
    assert _block_sum.compile_time_params == {"n", "dtype"} and _sum_of_float32.compile_time_params == {"m"}
    source = k_sums_sized_by_caller.source(x, out)
    assert source.count("_block_sum") >= 2 and "double" in source  # one function per type


@gk.func
def _sized_at_run_time(x, n):
    s = shared(float32, n)  # RUNTIME
    s[0] = x[0]
    return s[0]


@gk.kernel
def k_size_from_an_argument(x: Array[float32], n: int32):
    x[1] = _sized_at_run_time(x, n)


def test_a_size_known_only_at_run_time_is_still_refused_at_the_line():
    with pytest.raises(gk.KernelTypeError, match=r"shared\(\) needs a compile-time shape") as e:
        k_size_from_an_argument.source(np.zeros(2, np.float32), 4)
    import inspect

    lines, first = inspect.getsourcelines(_sized_at_run_time.fn)
    assert e.value.lineno == first + next(k for k, text in enumerate(lines) if "# RUNTIME" in text)


@gk.func
def _four_at(a, i, out, at: gk.Const[int], n):
    """Load n elements (a vload's width) into out[at:at + n]: at is an offset into a local array."""
    q = gk.vload(a, i, n)
    for j in gk.unroll(range(n)):
        out[at + j] = q[j]


@gk.kernel
def _gather_twice(a: gk.Array[gk.float32], y: gk.Array[gk.float32]):
    t = gk.thread_idx.x
    v = gk.local(gk.float32, 8)
    _four_at(a, t * 8, v, 0, 4)
    _four_at(a, t * 8 + 4, v, 4, 4)
    for j in gk.unroll(range(8)):
        y[t * 8 + j] = v[7 - j] * 2


def test_a_func_takes_vload_widths_and_const_offsets_as_constants():
    """A vload's width and a Const[int] offset into a local array are the caller's constants: the
    local array stays indexed by constants (registers), and each offset is its own specialisation."""
    assert _four_at.compile_time_params == frozenset({"at", "n"})
    a = np.arange(64, dtype=np.float32)
    y = gk.to_device(np.zeros(64, np.float32))
    _gather_twice[1, 8](gk.to_device(a), y)
    np.testing.assert_array_equal(y.get(), (a.reshape(8, 8)[:, ::-1] * 2).ravel())
    src = _gather_twice.source(gk.Array[gk.float32], gk.Array[gk.float32])
    assert "out[4] = a_v.x;" in src and "_four_at_2(" in src  # at 4: its own specialisation, a constant index


@gk.func
def _double_first(v, n):
    """Doubles v[0:n]: n is used only as an unroll's bound."""
    for j in gk.unroll(range(n)):
        v[j] = v[j] * 2


@gk.kernel
def _doubled(y: gk.Array[gk.float32]):
    v = gk.local(gk.float32, 4)
    for j in gk.unroll(range(4)):
        v[j] = y[gk.thread_idx.x * 4 + j]
    _double_first(v, 3)
    for j in gk.unroll(range(4)):
        y[gk.thread_idx.x * 4 + j] = v[j]


def test_an_unroll_bound_is_the_callers_constant():
    assert _double_first.compile_time_params == frozenset({"n"})
    y = gk.to_device(np.arange(8, dtype=np.float32))
    _doubled[1, 2](y)
    np.testing.assert_array_equal(y.get(), [0, 2, 4, 3, 8, 10, 12, 7])
