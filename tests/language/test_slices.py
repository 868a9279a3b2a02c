"""Array slices as views in kernels (``gpukern/frontend/views.py``): ``v = a[1:3]``, ``a[i:]``, ``a[::2]``,
``a[i, :]``, on global, shared (static and dynamic), local arrays and ``@func`` parameters, against
NumPy's slicing on every backend; the simulator's checks through views; the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, Const, atomic_add, atomic_cas, barrier, float32, global_id, int32, int64, local, shared
from gpukern import thread_idx as tid

# ---------------------------------------------------------------- 1-D global slices, Python's clamping


@gk.kernel
def k_slice(a: Array[int32], out: Array[int32], n_out: Array[int64], lo: int64, hi: int64, STEP: Const[int]):
    v = a[lo:hi:STEP]
    i = global_id(0)
    if i < len(v):
        out[i] = v[i]
    if i == 0:
        n_out[0] = len(v)
        n_out[1] = v.size
        n_out[2] = v.shape[0]


CASES = [
    (2, 7, 1),
    (0, 10, 1),
    (-3, 10, 1),  # from the end
    (-30, 4, 1),  # clamped below
    (5, 100, 1),  # clamped above
    (7, 2, 1),  # empty
    (1, 9, 2),
    (1, 10, 3),
    (8, 1, -1),
    (9, -11, -2),  # down to the start
    (-1, -4, -1),
    (100, -100, -3),
]


@pytest.mark.parametrize("lo, hi, step", CASES)
def test_global_slice_like_numpy(backend, lo, hi, step):
    a = np.arange(10, dtype=np.int32) * 3 + 1
    out, n = np.full(10, -1, np.int32), np.zeros(3, np.int64)
    k_slice[1, 16](a, out, n, lo, hi, step)
    want = a[lo:hi:step]
    assert list(n) == [len(want)] * 3
    np.testing.assert_array_equal(out[: len(want)], want)


@gk.kernel
def k_open_ends(a: Array[float32], out: Array[float32], k: int32):
    head = a[:k]
    tail = a[k:]
    every = a[::-1]
    i = global_id(0)
    if i < len(head):
        out[i] = head[i]
    if i < len(tail):
        out[len(a) + i] = tail[i] * 2
    if i < len(every):
        out[2 * len(a) + i] = every[i]


def test_open_ended_slices(backend):
    a = np.arange(8, dtype=np.float32) + 0.5
    out = np.zeros(24, np.float32)
    k_open_ends[1, 8](a, out, 3)
    np.testing.assert_array_equal(out[:3], a[:3])
    np.testing.assert_array_equal(out[8:13], a[3:] * 2)
    np.testing.assert_array_equal(out[16:], a[::-1])


@gk.kernel
def k_bound_fixed(a: Array[int32], out: Array[int32]):
    i = global_id(0)
    j = i
    v = a[j:]
    j += 100  # the view keeps the start it was made with, as in Python
    out[i] = v[0] + len(v)


def test_view_keeps_its_bounds(backend):
    a = np.arange(6, dtype=np.int32) * 10
    out = np.zeros(6, np.int32)
    k_bound_fixed[1, 6](a, out)
    np.testing.assert_array_equal(out, a + (6 - np.arange(6)))


# ---------------------------------------------------------------- writes, views of views, atomics


@gk.kernel
def k_write_through(a: Array[int32]):
    i = global_id(0)
    v = a[2:10]
    w = v[1::2]  # a view of a view: a[3], a[5], a[7], a[9]
    if i < len(w):
        w[i] = -i
    if i == 0:
        v[0] += 100
        a[0] = len(w)


def test_writes_through_views_and_views_of_views(backend):
    a = np.arange(12, dtype=np.int32)
    k_write_through[1, 8](a)
    want = np.arange(12, dtype=np.int32)
    want[3:10:2] = -np.arange(4)
    want[2] += 100
    want[0] = 4
    np.testing.assert_array_equal(a, want)


@gk.kernel
def k_cas_tail(res: Array[int32], old: Array[int32], ary: Array[int32], fill: int32):
    gid = global_id(0)
    if gid < res.size:
        old[gid] = atomic_cas(res[gid:], 0, fill, ary[gid])
        atomic_add(res[gid:], 0, 0)


def test_atomics_through_a_view(backend):
    res = np.array([5, -1, 5, 5, -1, 7], np.int32)
    ary = np.arange(6, dtype=np.int32) + 10
    old = np.zeros_like(res)
    k_cas_tail[1, 8](res, old, ary, 5)
    np.testing.assert_array_equal(old, [5, -1, 5, 5, -1, 7])
    np.testing.assert_array_equal(res, np.where(old == 5, ary, old))


@gk.kernel
def k_fill(a: Array[float32, 2], x: float32, lo: int32):
    r = local(int32, 4)
    if global_id(0) == 0:
        a[lo:, 1:3] = x  # every element of the view
        a[0, ::2] = 7  # a row's every other element
        r[:] = 2
        a[0, 1] = r[3] + len(r[1:])


def test_assigning_a_number_to_a_slice(backend):
    a = np.zeros((4, 5), np.float32)
    k_fill[1, 2](a, 1.5, 2)
    want = np.zeros((4, 5), np.float32)
    want[2:, 1:3] = 1.5
    want[0, ::2] = 7
    want[0, 1] = 2 + 3
    np.testing.assert_array_equal(a, want)


# ---------------------------------------------------------------- shared, dynamic shared and local arrays


@gk.kernel
def k_shared_views(out: Array[float32]):
    s = shared(float32, 16)
    t = tid.x
    s[t] = t
    barrier()
    mid = s[4:12]
    evens = mid[::2]  # s[4], s[6], s[8], s[10]
    out[t] = 0.0
    if t < len(evens):
        out[t] = evens[t] + len(mid) * 100


@gk.kernel
def k_dynamic_views(out: Array[int32]):
    d = shared(int32, 0)
    t = tid.x
    d[t] = t * 10
    barrier()
    half = d[len(d) // 2 :]
    out[t] = half[t % len(half)] + len(half) * 1000


@gk.kernel
def k_local_views(out: Array[int32]):
    r = local(int32, 8)
    for k in range(8):
        r[k] = k + tid.x
    w = r[2:6]
    w[0] = -1
    acc = 0
    for k in range(len(w)):
        acc += w[k]
    out[tid.x] = acc


def test_shared_views(backend):
    out = np.zeros(16, np.float32)
    k_shared_views[1, 16](out)
    want = np.zeros(16, np.float32)
    want[:4] = np.arange(16, dtype=np.float32)[4:12:2] + 800
    np.testing.assert_array_equal(out, want)


def test_dynamic_shared_views(backend):
    out = np.zeros(8, np.int32)
    k_dynamic_views[1, 8, 8 * 4](out)
    half = np.arange(8)[4:] * 10
    np.testing.assert_array_equal(out, half[np.arange(8) % 4] + 4000)


def test_local_views(backend):
    out = np.zeros(4, np.int32)
    k_local_views[1, 4](out)
    t = np.arange(4)
    np.testing.assert_array_equal(out, -1 + (3 + t) + (4 + t) + (5 + t))


# ---------------------------------------------------------------- rows and blocks of 2-D arrays


@gk.kernel
def k_rows(a: Array[float32, 2], out: Array[float32, 2], sizes: Array[int64], b: Array[float32, 2]):
    i = global_id(0)
    if i < a.shape[0]:
        row = a[i, :]
        same = a[i]  # a partly indexed array bound to a name: the row, as in NumPy
        o = out[i]
        for j in range(len(row)):
            o[j] = row[j] + same[j]
    if i == 0:
        block = b[1:3, 2:]
        col = b[:, 1]
        sizes[0] = block.shape[0]
        sizes[1] = block.shape[1]
        sizes[2] = len(col)
        sizes[3] = block.size
        block[1, 0] = -5.0  # b[2, 2]
        col[0] = -7.0  # b[0, 1]


def test_rows_columns_and_blocks(backend):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    out, sizes, b = np.zeros_like(a), np.zeros(4, np.int64), np.zeros_like(a)
    k_rows[1, 4](a, out, sizes, b)
    np.testing.assert_array_equal(out, a * 2)
    assert list(sizes) == [2, 3, 4, 6]
    want = np.zeros_like(a)
    want[2, 2], want[0, 1] = -5, -7
    np.testing.assert_array_equal(b, want)


@gk.kernel
def k_shared_2d_rows(out: Array[int32, 2]):
    s = shared(int32, (4, 8))
    t = tid.x
    for j in range(8):
        s[t, j] = t * 8 + j
    barrier()
    row = s[3 - t]
    part = row[1:7:3]  # columns 1, 4
    out[t, 0] = part[0]
    out[t, 1] = part[1]
    out[t, 2] = len(part)


def test_shared_2d_rows(backend):
    out = np.zeros((4, 3), np.int32)
    k_shared_2d_rows[1, 4](out)
    s = np.arange(32).reshape(4, 8)
    want = np.stack([s[3 - np.arange(4), 1], s[3 - np.arange(4), 4], np.full(4, 2)], axis=1)
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- views passed to @func, arrays bound to names


@gk.func
def total(v):
    acc = 0.0
    for k in range(len(v)):
        acc += v[k]
    return acc


@gk.func
def scale(v, f):
    for k in range(len(v)):
        v[k] *= f


@gk.kernel
def k_func_views(a: Array[float32], out: Array[float32], b: Array[float32]):
    s = shared(float32, 8)
    i = global_id(0)
    s[tid.x] = a[i]
    barrier()
    if i < len(a) - 2:
        out[i] = total(a[i : i + 3]) + total(s[2:4]) * 100
    if i == 0:
        scale(b[::2], 2.0)


def test_views_passed_to_funcs(backend):
    a = np.arange(8, dtype=np.float32)
    out, b = np.zeros(8, np.float32), a + 1
    k_func_views[1, 8](a, out, b)
    want = np.zeros(8, np.float32)
    want[:6] = a[:-2] + a[1:-1] + a[2:] + (a[2] + a[3]) * 100
    np.testing.assert_array_equal(out, want)
    doubled = a + 1
    doubled[::2] *= 2
    np.testing.assert_array_equal(b, doubled)


@gk.kernel
def k_alias(buf_0: Array[float32], buf_1: Array[float32]):
    i = global_id(0)
    data = buf_0
    nxt = buf_1
    nxt[i] = data[i] + 1
    data, nxt = nxt, data  # rebinding at the same level: a compile-time swap
    nxt[i] = data[i] * 10


def test_arrays_bound_to_names(backend):
    a, b = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    k_alias[1, 4](a, b)
    np.testing.assert_array_equal(b, np.arange(4) + 1)
    np.testing.assert_array_equal(a, (np.arange(4) + 1) * 10)


# ---------------------------------------------------------------- the simulator's checks through views


@gk.kernel
def k_view_race(out: Array[int32]):
    s = shared(int32, 8)
    left = s[0:8]
    right = s[4:]
    t = tid.x
    left[t] = t  # thread t writes s[t]
    out[t] = right[t % 4]  # thread 0 reads s[4], which thread 4 wrote: no barrier between


@gk.kernel
def k_view_oob(out: Array[int32], k: int32):
    s = shared(int32, 16)
    part = s[2:6]
    s[tid.x] = 1
    barrier()
    out[tid.x] = part[k]


@gk.kernel
def k_global_view_oob(a: Array[int32], lo: int32):
    v = a[lo:]
    v[tid.x] = 1


def test_race_through_two_views_is_reported(on_simulator):
    with pytest.raises(gk.DataRaceError, match="shared array 's'"):
        k_view_race[1, 8](np.zeros(8, np.int32))


def test_out_of_bounds_through_a_view(on_simulator):
    out = np.zeros(16, np.int32)
    k_view_oob[1, 16](out, 3)  # within the view
    assert (out == 1).all()
    with pytest.raises(gk.OutOfBoundsError) as e:
        k_view_oob[1, 16](out, 4)  # s[6] exists, but the view has 4 elements
    msg = str(e.value)
    assert "index (4,)" in msg and "'part' (s[2:6]) of shape (4,)" in msg and "shared array 's' of shape (16,)" in msg
    assert isinstance(e.value, gk.KernelFault)
    with pytest.raises(gk.OutOfBoundsError, match="'v' \\(a\\[lo:\\]\\) of shape \\(3,\\)"):
        k_global_view_oob[1, 4](np.zeros(8, np.int32), 5)
    faults = gk.sanitize(k_global_view_oob[1, 8], np.zeros(8, np.int32), 6)
    assert len(faults) == 1 and "of shape (2,)" in str(faults[0])


def test_view_accesses_are_the_base_arrays_in_the_c(backend):
    src = k_shared_views.source(np.zeros(16, np.float32), backend="opencl")
    assert "__local float s[16];" in src and "s[" in src
    src = k_func_views.source(*[np.zeros(8, np.float32)] * 3, backend="cuda")
    assert "total(a, " in src  # a view is passed as its base array, start and length


# ---------------------------------------------------------------- refusals


def _compile(fn, *args):
    return gk.kernel(fn).source(*args, backend="cuda")


A = np.zeros(8, np.float32)


def test_step_zero_is_refused():
    def k(a):
        v = a[::0]
        v[0] = 1.0

    with pytest.raises(gk.KernelTypeError, match="step must not be zero"):
        _compile(k, A)


def test_run_time_step_is_refused():
    def k(a, s: int32):
        v = a[::s]
        v[0] = 1.0

    with pytest.raises(gk.KernelTypeError, match="step must be a compile-time integer"):
        _compile(k, A, 2)


def test_augmented_slice_assignment_and_array_values_are_refused():
    def k(a):
        a[1:3] += 1.0

    with pytest.raises(gk.KernelSyntaxError, match=r"augmented assignment to a slice \(a\[1:3\] op= \.\.\.\)") as e:
        _compile(k, A)
    assert "for k in range(len(v))" in str(e.value)

    def k2(a, b):
        a[1:3] = b[0:2]

    with pytest.raises(gk.KernelTypeError, match=r"stores one number into every element of the slice") as e:
        _compile(k2, A, A)
    assert "v[k] = w[k]" in str(e.value)


def test_float_bound_is_refused():
    def k(a):
        v = a[1.5:]
        v[0] = 1.0

    with pytest.raises(gk.KernelTypeError, match="slice bound must be an integer"):
        _compile(k, A)


def test_conditional_binding_used_after_is_refused():
    def k(a, b, c: int32):
        if c > 0:
            data = a
        else:
            data = b
        data[0] = 1.0

    with pytest.raises(gk.KernelTypeError, match="'data' names an array or fragment bound inside an if or loop body"):
        _compile(k, A, A, 1)


def test_rebinding_in_a_loop_is_refused():
    def k(a, b, n: int32):
        data = a
        buf = b
        for _ in range(n):
            buf[0] = data[0]
            data, buf = buf, data

    with pytest.raises(gk.KernelTypeError, match="'data' names an array bound outside this if or loop body") as e:
        _compile(k, A, A, 1)
    assert "step(buf_0, buf_1)" in str(e.value)


def test_binding_inside_a_branch_works_there():
    def k(a, c: int32):
        if c > 0:
            v = a[1:]
            v[0] = 1.0

    _compile(k, A, 1)


def test_too_many_slices_and_strided_vload_are_refused():
    def k(a):
        v = a[1:, 2:]
        v[0] = 1.0

    with pytest.raises(gk.KernelTypeError, match="has 1 dimension\\(s\\) but 2"):
        _compile(k, A)

    def k2(a):
        v = a[::2]
        x, y = gk.vload(v, 0, 2)
        a[0] = x + y

    with pytest.raises(gk.KernelTypeError, match="vload\\(\\) through the view 'v' \\(a\\[::2\\]\\)"):
        _compile(k2, A)


def test_static_index_outside_a_static_view_is_refused():
    def k(a):
        s = shared(float32, 8)
        v = s[2:4]
        v[2] = 1.0
        a[0] = s[0]

    with pytest.raises(gk.KernelTypeError, match="index 2 is out of bounds for dimension 0 of size 2"):
        _compile(k, A)


def test_record_slices_are_refused():
    rec = np.zeros(4, np.dtype([("x", "f4"), ("n", "i4")], align=True))

    def k(r):
        v = r[1:]
        v[0].x = 1.0

    with pytest.raises(gk.KernelTypeError, match="slices of the record array 'r' are not supported"):
        _compile(k, rec)


@gk.kernel
def k_copy_from(a: Array[float32], out: Array[float32], lo: int32):
    v = a[lo:]
    i = global_id(0)
    out[i] = v[i]


def test_profiler_counts_the_base_arrays_addresses():
    """Reading 32 floats from a[4:] touches 5 sectors of 32 bytes, as reading a[4:36] does."""
    a, out = np.arange(64, dtype=np.float32), np.zeros(32, np.float32)
    aligned = gk.profile(k_copy_from[1, 32], a, out, 0).total
    shifted = gk.profile(k_copy_from[1, 32], a, out, 4).total
    assert (aligned.global_load_elems, aligned.global_load_sectors) == (32, 4)
    assert (shifted.global_load_elems, shifted.global_load_sectors) == (32, 5)
    np.testing.assert_array_equal(out, a[4:36])


@gk.func
def first_of(v):
    return v[0]


@gk.func
def second(v):
    return first_of(v[1:])  # a view of a view parameter, passed on


@gk.kernel
def k_views_in_a_loop(a: Array[int32], out: Array[int32]):
    i = global_id(0)
    acc = 0
    for k in range(3):
        w = a[i + k :]  # made again each iteration
        acc += second(w) * 10**k
    out[i] = acc


def test_views_made_in_loops_and_passed_on(backend):
    a = np.arange(10, dtype=np.int32)
    out = np.zeros(4, np.int32)
    k_views_in_a_loop[1, 4](a, out)
    i = np.arange(4)
    np.testing.assert_array_equal(out, (i + 1) + (i + 2) * 10 + (i + 3) * 100)
