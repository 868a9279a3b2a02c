"""Fused attention, forward: O = softmax(Q K^T / sqrt(d)) V and the rows' log-sum-exp, FlashAttention's
way, on Hopper's warpgroup matrix units (sm_90), FP16 or BF16, head dimension 64 or 128, causal or not,
any sequence length.

A block takes 64 x WG query rows (WG warpgroups, 64 rows each, Q held in shared memory for the whole
run) and walks the keys 64 at a time, K and V tiles in two buffers: while the block multiplies one
tile, its threads' 16-byte asynchronous copies (``gk.async_copy``, cp.async) bring the next into the
other buffer, in the 128-byte swizzled layout ``gk.wgmma`` reads.  Each step each warpgroup
1. computes S = Q K^T for its 64 rows with ``gk.wgmma`` (S: a 64 x 64 float32 accumulator in its
   threads' registers),
2. scales S, masks it (past the keys' end; above the diagonal when causal) and runs the online
   softmax on S's elements where they are (``s[i]``, ``gk.acc_row``/``gk.acc_col``: which row and
   column each thread's element is; a row's maximum across the four lanes that hold it by two
   shuffles), rescaling the output accumulator by exp2(m_old - m_new),
3. and adds P V with ``gk.wgmma`` taking P straight from the registers (A from an accumulator,
   rounded to the inputs' type: no trip through shared memory).
At the end each row is divided by its sum and stored, with the log-sum-exp (natural log).

    python examples/attention.py                                   # sm_90 GPU: B=4, H=16, S=4096, d=64
    python examples/attention.py --small --backend sim             # checked against float64 NumPy
    python examples/attention.py --head-dim 128 --causal --dtype bfloat16 --seq 1000
    python examples/attention.py --show-source

``benchmarks/attention.py`` measures it beside cuDNN's and FlashAttention-2's (through PyTorch).
The copies overlap the multiplies; the softmax and the multiplies still take turns (no TMA
producer warp, no overlap of one tile's softmax with the next tile's multiply yet).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import numpy as np

import gpukern as gk
from gpukern import Array, float32, int32

LOG2E = 1.4426950408889634


def make_attention(T: Any, d: int, causal: bool, wg: int = 2, blocks: int = 2, bn: int | None = None) -> Any:
    """The kernel for inputs of type ``T`` (float16, bfloat16) and head dimension ``d`` (64, 128):
    ``attend[grid, 128 * wg, shared_bytes(d, wg)](q, k, v, o, lse, seq, scale)`` with q, k, v, o of
    shape (batch x heads x seq, d) and lse (batch x heads x seq), grid (ceil(seq / (64 wg)), batch x
    heads); ``blocks``: how many blocks a multiprocessor ``launch_bounds`` budgets registers for (two:
    blocks out of step overlap one's softmax with the other's multiplies; measured on an H200,
    ``benchmarks/attention.py --plans``); ``bn``: keys a step (64 or 128; by default 128 at d = 64, 64 at
    d = 128, where a 64 x 128 S beside a 64 x 128 O would not fit two blocks' registers)."""
    if d not in (64, 128):
        raise ValueError(f"head dimension 64 or 128, not {d}")
    BM = 64 * wg  # query rows a block
    BN = bn or (128 if d == 64 else 64)  # keys a step
    THREADS = 128 * wg
    # Q, then two buffers of K and V (halves); Q and K (K-major operands) are stored as d / 64 tiles
    # 64 halves (128 bytes) wide, V row-major
    QB, KB, VB, BUF = 0, BM * d, BM * d + BN * d, 2 * BN * d
    CHUNKS = d // 8  # 16-byte chunks a row
    HALF = T == gk.float16
    BLOCKS = blocks  # blocks a multiprocessor that nvcc budgets registers for
    CAUSAL = causal

    @gk.func
    def fetch_kv(s, k, v, base: int32, key0: int32, seq: int32, t: int32, buf: int32):
        """Start copying keys key0 .. key0 + 63 of K and V into buffer ``buf`` (16 bytes a copy; zeros
        past the sequence's end)."""
        zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for e in range(t, BN * CHUNKS, THREADS):
            r = e // CHUNKS
            c = (e % CHUNKS) * 8
            at = buf + KB + (c // 64) * BN * 64 + gk.swizzle128(r, c % 64, 64, 8)
            vt = buf + VB + gk.swizzle128(r, c, d, 8)
            if key0 + r < seq:
                gk.async_copy(s[at], k[base + key0 + r, c], 8)
                gk.async_copy(s[vt], v[base + key0 + r, c], 8)
            else:
                gk.vstore(s, at, zero)
                gk.vstore(s, vt, zero)

    @gk.kernel
    def attend(q, k, v, o, lse, seq: int32, scale: float32):
        gk.launch_bounds(THREADS, BLOCKS)
        s = gk.dynamic_shared(T)
        t = gk.thread_idx.x
        w = t // 128  # this thread's warpgroup
        bh = gk.block_idx.y
        q0 = gk.block_idx.x * BM
        base = bh * seq  # the (batch, head)'s first row of q, k, v, o
        zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for e in range(t, BM * CHUNKS, THREADS):  # Q, once
            r = e // CHUNKS
            c = (e % CHUNKS) * 8
            at = QB + (c // 64) * BM * 64 + gk.swizzle128(r, c % 64, 64, 8)
            if q0 + r < seq:
                gk.vstore(s, at, gk.vload(q, (base + q0 + r, c), 8))
            else:
                gk.vstore(s, at, zero)
        acc = gk.fragment("accumulator", 64, d, 16, float32)
        gk.fill_fragment(acc, 0.0)
        sc = gk.fragment("accumulator", 64, BN, 16, float32)
        m0 = float32(-math.inf)  # this thread's two rows (h = 0, 1): running maximum (log2 units)
        m1 = float32(-math.inf)
        l0 = float32(0.0)  # ... and its part of the running sum
        l1 = float32(0.0)
        steps = (seq + BN - 1) // BN
        if CAUSAL:
            steps = min(steps, (q0 + BM + BN - 1) // BN)
        fetch_kv(s, k, v, base, 0, seq, t, 0)  # the first K and V tiles, in flight
        gk.async_commit()
        for j in range(steps):
            buf = (j % 2) * BUF
            gk.async_wait(0)  # this thread's copies of tile j have landed
            gk.barrier()  # ... everyone's; and every warpgroup is done with tile j - 1, whose buffer is next
            if j + 1 < steps:  # tile j + 1 copied while this one is multiplied
                fetch_kv(s, k, v, base, (j + 1) * BN, seq, t, ((j + 1) % 2) * BUF)
                gk.async_commit()
            gk.fill_fragment(sc, 0.0)  # S = Q K^T, this warpgroup's 64 rows
            for kk in gk.unroll(range(0, d, 16)):
                a_at = QB + (kk // 64) * BM * 64 + w * 64 * 64 + kk % 64  # this warpgroup's rows of Q
                sc = gk.wgmma(sc, s, a_at, s, buf + KB + (kk // 64) * BN * 64 + kk % 64)
            gk.wgmma_commit()
            gk.wgmma_wait(0)
            x0 = float32(-math.inf)  # the tile's row maxima, scaled and masked
            x1 = float32(-math.inf)
            for i in gk.unroll(range(BN // 2)):
                col = j * BN + gk.acc_col(sc, i)
                x = sc[i] * scale
                if col >= seq:
                    x = -math.inf
                if CAUSAL:
                    if col > q0 + w * 64 + gk.acc_row(sc, i):
                        x = -math.inf
                sc[i] = x
                if (i // 2) % 2 == 0:
                    x0 = max(x0, x)
                else:
                    x1 = max(x1, x)
            for b in gk.unroll(range(2)):  # the four lanes holding a row: 1 and 2 apart
                x0 = max(x0, gk.shfl_xor_sync(0xFFFFFFFF, x0, 1 << b))
                x1 = max(x1, gk.shfl_xor_sync(0xFFFFFFFF, x1, 1 << b))
            n0 = max(m0, x0)
            n1 = max(m1, x1)
            f0 = n0 if n0 != -math.inf else 0.0  # (a row with nothing yet: exp2 of -inf, not of NaN)
            f1 = n1 if n1 != -math.inf else 0.0
            c0 = np.exp2(m0 - f0)
            c1 = np.exp2(m1 - f1)
            l0 *= c0
            l1 *= c1
            for i in gk.unroll(range(BN // 2)):
                if (i // 2) % 2 == 0:
                    sc[i] = np.exp2(sc[i] - f0)
                    l0 += sc[i]
                else:
                    sc[i] = np.exp2(sc[i] - f1)
                    l1 += sc[i]
            for i in gk.unroll(range(d // 2)):
                if (i // 2) % 2 == 0:
                    acc[i] *= c0
                else:
                    acc[i] *= c1
            m0 = n0
            m1 = n1
            for step in gk.unroll(range(BN // 16)):  # O += P V, P from the registers
                acc = gk.wgmma(acc, sc, step, s, buf + VB + 16 * step * d, b_width=d)
            gk.wgmma_commit()
            gk.wgmma_wait(0)
        for b in gk.unroll(range(2)):
            l0 += gk.shfl_xor_sync(0xFFFFFFFF, l0, 1 << b)
            l1 += gk.shfl_xor_sync(0xFFFFFFFF, l1, 1 << b)
        r0 = 1.0 / l0 if l0 > 0.0 else 0.0
        r1 = 1.0 / l1 if l1 > 0.0 else 0.0
        for i in gk.unroll(range(0, d // 2, 2)):  # neighbouring columns: one 4-byte store
            row = q0 + w * 64 + gk.acc_row(acc, i)
            if row < seq:
                g = r0 if (i // 2) % 2 == 0 else r1
                out = (base + row, gk.acc_col(acc, i))
                if HALF:
                    gk.vstore(o, out, (gk.float16(acc[i] * g), gk.float16(acc[i + 1] * g)))
                else:  # (bfloat16: the float32 rounded as it is stored)
                    gk.vstore(o, out, (acc[i] * g, acc[i + 1] * g))
        if gk.lane_id() % 4 == 0:
            row = q0 + w * 64 + gk.acc_row(acc, 0)
            if row < seq:
                lse[base + row] = (m0 + np.log2(l0)) / LOG2E
            if row + 8 < seq:
                lse[base + row + 8] = (m1 + np.log2(l1)) / LOG2E

    attend.shared_bytes = (BM + 4 * BN) * d * 2
    attend.rows = BM
    return attend


def run(kern: Any, q: Any, k: Any, v: Any, o: Any, lse: Any, seq: int) -> None:
    """``o, lse = attention(q, k, v)`` on (batch x heads x seq, d) arrays; scale 1 / sqrt(d)."""
    bh = q.shape[0] // seq
    scale = float(LOG2E / math.sqrt(q.shape[1]))
    kern[((seq + kern.rows - 1) // kern.rows, bh), kern.rows * 2, kern.shared_bytes](q, k, v, o, lse, seq, scale)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Attention of one (batch, head) in float64 NumPy: (O, the rows' natural log-sum-exp)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s[np.triu_indices(s.shape[0], 1, s.shape[1])] = -np.inf
    m = s.max(axis=1, keepdims=True)
    p = np.exp(s - m)
    return p @ v / p.sum(axis=1, keepdims=True), (m + np.log(p.sum(axis=1, keepdims=True)))[:, 0]


def host_dtype(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.float16


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, help="sequence length (default 4096; 100 with --small)")
    p.add_argument("--head-dim", type=int, default=64, choices=(64, 128))
    p.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--small", action="store_true", help="1 x 2 heads of 100: what the simulator runs in seconds")
    p.add_argument("--backend", choices=("cuda", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the kernel's CUDA C and exit")
    args = p.parse_args(argv)
    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    T = gk.float16 if args.dtype == "float16" else gk.bfloat16
    kern = make_attention(T, args.head_dim, args.causal)
    if args.show_source:
        a = Array[T, 2]
        print(kern.source(a, a, a, a, Array[float32], int32, float32))
        return 0
    if backend.name == "opencl":
        print("attention: needs wgmma: an sm_90 GPU or the simulator (--backend sim)", file=sys.stderr)
        return 1
    small = args.small or backend.name == "sim"
    batch, heads = (1, 2) if small else (args.batch, args.heads)
    seq = args.seq or (100 if small else 4096)
    d, host = args.head_dim, host_dtype(args.dtype)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((batch * heads * seq, d)).astype(host) for _ in range(3))
    dq, dk, dv = gk.to_device(q), gk.to_device(k), gk.to_device(v)
    do, dl = gk.empty(q.shape, host), gk.empty(batch * heads * seq, np.float32)
    t = gk.benchmark(lambda: run(kern, dq, dk, dv, do, dl, seq), 1 if small else 10, 1 if small else 3)
    got, lse = do.get().astype(np.float64), dl.get()
    ok = True
    for h in sorted({0, batch * heads - 1}):
        rows = slice(h * seq, (h + 1) * seq)
        want, want_lse = reference(q[rows], k[rows], v[rows], args.causal)
        tol = 2.0**-7 if args.dtype == "bfloat16" else 2.0**-9  # P and O rounded to the inputs' type
        ok &= bool(np.allclose(got[rows], want, rtol=tol, atol=tol) and np.allclose(lse[rows], want_lse, rtol=1e-4))
    flops = 4 * batch * heads * seq * seq * d / (2 if args.causal else 1)
    print(
        f"attention: {batch} x {heads} heads, seq {seq}, d {d}, {args.dtype}{', causal' if args.causal else ''}"
        f"  {t * 1e3:9.3f} ms  {flops / t / 1e12:7.2f} TFLOP/s  on {backend.device_name()}  {'OK' if ok else 'WRONG'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
