"""Ported from NVIDIA/numba-cuda's documentation examples,
``numba_cuda/numba/cuda/tests/doc_examples/test_*.py`` (BSD-2-Clause, Copyright NVIDIA Corporation):
the example programs as written, the import lines changed (``numba`` -> ``gpukern.numba``, ``cupy`` ->
``cupy_standin``, which makes gpukern device arrays with CuPy's ``get()``).  Each unittest method
became a pytest function run on every backend.  Sizes the simulator would take minutes over are
scaled down where marked ``# scaled``."""

import pytest

import gpukern as gk
import cupy_standin as cp


def test_ex_vecadd(backend):
    import numpy as np
    from gpukern.numba import cuda

    @cuda.jit
    def f(a, b, c):
        # like threadIdx.x + (blockIdx.x * blockDim.x)
        tid = cuda.grid(1)
        size = len(c)

        if tid < size:
            c[tid] = a[tid] + b[tid]

    np.random.seed(1)
    N = 10000  # scaled
    a = cp.asarray(np.random.random(N))
    b = cp.asarray(np.random.random(N))
    c = cp.empty(a.shape)

    f.forall(len(a))(a, b, c)
    np.testing.assert_equal(c.get(), a.get() + b.get())

    nthreads = 256
    nblocks = (len(a) // nthreads) + 1
    f[nblocks, nthreads](a, b, c)
    np.testing.assert_equal(c.get(), a.get() + b.get())


def test_ex_matmul(backend):
    from gpukern.numba import cuda
    import numpy as np
    import math

    @cuda.jit
    def matmul(A, B, C):
        """Perform square matrix multiplication of C = A * B."""
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp

    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])

    x_d = cp.asarray(x_h)
    y_d = cp.asarray(y_h)
    z_d = cp.asarray(z_h)

    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.get()
    assert np.all(z_h == x_h @ y_h)


def test_ex_fast_matmul(backend):
    from gpukern.numba import cuda
    from gpukern.numba.cuda import float32
    import numpy as np
    import math

    TPB = 16

    @cuda.jit
    def fast_matmul(A, B, C):
        """
        Perform matrix multiplication of C = A * B using CUDA shared memory.

        Reference: https://stackoverflow.com/a/64198479/13697228 by @RobertCrovella
        """
        # Define an array in the shared memory
        # The size and type of the arrays must be known at compile time
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

        x, y = cuda.grid(2)

        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x  # blocks per grid

        # Each thread computes one element in the result matrix.
        # The dot product is chunked into dot products of TPB-long vectors.
        tmp = float32(0.0)
        for i in range(bpg):
            # Preload data into shared memory
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * TPB]
            if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * TPB, x]

            # Wait until all threads finish preloading
            cuda.syncthreads()

            # Computes partial product on the shared memory
            for j in range(TPB):
                tmp += sA[ty, j] * sB[j, tx]

            # Wait until all threads finish computing
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])

    x_d = cp.asarray(x_h)
    y_d = cp.asarray(y_h)
    z_d = cp.asarray(z_h)

    threadsperblock = (TPB, TPB)
    blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.get()
    assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, square case."

    x_h = np.arange(115).reshape([5, 23])
    y_h = np.ones([23, 7])
    z_h = np.zeros([5, 7])

    x_d = cp.asarray(x_h)
    y_d = cp.asarray(y_h)
    z_d = cp.asarray(z_h)

    threadsperblock = (TPB, TPB)
    grid_y_max = max(x_h.shape[0], y_h.shape[0])
    grid_x_max = max(x_h.shape[1], y_h.shape[1])
    blockspergrid_x = math.ceil(grid_x_max / threadsperblock[0])
    blockspergrid_y = math.ceil(grid_y_max / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.get()
    assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, non-square case."


def test_ex_reduction(backend):
    import numpy as np
    from gpukern.numba import cuda
    from gpukern.numba.cuda.types import int32

    a = cp.asarray(np.arange(1024))
    nelem = len(a)

    @cuda.jit
    def array_sum(data):
        tid = cuda.threadIdx.x
        size = len(data)
        if tid < size:
            i = cuda.grid(1)

            # Declare an array in shared memory
            shr = cuda.shared.array(nelem, int32)
            shr[tid] = data[i]

            # Ensure writes to shared memory are visible
            # to all threads before reducing
            cuda.syncthreads()

            s = 1
            while s < cuda.blockDim.x:
                if tid % (2 * s) == 0:
                    # Stride by `s` and add
                    shr[tid] += shr[tid + s]
                s *= 2
                cuda.syncthreads()

            # After the loop, the zeroth  element contains the sum
            if tid == 0:
                data[tid] = shr[tid]

    with pytest.warns(gk.KernelWarning):  # the barriers under `if tid < size:` (docs/numba.md)
        array_sum[1, nelem](a)
    np.testing.assert_equal(a.get()[0], sum(np.arange(1024)))


@pytest.mark.refused("an array chosen at run time (data = buf_0 or buf_1 in an if) is not supported")
def test_ex_laplace(backend):
    import numpy as np
    from gpukern.numba import cuda

    size = 1001
    data = np.zeros(size)

    # Middle element is made very hot
    data[500] = 10000
    buf_0 = cuda.to_device(data)

    # This extra array is used for synchronization purposes
    buf_1 = cuda.device_array_like(buf_0)

    niter = 100  # scaled

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)

        # Don't continue if our index is outside the domain
        if i >= len(buf_0):
            return

        # Prepare to do a grid-wide synchronization later
        grid = cuda.cg.this_grid()

        for step in range(timesteps):
            # Select the buffer from the previous timestep
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0

            # Get the current temperature associated with this point
            curr_temp = data[i]

            # Apply formula from finite difference equation
            if i == 0:
                # Left wall is held at T = 0
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                # Right wall is held at T = 0
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                # Interior points are a weighted average of their neighbors
                next_temp = curr_temp + k * (
                    data[i - 1] - (2 * curr_temp) + data[i + 1]
                )

            # Write new value to the next buffer
            next_data[i] = next_temp

            # Wait for every thread to write before moving on
            grid.sync()

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)

    results = buf_1.copy_to_host()
    np.testing.assert_allclose(results.sum(), 10000)


