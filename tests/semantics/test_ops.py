"""Every operation of ``gpukern.semantics.ops`` against its own NumPy form, on edge values, on every backend.

The tests walk the tables -- ``ops.BINARY``, ``ops.COMPARE``, ``ops.UNARY``, ``ops.MATH``,
``ops.ATOMIC`` -- so a new entry is covered without being named here.  An entry is left out
on a type only where the table says so (``int_only``, an atomic's ``types``), where its NumPy form has no meaning
for the type (``-`` of two bools, atomics of bools), or where the front end refuses a
literal operand (``x ** -1``); ``test_front_end_refuses_what_the_table_leaves_undefined``
checks that the front end refuses what the NumPy form does not define.

Each test generates ONE kernel per table and type, writes its source to a file and imports
it as a user would, and launches it with ``k[grid, block](...)``; each thread takes one pair
of operands and stores the result of every form of every entry:

* integers (int32, uint32, int64, bool): every pair from {0, 1, -1, 2, -2, 3, -7, 31, 32,
  33, 63, 64, 70, MIN, MIN+1, MAX, MAX-1} converted to the type (wrapping for unsigned), the
  right operand also running through the shift counts -1..70; with run-time operands, and
  with each right edge value written as a literal (``x >> 40``; for entries whose C form
  depends on the literal -- ``exact``: C's own operator for a count in range, a positive
  divisor -- each count from -1 to 70 too), also on a left operand the emitter proves never
  negative (where C's ``/`` may stand for ``//``);
* floats (float32, float64): every pair from {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0,
  1e30, -1e-30, smallest subnormal, largest finite, inf, -inf, nan}.

Results must be bit-identical to the entry's NumPy form (any NaN matches any NaN), except

* the math functions C takes from the device's library (all but ``EXACT_MATH``; float ``**``
  is ``pow``): NaN and infinities in the same places, finite values within ``ULPS`` units in
  the last place (``WIDER_ULPS`` lists where a backend needs more; docs/language.md, "What
  each operation means");
* signed overflow of an entry whose C form leaves it undefined (``overflow_undefined``:
  ``+ - *`` and unary ``-``), which is not compared.

Atomics are applied once per element of a global and of a shared array (no contention):
the stored and the returned values are checked against ``ATOMIC[name].update``.  The
constant folder is checked by one kernel per type whose statements store
``int32(A) op int32(B)`` (and ``op int32(A)``) for every pair of literal edge values.
``KNOWN`` lists the disagreements found whose fix lies outside ``gpukern/semantics/ops.py``.
"""

from __future__ import annotations

import atexit
import builtins
import hashlib
import json
import math
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_source import load_kernel as _load_kernel

import gpukern as gk
from gpukern import bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from gpukern.semantics import ops
from gpukern.types import ScalarType, from_dtype, math_float, promote, true_divide_type

INT_TYPES = (int32, uint32, int64, int8, uint8, int16, uint16, uint64)
FLOAT_TYPES = (float32, float64, float16)
TYPES = (bool_, *INT_TYPES, *FLOAT_TYPES)
SHIFT_COUNTS = range(-1, 71)
BLOCK = 64

# Math functions C must compute exactly (the rest come from the device's library).
EXACT_MATH = {"fabs", "floor", "ceil", "trunc", "copysign", "fmod", "remainder", "nextafter", "abs", "min", "max"}
EXACT_MATH |= {"frexp", "modf", "ldexp", "rint"}
# Units in the last place allowed for the other math functions, against NumPy's result.
ULPS = {float32: 4, float64: 2, float16: 1}  # float16: the float32 function's result rounded to half
# (function, type): more ulps, where some backend's library needs them on the edge values.
WIDER_ULPS: dict[tuple[str, ScalarType], int] = {}

_KERNEL_DIR = Path(tempfile.mkdtemp(prefix="gpukern-ops-"))
atexit.register(shutil.rmtree, _KERNEL_DIR, ignore_errors=True)  # nothing left behind in /tmp
_HEADER = """\
import math
import numpy as np
import gpukern as gk
from gpukern import bool_, float32, float64, int32, int64, uint32, global_id, shared, thread_idx
from gpukern import float16, int8, int16, uint8, uint16, uint64

NAN = math.nan
INF = math.inf

"""


# ---------------------------------------------------------------- edge values
def wrap(v: int, t: ScalarType) -> int:
    """The Python int ``v`` converted to the integer type ``t`` (two's complement wrap)."""
    lo = int(np.iinfo(t.dtype).min)
    return (v - lo) % 2 ** (8 * t.itemsize) + lo


