"""Every operator of the kernel language, defined once.

An entry says what the operation computes -- a NumPy function over operands of the
operation's type, which the simulator runs and the constant folder calls on typed
constants -- and how C writes it: C's own operator where C means the same thing, or a
small helper function whose body is written here, in dialect-neutral C, next to the
NumPy form it must agree with.  ``tests/semantics/test_ops.py`` walks these tables and checks every
backend against the NumPy form on edge values (zero divisors, INT_MIN, NaN, inf,
shift counts out of range).

Where C leaves a case undefined or implementation-defined, the entry defines it, and
both forms implement that definition (docs/language.md lists them):

- ``//`` and ``%`` floor, as in Python; ``x // 0`` and ``x % 0`` are 0 for integers, as in
  NumPy; ``MIN // -1`` is ``MIN`` (wraps) and ``MIN % -1`` is 0.
- ``x << n`` and ``x >> n`` with ``n`` outside ``[0, bits)`` shift every bit out: ``<<`` gives
  0, ``>>`` gives 0, or -1 for a negative signed ``x`` (NumPy's rule; C leaves it undefined,
  OpenCL masks the count, PTX clamps it).  Shifts of negative values wrap like NumPy's.
- integer ``x ** n`` wraps like NumPy; for ``n < 0`` it is ``1 / x**-n`` truncated: 1 when
  ``x == 1``, -1 or 1 when ``x == -1``, else 0.
- float ``x ** y`` and ``pow(x, y)`` are C's ``pow``, also for ``y == 0.5``: ``(-inf) ** 0.5``
  is inf and ``(-0.0) ** 0.5`` is 0.0 (NumPy's shortcut for a scalar exponent 0.5 is ``sqrt``).
- ``min``/``max`` are Python's: the first argument wins ties and NaNs.
- ``abs(MIN)`` is ``MIN`` (wraps).

Signed overflow of ``+ - *`` and unary minus stays undefined in C, as in CUDA C: making it
wrap would cost index arithmetic what hand-written CUDA gets (docs/language.md).  Those
entries say so (``overflow_undefined``): their NumPy form wraps, which is one thing C may do,
and compilers do otherwise (LLVM, under PoCL, computes ``x + INT_MIN`` as ``x | INT_MIN``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from ..ir import nodes as ir
from ..types import ScalarType, bool_, complex_of, component, compute_type, int32
from . import complex as cx


class CText(Protocol):
    """What a helper body needs from the C emitter: its spellings in the current dialect."""

    def type(self, t: ScalarType) -> str: ...

    def math_text(self, name: str, t: ScalarType, args: list[str]) -> str: ...

    def zero(self, t: ScalarType) -> str: ...

    def unsigned(self, t: ScalarType) -> str: ...

    def make_complex(self, t: ScalarType, re: str, im: str) -> str: ...

    def nan(self, t: ScalarType) -> str: ...

    def complex_helper(self, kind: str, t: ScalarType, nargs: int, body: Callable[[ScalarType, CText], str]) -> str:
        """The name of helper ``kind`` on complex type ``t`` (defined with ``body`` on first use), for
        a body that calls another one (``**`` calls ``*``)."""
        ...


def unsigned_of_dtype(dt: np.dtype) -> np.dtype:
    """The unsigned integer type of ``dt``'s width (shifts and wrapping negation are done in it)."""
    return np.dtype(f"u{dt.itemsize}")


# ---------------------------------------------------------------- NumPy forms
def _arr(x: Any, dt: np.dtype) -> np.ndarray:
    return np.asarray(x).astype(dt, copy=False)


def _shift(left: bool) -> Callable[[Any, Any, np.dtype], Any]:
    def run(a: Any, b: Any, dt: np.dtype) -> Any:
        a, b = _arr(a, dt), _arr(b, dt)
        bits = dt.itemsize * 8
        inside = (b >= 0) & (b < bits)
        count = np.where(inside, b, 0).astype(dt)
        if left:  # in unsigned arithmetic, so negative values wrap instead of being undefined
            u = unsigned_of_dtype(dt)
            shifted = np.left_shift(a.astype(u), count.astype(u)).astype(dt)
            return np.where(inside, shifted, dt.type(0)).astype(dt)
        shifted = np.right_shift(a, count)
        out_of_range = np.where(a < 0, dt.type(-1), dt.type(0)) if dt.kind == "i" else dt.type(0)
        return np.where(inside, shifted, out_of_range).astype(dt)

    return run


def _ipow(a: Any, b: Any, dt: np.dtype) -> Any:
    a, b = _arr(a, dt), _arr(b, dt)
    positive = np.power(a, np.maximum(b, 0).astype(dt), dtype=dt)  # modular: equal to C's squaring loop
    if dt.kind == "u":
        return positive
    negative = np.where(a == 1, dt.type(1), np.where(a == -1, np.where(b & 1, dt.type(-1), dt.type(1)), dt.type(0)))
    return np.where(b < 0, negative, positive).astype(dt)


def _int_floordiv(a: Any, b: Any, dt: np.dtype) -> Any:
    return np.floor_divide(_arr(a, dt), _arr(b, dt), dtype=dt)  # x // 0 is 0, MIN // -1 wraps


def _remainder(a: Any, b: Any, dt: np.dtype) -> Any:
    return np.remainder(_arr(a, dt), _arr(b, dt), dtype=dt)  # floor rule; x % 0 is 0 (ints)


