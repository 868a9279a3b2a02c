"""Row-wise normalisations at the memory's speed: softmax, LayerNorm and RMSNorm over the rows of a
matrix, each row read once from global memory and written once.

Every thread holds V elements of its row in registers (``local`` arrays indexed by unrolled loop
variables); a row longer than one block holds runs on a *cluster* of CLUSTER blocks, each holding
its part, which meet through distributed shared memory instead of a second pass over global memory.
A row's statistics are one pair per thread, combined by the op's own rule: (maximum, sum of
exp(x - maximum)) for softmax (the online-softmax merge), (mean, sum of squared deviations) for
LayerNorm (Chan's merge of equal counts), the sum of squares for RMSNorm.  The pairs meet across a
warp by shuffles, across the block's warps through shared memory, across the cluster's blocks by
reading each block's pair from its shared memory (``gk.peer``) after a ``cluster_barrier()``; then
every thread writes its elements from its registers.

Rows are FP32 or BF16 in and out (the math in float32; BF16 moved 8 elements a 16-byte ``vload``),
compiled with ``fastmath`` (the hardware's exp2, reciprocal and square root).

    make_rows("softmax", float32, n)           # the kernel for rows of n elements, and its launch
    python examples/rowwise.py softmax --size 65536 --dtype bfloat16
    python examples/softmax.py --small --backend sim     # (layernorm.py, rmsnorm.py: the same, one op)
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import gpukern as gk
from gpukern import Array, block_idx, float32, func, int32, kernel, local, shared, thread_idx, unroll, vload, vstore

OPS = ("softmax", "layernorm", "rmsnorm")


class Plan(NamedTuple):
    """How rows of ``n`` elements are spread: ``threads`` a row (a warp, or a block), ``rows`` a block
    (several warps' rows, or 1), ``cluster`` blocks a row, ``per`` elements a thread."""

    threads: int
    rows: int
    cluster: int
    per: int
    blocks_per_sm: int = 1  # launch_bounds' second argument: what nvcc budgets registers for
    stream: bool = False  # a block (cluster) walks rows, the next one's part brought by a bulk copy meanwhile


# BF16 rows: chosen per length by ``benchmarks/norms.py --dtype bfloat16 --sweep`` on an H200 (a BF16
# element is half a float32's bytes, so a thread holds 64 where it can, and the blocks that hide
# the most latency differ): (threads a row, rows a block, blocks a row, elements a thread, blocks an SM)
_BF16_PLANS = {
    1024: Plan(32, 8, 1, 32, 4),
    2048: Plan(32, 4, 1, 64, 4),
    4096: Plan(128, 1, 1, 32, 4),
    8192: Plan(128, 1, 1, 64, 4),
    16384: Plan(128, 1, 2, 64, 2),
    32768: Plan(128, 1, 4, 64, 2),
    65536: Plan(128, 1, 8, 64, 2),
    131072: Plan(256, 1, 8, 64, 2),
    262144: Plan(512, 1, 8, 64, 1),
}


def plan(n: int, itemsize: int = 4) -> Plan:
    """Float32 rows up to 2048 elements: a warp each, four to a block (no barrier: shuffles alone);
    up to 16384: a block each, 32 elements a thread (256-thread blocks budgeted for two a
    multiprocessor); longer: clusters of blocks of 512 threads, 32 elements each, budgeted for two a
    multiprocessor (a cluster of 2 to 8), and at 262,144 elements (8 blocks of 1024 threads) the most
    a portable cluster holds.  Measured on an H200 (``benchmarks/norms.py --sweep``).  BF16 rows
    (``itemsize`` 2) of those lengths: ``_BF16_PLANS``; other lengths as float32's."""
    if n % 1024:
        raise ValueError(f"rows of a multiple of 1024 elements, not {n}")
    if itemsize == 2 and n in _BF16_PLANS:
        return _BF16_PLANS[n]
    if n <= 2048:
        return Plan(32, 4, 1, n // 32)
    if n <= 16384:
        return Plan(n // 32, 1, 1, 32, 2 if n == 8192 else 1)
    if n <= 131072 and n % 16384 == 0:
        return Plan(512, 1, n // 16384, 32, 2)
    if n == 262144:
        return Plan(1024, 1, 8, 32)
    raise ValueError(
        f"rows of a multiple of 1024 elements up to 16384, of 16384 up to 131072, or 262144: not {n}"
    )


@func
def merge(op: int, a0: float32, a1: float32, na: float32, b0: float32, b1: float32, nb: float32):
    """Two partial statistics, of ``na`` and ``nb`` elements, merged (see the module docstring)."""
    if op == 0:  # softmax: (maximum, sum of exp(x - maximum))
        m = max(a0, b0)
        return m, a1 * math.exp(a0 - m) + b1 * math.exp(b0 - m)
    if op == 1:  # layernorm: (mean, sum of squared deviations), Chan et al.'s merge
        d = b0 - a0
        n = na + nb
        return a0 + d * (nb / n), a1 + b1 + d * d * (na * nb / n)
    return a0 + b0, a1  # rmsnorm: (sum of squares, unused)


def make_rows(op: str, T: Any, n: int, how: Plan | None = None, fast: bool = True) -> tuple[Any, Plan]:
    """The kernel computing ``op`` over rows of ``n`` elements of type ``T`` (float32, bfloat16) and
    how it is spread (``plan(n)`` unless given; ``run`` launches it).  ``fast``: compiled with
    ``fastmath`` (the hardware's exp2, reciprocal and square root: within ``tolerance``), which a
    BF16 row needs to keep up with the memory (twice the elements a byte of float32's)."""
    OP = OPS.index(op)
    how = how or plan(n, np.dtype(T.dtype).itemsize)
    THREADS, ROWS, CLUSTER, V, MINB, STREAM = how
    if STREAM and ROWS != 1:
        raise ValueError("a streamed plan is a block (or a cluster) a row: rows 1")
    BYTES = THREADS * V * np.dtype(T.dtype).itemsize  # a block's part of a row
    VEC = 16 // np.dtype(T.dtype).itemsize  # elements a load moves: 16 bytes (4 float32s, 8 bfloat16s)
    WARPS = THREADS // 32  # a row's warps
    SPAN = THREADS * V  # the elements of a row a block holds

    @kernel(fastmath=fast)
    def rows(x, y, w, b, eps: float32):  # (x, y: rows x n of T; w, b: n of T)
        gk.launch_bounds(THREADS * ROWS, MINB)
        if CLUSTER > 1:
            gk.cluster_dims(CLUSTER)
        part = shared(float32, (2, 2, WARPS))  # each warp's pair (two sets: a streamed block's rows follow)
        mine = shared(float32, (2, 2))  # the block's pair, read by the cluster's other blocks (two sets too)
        v = local(float32, V)
        t = thread_idx.x % THREADS
        first = (block_idx.x // CLUSTER) * ROWS
        if ROWS > 1:  # (a warp a row: several rows a block; else the same row for every thread)
            first += thread_idx.x // THREADS
        stride = (gk.grid_dim.x // CLUSTER) * ROWS  # (a block, or cluster, has one row unless streamed)
        base = (block_idx.x % CLUSTER) * SPAN  # (the block's rank in its cluster)
        nrows = int32(x.shape[0])
        if STREAM:  # the block's part of its first row, on its way
            buf = gk.dynamic_shared(T)
            landed = shared(gk.mbarrier, 1)
            if thread_idx.x == 0:
                gk.mbarrier_init(landed[0], 1)
                gk.fence_mbarrier_init()
            gk.barrier()
            if thread_idx.x == 0 and first < nrows:
                gk.mbarrier_arrive_expect_tx(landed[0], BYTES)
                gk.bulk_load(buf[0], x[first, base], SPAN, landed[0])
        for k in range(nrows // stride):  # (run divides the rows evenly: every block of a cluster alike)
            row = first + k * stride
            h = k % 2
            if STREAM:  # the part from shared memory, then the next row's part on its way
                gk.mbarrier_wait(landed[0], h)
                for i in unroll(range(V // VEC)):
                    q = vload(buf, (i * THREADS + t) * VEC, VEC)
                    for j in unroll(range(VEC)):
                        v[i * VEC + j] = float32(q[j])
                gk.barrier()  # every thread has its elements: the buffer may be refilled
                if thread_idx.x == 0 and row + stride < nrows:  # (the next row's)
                    gk.mbarrier_arrive_expect_tx(landed[0], BYTES)
                    gk.bulk_load(buf[0], x[row + stride, base], SPAN, landed[0])
            else:
                for i in unroll(range(V // VEC)):  # the row's part, VEC elements a load, the warp's loads adjacent
                    q = vload(x, (row, base + (i * THREADS + t) * VEC), VEC)
                    for j in unroll(range(VEC)):
                        v[i * VEC + j] = float32(q[j])
            # this thread's pair
            p0 = float32(0)
            p1 = float32(0)
            if OP == 0:  # (softmax keeps exp(x - its maximum) in v: one exp an element)
                p0 = v[0]
                for i in unroll(range(1, V)):
                    p0 = max(p0, v[i])
                for i in unroll(range(V)):
                    v[i] = math.exp(v[i] - p0)
                    p1 += v[i]
            elif OP == 1:
                for i in unroll(range(V)):
                    p0 += v[i]
                p0 = p0 / V
                for i in unroll(range(V)):
                    p1 += (v[i] - p0) * (v[i] - p0)
            else:
                for i in unroll(range(V)):
                    p0 += v[i] * v[i]
            m_own = p0
            count = float32(V)
            for s in unroll(range(5)):  # across the warp: 16, 8, 4, 2, 1 lanes apart
                q0 = gk.shfl_xor_sync(0xFFFFFFFF, p0, 16 >> s)
                q1 = gk.shfl_xor_sync(0xFFFFFFFF, p1, 16 >> s)
                p0, p1 = merge(OP, p0, p1, count, q0, q1, count)
                count *= 2
            if WARPS > 1:  # across the row's warps, through shared memory (each thread alike)
                if gk.lane_id() == 0:
                    part[h, 0, t // 32] = p0
                    part[h, 1, t // 32] = p1
                gk.barrier()
                p0 = part[h, 0, 0]
                p1 = part[h, 1, 0]
                for s in unroll(range(1, WARPS)):
                    p0, p1 = merge(OP, p0, p1, count * s, part[h, 0, s], part[h, 1, s], count)
            if CLUSTER > 1:  # across the cluster's blocks, through their shared memory
                if t == 0:
                    mine[h, 0] = p0
                    mine[h, 1] = p1
                gk.cluster_barrier()
                block_count = count * WARPS
                p0 = gk.peer(mine, 0)[h, 0]
                p1 = gk.peer(mine, 0)[h, 1]
                for r in unroll(range(1, CLUSTER)):
                    p0, p1 = merge(
                        OP, p0, p1, block_count * r, gk.peer(mine, r)[h, 0], gk.peer(mine, r)[h, 1], block_count
                    )
            # the row's statistics, then each element
            if OP == 0:
                scale = math.exp(m_own - p0) / p1
            elif OP == 1:
                scale = gk.rsqrt(p1 / n + eps)
            else:
                scale = gk.rsqrt(p0 / n + eps)
            for i in unroll(range(V // VEC)):
                col = base + (i * THREADS + t) * VEC
                out = local(float32, VEC)
                if OP == 0:
                    for j in unroll(range(VEC)):
                        out[j] = v[i * VEC + j] * scale
                else:
                    g = vload(w, col, VEC)
                    if OP == 1:
                        hb = vload(b, col, VEC)
                        for j in unroll(range(VEC)):
                            out[j] = (v[i * VEC + j] - p0) * scale * float32(g[j]) + float32(hb[j])
                    else:
                        for j in unroll(range(VEC)):
                            out[j] = v[i * VEC + j] * scale * float32(g[j])
                if VEC == 4:  # (into bfloat16: rounded to nearest even)
                    vstore(y, (row, col), (out[0], out[1], out[2], out[3]))
                else:
                    vstore(y, (row, col), (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7]))
        if CLUSTER > 1:
            gk.cluster_barrier()  # the other blocks have read this one's pair before it ends

    rows.shared_bytes = BYTES if STREAM else 0
    return rows, how


def run(op: str, kern: Any, how: Plan, x: Any, y: Any, w: Any, b: Any, eps: float = 1e-5) -> None:
    """``y = op(x)`` row by row (x, y: rows x n device arrays, rows a multiple of ``how.rows``; w, b: n):
    a block (or cluster) a row, or, streamed, as many as the device holds at once, each walking rows
    (two clusters where the backend does not say how many multiprocessors it has: the simulator)."""
    groups = x.shape[0] // how.rows
    if how.stream:  # (as many as run at once that divide the rows: each walks as many)
        sms = getattr(gk.get_backend(), "multiprocessors", None) or 132  # (H200: the reverted attribute)
        most = max(1, sms * how.blocks_per_sm // how.cluster) if sms else 2
        groups = max(g for g in range(1, min(groups, most) + 1) if groups % g == 0)
    kern[groups * how.cluster, how.threads * how.rows, kern.shared_bytes](x, y, w, b, eps)


def reference(op: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """The op in float64 with NumPy."""
    x = x.astype(np.float64)
    if op == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if op == "layernorm":
        mu = x.mean(axis=1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w.astype(np.float64)


def tolerance(op: str, T: Any, n: int) -> tuple[float, float]:
    """(rtol, atol) a result of type ``T`` meets against ``reference``: float32's rounding over a
    row of n elements, or bfloat16's of the result."""
    if T == gk.bfloat16:
        return 2.0**-7, 2.0**-7 if op != "softmax" else 2.0**-7 / n
    return 2e-5 * math.log2(n), 1e-6 if op != "softmax" else 1e-7 / n


@kernel
def copy_rows(x: Array[float32, 2], y: Array[float32, 2]):
    """y = x, a float4 a thread: the bandwidth the normalisations are measured against."""
    i = (block_idx.x * 256 + thread_idx.x) * 4
    r = i // x.shape[1]
    c = i % x.shape[1]
    q = vload(x, (r, c), 4)
    vstore(y, (r, c), q)


TYPES = {"float32": float32, "bfloat16": gk.bfloat16}  # the kernel's types (NumPy's: host_dtype)


def host_dtype(name: str) -> Any:
    """The NumPy dtype of rows of ``name`` (bfloat16: ml_dtypes')."""
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.float32


def _measure(op: str, kern: Any, how: Plan, dtype_name: str, n: int, rows: int, small: bool, backend: Any) -> bool:
    """Run ``op`` over ``rows`` random rows of ``n`` elements, time it beside a device copy of the same
    bytes (device events, medians), check 16 rows against float64 NumPy, and print one line."""
    T, dtype = TYPES[dtype_name], host_dtype(dtype_name)
    rows -= rows % how.rows
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, n)) * 3).astype(dtype)
    w, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    dx, dy, dw, db = gk.to_device(x), gk.empty((rows, n), dtype), gk.to_device(w), gk.to_device(b)
    reps, warm = (1, 1) if small else (20, 3)
    t = gk.benchmark(lambda: run(op, kern, how, dx, dy, dw, db), reps, warm)
    words = x.view(np.float32).reshape(-1, 1024)  # the same bytes, copied as float4s
    src, dst = gk.to_device(words), gk.empty(words.shape, np.float32)
    t_copy = gk.benchmark(lambda: copy_rows[words.shape[0], 256](src, dst), reps, warm)
    pick = rng.choice(rows, min(rows, 16), replace=False)
    rtol, atol = tolerance(op, T, n)
    good = bool(np.allclose(dy.get()[pick].astype(np.float64), reference(op, x[pick], w, b), rtol=rtol, atol=atol))
    print(
        f"{op}: {rows} rows x {n} {dtype_name} ({how.threads * how.rows} threads a block, {how.cluster} a "
        f"cluster)  {t * 1e3:9.3f} ms  {2 * x.nbytes / t / 1e12:6.3f} TB/s = {t_copy / t:.2f} of a copy's "
        f"{2 * x.nbytes / t_copy / 1e12:.3f}  on {backend.device_name()}  {'OK' if good else 'WRONG'}"
    )
    return good


def main(argv: list[str] | None = None, op: str | None = None) -> int:
    """The command line; ``op``: the one op this program runs (``examples/softmax.py`` and the others)."""
    import argparse
    import sys

    what = op or "softmax, LayerNorm or RMSNorm"
    p = argparse.ArgumentParser(description=f"Row-wise {what}, each row read once.")
    if op is None:
        p.add_argument("op", choices=OPS)
    p.add_argument("--size", type=int, help="elements a row (a multiple of 1024; default 8192, 2048 with --small)")
    p.add_argument("--rows", type=int, help="rows (default 2**28 / size on a GPU, 8 with --small)")
    p.add_argument("--dtype", choices=tuple(TYPES), default="float32", help="in and out (the math is float32's)")
    p.add_argument("--small", action="store_true", help="a size the simulator runs in seconds (and a cluster's)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the kernel's C and exit")
    args = p.parse_args(argv)
    op = op or args.op
    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    T = TYPES[args.dtype]
    small = args.small or backend.name == "sim"
    if args.size:
        sizes = [args.size]
    elif args.small:
        sizes = [2048, 32768]
    else:  # (on the simulator, which runs every thread on this CPU: a warp's rows and a cluster's)
        sizes = [8192] if backend.name != "sim" else [2048, gk.problem_size(None, 8192, 32768)]
    ok = True
    for n in sizes:
        how = plan(n, np.dtype(T.dtype).itemsize)
        if how.cluster > 1 and backend.name not in ("sim", "cuda"):
            print(f"{op}: rows of {n} run in clusters: CUDA (sm_90) or the simulator", file=sys.stderr)
            continue
        kern, how = make_rows(op, T, n)
        if args.show_source:
            dialect = "opencl" if backend.name == "opencl" else "cuda"
            print(kern.source(Array[T, 2], Array[T, 2], Array[T], Array[T], float32, backend=dialect))
            return 0
        ok &= _measure(op, kern, how, args.dtype, n, args.rows or (8 if small else (1 << 28) // n), small, backend)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
