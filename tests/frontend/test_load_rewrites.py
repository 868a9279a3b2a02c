"""The front end's load rewrites (``gpukern.frontend.load_rewrites``) and the atomics ptxas combines.

Each rewrite is checked twice: on the IR (it happened, or it did not where it must not) and by
running the kernel on every backend against NumPy (it kept the meaning)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    atomic_exch,
    atomic_max,
    barrier,
    float32,
    func,
    global_id,
    int32,
    kernel,
    shared,
    thread_idx,
)
from gpukern.ir import nodes as ir


def _kernel_ir(k: gk.Kernel, *args: object) -> ir.FuncDef:
    return k.variant(k.signature_of(args)).program.kernel


def _loads(fd: ir.FuncDef, array: str) -> int:
    return sum(1 for n in ir.walk_body(fd.body) if isinstance(n, ir.Load) and n.array.name == array)


def _no_node_twice(fd: ir.FuncDef) -> bool:
    """A rewrite left a tree: no node (arrays aside) in two places, where a later pass that marks
    one would mark the other."""
    nodes = [n for n in ir.walk_body(fd.body) if not isinstance(n, ir.ArrayRef)]
    return len({id(n) for n in nodes}) == len(nodes)


def _vector_loads(fd: ir.FuncDef) -> list[ir.VecLoad]:
    return [n for n in ir.walk_body(fd.body) if isinstance(n, ir.VecLoad)]


# ---------------------------------------------------------------- reading an element once
@kernel
def reread(x: Array[int32], out: Array[int32], hist: Array[int32], MODE: Const[int]):
    s = shared(int32, 64)
    t = thread_idx.x
    s[t] = x[t]
    barrier()
    b = 63 - t
    if MODE == 0:  # read in the condition and again in the branch: one load
        if s[b] != 0:
            atomic_add(hist, 0, s[b])
        out[t] = s[b] * 2
    elif MODE == 1:  # a store to the array in between: two loads
        v = s[b]
        s[b] = v + 1
        out[t] = v + s[b]
    elif MODE == 2:  # a barrier in between: two loads
        v = s[b]
        barrier()
        out[t] = v + s[b]
    elif MODE == 3:  # the index changes in between: two loads
        v = s[b]
        b = b // 2
        out[t] = v + s[b]
    elif MODE == 4:  # the first read only under `and`: not hoisted, two loads
        if t > 100 and s[b] > 0:
            out[t] = 1
        out[t] = s[b]
    elif MODE == 5:  # an atomic on the array in the statement: two loads
        v = s[b]
        out[t] = atomic_add(s, b, 1) + s[b] + v


def _reread_expected(x: np.ndarray, mode: int) -> tuple[np.ndarray, int]:
    t = np.arange(64)
    b = 63 - t
    s = x.copy()
    if mode == 0:
        return s[b] * 2, int(s[b][s[b] != 0].sum())
    if mode == 1:
        return 2 * s[b] + 1, 0
    if mode == 2:
        return 2 * s[b], 0
    if mode == 3:
        return s[b] + s[b // 2], 0
    if mode == 4:
        return s[b], 0
    raise AssertionError(mode)


@pytest.mark.parametrize("mode, loads", [(0, 1), (1, 2), (2, 2), (3, 2), (4, 2)])
def test_a_shared_element_read_again_is_loaded_once_only_when_nothing_could_change_it(backend, mode, loads):
    x = np.random.default_rng(mode).integers(-3, 4, 64).astype(np.int32)
    args = (x, np.zeros(64, np.int32), np.zeros(1, np.int32), mode)
    fd = _kernel_ir(reread, *args)
    assert _loads(fd, "s") == loads and _no_node_twice(fd)
    out, hist = np.zeros(64, np.int32), np.zeros(1, np.int32)
    reread[1, 64](x, out, hist, mode)
    want, total = _reread_expected(x, mode)
    np.testing.assert_array_equal(out, want)
    assert hist[0] == total


def test_an_atomic_on_the_array_keeps_both_reads():
    x = np.arange(64, dtype=np.int32)
    fd = _kernel_ir(reread, x, np.zeros(64, np.int32), np.zeros(1, np.int32), 5)
    assert _loads(fd, "s") == 2


def test_the_profiler_counts_one_load_where_the_element_is_read_once():
    x = np.arange(1, 65, dtype=np.int32)
    args = (x, np.zeros(64, np.int32), np.zeros(1, np.int32))
    once = gk.profile(reread[1, 64], *args, 0).total.shared_load_elems
    twice = gk.profile(reread[1, 64], *args, 2).total.shared_load_elems
    assert (once, twice) == (64, 128)


# ---------------------------------------------------------------- rows in vectors
@kernel
def row_dot(x: Array[float32], y: Array[float32], out: Array[float32], W: Const[int], C: Const[int], MODE: Const[int]):
    s = shared(float32, (4, W))
    t = thread_idx.x
    r = t % 4
    if t < 4:
        for j in range(W):
            s[t, j] = x[t * W + j]
    barrier()
    acc = 0.0
    if MODE == 0:
        for i in range(C):
            acc += s[r, i] * y[i]
    elif MODE == 1:  # the loop also writes the array: no vectors (only compiled: it races)
        for i in range(C):
            acc += s[r, i] * y[i]
            s[r, i] = 0.0
    out[t] = acc


@pytest.mark.parametrize("width, count, vectors", [(16, 16, 1), (16, 8, 1), (8, 8, 1), (16, 6, 0), (6, 4, 0)])
def test_a_loop_along_a_shared_row_reads_it_in_16_byte_vectors(backend, width, count, vectors):
    rng = np.random.default_rng(width * count)
    x = rng.standard_normal(4 * width).astype(np.float32)
    y = rng.standard_normal(width).astype(np.float32)
    args = (x, y, np.zeros(32, np.float32), width, count, 0)
    fd = _kernel_ir(row_dot, *args)
    found = _vector_loads(fd)
    assert len(found) == vectors and all(v.width == 4 and v.array.name == "s" for v in found)
    assert _no_node_twice(fd)  # the copies of the body share no node
    out = np.zeros(32, np.float32)
    row_dot[1, 32](x, y, out, width, count, 0)
    r = np.arange(32) % 4
    want = (x.reshape(4, width)[r, :count].astype(np.float64) * y[:count]).sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@kernel
def row_sum_through_a_local(out: Array[int32]):
    s = shared(int32, (2, 8))
    t = thread_idx.x
    s[t // 8, t % 8] = t
    barrier()
    acc = 0
    for k in range(8):
        e = s[1, k]  # a variable of the body: the copies of the body declare it once
        acc += e * k
    out[t] = acc


def test_a_variable_of_a_vectorised_loop_body_is_declared_once(backend):
    fd = _kernel_ir(row_sum_through_a_local, np.zeros(16, np.int32))
    assert len(_vector_loads(fd)) == 1  # one int4 a step of the loop
    assert sum(1 for n in ir.walk_body(fd.body) if isinstance(n, ir.Assign) and n.declare and n.target.name == "e") == 1
    out = np.zeros(16, np.int32)
    row_sum_through_a_local[1, 16](out)  # and conftest compiles the CUDA C, which declared it 4 times before
    assert (out == sum((8 + k) * k for k in range(8))).all()


def test_a_row_the_loop_writes_is_read_element_by_element():
    args = (np.ones(64, np.float32), np.ones(16, np.float32), np.zeros(32, np.float32), 16, 16, 1)
    assert _vector_loads(_kernel_ir(row_dot, *args)) == []


def test_the_flagship_reads_its_a_tile_in_float4s():
    from test_matmul import matmul_tiled  # the example's kernel itself

    f = np.zeros(16, np.float32)
    (v,) = _vector_loads(_kernel_ir(matmul_tiled, f, f, f, 4, 4, 4, 16))
    assert (v.array.name, v.width) == ("tile_a", 4)
    assert "float4" in matmul_tiled.source(f, f, f, 4, 4, 4, 16)


# ---------------------------------------------------------------- atomics at one address
@func
def bump(c: Array[int32], k: int32):
    atomic_add(c, k, 1)


@kernel
def one_address(c: Array[int32], x: Array[int32], k: int32, MODE: Const[int]):
    i = global_id(0)
    if MODE == 0:
        atomic_add(c, 0, x[i])  # a constant index
    elif MODE == 1:
        atomic_max(c, k, x[i])  # a parameter
    elif MODE == 2:
        atomic_add(c, i % 2, 1)  # depends on the thread
    elif MODE == 3:
        bump(c, k)  # a parameter, through a function
    elif MODE == 4:
        bump(c, k)
        bump(c, i % 2)  # ... and at another call a thread-dependent one
    elif MODE == 5:
        atomic_exch(c, 0, x[i])  # the same in every thread, but not an operation ptxas combines


@pytest.mark.parametrize("mode, uniform", [(0, [True]), (1, [True]), (2, [False]), (3, [True]), (4, [False])])
def test_atomics_know_whether_the_code_makes_their_index_uniform(mode, uniform):
    c, x = np.zeros(4, np.int32), np.ones(64, np.int32)
    v = one_address.variant(one_address.signature_of((c, x, 1, mode)))
    found = [
        n.uniform_address
        for fd in v.program.funcs + [v.program.kernel]
        for n in ir.walk_body(fd.body)
        if isinstance(n, ir.Atomic)
    ]
    assert found == uniform


@pytest.mark.parametrize("mode, sectors", [(0, 2), (1, 2), (3, 2), (5, 64)])
def test_the_profiler_counts_one_sector_a_warp_for_atomics_ptxas_combines(mode, sectors):
    c, x = np.zeros(4, np.int32), np.arange(64, dtype=np.int32)
    t = gk.profile(one_address[1, 64], c, x, 1, mode).total
    assert (t.global_atomic_requests, t.global_atomic_sectors) == (2, sectors)


def test_float_atomics_at_one_address_are_not_combined():
    @kernel
    def fsum(total: Array[float32], x: Array[float32]):
        atomic_add(total, 0, x[global_id(0)])

    t = gk.profile(fsum[1, 64], np.zeros(1, np.float32), np.ones(64, np.float32)).total
    assert t.global_atomic_sectors == 64
