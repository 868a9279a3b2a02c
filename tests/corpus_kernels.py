"""Invalid kernels for ``test_error_corpus.py``: one per case, the offending line marked ``# Ennn``.

Most kernels take the standard signature ``(a: Array[float32], ai: Array[int32], x: float32, n: int32)``
so that the test can compile them with the same example types.  They are never run.
"""

# ruff: noqa: F401, F821, F841, E731, B018, F811

from __future__ import annotations

import math

import numpy as np

import gpukern as gk
from gpukern import (
    Array,
    Const,
    atomic_add,
    atomic_cas,
    barrier,
    float32,
    float64,
    global_id,
    int32,
    int64,
    local,
    shared,
    superstep,
    thread_idx,
    uint32,
)

# ---------------------------------------------------------------- unsupported syntax


@gk.kernel
def syn_class(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    class P:  # E001
        pass


@gk.kernel
def syn_try(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    try:  # E002
        a[0] = x
    except Exception:
        pass


@gk.kernel
def syn_with_other(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    with open(n):  # E003
        a[0] = x


@gk.kernel
def syn_with_superstep_as(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    with superstep() as s:  # E004
        a[0] = x


@gk.kernel
def syn_lambda(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    f = lambda v: v + 1  # E005
    a[0] = x


@gk.kernel
def syn_listcomp(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = [i for i in range(4)]  # E006


@gk.kernel
def syn_setcomp(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = {i for i in range(4)}  # E007


@gk.kernel
def syn_dictcomp(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = {i: i for i in range(4)}  # E008


@gk.kernel
def syn_genexp(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = sum(a[i] for i in range(4))  # E009


@gk.kernel
def syn_yield(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = x
    yield x  # E010


_counter = 0


@gk.kernel
def syn_global(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    global _counter  # E011
    a[0] = x


def _make_nonlocal():
    y = 1

    @gk.kernel
    def syn_nonlocal(a: Array[float32], ai: Array[int32], x: float32, n: int32):
        nonlocal y  # E012
        a[0] = x

    return syn_nonlocal


syn_nonlocal = _make_nonlocal()


@gk.kernel
def syn_del(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    y = x
    del y  # E013


@gk.kernel
def syn_raise(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if n < 0:
        raise ValueError  # E014


@gk.kernel
def syn_assert(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    assert n > 0  # E015


@gk.kernel
def syn_import(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    import os  # E016


@gk.kernel
def syn_fstring(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    s = f"{n}"  # E017


@gk.kernel
def syn_str_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if n > 0:
        s = "abc"  # E018


@gk.kernel
def syn_list(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = [1, 2, 3]  # E019


@gk.kernel
def syn_dict(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = {1: 2}  # E020


@gk.kernel
def syn_set(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    v = {1, 2}  # E021


@gk.kernel
def syn_slice(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[1:3] += 1.0  # E022: a slice updated as a whole (slices as views, and a[1:3] = x, are fine)


@gk.kernel
def syn_starred(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = math.atan2(*ai)  # E023


@gk.kernel
def syn_walrus(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if (m := n + 1) > 2:  # E024
        a[0] = x


@gk.kernel
def syn_match(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    match n:  # E025
        case 1:
            a[0] = x


@gk.kernel
async def syn_async(a: Array[float32], ai: Array[int32], x: float32, n: int32):  # E026
    a[0] = x


@gk.kernel
def syn_for_list(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for v in [1, 2]:  # E027
        a[v] = x


@gk.kernel
def syn_for_array(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for v in x:  # E028
        a[0] = v


@gk.kernel
def syn_for_tuple(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for v in (1, 2):
        if v == n:
            break  # E029
        a[v] = x


@gk.kernel
def syn_for_else(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(n):  # E030
        a[i] = x
    else:
        a[0] = x


@gk.kernel
def syn_while_else(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    i = 0
    while i < n:  # E031
        i += 1
    else:
        a[0] = x


@gk.kernel
def syn_nested_def(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    def helper(v):  # E032
        return v

    a[0] = x


@gk.kernel
def syn_barrier_kwarg(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    barrier(x=1)  # E033


@gk.kernel
def syn_shared_kwargs(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = shared(dtype=float32, shape=16)  # E034
    a[0] = t[0]


@gk.kernel
def syn_print(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    print(x, file=None)  # E035: print() works, but writes to the device's output only


@gk.kernel
def syn_range_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    r = range(n)  # E036


@gk.kernel
def syn_superstep_call(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    superstep()  # E037


@gk.kernel
def syn_matmul(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = x @ x  # E038


@gk.kernel
def syn_is(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if n is x:  # E039
        a[0] = x


@gk.kernel
def syn_kwarg_math(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = math.sqrt(x=x)  # E040


@gk.func
def _func_with_default(v, w=1):  # E041
    return v + w


@gk.kernel
def syn_func_default(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = _func_with_default(x, x)


_DEFAULT_ARRAY = np.zeros(4, np.int32)


@gk.kernel
def syn_kernel_default(a: Array[float32], ai: Array[int32] = _DEFAULT_ARRAY, x: float32 = 1.0, n: int32 = 4):  # E042
    a[0] = x  # (a Const's or a scalar's default is taken where a launch leaves it out; an array's is refused)


@gk.kernel
def syn_range_kwarg(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(0, n, step=2):  # E043
        a[i] = x


@gk.kernel
def syn_tuple_loop_var(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i, j in range(n):  # E044
        a[i] = x


# a kernel that is not a def: a lambda on a line of its own inside a container
LAMBDA_KERNELS = {
    "k": gk.kernel(lambda a: None),  # E045
}


# ---------------------------------------------------------------- type errors


@gk.kernel
def ty_undefined(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = undefined_thing  # E100


@gk.kernel
def ty_float_into_int_array(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = x  # E101


@gk.kernel
def ty_float_literal_into_int_array(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = 1.5  # E102


@gk.kernel
def ty_float_index(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = a[x]  # E103


@gk.kernel
def ty_bitand_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = x & 1  # E104


@gk.kernel
def ty_invert_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = ~x  # E105


@gk.kernel
def ty_negate_bool(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    b = n > 0
    ai[0] = -b  # E106


@gk.kernel
def ty_shift_by_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = n << x  # E107


@gk.kernel
def ty_np_linalg(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = np.linalg.norm(x)  # E108


def _plain_python(v):
    return v * 2


@gk.kernel
def ty_plain_function(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = _plain_python(x)  # E109


@gk.kernel
def _callee_kernel(a: Array[float32]):
    a[0] = 1.0


@gk.kernel
def ty_call_kernel(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    _callee_kernel(a)  # E110


@gk.func
def _two_args(u, v):
    return u + v


@gk.kernel
def ty_func_arg_count(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = _two_args(x)  # E111


@gk.kernel
def ty_sqrt_two_args(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = math.sqrt(x, x)  # E112


@gk.kernel
def ty_atan2_one_arg(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = math.atan2(x)  # E113


@gk.kernel
def ty_shared_runtime_shape(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = shared(float32, n)  # E114
    a[0] = t[0]


@gk.kernel
def ty_shared_non_type(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = shared(3, 16)  # E115
    a[0] = t[0]


@gk.kernel
def ty_shared_runtime_dtype(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = shared(n, 16)  # E116
    a[0] = t[0]


@gk.kernel
def ty_shared_after_if(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if n > 0:
        t = shared(float32, 16)
        t[0] = x
    a[0] = t[0]  # E117


@gk.kernel
def ty_local_zero_shape(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    r = local(float32, 0)  # E118
    a[0] = x


@gk.kernel
def ty_local_float_shape(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    r = local(float32, (2, 2.5))  # E119
    a[0] = x


@gk.kernel
def ty_atomic_float64(d: Array[float64], ai: Array[int32], x: float32, n: int32):
    gk.atomic_and(d, 0, 1.0)  # E120


@gk.kernel
def ty_atomic_int64(q: Array[int64], ai: Array[int32], x: float32, n: int32):
    gk.atomic_inc(q, 0, 1)  # E121


@gk.kernel
def ty_atomic_local(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    r = local(int32, 4)
    atomic_add(r, 0, 1)  # E122
    ai[0] = r[0]


@gk.kernel
def ty_index_count(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = a[n, n]  # E123


@gk.kernel
def ty_shared_const_oob(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = shared(float32, 16)
    t[16] = x  # E124


@gk.kernel
def ty_assign_array_param(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a = 1.0  # E125


@gk.kernel
def ty_return_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    return x  # E126


@gk.func
def _mixed_return(v):
    if v > 0:
        return v, v  # E127
    return


@gk.kernel
def ty_mixed_return(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    _mixed_return(x)


@gk.func
def _recursive(v):
    return _recursive(v - 1)  # E128


@gk.kernel
def ty_recursion(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = _recursive(x)


@gk.kernel
def ty_maybe_unassigned(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if n > 0:
        y = x
    a[0] = y  # E129


@gk.kernel
def ty_loop_var_after_loop(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for j in range(n):
        a[j] = x
    ai[0] = j  # E130


@gk.kernel
def ty_range_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(x):  # E131
        a[i] = x


@gk.kernel
def ty_range_zero_step(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(0, n, 0):  # E132
        a[i] = x


@gk.kernel
def ty_thread_idx_w(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[thread_idx.w] = x  # E133


@gk.kernel
def ty_array_size(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = a.nbytes  # E134


@gk.kernel
def ty_global_id_3(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[global_id(3)] = x  # E135


@gk.kernel
def ty_and_non_bool(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = n and 1  # E136


@gk.kernel
def ty_or_non_bool(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    b = x or n  # E137
    a[0] = b


@gk.kernel
def ty_u32_minus_one(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    u = uint32(n)
    v = u + (-1)  # E138
    ai[0] = int32(v)


@gk.kernel
def ty_const_div_zero(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = x + 1 / 0  # E139


@gk.kernel
def ty_module_attr(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = math.no_such_function(x)  # E140


@gk.kernel
def ty_bad_annotation(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    y: str = 1  # E141


@gk.kernel
def ty_unpack_count(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    p, q = x, x, x  # E142


@gk.kernel
def ty_param_annotation(a: Array[float32], ai: Array[int32], x: float32, n: str):  # E143
    a[0] = x


@gk.kernel
def ty_pinned_local(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    y: int32 = 0
    y = x  # E144
    ai[0] = y


@gk.kernel
def ty_shape_index(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = a.shape[1]  # E145


@gk.kernel
def ty_call_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = x(3)  # E146


@gk.kernel
def ty_len_scalar(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = len(n)  # E147


@gk.kernel
def ty_min_one_arg(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = min(x)  # E148


@gk.kernel
def ty_literal_too_big(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[n] = 2**40  # E149


@gk.kernel
def ty_cast_inf(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = int32(math.inf)  # E150


@gk.kernel
def ty_negative_int_power(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = n**-1  # E151


@gk.kernel
def ty_atomic_scalar(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    atomic_add(n, 0, 1)  # E152


@gk.kernel
def ty_atomic_float_into_int(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    atomic_add(ai, 0, 1.5)  # E153


@gk.kernel
def ty_atomic_cas_count(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    atomic_cas(ai, 0, 1)  # E154


@gk.kernel
def ty_array_arith(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = a + x  # E155


@gk.kernel
def ty_2d_partial_use(m: Array[float32, 2], ai: Array[int32], x: float32, n: int32):
    ai[0] = m[0] + 1  # E156


@gk.kernel
def ty_float_mod_assign_int(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] /= 2  # E157


@gk.kernel
def ty_bitor_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    ai[0] = n | 1.0  # E158


@gk.kernel
def ty_assign_const(a: Array[float32], ai: Array[int32], x: float32, c: Const[int]):
    c = 3  # E159
    a[0] = x


@gk.kernel
def ty_tuple_index_oob(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    a[0] = (1.0, 2.0)[5]  # E160


@gk.kernel
def ty_tuple_index_float(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = (1.0, 2.0)
    a[0] = t[0.5]  # E161


# ---------------------------------------------------------------- barrier divergence


@gk.kernel
def div_thread_if(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if thread_idx.x < 16:
        barrier()  # E200


@gk.kernel
def div_loaded_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if a[0] > 0.0:
        barrier()  # E201


@gk.kernel
def div_thread_loop_bound(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(thread_idx.x):
        barrier()  # E202


@gk.kernel
def div_after_thread_break(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(n):
        if thread_idx.x == i:
            break
        barrier()  # E203


@gk.func
def _sync():
    barrier()


@gk.kernel
def div_func_under_branch(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if global_id(0) < n:
        _sync()  # E204


@gk.kernel
def div_thread_while(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    i = thread_idx.x
    while i < n:
        i += 32
        barrier()  # E205


@gk.kernel
def div_superstep_under_branch(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if thread_idx.x == 0:
        with superstep():  # E206
            a[0] = x


@gk.kernel
def div_after_thread_continue(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    for i in range(n):
        if thread_idx.x > i:
            continue
        barrier()  # E207


@gk.kernel
def div_derived_value(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    t = thread_idx.x * 2
    u = t + 1
    if u > 5:
        barrier()  # E208


@gk.kernel
def div_else_branch(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if a[global_id(0)] >= x:  # on data (an index against n alone is accepted with a warning)
        a[0] = x
    else:
        barrier()  # E209


@gk.kernel
def div_atomic_result(a: Array[float32], ai: Array[int32], x: float32, n: int32):
    if atomic_add(ai, 0, 1) == 0:
        barrier()  # E210


# ---------------------------------------------------------------- valid kernels for launch errors


@gk.kernel
def copy1(out: Array[float32], x: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = x[i]


@gk.kernel
def fill2(out: Array[float32, 2], v: float32):
    out[global_id(1), global_id(0)] = v


@gk.kernel
def fill_const(out: Array[float32], c: Const[int], flag: Const[bool]):
    if flag:
        out[global_id(0)] = float32(c)


@gk.kernel
def fill_inferred(out, v):
    out[global_id(0)] = v


BIG = 4 * 1024 * 1024  # float32 elements: 16 MiB of shared memory (PoCL offers its L2 size, 2 MiB or more)


@gk.kernel
def big_shared(out: Array[float32]):
    t = shared(float32, BIG)
    t[thread_idx.x] = 1.0
    barrier()
    out[global_id(0)] = t[0]
