"""Test helpers for kernel authors: Hypothesis strategies and a cross-backend oracle.

A kernel is usually right for the sizes its author tried and wrong for the others (a size
of 1, a prime, one more than a tile), and right on one backend but not another.  The
strategies here generate those awkward cases, inputs whose arithmetic cannot overflow, and
launch configurations that cover an array within every device's limits;
``assert_kernel_matches`` runs one launch on every backend (the simulator with its race and
bounds checks on) and compares each output with a NumPy reference.  See docs/testing.md.

Hypothesis is imported only when a strategy is built: it is a test dependency, and
``import gpukern`` must not need it.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import backends as _backends
from .errors import DependencyError, GpukernError
from .kernel import Kernel, Launch, grid_for
from .runtime.array import DeviceArray
from .runtime.foreign import has_cuda_interface
from .types import SCALARS

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "LaunchConfig",
    "KernelMismatchError",
    "Mismatch",
    "arrays",
    "assert_kernel_matches",
    "device_limits",
    "dtypes",
    "grid_for",
    "launch_configs",
    "shapes",
    "sizes",
    "value_range",
]

_TILES = (8, 16, 32, 64, 128, 256)  # block and tile sizes kernels are commonly written for
_OPS = ("add", "sub", "sum", "mul", "prod", "dot")


# ---------------------------------------------------------------- sizes and shapes
def _primes(limit: int) -> list[int]:
    limit = min(limit, 1 << 16)  # enough primes to be awkward; a sieve that stays cheap
    if limit < 2:
        return []
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\0\0"
    for i in range(2, math.isqrt(limit) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, limit + 1, i)))
    return [i for i, is_prime in enumerate(sieve) if is_prime]


def _awkward(lo: int, hi: int, tile: int | None) -> list[int]:
    """Sizes that break kernels: 1, primes, and one either side of tile multiples."""
    tiles = (tile,) if tile else _TILES
    out = {1, 2, 3, lo, hi}
    out.update(p for p in _primes(hi) if p >= lo)
    for t in tiles:
        for k in range(1, 5):
            out.update((k * t - 1, k * t + 1))
    return sorted(v for v in out if lo <= v <= hi)


def _hypothesis(part: str) -> Any:
    """``hypothesis.<part>``, or a ``gk.DependencyError`` saying how to install it (the strategies
    are the only part of gpukern that needs Hypothesis, so it is not a requirement of gpukern)."""
    import importlib

    try:
        return importlib.import_module(f"hypothesis.{part}")
    except ImportError:
        raise DependencyError(
            "gpukern.testing's strategies need Hypothesis, which is not installed: "
            "pip install 'gpukern[test]' (or pip install hypothesis)"
        ) from None


def sizes(min_value: int = 1, max_value: int = 1024, *, tile: int | None = None) -> SearchStrategy[int]:
    """One array extent in ``[min_value, max_value]``, biased toward awkward ones.

    Half the draws are 1, primes, or one off a multiple of ``tile`` (default: the usual
    tile sizes 8 … 256), because those are where guards and tail handling go wrong.
    """
    st = _hypothesis("strategies")

    if not 1 <= min_value <= max_value:
        raise ValueError(f"sizes needs 1 <= min_value <= max_value, got {min_value}, {max_value}")
    return st.one_of(st.sampled_from(_awkward(min_value, max_value, tile)), st.integers(min_value, max_value))


def shapes(
    ndim: int = 1,
    *,
    min_side: int = 1,
    max_side: int = 1024,
    max_size: int = 4096,
    tile: int | None = None,
) -> SearchStrategy[tuple[int, ...]]:
    """Array shapes of ``ndim`` dimensions whose sides come from ``sizes`` and whose total
    size stays within ``max_size`` (the simulator runs one lane per element; keep tests fast)."""
    st = _hypothesis("strategies")

    if not 1 <= ndim <= 3:
        raise ValueError(f"kernels take arrays of 1 to 3 dimensions, not {ndim}")
    if min_side**ndim > max_size:
        raise ValueError(f"no shape of {ndim} sides >= {min_side} has at most {max_size} elements")

    @st.composite
    def build(draw: Any) -> tuple[int, ...]:
        sides: list[int] = []
        budget = max_size
        for d in range(ndim):
            rest = min_side ** (ndim - d - 1)  # room the remaining sides need at least
            side = draw(sizes(min_side, max(min_side, min(max_side, budget // rest)), tile=tile))
            sides.append(side)
            budget //= side
        return tuple(sides)

    return build()


def dtypes(kinds: str = "iuf") -> SearchStrategy[np.dtype]:
    """Element dtypes kernels support, by NumPy kind letter: b bool, i signed, u unsigned, f float, c complex."""
    st = _hypothesis("strategies")

    chosen = [t.dtype for t in SCALARS if t.dtype.kind in kinds]
    if not chosen:
        raise ValueError(f"no kernel dtype has a kind in {kinds!r}; use letters of 'biufc'")
    return st.sampled_from(chosen)


# ---------------------------------------------------------------- values
def value_range(dtype: Any, op: str | None = None, *, terms: int = 2) -> tuple[Any, Any]:
    """``(lo, hi)`` such that ``op`` over ``terms`` operands in that range cannot overflow ``dtype``.

    ``op``: None (any finite value), ``"add"``/``"sum"``/``"sub"`` (a sum of ``terms`` values),
    ``"mul"``/``"prod"`` (a product of ``terms`` values), ``"dot"`` (a sum of ``terms`` products
    of two).  Signed overflow is undefined behaviour in the generated C, so a test must not
    provoke it; unsigned subtraction still wraps, identically in C and NumPy.
    """
    dt = np.dtype(dtype)
    if op is not None and op not in _OPS:
        raise ValueError(f"unknown op {op!r}; choose one of {', '.join(_OPS)} or None")
    if terms < 1:
        raise ValueError(f"terms must be at least 1, not {terms}")
    if dt.kind == "b":
        return False, True
    if dt.kind == "c":
        return _complex_value_range(dt, op, terms)
    top: float | int = np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max
    if op in ("add", "sub", "sum"):
        bound = top / terms if dt.kind == "f" else top // terms
    elif op in ("mul", "prod"):
        bound = _root(top, terms, dt.kind == "f")
    elif op == "dot":
        bound = _root(top / terms if dt.kind == "f" else top // terms, 2, dt.kind == "f")
    else:
        bound = top
    if dt.kind == "f":
        b = float(dt.type(bound))
        if b > bound or math.isinf(b):  # rounding to the dtype went up: step back toward zero
            b = float(np.nextafter(dt.type(b), dt.type(0)))
        return -b, b
    if dt.kind == "u":
        return 0, int(bound)
    return -int(bound), int(bound)


def _complex_value_range(dt: np.dtype, op: str | None, terms: int) -> tuple[float, float]:
    """The range of each part of a complex number: a product of ``terms`` complex numbers sums
    ``2 ** (terms - 1)`` products of parts in each of its parts (a dot product, twice ``terms``)."""
    part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    if op in ("mul", "prod"):
        _, hi = value_range(part, "prod", terms=terms)
        bound = float(np.nextafter(part.type(hi / 2 ** ((terms - 1) / terms)), part.type(0)))
        return -bound, bound
    if op == "dot":
        return value_range(part, "dot", terms=2 * terms)
    return value_range(part, op, terms=terms)


def _inward(x: float, part: np.dtype) -> float:
    """``x`` as a value of the float type ``part``, rounded toward zero."""
    r = part.type(x)
    if abs(float(r)) > abs(x):
        r = np.nextafter(r, part.type(0))
    return float(r)


def _root(x: float | int, n: int, real: bool) -> float | int:
    if real:  # shaved a little: the rounded root, raised to n, must not overflow
        return float(x) ** (1.0 / n) * (1 - 1e-9)
    r = int(round(int(x) ** (1.0 / n)))
    while r**n > x:
        r -= 1
    while (r + 1) ** n <= x:
        r += 1
    return r


def arrays(
    dtype: Any,
    shape: int | tuple[int, ...] | SearchStrategy[tuple[int, ...]],
    *,
    op: str | None = None,
    terms: int = 2,
    magnitude: float | None = None,
) -> SearchStrategy[np.ndarray]:
    """C-contiguous arrays whose values are safe for ``op`` (see ``value_range``).

    Floats are finite and never subnormal (GPUs may flush those to zero, NumPy does not);
    ``magnitude`` narrows the range further (e.g. 1e3 to keep relative errors meaningful).
    """
    st = _hypothesis("strategies")
    hnp = _hypothesis("extra.numpy")

    dt = np.dtype(dtype)
    lo, hi = value_range(dt, op, terms=terms)
    if magnitude is not None and dt.kind != "b":
        lo, hi = max(lo, -magnitude), min(hi, magnitude)
        if dt.kind in "iu":
            lo, hi = math.ceil(lo), math.floor(hi)
    if dt.kind == "b":
        elements: SearchStrategy[Any] = st.booleans()
    elif dt.kind == "f":
        elements = st.floats(
            lo, hi, width=dt.itemsize * 8, allow_nan=False, allow_infinity=False, allow_subnormal=False
        )
    elif dt.kind == "c":  # each part as a float of half the width
        lo, hi = (_inward(x, np.dtype(f"f{dt.itemsize // 2}")) for x in (lo, hi))
        part = st.floats(lo, hi, width=dt.itemsize * 4, allow_nan=False, allow_infinity=False, allow_subnormal=False)
        elements = st.builds(complex, part, part)
    else:
        elements = st.integers(lo, hi)
    return hnp.arrays(dt, shape, elements=elements)


# ---------------------------------------------------------------- launch configurations
class LaunchConfig(NamedTuple):
    """A grid and block; ``kernel[config](...)`` launches with it (it is a 2-tuple)."""

    grid: tuple[int, ...]
    block: tuple[int, ...]

    @property
    def threads(self) -> int:
        return math.prod(self.block)

    def covers(self, shape: Sequence[int]) -> bool:
        """Whether there is a thread for every element: dimension x covers the last axis."""
        return all(g * b >= s for g, b, s in zip(self.grid, self.block, reversed(tuple(shape))))


def device_limits(backends: str | Sequence[str] | None = None) -> tuple[int, tuple[int, int, int]]:
    """``(max threads per block, max threads per dimension)`` that every one of ``backends``
    accepts (default: every available backend, since ``assert_kernel_matches`` runs on all)."""
    names = _backends.available_backends() if backends is None else _names(backends)
    group, items = 1 << 30, [1 << 30] * 3
    for name in names:
        b = _backends.get_backend(name)
        group = min(group, b.max_group)
        items = [min(i, m) for i, m in zip(items, tuple(b.max_items) + (1 << 30,) * 3)]
    return group, (items[0], items[1], items[2])


def launch_configs(
    shape: int | Sequence[int],
    *,
    block: int | Sequence[int] | None = None,
    max_threads: int | None = None,
    pow2: bool = False,
    extra_blocks: int = 0,
    backends: str | Sequence[str] | None = None,
) -> SearchStrategy[LaunchConfig]:
    """Grid/block pairs with a thread for every element of ``shape`` (see ``grid_for`` for
    the axis order), blocks within ``device_limits(backends)`` and ``max_threads``, and no
    side longer than max(32, the array's side rounded up to a power of two), so that the
    simulator (one lane per thread) is not kept busy by idle threads.

    ``block`` fixes the block (a kernel written for one tile); ``pow2`` keeps block sides
    powers of two (tree reductions need it); ``extra_blocks`` allows up to that many spare
    blocks per dimension, which exercises a kernel's bounds guard.
    """
    st = _hypothesis("strategies")

    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if not 1 <= len(dims) <= 3 or any(s < 1 for s in dims):
        raise ValueError(f"launch_configs needs a shape of 1 to 3 positive sides, not {shape!r}")
    group, items = device_limits(backends)
    if max_threads is not None:
        group = min(group, max_threads)

    def extend(grid: tuple[int, ...]) -> SearchStrategy[tuple[int, ...]]:
        return st.tuples(*(st.integers(g, g + extra_blocks) for g in grid))

    if block is not None:
        blk = (block,) if isinstance(block, int) else tuple(block)
        if math.prod(blk) > group or any(b > m for b, m in zip(blk, items)):
            raise ValueError(f"block {blk} exceeds the limits of these devices ({group} threads, {items})")
        return extend(grid_for(dims, blk)).map(lambda g: LaunchConfig(g, blk))

    def side(limit: int) -> SearchStrategy[int]:
        twos = [1 << k for k in range(limit.bit_length()) if 1 << k <= limit]
        if pow2:
            return st.sampled_from(twos)
        warps = [w for w in (32, 64, 96, 128, 192, 256) if w <= limit]
        return st.one_of(st.sampled_from(twos), st.sampled_from(warps or [1]), st.integers(1, limit))

    @st.composite
    def build(draw: Any) -> LaunchConfig:
        blk: list[int] = []
        budget = group
        for d in range(len(dims)):
            need = dims[len(dims) - 1 - d]  # dimension x covers the last axis
            b = draw(side(max(1, min(items[d], budget, max(32, 1 << (need - 1).bit_length())))))
            blk.append(b)
            budget //= b
        return LaunchConfig(draw(extend(grid_for(dims, blk))), tuple(blk))

    return build()


# ---------------------------------------------------------------- the oracle
@dataclass
class Mismatch:
    """One backend's disagreement with the reference: an output that differs, or an error."""

    backend: str
    array: str | None = None
    index: tuple[int, ...] | None = None
    actual: Any = None
    expected: Any = None
    count: int = 0
    size: int = 0
    error: BaseException | None = None
    detail: str = ""

    def __str__(self) -> str:
        if self.error is not None:
            return f"backend {self.backend!r}: {type(self.error).__name__}: {self.error}"
        if self.index is None:
            return f"backend {self.backend!r}: output {self.array!r}: {self.detail}"
        return (
            f"backend {self.backend!r}: output {self.array!r} differs at {self.count} of {self.size} elements; "
            f"worst at index {self.index}: got {self.actual}, expected {self.expected} ({self.detail})"
        )


class KernelMismatchError(AssertionError):
    """What ``assert_kernel_matches`` raises; ``mismatches`` and ``inputs`` keep the details."""

    def __init__(self, report: str, mismatches: list[Mismatch], inputs: dict[str, Any]):
        super().__init__(report)
        self.mismatches = mismatches
        self.inputs = inputs


_DEFAULT_TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12), "float16": (1e-3, 1e-4)}
_DEFAULT_TOL.update(complex64=_DEFAULT_TOL["float32"], complex128=_DEFAULT_TOL["float64"])  # |got - expected|


