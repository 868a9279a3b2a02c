"""A register-blocked SGEMM written in gpukern: what it takes to approach cuBLAS.

The flagship (matmul_tiled.py) gives every thread one element of C, so each
multiply-add needs two shared-memory loads.  Here every thread owns a TM x TN
tile of C held in registers, and each step of the k loop loads TM values of A
and TN values of B from shared memory for TM * TN multiply-adds:

- block tiling: a block computes a BM x BN tile of C, stepping through k by BK;
  A's BM x BK tile is stored transposed in shared memory, so both tiles are read
  along rows;
- register tiling: ``local`` arrays indexed only inside ``unroll(range(...))``
  loops, whose indices are then constants, so nvcc keeps them in registers;
- vector loads and stores: ``vload``/``vstore`` move 4 floats at a time between
  global memory, shared memory and registers (float4);
- bank-conflict-free reads: a thread's TM rows (TN columns) are split into groups
  of 4 spaced 4 * BM / TM (4 * BN / TN) apart, so the threads of a warp read
  consecutive float4s;
- double buffering: two pairs of shared tiles, so the next tile is stored while
  the current one is read, with one barrier per step instead of two; the loop's
  first pass (t = -1) only loads and stores the first tile, so every other step's
  stores sit in the same straight-line code as its multiply-adds and nvcc spreads
  them among the last of them (no step ends with every thread storing at once, then
  waiting at the barrier); the last step stores a tile of zeros nobody reads;
- ``launch_bounds`` tells nvcc the block size, so it can budget registers.

``sgemm_async_kernel`` changes how the tiles reach shared memory and how threads share them:

- asynchronous copies: STAGES shared stages in dynamic shared memory, filled by
  ``gk.async_copy`` (``cp.async``) STAGES - 1 k steps ahead, commit groups counted by
  ``async_wait``, one barrier a step: tiles go from global to shared memory without passing
  through registers, and no thread stalls on global memory before it multiplies;
- A stays transposed in shared memory, now by 4-byte copies (``cp.async`` cannot transpose, and a
  row-major A read along k would need 4 values of each of a thread's TM rows at once, 3 * TM more
  registers); 8 threads copy 8 consecutive k of a row (one 32-byte sector of global memory), a
  warp 4 rows, and A's staged rows are padded by 4 floats, so each copy instruction of a warp
  reads 4 sectors and writes 32 banks;
- warp tiling: each warp owns a WM x WN sub-tile, and a thread's TM x TN tile is 4 x 4 pieces
  spaced WM * 4 / TM rows and WN * 4 / TN columns apart in it, the lanes' pieces side by side
  (8 x 4 or 4 x 8 lanes in every configuration below): a warp's float4 read of either tile covers
  at most 128 consecutive bytes (one shared-memory wavefront, the rest broadcast), and a k step
  of a warp reads just WM values of A and WN of B;
- ``launch_bounds(threads, MINB)`` asks nvcc for registers for MINB blocks an SM (8 x 8 thread
  tiles with BK 8 or 16 fit 2 blocks of 256 threads without spilling), and blocks walk C's
  tiles in groups of GROUP tile rows, column by column, so blocks running together share
  panels of A and B in L2;
- edges: where a copy would pass the matrix's edge a plain shared store writes zeros instead;
  when n is not a multiple of 4, B's copies (and C's stores) are 4-byte ones (``VEC=False``).

Every tile size is a ``Const``: each configuration is its own specialisation,
and ``gk.autotune`` picks the fastest of both kernels' ``CONFIGS`` for the device and
problem size (and remembers it); the async ones are named
``async_{BM}x{BN}x{BK}_{WM}x{WN}_{TM}x{TN}_s{STAGES}``.  Sizes need not be multiples of the
tiles; when k or n is not a multiple of 4 sgemm_kernel is specialised (``VEC=False``) to scalar
loads, since float4 loads need 16-byte aligned rows.

    python examples/matmul_fast.py --size 4096            # autotuned, checked against NumPy
    python examples/matmul_fast.py --size 1000 --config 64x64x8_4x4
    python examples/matmul_fast.py --size 1000 --config async_128x128x8_64x32_8x8_s3
    python examples/matmul_fast.py --show-source --backend opencl
"""

