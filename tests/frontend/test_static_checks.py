"""Static checks in the front end: barrier divergence and definite assignment."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, global_id, int32, kernel, shared, thread_idx


def compile_error(k, *types):
    with pytest.raises(gk.CompileError) as info:
        k.source(*types, backend="cuda")
    return info.value


# ---------------------------------------------------------------- barrier divergence
@kernel
def barrier_under_loaded_value(x: Array[float32]):
    if x[0] > 0.0:
        barrier()  # B1


@kernel
def barrier_in_thread_loop(x: Array[float32]):
    for i in range(thread_idx.x):
        barrier()  # B2
        x[i] = 1.0


@kernel
def barrier_after_thread_break(x: Array[float32], n: int32):
    for i in range(n):
        if thread_idx.x == i:
            break
        barrier()  # B3


@kernel
def barrier_under_derived_value(x: Array[float32]):
    t = thread_idx.x * 2 + 1
    u = t
    if u > 5:
        barrier()  # B4


@gk.func
def sync():
    barrier()


@kernel
def func_with_barrier_under_thread_branch(x: Array[float32]):
    if global_id(0) < 3:
        sync()  # B5


@pytest.mark.parametrize(
    ("k", "mark"),
    [
        (barrier_under_loaded_value, "# B1"),
        (barrier_in_thread_loop, "# B2"),
        (barrier_after_thread_break, "# B3"),
        (barrier_under_derived_value, "# B4"),
        (func_with_barrier_under_thread_branch, "# B5"),
    ],
)
def test_divergent_barriers_are_rejected(k, mark):
    types = [Array[float32]] + ([int32] if len(k.params) > 1 else [])
    e = compile_error(k, *types)
    assert isinstance(e, gk.BarrierDivergenceError)
    assert e.lineno == line_of(k, mark)
    assert "depends on the thread" in str(e) and "hint:" in str(e)
    assert e.kernel == k.__name__  # as a fault the simulator finds names its kernel


@kernel
def uniform_barriers(x: Array[float32], n: int32, FLAG: Const[bool]):
    s = shared(float32, 64)
    t = thread_idx.x
    if block_idx.x < 2:  # uniform within a block
        s[t] = 1.0
        barrier()
    for i in range(n):  # uniform loop over a parameter
        barrier()
    if FLAG:
        barrier()
    k = 0
    while k < n:
        k += 1
        barrier()
    x[global_id(0)] = s[63 - t] + float32(k)


def test_uniform_conditions_accept_barriers(backend):
    x = np.zeros(128, np.float32)
    uniform_barriers[2, 64](x, 3, True)
    np.testing.assert_array_equal(x, np.full(128, 4.0, np.float32))


# ------------------------------------------------------ barriers under a branch every thread takes at a launch
# ``if tid < size:`` around a whole reduction (a classic exercise; issue 32): the condition depends on
# the thread only through its index against a value known at launch, so every thread of a block may
# take it.  Accepted with a gk.KernelWarning at the barrier; the simulator checks each launch.


@kernel
def reduction_under_size(x: Array[float32], out: Array[float32], size: int32):
    s = shared(float32, 64)
    tid = thread_idx.x
    if tid < size:
        s[tid] = x[block_idx.x * size + tid]
        barrier()  # L1
        stride = size // 2
        while stride > 0:
            if tid < stride:
                s[tid] += s[tid + stride]
            barrier()  # L2
            stride //= 2
        if tid == 0:
            out[block_idx.x] = s[0]


@kernel
def barrier_under_index_against_a_constant(x: Array[float32]):
    if thread_idx.x < 16:
        barrier()  # B6


@kernel
def data_branch_inside_a_launch_bound_one(x: Array[float32], n: int32):
    if thread_idx.x < n:
        if x[thread_idx.x] > 0.0:
            barrier()  # B7


def test_a_barrier_under_an_index_bound_by_a_launch_value_is_accepted_with_a_warning(backend):
    x = np.random.default_rng(3).integers(-9, 9, 128).astype(np.float32)
    out = np.zeros(2, np.float32)
    reduction_under_size.variants.clear()
    with pytest.warns(gk.KernelWarning, match="only through its index and values known at launch") as caught:
        reduction_under_size[2, 64](x, out, 64)
    assert sorted({w.lineno for w in caught}) == [line_of(reduction_under_size, m) for m in ("# L1", "# L2")]
    np.testing.assert_array_equal(out, x.reshape(2, 64).sum(1))


def test_the_simulator_finds_the_launch_where_not_every_thread_takes_it(on_simulator):
    with pytest.warns(gk.KernelWarning), pytest.raises(gk.BarrierDivergenceError) as info:
        reduction_under_size.variants.clear()
        reduction_under_size[2, 64](np.zeros(128, np.float32), np.zeros(2, np.float32), 32)
    assert info.value.lineno == line_of(reduction_under_size, "# L1") and "32 of the 64" in str(info.value)


@pytest.mark.parametrize(
    ("k", "mark"), [(barrier_under_index_against_a_constant, "# B6"), (data_branch_inside_a_launch_bound_one, "# B7")]
)
def test_an_index_against_constants_or_data_under_it_is_still_refused(k, mark):
    types = [Array[float32]] + ([int32] if len(k.params) > 1 else [])
    e = compile_error(k, *types)
    assert isinstance(e, gk.BarrierDivergenceError) and e.lineno == line_of(k, mark)


# ---------------------------------------------------------------- definite assignment
@kernel
def maybe_unassigned(out: Array[int32]):
    if thread_idx.x > 0:
        y = 1
    out[0] = y  # D1


@kernel
def loop_var_after_empty_loop(out: Array[int32], n: int32):
    for j in range(n):
        pass
    out[0] = j  # D2


@kernel
def assigned_on_every_path(out: Array[int32], n: int32):
    if n > 0:
        y = 1
    else:
        y = 2
    while True:
        z = y * 3
        break
    for j in range(n):
        if j == 2:
            w = j  # noqa: F841 - assigned on one path only, on purpose
            break
    else_value = -1
    out[global_id(0)] = y + z + else_value


@pytest.mark.parametrize(
    ("k", "mark", "name"), [(maybe_unassigned, "# D1", "'y'"), (loop_var_after_empty_loop, "# D2", "'j'")]
)
def test_reads_before_assignment_are_type_errors(k, mark, name):
    types = [Array[int32]] + ([int32] if len(k.params) > 1 else [])
    e = compile_error(k, *types)
    assert isinstance(e, gk.KernelTypeError)
    assert e.lineno == line_of(k, mark)
    assert name in str(e) and "before it is assigned" in str(e)


def test_assigned_on_every_path_compiles_and_runs(backend):
    out = np.zeros(4, np.int32)
    assigned_on_every_path[1, 4](out, 3)
    np.testing.assert_array_equal(out, np.full(4, 1 + 3 - 1))


@kernel
def after_loops_that_surely_run(out: Array[int32]):
    for i in range(4):  # the body surely runs: i and s are Python's after it (Numba-CUDA's tests read them)
        s = i * 10
    out[0] = i
    out[1] = s
    for j in range(9, 2, -3):  # a negative step, three passes
        t = j
        if j == 6:
            continue
        t = 0
    out[2] = j
    out[3] = t  # assigned before the continue too


@kernel
def after_a_loop_whose_pass_may_continue(out: Array[int32], n: int32):
    for j in range(3):
        if j == n:
            continue
        w = j
    out[0] = w  # D3: a pass that continues skips it, and it may be the only one that runs first


@kernel
def after_a_constant_empty_loop(out: Array[int32]):
    for j in range(5, 5):
        pass
    out[0] = j  # D4


def test_a_loop_that_surely_runs_leaves_its_names_assigned(backend):
    out = np.zeros(4, np.int32)
    after_loops_that_surely_run[1, 1](out)
    assert out.tolist() == [3, 30, 3, 0]


@pytest.mark.parametrize(
    ("k", "mark", "name"),
    [(after_a_loop_whose_pass_may_continue, "# D3", "'w'"), (after_a_constant_empty_loop, "# D4", "'j'")],
)
def test_a_loop_that_may_not_assign_still_refuses_the_read(k, mark, name):
    types = [Array[int32]] + ([int32] if len(k.params) > 1 else [])
    e = compile_error(k, *types)
    assert isinstance(e, gk.KernelTypeError)
    assert e.lineno == line_of(k, mark) and name in str(e) and "before it is assigned" in str(e)


# ---------------------------------------------------------------- barriers in @func under the caller's values
@gk.func
def _halving(buf, t, n):
    s = n // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2


def test_a_func_whose_barrier_loop_depends_on_a_thread_dependent_argument_is_rejected():
    @kernel
    def bad(a: Array[float32]):
        buf = shared(float32, 64)
        t = thread_idx.x
        buf[t] = a[t]
        barrier()
        _halving(buf, t, t + 1)  # every thread loops a different number of times

    with pytest.raises(gk.BarrierDivergenceError, match="thread-dependent values for n") as e:
        bad.source(Array[float32])
    assert e.value.lineno is not None


def test_the_same_func_with_a_uniform_argument_is_accepted(backend):
    @kernel
    def good(a: Array[float32], out: Array[float32]):
        buf = shared(float32, 64)
        t = thread_idx.x
        buf[t] = a[t]
        barrier()
        _halving(buf, t, 64)
        if t == 0:
            out[0] = buf[0]

    a = np.arange(64, dtype=np.float32)
    out = np.zeros(1, np.float32)
    good[1, 64](a, out)
    assert out[0] == a.sum()


# ---------------------------------------------------------------- collective operations that not every thread reaches
@gk.func
def synced(v: float32) -> float32:
    barrier()
    return v


@kernel
def barrier_call_in_thread_select(x: Array[float32]):
    t = thread_idx.x
    x[t] = synced(x[t]) if t < 16 else 0.0  # C1


@kernel
def barrier_call_in_thread_while(x: Array[float32]):
    t = thread_idx.x
    k = 0
    while synced(float32(k)) < float32(t):  # C2
        k += 1
    x[t] = float32(k)


@gk.func
def tile_corner(c: Array[float32, 2]) -> float32:
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 1.0)
    gk.store_matrix(c, (0, 0), acc)
    return c[0, 0]


@kernel
def fragment_call_in_thread_select(c: Array[float32, 2], out: Array[float32]):
    out[thread_idx.x] = tile_corner(c) if thread_idx.x < 16 else 0.0  # C3


@kernel
def fragment_op_before_a_return_in_its_loop(c: Array[float32, 2], n: int32):
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    for k in range(n):
        gk.fill_fragment(acc, float32(k))  # C4: the threads that returned in an earlier iteration miss it
        gk.store_matrix(c, (0, 0), acc)
        if thread_idx.x == k:
            return  # R4


@pytest.mark.parametrize(
    ("k", "types", "mark", "where"),
    [
        (barrier_call_in_thread_select, [Array[float32]], "# C1", "inside a conditional expression (line {})"),
        (barrier_call_in_thread_while, [Array[float32]], "# C2", "inside a while loop (line {})"),
        (
            fragment_call_in_thread_select,
            [Array[float32, 2], Array[float32]],
            "# C3",
            "inside a conditional expression (line {})",
        ),
        (fragment_op_before_a_return_in_its_loop, [Array[float32, 2], int32], "# C4", "after a return (line {})"),
    ],
)
def test_collective_operations_that_not_every_thread_reaches_are_rejected(k, types, mark, where):
    """Cases one check of collective operations caught and another missed (a @func with a barrier
    or fragment operations called in a thread-dependent ``a if c else b`` or while condition; a
    fragment operation before a return later in its loop): the checks share one walk now."""
    e = compile_error(k, *types)
    assert type(e) is (gk.BarrierDivergenceError if "barrier" in k.__name__ else gk.KernelTypeError)
    assert e.lineno == line_of(k, mark)
    assert where.format(line_of(k, "# R4" if "return" in where else mark)) in e.message


@gk.func
def leave_then_sync(buf: Array[float32, 1], t: int32):
    if t < 4:
        return  # R5: these threads go on to the caller's next barrier, the others wait at this one
    buf[t] = 1.0
    barrier()  # B5


@kernel
def calls_leave_then_sync(a: Array[float32]):
    buf = shared(float32, 64)
    leave_then_sync(buf, thread_idx.x)
    barrier()
    a[thread_idx.x] = buf[thread_idx.x]


def test_a_barrier_after_a_return_some_threads_take_in_a_func_is_rejected():
    """A kernel's early returns are restructured so that every thread still arrives at its
    barriers; a @func's are not: its barrier after such a return waits for threads that are at
    the caller's barrier (the simulator found it at run time; the compiler now does)."""
    e = compile_error(calls_leave_then_sync, Array[float32])
    assert type(e) is gk.BarrierDivergenceError
    assert e.lineno == line_of(calls_leave_then_sync, "leave_then_sync(buf")  # the call passing thread_idx.x
    assert "thread-dependent values for t" in e.message
    assert f"this barrier() is after a return (line {line_of(leave_then_sync, '# R5')})" in e.message


