"""Control flow against plain Python: if/elif/else, for/range, while, break,
continue, early return, nested loops, tuple assignment, augmented assignment."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import Array, Const, float32, global_id, int32, int64

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BLOCK = 32


def grid_for(n: int, block: int = BLOCK) -> int:
    return max(1, (n + block - 1) // block)


# ---------------------------------------------------------------- if / elif / else


@gk.kernel
def k_classify(x: Array[float32], out: Array[int32], n: int32):
    i = global_id(0)
    if i < n:
        v = x[i]
        if v < -10.0:
            c = 0
        elif v < 0.0:
            c = 1
        elif v == 0.0:
            c = 2
        elif v <= 10.0:
            if v > 5.0:
                c = 3
            else:
                c = 4
        else:
            c = 5
        out[i] = c


def py_classify(v: float) -> int:
    if v < -10.0:
        return 0
    elif v < 0.0:
        return 1
    elif v == 0.0:
        return 2
    elif v <= 10.0:
        return 3 if v > 5.0 else 4
    return 5


@SETTINGS
@given(
    xs=st.lists(
        st.sampled_from([-20.0, -10.0, -3.5, 0.0, 3.0, 5.0, 5.5, 10.0, 12.0]) | st.floats(-30, 30, width=32),
        min_size=1,
        max_size=70,
    )
)
def test_if_elif_else(backend, xs):
    x = np.array(xs, np.float32)
    out = np.full(x.size, -1, np.int32)
    k_classify[grid_for(x.size), BLOCK](x, out, x.size)
    np.testing.assert_array_equal(out, [py_classify(float(v)) for v in x])


# ---------------------------------------------------------------- for / range


@gk.kernel
def k_range3(start: Array[int32], stop: Array[int32], step: Array[int32], out: Array[int64, 2], n: int32):
    i = global_id(0)
    if i < n:
        total = int64(0)
        count = 0
        j = -999
        for j in range(start[i], stop[i], step[i]):
            total += int64(j) * (count + 1)  # int32 * int32 would overflow near the limits
            count += 1
        out[i, 0] = total
        out[i, 1] = count
        out[i, 2] = j


def py_range3(a, b, s):
    total, count, j = 0, 0, -999
    for j in range(a, b, s):
        total += j * (count + 1)
        count += 1
    return total, count, j


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(-40, 40), st.integers(-40, 40), st.integers(-7, 7).filter(bool)), min_size=1, max_size=70
    )
)
def test_for_runtime_start_stop_step(backend, triples):
    start, stop, step = (np.array(c, np.int32) for c in zip(*triples))
    out = np.zeros((len(triples), 3), np.int64)
    k_range3[grid_for(len(triples)), BLOCK](start, stop, step, out, len(triples))
    np.testing.assert_array_equal(out, [py_range3(*t) for t in triples])


def test_for_runtime_step_edges(backend):
    triples = [
        (0, 10, 1),
        (10, 0, -1),
        (0, 10, -1),
        (10, 0, 1),
        (5, 5, 1),
        (5, 5, -1),
        (0, 10, 3),
        (10, -10, -3),
        (-5, 6, 11),
        (-5, 6, 12),
        (3, 4, 100),
        (4, 3, -100),
    ]
    start, stop, step = (np.array(c, np.int32) for c in zip(*triples))
    out = np.zeros((len(triples), 3), np.int64)
    k_range3[1, 16](start, stop, step, out, len(triples))
    np.testing.assert_array_equal(out, [py_range3(*t) for t in triples])


def test_for_range_near_int32_limits(backend):
    # the loop must stop even when start + step would overflow int32
    imax, imin = 2**31 - 1, -(2**31)
    triples = [
        (imax - 5, imax, 2),
        (imax - 3, imax, 1),
        (imin + 5, imin, -2),
        (imin + 2, imin, -1),
        (imax - 10, imax, 7),
        (imin + 10, imin, -7),
    ]
    start, stop, step = (np.array(c, np.int32) for c in zip(*triples))
    out = np.zeros((len(triples), 3), np.int64)
    k_range3[1, 8](start, stop, step, out, len(triples))
    np.testing.assert_array_equal(out, [py_range3(*t) for t in triples])


@gk.kernel
def k_range_forms(n: Array[int32], out: Array[int32, 2], m: int32):
    i = global_id(0)
    if i < m:
        s0 = 0
        for j in range(n[i]):
            s0 += j
        s1 = 0
        for j in range(3, n[i]):
            s1 += j * j
        s2 = 0
        for j in range(n[i], -1, -1):
            s2 = s2 * 3 + j
        s3 = 0
        for j in range(20, 0, -3):
            if j < n[i]:
                s3 += j
        s4 = 0
        for j in range(-n[i], n[i], 4):
            s4 += j + 100
        out[i, 0] = s0
        out[i, 1] = s1
        out[i, 2] = s2
        out[i, 3] = s3
        out[i, 4] = s4


def py_range_forms(n):
    s2 = 0
    for j in range(n, -1, -1):
        s2 = (s2 * 3 + j) & 0xFFFFFFFF
    s2 = s2 - (1 << 32) if s2 >= 1 << 31 else s2
    return [
        sum(range(n)),
        sum(j * j for j in range(3, n)),
        s2,
        sum(j for j in range(20, 0, -3) if j < n),
        sum(j + 100 for j in range(-n, n, 4)),
    ]


def test_range_forms(backend):
    ns = np.array([0, 1, 2, 3, 4, 7, 13, 20, 25, -3], np.int32)
    out = np.zeros((ns.size, 5), np.int32)
    k_range_forms[1, 16](ns, out, ns.size)
    np.testing.assert_array_equal(out, [py_range_forms(int(v)) for v in ns])


@gk.kernel
def k_loop_var_after(n: Array[int32], out: Array[int32, 2], m: int32):
    i = global_id(0)
    if i < m:
        j = 77
        for j in range(n[i]):
            pass
        out[i, 0] = j
        k = 55
        for k in range(n[i], 0, -2):
            pass
        out[i, 1] = k
        c = 0
        for q in range(n[i]):
            c += 1
            q = q + 10  # does not change the iteration
            out[i, 4] = q
        out[i, 2] = c
        t = 0
        for r in range(5):
            r *= 100
            t += r
        out[i, 3] = t


def py_loop_var_after(n, prev4):
    j = 77
    for j in range(n):
        pass
    k = 55
    for k in range(n, 0, -2):
        pass
    c = 0
    last = prev4
    for q in range(n):
        c += 1
        q = q + 10
        last = q
    t = 0
    for r in range(5):
        r *= 100
        t += r
    return [j, k, c, t, last]


def test_loop_variable_after_loop_and_reassignment(backend):
    ns = np.array([0, 1, 2, 5, 6, 9, -4], np.int32)
    out = np.full((ns.size, 5), -1, np.int32)
    k_loop_var_after[1, 8](ns, out, ns.size)
    np.testing.assert_array_equal(out, [py_loop_var_after(int(v), -1) for v in ns])


@gk.kernel
def k_const_range(out: Array[int32, 2], START: Const[int], STOP: Const[int], STEP: Const[int]):
    i = global_id(0)
    s = 0
    c = 0
    j = -1
    for j in range(START, STOP, STEP):
        s += j * (i + 1)
        c += 1
    out[i, 0] = s
    out[i, 1] = c
    out[i, 2] = j


@pytest.mark.parametrize("start,stop,step", [(0, 10, 1), (10, 0, -1), (10, -7, -3), (2, 3, 5), (5, 0, 1), (-3, 9, 4)])
def test_const_range_bounds(backend, start, stop, step):
    out = np.zeros((8, 3), np.int32)
    k_const_range[1, 8](out, start, stop, step)
    r = list(range(start, stop, step))
    want = [[sum(r) * (i + 1), len(r), r[-1] if r else -1] for i in range(8)]
    np.testing.assert_array_equal(out, want)


@gk.kernel
def k_range_int64(lo, hi, out: Array[int64, 2]):
    i = global_id(0)
    s = lo - lo
    last = lo
    for j in range(lo + i, hi):
        s += j
        last = j
    out[i, 0] = s
    out[i, 1] = last


def test_range_over_int64_bounds(backend):
    lo, hi = 2**40, 2**40 + 6
    out = np.zeros((4, 2), np.int64)
    k_range_int64[1, 4](lo, hi, out)
    want = [[sum(range(lo + i, hi)), hi - 1] for i in range(4)]
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- while, break, continue


@gk.kernel
def k_collatz(x: Array[int64], steps: Array[int32], peak: Array[int64], n: int32):
    i = global_id(0)
    if i < n:
        v = x[i]
        c = 0
        p = v
        while v != 1:
            if v % 2 == 0:
                v //= 2
            else:
                v = 3 * v + 1
            p = max(p, v)
            c += 1
        steps[i] = c
        peak[i] = p


def py_collatz(v):
    c, p = 0, v
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        p = max(p, v)
        c += 1
    return c, p


@SETTINGS
@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=60))
def test_while_collatz(backend, xs):
    x = np.array(xs, np.int64)
    steps, peak = np.zeros(x.size, np.int32), np.zeros(x.size, np.int64)
    k_collatz[grid_for(x.size), BLOCK](x, steps, peak, x.size)
    want = [py_collatz(v) for v in xs]
    np.testing.assert_array_equal(steps, [w[0] for w in want])
    np.testing.assert_array_equal(peak, [w[1] for w in want])


@gk.kernel
def k_break_continue(x: Array[int32, 2], out: Array[int32, 2], rows: int32):
    i = global_id(0)
    if i < rows:
        cols = x.shape[1]
        # sum of positive entries before the first zero, skipping odd ones
        s = 0
        first_zero = -1
        for j in range(cols):
            v = x[i, j]
            if v == 0:
                first_zero = j
                break
            if v < 0 or v % 2 == 1:
                continue
            s += v
        out[i, 0] = s
        out[i, 1] = first_zero
        # while True with break and continue
        k = 0
        cnt = 0
        while True:
            if k >= cols:
                break
            k += 1
            if x[i, k - 1] > 5:
                continue
            cnt += 1
        out[i, 2] = cnt
        out[i, 3] = k


def py_break_continue(row):
    s, fz = 0, -1
    for j, v in enumerate(row):
        if v == 0:
            fz = j
            break
        if v < 0 or v % 2 == 1:
            continue
        s += v
    k = cnt = 0
    while True:
        if k >= len(row):
            break
        k += 1
        if row[k - 1] > 5:
            continue
        cnt += 1
    return [s, fz, cnt, k]


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_break_continue(backend, rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 10, size=(rows, cols)).astype(np.int32)
    out = np.zeros((rows, 4), np.int32)
    k_break_continue[grid_for(rows), BLOCK](x, out, rows)
    np.testing.assert_array_equal(out, [py_break_continue([int(v) for v in r]) for r in x])


@gk.kernel
def k_nested(x: Array[int32, 2], out: Array[int32, 2], target: int32):
    i = global_id(0)
    if i < x.shape[0]:
        # first (row, col) pair of the i-th shift whose sum hits target; break only the inner loop
        found = 0
        pairs = 0
        for a in range(x.shape[1]):
            for b in range(a + 1, x.shape[1]):
                if x[i, a] + x[i, b] == target:
                    found += 1
                    break
                if b - a > 4:
                    continue
                pairs += 1
        out[i, 0] = found
        out[i, 1] = pairs


def py_nested(row, target):
    found = pairs = 0
    for a in range(len(row)):
        for b in range(a + 1, len(row)):
            if row[a] + row[b] == target:
                found += 1
                break
            if b - a > 4:
                continue
            pairs += 1
    return [found, pairs]


@SETTINGS
@given(rows=st.integers(1, 30), cols=st.integers(1, 14), target=st.integers(-5, 15), seed=st.integers(0, 2**32 - 1))
def test_nested_loops_inner_break(backend, rows, cols, target, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-5, 10, size=(rows, cols)).astype(np.int32)
    out = np.zeros((rows, 2), np.int32)
    k_nested[grid_for(rows), BLOCK](x, out, target)
    np.testing.assert_array_equal(out, [py_nested([int(v) for v in r], target) for r in x])


# ---------------------------------------------------------------- early return


@gk.kernel
def k_early_return(x: Array[float32], out: Array[float32], n: int32):
    i = global_id(0)
    if i >= n:
        return
    out[i] = 1.0
    if x[i] < 0.0:
        return
    out[i] = 2.0
    for j in range(10):
        if j * 1.0 > x[i]:
            return
        out[i] = out[i] + 1.0
    out[i] = -5.0


def py_early_return(v):
    out = 1.0
    if v < 0:
        return out
    out = 2.0
    for j in range(10):
        if j > v:
            return out
        out += 1.0
    return -5.0


@SETTINGS
@given(st.lists(st.floats(-3, 12, width=32), min_size=1, max_size=80))
def test_early_bare_return(backend, xs):
    x = np.array(xs, np.float32)
    n = x.size
    out = np.full(n + 10, 99.0, np.float32)  # threads past n must not write
    k_early_return[grid_for(n + 10), BLOCK](x, out, n)
    want = np.array([py_early_return(float(v)) for v in x] + [99.0] * 10, np.float32)
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------- tuple assignment, augmented assignment


@gk.kernel
def k_tuples(a: Array[int32], b: Array[int32], out: Array[int64, 2], n: int32):
    i = global_id(0)
    if i < n:
        x = a[i]
        y = b[i]
        x, y = y, x
        out[i, 0] = x
        out[i, 1] = y
        # fibonacci with a tuple update
        f0 = int64(0)
        f1 = int64(1)
        for _ in range(a[i] % 50):
            f0, f1 = f1, f0 + f1
        out[i, 2] = f0
        # three-way rotation
        p, q, r = a[i], b[i], a[i] + b[i]
        p, q, r = q, r, p
        out[i, 3] = p * 10000 + q * 100 + r


def py_tuples(a, b):
    f0, f1 = 0, 1
    for _ in range(a % 50):
        f0, f1 = f1, f0 + f1
    return [b, a, f0, b * 10000 + (a + b) * 100 + a]


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=60))
def test_tuple_assignment_swap(backend, pairs):
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    out = np.zeros((a.size, 4), np.int64)
    k_tuples[grid_for(a.size), BLOCK](a, b, out, a.size)
    np.testing.assert_array_equal(out, [py_tuples(int(x), int(y)) for x, y in pairs])


@gk.kernel
def k_tuple_arrays(a: Array[float32], n: int32):
    # swap neighbouring array elements with one tuple assignment
    i = global_id(0)
    if 2 * i + 1 < n:
        a[2 * i], a[2 * i + 1] = a[2 * i + 1], a[2 * i]


def test_tuple_assignment_array_elements(backend):
    a = np.arange(11, dtype=np.float32)
    want = a.copy()
    want[0:10:2], want[1:10:2] = a[1:10:2], a[0:10:2]
    k_tuple_arrays[1, 8](a, 11)
    np.testing.assert_array_equal(a, want)


@gk.kernel
def k_augassign(a: Array[int32], b: Array[int32], out: Array[int32, 2], fo: Array[float32, 2], n: int32):
    i = global_id(0)
    if i < n:
        x = a[i]
        x += b[i]
        out[i, 0] = x
        x -= 3 * b[i]
        out[i, 1] = x
        x *= b[i]
        out[i, 2] = x
        x //= b[i]
        out[i, 3] = x
        x %= 7
        out[i, 4] = x
        x <<= 3
        out[i, 5] = x
        x >>= 1
        out[i, 6] = x
        x |= 0x30
        out[i, 7] = x
        x &= 0x3C
        out[i, 8] = x
        x ^= a[i]
        out[i, 9] = x
        x **= 2
        out[i, 10] = x
        out[i, 11] = 5
        out[i, 11] += a[i]
        out[i, 11] *= 3
        f = float32(a[i])
        f /= 4.0
        fo[i, 0] = f
        f -= 0.5
        fo[i, 1] = f
        fo[i, 2] = 1.0
        fo[i, 2] += f
        fo[i, 2] *= 2.0


def py_augassign(a, b):
    def w(v):
        return int(np.int64(v).astype(np.int32))

    x = w(a + b)
    o = [x]
    x = w(x - 3 * b)
    o.append(x)  # noqa: E702
    x = w(x * b)
    o.append(x)  # noqa: E702
    x = x // b if b != 0 else 0
    o.append(x)  # noqa: E702
    x %= 7
    o.append(x)  # noqa: E702
    x = w(x << 3)
    o.append(x)  # noqa: E702
    x >>= 1
    o.append(x)  # noqa: E702
    x |= 0x30
    o.append(x)  # noqa: E702
    x &= 0x3C
    o.append(x)  # noqa: E702
    x ^= a
    o.append(x)  # noqa: E702
    x = w(x**2)
    o.append(x)  # noqa: E702
    o.append((5 + a) * 3)
    return o


@SETTINGS
@given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-50, 50)), min_size=1, max_size=60))
def test_augmented_assignment(backend, pairs):
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    out = np.zeros((a.size, 12), np.int32)
    fo = np.zeros((a.size, 3), np.float32)
    k_augassign[grid_for(a.size), BLOCK](a, b, out, fo, a.size)
    np.testing.assert_array_equal(out, [py_augassign(int(x), int(y)) for x, y in pairs])
    f = a.astype(np.float32) / np.float32(4.0)
    np.testing.assert_array_equal(fo[:, 0], f)
    np.testing.assert_array_equal(fo[:, 1], f - np.float32(0.5))
    np.testing.assert_array_equal(fo[:, 2], (np.float32(1.0) + (f - np.float32(0.5))) * np.float32(2.0))
