"""Compile options of a kernel (``@gk.kernel(fastmath=True)``): the one table of their spellings.

Why one table: NVRTC, nvcc and OpenCL's build read the flags of a kernel's options from here, and
the cache keys hold those flags, so a spelling changes in one place.  An option is part of the
kernel's identity: every variant of the kernel is compiled with it.  The simulator models none of
the options that change floating-point results (``fastmath``, ``ftz``, ``fma``): it computes IEEE
results, each operation rounded on its own (``sim`` says so per option).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import KernelTypeError

Flags = tuple[str, ...]
Spelling = Callable[[Any], Flags]  # an option's value -> the flags of one backend


def _switch(on: Flags = (), off: Flags = ()) -> Spelling:
    """Flags for True and for False (None: the option not given, no flag)."""
    return lambda v: on if v is True else off if v is False else ()


def _number(template: str) -> Spelling:
    return lambda v: () if v is None else (template.format(v),)


def _verbatim(v: Any) -> Flags:
    return tuple(v or ())


def _ignored(v: Any) -> Flags:
    return ()


@dataclass(frozen=True)
class Option:
    """One compile option: its type, default, meaning, and its flags per backend."""

    name: str
    kind: str  # "bool", "int" (positive), "flags" (a tuple of strings) or "choice" (one of ``choices``)
    default: Any
    doc: str  # what it does (in the message of a wrong value)
    cuda: Spelling  # NVRTC and nvcc alike (both take these long forms)
    opencl: Spelling
    sim: str  # what the simulator does with it
    inexact: Callable[[Any], bool] = lambda v: False  # whether the value makes results differ from the simulator's
    choices: tuple[str, ...] = ()  # a "choice" option's values


OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        Option(
            "fastmath", "bool", False,
            "fast, less accurate math: approximate division, square root and transcendentals, "
            "denormals flushed, contractions allowed",
            _switch(("--use_fast_math",)), _switch(("-cl-fast-relaxed-math",)),
            "not modelled: the simulator computes IEEE results",
            lambda v: v is True,
        ),
        Option(
            "ftz", "bool", None,
            "flush float32 denormals to zero (None: the compiler's default)",
            _switch(("--ftz=true",), ("--ftz=false",)), _switch(("-cl-denorms-are-zero",)),
            "not modelled: the simulator keeps denormals",
            lambda v: v is True,
        ),
        Option(
            "fma", "bool", None,
            "fuse a * b + c into one fused multiply-add (None: the compiler's default, which fuses on CUDA); "
            "OpenCL has a build option for on (-cl-mad-enable) only",
            _switch(("--fmad=true",), ("--fmad=false",)), _switch(("-cl-mad-enable",)),
            "not modelled: the simulator rounds each operation on its own",
            lambda v: v is True,
        ),
        Option(
            "maxrregcount", "int", None,
            "the most registers a thread may use (CUDA); ignored on OpenCL, which has no such option",
            _number("--maxrregcount={}"), _ignored,
            "ignored",
        ),
        Option(
            "lineinfo", "bool", True,
            "a line table naming the Python lines in the binary, for compute-sanitizer and Nsight "
            "(it changes no code)",
            _switch(("--generate-line-info",)), _ignored,
            "not needed: the simulator's errors name the Python line",
        ),
        Option(
            "casting", "choice", "same_kind",
            "what a store, an atomic or a typed local takes: 'same_kind' (NumPy's: a float never silently "
            "becomes an int) or 'unsafe' (every real number converts, as Numba and CuPy do; gk.sanitize "
            "reports a conversion that changes the value)",
            _ignored, _ignored,
            "the same conversions (semantics.values.Rules)",
            choices=("same_kind", "unsafe"),
        ),
        Option(
            "bools", "choice", "numpy",
            "+ - * of two bools: 'numpy' (a bool, True + True is True, with a warning) or 'python' (an "
            "int, True + True is 2, as Python and Numba)",
            _ignored, _ignored,
            "the same arithmetic (semantics.values.Rules)",
            choices=("numpy", "python"),
        ),
        Option(
            "negative_indices", "choice", "error",
            "an array index below 0: 'error' (out of bounds, which the simulator reports) or 'wrap' (it "
            "counts from the end, as NumPy and Numba; an index that can never be negative costs nothing)",
            _ignored, _ignored,
            "the same indices (semantics.values.Rules)",
            choices=("error", "wrap"),
        ),
        Option(
            "unbound", "choice", "error",
            "a variable read where some path leaves it unassigned: 'error' (refused at compile time) or "
            "'check' (compiled, 0 in C; the simulator reports a thread reading it unassigned, as Python's "
            "UnboundLocalError; Numba's rule)",
            _ignored, _ignored,
            "the simulator checks the read (semantics.values.Rules)",
            choices=("error", "check"),
        ),
        Option(
            "literals", "choice", "narrow",
            "the type of a local only Python literals are assigned: 'narrow' (int32, float32) or 'wide' "
            "(int64, float64: Python's int and float, as Numba and CuPy type them)",
            _ignored, _ignored,
            "the same types (semantics.values.Rules)",
            choices=("narrow", "wide"),
        ),
        Option(
            "cuda_options", "flags", (),
            "more flags for NVRTC and nvcc, verbatim",
            _verbatim, _ignored,
            "ignored",
        ),
        Option(
            "opencl_options", "flags", (),
            "more build options for OpenCL, verbatim",
            _ignored, _verbatim,
            "ignored",
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class CompileOptions:
    """A kernel's compile options: those given, checked against ``OPTIONS``, by name."""

    given: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def make(where: str, options: Mapping[str, Any]) -> CompileOptions:
        """Checked options; a ``KernelTypeError`` naming the valid ones for an unknown name, and
        saying what is wanted for a value of the wrong kind (``where``: the kernel, for messages)."""
        given = []
        for name, value in sorted(options.items()):
            option = OPTIONS.get(name)
            if option is None:
                raise KernelTypeError(
                    f"{where}: unknown compile option {name!r}; the options are {', '.join(OPTIONS)} "
                    "(docs/language.md, 'Compile options')"
                )
            given.append((name, _checked(where, option, value)))
        return CompileOptions(tuple(given))

    def __getitem__(self, name: str) -> Any:
        return dict(self.given).get(name, OPTIONS[name].default)

    def flags(self, backend: str) -> Flags:
        """The flags that ``backend`` ("cuda" or "opencl") compiles with, defaults included."""
        out: list[str] = []
        for option in OPTIONS.values():
            out += getattr(option, backend, _ignored)(self[option.name])
        return tuple(out)

    @property
    def inexact(self) -> list[str]:
        """The options given that make results differ from IEEE arithmetic, each operation rounded
        on its own (what the simulator computes), as ``name=value (what the simulator does)``."""
        return [f"{n}={v!r} ({OPTIONS[n].sim})" for n, v in self.given if OPTIONS[n].inexact(v)]

    def __str__(self) -> str:
        return ", ".join(f"{n}={v!r}" for n, v in self.given)


def _checked(where: str, option: Option, value: Any) -> Any:
    """``value`` as ``option`` keeps it, or a ``KernelTypeError`` saying what it must be."""
    if option.kind == "bool" and (isinstance(value, bool) or (value is None and option.default is None)):
        return value
    if option.kind == "int" and (value is None or (type(value) is int and value > 0)):
        return value
    if option.kind == "flags" and isinstance(value, (tuple, list)) and all(isinstance(f, str) for f in value):
        return tuple(value)
    if option.kind == "choice" and value in option.choices:
        return value
    wanted = {
        "bool": "True or False",
        "int": "a positive int",
        "flags": "a tuple of strings",
        "choice": " or ".join(map(repr, option.choices)),
    }[option.kind]
    raise KernelTypeError(f"{where}: compile option {option.name}= ({option.doc}) must be {wanted}, not {value!r}")