@gk.func
def sync_then_write(out: Array[float32], i: int32):
    barrier()
    out[i] = 1.0


@kernel
def bounds_return_then_barrier_call(out: Array[float32], n: int32):
    i = thread_idx.x
    if i >= n:
        return  # R6
    sync_then_write(out, i)  # C6


def test_a_call_of_a_barrier_func_after_a_divergent_return_is_rejected():
    """A kernel's early returns pass over its own barriers (the threads that returned still arrive,
    doing nothing else), but not over a call of a @func with one: those threads would run the
    callee's body (here out[i] past the array, which the simulator reported at run time)."""
    e = compile_error(bounds_return_then_barrier_call, Array[float32], int32)
    assert type(e) is gk.BarrierDivergenceError and e.lineno == line_of(bounds_return_then_barrier_call, "# C6")
    assert f"after a return (line {line_of(bounds_return_then_barrier_call, '# R6')})" in e.message


# ---------------------------------------------------------------- flow-sensitive uniformity
@kernel
def reduction_then_stride_reused(x: Array[float32], out: Array[float32]):
    """The textbook tree reduction; ``stride`` set again (a uniform value) under ``if t == 0:``
    after the loop: its loop's condition is uniform at the loop, whatever happens after."""
    s = shared(float32, 64)
    t = thread_idx.x
    s[t] = x[global_id(0)]
    barrier()
    stride = 32
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        barrier()
        stride //= 2
    if t == 0:
        stride = 2
        out[block_idx.x] = s[0] * stride


