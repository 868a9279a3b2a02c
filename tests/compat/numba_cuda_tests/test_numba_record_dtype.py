"""Ported from NVIDIA/numba-cuda, ``numba_cuda/numba/cuda/tests/cudapy/test_record_dtype.py`` (BSD-2-Clause,
Copyright NVIDIA Corporation): the kernels and device functions as written, only the import line
changed; the signatures built with ``numpy_support.from_dtype`` are left out (the source's
``get_cfunc`` ignores them too), and so are the cases Numba marks as expected failures.  Both test
classes (NumPy record arrays, and plain structured arrays) become one parametrised case each."""

import numpy as np
import pytest

from gpukern.numba import cuda


def set_a(ary, i, v):
    ary[i].a = v


def set_b(ary, i, v):
    ary[i].b = v


def set_c(ary, i, v):
    ary[i].c = v


def set_record(ary, i, j):
    ary[i] = ary[j]


def record_set_a(r, v):
    r.a = v


def record_set_b(r, v):
    r.b = v


def record_set_c(r, v):
    r.c = v


def record_read_a(r, arr):
    arr[0] = r.a


def record_read_b(r, arr):
    arr[0] = r.b


def record_read_c(r, arr):
    arr[0] = r.c


def record_write_array(r):
    r.g = 2
    r.h[0] = 3.0
    r.h[1] = 4.0


def record_write_2d_array(r):
    r.i = 3
    r.j[0, 0] = 5.0
    r.j[0, 1] = 6.0
    r.j[1, 0] = 7.0
    r.j[1, 1] = 8.0
    r.j[2, 0] = 9.0
    r.j[2, 1] = 10.0


def record_read_array(r, a):
    a[0] = r.h[0]
    a[1] = r.h[1]


def record_read_2d_array(r, a):
    a[0, 0] = r.j[0, 0]
    a[0, 1] = r.j[0, 1]
    a[1, 0] = r.j[1, 0]
    a[1, 1] = r.j[1, 1]
    a[2, 0] = r.j[2, 0]
    a[2, 1] = r.j[2, 1]


recordtype = np.dtype(
    [
        ("a", np.float64),
        ("b", np.int32),
        ("c", np.complex64),
        ("d", (np.uint8, 5)),
    ],
    align=True,
)

recordwitharray = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)

recordwith2darray = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])

nested_array1_dtype = np.dtype([("array1", np.int16, (3,))], align=True)

nested_array2_dtype = np.dtype([("array2", np.int16, (3, 2))], align=True)


def record_setitem_array(rec_source, rec_dest):
    rec_dest["j"] = rec_source["j"]


def recarray_set_record(ary, rec):
    ary[0] = rec


def recarray_getitem_return(ary):
    return ary[0]


def record_read_array0(ary):
    return ary.h[0]


def record_read_array1(ary):
    return ary.h[1]


def record_read_2d_array00(ary):
    return ary.j[0, 0]


def record_read_2d_array10(ary):
    return ary.j[1, 0]


def record_read_2d_array01(ary):
    return ary.j[0, 1]


def assign_array_to_nested(dest, src):
    dest["array1"] = src


def assign_array_to_nested_2d(dest, src):
    dest["array2"] = src


# ---------------------------------------------------------------- TestRecordDtype (and ...WithStructArrays)
@pytest.fixture(params=["recarray", "structured"])
def samples(request):
    """The source's ``_createSampleArrays`` and ``setUp``: record arrays, or plain structured arrays."""
    if request.param == "recarray":
        sample1d = np.recarray(3, dtype=recordtype)
        rec1d = np.recarray(1, dtype=recordwitharray)[0]
        rec2d = np.recarray(1, dtype=recordwith2darray)[0]
    else:
        sample1d = np.zeros(3, dtype=recordtype)
        rec1d = np.zeros(1, dtype=recordwitharray)[0]
        rec2d = np.zeros(1, dtype=recordwith2darray)[0]
    for i in range(sample1d.size):
        x = i + 1
        sample1d[i]["a"] = x / 2
        sample1d[i]["b"] = x
        sample1d[i]["c"] = x * 1j
        sample1d[i]["d"] = "%d" % x  # noqa: UP031 (as written)
    return sample1d, rec1d, rec2d


def _test_set_equal(sample1d, pyfunc, value):
    cfunc = cuda.jit()(pyfunc)
    for i in range(sample1d.size):
        got = sample1d.copy()
        expect = got.copy().view(np.recarray)
        cfunc[1, 1](got, i, value)
        pyfunc(expect, i, value)
        assert np.all(expect == got)


