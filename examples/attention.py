"""Fused attention, forward: O = softmax(Q K^T / sqrt(d)) V and the rows' log-sum-exp, FlashAttention's
way, on Hopper's warpgroup matrix units (sm_90), FP16 or BF16, head dimension 64 or 128, causal or not,
any sequence length.

A block takes 64 x WG query rows (WG warpgroups, 64 rows each; Q brought once by TMA and held in
shared memory) and walks the keys BN at a time.  Thread 0 keeps the next K and V tiles in flight:
``gk.tma_load`` of boxes 64 halves wide into a ring of stages, each landing in the 128-byte swizzled
layout ``gk.wgmma`` reads and completing on the stage's mbarrier; it refills a stage once every
thread has arrived on the stage's ``free`` mbarrier.  Each step each warpgroup
1. waits for K and computes S = Q K^T for its 64 rows with ``gk.wgmma`` (S: a 64 x BN float32
   accumulator in its threads' registers),
2. on a tile at an edge only (past the keys' end; across the diagonal when causal), masks S; then
   runs the online softmax on S's elements where they are (``s[i]``, ``gk.acc_row``/``gk.acc_col``:
   which row and column each thread's element is; a row's maximum across the four lanes that hold
   it by two shuffles): P = exp2(S scale - m), one multiply-add and the hardware's exp2 (the kernel
   is compiled with ``fastmath``), the output accumulator rescaled by exp2(m_old - m_new),
3. waits for V and adds P V with ``gk.wgmma`` taking P straight from the registers (A from an
   accumulator, rounded to the inputs' type: no trip through shared memory) and V in its panels
   (``b_panel``: the TMA boxes side by side), then arrives on the stage's ``free``.
At the end each row is divided by its sum and stored, with the log-sum-exp (natural log).  Causal:
the blocks of the most keys start first.

    python examples/attention.py                                   # sm_90 GPU: B=4, H=16, S=4096, d=64
    python examples/attention.py --small --backend sim             # checked against float64 NumPy
    python examples/attention.py --head-dim 128 --causal --dtype bfloat16 --seq 1000
    python examples/attention.py --show-source

``benchmarks/attention.py`` measures it beside cuDNN's and FlashAttention-2's (through PyTorch).
Blocks out of step (two a multiprocessor at d = 64, three warpgroups at d = 128) overlap one
warpgroup's softmax with another's multiplies; within a warpgroup they take turns.  (FlashAttention-3's
overlap inside a warpgroup -- tile j's softmax while tile j - 1's P V runs, one block of two
warpgroups -- was measured slower here: 0.64-0.85x cuDNN against 0.95-0.98x, H200, session 17.)
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


PLANS = {64: (2, 2, 128), 128: (3, 1, 128)}  # per head dimension: warpgroups, blocks an SM, keys a step


def make_attention(
    T: Any, d: int, causal: bool, wg: int | None = None, blocks: int | None = None, bn: int | None = None,
    stages: int = 2,
) -> Any:  # fmt: skip
    """The kernel for inputs of type ``T`` (float16, bfloat16) and head dimension ``d`` (64, 128):
    ``attend[grid, 128 * wg, shared_bytes](q, k, v, o, lse, scale)`` with q, k, v, o of shape
    (batch x heads, seq, d) and lse (batch x heads, seq), grid (ceil(seq / (64 wg)), batch x heads).
    ``wg``: warpgroups a block (64 query rows each); ``blocks``: how many blocks a multiprocessor
    ``launch_bounds`` budgets registers for (two: blocks out of step overlap one's softmax with the
    other's multiplies); ``bn``: keys a step; ``stages``: K and V tiles in flight.  By default
    ``PLANS[d]``, the fastest of those measured on an H200 (``benchmarks/attention.py --plans``):
    at d = 64 two blocks of two warpgroups, at d = 128 one block of three (a 64 x 128 S beside a
    64 x 128 O does not fit two blocks' registers), 128 keys a step."""
    if d not in (64, 128):
        raise ValueError(f"head dimension 64 or 128, not {d}")
    wg = wg or PLANS[d][0]
    blocks = blocks or PLANS[d][1]
    bn = bn or PLANS[d][2]
    BM = 64 * wg  # query rows a block
    BN = bn  # keys a step
    THREADS = 128 * wg
    PANELS = d // 64  # a tile of Q, K or V: panels 64 columns (128 bytes) wide, a TMA box each
    STAGES = stages
    KS = BM * d  # K's tile of stage i at KS + i STAGE, V's BN d on; Q at 0
    STAGE = 2 * BN * d
    HALF = T == gk.float16
    BLOCKS = blocks  # blocks a multiprocessor that nvcc budgets registers for
    CAUSAL = causal

    @gk.kernel(fastmath=True)
    def attend(q, k, v, o, lse, scale: float32):
        gk.launch_bounds(THREADS, BLOCKS)
        s = gk.dynamic_shared(T)
        bars = gk.shared(gk.mbarrier, 1 + 3 * STAGES)  # (one array: shared arrays are 1024-byte aligned here)
        qbar = bars[0:1]  # Q has landed
        kbar = bars[1 : 1 + STAGES]  # a stage's K has landed
        vbar = bars[1 + STAGES : 1 + 2 * STAGES]  # ... its V
        free = bars[1 + 2 * STAGES : 1 + 3 * STAGES]  # every thread is done with the stage
        qmap = gk.tensor_map(q, (1, BM, 64), swizzle=128)
        kmap = gk.tensor_map(k, (1, BN, 64), swizzle=128)
        vmap = gk.tensor_map(v, (1, BN, 64), swizzle=128)
        seq = int32(q.shape[1])
        t = gk.thread_idx.x
        w = t // 128  # this thread's warpgroup
        bh = gk.block_idx.y  # the (batch, head)
        q0 = gk.block_idx.x * BM
        if CAUSAL:  # the blocks of the most keys first: the last ones to start are short
            q0 = (gk.grid_dim.x - 1 - gk.block_idx.x) * BM
        steps = (seq + BN - 1) // BN
        if CAUSAL:
            steps = min(steps, (q0 + BM + BN - 1) // BN)
        if t == 0:
            gk.mbarrier_init(qbar[0], 1)
            for i in range(STAGES):
                gk.mbarrier_init(kbar[i], 1)
                gk.mbarrier_init(vbar[i], 1)
                gk.mbarrier_init(free[i], THREADS)
            gk.fence_mbarrier_init()
            gk.mbarrier_arrive_expect_tx(qbar[0], PANELS * gk.box_bytes(qmap))
            for p in range(PANELS):  # (rows past the sequence's end read as zeros)
                gk.tma_load(s[p * BM * 64], qmap, (bh, q0, 64 * p), qbar[0])
        gk.barrier()
        acc = gk.fragment("accumulator", 64, d, 16, float32)
        gk.fill_fragment(acc, 0.0)
        sc = gk.fragment("accumulator", 64, BN, 16, float32)
        m0 = float32(-math.inf)  # this thread's two rows (h = 0, 1): running maximum (scaled, log2 units)
        m1 = float32(-math.inf)
        l0 = float32(0.0)  # ... and its part of the running sum
        l1 = float32(0.0)
        gk.mbarrier_wait(qbar[0], 0)
        for j in range(steps):
            if t == 0:  # tiles up to j + STAGES - 1 in flight: all at first, then one, into tile j - 1's stage
                for n in range(0 if j == 0 else j + STAGES - 1, min(j + STAGES, steps)):
                    at = KS + (n % STAGES) * STAGE
                    if n >= STAGES:
                        gk.mbarrier_wait(free[n % STAGES], (n // STAGES - 1) % 2)
                    gk.mbarrier_arrive_expect_tx(kbar[n % STAGES], PANELS * gk.box_bytes(kmap))
                    gk.mbarrier_arrive_expect_tx(vbar[n % STAGES], PANELS * gk.box_bytes(vmap))
                    for p in range(PANELS):
                        gk.tma_load(s[at + p * BN * 64], kmap, (bh, n * BN, 64 * p), kbar[n % STAGES])
                        gk.tma_load(s[at + BN * d + p * BN * 64], vmap, (bh, n * BN, 64 * p), vbar[n % STAGES])
            at = KS + (j % STAGES) * STAGE
            gk.mbarrier_wait(kbar[j % STAGES], (j // STAGES) % 2)
            gk.fill_fragment(sc, 0.0)  # S = Q K^T, this warpgroup's 64 rows (a fill measured faster than
            for kk in gk.unroll(range(0, d, 16)):  # the first step's accumulate=False, H200 session 17)
                a_at = (kk // 64) * BM * 64 + w * 64 * 64 + kk % 64  # this warpgroup's rows of Q
                sc = gk.wgmma(sc, s, a_at, s, at + (kk // 64) * BN * 64 + kk % 64)
            gk.wgmma_commit()
            gk.wgmma_wait(0)
            if (j + 1) * BN > seq or (CAUSAL and (j + 1) * BN > q0 + w * 64 + 1):  # a tile at an edge: masked
                for i in gk.unroll(range(BN // 2)):
                    col = j * BN + gk.acc_col(sc, i)
                    if col >= seq or (CAUSAL and col > q0 + w * 64 + gk.acc_row(sc, i)):
                        sc[i] = -math.inf
            x0 = float32(-math.inf)  # the tile's row maxima
            x1 = float32(-math.inf)
            for i in gk.unroll(range(BN // 2)):
                if (i // 2) % 2 == 0:
                    x0 = max(x0, sc[i])
                else:
                    x1 = max(x1, sc[i])
            for b in gk.unroll(range(2)):  # the four lanes holding a row: 1 and 2 apart
                x0 = max(x0, gk.shfl_xor_sync(0xFFFFFFFF, x0, 1 << b))
                x1 = max(x1, gk.shfl_xor_sync(0xFFFFFFFF, x1, 1 << b))
            n0 = max(m0, x0 * scale)
            n1 = max(m1, x1 * scale)
            f0 = n0 if n0 != -math.inf else 0.0  # (a row with nothing yet: exp2 of -inf, not of NaN)
            f1 = n1 if n1 != -math.inf else 0.0
            c0 = np.exp2(m0 - f0)
            c1 = np.exp2(m1 - f1)
            l0 *= c0
            l1 *= c1
            for i in gk.unroll(range(BN // 2)):  # P = exp2(S scale - m): one multiply-add and an exp2
                if (i // 2) % 2 == 0:
                    sc[i] = np.exp2(sc[i] * scale - f0)
                    l0 += sc[i]
                else:
                    sc[i] = np.exp2(sc[i] * scale - f1)
                    l1 += sc[i]
            for i in gk.unroll(range(d // 2)):
                if (i // 2) % 2 == 0:
                    acc[i] *= c0
                else:
                    acc[i] *= c1
            m0 = n0
            m1 = n1
            gk.mbarrier_wait(vbar[j % STAGES], (j // STAGES) % 2)
            for step in gk.unroll(range(BN // 16)):  # O += P V, P from the registers
                acc = gk.wgmma(acc, sc, step, s, at + BN * d + 16 * step * 64, b_panel=BN)
            gk.wgmma_commit()
            gk.wgmma_wait(0)
            gk.mbarrier_arrive(free[j % STAGES])  # this thread is done with the stage
        for b in gk.unroll(range(2)):
            l0 += gk.shfl_xor_sync(0xFFFFFFFF, l0, 1 << b)
            l1 += gk.shfl_xor_sync(0xFFFFFFFF, l1, 1 << b)
        r0 = 1.0 / l0 if l0 > 0.0 else 0.0
        r1 = 1.0 / l1 if l1 > 0.0 else 0.0
        for i in gk.unroll(range(0, d // 2, 2)):  # neighbouring columns: one 4-byte store
            row = q0 + w * 64 + gk.acc_row(acc, i)
            if row < seq:
                g = r0 if (i // 2) % 2 == 0 else r1
                out = (bh, row, gk.acc_col(acc, i))
                if HALF:
                    gk.vstore(o, out, (gk.float16(acc[i] * g), gk.float16(acc[i + 1] * g)))
                else:  # (bfloat16: the float32 rounded as it is stored)
                    gk.vstore(o, out, (acc[i] * g, acc[i + 1] * g))
        if gk.lane_id() % 4 == 0:
            row = q0 + w * 64 + gk.acc_row(acc, 0)
            if row < seq:
                lse[bh, row] = (m0 + np.log2(l0)) / LOG2E
            if row + 8 < seq:
                lse[bh, row + 8] = (m1 + np.log2(l1)) / LOG2E

    attend.shared_bytes = (BM + 2 * STAGES * BN) * d * 2
    attend.rows = BM
    return attend


def run(kern: Any, q: Any, k: Any, v: Any, o: Any, lse: Any) -> None:
    """``o, lse = attention(q, k, v)`` on (batch x heads, seq, d) arrays; scale 1 / sqrt(d)."""
    bh, seq, d = q.shape
    scale = float(LOG2E / math.sqrt(d))
    kern[((seq + kern.rows - 1) // kern.rows, bh), kern.rows * 2, kern.shared_bytes](q, k, v, o, lse, scale)


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
        a = Array[T, 3]
        print(kern.source(a, a, a, a, Array[float32, 2], float32))
        return 0
    if backend.name == "opencl":
        print("attention: needs wgmma: an sm_90 GPU or the simulator (--backend sim)", file=sys.stderr)
        return 1
    small = args.small or backend.name == "sim"
    batch, heads = (1, 2) if small else (args.batch, args.heads)
    seq = args.seq or (100 if small else 4096)
    d, host = args.head_dim, host_dtype(args.dtype)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((batch * heads, seq, d)).astype(host) for _ in range(3))
    dq, dk, dv = gk.to_device(q), gk.to_device(k), gk.to_device(v)
    do, dl = gk.empty(q.shape, host), gk.empty((batch * heads, seq), np.float32)
    t = gk.benchmark(lambda: run(kern, dq, dk, dv, do, dl), 1 if small else 10, 1 if small else 3)
    got, lse = do.get().astype(np.float64), dl.get()
    ok = True
    for h in sorted({0, batch * heads - 1}):
        want, want_lse = reference(q[h], k[h], v[h], args.causal)
        tol = 2.0**-7 if args.dtype == "bfloat16" else 2.0**-9  # P and O rounded to the inputs' type
        ok &= bool(np.allclose(got[h], want, rtol=tol, atol=tol) and np.allclose(lse[h], want_lse, rtol=1e-4))
    flops = 4 * batch * heads * seq * seq * d / (2 if args.causal else 1)
    print(
        f"attention: {batch} x {heads} heads, seq {seq}, d {d}, {args.dtype}{', causal' if args.causal else ''}"
        f"  {t * 1e3:9.3f} ms  {flops / t / 1e12:7.2f} TFLOP/s  on {backend.device_name()}  {'OK' if ok else 'WRONG'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
