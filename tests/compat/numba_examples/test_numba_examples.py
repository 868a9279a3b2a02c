"""Ported from numba/numba-examples (BSD-2-Clause, Copyright (c) 2017, Numba): the CUDA programs of
``examples/density_estimation/histogram/gpu.py``, ``examples/finance/blackscholes/blackscholes_cuda.py``
and the kernels of the release-demo notebooks ``notebooks/Numba_053_CUDA_Release_Demo.ipynb`` and
``Numba_054_CUDA_Release_Demo.ipynb``, as written, with ``numba`` imports changed to ``gpukern.numba``.
The scripts' and notebook cells' checks became assertions (against NumPy); sizes the simulator would
take long over are scaled down where marked ``# scaled``.  ``@vectorize``/``@guvectorize`` cells are
left out: they are not ``numba.cuda``."""

import math
from collections import namedtuple

import numpy as np
import pytest

import gpukern as gk
import gpukern.numba as numba
from gpukern.numba import cuda, void, int32, uint32


# ---------------------------------------------------------------- examples/density_estimation/histogram/gpu.py
@numba.jit(nopython=True)
def compute_bin(x, n, xmin, xmax):
    # special case to mirror NumPy behavior for last bin
    if x == xmax:
        return n - 1 # a_max always in last bin

    # SPEEDTIP: Remove the float64 casts if you don't need to exactly reproduce NumPy
    bin = np.int32(n * (np.float64(x) - np.float64(xmin)) / (np.float64(xmax) - np.float64(xmin)))

    if bin < 0 or bin >= n:
        return None
    else:
        return bin

@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    for i in range(start, x.shape[0], stride):
        # note that calling a numba.jit function from CUDA automatically
        # compiles an equivalent CUDA device function!
        bin_number = compute_bin(x[i], nbins, xmin, xmax)

        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)

@cuda.jit
def min_max(x, min_max_array):
    nelements = x.shape[0]

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    # Array already seeded with starting values appropriate for x's dtype
    # Not a problem if this array has already been updated
    local_min = min_max_array[0]
    local_max = min_max_array[1]

    for i in range(start, x.shape[0], stride):
        element = x[i]
        local_min = min(element, local_min)
        local_max = max(element, local_max)

    # Now combine each thread local min and max
    cuda.atomic.min(min_max_array, 0, local_min)
    cuda.atomic.max(min_max_array, 1, local_max)


def dtype_min_max(dtype):
    '''Get the min and max value for a numeric dtype'''
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
    else:
        info = np.finfo(dtype)
    return info.min, info.max


@numba.jit(nopython=True)
def get_bin_edges(a, nbins, a_min, a_max):
    bin_edges = np.empty((nbins+1,), dtype=np.float64)
    delta = (a_max - a_min) / nbins
    for i in range(bin_edges.shape[0]):
        bin_edges[i] = a_min + i * delta

    bin_edges[-1] = a_max  # Avoid roundoff error on last point
    return bin_edges


def numba_gpu_histogram(a, bins):
    # Move data to GPU so we can do two operations on it
    a_gpu = cuda.to_device(a)

    ### Find min and max value in array
    dtype_min, dtype_max = dtype_min_max(a.dtype)
    # Put them in the array in reverse order so that they will be replaced by the first element in the array
    min_max_array_gpu = cuda.to_device(np.array([dtype_max, dtype_min], dtype=a.dtype))
    min_max[64, 64](a_gpu, min_max_array_gpu)
    a_min, a_max = min_max_array_gpu.copy_to_host()

    # SPEEDTIP: Skip this step if you don't need to reproduce the NumPy histogram edge array
    bin_edges = get_bin_edges(a, bins, a_min, a_max) # Doing this on CPU for now

    ### Bin the data into a histogram
    histogram_out = cuda.to_device(np.zeros(shape=(bins,), dtype=np.int32))
    histogram[64, 64](a_gpu, a_min, a_max, histogram_out)

    return histogram_out.copy_to_host(), bin_edges


@pytest.mark.finds("each thread reads min_max_array[0] and [1] while other blocks update them atomically: a data "
                   "race by CUDA's memory model (benign in intent: the comment above says so)", error=gk.DataRaceError,
                   on=("sim",))
