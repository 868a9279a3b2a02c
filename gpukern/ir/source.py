"""Getting a decorated function's Python AST with true file positions."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
from dataclasses import dataclass
from typing import Any

from ..errors import KernelSyntaxError, Loc


@dataclass
class ParsedFunction:
    """A kernel or device function's AST and the namespace its names resolve in."""

    fn: Any
    name: str
    tree: ast.FunctionDef
    filename: str
    globals: dict[str, Any]
    closure: dict[str, Any]

    def loc(self, node: ast.AST) -> Loc:
        return Loc(self.filename, getattr(node, "lineno", self.tree.lineno), getattr(node, "col_offset", 0))

    def resolve_global(self, name: str) -> tuple[bool, Any]:
        """Look ``name`` up as Python would from the function body (closure, module, builtins)."""
        for scope in (self.closure, self.globals, vars(builtins)):
            if name in scope:
                return True, scope[name]
        return False, None


def _definition_lines(fn: Any, filename: str) -> tuple[list[str], int] | None:
    """The lines of ``fn``'s definition (decorators first) and the number of the first, found fast.

    ``inspect.getsourcelines`` tokenizes its way to the end of the block, most of a small
    kernel's compile time; this takes the lines up to the first one back at the definition's
    indentation (closing brackets aside).  A string or bracket whose lines start further left
    cuts the definition short, which then does not parse: the caller asks ``inspect``."""
    first = fn.__code__.co_firstlineno
    every = linecache.getlines(filename, fn.__globals__)
    if not 0 < first <= len(every):
        return None
    head = every[first - 1]
    indent = len(head) - len(head.lstrip())
    end, body = first, False
    while end < len(every):
        line = every[end]
        text = line.lstrip()
        if body and text and not text.startswith("#") and len(line) - len(text) <= indent and text[0] not in ")]}":
            break
        body = body or text.startswith(("def ", "async def "))
        end += 1
    return every[first - 1 : end], first


def _parse_in_place(lines: list[str], first: int) -> ast.Module:
    """Parse a definition on its own file positions (see ``parse_function``)."""
    text = "".join(lines)
    if text[:1] in (" ", "\t"):  # indented (so not on line 1): under an `if` at column 0, keeping its columns
        module = ast.parse("\n" * (first - 2) + "if 1:\n" + text)
        module.body = module.body[0].body  # type: ignore[attr-defined]
        return module
    return ast.parse("\n" * (first - 1) + text)


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source; line and column numbers point into the real file."""
    filename = inspect.getsourcefile(fn) or "<unknown>"
    if fn.__name__ == "<lambda>":
        return _finish(fn, filename, _lambda_definition(fn, filename))
    # Parsed in place: blank lines put it on its own line numbers, and an indented one (a method,
    # a nested function) is parsed under an ``if`` at column 0, keeping its columns; no pass over
    # the tree to shift positions, and no dedent (which a string's lines defeat).
    found = _definition_lines(fn, filename)
    try:
        if found is None:
            raise SyntaxError("not found")
        lines, first = found
        module = _parse_in_place(lines, first)
    except SyntaxError:
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise KernelSyntaxError(
                f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {e}",
                hint=_no_source_hint(fn.__code__.co_filename),
            ) from None
        try:
            module = _parse_in_place(lines, first)
        except SyntaxError as e:  # e.g. a lambda inside a larger expression: its lines alone do not parse
            raise KernelSyntaxError(
                f"cannot parse the source of {getattr(fn, '__name__', fn)!r} on its own: {e.msg}",
                Loc(filename, first, 0),
                "define kernels and device functions with def at the top level of a module or function",
            ) from None
    return _finish(fn, filename, module.body[0], first)


def _finish(fn: Any, filename: str, tree: ast.stmt, first: int = 0) -> ParsedFunction:
    """The parsed definition with the namespace its names resolve in."""
    if not isinstance(tree, ast.FunctionDef):
        what = "an async function" if isinstance(tree, ast.AsyncFunctionDef) else "not a plain function definition"
        raise KernelSyntaxError(
            f"{getattr(fn, '__name__', fn)!r} is {what}; kernels are plain def functions",
            Loc(filename, getattr(tree, "lineno", first), getattr(tree, "col_offset", 0)),
        )
    closure = {}
    if fn.__closure__:
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[var] = cell.cell_contents
            except ValueError:  # cell not yet filled
                pass
    name = "lambda" if fn.__name__ == "<lambda>" else fn.__name__  # (a C name)
    return ParsedFunction(fn, name, tree, filename, fn.__globals__, closure)


def lambda_loc(fn: Any) -> Loc:
    """Where a lambda starts, for errors about it."""
    filename = inspect.getsourcefile(fn) or "<unknown>"
    line = fn.__code__.co_firstlineno
    return Loc(filename, line, max(linecache.getline(filename, line).find("lambda"), 0))


def _lambda_definition(fn: Any, filename: str) -> ast.FunctionDef:
    """A lambda (``cuda.reduce(lambda a, b: a + b)``) as the def it stands for: found on its line by its
    parameters, its body the ``return``; refused where its line holds several such lambdas."""
    line = fn.__code__.co_firstlineno
    code = fn.__code__
    params = list(code.co_varnames[: code.co_argcount])
    col = max(linecache.getline(filename, line).find("lambda"), 0)
    found: list[ast.Lambda] = []
    try:
        lines, first = inspect.getsourcelines(fn)
        module = _parse_in_place(lines, first)
        found = [
            n
            for n in ast.walk(module)
            if isinstance(n, ast.Lambda) and n.lineno == line and [a.arg for a in n.args.args] == params
        ]
    except (OSError, TypeError, SyntaxError):
        pass
    if len(found) != 1 or found[0].args.vararg or found[0].args.kwarg or found[0].args.defaults:
        raise KernelSyntaxError(
            "this lambda's source could not be told apart on its line"
            if len(found) > 1
            else "a kernel or device function must be a def function or a one-line lambda",
            Loc(filename, line, col),
            "define it with def",
        )
    lam = found[0]
    body = ast.Return(value=lam.body)
    ast.copy_location(body, lam.body)
    tree = ast.FunctionDef(name="lambda", args=lam.args, body=[body], decorator_list=[], returns=None)
    return ast.copy_location(tree, lam)


def _no_source_hint(filename: str) -> str:
    """What to write instead, for where the function came from: exec() of a string, or a prompt."""
    if filename == "<string>":
        return (
            "it was made by exec() of a string, whose text Python does not keep: define it in a file, or "
            "compile the string with a file name (exec(compile(text, 'kernels.py', 'exec'), ...)) after "
            "putting the text in linecache.cache under that name"
        )
    return "kernels must be defined in a file, not typed at an interactive prompt"