def _unique(values: np.ndarray) -> np.ndarray:
    """``values`` without repeats (by bit pattern: 0.0 and -0.0 both stay), in their order."""
    bits = values.view(f"u{values.itemsize}") if values.dtype.kind == "f" else values
    _, first = np.unique(bits, return_index=True)
    return values[np.sort(first)]


def left_values(t: ScalarType) -> np.ndarray:
    if t == bool_:
        return np.array([False, True])
    if t.is_int:
        info = np.iinfo(t.dtype)
        raw = [0, 1, -1, 2, -2, 3, -7, 31, 32, 33, 63, 64, 70, info.min, info.min + 1, info.max, info.max - 1]
        return _unique(np.array([wrap(int(v), t) for v in raw], t.dtype))
    fi = np.finfo(t.dtype)
    raw = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, 1e30, -1e-30, fi.smallest_subnormal, fi.max]
    with np.errstate(over="ignore"):  # float16: 1e30 is inf
        return np.array(raw + [math.inf, -math.inf, math.nan], t.dtype)


def right_values(t: ScalarType) -> np.ndarray:
    """Right operands: the edge values, and for integers every shift count from -1 to 70."""
    if not t.is_int:
        return left_values(t)
    counts = np.array([wrap(c, t) for c in SHIFT_COUNTS], t.dtype)
    return _unique(np.concatenate([left_values(t), counts]))


def pairs(t: ScalarType) -> tuple[np.ndarray, np.ndarray]:
    """Every (left, right) pair of edge values of ``t``, as two arrays."""
    a, b = left_values(t), right_values(t)
    return np.repeat(a, len(b)), np.tile(b, len(a))


def spell(v: Any, t: ScalarType) -> str:
    """The value ``v`` of type ``t`` as a Python literal in kernel source."""
    if t == bool_:
        return repr(bool(v))
    if t.is_int:
        text = str(int(v))
    else:
        f = float(v)
        if math.isnan(f):
            return "NAN"
        if math.isinf(f):
            return "INF" if f > 0 else "(-INF)"
        text = repr(f)  # exact: a float32 value is a float64 value
    return f"({text})" if text.startswith("-") else text


def typed(v: Any, t: ScalarType) -> str:
    """The value as a typed constant in kernel source: ``int32(-7)``, ``bool_(True)``."""
    return f"{type_name(t)}({spell(v, t)})"


def type_name(t: ScalarType) -> str:
    """The type's name in kernel source (``bool`` would be Python's own)."""
    return "bool_" if t == bool_ else t.name


# ---------------------------------------------------------------- types of results
def op_dtype(symbol: str, t: ScalarType) -> np.dtype:
    """The type ``a <symbol> b`` computes in for operands of type ``t`` (docs/language.md:
    NumPy 2 promotion, ``/`` of integers in float64, shifts of bools in int64)."""
    if symbol == "/":
        return true_divide_type(t, t).dtype
    if symbol in ("<<", ">>") and t == bool_:
        return np.dtype(np.int64)
    return promote(t, t).dtype


def math_defined(mf: ops.MathFunc, t: ScalarType) -> bool:
    """Whether the front end takes operands of type ``t`` (the bit functions take integers only)."""
    return mf.typing not in ("bits", "int") or (t.is_int and t != bool_)


def math_type(mf: ops.MathFunc, t: ScalarType) -> ScalarType:
    """The type a math function computes in for operands of type ``t``."""
    if mf.typing == "float":
        return math_float(t)  # like NumPy's ufuncs: int8 in float16, int16 in float32, int32 in float64
    if mf.typing == "abs" and t == bool_:
        return int64
    return t


def math_spelling(name: str) -> str:
    """How kernel source names the math function: ``math.sqrt``, ``np.arcsinh``, ``abs``..."""
    python_names = [name] + [alias for alias, entry in ops.MATH_ALIASES.items() if entry == name]
    for prefix, module in (("math.", math), ("np.", np), ("", builtins), ("gk.", gk)):
        for spelled in python_names:
            if ops.math_func(getattr(module, spelled, None)) is ops.MATH[name]:
                return prefix + spelled
    raise AssertionError(f"no Python object names the math function {name!r}")


def defined(fn: Any, *args: Any) -> bool:
    """Whether a NumPy form gives a meaning to these operands (NumPy refuses ``-`` of bools...)."""
    try:
        with np.errstate(all="ignore"):
            fn(*args)
    except TypeError:
        return False
    return True


def binary_defined(symbol: str, t: ScalarType) -> bool:
    op, dt = ops.BINARY[symbol], op_dtype(symbol, t)
    x = np.zeros(1, t.dtype).astype(dt)
    return not (op.int_only and t.is_float) and defined(op.numpy, x, x, dt)


def unary_defined(symbol: str, t: ScalarType) -> bool:
    return defined(ops.UNARY[symbol].numpy, np.zeros(1, t.dtype), t.dtype)


