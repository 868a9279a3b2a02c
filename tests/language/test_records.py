"""Record (structured) dtypes as array elements: ``a[i].x``, ``a[i]["x"]``, ``a["x"][i]``."""

from __future__ import annotations

import numpy as np
import pytest
from compilers import LIB, needs_nvrtc
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, float32, float64, global_id, int32, thread_idx

ALIGNED = np.dtype([("flag", "?"), ("x", "f4"), ("n", "i4"), ("v", "f8"), ("k", "i8")], align=True)
# the same fields out of order, with gaps and a tail; every field at a multiple of its size
SPREAD = np.dtype(
    {
        "names": ["x", "n", "v", "flag", "k"],
        "formats": ["f4", "i4", "f8", "?", "i8"],
        "offsets": [36, 32, 8, 1, 16],
        "itemsize": 48,
    }
)
# packed (align=False) but naturally aligned: C lays it out the same
PACKED = np.dtype({"names": ["v", "k", "x", "n", "flag"], "formats": ["f8", "i8", "f4", "i4", "?"], "itemsize": 32})


def _records(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = np.zeros(n, dtype)
    a["x"] = rng.standard_normal(n)
    a["n"] = rng.integers(-1000, 1000, n)
    a["v"] = rng.standard_normal(n)
    a["flag"] = rng.integers(0, 2, n).astype(bool)
    a["k"] = rng.integers(-(2**40), 2**40, n)
    return a


@gk.kernel
def k_fields(a, b, s: Array[float64]):
    i = global_id(0)
    if i < len(a):
        b[i].x = a[i].x * 2.0
        b[i]["n"] = a[i]["n"] - 3
        b["v"][i] = a["v"][i] + 0.25
        b[i].flag = not a[i].flag
        b[i].k = a[i].k * 3
        s[i] = a[i].x + a[i].n + a[i].v + a[i].k


@pytest.mark.parametrize("dtype", [ALIGNED, SPREAD, PACKED], ids=["aligned", "spread", "packed"])
def test_fields_read_and_written_like_numpy(backend, dtype):
    a = _records(dtype, 50, dtype.itemsize)
    b = np.zeros(50, dtype)
    s = np.zeros(50)
    k_fields[2, 32](a, b, s)
    np.testing.assert_array_equal(b["x"], a["x"] * np.float32(2))
    np.testing.assert_array_equal(b["n"], a["n"] - 3)
    np.testing.assert_array_equal(b["v"], a["v"] + 0.25)
    np.testing.assert_array_equal(b["flag"], ~a["flag"])
    np.testing.assert_array_equal(b["k"], a["k"] * 3)
    want = a["x"].astype(np.float64) + a["n"] + a["v"] + a["k"]
    np.testing.assert_array_equal(s, want)


def test_each_dtype_is_its_own_specialisation():
    keys = {k_fields.signature_of((np.zeros(1, d), np.zeros(1, d), np.zeros(1))) for d in (ALIGNED, SPREAD, PACKED)}
    assert len(keys) == 3
    src = k_fields.source(np.zeros(1, SPREAD), np.zeros(1, SPREAD), np.zeros(1), backend="opencl")
    # the struct has the dtype's layout: members at its offsets, padding in the gaps, 48 bytes
    assert "unsigned char gk_pad0[1];" in src and "unsigned char gk_pad40[8];" in src


@gk.func
def norm2(p, i: int32) -> float32:
    return p[i].x * p[i].x + p[i]["y"] * p[i]["y"]


def test_two_dimensional_record_arrays_and_funcs(backend):
    @gk.kernel
    def k(pts, out: Array[float32, 2], lens: Array[float32]):
        r = global_id(1)
        c = global_id(0)
        if r < pts.shape[0] and c < pts.shape[1]:
            out[r, c] = pts[r, c].x - pts[r][c]["y"]
            pts[r, c].y = pts[r, c].x * 2.0
        if r == 0 and c < pts.shape[1]:
            lens[c] = norm2_row(pts, c)

    dt = np.dtype([("x", "f4"), ("y", "f4")])
    pts = np.zeros((3, 5), dt)
    rng = np.random.default_rng(1)
    pts["x"], pts["y"] = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    before = pts.copy()
    out, lens = np.zeros((3, 5), np.float32), np.zeros(5, np.float32)
    k[(1, 1), (8, 4)](pts, out, lens)
    np.testing.assert_array_equal(out, before["x"] - before["y"])
    np.testing.assert_array_equal(pts["y"], before["x"] * np.float32(2))
    np.testing.assert_array_equal(pts["x"], before["x"])
    x0 = before[0]["x"]  # the thread of (0, c) doubled y before reading the record
    np.testing.assert_allclose(lens, x0 * x0 + (2 * x0) * (2 * x0), rtol=1e-6)


@gk.func
def norm2_row(p, c: int32) -> float32:
    return p[0, c].x * p[0, c].x + p[0, c]["y"] * p[0, c]["y"]


HIST = np.dtype([("count", "i4"), ("sum", "f4"), ("most", "i4")], align=True)


@gk.kernel
def k_hist(v: Array[int32], h):
    i = global_id(0)
    if i < len(v):
        b = v[i] % len(h)
        gk.atomic_add(h["count"], b, 1)
        gk.atomic_add(h["sum"], b, float32(v[i]) * 0.5)
        gk.atomic_max(h["most"], b, v[i])


def test_atomics_on_a_field(backend):
    v = np.random.default_rng(7).integers(0, 1000, 300).astype(np.int32)
    h = np.zeros(7, HIST)
    k_hist[10, 32](v, h)
    bins = v % 7
    np.testing.assert_array_equal(h["count"], np.bincount(bins, minlength=7))
    np.testing.assert_allclose(h["sum"], np.bincount(bins, v * 0.5, minlength=7), rtol=1e-5)
    np.testing.assert_array_equal(h["most"], [v[bins == b].max() for b in range(7)])


def test_device_record_arrays_and_the_fast_path(backend):
    a = _records(ALIGNED, 40, 3)
    da, db, ds = gk.to_device(a), gk.to_device(np.zeros(40, ALIGNED)), gk.zeros(40, np.float64)
    launch = k_fields[2, 32]
    for _ in range(2):
        launch(da, db, ds)
    b = db.get()
    assert b.dtype == ALIGNED
    np.testing.assert_array_equal(b["k"], a["k"] * 3)
    np.testing.assert_array_equal(da.get(), a)


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    "dtype, message",
    [
        (np.dtype([("a", "f4"), ("b", "M8[s]")]), "unsupported element type"),
        (np.dtype([("a", "f4"), ("b", "f8")]), r"byte 4, not a multiple of 8.*align=True"),
        (np.dtype([("a", "f4"), ("b", "c16")]), r"byte 4, not a multiple of 8.*align=True"),
        (np.dtype([("a", "f8"), ("b", "f4")]), r"12 bytes, not a multiple.*align=True"),
        (np.dtype([("a", "f4"), ("b", [("c", "f4")])]), "a nested record"),
        (np.dtype([("a", "f4"), ("s", "U2")]), "unsupported element type"),
    ],
)
def test_layouts_a_kernel_cannot_take_are_refused(dtype, message):
    with pytest.raises(gk.LaunchError, match=message):
        k_hist[1, 32](np.zeros(4, np.int32), np.zeros(4, dtype))


