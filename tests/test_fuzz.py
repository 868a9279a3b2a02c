"""Differential fuzzing: random well-typed kernels on every backend against NumPy.

Hypothesis draws input arrays (int32, int64, uint32, float32, float64 -- small values,
edge values such as INT_MIN / UINT_MAX, random full-range values, floats from small
dyadic rationals to 1e30 / 1e200, +-0, +-inf and NaN), then a kernel over them:
expression trees with ``+ - * / // % **`` (integer exponents 0..3), shifts, ``& | ^ ~``,
unary ``-``, comparisons (also chained, and against out-of-range literals), ``and`` /
``or`` / ``not``, ``min``, ``max``, ``abs``, casts (``int32(x)`` ... ``bool_(x)``,
``int(x)``, ``float(x)``), ``math.*`` / ``np.*`` functions, ternaries with boolean or
numeric (truthiness) conditions, weak Python literals, a typed scalar parameter, and
the statements ``if``/``elif``/``else`` assigning a local and a bounded
``for j in range(...)`` (0..4 iterations) accumulating into a local.  The kernel's
source text is written to a file and imported (gpukern reads it with ``inspect``), run
on each backend of ``gk.available_backends()``, and compared with the same tree
evaluated by NumPy 2 (NEP 50 promotion, weak literals, ``//`` / ``%`` floor,
``min(a, b) == b if b < a else a``, math functions typed like ufuncs with integers
in float64, locals typed by the join of their assignments).

Tolerances (see ``fuzz_support``):

* integers and bools: exact;
* floats: ``|got - expected| <= err + tiny`` where ``err`` is a first-order error
  bound grown through the tree: every float operation (arithmetic, conversion, or math
  function) adds ``rtol * |result|`` with ``rtol = 1e-5`` for float32 and ``1e-12`` for
  float64 results, and operand errors propagate through the derivative.  For one
  operation on exact inputs this is ``assert_allclose(rtol=1e-5 / 1e-12)``; under
  cancellation it keeps the tolerance relative to the magnitudes involved.  NaN must
  match NaN, inf must match inf of the same sign;
* elements where an error bound reaches a discontinuity (a comparison of nearly equal
  computed floats, ``floor``/``//``/``%`` or a float-to-int cast next to an integer,
  ``sqrt``/``log`` next to 0, overflow next to the largest float, ...) are not
  compared: FMA contraction or a 1-ulp different ``exp`` may legitimately flip them.

C undefined behaviour never arises: the generator looks at the actual values and does
not build signed overflow, shifts outside ``[0, width)``, left shifts of negatives,
``MIN // -1``, ``abs(MIN)`` or float-to-int casts of NaN / out-of-range values (those
casts are generated with a guard ``0.0 if math.isnan(x) else min(max(x, lo), hi)``).
Integer ``x // 0`` and ``x % 0`` (0, defined by gpukern as in NumPy) and float division
by zero (inf / nan) are generated and compared.

Regression tests at the end pin the mismatches the fuzzer found.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from fuzz_support import (
    BIN_NP,
    BINARY_MATH,
    CAST_NAMES,
    INPUT_TYPES,
    PREDICATES,
    TYPE_NAMES,
    UNARY_MATH,
    V,
    binop,
    cast,
    compare,
    conv_err,
    draw_values,
    lit,
    logic,
    math_call,
    minmax,
    select,
    unary,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from kernel_source import load_kernel as _load_kernel

import gpukern as gk
from gpukern import Array, float32, global_id, int32, uint32

BACKENDS = gk.available_backends()
FUZZ = settings(
    max_examples=int(os.environ.get("GPUKERN_FUZZ_EXAMPLES", "30")),
    deadline=None,
    # every shrinking step compiles a kernel: report the failing kernel as drawn instead
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

pytestmark = pytest.mark.skipif(not BACKENDS, reason="no backend")


# ---------------------------------------------------------------- the tree generator


class Gen:
    """Draws typed expression trees over the names in ``env``, evaluating them as it goes."""

    def __init__(self, data: st.DataObject, env: dict[str, V], consts: list[tuple[str, int | float]]):
        self.data = data
        self.env = env
        self.consts = consts  # locals assigned once to a literal: compile-time constants, weak like literals

    def draw(self, strategy: st.SearchStrategy):
        return self.data.draw(strategy)

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def leaf(self, kinds: str = "if") -> V:
        names = [k for k, v in self.env.items() if v.kind in kinds]
        return self.env[self.pick(names)]

    def literal(self, partner: V, positive: bool = False, nonzero: bool = False) -> V:
        unsigned = partner.dtype is not None and partner.dtype.kind == "u"
        lo = 0 if (unsigned or positive) else -20
        consts = [(k, v) for k, v in self.consts if v >= lo and (v != 0 or not nonzero)]
        if consts and self.draw(st.integers(0, 3)) == 0:  # a constant local: weak, like a literal
            name, value = self.pick(consts)
            return V(name, value)
        if partner.kind == "f" or self.draw(st.booleans()) and not unsigned:
            pool = [0.5, 2.0, 1.5, 3.0, 0.1, 10.0, 1.0, 0.0, -2.5, -1.0, 1e-3]
            v = self.pick([x for x in pool if (x >= lo) and (x != 0 or not nonzero)])
        else:
            v = self.draw(st.integers(lo, 20).filter(lambda x: x != 0 or not nonzero))
        return lit(v)

    def operand(self, depth: int, partner: V | None = None, **kw) -> V:
        """A typed sub-expression, or (sometimes, next to a typed partner) a weak literal."""
        if partner is not None and self.draw(st.integers(0, 3)) == 0:
            return self.literal(partner, **kw)
        return self.expr(depth)

    # -------------------------------------------------- numeric expressions
    def expr(self, depth: int) -> V:
        if depth <= 0 or self.draw(st.integers(0, 5)) == 0:
            return self.leaf()
        kind = self.pick(["arith", "arith", "intop", "unary", "minmax", "cast", "math", "ternary"])
        d = depth - 1
        a = self.expr(d)
        if kind == "arith":
            op = self.pick(["+", "-", "*", "/", "//", "%", "**"])
            if op == "**":
                if a.kind == "i":
                    e = self.pick(["lit", "typed"])
                    b = lit(self.draw(st.integers(0, 3))) if e == "lit" else self._masked(d, 3)
                else:
                    b = self.pick([lit(x) for x in (0, 1, 2, 3, 0.5, -1, 2.0, -2)] + [self._masked(d, 3)])
                return binop("**", a, b) or a
            b = self.operand(d, a, nonzero=op in ("/", "//", "%"))
            if self.draw(st.booleans()) and b.weak:
                return binop(op, b, a) or a
            return binop(op, a, b) or a
        if kind == "intop":
            if a.kind != "i":
                return a
            op = self.pick(["<<", ">>", "&", "|", "^"])
            if op in ("<<", ">>"):
                b = lit(self.draw(st.integers(0, 7))) if self.draw(st.booleans()) else self._masked(d, 15)
                return binop(op, a, b) or a
            b = self.operand(d, a)
            if b.kind != "i":
                return a
            return binop(op, a, b) or a
        if kind == "unary":
            return unary(self.pick(["-", "~", "abs"]), a) or a
        if kind == "minmax":
            b = self.operand(d, a)
            name = self.pick(["min", "max"])
            if self.draw(st.booleans()):
                a, b = b, a
            return minmax(name, a, b) or minmax(name, b, a) or (a if not a.weak else b)
        if kind == "cast":
            name = self.pick(list(CAST_NAMES))
            if name == "bool_":
                return a
            return cast(name, a)
        if kind == "math":
            ns = self.pick(["math", "np"])
            if self.draw(st.integers(0, 2)) == 0:
                name = self.pick(BINARY_MATH)
                b = self.operand(d, a) if name != "pow" else self.pick([lit(2.0), lit(0.5), lit(3), self.expr(d)])
                if b.weak and a.kind == "i":
                    b = lit(float(b.val))
                return math_call(name, [a, b], ns) or a
            return math_call(self.pick(list(UNARY_MATH)), [a], ns) or a
        # ternary
        b = self.operand(d, a)
        c = self.cond(d)
        r = select(c, a, b, f"({a.src} if {c.src} else {b.src})")
        return r or a

    def _masked(self, depth: int, mask: int) -> V:
        """A typed integer in [0, mask]: ``(e & mask)``."""
        e = self.expr(depth)
        if e.kind != "i":
            e = cast(self.pick(["int32", "int64", "uint32"]), e)
        return binop("&", e, lit(mask))

    # -------------------------------------------------- booleans and conditions
    def bexpr(self, depth: int) -> V:
        kind = self.pick(["cmp", "cmp", "cmp", "chain", "logic", "not", "pred", "bits", "cast"])
        d = max(depth - 1, 0)
        if kind in ("logic", "not", "bits") and depth > 0:
            x = self.bexpr(d)
            if kind == "not":
                return V(f"(not {x.src})", ~x.val, 0.0, x.frag)
            y = self.bexpr(d)
            if kind == "logic":
                return logic(self.pick(["and", "or"]), x, y)
            return binop(self.pick(["&", "|", "^"]), x, y)
        if kind == "pred":
            return math_call(self.pick(list(PREDICATES)), [self.expr(d)], self.pick(["math", "np"]))
        if kind == "cast":
            return cast("bool_", self.expr(d))
        a = self.expr(d)
        if self.draw(st.integers(0, 3)) == 0 and a.kind == "i":  # decided by value, as in NumPy 2
            b = lit(self.pick([-1, -(2**31) - 1, 2**31, 3_000_000_000, 2**40, -(2**40), 0]))
        else:
            b = self.operand(d, a)
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        if kind == "chain":
            c = self.expr(d)
            op2 = self.pick(["<", "<=", ">", ">=", "==", "!="])
            x, y = compare(op, a, b), compare(op2, b, c)
            if x is None or y is None:
                return compare("<", a, c) or self.bexpr(0)
            r = V(f"({a.src} {op} {b.src} {op2} {c.src})", x.val & y.val, 0.0, x.frag | (x.val & y.frag))
            return r
        return compare(op, a, b) or compare(op, a, self.expr(d)) or cast("bool_", a)

    def cond(self, depth: int) -> V:
        """A condition: a bool, or any number by its truth (also under ``and`` / ``or`` / ``not``)."""
        kind = self.pick(["bool", "bool", "number", "logic", "not"])
        if kind == "bool":
            return self.bexpr(depth)
        if kind == "number":
            return self.expr(depth)
        if kind == "not":
            return unary("not", self.expr(depth))
        return logic(self.pick(["and", "or"]), self.cond(max(depth - 1, 0)), self.expr(max(depth - 1, 0)))


# ---------------------------------------------------------------- kernels


def load_kernel(source: str):
    return _load_kernel(source, "fuzz")


HEADER = """\
import math
import numpy as np
import gpukern as gk
from gpukern import Array, bool_, float32, float64, int32, int64, uint32, global_id