def _pow(a: Any, b: Any, dtype: Any = None) -> Any:
    """C's ``pow`` (``semantics.complex.pow`` on complex operands).  NumPy computes a scalar (or
    broadcast) exponent 0.5 as ``sqrt``, which makes ``(-inf) ** 0.5`` nan and ``(-0.0) ** 0.5``
    -0.0 where ``pow`` gives inf and 0.0; with both operands whole arrays it calls ``pow``."""
    dt = np.dtype(dtype) if dtype is not None else np.result_type(a, b)
    if dt.kind == "c":
        return cx.pow(a, b, dt)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    a, b = (np.array(np.broadcast_to(x, shape or (1,))) for x in (a, b))  # copies: no stride-0 operand
    return np.power(a, b, dtype=dtype).reshape(shape)


def _ufunc(f: Callable[..., Any]) -> Callable[[Any, Any, np.dtype], Any]:
    return lambda a, b, dt: f(_arr(a, dt), _arr(b, dt), dtype=dt)


def _or_complex(real: Callable[[Any, Any, np.dtype], Any], complex_: Callable[[Any, Any, np.dtype], Any]) -> Any:
    """A NumPy form whose complex case is computed on the parts (``semantics.complex``), as C does."""
    return lambda a, b, dt: complex_(a, b, dt) if dt.kind == "c" else real(a, b, dt)


# ---------------------------------------------------------------- C helper bodies
def _c_floordiv(t: ScalarType, c: CText) -> str:
    if t.is_float:  # NumPy's algorithm: exact even when a / b rounds
        fmod = c.math_text("fmod", t, ["a", "b"])
        floor = c.math_text("floor", t, ["d"])
        signed_zero = c.math_text("copysign", t, [c.zero(t), "a / b"])
        return (
            f"    if (b == 0) return a / b;\n    {c.type(t)} r = {fmod};\n    {c.type(t)} d = (a - r) / b;\n"
            f"    if (r != 0 && ((b < 0) != (r < 0))) d -= 1;\n"
            "    if (d != d) return d;  /* nan: PoCL folds floor() of a constant nan to garbage */\n"
            f"    if (d == 0) return {signed_zero};\n"
            f"    {c.type(t)} f = {floor};\n    return d - f > 0.5 ? f + 1 : f;"
        )
    if t.kind == "u":
        return "    return b == 0 ? 0 : a / b;"
    U = c.unsigned(t)
    return (
        f"    if (b == 0) return 0;\n"
        f"    if (b == -1) return ({c.type(t)})(({U})0 - ({U})a);  /* MIN / -1 would trap: wrap */\n"
        f"    {c.type(t)} q = a / b;\n"
        f"    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;\n    return q;"
    )


def _c_bool_add(t: ScalarType, c: CText) -> str:
    """NumPy's ``+`` of two bools, an or (C's promotes them to int: true + true would be 2)."""
    return "    return a || b;"


def _c_mod(t: ScalarType, c: CText) -> str:
    if t.is_float:  # the result takes the divisor's sign
        fmod = c.math_text("fmod", t, ["a", "b"])
        zero = c.math_text("copysign", t, [c.zero(t), "b"])
        return (
            f"    {c.type(t)} r = {fmod};\n    if (r == 0) return {zero};\n"
            "    if ((r < 0) != (b < 0)) r += b;\n    return r;"
        )
    if t.kind == "u":
        return "    return b == 0 ? 0 : a % b;"
    return (
        "    if (b == 0 || b == -1) return 0;  /* MIN % -1 would trap */\n"
        f"    {c.type(t)} r = a % b;\n    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n    return r;"
    )


def _c_ipow(t: ScalarType, c: CText) -> str:
    neg = "" if t.kind == "u" else "    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    if t.itemsize < 4:  # C multiplies 8- and 16-bit integers as int, which 65535 * 65535 overflows
        U = c.unsigned(int32)
        mul_r, mul_a = f"r = ({c.type(t)})(({U})r * a)", f"a = ({c.type(t)})(({U})a * a)"
    else:
        mul_r, mul_a = "r *= a", "a *= a"
    return (
        f"{neg}    {c.type(t)} r = 1;\n    while (b > 0) {{\n        if (b & 1) {mul_r};\n"
        f"        b >>= 1;\n        if (b) {mul_a};  /* no square beyond the last bit */\n    }}\n    return r;"
    )


def _c_shift(left: bool) -> Callable[[ScalarType, CText], str]:
    def body(t: ScalarType, c: CText) -> str:
        U, bits = c.unsigned(t), t.itemsize * 8
        inside = f"({U})b < {bits}"
        if left:
            return f"    return {inside} ? ({c.type(t)})(({U})a << b) : 0;"
        outside = "(a < 0 ? -1 : 0)" if t.kind == "i" else "0"
        return f"    return {inside} ? a >> b : {outside};"

    return body


# ---------------------------------------------------------------- when C's operator is exact
NonNegative = Callable[[ir.Expr], bool]  # whether an expression is never negative (the emitter knows)


def _count_in_range(e: ir.BinOp, nonneg: NonNegative) -> bool:
    """A shift by a literal count in [0, bits): C's operator means the same."""
    return isinstance(e.right, ir.Lit) and 0 <= e.right.value < e.type.itemsize * 8


def _floor_agrees_with_c(e: ir.BinOp, nonneg: NonNegative) -> bool:
    """Floor and truncation agree for a never-negative integer by a positive literal."""
    return e.type.is_int and isinstance(e.right, ir.Lit) and e.right.value > 0 and nonneg(e.left)