def test_set_a(backend, samples):
    _test_set_equal(samples[0], set_a, 3.1415)
    _test_set_equal(samples[0], set_a, 3.0)


def test_set_b(backend, samples):
    _test_set_equal(samples[0], set_b, 123)
    _test_set_equal(samples[0], set_b, 123.0)  # (the source passes 123 typed as float64)


def test_set_c(backend, samples):
    _test_set_equal(samples[0], set_c, 43j)
    _test_set_equal(samples[0], set_c, np.complex128(43j))


def test_set_record(backend, samples):
    pyfunc = set_record
    cfunc = cuda.jit()(pyfunc)
    for i, j in [(0, 1), (1, 2), (0, 2)]:
        expect = samples[0].copy()
        pyfunc(expect, i, j)
        got = samples[0].copy()
        cfunc[1, 1](got, i, j)
        assert expect[i] == expect[j]
        assert got[i] == got[j]
        assert np.all(expect == got)


def _test_rec_set(sample1d, v, pyfunc, f):
    rec = sample1d.copy()[0]
    cfunc = cuda.jit()(pyfunc)
    cfunc[1, 1](rec, v)
    np.testing.assert_equal(rec[f], v)


@pytest.mark.parametrize(
    "v, pyfunc, f",
    [
        (np.float64(1.5), record_set_a, "a"),
        (np.int32(2), record_set_b, "b"),
        (np.complex64(4.0 + 5.0j), record_set_c, "c"),
    ],
)
def test_rec_set(backend, samples, v, pyfunc, f):
    _test_rec_set(samples[0], v, pyfunc, f)


@pytest.mark.parametrize(
    "v, pyfunc, f",
    [
        (np.float64(1.5), record_read_a, "a"),
        (np.int32(2), record_read_b, "b"),
        (np.complex64(4.0 + 5.0j), record_read_c, "c"),
    ],
)
def test_rec_read(backend, samples, v, pyfunc, f):
    rec = samples[0].copy()[0]
    rec[f] = v
    arr = np.zeros(1, v.dtype)
    cfunc = cuda.jit()(pyfunc)
    cfunc[1, 1](rec, arr)
    np.testing.assert_equal(arr[0], v)


def test_record_write_1d_array(backend, samples):
    rec = samples[1].copy()
    cfunc = cuda.jit()(record_write_array)
    cfunc[1, 1](rec)
    expected = samples[1].copy()
    expected["g"] = 2
    expected["h"][0] = 3.0
    expected["h"][1] = 4.0
    np.testing.assert_equal(expected, rec)


def test_record_write_2d_array(backend, samples):
    rec = samples[2].copy()
    cfunc = cuda.jit()(record_write_2d_array)
    cfunc[1, 1](rec)
    expected = samples[2].copy()
    expected["i"] = 3
    expected["j"][:] = np.asarray([5.0, 6.0, 7.0, 8.0, 9.0, 10.0], np.float32).reshape(3, 2)
    np.testing.assert_equal(expected, rec)


def test_record_read_1d_array(backend, samples):
    rec = samples[1].copy()
    rec["h"][0] = 4.0
    rec["h"][1] = 5.0
    cfunc = cuda.jit()(record_read_array)
    arr = np.zeros(2, dtype=rec["h"].dtype)
    cfunc[1, 1](rec, arr)
    np.testing.assert_equal(rec["h"], arr)


def test_record_read_2d_array(backend, samples):
    rec = samples[2].copy()
    rec["j"][:] = np.asarray([5.0, 6.0, 7.0, 8.0, 9.0, 10.0], np.float32).reshape(3, 2)
    cfunc = cuda.jit()(record_read_2d_array)
    arr = np.zeros((3, 2), dtype=rec["j"].dtype)
    cfunc[1, 1](rec, arr)
    np.testing.assert_equal(rec["j"], arr)


# ---------------------------------------------------------------- TestNestedArrays
def get_cfunc(pyfunc, retty):
    inner = cuda.jit(device=True)(pyfunc)

    @cuda.jit
    def outer(arg0, res):
        res[0] = inner(arg0)

    def host(arg0):
        res = np.zeros(1, dtype=retty)
        outer[1, 1](arg0, res)
        return res[0]

    return host


def test_nested_record_read_array(backend):
    nbval = np.recarray(1, dtype=recordwitharray)
    nbval[0].h[0] = 15.0
    nbval[0].h[1] = 25.0
    cfunc = get_cfunc(record_read_array0, np.float32)
    res = cfunc(nbval[0])
    np.testing.assert_equal(res, nbval[0].h[0])
    cfunc = get_cfunc(record_read_array1, np.float32)
    res = cfunc(nbval[0])
    np.testing.assert_equal(res, nbval[0].h[1])


