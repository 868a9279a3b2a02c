"""How ``print()`` in a kernel writes each value: one rule that the C emitter (``printf``) and
the simulator both follow, so every backend prints the same text.

- bool: ``True`` / ``False``, as Python;
- integers: in decimal (C ``%d`` / ``%u``, with the dialect's length modifier for 64 bits);
- floats: ``%.9g`` up to 32 bits (float32 and smaller, converted to float32) and ``%.17g`` for
  float64 -- enough digits to read the value back exactly, not Python's shortest ``repr``
  (``0.1`` in float32 prints as ``0.100000001``); infinities print ``inf`` / ``-inf`` and NaN
  ``nan``, or ``-nan`` when its sign bit is set, as CUDA's and glibc's printf do;
- complex numbers: ``(re+imj)`` as Python writes them, each part in its float's format, the
  imaginary part with its sign (``(1.5-2.25j)``, ``(0+nanj)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..types import ScalarType, bool_, component, float32, int32, uint32


@dataclass(frozen=True)
class Format:
    """A value's printf conversion: ``spec`` after ``%`` (a length modifier goes before its last
    letter), whether the value is 64 bits wide (then the dialect's length modifier for its kind
    goes in), and the type the value is converted to before it is passed (None: as it is)."""

    spec: str
    wide: bool
    cast: ScalarType | None
    c_arg: str = "{0}"  # the argument(s) printf gets, from the value's C expression
    template: str = "%{spec}"  # the conversion(s) in printf's format: a complex number's are two


_BOOL = Format("s", False, None, '{0} ? "True" : "False"')


def print_format(t: ScalarType) -> Format:
    """How a value of type ``t`` is printed; bools are written by ``%s`` of ``True``/``False``."""
    if t == bool_:
        return _BOOL
    if t.is_complex:  # its parts, as the component float prints (complex64: float2's .x and .y)
        part = print_format(component(t))
        return Format(part.spec, part.wide, None, "{0}.x, {0}.y", "(%{spec}%+{spec}j)")
    if t.is_float:
        return Format(".17g", True, None) if t.itemsize == 8 else Format(".9g", False, float32)
    signed = t.kind == "i"
    if t.itemsize == 8:
        return Format("d" if signed else "u", True, None)
    return Format("d" if signed else "u", False, int32 if signed else uint32)


def python_text(t: ScalarType, value: Any) -> str:
    """The text ``print`` writes for one value of type ``t`` (the simulator's side of the rule)."""
    if t == bool_:
        return "True" if value else "False"
    if t.is_int:
        return str(int(value))
    if t.is_complex:
        z = complex(np.asarray(value).astype(t.dtype)[()])
        re, im = python_text(component(t), z.real), python_text(component(t), z.imag)
        return f"({re}{im if im.startswith('-') else '+' + im}j)"
    f = print_format(t)
    x = float(np.asarray(value).astype(f.cast.dtype if f.cast is not None else t.dtype))
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"%{f.spec}" % x  # Python's %g is C's for finite values and infinities


def c_literal(text: str) -> str:
    """``text`` as the body of a C string literal on one line: quotes, backslashes and ``?`` (no
    trigraph) escaped, newline and tab as ``\\n`` and ``\\t``, every other byte outside printable
    ASCII (UTF-8, the bytes of an undecodable file name) an octal escape.  (``codegen.lines``
    writes ``#line`` file names with it and reads them back.)"""
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        ch = chr(byte)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif ch in "\n\t":
            out.append("\\n" if ch == "\n" else "\\t")
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def c_string(text: str) -> str:
    """``text`` as the body of a C string literal that printf writes back unchanged."""
    return c_literal(text.replace("%", "%%"))