@dataclass(frozen=True)
class BinaryOp:
    """``a <symbol> b`` on two operands of one type (the operation's, from ``types.promote``).

    ``numpy(a, b, dtype)`` is the meaning.  C writes it ``a <symbol> b`` when ``helper(t)`` is None
    (C's operator is exact for every operand of type t) or ``exact(node, nonneg)`` holds for the
    node at hand; otherwise as a call of ``gk_<name>_<type>`` whose body ``helper(t, c)`` writes,
    or, for floats, as the math function ``float_math``.
    """

    symbol: str
    name: str
    numpy: Callable[[Any, Any, np.dtype], Any]
    python: Callable[[Any, Any], Any]  # two Python literals (weak types): Python's own meaning
    int_only: bool = False
    helper: Callable[[ScalarType], Callable[[ScalarType, CText], str] | None] = lambda t: None
    exact: Callable[[ir.BinOp, NonNegative], bool] = lambda e, nonneg: False
    float_math: str | None = None  # floats: C spells the operation as this math function
    flop: bool = False  # counted as a floating-point operation by the profiler (on floats)
    complex_flops: int = 0  # the floating-point operations of the complex_helper body, counted so
    c_symbol: str = ""  # C's operator, where it differs from Python's (``//`` is ``/`` where exact)
    overflow_undefined: bool = False  # C's operator is undefined where a signed result overflows
    complex_helper: Callable[[ScalarType, CText], str] | None = None  # C body on complex operands (None: refused)

    @property
    def c_operator(self) -> str:
        return self.c_symbol or self.symbol

    def fold(self, a: Any, b: Any, t: ScalarType | None) -> Any:
        """The constant ``a op b``: Python's meaning for two literals (``t`` None), else ours at ``t``."""
        if t is None:
            return self.python(a, b)
        with np.errstate(all="ignore"):
            return np.asarray(self.numpy(t.dtype.type(a), t.dtype.type(b), t.dtype))[()]


def _int_helper(body: Callable[[ScalarType, CText], str]) -> Callable[[ScalarType], Any]:
    return lambda t: body if t.is_int else None


BINARY: dict[str, BinaryOp] = {
    op.symbol: op
    for op in [
        BinaryOp(
            "+",
            "add",
            _ufunc(np.add),
            operator.add,
            helper=lambda t: _c_bool_add if t == bool_ else None,  # C's + of two bools is an int (2)
            flop=True,
            complex_flops=2,
            overflow_undefined=True,
            complex_helper=cx.c_add,
        ),
        BinaryOp(
            "-",
            "sub",
            _ufunc(np.subtract),
            operator.sub,
            flop=True,
            complex_flops=2,
            overflow_undefined=True,
            complex_helper=cx.c_sub,
        ),
        BinaryOp(
            "*",
            "mul",
            _or_complex(_ufunc(np.multiply), cx.mul),
            operator.mul,
            flop=True,
            complex_flops=6,  # 4 products, a difference and a sum
            overflow_undefined=True,
            complex_helper=cx.c_mul,
        ),
        BinaryOp(
            "/",
            "div",
            _or_complex(_ufunc(np.true_divide), cx.div),
            operator.truediv,
            flop=True,
            complex_flops=10,  # Smith's: the ratio, 2 for the scale's divisor and 1 for it, 3 for each part
            complex_helper=cx.c_div,
        ),
        BinaryOp(
            "//",
            "floordiv",
            lambda a, b, dt: _int_floordiv(a, b, dt) if dt.kind in "iu" else np.floor_divide(a, b, dtype=dt),
            operator.floordiv,
            helper=lambda t: _c_floordiv,
            exact=_floor_agrees_with_c,
            c_symbol="/",
        ),
        BinaryOp("%", "mod", _remainder, operator.mod, helper=lambda t: _c_mod, exact=_floor_agrees_with_c),
        BinaryOp(
            "**",
            "ipow",
            lambda a, b, dt: _ipow(a, b, dt) if dt.kind in "iu" else _pow(_arr(a, dt), _arr(b, dt), dt),
            operator.pow,
            helper=_int_helper(_c_ipow),
            float_math="pow",
            complex_helper=cx.c_pow,
        ),
        BinaryOp("<<", "shl", _shift(True), operator.lshift, True, lambda t: _c_shift(True), _count_in_range),
        BinaryOp(">>", "shr", _shift(False), operator.rshift, True, lambda t: _c_shift(False), _count_in_range),
        BinaryOp("&", "and", _ufunc(np.bitwise_and), operator.and_, True),
        BinaryOp("|", "or", _ufunc(np.bitwise_or), operator.or_, True),
        BinaryOp("^", "xor", _ufunc(np.bitwise_xor), operator.xor, True),
    ]
}


@dataclass(frozen=True)
class CompareOp:
    """``a <symbol> b`` on two operands of one type, giving a bool; C's operator is exact
    (complex operands: the ``complex_helper`` body; an entry without one is refused on them)."""

    symbol: str
    numpy: Callable[[Any, Any], Any]
    python: Callable[[Any, Any], Any]
    name: str = ""  # names the C helper (``gk_<name>_<type>``)
    complex_helper: Callable[[ScalarType, CText], str] | None = None

    def fold(self, a: Any, b: Any) -> bool:
        return bool(self.python(a, b))


COMPARE: dict[str, CompareOp] = {
    op.symbol: op
    for op in [
        CompareOp("<", np.less, operator.lt),
        CompareOp("<=", np.less_equal, operator.le),
        CompareOp(">", np.greater, operator.gt),
        CompareOp(">=", np.greater_equal, operator.ge),
        CompareOp("==", np.equal, operator.eq, "eq", cx.c_eq),
        CompareOp("!=", np.not_equal, operator.ne, "ne", cx.c_ne),
    ]
}


@dataclass(frozen=True)
class UnaryOp:
    """``-x``, ``~x`` (on the operand's own type) or ``not x`` (bool); C writes ``c_symbol``."""

    symbol: str
    c_symbol: str
    numpy: Callable[[Any, np.dtype], Any]
    python: Callable[[Any], Any]
    overflow_undefined: bool = False  # C's operator is undefined where a signed result overflows
    complex_helper: Callable[[ScalarType, CText], str] | None = None  # C body on complex operands (None: refused)