def _compile(body, dtype=HIST):
    return body.variant(body.signature_of((np.zeros(4, dtype), np.zeros(4, np.float32))))


@pytest.mark.parametrize(
    "src, message",
    [
        ("out[0] = h[0]", r"a record of 'h'.*use one field, as h\[i\].count"),
        ("h[0] = 1", r"a store of a whole record of 'h'"),
        ("out[0] = h[0].total", r"no field 'total'; their fields: 'count', 'sum', 'most'"),
        ('h["sum"] = 1.0', r"the whole field, an array"),
        ("out[0] = h[0][1]", r"indexed by a field name, not 1"),
        ("gk.atomic_add(h, 0, 1)", r"atomic_add\(\) of a whole record"),
        ('x, y = gk.vload(h["sum"], 0, 2)', r"vload\(\) of a record field"),
        ('out[0] = take(h["sum"])', r"cannot be passed to a @func"),
    ],
)
def test_misuse_is_a_clear_error(src, message):
    k = load_kernel(
        f"import gpukern as gk\n\n@gk.func\ndef take(s):\n    return s[0]\n\n@gk.kernel\ndef k(h, out):\n    {src}\n",
        "records",
    )
    with pytest.raises(gk.KernelTypeError, match=message) as info:
        _compile(k)
    assert info.value.lineno == line_of(k, src)  # the error points at the line


# ---------------------------------------------------------------- the simulator's checks and profile
def test_field_out_of_bounds(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"global array 'h.count'"):
        k_hist[1, 32](np.array([3], np.int32), np.zeros(0, HIST))


@gk.kernel
def k_two_fields(h):
    if thread_idx.x == 0:
        h[0].count = 1
    if thread_idx.x == 1:
        h[0]["sum"] = 2.0  # another field of the same record: no race


@gk.kernel
def k_same_field(h):
    h[0].count = thread_idx.x


