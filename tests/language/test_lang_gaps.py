"""Python the ported Numba-CUDA and CuPy kernels write that gpukern took on late: ``n.bit_count()``,
zero-length constant tables, tuple locals and tuple indices, shapes as tuples, 0-D and N-D arrays,
NumPy reductions of constant tables, and tables of records -- on every backend, against Python
and NumPy, with the refusals around them."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, int32, int64, kernel

# ---------------------------------------------------------------- n.bit_count()


@kernel
def bit_counts(out: Array[int64], a: gk.int32, b: gk.uint32, c: gk.int8, d: gk.int64):
    out[0] = a.bit_count()
    out[1] = b.bit_count()
    out[2] = c.bit_count()
    out[3] = d.bit_count()
    out[4] = (-5).bit_count()  # a literal: Python's int method
    w = 7  # a literal-only local
    out[5] = (w * a).bit_count()
    out[6] = int32(-(2**31)).bit_count()  # a typed constant


@pytest.mark.parametrize(
    "a, b, c, d", [(-7, 0xFFFFFFFF, -128, -(2**63)), (2**31 - 1, 0, 127, 2**40 + 3), (0, 5, -1, -1)]
)
def test_bit_count_is_pythons_on_every_backend(backend, a, b, c, d):
    out = np.full(7, -1, np.int64)
    bit_counts[1, 1](out, np.int32(a), np.uint32(b), np.int8(c), np.int64(d))
    wa = np.int32(np.int64(a) * 7)  # int32 arithmetic wraps
    want = [abs(a).bit_count(), b.bit_count(), abs(c).bit_count(), abs(d).bit_count(), 2, abs(int(wa)).bit_count(), 1]
    assert out.tolist() == want
    assert [np.int32(a).bit_count(), np.int8(c).bit_count(), np.int64(d).bit_count()] == [want[0], want[2], want[3]]


def test_bit_count_refusals(on_simulator):
    @kernel
    def of_float(out: Array[int64], x: gk.float32):
        out[0] = x.bit_count()

    with pytest.raises(gk.KernelTypeError, match=r"\.bit_count\(\) takes an integer, not float32") as e:
        of_float[1, 1](np.zeros(1, np.int64), np.float32(1))
    assert e.value.loc.lineno is not None

    @kernel
    def with_args(out: Array[int64], x: gk.int32):
        out[0] = x.bit_count(2)

    with pytest.raises(gk.KernelTypeError, match=r"bit_count\(\) takes 0 argument"):
        with_args[1, 1](np.zeros(1, np.int64), np.int32(1))


# ---------------------------------------------------------------- zero-length constant tables

EMPTY = np.array([])
EMPTY_ROWS = np.zeros((0, 3), np.int32)


@kernel
def empty_lengths(out: Array[int64]):
    out[0] = len(EMPTY)
    out[1] = EMPTY_ROWS.shape[0]
    out[2] = EMPTY_ROWS.shape[1]
    out[3] = EMPTY_ROWS.size


@kernel
def empty_read(out: Array[gk.float64], i: int32):
    out[0] = EMPTY[i]


def test_zero_length_tables_have_their_shape(backend):
    out = np.full(4, -1, np.int64)
    empty_lengths[1, 1](out)
    assert out.tolist() == [0, 0, 3, 0]


def test_reading_a_zero_length_table_is_out_of_bounds(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"constant array 'EMPTY' of shape \(0,\)"):
        empty_read[1, 1](np.zeros(1), np.int32(0))


def test_zero_length_table_constant_index_is_refused(on_simulator):
    @kernel
    def at_zero(out: Array[gk.float64]):
        out[0] = EMPTY[0]

    with pytest.raises(gk.KernelTypeError, match="index 0 is out of bounds for dimension 0 of size 0"):
        at_zero[1, 1](np.zeros(1))


# ---------------------------------------------------------------- tuple locals and tuple indices


@kernel
def tuple_locals(a: Array[int32, 2], out: Array[int32, 2], hits: Array[int32, 2]):
    tx = gk.thread_idx.x
    ty = gk.thread_idx.y
    bin = (tx, ty)
    bin = (bin[0] % 4, bin[1] % 8)  # reassigned: its items are variables
    swapped = (bin[1], bin[0])
    swapped = (swapped[1], swapped[0])  # the right side first, as Python: a swap back
    before = bin
    tx = 100  # the tuple keeps the values it was made of
    out[bin] = a[before] + len(bin) + tx - 100
    gk.atomic_add(hits, swapped, 1)
    gid = (gk.global_id(0), gk.global_id(1))  # bound once at the top level: global ids never change
    if gid[0] < a.shape[0]:
        t = (1, 2)
        if a[gid] > 10:
            t = (a[gid], 7)
        out[gid[0] + 4, gid[1]] = t[0] * 10 + t[1]  # a tuple assigned in a branch is read after it


def test_tuple_locals_and_tuple_indices(backend):
    a = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = np.zeros((8, 8), np.int32)
    hits = np.zeros((4, 8), np.int32)
    tuple_locals[1, (4, 8)](a, out, hits)
    assert (out[:4] == a + 2).all()
    assert (out[4:] == np.where(a > 10, a * 10 + 7, 12)).all()
    assert (hits == 1).all()


@gk.func
def dims(x):
    return x.shape


@kernel
def shapes(c: Array[int32, 2], out: Array[int64]):
    height, width = c.shape
    s = gk.shared(int32, (3, 5))
    m, n = s.shape  # constants
    out[0] = height * 1000 + width
    out[1] = m * 10 + n
    out[2] = len(c.shape) + len(s.shape)
    whole = c.shape
    h2, w2 = whole
    out[3] = h2 + w2
    d = dims(c)
    out[4] = d[0] - d[1]
    if gk.global_id(0) == 0:
        c[c.shape[0] - 1, c.shape[1] - 1] = 7
    lo = (0, 0)
    c[lo] = out.shape[0]


def test_shapes_unpack_and_index(backend):
    c = np.zeros((3, 4), np.int32)
    out = np.zeros(5, np.int64)
    shapes[1, 1](c, out)
    assert out.tolist() == [3004, 35, 4, 7, -1]
    assert c[2, 3] == 7 and c[0, 0] == 5


# (unpacking ported from Numba-CUDA's test_intrinsic_forloop_step: tests/ported/test_ported_intrinsics.py)


def _refused(source: str, error: type, message: str, line: int, tmp_path, *args) -> None:
    path = tmp_path / "refused_kernel.py"
    path.write_text("import numpy as np\nimport gpukern as gk\nfrom gpukern import *\n\n" + source)
    import importlib.util

    spec = importlib.util.spec_from_file_location("refused_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(error, match=message) as e:
        module.k.source(*args)
    assert e.value.loc is not None and e.value.loc.lineno == line, e.value


@pytest.mark.parametrize(
    "body, message",
    [
        ("    h, w, d = c.shape\n", r"cannot unpack c\.shape of 2 items into 3 names"),
        ("    (h,) = c.shape\n", r"cannot unpack c\.shape of 2 items into 1 names"),
        ("    h, w = c[0, 0]\n", r"cannot unpack a int32 value into 2 names"),
        ("    t = (1, 2)\n    if c[0, 0]:\n        t = (1, 2, 3)\n", r"'t' holds a tuple of 2 items"),
        ("    t = 1\n    if c[0, 0]:\n        t = (1, 2)\n", "'t' holds a number elsewhere and a tuple"),
        ("    t = (1, 2)\n    if c[0, 0]:\n        t = 3\n", "'t' holds a tuple elsewhere"),
        ("    t = (c, 1)\n    t = (c, 2)\n", "an item of the tuple assigned to 't' must be a number"),
        ("    t = (1.5, 0)\n    c[t] = 1\n", "array indices must be integers"),
        ("    t = (0, 0, 0)\n    c[t] = 1\n", r"'c' has 2 dimension\(s\) but 3 index"),
    ],
)
def test_tuple_refusals_name_the_line(tmp_path, body, message):
    source = "@kernel\ndef k(c: Array[int32, 2]):\n" + body
    line = 4 + 2 + (1 if "(c, 1)" in body else body.count("\n"))
    _refused(source, gk.KernelTypeError, message, line, tmp_path, np.zeros((2, 2), np.int32))


# ---------------------------------------------------------------- 0-D and N-D arrays

SCALAR_TABLE = np.array(2.5)


@kernel
def zero_dim(x, y, out: Array[int64]):
    y[()] = x[()] * 2 + SCALAR_TABLE[()]
    t = ()
    y[t] += 1.0
    out[0] = x.ndim
    out[1] = x.size + SCALAR_TABLE.size
    out[2] = len(x.shape)


def test_zero_dimensional_arrays(backend):
    x, y, out = np.array(1.25), np.array(0.0), np.zeros(3, np.int64)
    zero_dim[1, 1](x, y, out)
    assert y[()] == 1.25 * 2 + 2.5 + 1 and out.tolist() == [0, 2, 0]


@kernel
def seven_dim(x, y: Array[int64], out: Array[int64, 7]):
    s = gk.local(int64, (2, 1, 2, 1, 2, 1, 2))
    i = gk.global_id(0)
    if i == 0:
        y[0] = x.ndim
        y[1] = x.size
        a, b, c, d, e, f, g = x.shape
        y[2] = a * 1000000 + b * 100000 + c * 10000 + d * 1000 + e * 100 + f * 10 + g
    if i < x.shape[6]:
        for j in range(x.shape[2]):
            s[j % 2, 0, 1, 0, 1, 0, i % 2] = x[1, 0, j, 0, 1, 0, i] * 10
            out[1, 0, j, 0, 1, 0, i] = s[j % 2, 0, 1, 0, 1, 0, i % 2] + 1
            gk.atomic_add(out, (0, 0, j, 0, 0, 0, i), x[0, 0, j, 0, 0, 0, i])


def test_seven_dimensional_arrays(backend):
    x = np.arange(2 * 3 * 2 * 4, dtype=np.int64).reshape(2, 1, 3, 1, 2, 1, 4)
    y = np.zeros(3, np.int64)
    out = np.ones_like(x)
    seven_dim[1, 4](x, y, out)
    assert y.tolist() == [7, x.size, 2131214]
    want = np.ones_like(x)
    want[1, 0, :, 0, 1, 0, :] = x[1, 0, :, 0, 1, 0, :] * 10 + 1
    want[0, 0, :, 0, 0, 0, :] += x[0, 0, :, 0, 0, 0, :]
    assert (out == want).all()


def test_out_of_bounds_in_a_high_dimension_names_it(on_simulator):
    @kernel
    def k(x: Array[int32, 4], i: int32):
        x[0, 0, 0, i] = 1

    with pytest.raises(gk.OutOfBoundsError, match=r"index \(0, 0, 0, 5\) .* of shape \(1, 2, 3, 5\) \(dimension 3\)"):
        k[1, 1](np.zeros((1, 2, 3, 5), np.int32), np.int32(5))


def test_zero_dimensional_refusals(on_simulator):
    @kernel
    def length(x, out: Array[int64]):
        out[0] = len(x)

    with pytest.raises(gk.KernelTypeError, match="len\\(\\) of the 0-dimensional array 'x'"):
        length[1, 1](np.array(1.0), np.zeros(1, np.int64))

    @kernel
    def vector(x, out):
        out[0] = gk.vload(x, (), 2)[0]

    with pytest.raises(gk.KernelTypeError, match="vload\\(\\) of a 0-dimensional array"):
        vector[1, 1](np.array(1.0), np.zeros(1))

    @kernel
    def one_index(x, out):
        out[0] = x[0]

    with pytest.raises(gk.KernelTypeError, match=r"'x' has 0 dimension\(s\) but 1 index"):
        one_index[1, 1](np.array(1.0), np.zeros(1))


# ---------------------------------------------------------------- NumPy reductions of whole arrays

SMALL_TABLE = np.array([[3, -1, 4], [1, -5, 9]], np.int32)


@kernel
def reductions(a, out_sum, tables: Array[int64], out_other: Array[gk.float64], flags: Array[gk.bool_]):
    i = gk.global_id(0)
    s = gk.shared(int32, (2, 4))
    if i == 0:
        out_sum[0] = np.sum(a)
        tables[0] = np.prod(SMALL_TABLE)
        tables[1] = np.sum(SMALL_TABLE)
        out_other[0] = np.max(a)
        out_other[1] = np.min(a)
        out_other[2] = np.amax(SMALL_TABLE) + np.amin(SMALL_TABLE)
        flags[0] = np.all(a)
        flags[1] = np.any(a)
        for k in range(8):
            s[k // 4, k % 4] = k
        out_other[3] = np.sum(s)


@pytest.mark.parametrize(
    "a",
    [
        np.array([[1, -2, 3], [4, 5, -60]], np.int32),
        np.array([7, 0, 2**32 - 1], np.uint32),
        np.array([True, False, True]),
        np.array([1.5, -0.25, 2.0, 0.5], np.float32),
        np.array([1.0, np.nan, -3.0], np.float64),
        np.array([np.nan, 1.0], np.float64),
        np.array([[-0.0, 2.0], [3.0, -4.0]], np.float64),
    ],
    ids=["int32-2d", "uint32", "bool", "float32", "nan-inside", "nan-first", "float64-2d"],
)
def test_numpy_reductions_of_whole_arrays(backend, a):
    want_sum = np.sum(a)
    out_sum = np.zeros(1, want_sum.dtype)  # NumPy's own accumulator type: int64 for int32, uint64 for uint32
    tables, out_other, flags = np.zeros(2, np.int64), np.zeros(4), np.zeros(2, bool)
    reductions[1, 1](a, out_sum, tables, out_other, flags)
    np.testing.assert_array_equal(out_sum[0], want_sum)
    assert tables.tolist() == [np.prod(SMALL_TABLE), np.sum(SMALL_TABLE)]
    np.testing.assert_array_equal(out_other[:2], [np.max(a), np.min(a)])  # NaN anywhere gives NaN, as NumPy's
    assert out_other[2:].tolist() == [9 - 5, 28]
    assert flags.tolist() == [np.all(a), np.any(a)]


@kernel
def sum_in_order(a, out):
    out[0] = np.sum(a)


def test_numpy_sum_adds_in_order(backend):
    a = np.float32([1e8, 1.0, -1e8, 1.0] * 3)  # 12 elements: NumPy's pairwise sum may differ
    out = np.zeros(1, np.float32)
    sum_in_order[1, 1](a, out)
    want = np.float32(0)
    for v in a:
        want = np.float32(want + v)
    assert out[0] == want


@pytest.mark.parametrize(
    "body, message",
    [
        ("    out[0] = np.sum(out[0])\n", r"numpy\.sum\(\) in a kernel reduces an array, not a float64 value"),
        ("    out[0] = np.sum(a, axis=0)\n", r"sum\(\) takes no keyword arguments in a kernel"),
        ("    out[0] = np.sum(a, 0)\n", r"numpy\.sum\(\) takes 1 argument"),
        ("    out[0] = np.max(EMPTY)\n", r"numpy\.max\(\) of the zero-size array 'EMPTY'"),
        ("    out[0] = a.sum()\n", r"not \.sum(?s:.*)hint: write np\.sum\(a\)"),
        ("    out[0] = np.max(z).real\n", "complex numbers: they are not ordered"),
        ("    out[0] = np.sum(h)\n", r"numpy\.sum\(\) of float16 elements: NumPy accumulates them in float32"),
        ("    while np.sum(a) > 0:\n        out[0] = 1.0\n", "while loop's condition cannot call a function that"),
    ],
)
def test_reduction_refusals_name_the_line(tmp_path, body, message):
    source = (
        "EMPTY = np.zeros(0)\n\n@kernel\ndef k(out: Array[float64], a: Array[float64], z: Array[complex64], "
        "h: Array[float16]):\n" + body
    )
    args = (np.zeros(1), np.zeros(3), np.zeros(2, np.complex64), np.zeros(2, np.float16))
    syntax = "while" in body or "axis" in body
    _refused(source, gk.KernelSyntaxError if syntax else gk.KernelTypeError, message, 9, tmp_path, *args)


# ---------------------------------------------------------------- tables of records

RECORDS = np.array(
    [(1.5, 1 + 2j, 2, -1, np.nan, 0.5), (-3.0, -1j, 4, 7, np.inf, -2.0), (0.25, 3, -6, 0, 1.0, 65504.0)],
    dtype=np.dtype(
        [("x", "f8"), ("z", "c8"), ("n", "i4"), ("s", "i1"), ("f", "f4"), ("h", "f2")], align=True
    ),  # gaps after s and after the last field: pads in C
)


@kernel
def read_records(i: int32, xs: Array[gk.float64], ns: Array[int64], zs: Array[gk.complex64]):
    xs[0] = RECORDS[i]["x"]
    xs[1] = RECORDS[i].f
    xs[2] = RECORDS["h"][i]
    xs[3] = len(RECORDS) + RECORDS.shape[0]
    ns[0] = RECORDS[i].n
    ns[1] = RECORDS[i]["s"]
    zs[0] = RECORDS[i].z


def test_constant_tables_of_records(backend):
    for i in range(3):
        xs, ns, zs = np.zeros(4), np.zeros(2, np.int64), np.zeros(1, np.complex64)
        read_records[1, 1](np.int32(i), xs, ns, zs)
        r = RECORDS[i]
        np.testing.assert_array_equal(xs, [r["x"], np.float64(r["f"]), np.float64(r["h"]), 6])
        assert ns.tolist() == [r["n"], r["s"]] and zs[0] == r["z"]


@pytest.mark.parametrize(
    "body, message",
    [
        ("    RECORDS[0].x = 1.0\n", "'RECORDS' is a constant table"),
        ("    gk.atomic_add(RECORDS['n'], 0, 1)\n", "'RECORDS' is a constant table"),
        ("    out[0] = RECORDS[0]\n", "must be a number, not a record of 'RECORDS'"),
        ("    out[0] = RECORDS[0].w\n", "the records of 'RECORDS' have no field 'w'"),
        ("    out[0] = PACKED[0].n\n", "not a multiple of 4"),
    ],
)
def test_record_table_refusals_name_the_line(tmp_path, body, message):
    source = (
        "RECORDS = np.zeros(2, np.dtype([('x', 'f8'), ('n', 'i4')], align=True))\n"
        "PACKED = np.zeros(2, np.dtype([('s', 'i1'), ('n', 'i4')]))\n\n"
        "@kernel\ndef k(out: Array[float64]):\n" + body
    )
    _refused(source, gk.KernelTypeError, message, 10, tmp_path, np.zeros(1))


@kernel
def doubled_scalar(x: Array[gk.float64, 0], y: Array[gk.float64, 0]):
    y[()] = x[()] * 2


def test_zero_dimensional_device_arrays_stay_zero_dimensional(backend):
    """issue 33: ``gk.to_device(np.array(1.5))`` and ``gk.zeros(())`` came back with shape (1,), so
    an ``Array[T, 0]`` parameter could not take them; ``gk.bfloat16(1.5)`` gave an array."""
    x, y = gk.to_device(np.array(1.5)), gk.zeros((), np.float64)
    assert x.shape == () and y.shape == () and gk.empty(()).shape == ()
    doubled_scalar[1, 1](x, y)
    assert y.get().shape == () and y.get()[()] == 3.0
    assert isinstance(gk.bfloat16(1.5), np.float32) and gk.bfloat16(1.5) == 1.5
    assert gk.bfloat16.bits(np.float32(1.5)).shape == ()


@kernel
def builtin_pow(a: Array[int32], f: Array[np.float32], out: Array[int64], fout: Array[np.float32]):
    i = gk.global_id(0)
    if i < a.shape[0]:
        out[i] = pow(a[i], 3) + pow(2, 10)  # Python's pow: a ** b, an int for ints
        fout[i] = pow(f[i], 2)


def test_builtin_pow_is_the_power_operator(backend):
    a = np.arange(-5, 6, dtype=np.int32)
    f = np.linspace(-2, 2, 11).astype(np.float32)
    out, fout = np.zeros(11, np.int64), np.zeros(11, np.float32)
    builtin_pow[1, 32](a, f, out, fout)
    assert np.array_equal(out, a.astype(np.int64) ** 3 + 1024)
    np.testing.assert_allclose(fout, f.astype(np.float64) ** 2, rtol=1e-6)
    with pytest.raises(gk.KernelTypeError, match=r"pow\(a, b, mod\)"):

        @kernel
        def modular(out: Array[int32]):
            out[0] = pow(out[0], 3, 7)

        modular.source(Array[int32])