def unary_text(symbol: str, operand: str) -> str:
    return f"{symbol} {operand}" if symbol.isalpha() else f"{symbol}{operand}"


def tolerance(name: str | None, t: ScalarType) -> int | None:
    """Ulps allowed for math function ``name`` computing in ``t``; None: bit-identical."""
    if name is None or name in EXACT_MATH or not t.is_float or ops.MATH[name].predicate:
        return None
    return WIDER_ULPS.get((name, t), ULPS[t])


# ---------------------------------------------------------------- comparison
def _ordered(x: np.ndarray) -> np.ndarray:
    """Floats as integers in the same order, one apart per ulp (both zeros at 0)."""
    i = x.view(f"i{x.itemsize}").astype(object)
    lo = -(2 ** (8 * x.itemsize - 1))
    return np.where(i < 0, lo - i, i)


def bad_elements(got: np.ndarray, want: np.ndarray, ulps: int | None) -> np.ndarray:
    """Where ``got`` differs from ``want``: in bits (any NaN equals any NaN), or by more than ``ulps``."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind != "f":
        return got != want
    u = f"u{want.itemsize}"
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    same = (got.view(u) == want.view(u)) | (nan_g & nan_w)
    if ulps is None:
        return ~same
    finite = np.isfinite(got) & np.isfinite(want)
    close = np.zeros(got.shape, bool)
    close[finite] = np.abs(_ordered(got[finite]) - _ordered(want[finite])) <= ulps
    return ~(same | close)


def defined_in_c(op: ops.BinaryOp | ops.UnaryOp, dt: np.dtype, operands: list[np.ndarray], want: np.ndarray):
    """Where C defines the result of ``op``: all elements (None), except that an operator whose C
    form is undefined on signed overflow (``overflow_undefined``: ``+ - *``, unary ``-``) is not
    compared where it overflows, i.e. where computing with Python ints gives another value."""
    if not op.overflow_undefined or dt.kind != "i" or dt.itemsize < 4:  # narrow ones: computed in int, wrapped
        return None
    exact = op.numpy(*[x.astype(object) for x in operands], np.dtype(object))
    return np.asarray(exact == want.astype(object), bool)


def show(v: Any) -> str:
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return f"{v.item()!r} (0x{int(v.view(f'u{v.itemsize}')):0{2 * v.itemsize}x})"
    return repr(v.item())


# ---------------------------------------------------------------- generated kernels
@dataclass
class Check:
    """Values one statement (or several) must store: ``arrays[array][index]`` against ``want``."""

    array: str
    index: Any  # a row of a 2-D output, or positions of a 1-D one
    want: np.ndarray
    what: str  # the operation, for reports: 'x // 40'
    operands: tuple[np.ndarray, ...]  # per element, for reports
    ulps: int | None = None  # None: bit-identical
    defined: np.ndarray | None = None  # the elements C defines (None: all)
    entry: str = ""  # the table entry checked (a key of its table), for KNOWN


@dataclass
class Group:
    """Statements that stand or fall together: refused by the front end, they are all dropped."""

    lines: list[str]
    checks: list[Check]
    literal: bool = False  # the statements spell an operand as a literal


@dataclass
class Built:
    kernel: Any
    groups: list[Group]
    refused: list[tuple[Group, str]] = field(default_factory=list)


# source -> (kernel, indices of the groups kept, (index, message) of those refused)
_BUILT: dict[str, tuple[Any, list[int], list[tuple[int, str]]]] = {}


def load_kernel(source: str) -> Any:
    return _load_kernel(source, "ops")


CHUNK = 64  # statements per block: ptxas and LLVM take far longer over one huge basic block


def render(params: list[str], top: list[str], head: list[str], groups: list[Group]) -> tuple[str, dict[int, int]]:
    """The kernel's source, and which group each statement line belongs to.  Long bodies are cut
    into blocks under conditions the compiler cannot decide (``i != -1``, ``i != -2``...)."""
    lines = _HEADER.splitlines() + ["@gk.kernel", f"def k({', '.join(params)}):", "    i = global_id(0)"]
    lines += ["    " + s for s in top] + ["    if i < a.shape[0]:"] + ["        " + s for s in head]
    chunked = sum(len(g.lines) for g in groups) > 2 * CHUNK
    owner: dict[int, int] = {}
    count = 0
    for g, group in enumerate(groups):
        for s in group.lines:
            if chunked and count % CHUNK == 0:
                lines.append(f"        if i != {-1 - count // CHUNK}:")
            lines.append(("            " if chunked else "        ") + s)
            owner[len(lines)] = g
            count += 1
    return "\n".join(lines) + "\n", owner


def build(params: list[str], head: list[str], groups: list[Group], arrays: dict[str, np.ndarray], top=()) -> Built:
    """Compile the kernel (front end and C), dropping the groups whose statements it refuses."""
    key = render(params, list(top), head, groups)[0] + repr({p: (arrays[p].dtype, arrays[p].ndim) for p in params})
    if key not in _BUILT:
        kept, refused = list(range(len(groups))), []
        args = [arrays[p] for p in params]
        while True:
            source, owner = render(params, list(top), head, [groups[g] for g in kept])
            k = load_kernel(source)
            try:
                k.source(*args, backend="cuda")  # the front end, and the C this process checks anyway
            except gk.CompileError as e:
                g = owner.get(e.loc.lineno if e.loc is not None else -1)
                if g is None:
                    raise
                refused.append((kept.pop(g), str(e).splitlines()[0]))
                continue
            break
        _BUILT[key] = (k, kept, refused)
    k, kept, refused = _BUILT[key]
    return Built(k, [groups[g] for g in kept], [(groups[g], message) for g, message in refused])


def launch(built: Built, params: list[str], arrays: dict[str, np.ndarray]) -> None:
    n = len(arrays["a"])
    built.kernel[(n + BLOCK - 1) // BLOCK, BLOCK](*[arrays[p] for p in params])


def failures(c: Check, arrays: dict[str, np.ndarray]) -> list[str]:
    """A line for each case where the kernel's value differs from the NumPy form."""
    got = np.asarray(arrays[c.array][c.index])
    bad = bad_elements(got, c.want, c.ulps)
    if c.defined is not None:
        bad &= c.defined
    tol = "" if c.ulps is None else f" (more than {c.ulps} ulp apart)"
    lines = (
        f"{c.what} [{', '.join(show(o[j]) for o in c.operands)}]: NumPy form {show(c.want[j])}, "
        f"kernel {show(got[j])}{tol}"
        for j in np.flatnonzero(bad)
    )
    return list(dict.fromkeys(lines))  # the same operands recur across threads: each case once