from __future__ import annotations

import argparse
import ast
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np

import gpukern as gk
from gpukern import (
    Array,
    Const,
    barrier,
    block_idx,
    dynamic_shared,
    float32,
    grid_dim,
    int32,
    kernel,
    launch_bounds,
    local,
    shared,
    thread_idx,
    unroll,
    vload,
    vstore,
)


@gk.func
def grouped_tile(group: int32):
    """This block's tile of C (row, column) when the blocks walk C's tiles in groups of ``group``
    tile rows, column by column: blocks running at the same time then read the same panels of A
    and B, which stay in L2, rather than each its own."""
    tile = block_idx.y * grid_dim.x + block_idx.x
    first = tile // (group * grid_dim.x) * group
    rows = min(grid_dim.y - first, group)
    return first + tile % (group * grid_dim.x) % rows, tile % (group * grid_dim.x) // rows


@gk.func
def store_tiles(a_tiles, b_tiles, a_next, b_next, buf: int32):
    """A tile from this thread's registers into shared buffer ``buf``: A's float4s along k
    transposed (``a_tiles[buf, kk, row]``), B's as they are. The tile sizes and the block's thread
    count come from the arrays' shapes, as ``sgemm_kernel`` made them."""
    BK = a_tiles.shape[1]
    BM = a_tiles.shape[2]
    BN = b_tiles.shape[2]
    NA = a_next.shape[0]
    NB = b_next.shape[0]
    THREADS = BM * BK // 4 // NA
    tid = thread_idx.x
    for s in unroll(range(NA)):
        ar = (tid + s * THREADS) // (BK // 4)
        ak = (tid + s * THREADS) % (BK // 4) * 4
        for e in unroll(range(4)):
            a_tiles[buf, ak + e, ar] = a_next[s, e]
    for s in unroll(range(NB)):
        br = (tid + s * THREADS) // (BN // 4)
        bc = (tid + s * THREADS) % (BN // 4) * 4
        vstore(b_tiles, (buf, br, bc), (b_next[s, 0], b_next[s, 1], b_next[s, 2], b_next[s, 3]))


@kernel
def sgemm_kernel(
    a: Array[float32],
    b: Array[float32],
    c: Array[float32],
    m: int32,
    n: int32,
    k: int32,
    BM: Const[int],
    BN: Const[int],
    BK: Const[int],
    TM: Const[int],
    TN: Const[int],
    VEC: Const[bool],
):
    """c (m x n) = a (m x k) @ b (k x n), row-major; a block of BM*BN/(TM*TN) threads per BM x BN tile."""
    THREADS = (BM // TM) * (BN // TN)
    launch_bounds(THREADS)
    a_tiles = shared(float32, (2, BK, BM))  # transposed: a_tiles[buf, kk, row]
    b_tiles = shared(float32, (2, BK, BN))
    NA = BM * BK // 4 // THREADS  # float4s of A (of B) each thread moves per tile
    NB = BK * BN // 4 // THREADS
    a_next = local(float32, (NA, 4))  # the next tile, in flight from global memory
    b_next = local(float32, (NB, 4))
    acc = local(float32, (TM, TN))
    a_reg = local(float32, (TM,))
    b_reg = local(float32, (TN,))

    tid = thread_idx.x
    tx = tid % (BN // TN)  # which group of 4 columns in each column span
    ty = tid // (BN // TN)
    row0 = block_idx.y * BM  # row by row: measured faster here than grouped_tile's order (H100)
    col0 = block_idx.x * BN
    for i in unroll(range(TM)):
        for j in unroll(range(TN)):
            acc[i, j] = 0.0

    for t in range(-1, (k + BK - 1) // BK):  # load tile t + 1, multiply tile t, store tile t + 1
        k0 = (t + 1) * BK
        for s in unroll(range(NA)):  # tile t + 1 into registers (zeros past the edges): A as float4s along k
            ar = (tid + s * THREADS) // (BK // 4)
            ak = (tid + s * THREADS) % (BK // 4) * 4
            for e in unroll(range(4)):
                a_next[s, e] = 0.0
            if VEC:
                if row0 + ar < m and k0 + ak < k:
                    x = vload(a, (row0 + ar) * k + k0 + ak, 4)
                    for e in unroll(range(4)):
                        a_next[s, e] = x[e]
            elif row0 + ar < m:
                for e in unroll(range(4)):
                    if k0 + ak + e < k:
                        a_next[s, e] = a[(row0 + ar) * k + k0 + ak + e]
        for s in unroll(range(NB)):  # B along n
            br = (tid + s * THREADS) // (BN // 4)
            bc = (tid + s * THREADS) % (BN // 4) * 4
            for e in unroll(range(4)):
                b_next[s, e] = 0.0
            if VEC:
                if k0 + br < k and col0 + bc < n:
                    y = vload(b, (k0 + br) * n + col0 + bc, 4)
                    for e in unroll(range(4)):
                        b_next[s, e] = y[e]
            elif k0 + br < k:
                for e in unroll(range(4)):
                    if col0 + bc + e < n:
                        b_next[s, e] = b[(k0 + br) * n + col0 + bc + e]
        if t < 0:
            store_tiles(a_tiles, b_tiles, a_next, b_next, 0)
        else:  # multiply tile t while tile t + 1 is in flight
            cur = t % 2
            for kk in unroll(range(BK)):
                for g in unroll(range(TM // 4)):
                    va = vload(a_tiles, (cur, kk, g * (4 * BM // TM) + ty * 4), 4)
                    for e in unroll(range(4)):
                        a_reg[g * 4 + e] = va[e]
                for g in unroll(range(TN // 4)):
                    vb = vload(b_tiles, (cur, kk, g * (4 * BN // TN) + tx * 4), 4)
                    for e in unroll(range(4)):
                        b_reg[g * 4 + e] = vb[e]
                for i in unroll(range(TM)):
                    for j in unroll(range(TN)):
                        acc[i, j] += a_reg[i] * b_reg[j]
            # tile t + 1 into the other buffer, which nobody reads since the last barrier; here, in
            # the multiply's own block, nvcc spreads the stores among the last multiply-adds (after
            # a branch, all threads would store at once, then wait at the barrier with nothing to do);
            # the last step's (zeros past k) is never read: one store phase more, not a branch
            store_tiles(a_tiles, b_tiles, a_next, b_next, 1 - cur)
        barrier()

    for i in unroll(range(TM)):
        row = row0 + (i // 4) * (4 * BM // TM) + ty * 4 + i % 4
        for g in unroll(range(TN // 4)):
            col = col0 + g * (4 * BN // TN) + tx * 4
            if row < m:
                if VEC and col + 3 < n:
                    vstore(c, row * n + col, (acc[i, g * 4], acc[i, g * 4 + 1], acc[i, g * 4 + 2], acc[i, g * 4 + 3]))
                else:
                    for e in unroll(range(4)):
                        if col + e < n:
                            c[row * n + col + e] = acc[i, g * 4 + e]


@kernel
def sgemm_async_kernel(
    a: Array[float32],
    b: Array[float32],
    c: Array[float32],
    m: int32,
    n: int32,
    k: int32,
    BM: Const[int],
    BN: Const[int],
    BK: Const[int],
    WM: Const[int],
    WN: Const[int],
    TM: Const[int],
    TN: Const[int],
    STAGES: Const[int],
    MINB: Const[int],
    GROUP: Const[int],
    VEC: Const[bool],
):
    """c (m x n) = a (m x k) @ b (k x n), row-major: a block of (BM / WM) x (BN / WN) warps per
    BM x BN tile of C, STAGES shared stages filled by asynchronous copies (``launch_spec`` gives the
    block and the dynamic shared bytes); VEC: n is a multiple of 4 (B's rows are 16-byte aligned)."""
    THREADS = (BM // WM) * (BN // WN) * 32
    launch_bounds(THREADS, MINB)
    WMI = TM // 4  # a thread's rows come in WMI groups of 4, one per WSM rows of the warp's tile
    WNI = TN // 4  # and its columns in WNI groups of 4, one per WSN columns
    WSM = WM // WMI
    WSN = WN // WNI
    LANES_N = WSN // 4  # a warp's lanes as (WSM // 4) x LANES_N, each reading 4 rows and 4 columns
    LDA = BM + 4  # a row of A's transposed tile, padded: the transposing copies of a warp hit 32 banks
    A_TILE = BK * LDA
    STAGE = A_TILE + BK * BN  # floats of one stage: A's tile (transposed), then B's
    AROWS = THREADS // 8  # rows of A's tile one pass of the threads copies: 8 threads a row, one k each
    NA = BM * BK // THREADS  # 4-byte copies of A each thread makes per stage
    NB = BK * BN // 4 // THREADS  # 16-byte copies of B
    s = dynamic_shared(float32)
    acc = local(float32, (TM, TN))
    a_reg = local(float32, (TM,))
    b_reg = local(float32, (TN,))

    tid = thread_idx.x
    warp = tid // 32
    lane = tid % 32
    wr = warp // (BN // WN) * WM  # the warp's sub-tile in the block's tile
    wc = warp % (BN // WN) * WN
    tr = lane // LANES_N * 4  # the lane's first row and column in each group
    tc = lane % LANES_N * 4
    ti, tj = grouped_tile(GROUP)
    row0 = ti * BM
    col0 = tj * BN
    for i in unroll(range(TM)):
        for j in unroll(range(TN)):
            acc[i, j] = 0.0

    steps = (k + BK - 1) // BK
    for t in range(steps + STAGES - 1):  # copy k step t, multiply k step t - (STAGES - 1)
        cur = t - (STAGES - 1)
        if cur >= 0:
            gk.async_wait(STAGES - 2)  # this thread's copies of step cur have landed
            barrier()  # everyone's have, and everyone is done with step cur - 1, whose stage t takes
        if t < steps:
            k0 = t * BK
            base = t % STAGES * STAGE
            for q in unroll(range(NA)):  # A, transposed: a warp copies 4 rows' 32-byte sectors into 32 banks
                ar = tid // 8 + q % (BM // AROWS) * AROWS
                ak = tid % 8 + q // (BM // AROWS) * 8
                if row0 + ar < m and k0 + ak < k:
                    gk.async_copy(s[base + ak * LDA + ar], a[(row0 + ar) * k + k0 + ak])
                else:
                    s[base + ak * LDA + ar] = 0.0
            for q in unroll(range(NB)):  # B: 16-byte pieces along its rows
                e = tid + q * THREADS
                br = e // (BN // 4)
                bc = e % (BN // 4) * 4
                dst = base + A_TILE + br * BN + bc
                if VEC:
                    if k0 + br < k and col0 + bc < n:
                        gk.async_copy(s[dst], b[(k0 + br) * n + col0 + bc], count=4)
                    else:
                        vstore(s, dst, (0.0, 0.0, 0.0, 0.0))
                else:  # n is not a multiple of 4: rows of B are not 16-byte aligned
                    for x in unroll(range(4)):
                        if k0 + br < k and col0 + bc + x < n:
                            gk.async_copy(s[dst + x], b[(k0 + br) * n + col0 + bc + x])
                        else:
                            s[dst + x] = 0.0
        gk.async_commit()  # a group every step, empty or not, so that the wait's count holds
        if cur >= 0:
            sa = cur % STAGES * STAGE + wr + tr
            sb = cur % STAGES * STAGE + A_TILE + wc + tc
            for kk in unroll(range(BK)):
                for i in unroll(range(WMI)):
                    va = vload(s, sa + kk * LDA + i * WSM, 4)
                    for e in unroll(range(4)):
                        a_reg[i * 4 + e] = va[e]
                for j in unroll(range(WNI)):
                    vb = vload(s, sb + kk * BN + j * WSN, 4)
                    for e in unroll(range(4)):
                        b_reg[j * 4 + e] = vb[e]
                for i in unroll(range(TM)):
                    for j in unroll(range(TN)):
                        acc[i, j] += a_reg[i] * b_reg[j]

    for i in unroll(range(TM)):
        row = row0 + wr + (i // 4) * WSM + tr + i % 4
        for j in unroll(range(0, TN, 4)):
            col = col0 + wc + j // 4 * WSN + tc
            if row < m:
                if VEC:
                    if col < n:
                        vstore(c, row * n + col, (acc[i, j], acc[i, j + 1], acc[i, j + 2], acc[i, j + 3]))
                else:
                    for e in unroll(range(4)):
                        if col + e < n:
                            c[row * n + col + e] = acc[i, j + e]


# Configurations as (BM, BN, BK, TM, TN); the name is how --config and the autotuner show them.
CONFIGS = {
    f"{bm}x{bn}x{bk}_{tm}x{tn}": dict(BM=bm, BN=bn, BK=bk, TM=tm, TN=tn)
    for bm, bn, bk, tm, tn in [
        (128, 128, 8, 8, 8),
        (128, 128, 16, 8, 8),
        (128, 64, 8, 8, 8),
        (64, 128, 8, 8, 8),
        (128, 64, 16, 8, 8),
        (64, 128, 16, 8, 8),
        (64, 64, 8, 8, 4),
        (64, 64, 16, 4, 4),
        (64, 64, 8, 4, 8),
        (128, 256, 8, 8, 16),
        (256, 128, 8, 16, 8),
        (128, 256, 16, 8, 16),
        (256, 128, 16, 16, 8),
    ]
}
DEFAULT = "128x128x8_8x8"

# sgemm_async_kernel's, as (BM, BN, BK, WM, WN, TM, TN, STAGES, MINB): block tile, k step, warp
# tile, thread tile, shared stages, and the blocks per SM that launch_bounds asks registers for.
ASYNC_CONFIGS = {
    f"async_{bm}x{bn}x{bk}_{wm}x{wn}_{tm}x{tn}_s{st}": dict(
        KERNEL="async", BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, TM=tm, TN=tn, STAGES=st, MINB=mb, GROUP=8
    )
    for bm, bn, bk, wm, wn, tm, tn, st, mb in [
        (128, 128, 8, 64, 32, 8, 8, 3, 2),  # 256 threads
        (128, 128, 8, 64, 32, 8, 8, 4, 2),
        (128, 128, 16, 64, 32, 8, 8, 2, 2),
        (128, 128, 16, 64, 32, 8, 8, 3, 2),
        (128, 128, 16, 64, 32, 8, 8, 4, 2),
        (128, 128, 32, 64, 32, 8, 8, 2, 1),
        (128, 256, 8, 64, 64, 8, 16, 3, 1),
        (256, 128, 8, 64, 64, 16, 8, 3, 1),
        (128, 128, 8, 64, 64, 8, 16, 3, 2),  # 128 threads
        (128, 128, 16, 64, 64, 8, 16, 3, 2),
        (64, 128, 8, 32, 64, 8, 8, 3, 4),
        (64, 128, 16, 32, 64, 8, 8, 3, 4),
        (128, 64, 16, 64, 32, 8, 8, 3, 4),
        (64, 64, 8, 32, 32, 4, 8, 3, 4),
        (64, 64, 16, 32, 32, 4, 8, 3, 4),
    ]
}
CONFIGS.update(ASYNC_CONFIGS)

ASYNC_KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "MINB", "GROUP")


def is_async(cfg: dict[str, int]) -> bool:
    """Whether a configuration is sgemm_async_kernel's (else sgemm_kernel's)."""
    return cfg.get("KERNEL") == "async"


def check_config(cfg: dict[str, int]) -> None:
    """Refuse tile sizes the kernel's index arithmetic does not cover."""
    if is_async(cfg):
        bm, bn, bk, wm, wn, tm, tn, st = (cfg[x] for x in ASYNC_KEYS[:8])
        ok = tm % 4 == 0 and tn % 4 == 0 and bm % wm == 0 and bn % wn == 0 and wm % (tm // 4) == 0
        ok = ok and wn % (tn // 4) == 0 and 2 <= st <= 8 and bk % 8 == 0 and bm % 32 == 0
        if ok:
            threads = (bm // wm) * (bn // wn) * 32
            wsm, wsn = wm // (tm // 4), wn // (tn // 4)  # a warp's lanes cover wsm x wsn, 4 x 4 each
            ok = wsm % 4 == 0 and wsn % 4 == 0 and (wsm // 4) * (wsn // 4) == 32
            ok = ok and bm % (threads // 8) == 0 and (bk * bn // 4) % threads == 0
    else:
        bm, bn, bk, tm, tn = (cfg[x] for x in ("BM", "BN", "BK", "TM", "TN"))
        threads = (bm // tm) * (bn // tn)
        ok = (
            tm % 4 == 0
            and tn % 4 == 0
            and bm % tm == 0
            and bn % tn == 0
            and bk % 4 == 0
            and (bm * bk // 4) % threads == 0
            and (bk * bn // 4) % threads == 0
        )
    if not ok:
        name = "sgemm_async_kernel" if is_async(cfg) else "sgemm_kernel"
        raise gk.LaunchError(f"tile configuration {cfg} is not supported by {name}")


def launch_config(m: int, n: int, cfg: dict[str, int]) -> tuple[tuple[int, int], int]:
    """Grid and block of the configuration's kernel for an m x n result."""
    bm, bn = cfg["BM"], cfg["BN"]
    if is_async(cfg):
        return ((n + bn - 1) // bn, (m + bm - 1) // bm), (bm // cfg["WM"]) * (bn // cfg["WN"]) * 32
    return ((n + bn - 1) // bn, (m + bm - 1) // bm), (bm // cfg["TM"]) * (bn // cfg["TN"])


def shared_bytes(cfg: dict[str, int]) -> int:
    """Dynamic shared memory of an async configuration: its stages of A's padded, transposed tile and B's."""
    return cfg["STAGES"] * cfg["BK"] * (cfg["BM"] + 4 + cfg["BN"]) * 4


def launch_spec(m: int, n: int, cfg: dict[str, int]) -> tuple[Any, ...]:
    """``(kernel, grid, block)`` of a configuration, with its shared bytes last for an async one."""
    grid, block = launch_config(m, n, cfg)
    if is_async(cfg):
        return sgemm_async_kernel, grid, block, shared_bytes(cfg)
    return sgemm_kernel, grid, block


def kernel_args(a, b, c, m: int, n: int, k: int, cfg: dict[str, int]) -> tuple[Any, ...]:
    """The arguments of the configuration's kernel, its ``Const``s included."""
    if is_async(cfg):  # B's copies (and C's stores) are float4s where n is a multiple of 4
        return (a, b, c, m, n, k, *(cfg[x] for x in ASYNC_KEYS), n % 4 == 0)
    return (a, b, c, m, n, k, *(cfg[x] for x in ("BM", "BN", "BK", "TM", "TN")), k % 4 == 0 and n % 4 == 0)


def sgemm(a, b, c, m: int, n: int, k: int, config: str | dict[str, int] | None = None) -> None:
    """c = a @ b on device arrays (flat, row-major float32); ``config``: a name of CONFIGS, a dict,
    or None for the autotuner's choice on this device and shape."""
    cfg = choose(m, n, k) if config is None else CONFIGS[config] if isinstance(config, str) else config
    check_config(cfg)
    kern, *where = launch_spec(m, n, cfg)
    kern[tuple(where)](*kernel_args(a, b, c, m, n, k, cfg))


class _EitherKernel:
    """Both kernels as one for ``gk.autotune``, which times one kernel's configurations: the
    launch it asks for names the kernel (``(kernel, grid, block[, shared_bytes])``), and the choice
    is remembered under both kernels' source."""

    __name__ = "sgemm"

    def __init__(self, *kernels: Any):
        self.parsed = SimpleNamespace(tree=ast.Module(body=[k.parsed.tree for k in kernels], type_ignores=[]))

    def __getitem__(self, config: tuple[Any, ...]) -> Any:
        return config[0][config[1:]]


_either = _EitherKernel(sgemm_kernel, sgemm_async_kernel)
_chosen: dict[tuple[int, int, int], dict[str, int]] = {}


def choose(m: int, n: int, k: int, verbose: bool = False) -> dict[str, int]:
    """The fastest configuration of either kernel for this shape on the current device (timed once,
    then cached on disk)."""
    key = (m, n, k)
    if key not in _chosen:
        rng = np.random.default_rng(1)
        a = gk.to_device(rng.standard_normal(m * k, dtype=np.float32))
        b = gk.to_device(rng.standard_normal(k * n, dtype=np.float32))
        c = gk.empty(m * n, np.float32)
        _chosen[key] = gk.autotune(
            _either,
            list(CONFIGS.values()),
            args=lambda cfg: kernel_args(a, b, c, m, n, k, cfg),
            launch=lambda cfg: launch_spec(m, n, cfg),
            key=(m, n, k),
            verbose=verbose,
        )
    return _chosen[key]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="n for an n x n x n product (default 1024; 128 on the simulator)")
    p.add_argument("--config", choices=sorted(CONFIGS), help="tile configuration (default: autotuned)")
    p.add_argument("--backend", choices=("cuda", "opencl", "sim"), help="default: the best available")
    p.add_argument("--show-source", action="store_true", help="print the generated C and exit")
    p.add_argument("--repeat", type=int, help="timed runs; the median is reported (default 10; 1 on the simulator)")
    args = p.parse_args(argv)
    n = gk.problem_size(args.size, 1024, 128, args.backend)

    if args.show_source:
        dialect = args.backend if args.backend in ("cuda", "opencl") else "cuda"
        cfg = CONFIGS[args.config or DEFAULT]
        types = (Array[float32],) * 3 + (int32,) * 3
        kern = sgemm_async_kernel if is_async(cfg) else sgemm_kernel
        consts = kernel_args(*types[:3], 4, 4, 4, cfg)[6:]  # those of sizes that are multiples of 4
        print(kern.source(*types, *consts, backend=dialect))
        return 0

    try:
        if args.backend:
            gk.set_backend(args.backend)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    da, db = gk.to_device(a.ravel()), gk.to_device(b.ravel())
    dc = gk.empty(n * n, np.float32)
    print(f"device: {backend.device_name()}  backend: {backend.name}  size: {n}x{n}x{n}")
    if args.config:
        cfg = CONFIGS[args.config]
    elif backend.name == "sim":  # timings of the simulator say nothing of a GPU's: no tuning there
        cfg = CONFIGS[DEFAULT]
        print(f"the simulator: configuration {DEFAULT} (--config to choose; a GPU's is autotuned)")
    else:
        cfg = choose(n, n, n, verbose=True)
    name = next((k for k, v in CONFIGS.items() if v == cfg), str(cfg))
    sim = backend.name == "sim"  # one run: the simulator's time is no GPU's
    repeat = args.repeat if args.repeat is not None else 1 if sim else 10
    t = gk.benchmark(lambda: sgemm(da, db, dc, n, n, n, cfg), repeat=repeat, warmup=0 if sim else 2)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(dc.get().reshape(n, n) - ref).max() / np.abs(ref).max())
    if not err < 1e-4:
        print(f"sgemm {name}: WRONG result, max relative error {err:.2e}", file=sys.stderr)
        raise SystemExit(1)
    gflops = 2.0 * n**3 / t / 1e9
    print(f"sgemm {name}: {t * 1e3:9.3f} ms  {gflops:8.2f} GFLOP/s  max rel. error vs NumPy {err:.1e}  OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
