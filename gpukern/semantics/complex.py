"""What the operations on complex numbers compute: NumPy forms and C helper bodies side by side.

``gpukern.semantics.ops`` holds the entries (``+``, ``abs``, ``exp``...); an entry defined on complex
operands names its NumPy form and its C body here.  A complex value is a (re, im) pair of
floats, in C a ``float2``/``double2`` (``.x`` the real part, ``.y`` the imaginary one), the
layout of NumPy's complex64/complex128.

Each NumPy form computes on the parts, with the algorithm its C body uses, so the simulator,
the constant folder and the devices agree bit for bit where the parts are computed exactly:

- ``*`` is the plain formula ``(ar*br - ai*bi, ar*bi + ai*br)`` with each product rounded on
  its own: NumPy's complex scalars and its generic loops.  (NumPy's AVX-512 loop for arrays
  fuses one product into an fma, so ``a * b`` of two NumPy arrays can differ in the last bit
  on such a CPU; its scalars do not.)  C must not fuse either: the bodies multiply through
  the dialect's ``mul_rn`` (CUDA ``__fmul_rn``) and OpenCL helpers turn contraction off.
- ``/`` is NumPy's variant of Smith's algorithm (the larger part of the divisor divides the
  smaller; a zero divisor divides each part by +0, giving NumPy's infinities and NaNs).
- ``abs`` is ``hypot`` of the parts, ``exp`` is C99's ``cexp`` and ``sqrt`` C99's ``csqrt`` (Annex G
  special cases; the square root by Friedland's Algorithm 312, CACM 10 (1967), the parts scaled by
  1/4 where the sum could overflow),
  from the device's library as the other math functions are (a few ulps on finite values;
  NaN, infinities and signed zeros in NumPy's places).
- ``a ** b`` and ``pow(a, b)`` follow NumPy's ``npy_cpow``: ``b == 0`` gives 1, ``a == 0`` gives
  0 where ``b``'s real part is positive and NaN otherwise, a whole real ``b`` below 100 in magnitude
  multiplies by squaring (``*`` above; ``1 / r`` by ``/`` for a negative one), and any other
  ``b`` is ``exp(b * log(a))`` where NumPy calls the C library's ``cpow``: ``log(a)`` is
  ``(log(m) + log1p((n / m)**2) / 2, atan2(ai, ar))`` with ``m``, ``n`` the larger and the
  smaller of ``|ar|``, ``|ai|``, which neither overflows nor loses a subnormal base's digits.
  On finite operands the two agree to a relative error (the condition of ``b * log(a)`` times
  a few ulps); with an infinite or NaN part ``*`` takes no Annex G shortcut, so NaN may stand
  where the C library finds an infinity or a zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..types import ScalarType, complex_of, component


# ---------------------------------------------------------------- NumPy forms
def make(re: Any, im: Any, dt: np.dtype) -> np.ndarray:
    """The complex numbers of dtype ``dt`` with these parts (not ``re + 1j * im``, which turns
    ``inf * 1j`` into a NaN real part)."""
    re, im = np.broadcast_arrays(np.asarray(re), np.asarray(im))
    out = np.empty(re.shape, dt)
    out.real = re
    out.imag = im
    return out


def _parts(a: Any, dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a).astype(dt, copy=False)
    return a.real, a.imag


def mul(a: Any, b: Any, dt: np.dtype) -> np.ndarray:
    (ar, ai), (br, bi) = _parts(a, dt), _parts(b, dt)
    return make(ar * br - ai * bi, ar * bi + ai * br, dt)


def div(a: Any, b: Any, dt: np.dtype) -> np.ndarray:
    (ar, ai), (br, bi) = _parts(a, dt), _parts(b, dt)
    one = component_dtype(dt).type(1)
    abr, abi = np.abs(br), np.abs(bi)
    real_larger = abr >= abi  # False where a part is NaN: the second branch, as in NumPy
    zero = (abr == 0) & (abi == 0)
    rat = np.where(real_larger, bi / br, br / bi)
    scl = one / np.where(real_larger, br + bi * rat, bi + br * rat)
    re = np.where(real_larger, (ar + ai * rat) * scl, (ar * rat + ai) * scl)
    im = np.where(real_larger, (ai - ar * rat) * scl, (ai * rat - ar) * scl)
    return make(np.where(zero, ar / abr, re), np.where(zero, ai / abr, im), dt)


def pow(a: Any, b: Any, dt: np.dtype) -> np.ndarray:  # noqa: A001 - the operation's name
    (ar, ai), (br, bi) = _parts(a, dt), _parts(b, dt)
    shape = np.broadcast_shapes(ar.shape, br.shape)
    ar, ai, br, bi = (np.broadcast_to(x, shape) for x in (ar, ai, br, bi))
    a, b = make(ar, ai, dt), make(br, bi, dt)
    f = component_dtype(dt)
    big, small = np.where(np.abs(ar) >= np.abs(ai), np.abs(ar), np.abs(ai)), np.minimum(np.abs(ar), np.abs(ai))
    ratio = np.where(big == small, f.type(1), small / big)
    log_abs = np.log(big) + np.log1p(ratio * ratio) / f.type(2)
    out = np.exp(mul(b, make(log_abs, np.arctan2(ai, ar), dt), dt)).astype(dt)
    whole = (bi == 0) & (np.trunc(br) == br) & (np.abs(br) < 100)
    if whole.any():
        n = np.where(whole, br, 0).astype(np.int64)
        k, r, p = np.abs(n), make(np.ones(shape, f), np.zeros(shape, f), dt), a
        for bit in (1 << j for j in range(7)):  # |n| < 100 < 2**7: squaring while a bit is left
            r = np.where((k & bit) != 0, mul(r, p, dt), r)
            p = mul(p, p, dt)
        r = np.where(n < 0, div(np.ones(shape, dt), r, dt), r)
        square = mul(a, a, dt)
        r = np.where(n == 1, a, np.where(n == 2, square, np.where(n == 3, mul(square, a, dt), r)))
        out = np.where(whole, r, out)
    zero_a, zero_b = (ar == 0) & (ai == 0), (br == 0) & (bi == 0)
    out = np.where(zero_a, np.where(br > 0, make(f.type(0), f.type(0), dt), make(np.nan, np.nan, dt)), out)
    return np.where(zero_b, make(f.type(1), f.type(0), dt), out)


def component_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)


def real(a: Any) -> Any:
    return np.real(a)


def imag(a: Any) -> Any:
    return np.imag(a)


def conj(a: Any) -> Any:
    return np.conjugate(a)


def construct(re: Any, im: Any) -> np.ndarray:
    """``complex64(re, im)``: parts of one float type (the entry's operand type)."""
    re = np.asarray(re)
    return make(re, im, np.dtype(np.complex128 if re.dtype == np.float64 else np.complex64))


# ---------------------------------------------------------------- C helper bodies
# ``c`` is the emitter's ``ops.CText``; a body's parameters are ``a`` (and ``b``) of type ``t``.
def _spell(t: ScalarType, c: Any) -> tuple[str, Any, Any]:
    f = component(t)
    return c.type(f), (lambda x, y: c.make_complex(t, x, y)), (lambda x, y: c.math_text("mul_rn", f, [x, y]))


def c_add(t: ScalarType, c: Any) -> str:
    return f"    return {c.make_complex(t, 'a.x + b.x', 'a.y + b.y')};"


def c_sub(t: ScalarType, c: Any) -> str:
    return f"    return {c.make_complex(t, 'a.x - b.x', 'a.y - b.y')};"


def c_mul(t: ScalarType, c: Any) -> str:
    _, make_, m = _spell(t, c)
    re = f"{m('a.x', 'b.x')} - {m('a.y', 'b.y')}"
    im = f"{m('a.x', 'b.y')} + {m('a.y', 'b.x')}"
    return f"    return {make_(re, im)};"


def c_div(t: ScalarType, c: Any) -> str:
    F, make_, m = _spell(t, c)
    f = component(t)
    return (
        f"    {F} abr = {c.math_text('fabs', f, ['b.x'])}, abi = {c.math_text('fabs', f, ['b.y'])};\n"
        "    if (abr >= abi) {\n"
        f"        if (abr == 0 && abi == 0) return {make_('a.x / abr', 'a.y / abr')};\n"
        f"        {F} rat = b.y / b.x;\n"
        f"        {F} scl = ({F})1 / (b.x + {m('b.y', 'rat')});\n"
        f"        return {make_(m('a.x + ' + m('a.y', 'rat'), 'scl'), m('a.y - ' + m('a.x', 'rat'), 'scl'))};\n"
        "    }\n"
        f"    {F} rat = b.x / b.y;\n"
        f"    {F} scl = ({F})1 / (b.y + {m('b.x', 'rat')});\n"
        f"    return {make_(m(m('a.x', 'rat') + ' + a.y', 'scl'), m(m('a.y', 'rat') + ' - a.x', 'scl'))};"
    )


def c_pow(t: ScalarType, c: Any) -> str:
    """NumPy's ``npy_cpow`` (see the module's docstring) through the helpers of ``*``, ``/`` and
    ``exp``, so each step rounds as they do."""
    F, make_, _ = _spell(t, c)
    f, T = component(t), c.type(t)
    mul, div, exp = (
        c.complex_helper(k, t, n, body) for k, n, body in (("mul", 2, c_mul), ("div", 2, c_div), ("exp", 1, c_exp))
    )
    one, nan = make_(f"({F})1", f"({F})0"), c.nan(f)

    def fn(name: str, *args: str) -> str:
        return c.math_text(name, f, list(args))

    return (
        f"    if (b.x == 0 && b.y == 0) return {one};\n"
        f"    if (a.x == 0 && a.y == 0) return b.x > 0 ? {make_(f'({F})0', f'({F})0')} : {make_(nan, nan)};\n"
        f"    if (b.y == 0 && {fn('trunc', 'b.x')} == b.x && {fn('fabs', 'b.x')} < 100) {{\n"
        "        int n = (int)b.x, k = n < 0 ? -n : n, bit = 1;\n"
        "        if (n == 1) return a;\n"
        f"        if (n == 2) return {mul}(a, a);\n"
        f"        if (n == 3) return {mul}({mul}(a, a), a);\n"
        f"        {T} r = {one}, p = a;\n"
        "        for (;;) {\n"
        f"            if (k & bit) r = {mul}(r, p);\n"
        "            bit <<= 1;\n"
        "            if (k < bit) break;\n"
        f"            p = {mul}(p, p);\n"
        "        }\n"
        f"        return n < 0 ? {div}({one}, r) : r;\n"
        "    }\n"
        f"    {F} ax = {fn('fabs', 'a.x')}, ay = {fn('fabs', 'a.y')};\n"
        f"    {F} big = ax >= ay ? ax : ay, small = ax >= ay ? ay : ax;\n"
        f"    {F} ratio = big == small ? ({F})1 : small / big;\n"
        f"    {F} log_abs = {fn('log', 'big')} + {fn('log1p', 'ratio * ratio')} / ({F})2;\n"
        f"    return {exp}({mul}(b, {make_('log_abs', fn('atan2', 'a.y', 'a.x'))}));"
    )


def c_neg(t: ScalarType, c: Any) -> str:
    return f"    return {c.make_complex(t, '-a.x', '-a.y')};"


def c_eq(t: ScalarType, c: Any) -> str:
    return "    return a.x == b.x && a.y == b.y;"


def c_ne(t: ScalarType, c: Any) -> str:
    return "    return a.x != b.x || a.y != b.y;"


def c_abs(t: ScalarType, c: Any) -> str:
    return f"    return {c.math_text('hypot', component(t), ['a.x', 'a.y'])};"


def c_real(t: ScalarType, c: Any) -> str:
    return "    return a.x;"


def c_imag(t: ScalarType, c: Any) -> str:
    return "    return a.y;"


def c_conj(t: ScalarType, c: Any) -> str:
    return f"    return {c.make_complex(t, 'a.x', '-a.y')};"


def c_construct(t: ScalarType, c: Any) -> str:
    """``complex64(re, im)``: ``t`` is the parts' float type."""
    return f"    return {c.make_complex(complex_of(t), 'a', 'b')};"


def c_cast(to: ScalarType) -> Any:
    """The body converting ``a`` (a real or complex number) to complex type ``to``."""

    def body(t: ScalarType, c: Any) -> str:
        F = c.type(component(to))
        if t.is_complex:
            return f"    return {c.make_complex(to, f'({F})a.x', f'({F})a.y')};"
        return f"    return {c.make_complex(to, f'({F})a', f'({F})0')};"

    return body


def c_exp(t: ScalarType, c: Any) -> str:
    """C99's cexp with its Annex G special cases; where exp(re) alone overflows but the result
    need not, exp(re / 2) is applied twice."""
    F, make_, _ = _spell(t, c)
    f = component(t)

    def fn(name: str, *args: str) -> str:
        return c.math_text(name, f, list(args))

    half = math.floor(math.log(float(np.finfo(f.dtype).max)))  # above it exp(x) overflows
    zero = f"({F})0"
    return (
        f"    {F} x = a.x, y = a.y;\n"
        f"    if ({fn('isfinite', 'x')}) {{\n"
        f"        if (!{fn('isfinite', 'y')}) return {make_('y - y', 'y - y')};\n"
        f"        if (y == 0) return {make_(fn('exp', 'x'), 'y')};\n"
        f"        {F} s = {fn('sin', 'y')}, co = {fn('cos', 'y')};\n"
        f"        if (x > ({F}){half}) {{\n"
        f"            {F} e = {fn('exp', 'x / 2')};\n"
        f"            return {make_('co * e * e', 's * e * e')};\n"
        "        }\n"
        f"        {F} e = {fn('exp', 'x')};\n"
        f"        return {make_('e * co', 'e * s')};\n"
        "    }\n"
        f"    if ({fn('isnan', 'x')}) return {make_('x', 'y == 0 ? y : x')};\n"
        f"    if ({fn('isfinite', 'y')}) {{\n"
        f"        {F} v = x > 0 ? x : {zero};\n"
        f"        if (y == 0) return {make_('v', 'y')};\n"
        f"        return {make_(fn('copysign', 'v', fn('cos', 'y')), fn('copysign', 'v', fn('sin', 'y')))};\n"
        "    }\n"
        f"    if (x > 0) return {make_('x', 'y - y')};\n"
        f"    return {make_(zero, fn('copysign', zero, 'y'))};"
    )


def c_sqrt(t: ScalarType, c: Any) -> str:
    """C99's csqrt: ``sqrt(x + i inf)`` is ``inf + i inf`` (whatever x), a NaN real part gives NaN,
    ``sqrt(-inf + iy)`` is ``0 + i inf``, ``sqrt(inf + iy)`` is ``inf + i0`` (the imaginary part's
    sign kept throughout); else ``t = sqrt((|x| + hypot(x, y)) / 2)`` and ``(t, y / 2t)`` for
    ``x >= 0``, ``(|y| / 2t, copysign(t, y))`` otherwise, no part cancelling another.  Parts so
    large that the sum could overflow are divided by 4 first, and parts below the smallest normal
    number multiplied by ``4**m`` (exact), the result scaled back by 2 or ``2**-m``."""
    F, make_, _ = _spell(t, c)
    f = component(t)

    def fn(name: str, *args: str) -> str:
        return c.math_text(name, f, list(args))

    fi = np.finfo(f.dtype)
    big = float(fi.max) / (1 + math.sqrt(2))  # above it |x| + hypot(x, y) may overflow
    m = fi.nmant + 1  # 4**m lifts the smallest subnormal to a normal number
    h, half, tiny = fn("hypot", "x", "y"), f"({F})0.5", f"({F}){float(fi.tiny)!r}"
    return (
        f"    {F} x = a.x, y = a.y;\n"
        f"    if (x == 0 && y == 0) return {make_(f'({F})0', 'y')};\n"
        f"    if ({fn('isinf', 'y')}) return {make_(fn('fabs', 'y'), 'y')};\n"
        f"    if ({fn('isnan', 'x')}) return {make_('x', 'x')};\n"
        f"    if ({fn('isinf', 'x')}) return x < 0 ? {make_(fn('fabs', 'y - y'), fn('copysign', 'x', 'y'))} : "
        f"{make_('x', fn('copysign', 'y - y', 'y'))};\n"
        f"    {F} back = ({F})1;\n"
        f"    if ({fn('fabs', 'x')} >= ({F}){big!r} || {fn('fabs', 'y')} >= ({F}){big!r}) {{\n"
        f"        x *= ({F})0.25; y *= ({F})0.25; back = ({F})2;\n"
        f"    }} else if ({fn('fabs', 'x')} < {tiny} && {fn('fabs', 'y')} < {tiny}) {{\n"
        f"        x *= ({F}){float(4.0**m)!r}; y *= ({F}){float(4.0**m)!r}; back = ({F}){float(2.0**-m)!r};\n"
        "    }\n"
        f"    {F} r, i;\n"
        "    if (x >= 0) {\n"
        f"        {F} s = {fn('sqrt', f'(x + {h}) * {half}')};\n"
        "        r = s; i = y / (2 * s);\n"
        "    } else {\n"
        f"        {F} s = {fn('sqrt', f'(-x + {h}) * {half}')};\n"
        f"        r = {fn('fabs', 'y')} / (2 * s); i = {fn('copysign', 's', 'y')};\n"
        "    }\n"
        f"    return {make_('r * back', 'i * back')};"
    )


def c_log(t: ScalarType, c: Any) -> str:
    """C99's clog: ``(log |z|, atan2(y, x))``; an infinite part gives ``+inf`` (whatever the other),
    a NaN part NaN, zero ``-inf`` (the angle from ``atan2``, so ``log(-0 + 0j)`` is ``-inf + i pi``).
    ``log |z|`` is ``log(big) + log1p((small / big)**2) / 2`` (no overflow, no lost subnormal), and
    near the unit circle (``1/2 <= big < 2``) ``log1p(x*x + y*y - 1) / 2``, where the plain formula
    would cancel: each square split exactly into two words (``fma``), the five words summed as in
    three times the precision (Ogita, Rump and Oishi's SumK, K = 3: two passes of error-free
    two-sums, then the sum)."""
    F, make_, _ = _spell(t, c)
    f = component(t)

    def fn(name: str, *args: str) -> str:
        return c.math_text(name, f, list(args))

    words = ["lb", "ls", "m1", "hs", "hb"]  # (each pass carries the errors toward the last word)
    passes = ""
    for _ in range(2):
        for a, b in zip(words, words[1:]):  # (b, a) = two_sum(b, a): b the sum, a the error
            passes += (f"        {{ {F} s = {b} + {a}, v = s - {b}; {a} = ({b} - (s - v)) + ({a} - v); {b} = s; }}\n")
    inf_part = fn("fabs", f"{fn('isinf', 'x')} ? x : y")
    near = fn("log1p", "((((lb + ls) + m1) + hs) + hb)")
    plain = f"{fn('log', 'big')} + {fn('log1p', 'ratio * ratio')} * ({F})0.5"
    return (
        f"    {F} x = a.x, y = a.y, ax = {fn('fabs', 'x')}, ay = {fn('fabs', 'y')};\n"
        f"    {F} im = {fn('atan2', 'y', 'x')};\n"
        f"    if ({fn('isinf', 'x')} || {fn('isinf', 'y')}) return {make_(inf_part, 'im')};\n"
        f"    if ({fn('isnan', 'x')} || {fn('isnan', 'y')}) return {make_('x + y', 'x + y')};\n"
        f"    if (ax == 0 && ay == 0) return {make_(f'-({F})1 / ax', 'im')};\n"
        f"    {F} big = ax >= ay ? ax : ay, small = ax >= ay ? ay : ax;\n"
        f"    if (big >= ({F})0.5 && big < ({F})2) {{\n"
        f"        {F} hb = big * big, lb = {fn('fma', 'big', 'big', '-hb')};\n"
        f"        {F} hs = small * small, ls = {fn('fma', 'small', 'small', '-hs')}, m1 = -({F})1;\n"
        + passes
        + f"        return {make_(f'{near} * ({F})0.5', 'im')};\n"
        "    }\n"
        f"    {F} ratio = small / big;\n"
        f"    return {make_(plain, 'im')};"
    )


def c_log10(t: ScalarType, c: Any) -> str:
    """NumPy's complex ``log10``: ``log(z)``'s parts times ``log10(e)``."""
    F, make_, _ = _spell(t, c)
    log = c.complex_helper("log", t, 1, c_log)
    e = f"({F}){math.log10(math.e)!r}"
    return f"    {c.type(t)} r = {log}(a);\n    return {make_(f'r.x * {e}', f'r.y * {e}')};"