def test_fields_of_one_record_are_distinct_memory(on_simulator):
    h = np.zeros(1, HIST)
    k_two_fields[1, 2](h)
    assert (h[0]["count"], h[0]["sum"]) == (1, 2.0)
    with pytest.raises(gk.DataRaceError, match=r"'h.count'\[0\]"):
        k_same_field[1, 2](h)


@gk.kernel
def k_read_sum(h, out: Array[float32]):
    h[0].count = 5
    out[0] = h[0].sum


def test_uninitialised_field_is_found_per_field(on_simulator):
    h = gk.empty(1, HIST)
    with pytest.raises(gk.UninitializedReadError, match=r"'h.sum'"):
        k_read_sum[1, 1](h, np.zeros(1, np.float32))


PROFILED = np.dtype([("x", "f4"), ("pad", "f4"), ("v", "f8"), ("w", "f8")], align=True)  # 24 bytes


@gk.kernel
def k_read_field(a, out: Array[float64], V: gk.Const[bool]):
    i = global_id(0)
    if V:
        out[i] = a[i].v
    else:
        out[i] = a[i].x


@pytest.mark.parametrize("field", ["x", "v"])
def test_profile_counts_the_bytes_and_sectors_a_field_moves(field):
    n = 64
    report = gk.profile(k_read_field[2, 32], np.zeros(n, PROFILED), np.zeros(n), field == "v")
    line = next(c for c in report.lines.values() if c.global_load_elems)
    size, offset = PROFILED.fields[field][0].itemsize, PROFILED.fields[field][1]
    assert line.global_load_elems == n
    assert line.global_load_bytes == n * size
    starts = np.arange(n) * PROFILED.itemsize + offset
    want = sum(len(np.unique(starts[w * 32 : w * 32 + 32] // 32)) for w in range(2))
    assert line.global_load_sectors == want > n // 8  # not what a plain array of the field's type moves


PAIR = np.dtype([("lo", "i4"), ("hi", "i4")])


@gk.kernel
def k_declared(a: Array[PAIR], out: Array[gk.int64]):
    i = global_id(0)
    if i < len(a["lo"]):
        out[i] = gk.int64(a[i].hi) * 65536 + a[i].lo + len(a["hi"]) * 0
    if i == 0:
        out[len(a)] = a["hi"].shape[0]


def test_declared_record_parameter_and_field_lengths(backend):
    a = np.zeros(20, PAIR)
    a["lo"], a["hi"] = np.arange(20), np.arange(20) * 3
    out = np.zeros(21, np.int64)
    k_declared[1, 32](a, out)
    np.testing.assert_array_equal(out[:20], a["hi"].astype(np.int64) * 65536 + a["lo"])
    assert out[20] == 20
    with pytest.raises(gk.LaunchError, match="must be an array of"):
        k_declared[1, 32](np.zeros(20, HIST), out)


ODD_NAMES = np.dtype([("my field", "f4"), ("int", "i4"), ("int_", "i4"), ("gk_pad0", "f4")])


@gk.kernel
def k_odd_names(a, out: Array[float32]):
    i = global_id(0)
    if i < len(a):
        out[i] = a[i]["my field"] + float32(a[i].int * 100 + a[i].int_) + a[i].gk_pad0 * 1000.0


def test_field_names_c_cannot_spell(backend):
    a = np.zeros(10, ODD_NAMES)
    rng = np.random.default_rng(4)
    for name in ODD_NAMES.names:
        a[name] = rng.integers(0, 9, 10)
    out = np.zeros(10, np.float32)
    k_odd_names[1, 32](a, out)
    want = a["my field"] + (a["int"] * 100 + a["int_"]).astype(np.float32) + a["gk_pad0"] * np.float32(1000)
    np.testing.assert_array_equal(out, want)


@needs_nvrtc
def test_the_compiler_proves_the_struct_has_numpys_layout():
    """The members and gaps add up to the itemsize, so the size assertion fails wherever C would pad:
    moving 4 bytes of one gap to another (the same sum) puts ``v`` at byte 4, C pads it to 8."""
    src = k_fields.source(np.zeros(1, SPREAD), np.zeros(1, SPREAD), np.zeros(1), backend="cuda")
    assert "static_assert(sizeof(gk_record0) == 48" in src, src
    LIB.ptx(src, "sm_80")  # as emitted: compiles
    moved = src.replace("gk_pad2[6]", "gk_pad2[2]").replace("gk_pad24[8]", "gk_pad24[12]")
    assert moved.count("[2];") and moved.count("[12];"), moved
    with pytest.raises(gk.CompileError, match="layout"):
        LIB.ptx(moved, "sm_80")
