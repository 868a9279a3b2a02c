"""Thread-index, bit and arithmetic intrinsics ported from Numba-CUDA:
numba/cuda/tests/cudapy/test_intrinsics.py (NVIDIA/numba-cuda).

Spelling: ``cuda.threadIdx.x`` -> ``thread_idx.x``, ``cuda.grid(1)`` -> ``global_id(0)``,
``i, j = cuda.grid(2)`` -> ``i = global_id(0)``, ``j = global_id(1)``, ``cuda.gridsize(1)`` ->
``grid_dim.x * block_dim.x``, ``cuda.popc/clz/ffs/brev/fma`` -> ``gk.popc/...``, ``cuda.cbrt`` -> ``math.cbrt``,
``cuda.selp(c, a, b)`` -> ``a if c else b``, ``cuda.fp16.hadd(a, b)`` -> ``a + b`` on float16 values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpukern as gk
from gpukern import block_dim, block_idx, global_id, grid_dim, thread_idx

from .support import needs

# ---------------------------------------------------------------- thread geometry


# Source: test_intrinsics.py, simple_threadidx (test_simple_threadidx)
@gk.kernel
def simple_threadidx(ary):
    i = thread_idx.x
    ary[0] = i


# Source: test_intrinsics.py, fill_threadidx (test_fill_threadidx)
@gk.kernel
def fill_threadidx(ary):
    i = thread_idx.x
    ary[i] = i


# Source: test_intrinsics.py, fill3d_threadidx (test_fill3d_threadidx)
@gk.kernel
def fill3d_threadidx(ary):
    i = thread_idx.x
    j = thread_idx.y
    k = thread_idx.z
    ary[i, j, k] = (i + 1) * (j + 1) * (k + 1)


# Source: test_intrinsics.py, simple_grid1d (test_simple_grid1d)
@gk.kernel
def simple_grid1d(ary):
    i = global_id(0)
    ary[i] = i


# Source: test_intrinsics.py, simple_grid2d (test_simple_grid2d)
@gk.kernel
def simple_grid2d(ary):
    i = global_id(0)
    j = global_id(1)
    ary[i, j] = i + j


# Source: test_intrinsics.py, simple_gridsize1d (test_simple_gridsize1d)
@gk.kernel
def simple_gridsize1d(ary):
    i = global_id(0)
    x = grid_dim.x * block_dim.x
    if i == 0:
        ary[0] = x


# Source: test_intrinsics.py, simple_gridsize2d (test_simple_gridsize2d)
@gk.kernel
def simple_gridsize2d(ary):
    i = global_id(0)
    j = global_id(1)
    x = grid_dim.x * block_dim.x
    y = grid_dim.y * block_dim.y
    if i == 0 and j == 0:
        ary[0] = x
        ary[1] = y


# Source: test_intrinsics.py, intrinsic_forloop_step (test_intrinsic_forloop_step): `height, width = c.shape`
@gk.kernel
def intrinsic_forloop_step(c):
    startX = global_id(0)
    startY = global_id(1)
    gridX = grid_dim.x * block_dim.x
    gridY = grid_dim.y * block_dim.y
    height, width = c.shape

    for x in range(startX, width, gridX):
        for y in range(startY, height, gridY):
            c[y, x] = x + y


# Source: test_intrinsics.py, test_3dgrid (foo: out[x, y, z] = a * b * c)
@gk.kernel
def grid3d_size(out):
    x = global_id(0)
    y = global_id(1)
    z = global_id(2)
    a = grid_dim.x * block_dim.x
    b = grid_dim.y * block_dim.y
    c = grid_dim.z * block_dim.z
    out[x, y, z] = a * b * c


# Source: test_intrinsics.py, test_3dgrid_2 (foo: grid and gridsize against the thread geometry)
@gk.kernel
def grid3d_check(out):
    x = global_id(0)
    y = global_id(1)
    z = global_id(2)
    a = grid_dim.x * block_dim.x
    b = grid_dim.y * block_dim.y
    c = grid_dim.z * block_dim.z
    grid_is_right = (
        x == thread_idx.x + block_idx.x * block_dim.x
        and y == thread_idx.y + block_idx.y * block_dim.y
        and z == thread_idx.z + block_idx.z * block_dim.z
    )
    gridsize_is_right = (
        a == block_dim.x * grid_dim.x and b == block_dim.y * grid_dim.y and c == block_dim.z * grid_dim.z
    )
    out[x, y, z] = grid_is_right and gridsize_is_right


def test_simple_threadidx(backend):
    ary = np.ones(1, dtype=np.int32)
    simple_threadidx[1, 1](ary)
    assert ary[0] == 0


def test_fill_threadidx(backend):
    ary = np.ones(10, dtype=np.int32)
    fill_threadidx[1, 10](ary)
    np.testing.assert_array_equal(ary, np.arange(10, dtype=np.int32))


def test_fill3d_threadidx(backend):
    X, Y, Z = 4, 5, 6
    ary = np.zeros((X, Y, Z), dtype=np.int32)
    fill3d_threadidx[1, (X, Y, Z)](ary)
    i, j, k = np.indices((X, Y, Z))
    np.testing.assert_array_equal(ary, (i + 1) * (j + 1) * (k + 1))


def test_simple_grid1d(backend):
    ntid, nctaid = 3, 7
    ary = np.empty(ntid * nctaid, dtype=np.int32)
    simple_grid1d[nctaid, ntid](ary)
    np.testing.assert_array_equal(ary, np.arange(ntid * nctaid))


def test_simple_grid2d(backend):
    ntid, nctaid = (4, 3), (5, 6)
    shape = (ntid[0] * nctaid[0], ntid[1] * nctaid[1])
    ary = np.empty(shape, dtype=np.int32)
    simple_grid2d[nctaid, ntid](ary)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(ary, i + j)


def test_simple_gridsize1d(backend):
    ary = np.zeros(1, dtype=np.int32)
    simple_gridsize1d[7, 3](ary)
    assert ary[0] == 7 * 3


def test_simple_gridsize2d(backend):
    ntid, nctaid = (4, 3), (5, 6)
    ary = np.zeros(2, dtype=np.int32)
    simple_gridsize2d[nctaid, ntid](ary)
    assert list(ary) == [nctaid[0] * ntid[0], nctaid[1] * ntid[1]]


def test_intrinsic_forloop_step(backend):
    ntid, nctaid = (4, 3), (5, 6)
    shape = (ntid[0] * nctaid[0], ntid[1] * nctaid[1])
    ary = np.zeros(shape, dtype=np.int32)
    intrinsic_forloop_step[nctaid, ntid](ary)
    y, x = np.indices(shape)
    np.testing.assert_array_equal(ary, x + y)


def test_3dgrid(backend):
    arr = np.zeros((6, 6, 6), dtype=np.int32)  # the source: (9, 9, 9) from (3, 3, 3) blocks of (3, 3, 3)
    grid3d_size[(2, 2, 2), (3, 3, 3)](arr)
    np.testing.assert_array_equal(arr, np.full((6, 6, 6), 6**3))


def test_3dgrid_2(backend):
    arr = np.zeros((4 * 3, 3 * 2, 2 * 4), dtype=np.bool_)
    grid3d_check[(4, 3, 2), (3, 2, 4)](arr)
    assert arr.all()


# ---------------------------------------------------------------- bits and arithmetic


# Source: test_intrinsics.py, simple_popc (test_popc_u1/u2/u4/u8)
@gk.kernel
def simple_popc(ary, c):
    ary[0] = gk.popc(c)


# Source: test_intrinsics.py, simple_bit_count (test_bit_count_u4): `c.bit_count()`
@gk.kernel
def simple_bit_count(ary, c):
    ary[0] = c.bit_count()


# Source: test_intrinsics.py, simple_fma (test_fma_f4, test_fma_f8)
@gk.kernel
def simple_fma(ary, a, b, c):
    ary[0] = gk.fma(a, b, c)


# Source: test_intrinsics.py, simple_cbrt (test_cbrt_f32, test_cbrt_f64): `cuda.cbrt(a)` -> `math.cbrt(a)`
@gk.kernel
def simple_cbrt(ary, a):
    ary[0] = math.cbrt(a)


# Source: test_intrinsics.py, simple_brev (test_brev_u4, test_brev_u8)
@gk.kernel
def simple_brev(ary, c):
    ary[0] = gk.brev(c)


# Source: test_intrinsics.py, simple_clz (test_clz_i4, _u4, _i4_1s, _i4_0s, _i8)
@gk.kernel
def simple_clz(ary, c):
    ary[0] = gk.clz(c)


# Source: test_intrinsics.py, simple_ffs (test_ffs_i4, _u4, _i4_1s, _i4_0s, _i8)
@gk.kernel
def simple_ffs(ary, c):
    ary[0] = gk.ffs(c)


# Source: test_intrinsics.py, simple_round (test_round_f4, test_round_f8)
@gk.kernel
def simple_round(ary, c):
    ary[0] = round(c)


# Source: test_intrinsics.py, simple_round_to (test_round_to_f4, test_round_to_f8)
@gk.kernel
def simple_round_to(ary, c, ndigits):
    ary[0] = round(c, ndigits)


# Source: test_intrinsics.py, branching_with_ifs (test_selp)
@gk.kernel
def branching_with_ifs(a, b, c):
    i = global_id(0)

    if a[i] > 4:
        if b % 2 == 0:
            a[i] = c[i]
        else:
            a[i] = 13
    else:
        a[i] = 3


# Source: test_intrinsics.py, branching_with_selps (test_selp): `cuda.selp(p, x, y)` -> `x if p else y`
@gk.kernel
def branching_with_selps(a, b, c):
    i = global_id(0)

    inner = c[i] if b % 2 == 0 else 13
    a[i] = inner if a[i] > 4 else 3


def _bits(c: int, width: int) -> int:
    return c & ((1 << width) - 1)


@pytest.mark.parametrize(
    "c, width",
    [
        pytest.param(np.uint8(0xFF), 8, marks=needs("uint8 scalars")),
        pytest.param(np.uint16(0xFFFF), 16, marks=needs("uint16 scalars")),
        (np.uint32(0xFFFFFFFF), 32),
        pytest.param(np.uint64(0xFFFFFFFFFFFFFFFF), 64, marks=needs("uint64 scalars")),
        (np.int64(0x0F0F0F0F0F), 64),
    ],
)
def test_popc(backend, c, width):
    ary = np.zeros(1, dtype=np.int32)
    simple_popc[1, 1](ary, c)
    assert ary[0] == bin(_bits(int(c), width)).count("1")


def test_bit_count(backend):
    ary = np.zeros(1, dtype=np.int32)
    simple_bit_count[1, 1](ary, np.uint32(0xFFFFFFFF))
    assert ary[0] == 32


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fma(backend, dt):
    ary = np.zeros(1, dtype=dt)
    simple_fma[1, 1](ary, dt(2.0), dt(3.0), dt(4.0))
    np.testing.assert_allclose(ary[0], 2 * 3 + 4)


@pytest.mark.parametrize("dt, arg", [(np.float32, 2.0), (np.float64, 6.0)])
def test_cbrt(backend, dt, arg):
    ary = np.zeros(1, dtype=dt)
    simple_cbrt[1, 1](ary, dt(arg))
    np.testing.assert_allclose(ary[0], arg ** (1 / 3), rtol=1e-6)


def _brev(c: int, width: int) -> int:
    return int(format(c, f"0{width}b")[::-1], 2)


@pytest.mark.parametrize(
    "dt, c, width",
    [
        (np.uint32, 0x000030F0, 32),
        pytest.param(np.uint64, 0x000030F0000030F0, 64, marks=needs("uint64 arrays and scalars")),
    ],
)
def test_brev(backend, dt, c, width):
    ary = np.zeros(1, dtype=dt)
    simple_brev[1, 1](ary, dt(c))
    assert int(ary[0]) == _brev(c, width)


def _clz(c: int, width: int) -> int:
    return width - _bits(c, width).bit_length()


def _ffs(c: int, width: int) -> int:
    c = _bits(c, width)
    return (c & -c).bit_length()


INT_ARGS = [
    (np.int32, 0x00100000, 32),
    (np.uint32, 0x00100000, 32),
    (np.int32, -1, 32),
    (np.int32, 0, 32),
    (np.uint32, 0x80000000, 32),
    (np.int64, 0x000000000010000, 64),
    (np.int64, 0x100000000, 64),
]


@pytest.mark.parametrize("dt, c, width", INT_ARGS)
def test_clz(backend, dt, c, width):
    ary = np.zeros(1, dtype=np.int32)
    simple_clz[1, 1](ary, dt(c))
    assert ary[0] == _clz(c, width)


@pytest.mark.parametrize("dt, c, width", INT_ARGS)
def test_ffs(backend, dt, c, width):
    ary = np.zeros(1, dtype=np.int32)
    simple_ffs[1, 1](ary, dt(c))
    assert ary[0] == _ffs(c, width)


@needs("round()")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_round(backend, dt):
    ary = np.zeros(1, dtype=np.int64)
    for i in [-3.0, -2.5, -2.25, -1.5, 1.5, 2.25, 2.5, 2.75]:
        simple_round[1, 1](ary, dt(i))
        assert ary[0] == round(i)


@needs("round(x, ndigits)")
def test_round_to_f8(backend):
    ary = np.zeros(1, dtype=np.float64)
    for val in np.random.default_rng(123).random(4):
        for ndigits in (-1, 0, 1, 3):
            simple_round_to[1, 1](ary, val, np.int32(ndigits))
            assert ary[0] == round(float(val), ndigits)


@pytest.mark.parametrize("kernel", [branching_with_ifs, branching_with_selps])
def test_selp(backend, kernel):
    n, b = 32, np.int64(6)
    c = np.full(32, 17, dtype=np.int64)
    expected = c.copy()
    expected[:5] = 3
    a = np.arange(n, dtype=np.int64)
    kernel[n, 1](a, b, c)
    np.testing.assert_array_equal(a, expected)


# ---------------------------------------------------------------- float16 (cuda.fp16)


# Source: test_intrinsics.py, simple_hadd (test_hadd): `cuda.fp16.hadd(a[0], b[0])`
@gk.kernel
def simple_hadd(ary, a, b):
    ary[0] = a[0] + b[0]


# Source: test_intrinsics.py, simple_hsub (test_hsub)
@gk.kernel
def simple_hsub(ary, a, b):
    ary[0] = a[0] - b[0]


# Source: test_intrinsics.py, simple_hmul (test_hmul)
@gk.kernel
def simple_hmul(ary, a, b):
    ary[0] = a[0] * b[0]


# Source: test_intrinsics.py, simple_hfma (test_hfma): `cuda.fp16.hfma(a[0], b[0], c[0])`
@gk.kernel
def simple_hfma(ary, a, b, c):
    ary[0] = gk.fma(a[0], b[0], c[0])


# Source: test_intrinsics.py, simple_hneg (test_hneg)
@gk.kernel
def simple_hneg(ary, a):
    ary[0] = -a[0]


# Source: test_intrinsics.py, simple_habs (test_habs)
@gk.kernel
def simple_habs(ary, a):
    ary[0] = abs(a[0])


# Source: test_intrinsics.py, simple_hlt_scalar (test_fp16_comparison): `cuda.fp16.hlt(a, b)`
@gk.kernel
def simple_hlt_scalar(ary, a, b):
    ary[0] = a < b


# Source: test_intrinsics.py, simple_hmax_scalar (test_hmax): `cuda.fp16.hmax(a, b)`
@gk.kernel
def simple_hmax_scalar(ary, a, b):
    ary[0] = max(a, b)


_F16 = needs("float16")
H = np.float16


@_F16
@pytest.mark.parametrize("kernel, op", [(simple_hadd, np.add), (simple_hsub, np.subtract), (simple_hmul, np.multiply)])
def test_fp16_binary(backend, kernel, op):
    ary = np.zeros(1, dtype=H)
    a, b = np.array([3.0], H), np.array([4.0], H)
    kernel[1, 1](ary, a, b)
    np.testing.assert_allclose(ary[0], op(a, b)[0])


@_F16
def test_hfma(backend):
    ary = np.zeros(1, dtype=H)
    a, b, c = np.array([2.0], H), np.array([3.0], H), np.array([4.0], H)
    simple_hfma[1, 1](ary, a, b, c)
    np.testing.assert_allclose(ary[0], 2.0 * 3.0 + 4.0)


@_F16
@pytest.mark.parametrize("kernel, op", [(simple_hneg, np.negative), (simple_habs, np.abs)])
def test_fp16_unary(backend, kernel, op):
    ary = np.zeros(1, dtype=H)
    a = np.array([-3.5], H)
    kernel[1, 1](ary, a)
    np.testing.assert_allclose(ary[0], op(a)[0])


@_F16
def test_hlt_hmax(backend):
    got = np.zeros(1, dtype=np.bool_)
    for x, y in [(3, 3), (3, 4), (3, 2)]:
        simple_hlt_scalar[1, 1](got, H(x), H(y))
        assert got[0] == (H(x) < H(y))
    ary = np.zeros(1, dtype=H)
    simple_hmax_scalar[1, 1](ary, H(3.0), H(4.0))
    assert ary[0] == H(4.0)