def test_histogram_min_max(backend):
    a = np.random.default_rng(3).normal(size=20000)  # scaled
    min_max_array = cuda.to_device(np.array([np.finfo(a.dtype).max, np.finfo(a.dtype).min]))
    min_max[64, 64](cuda.to_device(a), min_max_array)
    np.testing.assert_array_equal(min_max_array.copy_to_host(), [a.min(), a.max()])


@pytest.mark.finds("min_max's race (test_histogram_min_max), which the simulator reports first",
                   error=gk.DataRaceError, on=("sim",))
def test_histogram(backend):
    a = np.random.default_rng(3).normal(size=20000)  # scaled
    hist, edges = numba_gpu_histogram(a, 20)
    want, want_edges = np.histogram(a, 20)
    np.testing.assert_array_equal(hist, want)
    np.testing.assert_allclose(edges, want_edges)


def test_histogram_kernel_with_optional_bins(backend):
    """The histogram kernel alone, as the example calls it but with min and max from NumPy (not
    min_max's racy kernel): compute_bin returns None on some paths and an int on others."""
    a = np.random.default_rng(4).normal(size=5000)
    out = cuda.to_device(np.zeros(16, np.int32))
    histogram[16, 64](cuda.to_device(a), a.min(), a.max(), out)
    np.testing.assert_array_equal(out.copy_to_host(), np.histogram(a, 16)[0])


# ---------------------------------------------------------------- examples/finance/blackscholes/blackscholes_cuda.py
@cuda.jit(device=True)
def cnd_cuda(d):
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429
    RSQRT2PI = 0.39894228040143267793994605993438
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@cuda.jit
def black_scholes_cuda_kernel(callResult, putResult, S, X,
                       T, R, V):
    #    S = stockPrice
    #    X = optionStrike
    #    T = optionYears
    #    R = Riskfree
    #    V = Volatility
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)

    expRT = math.exp((-1. * R) * T[i])
    callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
    putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))


def black_scholes_cuda(stockPrice, optionStrike,
                        optionYears, Riskfree, Volatility):

    blockdim = 1024, 1
    griddim = int(math.ceil(float(len(stockPrice))/blockdim[0])), 1

    stream = cuda.stream()

    d_callResult = cuda.device_array_like(stockPrice, stream)
    d_putResult = cuda.device_array_like(stockPrice, stream)
    d_stockPrice = cuda.to_device(stockPrice, stream)
    d_optionStrike = cuda.to_device(optionStrike, stream)
    d_optionYears = cuda.to_device(optionYears, stream)

    black_scholes_cuda_kernel[griddim, blockdim, stream](
            d_callResult, d_putResult, d_stockPrice, d_optionStrike,
            d_optionYears, Riskfree, Volatility)
    callResult = d_callResult.copy_to_host(stream=stream)
    putResult= d_putResult.copy_to_host(stream=stream)
    stream.synchronize()

    return callResult, putResult


