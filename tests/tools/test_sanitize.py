"""The simulator's sanitizer checks as mechanisms: what turns them off, how global arrays from
``empty()`` keep their written flags across launches, which arithmetic the overflow check
leaves alone, and what ``gk.sanitize`` accepts.  The corpus of buggy and correct kernels is in
``test_sanitizer_corpus.py``."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, barrier, float32, global_id, int32, int64, kernel, shared, thread_idx, uint32
from gpukern.sim.interpreter import SimBackend

pytestmark = pytest.mark.usefixtures("on_simulator")


@kernel
def reads_half_written(out: Array[float32]):
    s = shared(float32, 64)
    t = thread_idx.x
    if t < 32:
        s[t] = float32(t)
    barrier()
    out[t] = s[63 - t]  # threads 0-31 read what nobody wrote


@kernel
def fill(a: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        a[i] = float32(i)


@kernel
def copy(a: Array[float32], b: Array[float32]):
    i = global_id(0)
    b[i] = a[i]


def test_uninitialised_shared_read_is_found_and_checks_off_let_it_pass(monkeypatch):
    out = np.zeros(64, np.float32)
    with pytest.raises(gk.UninitializedReadError, match=r"shared array 's'\[63\]") as info:
        reads_half_written[1, 64](out)
    assert info.value.kernel == "reads_half_written" and info.value.threads == (((0, 0, 0), (0, 0, 0)),)
    reads_half_written[1, 64](out, check=False)  # the simulator's zeros, as before
    monkeypatch.setenv("GPUKERN_SIM_CHECK", "0")
    assert SimBackend().check is False  # the variable is read when the backend is made
    monkeypatch.setattr(gk.get_backend("sim"), "check", False)
    reads_half_written[1, 64](out)


def test_empty_arrays_keep_their_written_flags_across_launches():
    a = gk.empty(64, np.float32)
    b = gk.empty(64, np.float32)
    fill[1, 64](a, 32)  # the first half only
    with pytest.raises(gk.UninitializedReadError, match=r"'a'\[32\].*no launch has written"):
        copy[1, 64](a, b)
    fill[1, 64](a, 64)
    copy[1, 64](a, b)  # now every element is written
    np.testing.assert_array_equal(b.get(), np.arange(64, dtype=np.float32))
    copy[1, 4](gk.zeros(4, np.float32), gk.empty(4, np.float32))  # zeros() and to_device(): written arrays
    copy[1, 4](gk.to_device(np.ones(4, np.float32)), gk.empty(4, np.float32))


def test_an_unchecked_launch_that_writes_an_empty_array_ends_its_tracking():
    a, b = gk.empty(64, np.float32), gk.empty(64, np.float32)
    fill[1, 64](a, 64, check=False)  # writes unseen: the flags cannot say what it wrote
    copy[1, 64](a, b)  # so no false alarm after it


@kernel
def indexed(a: Array[float32], out: Array[float32], row: int32, n: int32, col: int32):
    out[0] = a[row * n + col]


@kernel
def squared_index(a: Array[float32], out: Array[float32], x: uint32):
    out[0] = a[x * x]


def test_an_overflow_report_gives_the_value_even_where_64_bits_would_wrap():
    with pytest.raises(gk.IndexOverflowError, match=r"18,446,744,065,119,617,025.*wraps to 1\)"):
        squared_index[1, 1](np.zeros(4, np.float32), np.zeros(1, np.float32), 2**32 - 1)


@kernel
def arithmetic_not_for_indices(a: Array[int32], out: Array[int32], x: int32, seed: uint32, n: int32):
    t = thread_idx.x
    h = (seed + uint32(t)) * uint32(2654435761)  # a hash that wraps on purpose, reduced before it indexes
    wide = int64(x) * 1000  # 64-bit arithmetic does not wrap here
    out[t] = x * 1000 + a[int32(h % uint32(n))] + int32(wide % 7)  # x * 1000 wraps: a value, not an index


def test_overflowing_index_arithmetic_is_found_and_other_arithmetic_is_not():
    a = np.zeros(16, np.float32)
    with pytest.raises(gk.IndexOverflowError, match=r"int32 arithmetic .* 4,294,967,296") as info:
        indexed[1, 1](a, np.zeros(1, np.float32), 65536, 65536, 3)  # 2^32 + 3 wraps to 3: in bounds
    assert "indexed" in str(info.value) and info.value.loc is not None
    indexed[1, 1](a, np.zeros(1, np.float32), 1, 4, 3)
    out = np.zeros(8, np.int32)
    assert gk.sanitize(arithmetic_not_for_indices[1, 8], np.arange(8, dtype=np.int32), out, 2**30, 123456789, 8) == []
    t = np.arange(8, dtype=np.uint64)
    h = ((123456789 + t) * 2654435761) % 2**32 % 8
    expected = np.int64(2**30) * 1000 % 2**32 - 2**32 + h.astype(np.int64) + 2**30 * 1000 % 7
    np.testing.assert_array_equal(out, expected.astype(np.int32))


def test_sanitize_and_profile_take_a_configured_launch():
    for tool in (gk.sanitize, gk.profile):
        with pytest.raises(gk.LaunchError, match=r"kernel\[grid, block\].*the kernel copy itself"):
            tool(copy, np.zeros(4, np.float32), np.zeros(4, np.float32))
        with pytest.raises(gk.LaunchError, match="not <function"):
            tool(lambda: None)


@kernel
def two_bugs(a: Array[float32], out: Array[float32], b: Array[float32]):
    t = thread_idx.x
    out[0] = a[t]  # every thread stores one element: a race
    b[t] = a[t + 1]  # the last thread reads past the end


def test_sanitize_returns_every_fault_once_per_kind_and_line_and_goes_on():
    a, out, b = np.arange(32, dtype=np.float32), np.zeros(1, np.float32), np.zeros(32, np.float32)
    faults = gk.sanitize(two_bugs[1, 32], a, out, b)
    assert [type(f) for f in faults] == [gk.DataRaceError, gk.OutOfBoundsError]
    assert faults[0].threads[0][1] != faults[0].threads[1][1]  # the two threads of the race
    np.testing.assert_array_equal(b[:31], a[1:])  # the run went on past both faults


@gk.kernel
def _quotients(a: gk.Array[gk.int32], b: gk.Array[gk.int32], q: gk.Array[gk.int32], r: gk.Array[gk.int32]):
    i = gk.global_id(0)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]  # DIVIDE
        r[i] = a[i] % b[i]


def test_integer_division_by_zero_is_reported_by_sanitize_and_zero_otherwise(on_simulator):
    """issue 33: ``x // 0`` gives 0 silently, as documented (NumPy's value); under gk.sanitize it is a
    finding with its line and threads, as NumPy at least warns."""
    a, b = np.array([7, 8, 9, 10], np.int32), np.array([2, 0, 3, 0], np.int32)
    q, r = np.zeros(4, np.int32), np.zeros(4, np.int32)
    _quotients[1, 4](a, b, q, r)
    assert q.tolist() == [3, 0, 3, 0] and r.tolist() == [1, 0, 0, 0]
    faults = gk.sanitize(_quotients[1, 4], a, b, q, r)
    assert [type(f) for f in faults] == [gk.ZeroDivisionFault, gk.ZeroDivisionFault]  # // and %: two lines
    assert "# DIVIDE" in faults[0].loc.source_line() and "thread (1, 0, 0)" in str(faults[0])
    assert "1 other thread(s)" in str(faults[0])
    assert gk.sanitize(_quotients[1, 4], a, np.array([1, 2, 3, 4], np.int32), q, r) == []