# Disagreements these tests find whose fix lies outside gpukern/semantics/ops.py (see each reason):
# (test table, entry, type) -> (backends, reason).  Such a check is expected to fail there
# (the test xfails); once it passes, the test fails until the entry is removed.
KNOWN: dict[tuple[str, str, ScalarType], tuple[set[str], str]] = {
    # both seen on an H100 (CUDA 13.0), and documented in docs/language.md as the backend's deviations
    ("atomic", "add", float32): ({"cuda"}, "NVIDIA's float atomicAdd on global memory flushes subnormals to zero"),
    ("atomic", "sub", float32): ({"cuda"}, "as atomic_add (CUDA writes atomic_sub of a float as atomicAdd of -v)"),
    ("math", "hypot", float64): ({"cuda"}, "CUDA's double hypot overflows to inf beside DBL_MAX (hypot(1, DBL_MAX))"),
    ("math", "lgamma", float32): ({"cuda"}, "CUDA's lgammaf(-2.5) is 16 ulp off (its error bound excludes x < 0)"),
    ("math", "lgamma", float64): ({"cuda"}, "CUDA's lgamma(-2.5) is 10 ulp off (its error bound excludes x < 0)"),
}


def check_all(built: Built, arrays: dict[str, np.ndarray], backend: str, table: str, t: ScalarType) -> None:
    """Every entry's values agree with the NumPy form, but those KNOWN to differ on this backend,
    which must still differ (then the test xfails)."""
    problems: dict[str, list[str]] = {}  # entry -> what differs
    for group, why in built.refused:
        if not group.literal:  # the front end may refuse a literal operand (x ** -1), nothing else
            for c in group.checks:
                problems.setdefault(c.entry, []).append(f"{c.what}: refused: {why}")
    for group in built.groups:
        for c in group.checks:
            problems.setdefault(c.entry, []).extend(failures(c, arrays))
    known = {
        entry: reason
        for (in_table, entry, on), (backends, reason) in KNOWN.items()
        if (in_table, on) == (table, t) and backend in backends and entry in problems
    }
    unexpected = [line for entry, lines in problems.items() if entry not in known for line in lines]
    more = f"\n... {len(unexpected)} cases in all" if len(unexpected) > 40 else ""
    assert not unexpected, (
        f"{table} on {t.name} on {backend}: the kernel differs from the NumPy form\n"
        + "\n".join(unexpected[:40])
        + more
    )
    fixed = [entry for entry in known if not problems[entry]]
    assert not fixed, f"{table} on {t.name} on {backend}: {fixed} now agree with the NumPy form: remove them from KNOWN"
    if known:
        pytest.xfail("; ".join(f"{entry}: {reason}" for entry, reason in known.items()))


