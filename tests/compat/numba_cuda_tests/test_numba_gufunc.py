"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_gufunc.py`` and
``test_gufunc_scalar.py`` (BSD-2-Clause, Copyright NVIDIA Corporation and Anaconda, Inc.): the
generalized ufuncs as written, only the import lines changed (``cp`` is the stand-in making gpukern
device arrays).  Left out: the checks of Numba's messages and warnings (launch-configuration
warnings, option and argument errors -- gpukern's are in tests/numba/test_numba_gufunc_layer.py),
calling a gufunc from a kernel, and the device-array ``astype`` error of ``test_gufunc_scalar_cast``."""

from collections import namedtuple

import numpy as np

import cupy_standin as cp
from gpukern.numba import cuda, float32, float64, guvectorize, int32, void


def _get_matmulcore_gufunc(dtype=float32):
    @guvectorize(
        [void(dtype[:, :], dtype[:, :], dtype[:, :])],
        "(m,n),(n,p)->(m,p)",
        target="cuda",
    )
    def matmulcore(A, B, C):
        m, n = A.shape
        n, p = B.shape
        for i in range(m):
            for j in range(p):
                C[i, j] = 0
                for k in range(n):
                    C[i, j] += A[i, k] * B[k, j]

    return matmulcore


def test_gufunc_small(backend):
    gufunc = _get_matmulcore_gufunc()

    matrix_ct = 2
    A = np.arange(matrix_ct * 2 * 4, dtype=np.float32).reshape(matrix_ct, 2, 4)
    B = np.arange(matrix_ct * 4 * 5, dtype=np.float32).reshape(matrix_ct, 4, 5)

    C = gufunc(A, B)
    Gold = np.matmul(A, B)
    assert np.allclose(C, Gold)


def test_gufunc_auto_transfer(backend):
    gufunc = _get_matmulcore_gufunc()

    matrix_ct = 2
    A = np.arange(matrix_ct * 2 * 4, dtype=np.float32).reshape(matrix_ct, 2, 4)
    B = np.arange(matrix_ct * 4 * 5, dtype=np.float32).reshape(matrix_ct, 4, 5)

    dB = cuda.to_device(B)

    C = gufunc(A, dB).copy_to_host()
    Gold = np.matmul(A, B)
    assert np.allclose(C, Gold)


def test_gufunc(backend):
    gufunc = _get_matmulcore_gufunc()

    matrix_ct = 1001  # an odd number to test thread/block division in CUDA
    A = np.arange(matrix_ct * 2 * 4, dtype=np.float32).reshape(matrix_ct, 2, 4)
    B = np.arange(matrix_ct * 4 * 5, dtype=np.float32).reshape(matrix_ct, 4, 5)

    C = gufunc(A, B)
    Gold = np.matmul(A, B)
    assert np.allclose(C, Gold)


def test_gufunc_hidim(backend):
    gufunc = _get_matmulcore_gufunc()

    matrix_ct = 100  # an odd number to test thread/block division in CUDA
    A = np.arange(matrix_ct * 2 * 4, dtype=np.float32).reshape(4, 25, 2, 4)
    B = np.arange(matrix_ct * 4 * 5, dtype=np.float32).reshape(4, 25, 4, 5)

    C = gufunc(A, B)
    Gold = np.matmul(A, B)
    assert np.allclose(C, Gold)


def test_gufunc_new_axis(backend):
    gufunc = _get_matmulcore_gufunc(dtype=float64)

    X = np.random.randn(10, 3, 3)
    Y = np.random.randn(3, 3)

    gold = np.matmul(X, Y)

    res1 = gufunc(X, Y)
    np.testing.assert_allclose(gold, res1)

    res2 = gufunc(X, np.tile(Y, (10, 1, 1)))
    np.testing.assert_allclose(gold, res2)


def test_gufunc_stream(backend):
    gufunc = _get_matmulcore_gufunc()

    matrix_ct = 1001  # an odd number to test thread/block division in CUDA
    A = np.arange(matrix_ct * 2 * 4, dtype=np.float32).reshape(matrix_ct, 2, 4)
    B = np.arange(matrix_ct * 4 * 5, dtype=np.float32).reshape(matrix_ct, 4, 5)

    stream = cuda.stream()
    dA = cuda.to_device(A, stream)
    dB = cuda.to_device(B, stream)

    dC = cuda.device_array(shape=(1001, 2, 5), dtype=A.dtype, stream=stream)
    dC = gufunc(dA, dB, out=dC, stream=stream)
    C = dC.copy_to_host(stream=stream)
    stream.synchronize()

    Gold = np.matmul(A, B)

    assert np.allclose(C, Gold)


def test_copy(backend):
    @guvectorize([void(float32[:], float32[:])], "(x)->(x)", target="cuda")
    def copy(A, B):
        for i in range(B.size):
            B[i] = A[i]

    A = np.arange(10, dtype=np.float32) + 1
    B = np.zeros_like(A)
    copy(A, out=B)
    np.testing.assert_allclose(A, B)


def test_copy_unspecified_return(backend):
    # Ensure that behaviour is correct when the return type is not
    # specified in the signature.
    @guvectorize([(float32[:], float32[:])], "(x)->(x)", target="cuda")
    def copy(A, B):
        for i in range(B.size):
            B[i] = A[i]

    A = np.arange(10, dtype=np.float32) + 1
    B = np.zeros_like(A)
    copy(A, out=B)
    assert np.allclose(A, B)


def test_copy_odd(backend):
    @guvectorize([void(float32[:], float32[:])], "(x)->(x)", target="cuda")
    def copy(A, B):
        for i in range(B.size):
            B[i] = A[i]

    A = np.arange(11, dtype=np.float32) + 1
    B = np.zeros_like(A)
    copy(A, out=B)
    assert np.allclose(A, B)


def test_copy2d(backend):
    @guvectorize(
        [void(float32[:, :], float32[:, :])],
        "(x, y)->(x, y)",
        target="cuda",
    )
    def copy2d(A, B):
        for x in range(B.shape[0]):
            for y in range(B.shape[1]):
                B[x, y] = A[x, y]

    A = np.arange(30, dtype=np.float32).reshape(5, 6) + 1
    B = np.zeros_like(A)
    copy2d(A, out=B)
    assert np.allclose(A, B)


def check_tuple_arg(a, b):
    @guvectorize([(float64[:], float64[:], float64[:])], "(n),(n)->()", target="cuda")
    def gu_reduce(x, y, r):
        s = 0
        for i in range(len(x)):
            s += x[i] * y[i]
        r[0] = s

    r = gu_reduce(a, b)
    expected = np.sum(np.asarray(a) * np.asarray(b), axis=1)
    np.testing.assert_equal(expected, r)


def test_tuple_of_tuple_arg(backend):
    a = ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    b = ((1.5, 2.5, 3.5), (4.5, 5.5, 6.5))
    check_tuple_arg(a, b)


def test_tuple_of_namedtuple_arg(backend):
    Point = namedtuple("Point", ("x", "y", "z"))
    a = (Point(x=1.0, y=2.0, z=3.0), Point(x=4.0, y=5.0, z=6.0))
    b = (Point(x=1.5, y=2.5, z=3.5), Point(x=4.5, y=5.5, z=6.5))
    check_tuple_arg(a, b)


def test_tuple_of_array_arg(backend):
    a = (np.asarray((1.0, 2.0, 3.0)), np.asarray((4.0, 5.0, 6.0)))
    b = (np.asarray((1.5, 2.5, 3.5)), np.asarray((4.5, 5.5, 6.5)))
    check_tuple_arg(a, b)


def test_gufunc_name(backend):
    gufunc = _get_matmulcore_gufunc()
    assert gufunc.__name__ == "matmulcore"


def test_multiple_outputs_same_type_passed_in(backend):
    @guvectorize(
        [void(float32[:], float32[:], float32[:])],
        "(x)->(x),(x)",
        target="cuda",
    )
    def copy(A, B, C):
        for i in range(B.size):
            B[i] = A[i]
            C[i] = A[i]

    A = np.arange(10, dtype=np.float32) + 1
    B = np.zeros_like(A)
    C = np.zeros_like(A)
    copy(A, B, C)
    np.testing.assert_allclose(A, B)
    np.testing.assert_allclose(A, C)


def test_multiple_outputs_distinct_values(backend):
    @guvectorize(
        [void(float32[:], float32[:], float32[:])],
        "(x)->(x),(x)",
        target="cuda",
    )
    def copy_and_double(A, B, C):
        for i in range(B.size):
            B[i] = A[i]
            C[i] = A[i] * 2

    A = np.arange(10, dtype=np.float32) + 1
    B = np.zeros_like(A)
    C = np.zeros_like(A)
    copy_and_double(A, B, C)
    np.testing.assert_allclose(A, B)
    np.testing.assert_allclose(A * 2, C)


def test_multiple_output_allocation(backend):
    @guvectorize(
        [void(float32[:], float32[:], float32[:])],
        "(x)->(x),(x)",
        target="cuda",
    )
    def copy_and_double(A, B, C):
        for i in range(B.size):
            B[i] = A[i]
            C[i] = A[i] * 2

    A = np.arange(10, dtype=np.float32) + 1
    B, C = copy_and_double(A)
    np.testing.assert_allclose(A, B)
    np.testing.assert_allclose(A * 2, C)


def test_multiple_output_dtypes(backend):
    @guvectorize(
        [void(int32[:], int32[:], float64[:])],
        "(x)->(x),(x)",
        target="cuda",
    )
    def copy_and_multiply(A, B, C):
        for i in range(B.size):
            B[i] = A[i]
            C[i] = A[i] * 1.5

    A = np.arange(10, dtype=np.int32) + 1
    B = np.zeros_like(A)
    C = np.zeros_like(A, dtype=np.float64)
    copy_and_multiply(A, B, C)
    np.testing.assert_allclose(A, B)
    np.testing.assert_allclose(A * np.float64(1.5), C)


# ---------------------------------------------------------------- test_gufunc_scalar.py
def test_gufunc_scalar_output(backend):
    #    function type:
    #        - has no void return type
    #        - array argument is one dimension fewer than the source array
    #        - scalar output is passed as a 1-element array.
    #
    #    signature: (n)->()
    #        - the function takes an array of n-element and output a scalar.

    @guvectorize(["void(int32[:], int32[:])"], "(n)->()", target="cuda")
    def sum_row(inp, out):
        tmp = 0.0
        for i in range(inp.shape[0]):
            tmp += inp[i]
        out[0] = tmp

    inp = np.arange(300, dtype=np.int32).reshape(100, 3)

    # invoke on CUDA with manually managed memory
    out1 = np.empty(100, dtype=inp.dtype)
    out2 = np.empty(100, dtype=inp.dtype)

    dev_inp = cp.asarray(inp)  # alloc and copy input data
    dev_out1 = cp.empty(out1.shape, dtype=out1.dtype)  # alloc only

    sum_row(dev_inp, out=dev_out1)  # invoke the gufunc
    dev_out2 = sum_row(dev_inp)  # invoke the gufunc

    out1 = dev_out1.get()  # retrieve the result
    dev_out2.copy_to_host(out2)  # retrieve the result

    # verify result
    for i in range(inp.shape[0]):
        assert out1[i] == inp[i].sum()
        assert out2[i] == inp[i].sum()


def test_gufunc_scalar_output_bug(backend):
    # Issue 2812: Error due to using input argument types as output argument
    @guvectorize(["void(int32, int32[:])"], "()->()", target="cuda")
    def twice(inp, out):
        out[0] = inp * 2

    assert twice(10) == 20
    arg = np.arange(10).astype(np.int32)
    np.testing.assert_array_equal(twice(arg), arg * 2)


def test_gufunc_scalar_input_saxpy(backend):
    @guvectorize(
        ["void(float32, float32[:], float32[:], float32[:])"],
        "(),(t),(t)->(t)",
        target="cuda",
    )
    def saxpy(a, x, y, out):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    A = np.float32(2)
    X = np.arange(10, dtype=np.float32).reshape(5, 2)
    Y = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = saxpy(A, X, Y)

    for j in range(5):
        for i in range(2):
            exp = A * X[j, i] + Y[j, i]
            assert exp == out[j, i]

    X = np.arange(10, dtype=np.float32)
    Y = np.arange(10, dtype=np.float32)
    out = saxpy(A, X, Y)

    for j in range(10):
        exp = A * X[j] + Y[j]
        assert exp == out[j], (exp, out[j])

    A = np.arange(5, dtype=np.float32)
    X = np.arange(10, dtype=np.float32).reshape(5, 2)
    Y = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = saxpy(A, X, Y)

    for j in range(5):
        for i in range(2):
            exp = A[j] * X[j, i] + Y[j, i]
            assert exp == out[j, i], (exp, out[j, i])


def test_gufunc_scalar_cast(backend):
    @guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)", target="cuda")
    def foo(a, b, out):
        for i in range(b.size):
            out[i] = a * b[i]

    a = np.int64(2)  # type does not match signature (int32)
    b = np.arange(10).astype(np.int32)
    out = foo(a, b)
    np.testing.assert_equal(out, a * b)


def test_gufunc_old_style_scalar_as_array(backend):
    # Example from issue #2579
    @guvectorize(["void(int32[:],int32[:],int32[:])"], "(n),()->(n)", target="cuda")
    def gufunc(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]

    # Case 1
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    b = np.array([2], dtype=np.int32)

    res = np.zeros(4, dtype=np.int32)

    expected = res.copy()
    expected = a + b

    gufunc(a, b, out=res)

    np.testing.assert_almost_equal(expected, res)

    # Case 2
    a = np.array([1, 2, 3, 4] * 2, dtype=np.int32).reshape(2, 4)
    b = np.array([2, 10], dtype=np.int32)

    res = np.zeros((2, 4), dtype=np.int32)

    expected = res.copy()
    expected[0] = a[0] + b[0]
    expected[1] = a[1] + b[1]

    gufunc(a, b, res)

    np.testing.assert_almost_equal(expected, res)