@pytest.mark.finds("the grid sync is under `if is_sess_boundary:`, which only some threads take: every thread of "
                   "the grid must call it (CUDA's cooperative groups)", error=gk.BarrierDivergenceError)
def test_ex_sessionize(backend):
    import numpy as np
    from gpukern.numba import cuda

    # Set the timeout to one hour
    session_timeout = np.int64(np.timedelta64("3600", "s"))

    ids = cp.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4])
    sec = cp.asarray(
        np.array(
            [1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001, 10002, 10003, 15000, 150001,
             1, 5000, 50001, 15000, 20000, 25000, 25001, 25002, 25003],
            dtype="datetime64[ns]",
        ).astype("int64")
    )

    # Create a vector to hold the results
    results = cp.zeros(len(ids))

    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)

        if gid >= size:
            return

        # Determine session boundaries
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = (
                timestamp[gid] - timestamp[gid - 1] > session_timeout
            )
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True

        # Determine session labels
        if is_sess_boundary:
            # This thread marks the start of a session
            results[gid] = gid

            # Make sure all session boundaries are written
            # before populating the session id
            grid = cuda.cg.this_grid()
            grid.sync()

            look_ahead = 1
            # Check elements 'forward' of this one
            # until a new session boundary is found
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1
                # Avoid out-of-bounds accesses by the last thread
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break

    sessionize.forall(len(ids))(ids, sec, results)

    expect = [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11, 11, 13, 13, 13, 13, 17, 18, 19, 20, 21, 21, 23,
              24, 24, 24, 24]
    np.testing.assert_equal(expect, results.get())


def test_ex_montecarlo(backend):
    import gpukern.numba as numba
    import numpy as np
    from gpukern.numba import cuda
    from gpukern.numba.cuda.random import (
        create_xoroshiro128p_states,
        xoroshiro128p_uniform_float32,
    )

    nsamps = 100000  # scaled

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        """
        kernel to draw random samples and evaluate the function to
        be integrated at those sample values
        """
        size = len(out)

        gid = cuda.grid(1)
        if gid < size:
            # draw a sample between 0 and 1 on this thread
            samp = xoroshiro128p_uniform_float32(rng_states, gid)

            # normalize this sample to the limit range
            samp = samp * (upper_lim - lower_lim) + lower_lim

            # evaluate the function to be
            # integrated at the normalized
            # value of the sample
            y = func(samp)
            out[gid] = y

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    def mc_integrate(lower_lim, upper_lim, nsamps):
        """
        approximate the definite integral of `func` from
        `lower_lim` to `upper_lim`
        """
        out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)

        # jit the function for use in CUDA kernels

        mc_integrator_kernel.forall(nsamps)(
            out, rng_states, lower_lim, upper_lim
        )
        # normalization factor to convert
        # to the average: (b - a)/(N - 1)
        factor = (upper_lim - lower_lim) / (nsamps - 1)

        return sum_reduce(out) * factor

    @numba.jit
    def func(x):
        return 1.0 / x

    np.testing.assert_allclose(mc_integrate(1, 2, nsamps), 0.69315, atol=0.003)
    np.testing.assert_allclose(mc_integrate(2, 3, nsamps), 0.4055, atol=0.003)