UNARY: dict[str, UnaryOp] = {
    op.symbol: op
    for op in [
        UnaryOp(
            "-",
            "-",
            lambda v, dt: np.negative(v, dtype=dt),
            operator.neg,
            overflow_undefined=True,
            complex_helper=cx.c_neg,
        ),
        UnaryOp("~", "~", lambda v, dt: np.invert(v, dtype=dt), operator.invert),
        UnaryOp("not", "!", lambda v, dt: np.logical_not(v), operator.not_),
    ]
}


# ---------------------------------------------------------------- math functions
def _py_min_max(pick_second: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """Python's min/max on two values: the first wins ties and NaNs (``b < a ? b : a``)."""
    return lambda a, b: np.where(pick_second(b, a), b, a)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], np.int32)
_BYTE_REVERSED = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _bytes(x: np.ndarray) -> np.ndarray:
    """An integer array's bytes, a row per element, least significant first."""
    x = np.ascontiguousarray(x, x.dtype.newbyteorder("<"))
    return x.reshape(-1).view(np.uint8).reshape(-1, x.dtype.itemsize)


def _popc(x: Any) -> Any:
    x = np.asarray(x)
    return _BYTE_BITS[_bytes(x)].sum(axis=1, dtype=np.int32).reshape(x.shape)


def _bit_length(x: np.ndarray) -> np.ndarray:
    """Bits up to the highest set bit of the unsigned pattern (0 for 0)."""
    u = x.view(unsigned_of_dtype(x.dtype)).copy()
    shift = 1
    while shift < 8 * x.dtype.itemsize:  # every bit below the highest set one set too
        u |= u >> u.dtype.type(shift)
        shift *= 2
    return _popc(u)


def _clz(x: Any) -> Any:
    x = np.asarray(x)
    return (np.int32(8 * x.dtype.itemsize) - _bit_length(x)).astype(np.int32)


def _ffs(x: Any) -> Any:
    """1 + the index of the lowest set bit; 0 for 0."""
    x = np.asarray(x)
    u = x.view(unsigned_of_dtype(x.dtype))
    return _bit_length(u & (~u + u.dtype.type(1))).astype(np.int32)


def _brev(x: Any) -> Any:
    x = np.asarray(x)
    flipped = _BYTE_REVERSED[_bytes(x)][:, ::-1]
    return np.ascontiguousarray(flipped).view(x.dtype.newbyteorder("<")).astype(x.dtype).reshape(x.shape)