def test_black_scholes(backend):
    rng = np.random.default_rng(4)
    n = 4000  # scaled
    S, X, T = rng.uniform(5, 30, n), rng.uniform(1, 100, n), rng.uniform(0.25, 10, n)
    R, V = 0.02, 0.30
    call, put = black_scholes_cuda(S, X, T, R, V)

    def cnd(d):  # the same polynomial, in NumPy
        K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        r = 0.39894228040143267793994605993438 * np.exp(-0.5 * d * d) * (
            K * (0.31938153 + K * (-0.356563782 + K * (1.781477937 + K * (-1.821255978 + K * 1.330274429)))))
        return np.where(d > 0, 1.0 - r, r)

    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * np.sqrt(T))
    d2 = d1 - V * np.sqrt(T)
    e = np.exp(-R * T)
    np.testing.assert_allclose(call, S * cnd(d1) - X * e * cnd(d2), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(put, X * e * (1 - cnd(d2)) - S * (1 - cnd(d1)), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- notebooks/Numba_053_CUDA_Release_Demo.ipynb
@cuda.jit
def and_demo(x, old, val):
    old[0] = cuda.atomic.and_(x, 0, val)


@cuda.jit
def or_demo(x, old, val):
    old[0] = cuda.atomic.or_(x, 0, val)


@cuda.jit
def inc_demo(x, old, val):
    old[0] = cuda.atomic.inc(x, 0, val)


@cuda.jit
def exch_demo(x, old, val):
    old[0] = cuda.atomic.exch(x, 0, val)


@cuda.jit
def log2_remainder_demo(y, x):
    y[0] = math.log2(x[0])
    y[1] = math.remainder(x[0], 3)


@cuda.jit(void(int32[:,::1]))
def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()

    rows = M.shape[0]
    cols = M.shape[1]

    for row in range(1, rows):
        opposite = cols - col - 1
        # Each row's elements are one greater than the previous row
        M[row, col] = M[row - 1, opposite] + 1
        # Wait until all threads have written their column element,
        # and that the write is visible to all other threads
        g.sync()


@cuda.jit('void()')
def sig_kernel_1():
    return

@cuda.jit('void(float32[:],float32[:],float32[:],float32[:])')
def sig_kernel_5(arr1,arr2,arr3,arr4):
    return


@cuda.jit
def extract_tuple(r1, r2, x):
    r1[0] = x[0]
    r1[1] = x[1]
    r1[2] = x[2]
    r2[0] = x[3]
    r2[1] = x[4]
    r2[2] = x[5]


Point = namedtuple('Point', ('x', 'y'))


@cuda.jit
def extract_point(r, p):
    r[0] = p.x
    r[1] = p.y


@cuda.jit
def extract_nested(r, x):
    r[0] = len(x)
    r[1] = len(x[0])
    r[2] = x[0][0]
    r[3] = x[0][1]
    r[4] = x[0][2]
    r[5] = x[1]


@cuda.jit
def vector_magnitudes_soa(r, v):
    i = cuda.grid(1)
    if i >= len(r):
        return

    r[i] = math.sqrt(v[0][i] ** 2 + v[1][i] ** 2)


@cuda.jit
def cube_root(r, x):
    for i in range(cuda.grid(1), cuda.gridsize(1), len(r)):
        r[i] = x[i] ** (1.0 / 3.0)

@cuda.jit
def intrinsic_cube_root(r, x):
    for i in range(cuda.grid(1), cuda.gridsize(1), len(r)):
        r[i] = cuda.cbrt(x[i])


def test_atomic_logic_demos(backend):
    x = np.array([4], dtype=np.uint32)
    old = np.zeros_like(x)
    and_demo[1, 1](x, old, 3)
    assert (x[0], old[0]) == (0, 4)
    x = np.array([4], dtype=np.uint32)
    old = np.zeros_like(x)
    or_demo[1, 1](x, old, 3)
    assert (x[0], old[0]) == (7, 4)


def test_inc_exch_demos(backend):
    x = np.array([10], dtype=np.uint32)
    old = np.zeros_like(x)
    inc_demo[1, 1](x, old, 20)
    assert (x[0], old[0]) == (11, 10)
    x = np.array([10], dtype=np.uint32)
    old = np.zeros_like(x)
    inc_demo[1, 1](x, old, 10)
    assert (x[0], old[0]) == (0, 10)
    x = np.array([10], dtype=np.uint32)
    old = np.zeros_like(x)
    exch_demo[1, 1](x, old, 15)
    assert (x[0], old[0]) == (15, 10)


def test_log2_remainder_demo(backend):
    x = np.array([4], dtype=np.float32)
    y = np.zeros(2, dtype=np.float32)
    log2_remainder_demo[1, 1](y, x)
    assert list(y) == [2.0, 1.0]


def test_sequential_rows(backend):
    A = np.zeros((256, 256), dtype=np.int32)  # scaled
    blockdim = 32
    griddim = A.shape[1] // blockdim
    sequential_rows[griddim, blockdim](A)
    assert (A == np.arange(256, dtype=np.int32)[:, None]).all()


def test_empty_kernels_with_signatures(backend):
    arr = cuda.device_array(10000, dtype=np.float32)
    sig_kernel_1[1, 1]()
    sig_kernel_5[1, 1](arr, arr, arr, arr)


def test_tuple_arguments(backend):
    x = (1, 2, 3, 4.5, 5.5, 6.5)
    r1 = np.zeros(len(x) // 2, dtype=np.int64)
    r2 = np.zeros(len(x) // 2, dtype=np.float64)
    extract_tuple[1, 1](r1, r2, x)
    assert list(r1) == [1, 2, 3] and list(r2) == [4.5, 5.5, 6.5]

    x = Point(1, 2)
    r = np.zeros(len(x), dtype=np.int64)
    extract_point[1, 1](r, x)
    assert list(r) == [1, 2]

    x = ((6, 5, 4), 7)
    r = np.ones(6, dtype=np.int64)
    extract_nested[1, 1](r, x)
    assert list(r) == [2, 3, 6, 5, 4, 7]


def test_tuple_of_arrays(backend):
    N = 32
    r = np.zeros(N)
    np.random.seed(1)
    vx = np.random.rand(N)
    vy = np.random.rand(N)
    v = (vx, vy)
    vector_magnitudes_soa[1, N](r, v)
    np.testing.assert_allclose(r, np.hypot(vx, vy), rtol=1e-12)


def test_cube_roots(backend):
    N = 2 ** 12  # scaled
    dtype = np.float32
    np.random.seed(1)
    x = np.random.rand(N).astype(dtype) * 100
    r = np.zeros_like(x)
    n_threads = 256
    n_blocks = N // n_threads
    d_r_normal = cuda.to_device(r)
    d_r_fast = cuda.to_device(r)
    d_x = cuda.to_device(x)
    cube_root[n_blocks, n_threads](d_r_normal, d_x)
    intrinsic_cube_root[n_blocks, n_threads](d_r_fast, d_x)
    np.testing.assert_allclose(d_r_normal.copy_to_host(), d_r_fast.copy_to_host(), rtol=1.0e-6)


# ---------------------------------------------------------------- notebooks/Numba_054_CUDA_Release_Demo.ipynb
@cuda.jit
def axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < len(r):
        r[i] = a * x[i] + y[i]


def create_and_add_vectors(N):
    # Create input data and transfer to GPU
    x = np.random.random(N)
    y = np.random.random(N)
    d_x = cuda.to_device(x)
    d_y = cuda.to_device(y)
    d_r = cuda.device_array_like(d_x)
    a = 4.5

    # Compute grid dimensions

    # An arbitrary reasonable choice of block size
    block_dim = 256
    # Enough blocks to cover the input
    grid_dim = math.ceil(len(d_x) / block_dim)

    # Launch the kernel
    axpy[grid_dim, block_dim](d_r, a, d_x, d_y)

    # Return the result
    return d_r.copy_to_host(), a * x + y


@cuda.jit(device=True)
def atomicAggInc(ctr):
    active = cuda.activemask()
    leader = uint32(cuda.ffs(active) - uint32(1))
    change = cuda.popc(active)
    rank = cuda.popc(uint32(active & cuda.lanemask_lt()))

    warp_res = 0
    if rank == 0:
        warp_res = cuda.atomic.add(ctr, 0, change)
    warp_res = cuda.shfl_sync(active, warp_res, leader)

    return warp_res + rank


@cuda.jit
def filter_k(dst, nres, src):
    i = cuda.grid(1)

    if i >= len(src):
        return

    if src[i] > 0:
        dst[atomicAggInc(nres)] = src[i]


def test_axpy(backend):
    np.random.seed(1)
    for n in (32, 2 ** 14):  # scaled
        got, want = create_and_add_vectors(n)
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.refused("warp operations under a data-dependent branch need OpenCL sub-groups", on=("opencl",))
def test_warp_aggregated_atomics(backend):
    N = 2 ** 14  # scaled
    zero_factor = 0.25
    np.random.seed(1)
    inputs = np.random.random(N)
    zeros = np.zeros(N)
    factors = np.random.random(N)
    values = np.where(factors > zero_factor, inputs, zeros)
    value_count = np.sum(values > 0)

    d_nres = cuda.to_device(np.zeros(1, dtype=np.uint32))
    d_result = cuda.to_device(np.zeros_like(values))
    d_values = cuda.to_device(values)
    n_threads = 128
    n_blocks = N // n_threads
    filter_k[n_blocks, n_threads](d_result, d_nres, d_values)

    cuda_n = d_nres.copy_to_host()[0]
    result = d_result.copy_to_host()
    np.testing.assert_equal(value_count, cuda_n)
    np.testing.assert_equal(np.ones(value_count, dtype=np.bool_), result[:cuda_n] > 0)
    np.testing.assert_equal(np.zeros(N - value_count), result[cuda_n:])
    np.testing.assert_equal(np.sort(result[:cuda_n]), np.sort(values[values > 0]))