def assert_kernel_matches(
    launch: Callable[..., Any] | tuple[Kernel, Any, Any],
    reference: Callable[..., Any],
    inputs: Sequence[Any] | Mapping[str, Any],
    *,
    outputs: Sequence[str | int] | str | int | None = None,
    backends: str | Sequence[str] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    sim_check: bool = True,
) -> dict[str, dict[str, np.ndarray]]:
    """Run ``launch`` on each backend and compare its outputs with ``reference``; raise
    ``AssertionError`` (a ``KernelMismatchError``) saying where and how they differ.

    ``launch`` is ``(kernel, grid, block)``, ``kernel[grid, block]``, or any callable taking
    the inputs positionally (``lambda a, b, out: add[g, b](a, b, out, out.size)``); it gets
    fresh copies of ``inputs`` on every backend, and the outputs are read from those
    arguments afterwards.  Inputs are named by the mapping's keys, else by the kernel's or
    the callable's parameters.  ``reference`` gets copies of the inputs too and either
    returns ``{name: expected}``, returns the expected arrays in the order of ``outputs``, or
    writes its copies in place and returns None (then every array argument is compared, so
    a stray write to an input is caught).  ``outputs`` (names or positions) limits the
    comparison.

    ``backends``: default every available one, skipping the rest; one that is named but not
    available fails.  The simulator runs with its race and bounds checks on unless
    ``sim_check=False``.  Floats compare with ``|got - expected| <= atol + rtol * |expected|``
    (defaults: float32 1e-5/1e-6, float64 1e-10/1e-12); integers and bools exactly unless a
    tolerance is given.  Returns ``{backend: {output: array}}``.
    """
    run, kernel_names, title = _launcher(launch)
    if isinstance(inputs, Mapping):
        names = [str(k) for k in inputs]
        values = list(inputs.values())
    else:
        values = list(inputs)
        names = kernel_names(len(values))
    for name, v in zip(names, values):
        if isinstance(v, DeviceArray) or (has_cuda_interface(v) and not isinstance(v, np.ndarray)):
            raise TypeError(f"input {name!r}: pass NumPy arrays; each backend gets its own copy of them")
    original = dict(zip(names, _fresh(values)))

    ref_args = _fresh(values)
    result = reference(*ref_args)
    expected = _expected(result, outputs, names, ref_args)
    wanted = _names(backends) if backends is not None else None
    chosen = _select_backends(wanted)

    previous, how = _backends.chosen_backend()
    previous = previous if how == "set_backend" else None
    sim = _backends.get_backend("sim") if "sim" in chosen else None
    sim_before = sim.check if sim is not None else None
    mismatches: list[Mismatch] = []
    results: dict[str, dict[str, np.ndarray]] = {}
    first_error: BaseException | None = None
    try:
        if sim is not None:
            sim.check = sim_check
        for backend in chosen:
            args = _fresh(values)
            try:
                _backends.set_backend(backend)
                run(*args)
            except GpukernError as e:
                mismatches.append(Mismatch(backend, error=e))
                first_error = first_error or e
                continue
            got = {name: args[names.index(name)] for name in expected}
            results[backend] = got
            for name, want in expected.items():
                m = _compare(backend, name, got[name], want, rtol, atol)
                if m is not None:
                    mismatches.append(m)
    finally:
        _backends.set_backend(previous)
        if sim is not None:
            sim.check = sim_before  # type: ignore[assignment]
    if mismatches:
        failed = sorted({m.backend for m in mismatches}, key=chosen.index)
        lines = [f"{title} does not match the NumPy reference on {', '.join(failed)} (ran on {', '.join(chosen)}):"]
        lines += [str(m) for m in mismatches]
        kernel = launch[0] if isinstance(launch, tuple) else launch.kernel if isinstance(launch, Launch) else None
        inexact = kernel.options.inexact if isinstance(kernel, Kernel) else []
        if inexact and any(m.backend != "sim" for m in mismatches):
            lines.append(
                f"note: {kernel.__name__} is compiled with {', '.join(inexact)}: a device may differ from the "
                "simulator and from NumPy by more than rtol/atol allow"
            )
        if "sim" in chosen and "sim" not in failed:  # point to the tool that can say why
            lines.append(
                "note: the simulator's result matches NumPy, so the device differs: gk.sanitize(launch, *inputs) "
                "on the simulator looks for a race, an uninitialised read or an out-of-bounds access that a "
                "device may expose and the simulator's result hides"
            )
        elif "sim" in failed:
            lines.append(
                "note: the simulator gives a wrong result too: a bug in the kernel (or the reference); "
                "gk.sanitize(launch, *inputs) reports the faults it finds at their lines"
            )
        lines.append("inputs that reproduce it:")
        lines += _describe_inputs(original)
        raise KernelMismatchError("\n".join(lines), mismatches, original) from first_error
    return results


