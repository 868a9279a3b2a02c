"""Constant tables: a NumPy array of the kernel's module read as ``TABLE[i]`` (issue "Run the kernels
people already wrote"), as Numba-CUDA and CuPy kernels do with module-level lookup tables."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, func, global_id, int32, kernel

WEIGHTS = np.array([1.5, -2.0, np.inf, -np.inf, np.nan, 0.1, 2.0**-140, -0.0], np.float32)
GRID = np.arange(12, dtype=np.int32).reshape(3, 4) * 7 - 20
HUGE = np.zeros(16 * 1024 + 1, np.float32)  # one element past 64 KiB
TIMES = np.zeros(4, "datetime64[s]")


@func
def weight(t: Array[float32], i: int32) -> float32:
    return t[i]


@kernel
def read_tables(out: Array[float32], cells: Array[int32]):
    i = global_id(0)
    if i < len(WEIGHTS):
        out[i] = WEIGHTS[i] * 2.0 + weight(WEIGHTS, i)  # directly and through a function
    if i < GRID.size:
        cells[i] = GRID[i // GRID.shape[1], i % GRID.shape[1]]


def test_a_module_array_is_read_as_a_constant_table(backend):
    out, cells = np.zeros(len(WEIGHTS), np.float32), np.zeros(GRID.size, np.int32)
    read_tables[1, 16](out, cells)
    np.testing.assert_array_equal(out, WEIGHTS * np.float32(3))
    np.testing.assert_array_equal(cells, GRID.reshape(-1))


def test_the_table_is_compiled_into_the_kernel_as_constant_memory():
    types = (Array[float32], Array[int32])
    cuda, opencl = read_tables.source(*types, backend="cuda"), read_tables.source(*types, backend="opencl")
    assert "__constant__ float WEIGHTS[8] = {" in cuda and "__constant__ int GRID[3][4] = {" in cuda
    assert "__constant float WEIGHTS[8] = {" in opencl and "__constant float t[8]" in opencl  # the function's
    assert "__builtin_bit_cast(float, 0x7fc00000u)" in cuda and "1.5f" in cuda


@kernel
def read_past_the_end(out: Array[float32], i: int32):
    out[0] = WEIGHTS[i]


def test_a_read_outside_the_table_is_a_fault_on_the_simulator():
    with pytest.raises(gk.OutOfBoundsError, match="constant array 'WEIGHTS'"):
        read_past_the_end[1, 1](np.zeros(1, np.float32), len(WEIGHTS), backend="sim")


@kernel
def write_table(out: Array[float32]):
    WEIGHTS[0] = 1.0


@kernel
def atomic_on_table(out: Array[float32]):
    gk.atomic_add(WEIGHTS, 0, 1.0)


@kernel
def huge_table(out: Array[float32]):
    out[0] = HUGE[0]


@kernel
def time_table(out: Array[float32]):
    out[0] = TIMES[0]


@pytest.mark.parametrize(
    "k, match",
    [
        (write_table, "'WEIGHTS' is a constant table .* cannot write it"),
        (atomic_on_table, "'WEIGHTS' is a constant table .* cannot write it"),
        (huge_table, "exceed the 65,536 bytes of constant memory"),
        (time_table, "unsupported element type .* for the constant table 'TIMES'"),
    ],
)
def test_tables_that_cannot_be_are_refused_at_their_line(k, match):
    with pytest.raises(gk.KernelTypeError, match=match) as e:
        k.source(Array[float32])
    assert e.value.loc is not None and e.value.loc.lineno > 0


LATER = np.array([1.0, 2.0], np.float32)


@kernel
def read_later(out: Array[float32]):
    out[global_id(0)] = LATER[global_id(0)]


def test_the_kernel_keeps_the_values_it_was_compiled_with(backend):
    """As in Numba-CUDA: the table is copied when the kernel is specialised, not read at launch."""
    out = np.zeros(2, np.float32)
    read_later[1, 2](out)
    LATER[:] = 9.0
    try:
        read_later[1, 2](out)
    finally:
        LATER[:] = [1.0, 2.0]
    np.testing.assert_array_equal(out, [1.0, 2.0])
