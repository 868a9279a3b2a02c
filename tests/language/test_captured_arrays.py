"""Device arrays of a kernel's module (issue 32): a kernel that names one reads and writes it in
place, as Numba captures a global device array's pointer: later changes to its contents are seen,
a device function must be given it, and the launch, the sanitizer and the profiler pass it alike."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, int32

TABLE = None  # set per test: the module's device array the kernels name
COUNTS = None


@gk.kernel
def scale_by_table(x: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = x[i] * TABLE[i % TABLE.shape[0]]
        gk.atomic_add(COUNTS, 0, 1)


@gk.func
def looks_up(i):
    return TABLE[i]


@gk.kernel
def through_a_function(out: Array[float32]):
    out[0] = looks_up(0)


def test_a_kernel_reads_and_writes_its_modules_device_arrays_in_place(backend):
    global TABLE, COUNTS
    TABLE = gk.to_device(np.array([1.0, 2.0, 3.0], np.float32))
    COUNTS = gk.zeros(1, np.int32)
    x = np.arange(7, dtype=np.float32)
    out = np.zeros(7, np.float32)
    scale_by_table[1, 8](x, out, 7)
    np.testing.assert_array_equal(out, x * np.array([1, 2, 3, 1, 2, 3, 1], np.float32))
    TABLE.set(np.array([10.0, 20.0, 30.0], np.float32))  # the pointer is captured, not the data
    scale_by_table[1, 8](x, out, 7)
    np.testing.assert_array_equal(out, x * np.array([10, 20, 30, 10, 20, 30, 10], np.float32))
    assert COUNTS.get()[0] == 14  # the kernel's writes land in the module's array
    src = scale_by_table.source(Array[float32], Array[float32], int32)
    assert "TABLE_captured" in src and "COUNTS_captured" in src  # parameters after the kernel's own


def test_the_sanitizer_and_the_profiler_pass_them_too(on_simulator):
    global TABLE, COUNTS
    TABLE = gk.to_device(np.array([1.0, 2.0], np.float32))
    COUNTS = gk.zeros(1, np.int32)
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    assert gk.sanitize(scale_by_table[1, 4], x, out, 4) == []
    report = gk.profile(scale_by_table[1, 4], x, out, 4)
    assert report.total.global_load_elems == 8  # x[i] and TABLE[...] for 4 threads


def test_a_device_function_must_be_given_the_array(on_simulator):
    global TABLE
    TABLE = gk.to_device(np.array([1.0], np.float32))
    with pytest.raises(gk.KernelTypeError, match="reads the device array 'TABLE' of its module") as e:
        through_a_function[1, 1](np.zeros(1, np.float32))
    assert "pass TABLE to it as an argument" in str(e.value)


def test_a_name_rebound_to_another_dtype_is_refused_at_launch(on_simulator):
    global TABLE, COUNTS
    TABLE = gk.to_device(np.array([1.0, 2.0], np.float32))
    COUNTS = gk.zeros(1, np.int32)
    x, out = np.ones(2, np.float32), np.zeros(2, np.float32)
    scale_by_table[1, 2](x, out, 2)
    TABLE = gk.to_device(np.array([1.0, 2.0]))  # float64 now
    with pytest.raises(gk.LaunchError, match="compiled as Array\\[float32, 1\\]; TABLE now holds DeviceArray"):
        scale_by_table[1, 2](x, out, 2)
    TABLE = 3.0
    with pytest.raises(gk.LaunchError, match="TABLE now holds float"):
        scale_by_table[1, 2](x, out, 2)