def test_nested_record_read_2d_array(backend):
    nbval = np.recarray(1, dtype=recordwith2darray)
    nbval[0].j = np.asarray([1.5, 2.5, 3.5, 4.5, 5.5, 6.5], np.float32).reshape(3, 2)
    cfunc = get_cfunc(record_read_2d_array00, np.float32)
    res = cfunc(nbval[0])
    np.testing.assert_equal(res, nbval[0].j[0, 0])
    cfunc = get_cfunc(record_read_2d_array01, np.float32)
    res = cfunc(nbval[0])
    np.testing.assert_equal(res, nbval[0].j[0, 1])
    cfunc = get_cfunc(record_read_2d_array10, np.float32)
    res = cfunc(nbval[0])
    np.testing.assert_equal(res, nbval[0].j[1, 0])


def test_nested_setitem(backend):
    def gen():
        nbarr1 = np.recarray(1, dtype=recordwith2darray)
        nbarr1[0] = np.array([(1, ((1, 2), (4, 5), (2, 3)))], dtype=recordwith2darray)[0]
        nbarr2 = np.recarray(1, dtype=recordwith2darray)
        nbarr2[0] = np.array([(10, ((10, 20), (40, 50), (20, 30)))], dtype=recordwith2darray)[0]
        return nbarr1[0], nbarr2[0]

    pyfunc = record_setitem_array
    pyargs = gen()
    pyfunc(*pyargs)
    cfunc = cuda.jit(pyfunc)
    cuargs = gen()
    cfunc[1, 1](*cuargs)
    np.testing.assert_equal(pyargs, cuargs)


@pytest.mark.refused("a device function returning a whole record, or indexing a record by position")
def test_nested_getitem_idx(backend):
    nbarr = np.recarray(2, dtype=recordwitharray)
    nbarr[0] = np.array([(1, (2, 3))], dtype=recordwitharray)[0]
    for arg, retty in [(nbarr, recordwitharray), (nbarr[0], np.int32)]:
        pyfunc = recarray_getitem_return
        arr_expected = pyfunc(arg)
        cfunc = get_cfunc(pyfunc, retty)
        arr_res = cfunc(arg)
        np.testing.assert_equal(arr_res, arr_expected)


def test_nested_set_record(backend):
    rec = np.ones(2, dtype=recordwith2darray).view(np.recarray)[0]
    nbarr = np.zeros(2, dtype=recordwith2darray).view(np.recarray)
    arr = np.zeros(2, dtype=recordwith2darray).view(np.recarray)
    pyfunc = recarray_set_record
    pyfunc(arr, rec)
    kernel = cuda.jit(pyfunc)
    kernel[1, 1](nbarr, rec)
    np.testing.assert_equal(nbarr, arr)


def test_assign_array_to_nested(backend):
    src = (np.arange(3) + 1).astype(np.int16)
    got = np.zeros(2, dtype=nested_array1_dtype)
    expected = np.zeros(2, dtype=nested_array1_dtype)
    pyfunc = assign_array_to_nested
    kernel = cuda.jit(pyfunc)
    kernel[1, 1](got[0], src)
    pyfunc(expected[0], src)
    np.testing.assert_array_equal(expected, got)


def test_assign_array_to_nested_2d(backend):
    src = (np.arange(6) + 1).astype(np.int16).reshape((3, 2))
    got = np.zeros(2, dtype=nested_array2_dtype)
    expected = np.zeros(2, dtype=nested_array2_dtype)
    pyfunc = assign_array_to_nested_2d
    kernel = cuda.jit(pyfunc)
    kernel[1, 1](got[0], src)
    pyfunc(expected[0], src)
    np.testing.assert_array_equal(expected, got)


def test_issue_7693(backend):
    src_dtype = np.dtype([("user", np.float64), ("array", np.int16, (3,))], align=True)
    dest_dtype = np.dtype([("user1", np.float64), ("array1", np.int16, (3,))], align=True)

    @cuda.jit
    def copy(index, src, dest):
        dest["user1"] = src[index]["user"]
        dest["array1"] = src[index]["array"]

    source = np.zeros(2, dtype=src_dtype)
    got = np.zeros(2, dtype=dest_dtype)
    expected = np.zeros(2, dtype=dest_dtype)
    source[0] = (1.2, [1, 2, 3])
    copy[1, 1](0, source, got[0])
    copy.py_func(0, source, expected[0])
    np.testing.assert_array_equal(expected, got)