# ---------------------------------------------------------------- binary operators
_DEFAULT_EXACT = ops.BinaryOp.__dataclass_fields__["exact"].default


def binary_groups(symbol: str, t: ScalarType, left: str, a: np.ndarray, b: np.ndarray) -> list[Group]:
    """``left <symbol> b[i]`` and ``left <symbol> R`` with each right edge value R as a literal,
    stored in rows of the output array ``out_<name>``."""
    op, dt = ops.BINARY[symbol], op_dtype(symbol, t)
    ulps = tolerance(op.float_math, t) if t.is_float else None
    # as literals: the edge values, and every shift count where the entry's C form depends on the
    # literal (``exact``: C's operator where the count is in range, or the divisor positive)
    literals = right_values(t) if op.exact is not _DEFAULT_EXACT else left_values(t)
    rights = [("b[i]", b)] + [(spell(r, t), np.full(len(a), r, t.dtype)) for r in literals]
    groups = []
    for row, (right, values) in enumerate(rights):
        text = f"{left} {symbol} {right}"
        with np.errstate(all="ignore"):
            want = op.numpy(a.astype(dt), values.astype(dt), dt)
            where = defined_in_c(op, dt, [a.astype(dt), values.astype(dt)], want)
        check = Check(f"out_{op.name}", row, want, text, (a, b) if row == 0 else (a,), ulps, where, symbol)
        groups.append(Group([f"out_{op.name}[{row}, i] = {text}"], [check], literal=row > 0))
    return groups


def run_binary(backend: str, t: ScalarType, table: str, symbols: list[str], head: list[str], left: np.ndarray) -> None:
    """One kernel storing ``v op b[i]`` and ``v op R`` for every operator in ``symbols``, where
    ``head`` assigns ``v`` (of values ``left``)."""
    a, b = pairs(t)
    arrays: dict[str, np.ndarray] = {"a": a, "b": b}
    groups: list[Group] = []
    for symbol in symbols:
        op_groups = binary_groups(symbol, t, "v", left, b)
        arrays[f"out_{ops.BINARY[symbol].name}"] = np.zeros((len(op_groups), len(a)), op_dtype(symbol, t))
        groups += op_groups
    params = list(arrays)
    built = build(params, head, groups, arrays)
    launch(built, params, arrays)
    check_all(built, arrays, backend, table, t)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_binary(backend, t):
    """Every operator of ``ops.BINARY`` that its NumPy form defines on the type: ``v op b[i]``
    with run-time operands, and ``v op R`` with each right edge value R as a literal."""
    a, _ = pairs(t)
    symbols = [s for s in ops.BINARY if binary_defined(s, t)]
    run_binary(backend, t, "binary", symbols, ["v = a[i]"], a)


@pytest.mark.parametrize("t", INT_TYPES, ids=lambda t: t.name)
def test_binary_never_negative_left(backend, t):
    """Operators whose C form depends on the operands (``exact``: C's own operator may stand in
    for the helper), on a left operand the emitter proves never negative (``v = T(u)`` of a uint32
    ``u``), where C's ``/`` and ``%`` may stand for ``//`` and ``%`` by a positive literal."""
    a, _ = pairs(t)
    symbols = [s for s in ops.BINARY if ops.BINARY[s].exact is not _DEFAULT_EXACT]
    v = a.astype(np.uint32).astype(t.dtype)
    head = ["u = uint32(a[i])", f"v = {type_name(t)}(u)"]
    run_binary(backend, t, "never-negative", symbols, head, v)


# ---------------------------------------------------------------- what the table leaves undefined
UNDEFINED = [("binary", s, t) for s in ops.BINARY for t in TYPES if not binary_defined(s, t)] + [
    ("unary", s, t) for s in ops.UNARY for t in TYPES if not unary_defined(s, t)
]
KNOWN_ACCEPTED: dict[tuple[str, str, ScalarType], str] = {}


def _probe_source(table: str, symbol: str, t: ScalarType) -> str:
    expr = f"a[i] {symbol} b[i]" if table == "binary" else unary_text(symbol, "a[i]")
    return _HEADER + f"@gk.kernel\ndef k(a, b, out):\n    i = global_id(0)\n    out[i] = bool_({expr})\n"


