"""Prototype: sgemm_kernel with a peeled first tile, so the loop body is one block (loads of tile t + 1,
multiply tile t, store t + 1 into the other buffer, barrier), and A's loads mapped so that its
transposing shared stores are conflict-free (AMAP=1). Sizes: multiples of 4 (VEC path only)."""
import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, int32, kernel, launch_bounds, local, shared, thread_idx, unroll, vload, vstore


@kernel
def sgemm2(a: Array[float32], b: Array[float32], c: Array[float32], m: int32, n: int32, k: int32,
           BM: Const[int], BN: Const[int], BK: Const[int], TM: Const[int], TN: Const[int], AMAP: Const[int]):
    THREADS = (BM // TM) * (BN // TN)
    launch_bounds(THREADS)
    a_tiles = shared(float32, (2, BK, BM))
    b_tiles = shared(float32, (2, BK, BN))
    NA = BM * BK // 4 // THREADS
    NB = BK * BN // 4 // THREADS
    a_next = local(float32, (NA, 4))
    b_next = local(float32, (NB, 4))
    acc = local(float32, (TM, TN))
    a_reg = local(float32, (TM,))
    b_reg = local(float32, (TN,))
    tid = thread_idx.x
    tx = tid % (BN // TN)
    ty = tid // (BN // TN)
    row0 = block_idx.y * BM
    col0 = block_idx.x * BN
    for i in unroll(range(TM)):
        for j in unroll(range(TN)):
            acc[i, j] = 0.0
    steps = (k + BK - 1) // BK
    for t in range(-1, steps):
        k0 = (t + 1) * BK  # load tile t + 1 (zeros past k)
        for s in unroll(range(NA)):
            if AMAP == 1:
                ar = (tid + s * THREADS) % BM
                ak = (tid + s * THREADS) // BM * 4
            else:
                ar = (tid + s * THREADS) // (BK // 4)
                ak = (tid + s * THREADS) % (BK // 4) * 4
            for e in unroll(range(4)):
                a_next[s, e] = 0.0
            if row0 + ar < m and k0 + ak < k:
                x = vload(a, (row0 + ar) * k + k0 + ak, 4)
                for e in unroll(range(4)):
                    a_next[s, e] = x[e]
        for s in unroll(range(NB)):
            br = (tid + s * THREADS) // (BN // 4)
            bc = (tid + s * THREADS) % (BN // 4) * 4
            for e in unroll(range(4)):
                b_next[s, e] = 0.0
            if k0 + br < k and col0 + bc < n:
                y = vload(b, (k0 + br) * n + col0 + bc, 4)
                for e in unroll(range(4)):
                    b_next[s, e] = y[e]
        if t >= 0:
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
                if kk == BK - 1:  # in the same block as the multiply-adds: the stores go among them
                    nxt = (t + 1) % 2
                    for s in unroll(range(NA)):
                        if AMAP == 1:
                            ar = (tid + s * THREADS) % BM
                            ak = (tid + s * THREADS) // BM * 4
                        else:
                            ar = (tid + s * THREADS) // (BK // 4)
                            ak = (tid + s * THREADS) % (BK // 4) * 4
                        for e in unroll(range(4)):
                            a_tiles[nxt, ak + e, ar] = a_next[s, e]
                    for s in unroll(range(NB)):
                        br = (tid + s * THREADS) // (BN // 4)
                        bc = (tid + s * THREADS) % (BN // 4) * 4
                        vstore(b_tiles, (nxt, br, bc), (b_next[s, 0], b_next[s, 1], b_next[s, 2], b_next[s, 3]))
        else:
            for s in unroll(range(NA)):
                if AMAP == 1:
                    ar = (tid + s * THREADS) % BM
                    ak = (tid + s * THREADS) // BM * 4
                else:
                    ar = (tid + s * THREADS) // (BK // 4)
                    ak = (tid + s * THREADS) % (BK // 4) * 4
                for e in unroll(range(4)):
                    a_tiles[0, ak + e, ar] = a_next[s, e]
            for s in unroll(range(NB)):
                br = (tid + s * THREADS) // (BN // 4)
                bc = (tid + s * THREADS) % (BN // 4) * 4
                vstore(b_tiles, (0, br, bc), (b_next[s, 0], b_next[s, 1], b_next[s, 2], b_next[s, 3]))
        barrier()
    for i in unroll(range(TM)):
        row = row0 + (i // 4) * (4 * BM // TM) + ty * 4 + i % 4
        for g in unroll(range(TN // 4)):
            col = col0 + g * (4 * BN // TN) + tx * 4
            if row < m and col + 3 < n:
                vstore(c, row * n + col, (acc[i, g * 4], acc[i, g * 4 + 1], acc[i, g * 4 + 2], acc[i, g * 4 + 3]))


CONFIGS = {f"{bm}x{bn}x{bk}_{tm}x{tn}_a{am}": (bm, bn, bk, tm, tn, am)
           for bm, bn, bk, tm, tn in [(256, 128, 16, 16, 8), (128, 256, 16, 8, 16), (256, 128, 8, 16, 8), (128, 128, 16, 8, 8), (128, 64, 16, 8, 8), (64, 128, 16, 8, 8), (64, 64, 16, 4, 4)]
           for am in (0, 1)}


def sgemm(a, b, c, m, n, k, cfg):
    bm, bn, bk, tm, tn, am = CONFIGS[cfg]
    sgemm2[((n + bn - 1) // bn, (m + bm - 1) // bm), (bm // tm) * (bn // tn)](a, b, c, m, n, k, bm, bn, bk, tm, tn, am)
