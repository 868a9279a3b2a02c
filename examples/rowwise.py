"""Row-wise normalisations at the memory's speed: softmax, LayerNorm and RMSNorm over the rows of a
matrix, each row read once from global memory and written once.

Every thread holds V elements of its row in registers (``local`` arrays indexed by unrolled loop
variables), or, in a *staged* plan, the block's part of the row sits in shared memory, brought by one
bulk copy (no registers held while it flies, so more blocks a multiprocessor), and is read from there
for each pass; a *pipelined* plan is persistent: each block loops over rows, working on one row's
part in registers while the next row's lands in shared memory (the grid: as many blocks as the device
runs at once, ``Kernel.resident_blocks``).  A row longer than one block holds runs on a *cluster* of
CLUSTER blocks, each holding its part, which meet through distributed shared memory instead of a
second pass over global memory.  A row's statistics are one pair per thread, combined by the op's own
rule: (maximum, sum of exp(x - maximum)) for softmax (the online-softmax merge), (mean, sum of squared
deviations) for LayerNorm (Chan's merge of equal counts), the sum of squares for RMSNorm.  The pairs
meet across a warp by shuffles, across the block's warps through shared memory, across the cluster's
blocks by each block storing its pair into every block's shared memory with ``gk.store_async``
(after one ``cluster_barrier()`` at the start, passed while the loads fly, which says every block has
started), each block waiting on its own mbarrier for the pairs -- no cluster barrier a row, whose
release would wait for the block's last row's stores; then every thread writes its elements.

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
from gpukern import Array, Const, block_idx, float32, func, kernel, local, shared, thread_idx, unroll, vload, vstore

OPS = ("softmax", "layernorm", "rmsnorm")


class Plan(NamedTuple):
    """How rows of ``n`` elements are spread: ``threads`` a row (a warp, or a block), ``rows`` a block
    (several warps' rows, or 1), ``cluster`` blocks a row, ``per`` elements a thread."""

    threads: int
    rows: int
    cluster: int
    per: int
    blocks_per_sm: int = 1  # launch_bounds' second argument: what nvcc budgets registers for
    staged: bool = False  # the block's part held in shared memory (brought by a bulk copy), not in registers
    # persistent (where not 0): a cluster loops over rows, the next rows' parts landing in shared memory
    # (one bulk copy each, into this many buffers) while the block works on this one's in registers
    pipelined: int = 0
    held: bool = False  # (pipelined) the block's weights and biases held in shared memory, brought once


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

# Per (op, element size, length), the plan measured best on an H200 where it beat the defaults: rows
# held in shared memory (``staged``) or pipelined through it (``pipelined``), the cluster's blocks
# meeting by store_async (``benchmarks/norms.py --staged``, ``--pipelined``: session 19's calls 4 and 5;
# the fraction of the copy's bandwidth it reached there); LayerNorm's and RMSNorm's long rows pipelined
# with their weights held in shared memory (``held``: session 20's call 1).
_OP_PLANS = {
    ("layernorm", 4, 16384): Plan(128, 1, 1, 128, 3, True),  # 0.925 (session 18)
    ("softmax", 4, 16384): Plan(128, 1, 2, 64, 6, True),  # 0.966 (session 18)
    ("layernorm", 4, 32768): Plan(256, 1, 2, 64, 3, True),  # 0.928 (session 20, call 2: held 0.908)
    ("rmsnorm", 4, 32768): Plan(512, 1, 1, 64, 1, True),  # 0.919
    ("softmax", 4, 32768): Plan(256, 1, 1, 128, 1, True),  # 0.970
    ("layernorm", 4, 65536): Plan(512, 1, 4, 32, 1, False, 1, True),  # 0.916 (session 20, call 1)
    ("rmsnorm", 4, 65536): Plan(512, 1, 8, 16, 2, False, 1, True),  # 0.923 (session 20, call 1)
    ("softmax", 4, 65536): Plan(256, 1, 4, 64, 3, True),  # 0.968
    ("layernorm", 4, 131072): Plan(1024, 1, 8, 16, 1, False, 1, True),  # 0.918 (session 20, call 1)
    ("rmsnorm", 4, 131072): Plan(256, 1, 8, 64, 1, False, 1, True),  # 0.919 (session 20, call 1)
    ("softmax", 4, 131072): Plan(512, 1, 8, 32, 1, False, 1),  # 0.926
    ("layernorm", 4, 262144): Plan(512, 1, 16, 32, 1, False, 1, True),  # 0.899 (session 20, call 1)
    ("rmsnorm", 4, 262144): Plan(256, 1, 16, 64, 1, False, 1, True),  # 0.913 (session 20, call 1)
    ("softmax", 4, 262144): Plan(512, 1, 8, 64, 1, False, 1),  # 0.902 (session 20, call 3)
    ("layernorm", 2, 2048): Plan(64, 1, 1, 32, 1, False, 1),  # 0.919 (session 20, call 3)
    ("softmax", 2, 2048): Plan(64, 1, 1, 32, 16),  # 0.981 (session 20, call 3)
    ("layernorm", 2, 4096): Plan(64, 1, 2, 32, 1, False, 1, True),  # 0.893 (session 20, call 3)
    ("layernorm", 2, 8192): Plan(128, 1, 1, 64, 1, True),  # 0.950 (session 18)
    ("softmax", 2, 8192): Plan(128, 1, 1, 64, 6, True),  # 0.925 (session 18)
    ("layernorm", 2, 16384): Plan(256, 1, 1, 64, 3, True),  # 0.898 (session 18)
    ("rmsnorm", 2, 16384): Plan(512, 1, 1, 32, 1, True),  # 0.933 (session 18)
    ("softmax", 2, 16384): Plan(256, 1, 1, 64, 3, True),  # 0.925 (session 18)
    ("layernorm", 2, 32768): Plan(512, 1, 1, 64, 1, False, 1, True),  # 0.893 (session 20, call 1: 0.878 unheld)
    ("rmsnorm", 2, 32768): Plan(512, 1, 1, 64, 1, True),  # 0.947
    ("softmax", 2, 32768): Plan(256, 1, 1, 128, 3, True),  # 0.954
    ("layernorm", 2, 65536): Plan(256, 1, 4, 64, 1, False, 2, True),  # 0.914 (session 20, call 2)
    ("rmsnorm", 2, 65536): Plan(256, 1, 2, 128, 3, True),  # 0.925
    ("softmax", 2, 65536): Plan(128, 1, 4, 128, 1, True),  # 0.919
    ("layernorm", 2, 131072): Plan(256, 1, 8, 64, 1, False, 1, True),  # 0.898 (session 20, call 3)
    ("rmsnorm", 2, 131072): Plan(256, 1, 8, 64, 1, False, 1, True),  # 0.898 (session 20, call 1)
    ("softmax", 2, 131072): Plan(128, 1, 8, 128, 6, True),  # 0.901
    ("layernorm", 2, 262144): Plan(512, 1, 8, 64, 1, False, 1, True),  # 0.878 (session 20, call 1)
    ("rmsnorm", 2, 262144): Plan(512, 1, 16, 32, 1, False, 2, True),  # 0.909 (session 20, call 2)
    ("softmax", 2, 262144): Plan(256, 1, 8, 128, 1, True),  # 0.877
}


def hopper_here() -> bool:
    """Whether the current backend runs sm_90's machinery (bulk copies, mbarriers, clusters) that the
    staged and pipelined plans use: the simulator, or CUDA on an sm_90 device."""
    b = gk.get_backend()
    return b.name == "sim" or getattr(b, "arch", "") == "sm_90"


def plan(n: int, itemsize: int = 4, op: str | None = None, hopper: bool | None = None) -> Plan:
    """Float32 rows up to 2048 elements: a warp each, four to a block (no barrier: shuffles alone);
    up to 16384: a block each, 32 elements a thread (256-thread blocks budgeted for two a
    multiprocessor); longer: clusters of blocks of 512 threads, 32 elements each, budgeted for two a
    multiprocessor (a cluster of 2 to 8), and at 262,144 elements (8 blocks of 1024 threads) the most
    a portable cluster holds.  Measured on an H200 (``benchmarks/norms.py --sweep``).  BF16 rows
    (``itemsize`` 2) of those lengths: ``_BF16_PLANS``; other lengths as float32's.  Given the ``op``,
    a row held in shared memory or pipelined through it where that was measured faster (``_OP_PLANS``),
    if the device runs them (``hopper``; None: ``hopper_here()``)."""
    if n % 1024:
        raise ValueError(f"rows of a multiple of 1024 elements, not {n}")
    if (op, itemsize, n) in _OP_PLANS and (hopper_here() if hopper is None else hopper):
        return _OP_PLANS[op, itemsize, n]
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


@func
def weights(op: int, vec: int, w, wc, b, bc, g, h, at: Const[int]):
    """LayerNorm's weights and biases (RMSNorm's weights), ``vec`` of them from ``w[wc]`` and ``b[bc]``
    on, into ``g`` and ``h`` from element ``at``: loaded ahead of their use, several in flight at once."""
    if op != 0:
        gq = vload(w, wc, vec)
        for j in unroll(range(vec)):
            g[at + j] = float32(gq[j])
    if op == 1:
        hq = vload(b, bc, vec)
        for j in unroll(range(vec)):
            h[at + j] = float32(hq[j])


@func
def put(op: int, vec: int, y, row, col, e, g, h, at: Const[int], p0: float32, scale: float32):
    """Elements ``e[at:at + vec]`` of ``row`` from column ``col``, scaled (and shifted, weighted by
    ``g``, ``h``) by the row's statistics, stored at once (into bfloat16: rounded to nearest even)."""
    out = local(float32, vec)
    for j in unroll(range(vec)):
        if op == 0:
            out[j] = e[at + j] * scale
        elif op == 1:
            out[j] = (e[at + j] - p0) * scale * g[at + j] + h[at + j]
        else:
            out[j] = e[at + j] * scale * g[at + j]
    if vec == 4:
        vstore(y, (row, col), (out[0], out[1], out[2], out[3]))
    else:
        vstore(y, (row, col), (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7]))


