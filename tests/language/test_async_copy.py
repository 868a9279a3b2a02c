"""Asynchronous copies global -> shared: ``async_copy``, ``async_commit``, ``async_wait``.

A double-buffered tiled matmul (the next tiles' copies issued before the current tiles are used)
and vector-wide copies against NumPy on every backend; on the simulator, each misuse reported
as a data race (a read of the destination before the wait, another thread's read after the wait
but before a barrier, a write to either end while the copy is in flight), no uninitialised read
after a proper wait, and the profiler's counts; the CUDA C (``__pipeline_memcpy_async``) compiled
for sm_80 and sm_90; what the front end refuses.
"""

from __future__ import annotations

import numpy as np
import pytest
from compilers import COMPILERS as _COMPILERS
from kernel_source import load_kernel

import gpukern as gk
from gpukern import Array, barrier, block_idx, float32, float64, shared, thread_idx
from gpukern.backends.cuda_compile import cubin
from gpukern.types import from_dtype

T = 8  # tile edge: blocks of T x T threads


@gk.kernel
def matmul_async(a, b, c):
    """c = a @ b, square tiles staged in shared memory by asynchronous copies, two stages: the
    copies of tile t + 1 are in flight while tile t is multiplied."""
    tx, ty = thread_idx.x, thread_idx.y
    row = block_idx.y * T + ty
    col = block_idx.x * T + tx
    sa = shared(float32, (2, T, T))
    sb = shared(float32, (2, T, T))
    tiles = a.shape[1] // T
    gk.async_copy(sa[0, ty, tx], a[row, tx])
    gk.async_copy(sb[0, ty, tx], b[ty, col])
    gk.async_commit()
    acc = float32(0)
    for t in range(tiles):
        cur = t % 2
        if t + 1 < tiles:
            nxt = sa[1 - cur]  # a view of the other stage
            gk.async_copy(nxt[ty, tx], a[row, (t + 1) * T + tx])
            gk.async_copy(sb[1 - cur, ty, tx], b[(t + 1) * T + ty, col])
            gk.async_commit()
            gk.async_wait(1)  # tile t has landed; tile t + 1 may still be in flight
        else:
            gk.async_wait(0)
        barrier()  # the other threads' copies of tile t
        for k in range(T):
            acc += sa[cur, ty, k] * sb[cur, k, tx]
        barrier()  # everyone is done with stage cur before it is copied into again
    c[row, col] = acc


