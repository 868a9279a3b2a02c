"""``#line`` directives: the generated C as compiled names the user's Python file and line.

Why: with them, compiler errors, compute-sanitizer and Nsight Compute (with line info, which the
compilers add by default: ``gpukern.runtime.compile_options``) point at the Python line a statement came
from.  The emitter marks each statement line with its Python location (``mark``); ``directives``
turns the marks into ``#line N "file.py"`` before that line.  The generated lines of a function
with Python lines (its signature, braces, declarations) go to the Python lines around them, so
every instruction of a kernel is in the user's file for a profiler; gpukern's support functions
and what lies between functions go to ``#line K "kernel.cu"``, K the line in the text shown
without directives (``strip``), so an error there still names a line of ``kernel.source()``.
The text starts with a directive (a compiler's own name for its input varies); after that only
changes of place get one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..semantics.formats import c_literal

_MARK = re.compile("\x1f(\\d+)\x1f")  # at the start of an emitted line: the index of its location
_NAMED = {b"n": b"\n", b"t": b"\t"}  # the escapes c_literal writes by name
_DIRECTIVE = re.compile(r'^#line (\d+) "((?:[^"\\]|\\.)*)"$')


def mark(index: int) -> str:
    """The prefix that ties an emitted line to location ``index`` of the emitter's list."""
    return f"\x1f{index}\x1f"


def _unescape(body: str) -> str:
    """The file name a ``#line`` string literal written by ``formats.c_literal`` names."""
    raw = re.sub(
        rb"\\([0-7]{3}|.)", lambda m: bytes([int(m[1], 8)]) if len(m[1]) == 3 else _NAMED.get(m[1], m[1]), body.encode()
    )
    return raw.decode("utf-8", "surrogateescape")


def _places(text: str, locations: Sequence[tuple[str, int]]) -> list[tuple[str | None, int]]:
    """Per line of ``text``: its Python place, or (None, line) for one of the generated file.

    A function with Python lines is attributed to Python throughout: its signature and opening
    lines to the line before its first statement (the ``def`` where the body starts at once),
    each later generated line (a closing brace, a declaration) to the statement before it.  So a
    profiler finds every instruction of a kernel in the user's file (Nsight Compute shows the
    source of the file a function starts in), and none in a file that does not exist.  Lines of
    functions without Python lines (gpukern's support helpers), and those between functions (up
    to the blank line before a function: the file's header and includes), stay the generated
    file's."""
    raw = text.split("\n")
    marked: list[tuple[str, int] | None] = []
    for line in raw:
        m = _MARK.match(line)
        marked.append(None if m is None else locations[int(m.group(1))])
    out: list[tuple[str | None, int]] = [(None, i) for i in range(1, len(raw) + 1)]
    start = 0
    for end, line in enumerate(raw):  # functions end with a '}' alone at the start of a line
        if _MARK.sub("", line) != "}":
            continue
        at = next((i for i in range(start, end + 1) if marked[i] is not None), None)
        if at is not None:
            # the function begins after the blank line before it (what precedes it in the same
            # stretch, the file's header, includes, structs, stays the generated file's)
            begin = max((i + 1 for i in range(start, at) if not raw[i].strip()), default=start)
            span = range(begin, end + 1)
            first = marked[at]
            last: tuple[str | None, int] = (first[0], max(first[1] - 1, 1))
            for i in span:
                if marked[i] is not None:
                    last = marked[i]  # type: ignore[assignment]
                out[i] = last
        start = end + 1
    for i in range(start, len(raw)):  # after the last function: marked lines only
        if marked[i] is not None:
            out[i] = marked[i]  # type: ignore[assignment]
    return out


def directives(text: str, locations: Sequence[tuple[str, int]], generated: str) -> str:
    """``text`` (lines marked by ``mark``) with its marks replaced by ``#line`` directives (where
    each line is attributed: ``_places``)."""
    out: list[str] = []
    at: tuple[str | None, int] = (None, 0)  # where the compiler thinks the next line is: first, nowhere
    for line, want in zip(text.split("\n"), _places(text, locations)):
        line = _MARK.sub("", line, count=1) if _MARK.match(line) else line
        if want != at:
            out.append(f'#line {want[1]} "{c_literal(want[0] or generated)}"')
        out.append(line)
        at = (want[0], want[1] + 1)
    return "\n".join(out)


def strip(text: str) -> str:
    """The generated C without its ``#line`` directives: what ``kernel.source()`` shows."""
    return "\n".join(line for line in text.split("\n") if not _DIRECTIVE.match(line))


def line_map(text: str, generated: str) -> list[tuple[str | None, int]]:
    """Per line of ``strip(text)``: the (file, line) the compiler attributes it to; file None for
    ``generated``, whose lines are those of the stripped text."""
    out: list[tuple[str | None, int]] = []
    here: tuple[str | None, int] = (None, 1)
    for line in text.split("\n"):
        m = _DIRECTIVE.match(line)
        if m is not None:
            name = _unescape(m.group(2))
            here = (None if name == generated else name, int(m.group(1)))
            continue
        out.append(here)
        here = (here[0], here[1] + 1)
    return out