def _names(backends: str | Sequence[str]) -> list[str]:
    return [backends] if isinstance(backends, str) else list(backends)


def _select_backends(wanted: list[str] | None) -> list[str]:
    status = _backends.backend_status()
    if wanted is None:
        return [name for name, why in status.items() if why is None]
    for b in wanted:
        if b not in status:
            raise AssertionError(f"backend {b!r} was asked for but is unknown; choose from {', '.join(status)}")
        if status[b] is not None:
            raise AssertionError(f"backend {b!r} was asked for but is not available here: {status[b]}")
    return wanted


def _launcher(launch: Any) -> tuple[Callable[..., Any], Callable[[int], list[str]], str]:
    """The callable to run, how to name its inputs, and how to title a report."""

    def fallback(n: int) -> list[str]:
        return [f"arg{i}" for i in range(n)]

    def kernel_names(k: Kernel) -> Callable[[int], list[str]]:
        def names(n: int) -> list[str]:
            params = [p.name for p in k.params]
            return params if len(params) == n else fallback(n)

        return names

    if isinstance(launch, tuple):
        if len(launch) != 3 or not isinstance(launch[0], Kernel):
            raise TypeError("launch must be a callable, kernel[grid, block], or a tuple (kernel, grid, block)")
        k, grid, block = launch
        configured = k[grid, block]
        return configured, kernel_names(k), f"{k.__name__}[{grid}, {block}]"
    if isinstance(launch, Launch):
        k = launch.kernel
        return launch, kernel_names(k), f"{k.__name__}[{launch.grid}, {launch.block}]"
    if not callable(launch):
        raise TypeError(f"launch must be callable or (kernel, grid, block), not {type(launch).__name__}")

    def signature_names(n: int) -> list[str]:
        try:
            params = list(inspect.signature(launch).parameters.values())
        except (TypeError, ValueError):
            return fallback(n)
        if len(params) == n and all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            return [p.name for p in params]
        return fallback(n)

    return launch, signature_names, "the kernel launch"