def test_ex_3d_grid(backend):
    from gpukern.numba import cuda
    from gpukern.numba.cuda.random import (
        create_xoroshiro128p_states,
        xoroshiro128p_uniform_float32,
    )
    import numpy as np

    @cuda.jit
    def random_3d(arr, rng_states):
        # Per-dimension thread indices and strides
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)

        # Linearized thread index
        tid = (startz * stridey * stridex) + (starty * stridex) + startx

        # Use strided loops over the array to assign a random value to each entry
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(
                        rng_states, tid
                    )

    # Array dimensions
    X, Y, Z = 70, 90, 71  # scaled

    # Block and grid dimensions
    bx, by, bz = 8, 8, 8
    gx, gy, gz = 4, 4, 4  # scaled

    # Total number of threads
    nthreads = bx * by * bz * gx * gy * gz

    # Initialize a state for each thread
    rng_states = create_xoroshiro128p_states(nthreads, seed=1)

    # Generate random numbers
    arr = cp.zeros((X, Y, Z), dtype=np.float32)
    random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)

    host_arr = arr.get()
    assert 0.49 < np.mean(host_arr) < 0.51
    assert np.all(host_arr <= 1.0)
    assert np.all(host_arr >= 0.0)


def test_ex_cpu_gpu_compat(backend):
    from math import pi

    import gpukern.numba as numba
    from gpukern.numba import cuda
    import numpy as np

    X = cp.asarray([1, 10, 234])
    Y = cp.asarray([2, 2, 4014])
    Z = cp.asarray([3, 14, 2211])
    results = cp.asarray([0.0, 0.0, 0.0])

    @numba.jit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * pi)

    assert business_logic(1, 2, 3) == pytest.approx(-126.79644737231007)

    @cuda.jit
    def f(res, xarr, yarr, zarr):
        tid = cuda.grid(1)
        if tid < len(xarr):
            # The function decorated with numba.jit may be directly reused
            res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

    f.forall(len(X))(results, X, Y, Z)

    expect = [business_logic(x, y, z) for x, y, z in zip(X.get(), Y.get(), Z.get())]
    np.testing.assert_allclose(expect, results.get(), rtol=1e-15)


def test_ex_globals_constant_capture(backend):
    import numpy as np
    from gpukern.numba import cuda

    TAX_RATE = 0.08
    PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

    d_quantities = cp.asarray(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cp.zeros(5, dtype=np.float64)

    # First kernel call - compiles and captures values
    compute_totals[1, 32](d_quantities, d_totals)

    # These modifications have no effect on subsequent kernel calls
    TAX_RATE = 0.10  # noqa: F841
    PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]

    # Second kernel call still uses the original values
    compute_totals[1, 32](d_quantities, d_totals)

    expected = np.array([10.8, 54.0, 16.2, 64.8, 162.0])
    np.testing.assert_allclose(d_totals.get(), expected)


def test_ex_globals_device_array_capture(backend):
    import numpy as np
    from gpukern.numba import cuda

    # Global device array - pointer is captured, not data
    PRICES = cp.asarray(
        np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32)
    )

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i]

    d_quantities = cp.asarray(
        np.array([1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32)
    )
    d_totals = cp.zeros(5, dtype=np.float32)

    # First kernel call
    compute_totals[1, 32](d_quantities, d_totals)
    np.testing.assert_allclose(d_totals.get(), [10.0, 25.0, 5.0, 15.0, 30.0])

    # Mutate the device array in-place
    PRICES[:] = cp.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32)

    # Second kernel call sees the updated values
    compute_totals[1, 32](d_quantities, d_totals)

    expected = np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32)
    np.testing.assert_allclose(d_totals.get(), expected)


# ---------------------------------------------------------------- doc_examples/test_ufunc.py


def test_ex_cuda_ufunc(backend):
    import numpy as np

    from gpukern.numba import cuda

    # A kernel calling a ufunc (sin, in this case)
    @cuda.jit
    def f(r, x):
        # Compute sin(x) with result written to r
        np.sin(x, r)

    # Declare input and output arrays
    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)

    # Launch kernel that calls the ufunc
    f[1, 1](r, x)

    # A quick sanity check demonstrating equality of the sine computed by
    # the sin ufunc inside the kernel, and NumPy's sin ufunc
    np.testing.assert_allclose(r, np.sin(x))


# ---------------------------------------------------------------- doc_examples/test_cg.py


@pytest.mark.refused("a grid-synchronising kernel on OpenCL (no cooperative launch there)", on=("opencl",))
def test_ex_grid_sync(backend):
    import numpy as np

    from gpukern.numba import cuda, int32

    sig = (int32[:, ::1],)

    @cuda.jit(sig)
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

    A = np.zeros((64, 64), dtype=np.int32)  # scaled (1024 x 1024 in the source)
    blockdim = 32
    griddim = A.shape[1] // blockdim

    mb = sequential_rows.overloads[sig].max_cooperative_grid_blocks(blockdim)
    if mb < griddim:
        pytest.skip("Device does not support a large enough coop grid")

    sequential_rows[griddim, blockdim](A)

    reference = np.tile(np.arange(64), (64, 1)).T
    np.testing.assert_equal(A, reference)
