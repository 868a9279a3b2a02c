"""Launch plans: the per-launch fast path of ``kernel[grid, block](*args)``.

A launch that has gone once through the checked path (argument types, the variant,
device limits, compilation) leaves a *plan* on its ``Launch``: a small function,
generated for that variant, grid and block, that re-checks only what could differ
in the next call -- the type of each argument, the dtype, rank and backend of each
array, the range of each scalar, the backend selection -- and then hands the C
arguments straight to the driver.  Anything else (a NumPy array to copy, a
different dtype, a scalar out of range, ``set_backend``) fails a guard and takes
the checked path, which then makes a new plan.  So a prepared launch costs what a
driver-level prepared call costs, with the same errors as the checked path.

The generated source is kept on the plan (``fast.source``) for anyone who wants
to see exactly what a launch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import backends
from .array import DeviceArray
from .types import ScalarType
from .variant import Variant

Plan = Callable[[tuple[Any, ...]], bool]


def no_plan(args: tuple[Any, ...]) -> bool:
    """The plan of a launch that has not run yet: always take the checked path."""
    return False


def _scalar_guard(a: str, value: Any, t: ScalarType | None) -> str | None:
    """A condition true for exactly the arguments that give this plan's variant its key and
    that the checked path would convert without error (None: no such cheap condition)."""
    cls = type(value)
    if isinstance(value, np.generic):  # exactly the parameter's type, or the checked path converts it
        return f"type({a}) is T_{a}" if t is None or value.dtype == t.dtype else None
    guard = f"type({a}) is {cls.__name__}"
    if t is None or cls is bool:  # an inferred parameter: the Python type decides the variant
        return guard
    if t.is_int and cls is int:
        info = np.iinfo(t.dtype)
        return f"{guard} and {info.min} <= {a} <= {info.max}"
    if t.is_float and cls is float:
        big = float(np.finfo(t.dtype).max)
        return f"{guard} and -{big!r} <= {a} <= {big!r}"  # NaN and overflow: checked path
    return None


def make_plan(
    variant: Variant, backend: Any, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]
) -> Plan:
    """The fast path for launching ``variant`` again like this, or ``no_plan`` where there is none
    (a backend without one, arrays that are copied or not gpukern's own)."""
    if not backend.plans:
        return no_plan
    names = [f"a{i}" for i in range(len(args))]
    ns: dict[str, Any] = {"DA": DeviceArray, "SEL": backends.selection, "TOKEN": backends.selection[0], "B": backend}
    guards = ["SEL[0] is TOKEN"]
    specs = variant.kernel.params
    for i, (spec, a) in enumerate(zip(specs, args)):
        name = names[i]
        key = variant.key[i]
        if isinstance(key, tuple):  # ('const', type, value): the value is part of the variant
            if type(a) not in (int, float, bool):
                return no_plan
            guards.append(f"type({name}) is {type(a).__name__} and {name} == {a!r}")
        elif isinstance(a, DeviceArray):
            ns[f"D_{name}"] = a.dtype
            guards.append(
                f"type({name}) is DA and {name}.backend is B and {name}.dtype is D_{name} "
                f"and len({name}.shape) == {len(a.shape)}"
            )
        elif isinstance(a, (int, float, bool, np.generic)) and isinstance(key, ScalarType):
            guard = _scalar_guard(name, a, key if spec.kind == "scalar" else None)
            if guard is None:
                return no_plan
            ns[f"T_{name}"] = type(a)
            guards.append(guard)
        else:  # a NumPy array to copy, a CuPy/PyTorch array: the checked path handles them
            return no_plan
    template, namespace, typed_scalars = backend.plan_spelling(variant, grid, block)
    cargs = []
    for p in variant.kernel_params:
        a = names[p.arg_index]
        if p.kind == "array":
            cargs.append(f"{a}.handle")
            continue
        expr, ctype = (f"{a}.shape[{p.dim}]", np.int64) if p.kind == "shape" else (a, p.type.dtype.type)
        if typed_scalars:  # the driver wants NumPy scalars of the parameter's type
            ns[f"C{len(cargs)}"] = ctype
            expr = f"C{len(cargs)}({expr})"
        cargs.append(expr)
    ns.update(namespace)
    body = template.format(args=", ".join(cargs))
    source = (
        "def fast(args):\n"
        f"    if len(args) != {len(args)}:\n        return False\n"
        + (f"    {', '.join(names)}, = args\n" if names else "")
        + f"    if not ({' and '.join(guards)}):\n        return False\n"
        + f"    {body}\n    return True\n"
    )
    exec(compile(source, f"<gpukern plan for {variant.kernel.__name__}>", "exec"), ns)  # noqa: S102 - our own text
    fast = ns["fast"]
    fast.source = source
    return fast