def _fresh(values: Sequence[Any]) -> list[Any]:
    """Copies a launch may write without touching the caller's (or another backend's) data."""
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out.append(np.array(v, copy=True, order="K"))
        elif isinstance(v, (int, float, bool, complex, str, np.generic)) or v is None:
            out.append(v)
        else:
            out.append(copy.deepcopy(v))
    return out


def _expected(result: Any, outputs: Any, names: list[str], ref_args: list[Any]) -> dict[str, np.ndarray]:
    """Expected values by argument name, from whatever form the reference returned."""

    def name_of(o: str | int) -> str:
        if isinstance(o, (int, np.integer)) and not isinstance(o, bool):
            if not -len(names) <= o < len(names):
                raise ValueError(f"output index {o} is out of range for {len(names)} inputs")
            return names[o]
        if o not in names:
            raise ValueError(f"output {o!r} is not an input; the inputs are {', '.join(names)}")
        return str(o)

    wanted = (
        None if outputs is None else [name_of(o) for o in ([outputs] if isinstance(outputs, (str, int)) else outputs)]
    )
    if result is None:
        exp = {n: a for n, a in zip(names, ref_args) if isinstance(n, str) and isinstance(a, np.ndarray)}
        chosen = wanted or list(exp)
    elif isinstance(result, Mapping):
        exp = {name_of(k): np.asarray(v) for k, v in result.items()}
        chosen = wanted or list(exp)
    else:
        seq = [result] if isinstance(result, np.ndarray) or np.isscalar(result) else list(result)
        if wanted is None or len(wanted) != len(seq):
            raise ValueError(
                "the reference returned arrays without names: say which arguments they are with outputs=(...) "
                "of the same length, or return a dict {name: expected}"
            )
        exp = {n: np.asarray(v) for n, v in zip(wanted, seq)}
        chosen = wanted
    for n in chosen:
        if n not in exp:
            raise ValueError(f"the reference gave no expected value for output {n!r}")
        if not isinstance(ref_args[names.index(n)], np.ndarray):
            raise ValueError(f"output {n!r} is not an array argument, so a kernel cannot write it")
    return {n: exp[n] for n in chosen}


