"""Helpers for tests that write kernels as source text, point at a kernel's source lines, or test
the examples' own kernels (``load_example``)."""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import inspect
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

_DIR = Path(tempfile.mkdtemp(prefix="gpukern-test-kernels-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)  # nothing left behind in /tmp
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_module(source: str, prefix: str = "kernels") -> Any:
    """Write ``source`` to a file and import it (once per text), so ``inspect`` can read its kernels."""
    name = f"{prefix}_{hashlib.sha256(source.encode()).hexdigest()[:16]}"
    if name in sys.modules:
        return sys.modules[name]
    path = _DIR / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_kernel(source: str, prefix: str = "kernels") -> Any:
    """The kernel named ``k`` in ``source``."""
    return load_module(source, prefix).k


def line_of(kernel: Any, text: str) -> int:
    """The file line number of the first source line of ``kernel`` (or ``@func``) containing ``text``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def load_example(name: str) -> Any:
    """``examples/NAME.py`` imported once per process (as ``example_NAME``): the tests test the
    examples' kernels themselves, not copies of them."""
    module_name = f"example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
