"""The error hierarchy: everything a user can cause is a ``GpukernError``.

Compile-time errors carry a source location and print like a compiler
(``file:line:col: error: ...`` with the line and a caret) because that is what a
kernel author needs to find the construct at fault.
"""

from __future__ import annotations

import ast
import linecache
import os
import types
from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A position in the user's Python source (1-based line, 0-based column)."""

    filename: str
    lineno: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"

    def source_line(self) -> str:
        return linecache.getline(self.filename, self.lineno).rstrip("\n")


class GpukernError(Exception):
    """Base of every error gpukern raises on purpose."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_gpukern_file(path: str) -> bool:
    """Whether a frame's code file is gpukern's own (not the user's)."""
    return path.startswith(_PACKAGE)
_AST = ast.__file__  # the standard library's node visitor, which the front end dispatches through


def user_frames(e: BaseException) -> BaseException:
    """``e`` with gpukern's own frames taken out of its traceback, and out of those of the exceptions
    it was raised from: a user sees where their code called gpukern and the message, not 12 to 86
    lines of the compiler and the simulator (as JAX and Numba filter theirs).  With the environment
    variable ``GPUKERN_TRACEBACK=full`` every frame stays."""
    if os.environ.get("GPUKERN_TRACEBACK", "").lower() == "full":
        return e
    seen: set[int] = set()
    x: BaseException | None = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        kept = []
        tb = x.__traceback__
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            if not name.startswith(_PACKAGE) and name != _AST:
                kept.append(tb)
            tb = tb.tb_next
        new = None
        for t in reversed(kept):
            new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
        x.__traceback__ = new
        x = x.__cause__ or (None if x.__suppress_context__ else x.__context__)
    return e


class DependencyError(GpukernError):
    """An optional package a feature needs is not installed; the message says how to install it."""


class LocatedError(GpukernError):
    """An error at a place in the user's Python source, printed like a compiler's."""

    def __init__(self, message: str, loc: Loc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.filename = loc.filename if loc else None
        self.lineno = loc.lineno if loc else None
        self.col = loc.col if loc else None
        super().__init__(self._format())

    def _format(self) -> str:
        if self.loc is None:
            text = f"error: {self.message}"
        else:
            text = f"{self.loc}: error: {self.message}"
            line = self.loc.source_line()
            if line:
                text += f"\n    {line}\n    {' ' * self.loc.col}^"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class KernelWarning(UserWarning):
    """Legal kernel code whose meaning may surprise (``a + b`` of two bools is a bool, as in NumPy,
    not 2 as in Python and Numba): reported at the Python line, printed like a compiler's warning.
    Filter it as any warning (``warnings.simplefilter("error", gk.KernelWarning)`` makes it an error)."""


_WARNED: dict = {}  # the registry of kernel warnings shown, so the "default" filter shows each once


def warn_at(message: str, loc: Loc | None, hint: str | None = None) -> None:
    """Issue a ``KernelWarning`` that points at the kernel's own line (not at gpukern's)."""
    import warnings

    text = message + (f" (hint: {hint})" if hint else "")
    if loc is None:
        warnings.warn(text, KernelWarning, stacklevel=2)
    else:
        warnings.warn_explicit(f"{loc}: {text}", KernelWarning, loc.filename, loc.lineno, registry=_WARNED)


class CompileError(LocatedError):
    """A kernel that cannot be compiled; knows where in the Python source."""


class KernelSyntaxError(CompileError):
    """A Python construct the kernel language does not support."""


class KernelTypeError(CompileError):
    """Mismatched, unknown or unsupported types in a kernel."""


class KernelFault(LocatedError):
    """A bug found while running a kernel (race, divergent barrier, bad index...).

    ``kernel``: the kernel's name; ``threads``: the threads involved, as (block, thread) pairs
    of 3-tuples (empty where the fault is not one thread's, as for a static check)."""

    def __init__(
        self,
        message: str,
        loc: Loc | None = None,
        hint: str | None = None,
        kernel: str | None = None,
        threads: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (),
    ):
        self.kernel = kernel
        self.threads = tuple(threads)
        super().__init__(message, loc, hint)


class BarrierDivergenceError(CompileError, KernelFault):
    """A barrier that not every thread of a block reaches (found statically or by the simulator)."""


class DataRaceError(KernelFault):
    """Two threads touch one element, at least one writing, in no order a barrier gives: in
    shared memory between two barriers of their block; in global memory within one launch,
    unless both are of one block with a barrier between (different blocks are never ordered)."""


class UninitializedReadError(KernelFault):
    """A read of an element nothing has written: of a shared or local array in this launch, or
    of a global array made by ``empty()`` in this launch or any before."""


class IndexOverflowError(KernelFault):
    """32-bit integer arithmetic that feeds an array index wrapped around (signed overflow is
    undefined in the generated C; an unsigned wrap is almost surely not the index meant)."""


class ConversionError(KernelFault):
    """A store's implicit conversion changed a value (300 into uint8, -1.0 into uint32, 1e40 into
    float32), under ``casting="unsafe"`` or from a wider float: reported by ``gk.sanitize`` only, as
    Numba and CuPy convert so without a word."""


class ZeroDivisionFault(KernelFault):
    """An integer ``//`` or ``%`` by zero: defined as 0 in gpukern (as NumPy gives it), and reported
    by ``gk.sanitize`` only, since it is most often a bug (NumPy warns)."""


class OutOfBoundsError(KernelFault):
    """An index outside a global, shared or local array."""


class MisalignedAccessError(KernelFault):
    """A vector access (vload/vstore of n elements) at an index that is not a multiple of n."""


class WarpMaskError(KernelFault):
    """A warp intrinsic (shuffle, vote, ballot, match, syncwarp) whose mask CUDA leaves undefined:
    it names a lane of the warp that is live but not executing this call with it, or one that
    passes a different mask; a lane's mask leaves out the lane itself; a shuffle reads a lane
    that is not taking part (CUDA returns an undefined value); or a shuffle's run-time width is
    not a power of 2 from 1 to 32."""


class WarpWidthError(KernelFault):
    """Code that assumes a warp of 32 lanes, found where the simulator runs 64-lane wavefronts (AMD
    CDNA's; ``GPUKERN_SIM_LANES=64`` or ``gk.sanitize(..., lanes=64)``): a mask of 32 bits where lanes
    32-63 execute the call, a ballot or match narrowed to 32 bits that loses lanes, a shuffle whose
    width or offsets reach 32 lanes only, a lane or warp number computed with 32."""


class LaunchError(GpukernError):
    """A launch that cannot run as asked: arguments, sizes, devices."""


class BackendError(GpukernError):
    """A backend that is missing, misconfigured, or whose compiler rejected our code."""


class InteropError(LaunchError, BufferError):
    """An array that cannot be shared with another library as asked (DLPack's ``BufferError``)."""


class DeviceCompileError(CompileError, BackendError):
    """A device compiler (NVRTC, nvcc, the OpenCL driver's) refused the generated C or an option:
    a gpukern bug, or an option the compiler or the device refuses.  ``compiler`` names it, ``log``
    is its output, ``source`` the C it was given as ``kernel.source()`` shows it (without ``#line``
    directives), ``c_line`` the line of that text the first error names (0: none); ``loc`` is the
    Python line the error is at, where there is one.  A ``BackendError`` too, as compile failures
    were before there was a Python line to show."""

    def __init__(
        self,
        message: str,
        loc: Loc | None = None,
        hint: str | None = None,
        *,
        compiler: str = "",
        log: str = "",
        source: str = "",
        command: str = "",
        c_line: int = 0,
    ):
        self.brief, self.compiler, self.log, self.source, self.command, self.c_line = (
            message, compiler, log, source, command, c_line,
        )  # fmt: skip
        text = message
        if command:
            text += f"\n  command: {command}"
        if log.strip():
            text += "\n" + "\n".join("  | " + line for line in log.strip().splitlines())
        super().__init__(text, loc, hint)


class CUDACompileError(DeviceCompileError):
    """NVRTC or nvcc refused the generated CUDA C or an option (``DeviceCompileError``)."""


class HIPCompileError(DeviceCompileError):
    """hipcc refused the generated HIP C++ or an option, or is not installed (``DeviceCompileError``)."""


class OpenCLCompileError(DeviceCompileError):
    """The OpenCL driver's compiler refused the generated OpenCL C or a build option
    (``DeviceCompileError``)."""
