"""The error corpus: invalid kernels and launches, one per case.

Each case names the error class it must raise, the line it must point at (compile errors: the
line marked ``# Ennn`` in ``corpus_kernels.py``) and key words of the message.  Launch errors
must be raised before anything runs and before any data is copied to the device.  No case may
raise anything that is not a ``gk.GpukernError``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import corpus_kernels as K
import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, float64, int32, int64

STD = (Array[float32], Array[int32], float32, int32)  # the corpus kernels' standard signature
SENTINEL = -7.0

SYN, TYP, DIV, LAU = gk.KernelSyntaxError, gk.KernelTypeError, gk.BarrierDivergenceError, gk.LaunchError


@dataclass(frozen=True)
class Case:
    id: str
    kernel: Any
    exc: type
    words: tuple[str, ...]
    marker: str | None = None  # compile errors: the '# Ennn' marker of the offending line
    types: tuple[Any, ...] = STD
    launch: Callable[[SimpleNamespace], None] | None = None  # launch errors: launches with the sentinel arrays

    @property
    def is_launch(self) -> bool:
        return self.launch is not None


def C(id: str, kernel: Any, exc: type, marker: str, *words: str, types: tuple[Any, ...] = STD) -> Case:
    return Case(id, kernel, exc, words, marker=marker, types=types)


def L(id: str, kernel: Any, launch: Callable[[SimpleNamespace], None], *words: str) -> Case:
    return Case(id, kernel, LAU, words, launch=launch)


def _f32(n: int = 16) -> np.ndarray:
    return np.ones(n, np.float32)


COMPILE_CASES = [
    # ---- unsupported Python constructs
    C("class", K.syn_class, SYN, "E001", "class"),
    C("try", K.syn_try, SYN, "E002", "try"),
    C("with-other", K.syn_with_other, SYN, "E003", "superstep"),
    C("with-superstep-as", K.syn_with_superstep_as, SYN, "E004", "superstep", "name"),
    C("lambda", K.syn_lambda, SYN, "E005", "lambda"),
    C("listcomp", K.syn_listcomp, SYN, "E006", "comprehension"),
    C("setcomp", K.syn_setcomp, SYN, "E007", "comprehension"),
    C("dictcomp", K.syn_dictcomp, SYN, "E008", "comprehension"),
    C("genexp", K.syn_genexp, SYN, "E009", "generator"),
    C("yield", K.syn_yield, SYN, "E010", "yield"),
    C("global", K.syn_global, SYN, "E011", "global"),
    C("nonlocal", K.syn_nonlocal, SYN, "E012", "nonlocal"),
    C("del", K.syn_del, SYN, "E013", "del"),
    C("raise", K.syn_raise, SYN, "E014", "raise"),
    C("assert", K.syn_assert, SYN, "E015", "assert"),
    C("import", K.syn_import, SYN, "E016", "import"),
    C("fstring", K.syn_fstring, SYN, "E017", "f-string"),
    C("str-literal", K.syn_str_value, SYN, "E018", "str", "literal"),
    C("list", K.syn_list, SYN, "E019", "list"),
    C("dict", K.syn_dict, SYN, "E020", "dict"),
    C("set", K.syn_set, SYN, "E021", "set"),
    C("slice", K.syn_slice, SYN, "E022", "slice"),
    C("starred-args", K.syn_starred, SYN, "E023", "*ai", "only a tuple can be spread"),
    C("walrus", K.syn_walrus, SYN, "E024", ":="),
    C("match", K.syn_match, SYN, "E025", "match"),
    C("async-def", K.syn_async, SYN, "E026", "async"),
    C("for-over-list", K.syn_for_list, SYN, "E027", "list"),
    C("for-over-scalar", K.syn_for_array, SYN, "E028", "range", "1-D array", "float32"),
    C("break-in-tuple-loop", K.syn_for_tuple, SYN, "E029", "break", "tuple"),
    C("for-else", K.syn_for_else, SYN, "E030", "else"),
    C("while-else", K.syn_while_else, SYN, "E031", "else"),
    C("nested-def", K.syn_nested_def, SYN, "E032", "nested function"),
    C("barrier-kwarg", K.syn_barrier_kwarg, SYN, "E033", "barrier", "keyword"),
    C("shared-kwargs", K.syn_shared_kwargs, SYN, "E034", "shared", "keyword"),
    C("print", K.syn_print, SYN, "E035", "print"),
    C("range-as-value", K.syn_range_value, SYN, "E036", "range", "for loop"),
    C("superstep-call", K.syn_superstep_call, SYN, "E037", "with superstep"),
    C("matmul-operator", K.syn_matmul, SYN, "E038", "@"),
    C("is-comparison", K.syn_is, SYN, "E039", "'is' compares with None only"),
    C("math-kwarg", K.syn_kwarg_math, SYN, "E040", "keyword"),
    C("func-param-default", K.syn_func_default, SYN, "E041", "default"),
    C("kernel-param-default", K.syn_kernel_default, SYN, "E042", "default"),
    C("range-kwarg", K.syn_range_kwarg, SYN, "E043", "range"),
    C("lambda-kernel", K.LAMBDA_KERNELS["k"], SYN, "E045", "lambda", types=(Array[float32],)),
    C("tuple-loop-var", K.syn_tuple_loop_var, SYN, "E044", "loop variable"),
    # ---- types and names
    C("undefined-name", K.ty_undefined, TYP, "E100", "undefined_thing", "not defined"),
    C("float-var-into-int-array", K.ty_float_into_int_array, TYP, "E101", "float32", "int32", "int32(value)"),
    C("float-literal-into-int-array", K.ty_float_literal_into_int_array, TYP, "E102", "float literal", "int32"),
    C("float-index", K.ty_float_index, TYP, "E103", "indices", "integers"),
    C("bitand-float", K.ty_bitand_float, TYP, "E104", "&", "integers"),
    C("invert-float", K.ty_invert_float, TYP, "E105", "~", "float32"),
    C("negate-bool", K.ty_negate_bool, TYP, "E106", "negate", "bool"),
    C("shift-by-float", K.ty_shift_by_float, TYP, "E107", "<<", "integers"),
    C("np-linalg-norm", K.ty_np_linalg, TYP, "E108", "np.linalg.norm", "@func"),
    C("plain-python-function", K.ty_plain_function, TYP, "E109", "_plain_python", "@func"),
    C("call-kernel", K.ty_call_kernel, TYP, "E110", "_callee_kernel", "kernel"),
    C("func-arg-count", K.ty_func_arg_count, TYP, "E111", "_two_args", "2 argument"),
    C("sqrt-two-args", K.ty_sqrt_two_args, TYP, "E112", "sqrt", "2 given"),
    C("atan2-one-arg", K.ty_atan2_one_arg, TYP, "E113", "atan2", "1 given"),
    C("shared-runtime-shape", K.ty_shared_runtime_shape, TYP, "E114", "shared", "compile-time shape"),
    C("shared-non-type", K.ty_shared_non_type, TYP, "E115", "shared", "element type"),
    C("shared-runtime-dtype", K.ty_shared_runtime_dtype, TYP, "E116", "shared", "element type"),
    C("shared-after-if", K.ty_shared_after_if, TYP, "E117", "'t'", "inside an if", "used after"),
    C("local-zero-shape", K.ty_local_zero_shape, TYP, "E118", "local", "shape"),
    C("local-float-shape", K.ty_local_float_shape, TYP, "E119", "local", "shape"),
    C(
        "atomic-and-float64",
        K.ty_atomic_float64,
        TYP,
        "E120",
        "atomic_and",
        "float64",
        "int32, uint32, int64",
        types=(Array[float64], Array[int32], float32, int32),
    ),
    C(
        "atomic-inc-int64",
        K.ty_atomic_int64,
        TYP,
        "E121",
        "atomic_inc",
        "int64",
        "uint32",
        types=(Array[int64], Array[int32], float32, int32),
    ),
    C("atomic-local", K.ty_atomic_local, TYP, "E122", "atomic", "local"),
    C("index-count", K.ty_index_count, TYP, "E123", "1 dimension", "2 index"),
    C("shared-const-oob", K.ty_shared_const_oob, TYP, "E124", "out of bounds", "16"),
    C("assign-array-param", K.ty_assign_array_param, TYP, "E125", "assign", "'a'"),
    C("kernel-returns-value", K.ty_return_value, TYP, "E126", "kernel", "return"),
    C("mixed-return", K.ty_mixed_return, TYP, "E127", "None on some paths", "not a tuple"),
    C("recursion", K.ty_recursion, SYN, "E128", "_recursive", "recursion"),
    C("maybe-unassigned", K.ty_maybe_unassigned, TYP, "E129", "'y'", "before it is assigned"),
    C("loop-var-after-loop", K.ty_loop_var_after_loop, TYP, "E130", "'j'", "before it is assigned"),
    C("range-float", K.ty_range_float, TYP, "E131", "range", "integers"),
    C("range-zero-step", K.ty_range_zero_step, TYP, "E132", "step", "zero"),
    C("thread-idx-w", K.ty_thread_idx_w, TYP, "E133", "thread_idx", ".x"),
    C("array-nbytes", K.ty_array_size, TYP, "E134", ".nbytes", ".size"),
    C("global-id-3", K.ty_global_id_3, TYP, "E135", "global_id", "3"),
    C("and-non-bool", K.ty_and_non_bool, TYP, "E136", "'and'", "bool"),
    C("or-non-bool", K.ty_or_non_bool, TYP, "E137", "'or'", "bool"),
    C("uint32-plus-minus-one", K.ty_u32_minus_one, TYP, "E138", "-1", "uint32"),
    C("const-division-by-zero", K.ty_const_div_zero, TYP, "E139", "division by zero"),
    C("unknown-module-attribute", K.ty_module_attr, TYP, "E140", "no_such_function"),
    C("non-type-annotation", K.ty_bad_annotation, TYP, "E141", "str", "scalar type"),
    C("unpack-count", K.ty_unpack_count, TYP, "E142", "unpack", "2"),
    C("param-annotation", K.ty_param_annotation, TYP, "E143", "'n'", "annotation"),
    C("float-into-pinned-int-local", K.ty_pinned_local, TYP, "E144", "'y'", "int32"),
    C("shape-index-out-of-range", K.ty_shape_index, TYP, "E145", "shape", "1"),
    C("call-a-value", K.ty_call_value, TYP, "E146", "cannot call"),
    C("len-of-scalar", K.ty_len_scalar, TYP, "E147", "len"),
    C("min-one-arg", K.ty_min_one_arg, TYP, "E148", "min", "two"),
    C("int-literal-too-big", K.ty_literal_too_big, TYP, "E149", "1099511627776", "int32"),
    C("cast-inf-to-int", K.ty_cast_inf, TYP, "E150", "inf", "int32"),
    C("negative-int-power", K.ty_negative_int_power, TYP, "E151", "negative power"),
    C("atomic-on-scalar", K.ty_atomic_scalar, TYP, "E152", "atomic_add", "array"),
    C("atomic-float-into-int", K.ty_atomic_float_into_int, TYP, "E153", "float literal", "int32"),
    C("atomic-cas-arg-count", K.ty_atomic_cas_count, TYP, "E154", "atomic_cas", "4"),
    C("array-arithmetic", K.ty_array_arith, TYP, "E155", "number", "'a'"),
    C(
        "partly-indexed-2d",
        K.ty_2d_partial_use,
        TYP,
        "E156",
        "partly indexed",
        "'m'",
        types=(Array[float32, 2], Array[int32], float32, int32),
    ),
    C("true-div-into-int-array", K.ty_float_mod_assign_int, TYP, "E157", "float64", "int32"),
    C("bitor-float", K.ty_bitor_float, TYP, "E158", "|", "integers"),
    C(
        "assign-const-param",
        K.ty_assign_const,
        TYP,
        "E159",
        "'c'",
        "Const",
        types=(Array[float32], Array[int32], float32, 4),
    ),
    C("const-tuple-index-out-of-range", K.ty_tuple_index_oob, TYP, "E160", "index", "5"),
    C("const-tuple-float-index", K.ty_tuple_index_float, TYP, "E161", "index", "0.5"),
    # ---- barrier divergence
    C("barrier-under-thread-if", K.div_thread_if, DIV, "E200", "barrier", "depends on the thread"),
    C("barrier-under-loaded-value", K.div_loaded_value, DIV, "E201", "barrier", "depends on the thread"),
    C("barrier-in-thread-loop", K.div_thread_loop_bound, DIV, "E202", "for loop", "depends on the thread"),
    C("barrier-after-thread-break", K.div_after_thread_break, DIV, "E203", "for loop", "depends on the thread"),
    C("func-barrier-under-branch", K.div_func_under_branch, DIV, "E204", "_sync", "depends on the thread"),
    C("barrier-in-thread-while", K.div_thread_while, DIV, "E205", "while loop", "depends on the thread"),
    C("superstep-under-branch", K.div_superstep_under_branch, DIV, "E206", "barrier", "depends on the thread"),
    C("barrier-after-thread-continue", K.div_after_thread_continue, DIV, "E207", "for loop", "depends on the thread"),
    C("barrier-under-derived-value", K.div_derived_value, DIV, "E208", "barrier", "depends on the thread"),
    C("barrier-in-else-branch", K.div_else_branch, DIV, "E209", "barrier", "depends on the thread"),
    C("barrier-under-atomic-result", K.div_atomic_result, DIV, "E210", "barrier", "depends on the thread"),
]


def _sim_array(_: SimpleNamespace) -> None:
    x = gk.to_device(_f32(), backend="sim")
    K.copy1[1, 16](_.out, x, 16)


def _shared_too_big(s: SimpleNamespace) -> None:
    try:
        K.big_shared[1, 16](s.out)
    finally:  # keep the conftest from nvcc-compiling a variant no device can hold
        K.big_shared.variants.clear()


def _block_too_big(s: SimpleNamespace) -> None:
    b = gk.get_backend()
    K.copy1[1, b.max_group * 2](s.out, _f32(), 16)


LAUNCH_CASES = [
    L("too-few-args", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32()), "copy1", "3 arguments", "2"),
    L("too-many-args", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), 16, 1), "copy1", "3 arguments", "4"),
    L(
        "wrong-dtype",
        K.copy1,
        lambda s: K.copy1[1, 16](s.out, np.ones(16, np.float64), 16),
        "'x'",
        "float32",
        "float64",
    ),
    L("wrong-ndim", K.fill2, lambda s: K.fill2[1, 16](s.out, 1.0), "'out'", "2 dimension"),
    L("array-on-sim-backend", K.copy1, _sim_array, "'x'", "sim", "opencl"),
    L("block-too-large", K.copy1, _block_too_big, "block", "at most"),
    L("shared-too-large", K.big_shared, _shared_too_big, "shared memory", "big_shared"),
    L("zero-grid", K.copy1, lambda s: K.copy1[0, 16](s.out, _f32(), 16), "grid", "positive"),
    L("negative-grid", K.copy1, lambda s: K.copy1[(2, -1), 16](s.out, _f32(), 16), "grid", "positive"),
    L("zero-block", K.copy1, lambda s: K.copy1[1, (16, 0)](s.out, _f32(), 16), "block", "positive"),
    L("block-of-4-ints", K.copy1, lambda s: K.copy1[1, (4, 2, 1, 1)](s.out, _f32(), 16), "block", "1 to 3"),
    L("float-grid", K.copy1, lambda s: K.copy1[1.5, 16](s.out, _f32(), 16), "grid", "1.5"),
    L("no-launch-config", K.copy1, lambda s: K.copy1(s.out, _f32(), 16), "copy1[grid, block]"),
    L("one-item-config", K.copy1, lambda s: K.copy1[16](s.out, _f32(), 16), "copy1[grid, block]"),
    L(
        "const-int-given-float",
        K.fill_const,
        lambda s: K.fill_const[1, 16](s.out, 2.5, True),
        "'c'",
        "Const[int]",
        "2.5",
    ),
    L("const-bool-given-int", K.fill_const, lambda s: K.fill_const[1, 16](s.out, 2, 1), "'flag'", "Const[bool]"),
    L("string-as-array", K.copy1, lambda s: K.copy1[1, 16](s.out, "abc", 16), "'x'", "array", "str"),
    L("list-as-array", K.copy1, lambda s: K.copy1[1, 16](s.out, [1.0] * 16, 16), "'x'", "array", "list"),
    L("float-for-int32", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), 16.0), "'n'", "int32", "16.0"),
    L("int-too-large-for-int32", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), 2**31), "'n'", "int32", "2147483648"),
    L("bool-for-int32", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), True), "'n'", "int32"),
    L(
        "inferred-datetime64-array",
        K.fill_inferred,
        lambda s: K.fill_inferred[1, 16](np.zeros(16, "datetime64[s]"), 1.0),
        "'out'",
        "unsupported element type",
        "M8[s]",
    ),
    L("inferred-string-scalar", K.fill_inferred, lambda s: K.fill_inferred[1, 16](s.out, "x"), "'v'", "str"),
    L("check-option-off-sim", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), 16, check=True), "check", "simulator"),
    L("list-grid", K.copy1, lambda s: K.copy1[[1, 2], 16](s.out, _f32(), 16), "grid", "[1, 2]"),
    L("ndarray-block", K.copy1, lambda s: K.copy1[1, np.array([16])](s.out, _f32(), 16), "block"),
    L("complex-for-int32", K.copy1, lambda s: K.copy1[1, 16](s.out, _f32(), 3j), "'n'", "int32"),
    L("grid-beyond-device", K.copy1, lambda s: K.copy1[2**31, 16](s.out, _f32(), 16), "grid", "limits"),
]

CASES = COMPILE_CASES + LAUNCH_CASES

# ---------------------------------------------------------------- helpers

_MARKER_LINES: dict[str, int] = {}


def marker_line(marker: str) -> int:
    """The line of ``corpus_kernels.py`` carrying ``# <marker>``."""
    if not _MARKER_LINES:
        with open(K.__file__, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for m in re.findall(r"#\s*(E\d{3})\b", line):
                    assert m not in _MARKER_LINES, f"duplicate marker {m}"
                    _MARKER_LINES[m] = n
    return _MARKER_LINES[marker]


def _sentinels() -> SimpleNamespace:
    return SimpleNamespace(out=np.full(16, SENTINEL, np.float32), out2=np.full((16, 16), SENTINEL, np.float32))


def trigger(case: Case, s: SimpleNamespace | None = None) -> BaseException | None:
    """Run a case; the exception it raised, or None."""
    try:
        if case.is_launch:
            case.launch(s or _sentinels())
        else:
            case.kernel.source(*case.types, backend="cuda")
    except Exception as e:
        return e
    return None


def _describe(e: BaseException | None) -> str:
    if e is None:
        return "no exception"
    return f"{type(e).__module__}.{type(e).__name__}: {e}"


@pytest.fixture
def opencl():
    if "opencl" not in gk.available_backends():
        pytest.skip("needs the OpenCL backend (pocl-opencl-icd)")
    gk.set_backend("opencl")
    try:
        yield gk.get_backend("opencl")
    finally:
        gk.set_backend(None)


# ---------------------------------------------------------------- tests


def test_corpus_is_large_enough():
    assert len(CASES) >= 70
    assert len({c.id for c in CASES}) == len(CASES)
    assert len({c.marker for c in COMPILE_CASES}) == len(COMPILE_CASES)


@pytest.mark.parametrize("case", COMPILE_CASES, ids=[c.id for c in COMPILE_CASES])
def test_compile_error(case: Case):
    e = trigger(case)
    assert type(e) is case.exc, f"expected {case.exc.__name__}, got {_describe(e)}"
    text = str(e)
    assert e.filename is not None and os.path.samefile(e.filename, K.__file__), text
    assert e.lineno == marker_line(case.marker), f"expected line {marker_line(case.marker)}:\n{text}"
    assert e.col is not None, text
    line = open(K.__file__, encoding="utf-8").read().splitlines()[e.lineno - 1]
    indent = len(line) - len(line.lstrip())
    assert indent <= e.col < len(line), f"caret at column {e.col} is not under code:\n{text}"
    assert f"{e.filename}:{e.lineno}:" in text
    assert line.strip() in text and "^" in text.splitlines()[2 if text.count("\n") >= 2 else -1], text
    for w in case.words:
        assert w in text, f"{w!r} not in:\n{text}"


@pytest.mark.parametrize("case", LAUNCH_CASES, ids=[c.id for c in LAUNCH_CASES])
def test_launch_error(case: Case, opencl, monkeypatch):
    copied: list[str] = []
    launched: list[str] = []
    real_pointer, real_launch = opencl.device_pointer, opencl.cl.enqueue_nd_range_kernel

    def spy_pointer(a, name, copy_back):
        if isinstance(a, np.ndarray):
            copied.append(name)
        return real_pointer(a, name, copy_back)

    def spy_launch(*args, **kwargs):
        launched.append("launch")
        return real_launch(*args, **kwargs)

    monkeypatch.setattr(opencl, "device_pointer", spy_pointer)
    monkeypatch.setattr(opencl.cl, "enqueue_nd_range_kernel", spy_launch)
    s = _sentinels()
    e = trigger(case, s)
    assert type(e) is case.exc, f"expected {case.exc.__name__}, got {_describe(e)}"
    text = str(e)
    for w in case.words:
        assert w in text, f"{w!r} not in:\n{text}"
    assert not launched, "the kernel ran"
    assert not copied, f"arrays {copied} were copied to the device before the error"
    assert (s.out == SENTINEL).all() and (s.out2 == SENTINEL).all(), "an argument array changed"


def test_every_case_raises_a_gpukern_error(opencl):
    """The guarantee: no case raises anything but a gk.GpukernError (and each raises one)."""
    bad = []
    for case in CASES:
        e = trigger(case)
        if not isinstance(e, gk.GpukernError):
            bad.append(f"{case.id}: {_describe(e)}")
    assert not bad, "cases not raising a gk.GpukernError:\n" + "\n".join(bad)


def test_error_classes_form_the_documented_hierarchy():
    for cls in (gk.CompileError, gk.LaunchError, gk.BackendError, gk.KernelFault):
        assert issubclass(cls, gk.GpukernError)
    for cls in (gk.KernelSyntaxError, gk.KernelTypeError, gk.BarrierDivergenceError):
        assert issubclass(cls, gk.CompileError)
    assert {c.exc for c in CASES} <= {SYN, TYP, DIV, LAU}