@pytest.mark.parametrize("m, n, k", [(8, 8, 8), (16, 24, 32)])
def test_double_buffered_matmul(backend, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.zeros((m, n), np.float32)
    matmul_async[(n // T, m // T), (T, T)](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _reverse_vectors(elem):
    @gk.kernel
    def reverse_vectors(x, out, w: gk.Const[int]):
        """Each thread copies w elements asynchronously; after the wait and a barrier, the block writes
        its chunk back reversed (each thread reading another's copy)."""
        t = thread_idx.x
        n = block_idx.x * 32 * w
        s = shared(elem, 32 * w)
        gk.async_copy(s[t * w], x[n + t * w], count=w)
        gk.async_commit()
        gk.async_wait()
        barrier()
        for j in range(w):
            out[n + t * w + j] = s[32 * w - 1 - t * w - j]

    return reverse_vectors


REVERSE = {
    np.dtype(t): _reverse_vectors(from_dtype(np.dtype(t)))
    for t in (np.float32, np.float64, np.int32, np.float16, np.int8, np.uint64)
}


@pytest.mark.parametrize("dtype, w", [(np.float32, 1), (np.float32, 2), (np.float32, 4), (np.float64, 1),
                                      (np.float64, 2), (np.int32, 4), (np.float16, 2), (np.float16, 8),
                                      (np.int8, 16), (np.int8, 4), (np.uint64, 2)])  # fmt: skip
def test_vector_copies(backend, dtype, w):
    x = np.arange(2 * 32 * w).astype(dtype)
    out = np.zeros_like(x)
    REVERSE[x.dtype][2, 32](x, out, w)
    np.testing.assert_array_equal(out, x.reshape(2, -1)[:, ::-1].ravel())


# ---------------------------------------------------------------- misuse on the simulator
@gk.kernel
def misuse(x, out, case: gk.Const[int]):
    t = thread_idx.x
    s = shared(float32, 64)
    s[t + 32] = float32(0)
    gk.async_copy(s[t], x[t])
    gk.async_commit()
    if case == 0:  # the issuing thread reads before its wait
        out[t] = s[t]
    elif case == 1:  # another thread's copy: waited for by its thread, but no barrier since
        gk.async_wait(0)
        out[t] = s[(t + 1) % 32]
    elif case == 2:  # a barrier alone does not wait for the copies
        barrier()
        out[t] = s[(t + 1) % 32]
    elif case == 3:  # the destination written while the copy is in flight
        s[t] = float32(1)
    elif case == 4:  # the source written while the copy is in flight
        x[t] = float32(1)
    elif case == 5:  # a second copy into the destination while the first is in flight
        gk.async_copy(s[t], x[t + 32])
    elif case == 6:  # async_wait(1) leaves the latest group in flight
        gk.async_copy(s[t + 32], x[t + 32])
        gk.async_commit()
        gk.async_wait(1)
        out[t] = s[t] + s[t + 32]
    elif case == 7:  # an uncommitted copy is not covered by the wait
        gk.async_copy(s[t + 32], x[t + 32])
        gk.async_wait(0)
        out[t] = s[t] + s[t + 32]
    elif case == 8:  # correct: own copy after the wait, others' after wait + barrier
        gk.async_wait(0)
        v = s[t]
        barrier()
        out[t] = v + s[(t + 1) % 32]
    gk.async_wait(0)


MISUSES = {
    0: r"read by block \(0, 0, 0\), thread \(0, 0, 0\) at line \d+ while the asynchronous copy into it started "
    r"by this thread at line \d+ is in flight \(before its async_wait\)",
    1: r"read by .* after block \(0, 0, 0\), thread \(1, 0, 0\) copied into it asynchronously \(landed at its "
    r"async_wait\)",
    2: r"asynchronous copy into it started by block \(0, 0, 0\), thread \(1, 0, 0\) .*before its async_wait",
    3: r"'s'\[0\]: written by .* while the asynchronous copy into it .*\(before its async_wait",
    4: r"'x'\[0\]: written by .* while the asynchronous copy from it .*\(before its async_wait",
    5: r"copied into asynchronously by .* while the asynchronous copy into it .*\(before its async_wait",
    6: r"'s'\[32\]: read by .* asynchronous copy into it .*\(before its async_wait",
    7: r"'s'\[32\]: read by .* asynchronous copy into it .*\(before its async_wait",
}


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_misuse_is_a_race(on_simulator, case):
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(gk.DataRaceError, match=MISUSES[case]):
        misuse[1, 32](x, np.zeros(32, np.float32), case)


def test_proper_wait_is_neither_race_nor_uninitialised(on_simulator):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(32, np.float32)
    misuse[1, 32](x, out, 8)
    np.testing.assert_array_equal(out, x[:32] + np.roll(x[:32], -1))


def test_destination_written_only_when_landed(on_simulator):
    """Under gk.sanitize (faults collected, the run goes on), a read before the wait is first of all a
    race (the in-flight step comes first); the element is also unwritten, since the copy has not landed."""
    x = np.arange(64, dtype=np.float32)
    faults = gk.sanitize(misuse[1, 32], x, np.zeros(32, np.float32), 0)
    assert isinstance(faults[0], gk.DataRaceError) and "before its async_wait" in str(faults[0])
    assert [type(f) for f in faults[1:]] == [gk.UninitializedReadError]


@gk.kernel
def plain_copy(x, out):
    t = thread_idx.x + block_idx.x * 64
    s = shared(float32, 64)
    s[thread_idx.x] = x[t]
    barrier()
    out[t] = s[63 - thread_idx.x]


@gk.kernel
def async_copy_kernel(x, out):
    t = thread_idx.x + block_idx.x * 64
    s = shared(float32, 64)
    gk.async_copy(s[thread_idx.x], x[t])
    gk.async_commit()
    gk.async_wait(0)
    barrier()
    out[t] = s[63 - thread_idx.x]


def test_profiler_counts_copies_as_global_loads_and_no_shared_stores():
    """cp.async (LDGSTS) is a global load request, as Nsight Compute counts it, and writes shared
    memory through no store instruction: ncu counts no shared-store wavefronts for it."""
    x = np.arange(256, dtype=np.float32)
    plain = gk.profile(plain_copy[4, 64], x, np.zeros_like(x)).summary()
    copied = gk.profile(async_copy_kernel[4, 64], x, np.zeros_like(x)).summary()
    for key in ("global_load_requests", "global_load_sectors", "global_load_bytes", "shared_load_elems",
                "global_store_sectors"):  # fmt: skip
        assert copied[key] == plain[key], key
    assert copied["global_load_sectors"] == 256 * 4 // 32
    assert plain["shared_store_wavefronts"] > 0 and copied["shared_store_wavefronts"] == 0


# ---------------------------------------------------------------- CUDA C
def test_cuda_source_uses_the_pipeline_primitives():
    src = matmul_async.source(Array[float32, 2], Array[float32, 2], Array[float32, 2], backend="cuda")
    assert "#include <cuda_pipeline.h>" in src
    assert "__pipeline_memcpy_async(&sa[0][ty][tx], &a[row * a_shape1 + tx], 4);" in src
    assert "__pipeline_commit();" in src and "__pipeline_wait_prior(1);" in src and "__pipeline_wait_prior(0);" in src
    vec = REVERSE[np.dtype(np.float64)].source(Array[float64], Array[float64], 2, backend="cuda")
    assert "__pipeline_memcpy_async(" in vec and ", 16);" in vec
    ocl = REVERSE[np.dtype(np.float64)].source(Array[float64], Array[float64], 2, backend="opencl")
    assert "vstore2(" in ocl and "async" not in ocl.split("__kernel")[1].split("//")[0]


@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@pytest.mark.skipif(not _COMPILERS, reason="no CUDA compiler")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_75"])
def test_cuda_source_compiles(arch):
    """sm_80 and later copy asynchronously; before, the primitives copy at once (and still compile)."""
    sources = [
        matmul_async.source(
            Array[float32, 2], Array[float32, 2], Array[float32, 2], backend="cuda", line_directives=True
        ),
        REVERSE[np.dtype(np.float32)].source(Array[float32], Array[float32], 4, backend="cuda", line_directives=True),
        REVERSE[np.dtype(np.float64)].source(Array[float64], Array[float64], 2, backend="cuda", line_directives=True),
        REVERSE[np.dtype(np.float16)].source(
            Array[gk.float16], Array[gk.float16], 8, backend="cuda", line_directives=True
        ),
    ]
    for src in sources:
        for compiler in _COMPILERS:
            assert cubin(src, arch, compiler=compiler)


# ---------------------------------------------------------------- refusals
def _refused(body: str, match: str) -> None:
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import float32, float64, shared\n\n\n@gk.kernel\ndef k(x, y):\n"
        f"    t = gk.thread_idx.x\n    s = shared(float32, 64)\n    d = shared(float64, 64)\n    {body}\n"
    )
    with pytest.raises(gk.KernelTypeError, match=match):
        k.source(Array[float32], Array[float32], backend="opencl")


@pytest.mark.parametrize(
    "body, match",
    [
        ("gk.async_copy(y[t], x[t])", r"copies into shared memory; 'y' is a global array"),
        ("gk.async_copy(s[t], s[t + 1])", r"copies from global memory .*'s' is a shared array"),
        ("gk.async_copy(d[t], x[t])", r"one element type: 'd' holds float64, 'x' float32"),
        ("gk.async_copy(s[t], x[t], count=3)", r"a copy moves 4, 8 or 16 bytes"),
        ("gk.async_copy(d[t], d[t], count=4)", r"copies from global memory"),
        ("gk.async_copy(s, x)", r"names its destination as one array element"),
        ("gk.async_copy(s[t], x[t] + 1)", r"names its source as one array element"),
        ("gk.async_copy(s[1], x[t], count=2)", r"index 1 of 's', which is not a multiple of 2"),
        ("gk.async_copy(s[t], x[t], 2, count=2)", r"async_copy\(\) got count twice"),
        ("gk.async_copy(s[t], x[t], 2, 4)", r"takes at most 3 arguments, 4 given"),
        ("gk.async_copy(s[t])", r"needs src: async_copy\(dst, src, count\)"),
        ("gk.async_copy(s[t], x[t], count=t)", r"a copy moves 4, 8 or 16 bytes"),
        ("gk.async_wait(t)", r"a constant from 0 to 7"),
        ("gk.async_wait(8)", r"a constant from 0 to 7"),
    ],
)
def test_refusals(body, match):
    _refused(body, match)


def test_count_is_the_third_argument_by_position_or_keyword():
    sources = [
        load_kernel(
            "import gpukern as gk\nfrom gpukern import float32, shared\n\n\n@gk.kernel\ndef k(x):\n"
            f"    s = shared(float32, 64)\n    gk.async_copy({args})\n    gk.async_wait(0)\n"
        ).source(Array[float32], backend="cuda")
        for args in ("s[0], x[0], 4", "s[0], x[0], count=4", "dst=s[0], src=x[0], count=4")
    ]
    copies = [[ln.split("//")[0] for ln in src.splitlines() if "memcpy_async" in ln] for src in sources]
    assert copies[0] == copies[1] == copies[2] and len(copies[0]) == 1, copies
    assert copies[0][0].rstrip().endswith(", 16);"), copies  # 4 floats: a 16-byte copy


def test_refuses_eight_byte_elements_four_at_a_time():
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import float64, shared\n\n\n@gk.kernel\ndef k(x):\n"
        "    s = shared(float64, 64)\n    gk.async_copy(s[0], x[0], count=4)\n"
    )
    with pytest.raises(gk.KernelTypeError, match=r"of 4 float64 element\(s\): a copy moves 4, 8 or 16 bytes"):
        k.source(Array[float64], backend="cuda")


def test_a_constant_column_of_a_2d_array_is_checked_at_run_time(on_simulator):
    """A constant last index of a 2-D array is not the flat offset: s[1, 1] of 3 columns is element
    4, aligned for 2 elements, so the front end leaves it to the run-time check (it refused it);
    s[1, 0] (element 3) is reported there as misaligned."""
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import float32, shared\n\n\n@gk.kernel\ndef k(x, y, COL: gk.Const[int]):\n"
        "    s = shared(float32, (4, 3))\n    if gk.thread_idx.x == 0:\n"
        "        gk.async_copy(s[1, COL], x[0], count=2)\n        gk.async_commit()\n        gk.async_wait(0)\n"
        "        y[0] = s[1, COL] + s[1, COL + 1]\n"
    )
    y = np.zeros(1, np.float32)
    k[1, 32](np.array([1.0, 2.0], np.float32), y, 1)
    assert y[0] == 3.0
    with pytest.raises(gk.MisalignedAccessError):
        k[1, 32](np.array([1.0, 2.0], np.float32), y, 0)


@gk.kernel
def k_copy_bf16(x: gk.Array[gk.bfloat16], y: gk.Array[gk.bfloat16]):
    s = gk.shared(gk.bfloat16, 256)
    t = gk.thread_idx.x
    gk.async_copy(s[8 * t], x[8 * t], 8)  # 16 bytes of bfloat16: their bits
    gk.async_commit()
    gk.async_wait(0)
    gk.barrier()
    for i in range(8):
        y[8 * t + i] = s[8 * ((t + 1) % 32) + i]


def test_bfloat16_copies_move_the_bits(backend):
    import ml_dtypes

    bits = np.random.default_rng(3).integers(0, 2**16, 256).astype(np.uint16)
    bits[:4] = [0x7FC1, 0xFF81, 0x0001, 0x8000]  # NaN payloads, a subnormal, -0
    x = bits.view(ml_dtypes.bfloat16)
    y = np.zeros(256, ml_dtypes.bfloat16)
    k_copy_bf16[1, 32](x, y)
    np.testing.assert_array_equal(y.view(np.uint16), np.roll(bits, -8))