def make_rows(op: str, T: Any, n: int, how: Plan | None = None, fast: bool = True) -> tuple[Any, Plan]:
    """The kernel computing ``op`` over rows of ``n`` elements of type ``T`` (float32, bfloat16) and
    how it is spread (``plan(n, itemsize, op)`` unless given; ``run`` launches it).  ``fast``: compiled with
    ``fastmath`` (the hardware's exp2, reciprocal and square root: within ``tolerance``), which a
    BF16 row needs to keep up with the memory (twice the elements a byte of float32's)."""
    OP = OPS.index(op)
    ITEM = np.dtype(T.dtype).itemsize
    how = how or plan(n, ITEM, op)
    THREADS, ROWS, CLUSTER, V, MINB, STAGED, PIPE, HOLD = how
    STAGES = int(PIPE) or 1  # the parts a block has landing at once (a pipelined plan's buffers)
    if (STAGED or PIPE) and ROWS != 1:
        raise ValueError("a staged or pipelined plan is a block (or a cluster) a row: rows 1")
    if PIPE and (STAGED or THREADS < 64):
        raise ValueError("a pipelined plan holds the part in registers (not staged), in blocks of 64 threads or more")
    LAND = STAGED or PIPE  # the block's part lands in shared memory by one bulk copy
    VEC = 16 // ITEM  # elements a load moves: 16 bytes (4 float32s, 8 bfloat16s)
    WARPS = THREADS // 32  # a row's warps
    SPAN = THREADS * V  # the elements of a row a block holds
    GROUP = 4 if (V // VEC) % 4 == 0 else 1  # (staged: the output loop's loads issued together)
    # a pipelined block's weights (and biases), the same for all its rows: held in shared memory after
    # its parts, brought once, where the plan says (LayerNorm, RMSNorm)
    HELD = bool(HOLD) and bool(PIPE) and OP != 0
    if HOLD and not PIPE:
        raise ValueError("a plan holding its weights in shared memory is a pipelined one")

    @kernel(fastmath=fast)
    def rows(x, y, w, b, eps: float32):  # (x, y: rows x n of T; w, b: n of T)
        gk.launch_bounds(THREADS * ROWS, MINB)
        if CLUSTER > 1:
            gk.cluster_dims(CLUSTER)
        part = shared(float32, (2, 2, WARPS))  # each warp's pair (two sets: a pipelined block's rows alternate)
        pairs = shared(float32, (2, CLUSTER, 2))  # every block's pair, stored by the cluster's blocks
        t = thread_idx.x % THREADS
        rank = block_idx.x % CLUSTER
        base = rank * SPAN
        if PIPE:  # the cluster's rows: its own number's, then every (the grid's clusters)-th after it
            first = block_idx.x // CLUSTER
            stop = x.shape[0]
            stride = gk.grid_dim.x // CLUSTER
        else:  # one row (the block's ROWS rows: each thread's is ``first`` + its row in the block)
            first = (block_idx.x // CLUSTER) * ROWS
            stop = first + 1
            stride = 1
        if LAND:
            buf = gk.dynamic_shared(T)  # the parts landing
            landed = shared(gk.mbarrier, STAGES + 1)  # (a part has landed; [STAGES]: the weights have)
        if CLUSTER > 1:
            came = shared(gk.mbarrier, 2)  # per set of ``pairs``: every block's pair has come
        if LAND or CLUSTER > 1:  # the barriers initialised, and the block's (first STAGES) parts on their way
            if thread_idx.x == 0:
                if LAND:
                    for st in unroll(range(STAGES + 1)):
                        gk.mbarrier_init(landed[st], 1)
                if CLUSTER > 1:
                    gk.mbarrier_init(came[0], 1)
                    gk.mbarrier_init(came[1], 1)
                gk.fence_mbarrier_init()
                if HELD:  # the block's weights and biases, once
                    gk.mbarrier_arrive_expect_tx(landed[STAGES], (2 if OP == 1 else 1) * SPAN * ITEM)
                    gk.bulk_load(buf[STAGES * SPAN], w[base], SPAN, landed[STAGES])
                    if OP == 1:
                        gk.bulk_load(buf[(STAGES + 1) * SPAN], b[base], SPAN, landed[STAGES])
                if LAND:
                    for st in unroll(range(STAGES)):
                        if first + st * stride < stop:
                            gk.mbarrier_arrive_expect_tx(landed[st], SPAN * ITEM)
                            gk.bulk_load(buf[st * SPAN], x[first + st * stride, base], SPAN, landed[st])
            gk.barrier()  # (the barriers initialised before any thread waits on them)
        if CLUSTER > 1:  # every block of the cluster has started, its barriers initialised (loads in flight)
            gk.cluster_barrier()
        v = local(float32, V)  # the block's part in registers (not staged)
        k = 0  # rows done: the set of ``part`` and ``pairs`` a row uses, and the phase its part lands in
        r0 = first
        while r0 < stop:  # (one row but in a pipelined plan: a loop nvcc sees run once, ``k`` 0)
            row = r0 + thread_idx.x // THREADS
            s = k & 1
            st = k % STAGES  # (the buffer this row's part landed in, in its phase ``k // STAGES``)
            p0 = float32(0)
            p1 = float32(0)
            if LAND:
                gk.mbarrier_wait(landed[st], (k // STAGES) & 1)
            if STAGED:  # (the elements stay in shared memory; nvcc may unroll these loops: ~80 registers)
                if OP == 0:  # softmax: the maximum, then the sum of exp(x - maximum): two reads
                    p0 = -math.inf
                    for i in range(V // VEC):
                        q = vload(buf, (i * THREADS + t) * VEC, VEC)
                        for j in unroll(range(VEC)):
                            p0 = max(p0, float32(q[j]))
                    for i in range(V // VEC):
                        q = vload(buf, (i * THREADS + t) * VEC, VEC)
                        for j in unroll(range(VEC)):
                            p1 += math.exp(float32(q[j]) - p0)
                else:
                    for i in range(V // VEC):
                        q = vload(buf, (i * THREADS + t) * VEC, VEC)
                        for j in unroll(range(VEC)):
                            p0 += float32(q[j]) if OP == 1 else float32(q[j]) * float32(q[j])
                    if OP == 1:
                        p0 = p0 / V
                        for i in range(V // VEC):
                            q = vload(buf, (i * THREADS + t) * VEC, VEC)
                            for j in unroll(range(VEC)):
                                p1 += (float32(q[j]) - p0) * (float32(q[j]) - p0)
            else:  # the part into registers (from shared memory where it landed), then this thread's pair
                for i in unroll(range(V // VEC)):  # VEC elements a load, the warp's loads adjacent
                    if PIPE:
                        q = vload(buf, st * SPAN + (i * THREADS + t) * VEC, VEC)
                    else:
                        q = vload(x, (row, base + (i * THREADS + t) * VEC), VEC)
                    for j in unroll(range(VEC)):
                        v[i * VEC + j] = float32(q[j])
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
            for m in unroll(range(5)):  # across the warp: 16, 8, 4, 2, 1 lanes apart
                q0 = gk.shfl_xor_sync(0xFFFFFFFF, p0, 16 >> m)
                q1 = gk.shfl_xor_sync(0xFFFFFFFF, p1, 16 >> m)
                p0, p1 = merge(OP, p0, p1, count, q0, q1, count)
                count *= 2
            if WARPS > 1:  # across the row's warps, through shared memory (each thread alike)
                if gk.lane_id() == 0:
                    part[s, 0, t // 32] = p0
                    part[s, 1, t // 32] = p1
                gk.barrier()
                if PIPE and thread_idx.x == 0 and row + STAGES * stride < stop:  # (every thread has read the part)
                    gk.mbarrier_arrive_expect_tx(landed[st], SPAN * ITEM)  # a later row's part lands meanwhile
                    gk.bulk_load(buf[st * SPAN], x[row + STAGES * stride, base], SPAN, landed[st])
                p0 = part[s, 0, 0]
                p1 = part[s, 1, 0]
                for m in unroll(range(1, WARPS)):
                    p0, p1 = merge(OP, p0, p1, count * m, part[s, 0, m], part[s, 1, m], count)
            if CLUSTER > 1:  # across the cluster's blocks: each stores its pair into every block's shared memory
                if t == 0:  # (store_async: no cluster barrier, whose release would wait for the last row's stores)
                    gk.mbarrier_arrive_expect_tx(came[s], CLUSTER * 8)
                    for r in unroll(range(CLUSTER)):
                        gk.store_async(gk.peer(pairs, r)[s, rank, 0], (p0, p1), gk.peer(came, r)[s])
                gk.mbarrier_wait(came[s], (k >> 1) & 1)
                block_count = count * WARPS
                p0 = pairs[s, 0, 0]
                p1 = pairs[s, 0, 1]
                for r in unroll(range(1, CLUSTER)):
                    p0, p1 = merge(OP, p0, p1, block_count * r, pairs[s, r, 0], pairs[s, r, 1], block_count)
            # the row's statistics, then each element
            if OP == 0 and STAGED:  # (staged: each element's exp(x - maximum) is taken as it is written)
                scale = 1 / p1
            elif OP == 0:
                scale = math.exp(m_own - p0) / p1
            elif OP == 1:
                scale = gk.rsqrt(p1 / n + eps)
            else:
                scale = gk.rsqrt(p0 / n + eps)
            if HELD:
                gk.mbarrier_wait(landed[STAGES], 0)  # (passes at once after the first row)
            e = local(float32, GROUP * VEC)  # elements on their way out, GROUP loads' worth at a time
            g = local(float32, GROUP * VEC)  # (their weights)
            h = local(float32, GROUP * VEC)  # (and biases)
            if STAGED:  # (a loop: the elements come from shared memory again)
                for i0 in range(V // VEC // GROUP):
                    for u in unroll(range(GROUP)):  # the group's weights first: GROUP loads in flight at once
                        col = base + ((i0 * GROUP + u) * THREADS + t) * VEC
                        weights(OP, VEC, w, col, b, col, g, h, u * VEC)
                    for u in unroll(range(GROUP)):
                        q = vload(buf, ((i0 * GROUP + u) * THREADS + t) * VEC, VEC)
                        for j in unroll(range(VEC)):
                            e[u * VEC + j] = math.exp(float32(q[j]) - p0) if OP == 0 else float32(q[j])
                        col = base + ((i0 * GROUP + u) * THREADS + t) * VEC
                        put(OP, VEC, y, row, col, e, g, h, u * VEC, p0, scale)
            else:
                for i in unroll(range(V // VEC)):
                    if HELD:  # (from shared memory: the weights after the parts, the biases after them)
                        wc = STAGES * SPAN + (i * THREADS + t) * VEC
                        weights(OP, VEC, buf, wc, buf, wc + SPAN, g, h, 0)
                    else:
                        col = base + (i * THREADS + t) * VEC
                        weights(OP, VEC, w, col, b, col, g, h, 0)
                    for j in unroll(range(VEC)):
                        e[j] = v[i * VEC + j]
                    put(OP, VEC, y, row, base + (i * THREADS + t) * VEC, e, g, h, 0, p0, scale)
            if not PIPE:
                break
            r0 += stride
            k += 1

    rows.shared_bytes = (STAGES + (2 if OP == 1 else 1) * HELD) * SPAN * ITEM if LAND else 0
    return rows, how


def run(
    op: str, kern: Any, how: Plan, x: Any, y: Any, w: Any, b: Any, eps: float = 1e-5, clusters: int | None = None
) -> None:
    """``y = op(x)`` row by row (x, y: rows x n device arrays, rows a multiple of ``how.rows``; w, b: n).
    A pipelined plan runs ``clusters`` clusters (default: as many as the device runs at once, where the
    backend can say, else one a row), each looping over its rows."""
    rows = x.shape[0] // how.rows
    if how.pipelined and clusters is None:
        known = kern.__dict__.setdefault("resident_clusters", {})  # per device
        device = gk.get_backend().key
        if device not in known:
            try:
                fit = kern.resident_blocks(x, y, w, b, eps, block=how.threads * how.rows, shared=kern.shared_bytes)
                known[device] = fit // how.cluster
            except gk.BackendError:  # (the simulator: any grid runs)
                known[device] = None
        clusters = known[device]
    if how.pipelined and clusters is not None:
        rows = min(rows, max(clusters, 1))
    kern[rows * how.cluster, how.threads * how.rows, kern.shared_bytes](x, y, w, b, eps)


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
        f"cluster{', held in shared memory' if how.staged else ''}{', pipelined' if how.pipelined else ''})  "
        f"{t * 1e3:9.3f} ms  "
        f"{2 * x.nbytes / t / 1e12:6.3f} TB/s = {t_copy / t:.2f} of a copy's "
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
        how = plan(n, np.dtype(T.dtype).itemsize, op)
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