"""


def tile(v: V, reps: int) -> V:
    def t(x):
        return np.tile(np.asarray(x), reps) if np.ndim(x) else x

    return V(v.src, t(v.val), t(v.err), t(v.frag))


def draw_case(data: st.DataObject, statements: bool):
    """Inputs, kernel source, expected outputs (value, err, fragile) for one example."""
    n = data.draw(st.integers(1, 48), label="n")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    types = [data.draw(st.sampled_from(INPUT_TYPES)) for _ in range(4)]
    arrays = [draw_values(rng, t, n) for t in types[:3]]
    scalar = np.dtype(types[3]).type(draw_values(rng, types[3], 1)[0])
    env = {name: V(name, arr) for name, arr in zip("abc", arrays)}
    env["s"] = V("s", np.full(n, scalar, dtype=scalar.dtype))
    body: list[str] = [f"{x} = x{k}[i]" for k, x in enumerate("abc")]
    consts = [("t0", data.draw(st.integers(-5, 9))), ("t1", data.draw(st.sampled_from([0.75, -1.5, 4.0])))]
    body += [f"{name} = {value!r}" for name, value in consts]
    depth = data.draw(st.integers(1, 3 if statements else 4), label="depth")

    if statements and data.draw(st.booleans(), label="if"):
        g = Gen(data, env, consts)
        c1 = g.cond(1)
        va, vb = g.expr(depth), g.operand(depth, None)
        if va.weak and vb.weak:
            vb = g.expr(depth)
        if data.draw(st.booleans(), label="elif"):
            c2, vc = g.cond(1), g.operand(depth, va)
            try:  # the local's type joins all three assignments at once (0.1 stays a float64 beside one)
                joined = np.result_type(va.val, vb.val, vc.val)
            except TypeError:
                joined = None
            inner = select(c2, vb, vc, "", joined) if joined is not None else None
            r = select(c1, va, inner, "v", joined) if inner is not None else None
            if r is not None:
                body += [f"if {c1.src}:", f"    v = {va.src}", f"elif {c2.src}:", f"    v = {vb.src}"]
                body += ["else:", f"    v = {vc.src}"]
        else:
            r = select(c1, va, vb, "v")
            if r is not None:
                if data.draw(st.booleans()):
                    body += [f"if {c1.src}:", f"    v = {va.src}", "else:", f"    v = {vb.src}"]
                else:
                    body += [f"v = {vb.src}", f"if {c1.src}:", f"    v = {va.src}"]
        if r is not None:
            env["v"] = V("v", r.val, r.err, r.frag)

    if statements and data.draw(st.booleans(), label="for"):
        g = Gen(data, env, consts)
        acc0 = g.expr(depth - 1)
        form = data.draw(st.sampled_from(["range({k})", "range(1, {k})", "range({k}, 0, -1)", "range(0, {k}, 2)"]))
        k = data.draw(st.integers(0, 4), label="k")
        rng_src = form.format(k=k)
        js = list(eval(rng_src))
        benv = {name: tile(v, max(len(js), 1)) for name, v in env.items()}
        jv = np.repeat(np.array(js or [0], np.int32), n)
        # the loop variable of a range of literal bounds is weak, as a local assigned only literals
        # is (``j - c32`` is uint32); the reference models a typed int32, so the kernel says int32(j)
        benv["j"] = V("int32(j)", jv)
        gb = Gen(data, benv, consts)
        e1 = gb.expr(depth)
        op = data.draw(st.sampled_from(["+", "-", "*", "^", "max", "min"]))
        acc = _accumulate(op, acc0, e1, js, n)
        if acc is not None:
            stmt = f"acc = {op}(acc, {e1.src})" if op in ("max", "min") else f"acc {op}= {e1.src}"
            body += [f"acc = {acc0.src}", f"for j in {rng_src}:", f"    {stmt}"]
            env["acc"] = acc

    outputs: list[V] = []
    g = Gen(data, env, consts)
    for _ in range(data.draw(st.integers(1, 3), label="outputs")):
        e = g.expr(depth) if data.draw(st.integers(0, 3)) else g.bexpr(depth)
        widen = {"int32": "int64", "uint32": "int64", "float32": "float64", "bool_": "int32"}
        tname = TYPE_NAMES[e.dtype]
        if tname in widen and data.draw(st.booleans()):
            tname = widen[tname]
        outputs.append((e, np.dtype(tname if tname != "bool_" else np.bool_)))
    body += [f"o{m}[i] = {e.src}" for m, (e, _) in enumerate(outputs)]

    params = [f"x{k}: Array[{t}]" for k, t in enumerate(types[:3])] + [f"s: {types[3]}"]
    params += [f"o{m}: Array[{TYPE_NAMES[dt]}]" for m, (_, dt) in enumerate(outputs)] + ["n: int32"]
    src = HEADER + "\n@gk.kernel\ndef k(" + ", ".join(params) + "):\n    i = global_id(0)\n    if i < n:\n"
    src += "".join(f"        {line}\n" for line in body)
    return n, arrays, scalar, outputs, src


def _accumulate(op: str, acc0: V, e1: V, js: list[int], n: int) -> V | None:
    """The reference of ``acc = acc0; for j in ...: acc = acc op e1(j)`` with acc's joined type."""
    if acc0.kind == "b" or e1.kind == "b" or (op == "^" and (acc0.kind != "i" or e1.kind != "i")):
        return None
    probe = np.zeros(1, acc0.dtype)
    with np.errstate(all="ignore"):
        t = np.result_type(acc0.dtype, (np.maximum if op in ("max", "min") else BIN_NP[op])(probe, e1.val[:1]))
    acc = V("acc", acc0.val.astype(t), acc0.err, acc0.frag)
    if t.kind == "f":
        acc.err = conv_err(acc0, t) + np.where(acc0.val.astype(np.float64) != acc.val, 1e-5 * np.abs(acc.val), 0)
    for it in range(len(js)):
        part = V("e", e1.val[it * n : (it + 1) * n], _part(e1.err, it, n), _part(e1.frag, it, n))
        r = minmax(op, acc, part) if op in ("max", "min") else binop(op, acc, part)
        if r is None or r.dtype != t:
            return None
        acc = V("acc", r.val, r.err, r.frag)
    return acc


