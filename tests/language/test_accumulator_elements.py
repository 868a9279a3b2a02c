"""A thread's elements of a warpgroup accumulator (``acc[i]``, ``gk.acc_row``, ``gk.acc_col``): which
(row, column) each is, read and written like numbers, a row's maximum across the four lanes that hold
it, a causal mask -- the pieces of an attention kernel's softmax -- on the simulator and an sm_90 GPU."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, float16, float32
from gpukern.semantics import wgmma as wgmma_ops

N = 32  # the accumulator's columns: a thread holds N // 2 = 16 elements
KS = 64  # one 128-byte row of A's atoms


def _need_wgmma(backend):
    if backend == "opencl":
        pytest.skip("OpenCL has no matrix units in gpukern")
    if backend == "cuda" and getattr(gk.get_backend(), "arch", None) != "sm_90":
        pytest.skip("wgmma needs an sm_90 GPU")


@gk.kernel
def k_elements(a: Array[float16, 2], b: Array[float16, 2], c: Array[float32, 2], rowmax: Array[float32]):
    """C = causal-masked (A @ B) * 0.5 written element by element, and each row's maximum."""
    s = gk.dynamic_shared(float16)
    t = gk.thread_idx.x
    for e in range(t, 64 * KS, 128):
        s[gk.swizzle128(e // KS, e % KS, KS, 8)] = a[e // KS, e % KS]
    for e in range(t, KS * N, 128):
        s[64 * KS + gk.swizzle128(e % N, e // N, KS, 8)] = b[e // N, e % N]  # B stored n x k
    gk.barrier()
    acc = gk.fragment("accumulator", 64, N, 16, float32)
    gk.fill_fragment(acc, 0.0)
    for kk in gk.unroll(range(0, KS, 16)):
        acc = gk.wgmma(acc, s, kk, s, 64 * KS + kk)
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    m0 = float32(-np.inf)  # this thread's row r (h = 0) and r + 8 (h = 1)
    m1 = float32(-np.inf)
    for i in gk.unroll(range(N // 2)):
        acc[i] *= 0.5
        if gk.acc_col(acc, i) > gk.acc_row(acc, i):
            acc[i] = -np.inf  # the causal mask
        if (i // 2) % 2 == 0:
            m0 = max(m0, acc[i])
        else:
            m1 = max(m1, acc[i])
    for d in gk.unroll(range(2)):  # across the 4 lanes holding the row: lanes 1 and 2 apart
        m0 = max(m0, gk.shfl_xor_sync(0xFFFFFFFF, m0, 1 << d))
        m1 = max(m1, gk.shfl_xor_sync(0xFFFFFFFF, m1, 1 << d))
    for i in gk.unroll(range(N // 2)):
        c[gk.acc_row(acc, i), gk.acc_col(acc, i)] = acc[i]
    if gk.lane_id() % 4 == 0:
        rowmax[gk.acc_row(acc, 0)] = m0
        rowmax[gk.acc_row(acc, 2)] = m1


def test_position_is_the_documented_layout():
    thread = np.arange(128)
    for i in range(8):
        row, col = wgmma_ops.position(thread, i)
        w, g, t = thread // 32, thread % 32 // 4, thread % 4
        np.testing.assert_array_equal(row, 16 * w + g + 8 * ((i // 2) % 2))
        np.testing.assert_array_equal(col, 8 * (i // 4) + 2 * t + i % 2)
    # every (row, column) of a 64 x 16 accumulator is one thread's one element
    cells = {(int(r), int(c)) for i in range(8) for r, c in zip(*wgmma_ops.position(thread, i))}
    assert len(cells) == 64 * 16


def test_elements_rows_and_columns(backend):
    _need_wgmma(backend)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, KS)).astype(np.float16)
    b = rng.standard_normal((KS, N)).astype(np.float16)
    c = np.full((64, N), np.nan, np.float32)
    rowmax = np.zeros(64, np.float32)
    k_elements[1, 128, 2 * (64 * KS + KS * N)](a, b, c, rowmax)
    want = (a.astype(np.float64) @ b.astype(np.float64)) * 0.5
    want[np.triu_indices(64, 1, N)] = -np.inf
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(rowmax, np.max(want, axis=1), rtol=1e-3, atol=1e-3)


def test_the_c_names_the_register():
    src = k_elements.source(np.zeros((64, KS), np.float16), np.zeros((KS, N), np.float16),
                            np.zeros((64, N), np.float32), np.zeros(64, np.float32))  # fmt: skip
    assert "acc.x[15]" in src and "acc.x[3] = " in src


@gk.kernel
def k_too_early(a: Array[float16, 2], out: Array[float32]):
    s = gk.shared(float16, 64 * 64 + 64 * 16)
    for e in range(gk.thread_idx.x, 64 * 64 + 64 * 16, 128):
        s[e] = a[0, 0]
    gk.barrier()
    acc = gk.fragment("accumulator", 64, 16, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 0, s, 64 * 64)
    gk.wgmma_commit()
    out[gk.thread_idx.x] = acc[0]  # read while the wgmma into it is in flight
    gk.wgmma_wait(0)


def test_an_element_read_in_flight_is_a_race(on_simulator):
    with pytest.raises(gk.DataRaceError, match=r"accumulator 'acc': acc\[i\]"):
        k_too_early[1, 128](np.zeros((64, 64), np.float16), np.zeros(128, np.float32))


@pytest.mark.parametrize(
    "src, message",
    [
        ("x = acc[16]", r"a thread holds 16 elements of 'acc' \(n / 2\), indexed by a constant 0 to 15"),
        ("x = acc[gk.thread_idx.x]", r"indexed by a constant"),
        ("x = f[0]", r"only a warpgroup accumulator"),
        ("x = gk.acc_row(f, 0)", r"only a warpgroup accumulator"),
    ],
)
def test_misuse_is_a_clear_error(src, message):
    k = load_kernel(
        "import gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.float32]):\n"
        "    acc = gk.fragment('accumulator', 64, 32, 16, gk.float32)\n"
        "    f = gk.fragment('accumulator', 16, 16, 16, gk.float32)\n"
        f"    {src}\n    out[0] = x\n",
        "acc_elements",
    )
    with pytest.raises(gk.KernelTypeError, match=message) as info:
        k.variant(k.signature_of((np.zeros(1, np.float32),)))
    assert info.value.lineno == line_of(k, src)


# ---------------------------------------------------------------- A from registers: P @ V
D = 64  # head dimension: Q, K, V are 64 x 64 (64 queries, 64 keys)


def make_attention_tile(T):
    """O = P @ V with P = exp(Q K^T / 8 - rowmax) computed in registers and fed to wgmma as A without
    a trip through shared memory (one tile of FlashAttention's forward pass), and l = P's row sums."""

    @gk.kernel
    def tile(q: Array[T, 2], k: Array[T, 2], v: Array[T, 2], o: Array[float32, 2], lsum: Array[float32]):
        s = gk.dynamic_shared(T)
        t = gk.thread_idx.x
        for e in range(t, 64 * D, 128):
            r = e // D
            c = e % D
            s[gk.swizzle128(r, c, D, 8)] = q[r, c]  # Q: K-major A
            s[64 * D + gk.swizzle128(r, c, D, 8)] = k[r, c]  # K (keys x d): K-major B of Q K^T
            s[128 * D + gk.swizzle128(r, c, D, 8)] = v[r, c]  # V (keys x d): row-major B of P V
        gk.barrier()
        sc = gk.fragment("accumulator", 64, 64, 16, float32)
        gk.fill_fragment(sc, 0.0)
        for kk in gk.unroll(range(0, D, 16)):
            sc = gk.wgmma(sc, s, kk, s, 64 * D + kk)
        gk.wgmma_commit()
        gk.wgmma_wait(0)
        m0 = float32(-np.inf)
        m1 = float32(-np.inf)
        for i in gk.unroll(range(32)):
            if (i // 2) % 2 == 0:
                m0 = max(m0, sc[i])
            else:
                m1 = max(m1, sc[i])
        for d in gk.unroll(range(2)):
            m0 = max(m0, gk.shfl_xor_sync(0xFFFFFFFF, m0, 1 << d))
            m1 = max(m1, gk.shfl_xor_sync(0xFFFFFFFF, m1, 1 << d))
        l0 = float32(0)
        l1 = float32(0)
        for i in gk.unroll(range(32)):
            if (i // 2) % 2 == 0:
                sc[i] = np.exp2((sc[i] - m0) * 0.125)
                l0 += sc[i]
            else:
                sc[i] = np.exp2((sc[i] - m1) * 0.125)
                l1 += sc[i]
        for d in gk.unroll(range(2)):
            l0 += gk.shfl_xor_sync(0xFFFFFFFF, l0, 1 << d)
            l1 += gk.shfl_xor_sync(0xFFFFFFFF, l1, 1 << d)
        acc = gk.fragment("accumulator", 64, D, 16, float32)
        gk.fill_fragment(acc, 0.0)
        for step in gk.unroll(range(4)):  # P's 16 columns (keys) a step, from the registers
            acc = gk.wgmma(acc, sc, step, s, 128 * D + 16 * step * D, b_width=D)
        gk.wgmma_commit()
        gk.wgmma_wait(0)
        gk.store_matrix(o, (0, 0), acc)
        if gk.lane_id() % 4 == 0:
            lsum[gk.acc_row(sc, 0)] = l0
            lsum[gk.acc_row(sc, 2)] = l1

    return tile


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_p_times_v_from_registers(backend, dtype):
    _need_wgmma(backend)
    import ml_dtypes

    T = gk.float16 if dtype == "float16" else gk.bfloat16
    host = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((64, D)).astype(host) for _ in range(3))
    o, lsum = np.zeros((64, D), np.float32), np.zeros(64, np.float32)
    make_attention_tile(T)[1, 128, 3 * 64 * D * 2](q, k, v, o, lsum)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp2((s - s.max(axis=1, keepdims=True)) * 0.125)
    np.testing.assert_allclose(lsum, p.sum(axis=1), rtol=1e-5)
    p_in = p.astype(np.float32).astype(host).astype(np.float64)  # A as the matrix units take it
    np.testing.assert_allclose(o, p_in @ v.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_register_a_misuse():
    k = load_kernel(
        "import gpukern as gk\n\n@gk.kernel\ndef k(out: gk.Array[gk.float32]):\n"
        "    s = gk.shared(gk.float16, 64 * 64)\n"
        "    p = gk.fragment('accumulator', 64, 32, 16, gk.float32)\n"
        "    acc = gk.fragment('accumulator', 64, 64, 16, gk.float32)\n"
        "    acc = gk.wgmma(acc, p, 2, s, 0)\n",
        "regs_a",
    )
    with pytest.raises(gk.KernelTypeError, match=r"takes 16 of its 32 columns: a step known at compile time, 0 to 1"):
        k.variant(k.signature_of((np.zeros(1, np.float32),)))


@gk.kernel
def k_p_set_in_flight(a: Array[float16, 2], out: Array[float32, 2]):
    s = gk.shared(float16, 64 * 64 + 64 * 64)
    for e in range(gk.thread_idx.x, 2 * 64 * 64, 128):
        s[e] = a[0, 0]
    gk.barrier()
    p = gk.fragment("accumulator", 64, 16, 16, float32)
    gk.fill_fragment(p, 1.0)
    acc = gk.fragment("accumulator", 64, 64, 16, float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, p, 0, s, 64 * 64, b_width=64)
    gk.wgmma_commit()
    x = p[0]  # reading A's registers while the wgmma reads them: fine
    p[0] = x * 2.0  # setting them before its wait: a race
    gk.wgmma_wait(0)
    gk.store_matrix(out, (0, 0), acc)


def test_setting_a_register_operand_in_flight_is_a_race(on_simulator):
    with pytest.raises(gk.DataRaceError, match=r"accumulator 'p': acc\[i\] = \.\.\. uses it .* reading it as A"):
        k_p_set_in_flight[1, 128](np.ones((64, 64), np.float16), np.zeros((64, 64), np.float32))

