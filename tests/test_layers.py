"""The package's layers (docs/architecture.md) as a contract: import-linter checks it on every run.

The contract lives in pyproject.toml (``[tool.importlinter]``); ``.ci/run`` also runs ``lint-imports``
itself.  These tests check that the contract holds, that it covers every folder and top-level module
(a module in no layer would escape it), and that it has teeth: an upward import fails it, and the
message names the chain of imports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gpukern"


def contract() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package found first on the path from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(cwd), os.environ.get("PYTHONPATH"))))}
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_layer_contract_is_kept():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BROKEN" not in run.stdout and "Contracts: " in run.stdout and " 0 broken" in run.stdout


def test_every_folder_and_top_level_module_is_in_a_layer():
    (layers,) = [c["layers"] for c in contract()["contracts"] if c["type"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}
    entries = {p.stem for p in PACKAGE.glob("*.py")} | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    outside = {f"gpukern.{e}" for e in entries - {"__init__", "__main__"}} - named
    assert not outside, f"not in any layer of the contract: {sorted(outside)}"
    assert len(list(PACKAGE.glob("*.py"))) <= 10, "the package's top holds only the face and the ground"


@pytest.mark.parametrize(
    ("module", "statement", "chain"),
    [
        # a meaning module reaching up to the tools, inside a function (imports there count too)
        (
            "semantics/ops.py",
            "def _late():\n    from ..tools import cli\n",
            "gpukern.semantics.ops -> gpukern.tools.cli",
        ),
        # the front end reaching for a runtime's compiler
        ("frontend/views.py", "from ..backends import nvrtc\n", "gpukern.frontend.views -> gpukern.backends.nvrtc"),
        # the simulator reaching for the CUDA runtime
        ("sim/limits.py", "from ..backends import cuda_driver\n", "gpukern.sim.limits -> gpukern.backends.cuda_driver"),
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, module, statement, chain):
    shutil.copytree(PACKAGE, tmp_path / "gpukern", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "gpukern" / module
    target.write_text(target.read_text() + "\n\n" + statement)
    run = lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    assert "BROKEN" in run.stdout and chain in run.stdout, run.stdout