def _fma_one(a: float, b: float, c: float, dt: np.dtype) -> Any:
    """``a * b + c`` rounded once to ``dt`` (NumPy has no fused multiply-add: exact rationals)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return dt.type(np.float64(a) * np.float64(b) + np.float64(c))  # inf and nan as the hardware's
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # the sign of an exact zero: as a * b + c in round-to-nearest
        return dt.type(np.float64(a) * np.float64(b) + np.float64(c))
    try:
        near = dt.type(float(exact))  # correctly rounded to float64; float32 may be one ulp off
    except OverflowError:
        return dt.type(-math.inf if exact < 0 else math.inf)
    if not np.isfinite(near):
        return near
    best, d_best = near, abs(Fraction(float(near)) - exact)
    for other in (np.nextafter(near, dt.type(-np.inf)), np.nextafter(near, dt.type(np.inf))):
        if not np.isfinite(other):
            continue
        d_other = abs(Fraction(float(other)) - exact)
        if d_other < d_best or (d_other == d_best and int(other.view(unsigned_of_dtype(dt))) % 2 == 0):
            best, d_best = other, d_other
    return best


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``fma`` for whole arrays (the simulator runs it per lane): the product of two
    float32s is exact in float64, the sum's rounding error exact by TwoSum; rounding the
    float64 sum to float32 is then right but where the sum is a float32 midpoint and the
    error says which side the exact value lies on."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    with np.errstate(all="ignore"):
        s = p + c64
        back = s - p
        err = (p - (s - back)) + (c64 - back)  # s + err == p + c exactly (where all are finite)
        r = s.astype(np.float32)
        d = s - r.astype(np.float64)  # where s lies from its float32 rounding
        toward = np.nextafter(r, np.where(d > 0, np.float32(np.inf), np.float32(-np.inf)))
        midpoint = (d != 0) & (toward.astype(np.float64) - s == d) & np.isfinite(toward)
    fix = midpoint & np.isfinite(err) & (err != 0) & ((err > 0) == (d > 0))
    return np.where(fix, toward, r)


def _fma(a: Any, b: Any, c: Any) -> Any:
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    dt = np.result_type(a, b, c)
    if dt == np.float32:
        return _fma32(a, b, c)
    out = np.array([_fma_one(float(x), float(y), float(z), dt) for x, y, z in zip(a.flat, b.flat, c.flat)], dt)
    return out.reshape(a.shape)


def _rsqrt(x: Any) -> Any:
    x = np.asarray(x)
    return x.dtype.type(1) / np.sqrt(x)


def _exp10(x: Any) -> Any:
    x = np.asarray(x)
    return np.power(x.dtype.type(10), x)


def _c99(fn: Callable[[float], float], at: Callable[[float], float]) -> Callable[[Any], Any]:
    """A function of Python's ``math`` with C99's values where Python raises (poles, overflow,
    domain errors): ``at(x)`` gives them."""

    def one(x: float) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return at(x)

    def run(x: Any) -> Any:
        x = np.asarray(x)
        return np.vectorize(one, otypes=[np.float64])(x).astype(x.dtype)

    return run


def _tgamma_at(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)  # a pole: the sign of the zero
    if x == math.inf or (x > 0 and not math.isnan(x)):
        return math.inf  # overflow
    return math.nan  # negative integers and -inf


def _remainder(x: Any, y: Any) -> Any:
    """IEEE remainder (C's ``remainder``): x - n*y with n the integer nearest x/y, ties to even."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))

    def one(a: float, b: float) -> float:
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
            return math.nan
        return a if math.isinf(b) else math.remainder(a, b)

    return np.vectorize(one, otypes=[np.float64])(x, y).astype(np.result_type(x, y))


def _c_scaled(factor: float) -> Callable[[ScalarType, CText], str]:
    """``degrees``/``radians``: a multiplication by the constant, as NumPy's (in the operand's type)."""
    return lambda t, c: f"    return a * ({c.type(t)}){factor!r};"


def _c_ffs(t: ScalarType, c: CText) -> str:
    """``ffs`` where the dialect has none: the bits below the lowest set one, counted, plus one."""
    U = c.unsigned(t)
    low = f"(({U})a & (0 - ({U})a))"
    return f"    return a == 0 ? 0 : (int){c.math_text('popc', t, [f'({c.type(t)})({low} - 1)'])} + 1;"


def _c_brev(t: ScalarType, c: CText) -> str:
    """``brev`` where the dialect has none: halves swapped, then quarters... then neighbouring bits."""
    U, bits = c.unsigned(t), 8 * t.itemsize
    lines = [f"    {U} u = ({U})a;"]
    width = bits // 2
    while width >= 1:
        mask = (1 << bits) - 1
        pattern = 0
        for start in range(0, bits, 2 * width):
            pattern |= ((1 << width) - 1) << start
        pattern &= mask
        suffix = "UL" if bits == 64 else "u"
        lines.append(
            f"    u = ((u >> {width}) & ({U})0x{pattern:x}{suffix}) | ((u & ({U})0x{pattern:x}{suffix}) << {width});"
        )
        width //= 2
    lines.append(f"    return ({c.type(t)})u;")
    return "\n".join(lines)


@dataclass(frozen=True)
class MathFunc:
    """A math intrinsic: its NumPy meaning (simulator and constant folder alike) and how C calls it.

    The dialect's ``math`` table spells it by name and type; where C's function differs from
    the meaning on some operands (float min/max and NaN), ``helper`` is the body C uses.
    ``typing`` is 'bits' (an integer operand, an int32 count), 'int' (an integer operand and
    result), 'float' (NumPy ufunc rules: integers compute in float64), 'same' (the
    promoted operand type, e.g. min/max) or 'abs'.
    """

    name: str
    nargs: int
    numpy: Callable[..., Any]
    predicate: bool = False  # returns bool (isnan...)
    typing: str = "float"
    float_helper: str | Callable[[ScalarType, CText], str] | None = None  # C body for floats, where C's differs
    int_helper: Callable[[ScalarType, CText], str] | None = None  # C body where a dialect has no spelling
    doc: str = ""  # for gpukern's own functions (``gk.popc``): what it computes
    complex_helper: Callable[[ScalarType, CText], str] | None = None  # C body on complex operands (None: refused)
    # per operand, a type of its own ('int32': ldexp's exponent, as C's int parameter); else the operation's
    arg_types: tuple[str | None, ...] = ()
    # a function of several results (``frexp``): each item's type, 'same' for the operation's
    results: tuple[str, ...] = ()
    # C for one with several results: the body of a helper that fills the fields v0, v1... of a struct
    # ``r`` of its tuple type (the emitter declares and returns ``r``); operand ``a``
    tuple_helper: Callable[[ScalarType, CText], str] | None = None
    # counted as one floating-point operation by the profiler (on a float or complex result);
    # taking a complex number apart or putting it together is no arithmetic
    flop: bool = True

    def operand_dtype(self, k: int, t: np.dtype) -> np.dtype:
        """The type operand ``k`` is computed in when the operation's type is ``t``."""
        fixed = self.arg_types[k] if k < len(self.arg_types) else None
        return np.dtype(fixed) if fixed is not None else t

    def result_dtypes(self, t: np.dtype) -> tuple[np.dtype, ...]:
        """The items' types of a function of several results, for operations of type ``t``."""
        return tuple(t if r == "same" else np.dtype(r) for r in self.results)

    def __call__(self, *args: Any) -> Any:
        """On the host, the same meaning (NumPy typing: Python ints are int64, floats float64)."""
        if len(args) != self.nargs:
            raise TypeError(f"{self.name}() takes {self.nargs} argument(s), not {len(args)}")
        t = np.result_type(*[np.asarray(a) for k, a in enumerate(args) if self.operand_dtype(k, None) is None])
        if self.typing == "float" and t.kind != "f":
            t = np.dtype(np.float64)
        with np.errstate(all="ignore"):
            out = self.numpy(*[_arr(a, self.operand_dtype(k, t)) for k, a in enumerate(args)])
        if self.results:
            return tuple(np.asarray(o).astype(d)[()] for o, d in zip(out, self.result_dtypes(t)))
        return np.asarray(out)[()]

    def evaluate(self, args: list[Any], t: ScalarType) -> Any:
        """The value at run time (or of constants) for operands already of type ``t`` (a tuple of
        arrays for a function of several results); a float16 function computes in float32 and
        rounds (``types.compute_type``), as NumPy's half loops do."""
        ct = compute_type(t)
        if ct != t:
            # (an operand of a type of its own, ldexp's int exponent, stays as it is)
            wide = [
                _arr(a, self.operand_dtype(k, t.dtype)).astype(self.operand_dtype(k, ct.dtype))
                for k, a in enumerate(args)
            ]
            out = self.evaluate(wide, ct)
            with np.errstate(all="ignore"):  # overflow to inf is the rounding's meaning
                if self.results:
                    return tuple(np.asarray(o).astype(d) for o, d in zip(out, self.result_dtypes(t.dtype)))
                return out if self.predicate else np.asarray(out).astype(t.dtype)
        with np.errstate(all="ignore"):
            out = self.numpy(*[_arr(a, self.operand_dtype(k, t.dtype)) for k, a in enumerate(args)])
        if self.results:
            return tuple(np.asarray(o).astype(d, copy=False) for o, d in zip(out, self.result_dtypes(t.dtype)))
        if self.predicate:
            return out
        return np.asarray(out).astype(self.result_type(t).dtype, copy=False)

    def result_type(self, t: ScalarType) -> ScalarType:
        """The type of the result for operands of type ``t``."""
        from ..types import int32

        if self.typing == "bits":
            return int32
        if self.typing == "make":
            return complex_of(t)
        if t.is_complex and self.typing in ("abs", "part"):
            return component(t)
        return t


def _lgamma_at(x: float) -> float:
    return x if math.isnan(x) else math.inf  # the poles (0 and the negative integers) and overflow


_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66)]
_BERNOULLI += [Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798)]


