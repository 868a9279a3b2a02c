"""A launch plan's fast path as one straight-line Python function, written for the plan.

A plan's identity tests (``gpukern.runtime.plan``) each write their own lines here (``Test.write``): the
condition that sends a call to the checked path, and the expression of the C argument the test
reads (a device array's handle, a foreign array's pointer).  Written out for the plan's very
arguments and compiled once per text and kernel name (plans of one shape share the compiled
module), the function tests and packs with no loop and no branch for kinds of tests the plan has
none of: a launch's Python work is what separates gpukern's launch from a hand-written one (issue 15).  With the
launcher stubbed out, a plan of 3 device arrays and a NumPy int32 on OpenCL took 852 ns with the
loops over the tests this replaced, 517 written out (development machine, ``timeit``; 252 once the
int32, already of its C type, went unconverted); whole launches: ``benchmarks/launch.py``.

The text is kept (``fast.source``) and is what ``Plan.describe`` shows with ``source=True``.
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable
from types import CodeType
from typing import Any


class Source:
    """The lines of a fast path being written, and the constants they name."""

    def __init__(self, **names: Any) -> None:
        """``names``: constants the lines name as they are (``DeviceArray``, ``ref``...)."""
        self.lines: list[str] = []
        self.consts: dict[str, Any] = dict(names)
        self._count = itertools.count()
        self._named: dict[int, str] = {}  # id of a value named -> its name (the value stays in consts)

    def const(self, value: Any, hint: str) -> str:
        """A name the function reads ``value`` by (a global of its namespace); one name per object,
        however many tests name it (a library's accessors, read for each of its arrays)."""
        name = self._named.get(id(value))
        if name is None:
            name = self._named[id(value)] = f"{hint}_{next(self._count)}"
            self.consts[name] = value
        return name

    def line(self, text: str, depth: int = 1) -> None:
        self.lines.append("    " * depth + text)

    def fail_if(self, condition: str, depth: int = 1) -> None:
        """Leave for the checked path where ``condition`` holds."""
        self.line(f"if {condition}:", depth)
        self.line("return False", depth + 1)


_made = itertools.count()
_codes: dict[tuple[str, str], CodeType] = {}  # (text, kernel name) -> its compiled module: made once


def write_launch(src: Source, launch: Any, cargs: list[str], stream: str) -> None:
    """The launch's lines: the C arguments ``cargs`` (expressions) on ``stream`` (an expression).
    A launcher that writes its own lines (``launch.write(src, cargs, stream)``: the CUDA driver's)
    does; else one call, ``launch([cargs], stream)``."""
    write = getattr(launch, "write", None)
    if write is not None:
        write(src, cargs, stream)
    else:
        src.line(f"{src.const(launch, 'launch')}([{', '.join(cargs)}], {stream})")


def compile_fast(src: Source, nargs: int, guard: str, name: str) -> Callable[..., bool]:
    """The function ``fast(args)``: ``guard`` (a condition on nothing but constants: that the plan
    still holds), the argument count, then ``src``'s lines (the tests, the launch: ``write_launch``);
    True.  ``name`` goes into its code object's file name (tracebacks, profilers)."""
    unpack = [f"    {''.join(f'a{i}, ' for i in range(nargs))}= args"] if nargs else []
    text = "\n".join(
        [
            "def fast(args):",
            f"    if len(args) != {nargs} or {guard}:",
            "        return False",
            *unpack,
            *src.lines,
            "    return True",
        ]
    )
    # a plan of the same shape has the same text (the constants are names): compiled, and its lines
    # given to linecache for tracebacks, once; each plan runs the module in its own namespace
    code = _codes.get((text, name))
    if code is None:
        filename = f"<gpukern fast path {next(_made)} of {name}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        code = _codes[(text, name)] = compile(text, filename, "exec")
    namespace = dict(src.consts)
    exec(code, namespace)  # noqa: S102  (our own text)
    fast = namespace["fast"]
    fast.source = text  # type: ignore[attr-defined]
    return fast
