"""The math functions a kernel may call, found by identity from ``math`` or ``numpy``.

Typing follows NumPy's ufuncs (float32 in, float32 out; integers compute in
float64), so ``math.sqrt(x32)`` is a float32 ``sqrtf`` and never a silent double.
Folding a call on compile-time constants uses the same NumPy ufunc where there is
one, so folded and run-time results agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class MathFunc:
    name: str  # the generic IR name; the C dialects spell it
    nargs: int
    fold: Callable[..., Any]  # used on compile-time constants
    predicate: bool = False  # returns bool (isnan...)


def _f(name: str, fold: Callable[..., Any], nargs: int = 1, predicate: bool = False) -> MathFunc:
    return MathFunc(name, nargs, fold, predicate)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])

FUNCS: dict[str, MathFunc] = {
    f.name: f
    for f in [
        _f("sqrt", np.sqrt),
        _f("exp", np.exp),
        _f("exp2", np.exp2),
        _f("expm1", np.expm1),
        _f("log", np.log),
        _f("log2", np.log2),
        _f("log10", np.log10),
        _f("log1p", np.log1p),
        _f("sin", np.sin),
        _f("cos", np.cos),
        _f("tan", np.tan),
        _f("asin", np.arcsin),
        _f("acos", np.arccos),
        _f("atan", np.arctan),
        _f("sinh", np.sinh),
        _f("cosh", np.cosh),
        _f("tanh", np.tanh),
        _f("asinh", np.arcsinh),
        _f("acosh", np.arccosh),
        _f("atanh", np.arctanh),
        _f("floor", np.floor),
        _f("ceil", np.ceil),
        _f("trunc", np.trunc),
        _f("fabs", np.fabs),
        _f("erf", _erf),
        _f("erfc", _erfc),
        _f("atan2", np.arctan2, 2),
        _f("pow", np.power, 2),
        _f("fmod", np.fmod, 2),
        _f("copysign", np.copysign, 2),
        _f("hypot", np.hypot, 2),
        _f("isnan", np.isnan, predicate=True),
        _f("isinf", np.isinf, predicate=True),
        _f("isfinite", np.isfinite, predicate=True),
    ]
}

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


def _lookup_table() -> dict[int, MathFunc]:
    table: dict[int, MathFunc] = {}
    for name, fn in FUNCS.items():
        if hasattr(math, name):
            table[id(getattr(math, name))] = fn
        if hasattr(np, name):
            table[id(getattr(np, name))] = fn
    for np_name, name in _NUMPY_ALIASES.items():
        table[id(getattr(np, np_name))] = FUNCS[name]
    return table


_BY_ID = _lookup_table()


def lookup(obj: Any) -> MathFunc | None:
    """The math function ``obj`` is (``math.sqrt``, ``np.sqrt``...), or None."""
    return _BY_ID.get(id(obj))
