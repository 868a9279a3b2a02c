"""Getting a decorated function's Python AST with true file positions."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Any

from .errors import KernelSyntaxError, Loc


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


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source; line and column numbers point into the real file."""
    filename = inspect.getsourcefile(fn) or "<unknown>"
    if fn.__name__ == "<lambda>":
        line = fn.__code__.co_firstlineno
        col = max(linecache.getline(filename, line).find("lambda"), 0)
        raise KernelSyntaxError(
            "a kernel or device function must be a def function, not a lambda", Loc(filename, line, col)
        )
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise KernelSyntaxError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {e}",
            hint="kernels must be defined in a file, not typed at an interactive prompt",
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(text.splitlines()[0]) - len(dedented.splitlines()[0])
    try:
        module = ast.parse(dedented)
    except SyntaxError as e:  # e.g. a lambda inside a larger expression: its lines alone do not parse
        raise KernelSyntaxError(
            f"cannot parse the source of {getattr(fn, '__name__', fn)!r} on its own: {e.msg}",
            Loc(filename, first, 0),
            "define kernels and device functions with def at the top level of a module or function",
        ) from None
    for node in ast.walk(module):
        if hasattr(node, "lineno"):
            node.lineno += first - 1
            node.col_offset += indent
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += first - 1
                node.end_col_offset += indent
    tree = module.body[0]
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
    return ParsedFunction(fn, fn.__name__, tree, filename, fn.__globals__, closure)