def _part(x, it: int, n: int):
    return x[it * n : (it + 1) * n] if np.ndim(x) else x


def check_case(n, arrays, scalar, outputs, src):
    kern = load_kernel(src)
    for backend in BACKENDS:
        gk.set_backend(backend)
        try:
            outs = [np.zeros(n, dt) for _, dt in outputs]
            kern[(n + 63) // 64, 64](*arrays, scalar, *outs, n)
        finally:
            gk.set_backend(None)
        for m, ((e, dt), got) in enumerate(zip(outputs, outs)):
            with np.errstate(all="ignore"):
                exp = np.asarray(e.val).astype(dt)
            ok = np.asarray(e.frag) | _agree(got, exp, e.err)
            if not ok.all():
                bad = np.flatnonzero(~ok)[:5]
                lines = [f"backend {backend}: o{m} differs from NumPy at {len(np.flatnonzero(~ok))} of {n} elements"]
                for j in bad:
                    ins = ", ".join(f"x{k}={arrays[k][j]!r}" for k in range(3))
                    lines.append(f"  [{j}] {ins}, s={scalar!r}: got {got[j]!r}, expected {exp[j]!r}")
                pytest.fail("\n".join(lines) + "\n\n" + src)


def _agree(got: np.ndarray, exp: np.ndarray, err) -> np.ndarray:
    if got.dtype.kind != "f":
        return got == exp
    with np.errstate(all="ignore"):
        g, x = got.astype(np.float64), exp.astype(np.float64)
        close = np.abs(g - x) <= np.asarray(err) + np.finfo(got.dtype).tiny
        return (np.isnan(g) & np.isnan(x)) | (g == x) | close


# ---------------------------------------------------------------- the fuzz tests


@FUZZ
@given(data=st.data())
def test_fuzz_expressions(data):
    check_case(*draw_case(data, statements=False))


@FUZZ
@given(data=st.data())
def test_fuzz_statements(data):
    check_case(*draw_case(data, statements=True))


# ---------------------------------------------------------------- regressions found by the fuzzer


@gk.kernel
def k_abs_unsigned_sum(x: Array[uint32], out: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        a = x[i]
        out[i] = float(abs(a + a))


@pytest.mark.parametrize("backend", BACKENDS)
def test_abs_of_unsigned_sum_keeps_parentheses(backend):
    # OpenCL spelled abs() of a uint32 as its bare operand: float(abs(a + a)) became (float)a + a,
    # adding in float32 instead of wrapping in uint32 (got 8.589935e+09 for a = 4294967295).
    x = np.array([4294967295, 3, 2**31], np.uint32)
    out = np.zeros(3, np.float32)
    gk.set_backend(backend)
    try:
        k_abs_unsigned_sum[1, 64](x, out, 3)
    finally:
        gk.set_backend(None)
    np.testing.assert_array_equal(out, np.abs(x + x).astype(np.float32))