def _lgamma_exact(x: float) -> float:
    """log|gamma(x)| correctly rounded (to 80 digits, then to a float): Stirling's series beyond 100,
    reached by the recurrence, and the reflection formula below 0.5.  Python's ``math.lgamma`` is
    a few units in the last place off (3 at x = 3) and far off near its roots."""
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return _lgamma_at(x)
    if x in (1.0, 2.0):
        return 0.0  # the two rational roots
    with localcontext() as cx:
        cx.prec = 80
        z = Decimal(x)
        if z < Decimal("0.5"):  # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
            r = z - z.to_integral_value(rounding=ROUND_HALF_EVEN)  # |sin(pi x)| = |sin(pi r)|, |r| <= 1/2
            a = _PI * r
            total, term, k = a, -a * a * a / 6, 3
            while abs(term) > abs(total) * Decimal(10) ** -75:  # sin(pi r) by its series
                total += term
                term *= -a * a / ((k + 1) * (k + 2))
                k += 2
            return float((_PI / abs(total)).ln() - _lgamma_decimal(1 - z))
        return float(_lgamma_decimal(z))


def _lgamma_decimal(z: Decimal) -> Decimal:
    shift = Decimal(1)
    while z < 100:  # gamma(z) = gamma(z + 1) / z; from 100 on, the series is exact to 1e-38
        shift *= z
        z += 1
    total = (z - Decimal("0.5")) * z.ln() - z + (2 * _PI).ln() / 2
    power = z
    for k, b in enumerate(_BERNOULLI, start=1):
        total += Decimal(b.numerator) / (Decimal(b.denominator) * (2 * k) * (2 * k - 1) * power)
        power *= z * z
    return total - shift.ln()


def _lgamma(x: Any) -> Any:
    """float32: Python's lgamma in float64, rounded (its error is far below a float32's unit);
    float64: exactly, once per distinct value."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _c99(math.lgamma, _lgamma_at)(x)
    values, where = np.unique(x, return_inverse=True)
    return np.array([_lgamma_exact(float(v)) for v in values], x.dtype)[where].reshape(x.shape)


def _sincos(x: Any) -> tuple[Any, Any]:
    return np.sin(x), np.cos(x)


def _c_frexp(t: ScalarType, c: CText) -> str:
    """C's frexp: the mantissa returned, the exponent through a pointer (0 for 0, inf and nan)."""
    return f"    r.v0 = {c.math_text('frexp', t, ['a', '&r.v1'])};"


def _c_modf(t: ScalarType, c: CText) -> str:
    """C's modf: the fraction returned, the whole part through a pointer (Python's order)."""
    return f"    r.v0 = {c.math_text('modf', t, ['a', '&r.v1'])};"


def _c_sincos(t: ScalarType, c: CText) -> str:
    """sincos through two pointers (CUDA's form; a dialect whose sincos returns the sine spells it so)."""
    return f"    {c.math_text('sincos', t, ['a', '&r.v0', '&r.v1'])};"