@kernel
def reassigned_uniform_before_the_loop(x: Array[float32], out: Array[float32]):
    """A name thread-dependent first, then given a uniform value: uniform from there on."""
    s = shared(float32, 64)
    t = thread_idx.x
    n = t
    out[global_id(0)] = float32(n)
    n = 4
    for i in range(n):
        s[t] = x[t] + i
        barrier()
    out[global_id(0)] += s[63 - t]


@kernel
def made_varying_in_a_branch(x: Array[float32], out: Array[float32]):
    limit = 32
    if thread_idx.x > 5:
        limit = thread_idx.x  # SET
    while limit > 1:
        barrier()  # WAIT
        limit //= 2
    out[thread_idx.x] = x[thread_idx.x]


@kernel
def varying_through_a_loop_carried_value(x: Array[float32], n: int32):
    k = 0
    for i in range(n):
        if k > 2:
            barrier()  # CARRIED
        k = thread_idx.x  # a later iteration sees it


def test_uniformity_is_flow_sensitive(backend):
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(2, np.float32)
    reduction_then_stride_reused[2, 64](x, out)
    np.testing.assert_array_equal(out, 2 * x.reshape(2, 64).sum(axis=1))
    y = np.zeros(64, np.float32)
    reassigned_uniform_before_the_loop[1, 64](x[:64], y)
    np.testing.assert_array_equal(y, np.arange(64) + x[:64][::-1] + 3)


def test_a_thread_dependent_condition_names_the_assignment_that_made_it_so():
    e = compile_error(made_varying_in_a_branch, Array[float32], Array[float32])
    assert e.loc.lineno == line_of(made_varying_in_a_branch, "# WAIT")
    assert f"through 'limit' (set at line {line_of(made_varying_in_a_branch, '# SET')})" in e.message
    e = compile_error(varying_through_a_loop_carried_value, Array[float32], int32)
    assert e.loc.lineno == line_of(varying_through_a_loop_carried_value, "# CARRIED")