_PROBE = """
import importlib.util, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import gpukern as gk
results = {}
for name, path, dtype in json.loads(sys.argv[2]):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.zeros(1, dtype)
    try:
        module.k.source(x, x, np.zeros(1, bool), backend="cuda")
        results[name] = "accepted"
    except gk.CompileError as e:
        results[name] = f"refused at line {e.loc.lineno}: " + str(e).splitlines()[0]
    except Exception as e:
        results[name] = f"accepted, then {type(e).__name__}: {e}"
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def probes() -> dict[str, str]:
    """How the front end takes each undefined case, from a separate process (a kernel it accepts
    but cannot emit must not reach this process's check that every kernel's CUDA C compiles)."""
    jobs = []
    for table, symbol, t in UNDEFINED:
        source = _probe_source(table, symbol, t)
        name = "probe_" + hashlib.sha256(source.encode()).hexdigest()[:16]
        path = _KERNEL_DIR / f"{name}.py"
        path.write_text(source)
        jobs.append((name, str(path), t.dtype.str))
    root = str(Path(gk.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", _PROBE, root, json.dumps(jobs)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    return {f"{table} {symbol} {t.name}": results[job[0]] for (table, symbol, t), job in zip(UNDEFINED, jobs)}


@pytest.mark.parametrize("table, symbol, t", UNDEFINED, ids=[f"{tb}-{s}-{t.name}" for tb, s, t in UNDEFINED])
def test_front_end_refuses_what_the_table_leaves_undefined(probes, table, symbol, t, request):
    """An operation the NumPy form does not define on a type (``~`` of a float, ``-`` of a bool)
    is a KernelTypeError, not a kernel whose C computes something the simulator cannot."""
    if (table, symbol, t) in KNOWN_ACCEPTED:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_ACCEPTED[table, symbol, t]))
    result = probes[f"{table} {symbol} {t.name}"]
    line = _probe_source(table, symbol, t).count("\n")  # the statement applying the operator
    assert result.startswith(f"refused at line {line}:"), f"{table} {symbol} on {t.name}: {result}"


# ---------------------------------------------------------------- comparisons and unary operators
@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_compare(backend, t):
    """Every comparison of ``ops.COMPARE`` on every pair of edge values (C's operator is exact)."""
    a, b = pairs(t)
    groups = []
    for r, (symbol, op) in enumerate(ops.COMPARE.items()):
        text = f"a[i] {symbol} b[i]"
        groups.append(Group([f"out[{r}, i] = {text}"], [Check("out", r, op.numpy(a, b), text, (a, b), entry=symbol)]))
    arrays = {"a": a, "b": b, "out": np.zeros((len(groups), len(a)), bool)}
    params = ["a", "b", "out"]
    built = build(params, [], groups, arrays)
    launch(built, params, arrays)
    check_all(built, arrays, backend, "compare", t)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_unary(backend, t):
    """Every operator of ``ops.UNARY`` that its NumPy form defines on the type, on every edge value."""
    a = left_values(t)
    arrays: dict[str, np.ndarray] = {"a": a}
    groups = []
    for r, (symbol, op) in enumerate(ops.UNARY.items()):
        if not unary_defined(symbol, t):
            continue
        with np.errstate(all="ignore"):
            want = np.asarray(op.numpy(a, t.dtype))
            where = defined_in_c(op, t.dtype, [a], want)
        arrays[f"out{r}"] = np.zeros(len(a), want.dtype)
        text = unary_text(symbol, "a[i]")
        check = Check(f"out{r}", slice(None), want, text, (a,), None, where, symbol)
        groups.append(Group([f"out{r}[i] = {text}"], [check]))
    params = ["a", *[p for p in arrays if p != "a"]]
    built = build(params, [], groups, arrays)
    launch(built, params, arrays)
    check_all(built, arrays, backend, "unary", t)


# ---------------------------------------------------------------- math functions
@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_math(backend, t):
    """Every function of ``ops.MATH`` on every edge value (pair, for two arguments)."""
    a, b = pairs(t)
    c = np.roll(b, 7)  # a third operand (fma), in other combinations with the first two
    arrays: dict[str, np.ndarray] = {"a": a, "b": b, "c": c}
    groups = []
    for r, (name, mf) in enumerate(ops.MATH.items()):
        if not math_defined(mf, t):
            continue  # refused by the front end: test_bit_functions_take_integers_only
        mt = math_type(mf, t)
        operands = list((a, b, c)[: mf.nargs])
        spelled = list(("a[i]", "b[i]", "c[i]")[: mf.nargs])
        for k in range(mf.nargs):  # an operand of a type of its own (ldexp's int32 exponent): its edge values
            if mf.operand_dtype(k, None) is not None:
                operands[k] = own_operand(mf.operand_dtype(k, None), len(a))
                arrays[f"n{r}_{k}"] = operands[k]
                spelled[k] = f"n{r}_{k}[i]"
        want = mf.evaluate([x.astype(mf.operand_dtype(k, mt.dtype)) for k, x in enumerate(operands)], mt)
        text = f"{math_spelling(name)}({', '.join(spelled)})"
        if mf.results:  # several results: unpacked into one output each
            outs = [f"out{r}_{k}" for k in range(len(mf.results))]
            checks = []
            for k, (out, item) in enumerate(zip(outs, want)):
                arrays[out] = np.zeros(len(a), item.dtype)
                ulps = tolerance(name, mt) if item.dtype.kind == "f" else None
                checks.append(Check(out, slice(None), item, f"{text}[{k}]", tuple(operands), ulps, entry=name))
            groups.append(Group([f"{', '.join(o + '[i]' for o in outs)} = {text}"], checks))
            continue
        want = np.asarray(want)
        arrays[f"out{r}"] = np.zeros(len(a), want.dtype)
        check = Check(f"out{r}", slice(None), want, text, tuple(operands), tolerance(name, mt), entry=name)
        groups.append(Group([f"out{r}[i] = {text}"], [check]))
    params = list(arrays)
    built = build(params, [], groups, arrays)
    launch(built, params, arrays)
    check_all(built, arrays, backend, "math", t)


def own_operand(dt: np.dtype, n: int) -> np.ndarray:
    """``n`` values for an operand of a fixed integer type (ldexp's exponent): the integer edge
    values with the exponents where floats overflow, become subnormal and vanish, repeated."""
    t = from_dtype(dt)
    edge = [*left_values(t).tolist(), 128, -126, -149, -150, 1024, -1022, -1074, -1075, 2000, -2000]
    return np.resize(np.array([wrap(int(v), t) for v in edge], dt), n)


@pytest.mark.parametrize("name", [n for n, mf in ops.MATH.items() if mf.typing in ("bits", "int")])
def test_bit_functions_take_integers_only(name):
    for t in (bool_, float32, float64):
        spelled = "bool_" if t == bool_ else t.name
        text = f"import gpukern as gk\n\n@gk.kernel\ndef k(a: gk.Array[gk.{spelled}], out: gk.Array[gk.int64]):\n"
        k = load_kernel(text + f"    out[0] = gk.{name}({', '.join(['a[0]'] * ops.MATH[name].nargs)})\n")
        with pytest.raises(gk.KernelTypeError, match=f"{name}\\(\\) takes an integer, not {t.name}"):
            k.source(np.zeros(1, t.dtype), np.zeros(1, np.int64))


def test_math_functions_of_gpukern_run_on_the_host_with_the_kernel_meaning():
    """``gk.popc`` and the others are the table's entries: the host calls the same NumPy form."""
    assert gk.popc(np.int32(-1)) == 32 and gk.popc(np.int64(-1)) == 64 and gk.popc(0) == 0
    assert gk.clz(np.uint32(1)) == 31 and gk.clz(np.int32(0)) == 32 and gk.clz(np.int64(1)) == 63
    assert gk.ffs(np.int32(0)) == 0 and gk.ffs(np.int32(8)) == 4 and gk.ffs(np.int32(-(2**31))) == 32
    assert gk.brev(np.uint32(1)) == 2**31 and gk.brev(np.int64(1)) == -(2**63)
    assert gk.fma(0.1, 10.0, -1.0) == 5.551115123125783e-17  # 0.1 * 10.0 rounds to 1.0 unfused: 0.0
    assert gk.fma(np.float32(1 + 2**-23), np.float32(1 - 2**-23), np.float32(-1)) == np.float32(-(2**-46))
    assert gk.exp10(2.0) == 100.0 and gk.rsqrt(4.0) == 0.5


# ---------------------------------------------------------------- atomics
NARGS = max(op.nargs for op in ops.ATOMIC.values())


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_atomic(backend, t):
    """Every atomic of ``ops.ATOMIC``, once per element of a global and of a shared array: the
    value stored and the value returned against ``update``; operand k is ``b`` rolled by k (so
    ``atomic_cas``'s comparand equals the old value on the diagonal pairs, NaN and -0.0 included)."""
    a, b = pairs(t)
    operands = [np.roll(b, k) for k in range(NARGS)]
    arrays: dict[str, np.ndarray] = {"a": a, **{f"b{k}": o for k, o in enumerate(operands)}}
    groups = []
    for name, op in ops.ATOMIC.items():
        args = ", ".join(f"b{k}[i]" for k in range(op.nargs))
        if not defined(op.update, a, *operands[: op.nargs]):
            continue  # NumPy refuses it on the type (atomic_sub of bools): the front end refuses atomics on bools
        if t.name in ops.ATOMIC_TYPES and t.name not in op.types:
            continue  # the entry is not defined on the type (atomic_inc of int32): test_atomics_more checks the refusal
        with np.errstate(all="ignore"):
            new = np.asarray(op.update(a, *operands[: op.nargs])).astype(t.dtype)
        arrays[f"g_{name}"] = a.copy()
        for where in ("old", "s_old", "s_new"):
            arrays[f"{where}_{name}"] = np.zeros_like(a)
        what = f"atomic_{name}(x, i, {args}) with x[i] = a[i]"
        ops_for_report = (a, *operands[: op.nargs])
        lines = [
            f"old_{name}[i] = gk.atomic_{name}(g_{name}, i, {args})",
            "s[j] = a[i]",
            f"s_old_{name}[i] = gk.atomic_{name}(s, j, {args})",
            f"s_new_{name}[i] = s[j]",
        ]
        checks = [
            Check(f"g_{name}", slice(None), new, f"{what}: stored (global)", ops_for_report, entry=name),
            Check(f"old_{name}", slice(None), a, f"{what}: returned (global)", ops_for_report, entry=name),
            Check(f"s_new_{name}", slice(None), new, f"{what}: stored (shared)", ops_for_report, entry=name),
            Check(f"s_old_{name}", slice(None), a, f"{what}: returned (shared)", ops_for_report, entry=name),
        ]
        groups.append(Group(lines, checks))
    params = list(arrays)
    built = build(params, ["j = thread_idx.x"], groups, arrays, top=[f"s = shared({type_name(t)}, {BLOCK})"])
    if not built.groups:
        pytest.skip(f"the front end refuses atomics on {t.name}: {built.refused[0][1]}")
    launch(built, params, arrays)
    check_all(built, arrays, backend, "atomic", t)


# ---------------------------------------------------------------- the constant folder
@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_constant_folding(backend, t):
    """Operators on typed constants (``int32(-7) // int32(0)``) fold through the same table: one
    kernel whose statements each store one folded edge case, for every pair of edge values."""
    la = left_values(t)
    a, b = np.repeat(la, len(la)), np.tile(la, len(la))
    sa = [typed(v, t) for v in la]
    pa, pb = np.repeat(sa, len(la)), np.tile(sa, len(la))
    cases = []  # (entry, what, statements' expressions, NumPy form, operands)
    with np.errstate(all="ignore"):
        for symbol, op in ops.BINARY.items():
            if binary_defined(symbol, t):
                dt = op_dtype(symbol, t)
                want = op.numpy(a.astype(dt), b.astype(dt), dt)
                cases.append((symbol, f"A {symbol} B", [f"{x} {symbol} {y}" for x, y in zip(pa, pb)], want, (a, b)))
        for symbol, op in ops.UNARY.items():
            if unary_defined(symbol, t):
                texts = [unary_text(symbol, x) for x in sa]
                cases.append((symbol, unary_text(symbol, "A"), texts, op.numpy(la, t.dtype), (la,)))
    arrays: dict[str, np.ndarray] = {"a": np.zeros(1, t.dtype)}
    counts: dict[str, int] = {}
    groups = []
    for entry, what, texts, want, operands in cases:
        want = np.asarray(want)
        out = f"out_{want.dtype.name}"
        start = counts.get(out, 0)
        counts[out] = start + len(texts)
        lines = [f"{out}[{start + k}] = {text}" for k, text in enumerate(texts)]
        index = np.arange(start, start + len(texts))
        groups.append(Group(lines, [Check(out, index, want, f"folded {what}", operands, entry=entry)]))
    for out, n in counts.items():
        arrays[out] = np.zeros(n, np.dtype(out.removeprefix("out_")))
    params = list(arrays)
    built = build(params, [], groups, arrays)
    launch(built, params, arrays)
    check_all(built, arrays, backend, "constant folding", t)


def test_float32_fma_of_whole_arrays_rounds_once_as_the_exact_sum_would():
    """The simulator's float32 fma (TwoSum in float64) against exact rationals, where double
    rounding would differ: products one float32 midpoint away, nudged either way by ``c``."""
    rng = np.random.default_rng(5)
    x = np.float32(1 + 2**-12)  # x * x = 1 + 2**-11 + 2**-24: halfway between two float32s
    a = np.concatenate([np.full(4, x), rng.standard_normal(2000).astype(np.float32)])
    b = np.concatenate([np.full(4, x), rng.standard_normal(2000).astype(np.float32)])
    c = np.concatenate(
        [np.float32([0.0, 2.0**-60, -(2.0**-60), 2.0**-50]), rng.standard_normal(2000).astype(np.float32)]
    )
    c[4:1004] = -(a[4:1004].astype(np.float64) * b[4:1004]).astype(np.float32)  # cancellation
    fast = ops.MATH["fma"].evaluate([a, b, c], float32)
    exact = np.array([ops._fma_one(float(p), float(q), float(r), np.dtype(np.float32)) for p, q, r in zip(a, b, c)])
    assert fast.view(np.uint32).tolist() == exact.astype(np.float32).view(np.uint32).tolist()
    assert fast[1] != fast[2]  # the nudge decided the rounding