def _sad(a: Any, b: Any, c: Any) -> Any:
    """|a - b| + c in the operands' integer type (wrapping as C's integers do)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    with np.errstate(over="ignore"):
        return (np.where(a > b, a - b, b - a) + c).astype(a.dtype)


def _c_sad(t: ScalarType, c: CText) -> str:
    """In the unsigned type: C's signed overflow is undefined, NumPy's (and the hardware's) wraps."""
    U = c.unsigned(t)
    return f"    return ({c.type(t)})((a > b ? ({U})a - ({U})b : ({U})b - ({U})a) + ({U})c);"


def _m(name: str, fn: Callable[..., Any], nargs: int = 1, **kw: Any) -> MathFunc:
    return MathFunc(name, nargs, fn, **kw)


MATH: dict[str, MathFunc] = {
    f.name: f
    for f in [
        _m("sqrt", np.sqrt, complex_helper=cx.c_sqrt),
        _m("exp", np.exp, complex_helper=cx.c_exp),
        _m("exp2", np.exp2),
        _m("expm1", np.expm1),
        _m("log", np.log, complex_helper=cx.c_log),
        _m("log2", np.log2),
        _m("log10", np.log10, complex_helper=cx.c_log10),
        _m("log1p", np.log1p),
        _m("sin", np.sin),
        _m("cos", np.cos),
        _m("tan", np.tan),
        _m("asin", np.arcsin),
        _m("acos", np.arccos),
        _m("atan", np.arctan),
        _m("sinh", np.sinh),
        _m("cosh", np.cosh),
        _m("tanh", np.tanh),
        _m("asinh", np.arcsinh),
        _m("acosh", np.arccosh),
        _m("atanh", np.arctanh),
        _m("floor", np.floor),
        _m("ceil", np.ceil),
        _m("trunc", np.trunc),
        _m("fabs", np.fabs),
        _m("erf", _erf),
        _m("erfc", _erfc),
        _m("atan2", np.arctan2, 2),
        _m("pow", _pow, 2, complex_helper=cx.c_pow),
        _m("fmod", np.fmod, 2),
        _m("copysign", np.copysign, 2),
        _m("hypot", np.hypot, 2),
        _m("isnan", np.isnan, predicate=True),
        _m("isinf", np.isinf, predicate=True),
        _m("isfinite", np.isfinite, predicate=True),
        _m("cbrt", np.cbrt),
        _m("degrees", np.degrees, float_helper=_c_scaled(180.0 / math.pi)),
        _m("radians", np.radians, float_helper=_c_scaled(math.pi / 180.0)),
        _m("tgamma", _c99(math.gamma, _tgamma_at)),  # Python's math.gamma
        _m("remainder", _remainder, 2),
        _m("rsqrt", _rsqrt, doc="rsqrt(x): 1 / sqrt(x) (CUDA rsqrtf, OpenCL rsqrt; not correctly rounded)."),
        _m("exp10", _exp10, doc="exp10(x): 10 ** x (CUDA exp10f, OpenCL exp10)."),
        _m("nextafter", np.nextafter, 2),
        _m("fma", _fma, 3, doc="fma(a, b, c): a * b + c with one rounding (C's fma)."),
        _m("popc", _popc, typing="bits", doc="popc(x): the number of set bits of an integer (an int32)."),
        _m("clz", _clz, typing="bits", doc="clz(x): the number of zero bits above the highest set bit (an int32)."),
        _m("ffs", _ffs, typing="bits", int_helper=_c_ffs, doc="ffs(x): 1 + the index of the lowest set bit; 0 for 0."),
        _m("brev", _brev, typing="int", int_helper=_c_brev, doc="brev(x): the bits of an integer in reverse order."),
        _m("sad", _sad, 3, typing="int", int_helper=_c_sad, doc="sad(a, b, c): |a - b| + c of integers (CUDA __sad)."),
        _m("frexp", np.frexp, results=("same", "int32"), tuple_helper=_c_frexp),  # (mantissa, exponent)
        _m("modf", np.modf, results=("same", "same"), tuple_helper=_c_modf),  # (fraction, whole part)
        _m(
            "sincos",
            _sincos,
            results=("same", "same"),
            tuple_helper=_c_sincos,
            doc="sincos(x): (sin(x), cos(x)) in one call (CUDA sincosf, OpenCL sincos).",
        ),
        _m("ldexp", np.ldexp, 2, arg_types=(None, "int32")),  # x * 2**n; n converted to int32, C's int
        _m("rint", np.rint),  # to the nearest whole number, ties to even: what round() computes
        _m("lgamma", _lgamma),  # log|gamma(x)|
        _m("abs", np.abs, typing="abs", complex_helper=cx.c_abs),  # wraps at MIN, like NumPy and like C in practice
        _m("min", _py_min_max(np.less), 2, typing="same", float_helper="    return b < a ? b : a;"),
        _m("max", _py_min_max(np.greater), 2, typing="same", float_helper="    return b > a ? b : a;"),
    ]
}

MATH_ALIASES = {"gamma": "tgamma"}  # Python's name -> the entry (C's name)
_NUMPY_ALIASES = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "power": "pow",
}


def _python_objects() -> dict[int, MathFunc]:
    """The Python objects that name each math function: ``math.sqrt``, ``np.sqrt``, ``abs``..."""
    import builtins

    table: dict[int, MathFunc] = {}
    for name, fn in MATH.items():
        for module in (math, np, builtins):
            if name not in ("min", "max", "abs") and module is builtins:
                continue
            if name in ("min", "max", "abs") and module is not builtins:
                continue
            if hasattr(module, name):
                table[id(getattr(module, name))] = fn
    for np_name, name in _NUMPY_ALIASES.items():
        table[id(getattr(np, np_name))] = MATH[name]
    for math_name, name in MATH_ALIASES.items():
        table[id(getattr(math, math_name))] = MATH[name]
    for fn in MATH.values():  # gpukern's own (gk.popc...): the entries themselves
        table[id(fn)] = fn
    return table


_BY_ID = _python_objects()


def _cmath_objects() -> dict[int, MathFunc]:
    """``cmath.exp``...: the entries defined on complex operands, under cmath's names."""
    import cmath

    return {id(getattr(cmath, n)): f for n, f in MATH.items() if f.complex_helper and hasattr(cmath, n)}


_BY_ID.update(_cmath_objects())


def math_func(obj: Any) -> MathFunc | None:
    """The math function ``obj`` is (``math.sqrt``, ``np.sqrt``, ``abs``, ``min``...), or None."""
    return _BY_ID.get(id(obj))


# ---------------------------------------------------------------- complex parts
# Functions of complex numbers only, reached as ``z.real``, ``z.imag``, ``z.conjugate()`` and
# ``complex64(re, im)`` (not by identity): typing 'part' (a complex operand) or 'make' (two floats).
COMPLEX: dict[str, MathFunc] = {
    f.name: f
    for f in [
        MathFunc("real", 1, cx.real, typing="part", complex_helper=cx.c_real, flop=False),
        MathFunc("imag", 1, cx.imag, typing="part", complex_helper=cx.c_imag, flop=False),
        MathFunc("conj", 1, cx.conj, typing="same", complex_helper=cx.c_conj, flop=False),
        MathFunc("complex", 2, cx.construct, typing="make", complex_helper=cx.c_construct, flop=False),
    ]
}