def _compare(backend: str, name: str, actual: np.ndarray, expected: np.ndarray, rtol: Any, atol: Any) -> Any:
    """A ``Mismatch`` at the element furthest outside the tolerance, or None."""
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return Mismatch(
            backend, name, detail=f"the kernel's array has shape {actual.shape}, the reference's {expected.shape}"
        )
    if actual.size == 0:
        return None
    complex_ = "c" in (actual.dtype.kind, expected.dtype.kind)
    floating = actual.dtype.kind in "fc" or expected.dtype.kind in "fc"
    default = _DEFAULT_TOL.get(actual.dtype.name, _DEFAULT_TOL["float32"]) if floating else (0.0, 0.0)
    rt = default[0] if rtol is None else rtol
    at = default[1] if atol is None else atol
    if floating or rt or at:
        wide = np.complex128 if complex_ else np.float64
        a = actual.astype(wide)
        e = expected.astype(wide)
        with np.errstate(all="ignore"):
            diff = np.abs(a - e)
            excess = np.where(np.isnan(diff), np.inf, diff - (at + rt * np.abs(e)))
        same = _same(a.real, e.real) & _same(a.imag, e.imag)  # NaN parts in the same places
        bad = ~same & ~(excess <= 0)
        detail = f"rtol={rt:g}, atol={at:g}"
    else:
        bad = actual != expected
        with np.errstate(all="ignore"):
            excess = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        detail = "compared exactly"
    count = int(np.count_nonzero(bad))
    if not count:
        return None
    flat = int(np.argmax(np.where(bad, excess, -np.inf)))
    index = tuple(int(i) for i in np.unravel_index(flat, actual.shape))
    got, want = actual[index], expected[index]
    if floating:
        number = complex if complex_ else float
        with np.errstate(all="ignore"):
            d = abs(number(got) - number(want))
            rel = d / abs(number(want)) if number(want) else math.inf
        detail = f"abs diff {d:.6g}, rel diff {rel:.3g}; {detail}"
    return Mismatch(backend, name, index, got, want, count, actual.size, detail=detail)


def _same(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    return (a == e) | (np.isnan(a) & np.isnan(e))


def _describe_inputs(inputs: dict[str, Any]) -> list[str]:
    lines = []
    with np.printoptions(threshold=2000, floatmode="unique", linewidth=120):
        for name, v in inputs.items():
            if isinstance(v, np.ndarray):
                text = np.array_repr(v).replace("\n", "\n      ")
                if v.size > 2000:
                    text += f"  # {v.shape} {v.dtype}, abridged: KernelMismatchError.inputs has it all"
            else:
                text = repr(v)
            lines.append(f"  {name} = {text}")
    return lines