def function(name: str) -> MathFunc:
    """The entry an ``ir.MathCall`` names (``MATH``, or ``COMPLEX`` for the parts of complex numbers)."""
    return MATH[name] if name in MATH else COMPLEX[name]


# ---------------------------------------------------------------- atomics
# the element types atomics work on (a subset of an entry's where ``types`` says so); the 8- and
# 16-bit ones have no instruction on any device: a compare-and-swap loop on the aligned 32-bit word
# that holds the element updates it (``Dialect.word_address``)
ATOMIC_TYPES = (
    *("int32", "uint32", "int64", "uint64", "float32", "float64"),
    *("int8", "uint8", "int16", "uint16", "float16"),
)
_INT_ATOMIC_TYPES = ("int32", "uint32", "int64", "uint64", "int8", "uint8", "int16", "uint16")


@dataclass(frozen=True)
class AtomicOp:
    """``atomic_<name>(a, i, *operands)``: replaces ``a[i]`` by ``update(old, *operands)`` and
    returns the old value.  C uses the dialect's native instruction for (name, type) where it
    has one, else a compare-and-swap loop that stores ``c_update`` (C over ``old``, ``v``, ``cmp``).
    ``types``: the element types it is defined on (the front end refuses the others)."""

    name: str
    nargs: int  # operands after the array and index
    update: Callable[..., Any]  # NumPy: old, *operands -> new (elementwise)
    c_update: str
    types: tuple[str, ...] = ATOMIC_TYPES
    why_types: str = ""  # why the entry is defined on fewer types, for the front end's message
    on_integers: str = ""  # the entry this one equals on integers (nanmax: max), whose C the emitter writes


def _bits_equal(old: Any, cmp: Any) -> Any:
    """CAS compares bit patterns (a NaN matches the same NaN; -0.0 does not match 0.0)."""
    old = np.asarray(old)
    u = unsigned_of_dtype(old.dtype)
    return old.view(u) == np.asarray(cmp, old.dtype).view(u)


def _inc(old: Any, v: Any) -> Any:
    """CUDA's atomicInc: counts up to ``v``, then wraps to 0 (``old >= v ? 0 : old + 1``)."""
    old = np.asarray(old)
    dt = old.dtype
    with np.errstate(all="ignore"):
        return np.where(old >= np.asarray(v, dt), dt.type(0), old + dt.type(1)).astype(dt)


def _dec(old: Any, v: Any) -> Any:
    """CUDA's atomicDec: counts down to 0, then wraps to ``v``; a value above ``v`` also becomes ``v``
    (``(old == 0 || old > v) ? v : old - 1``)."""
    old = np.asarray(old)
    dt = old.dtype
    v = np.asarray(v, dt)
    with np.errstate(all="ignore"):
        return np.where((old == 0) | (old > v), v, old - dt.type(1)).astype(dt)


def _nanmax(old: Any, v: Any) -> Any:
    """A NaN is a missing value: ``v`` replaces ``old`` where it is greater, or where ``old`` is NaN
    and ``v`` is not; the old value stays on ties and when ``v`` is NaN (Numba's atomic.nanmax)."""
    old, v = np.asarray(old), np.asarray(v, np.asarray(old).dtype)
    return np.where((v > old) | (np.isnan(old) & ~np.isnan(v)), v, old)


def _nanmin(old: Any, v: Any) -> Any:
    """``_nanmax`` with ``<`` (Numba's atomic.nanmin)."""
    old, v = np.asarray(old), np.asarray(v, np.asarray(old).dtype)
    return np.where((v < old) | (np.isnan(old) & ~np.isnan(v)), v, old)


_WRAPPING = (
    "it wraps like CUDA's atomicInc/atomicDec, which are defined on unsigned counters (32-bit; 64-bit as "
    "Numba-CUDA's atomic.inc/dec)"
)
_COUNTERS = ("uint32", "uint64")

ATOMIC: dict[str, AtomicOp] = {
    op.name: op
    for op in [
        AtomicOp("add", 1, np.add, "old + v"),  # ufuncs: the simulator folds many updates with accumulate
        AtomicOp("sub", 1, np.subtract, "old - v"),
        AtomicOp("min", 1, lambda old, v: np.where(v < old, v, old), "v < old ? v : old"),
        AtomicOp("max", 1, lambda old, v: np.where(v > old, v, old), "v > old ? v : old"),
        AtomicOp("exch", 1, lambda old, v: v, "v"),
        AtomicOp("cas", 2, lambda old, cmp, v: np.where(_bits_equal(old, cmp), v, old), "cmp"),
        AtomicOp("and", 1, np.bitwise_and, "old & v", _INT_ATOMIC_TYPES, "a bitwise operation"),
        AtomicOp("or", 1, np.bitwise_or, "old | v", _INT_ATOMIC_TYPES, "a bitwise operation"),
        AtomicOp("xor", 1, np.bitwise_xor, "old ^ v", _INT_ATOMIC_TYPES, "a bitwise operation"),
        AtomicOp("inc", 1, _inc, "old >= v ? 0 : old + 1", _COUNTERS, _WRAPPING),
        AtomicOp("dec", 1, _dec, "(old == 0 || old > v) ? v : old - 1", _COUNTERS, _WRAPPING),
        # NaN a missing value (floats; on integers the same as min/max)
        AtomicOp("nanmax", 1, _nanmax, "(v > old || (old != old && v == v)) ? v : old", on_integers="max"),
        AtomicOp("nanmin", 1, _nanmin, "(v < old || (old != old && v == v)) ? v : old", on_integers="min"),
    ]
}
