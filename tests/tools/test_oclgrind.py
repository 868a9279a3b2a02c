"""A second opinion on the simulator from an independent tool: oclgrind.

oclgrind (Debian's ``oclgrind``) is an OpenCL platform that runs kernels under its own race and
uninitialised-value checks (``--data-races --uninitialized``) and names the source lines through
the ``#line`` directives of gpukern's OpenCL C, so its findings on the sanitizer corpus
(tests/sanitizer_corpus.py) are Python lines.  Each case runs in a process of its own under
oclgrind, on gpukern's OpenCL backend.  The test: every race oclgrind reports for a buggy kernel
the simulator (``gk.sanitize``) reports at both lines; an uninitialised value or an invalid access,
at one of the lines oclgrind names (oclgrind also names the later lines a bad value flows to);
and oclgrind reports nothing on the correct ones.
oclgrind misses some bugs the simulator finds (a partly filled local array, index overflow that
stays in bounds, misaligned vectors); the reverse would be a hole in the simulator.

Skipped where oclgrind is not installed; ``.ci/run`` installs it, so CI runs it on every change.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sanitizer_corpus as corpus

import gpukern as gk

OCLGRIND = shutil.which("oclgrind")
if OCLGRIND is None and os.environ.get("GPUKERN_REQUIRE_OCLGRIND"):  # .ci/run: it must run, not skip
    raise RuntimeError("GPUKERN_REQUIRE_OCLGRIND is set but oclgrind is not installed")
# oclgrind runs every kernel of the corpus slowly (a minute of the README command's ten): .ci/run runs
# these tests apart, with GPUKERN_REQUIRE_OCLGRIND=1; set it to run them here too
pytestmark = pytest.mark.skipif(
    OCLGRIND is None or not os.environ.get("GPUKERN_REQUIRE_OCLGRIND"),
    reason="oclgrind's second opinion runs in .ci/run (GPUKERN_REQUIRE_OCLGRIND=1; apt-get install oclgrind)",
)

TESTS = Path(__file__).resolve().parents[1]
WORKER = (
    "import sys, numpy as np, gpukern as gk, sanitizer_corpus as corpus\n"
    "gk.set_backend('opencl')\n"
    "setup = corpus.by_name(sys.argv[1]).build()\n"
    "args = tuple(gk.to_device(a) if isinstance(a, np.ndarray) else a for a in setup.args)\n"
    "setup.launch(*args)\n"
    "gk.synchronize()\n"
    "print('worker done', flush=True)\n"
)
# a report's first line: "Read-write data race at ...", "Uninitialized value written to ...",
# "Invalid read of size 4 at ...", "Index (-1) exceeds static array size (32)"
_REPORT = re.compile(
    r"^(?=\S)[^\n]*?(data race|[Uu]ninitiali[sz]ed|[Ii]nvalid (read|write)|exceeds static array size)", re.M
)
_LINE = re.compile(r"At line (\d+) \(column \d+\) of (\S+):")


def oclgrind(name: str) -> tuple[dict[str, set[int]], str]:
    """The corpus lines oclgrind reports for case ``name``, per kind ('race' and 'other': an
    uninitialised value or an invalid access), and its output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)]), "GPUKERN_NO_CACHE": "1"}
    env.pop("GPUKERN_BACKEND", None)
    cmd = [OCLGRIND, "--data-races", "--uninitialized", sys.executable, "-c", WORKER, name]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, timeout=300)
    out = p.stdout + p.stderr
    assert "worker done" in out, out[-2000:]
    found: dict[str, set[int]] = {"race": set(), "other": set()}
    starts = [m.start() for m in _REPORT.finditer(out)] + [len(out)]
    for begin, end in zip(starts, starts[1:]):
        block = out[begin:end]
        kind = "race" if "data race" in block.splitlines()[0] else "other"
        found[kind] |= {int(n) for n, f in _LINE.findall(block) if Path(f).name == "sanitizer_corpus.py"}
    return found, out


def simulator_lines(case: corpus.Buggy | corpus.Correct) -> set[int]:
    """The lines of the simulator's faults: where each is reported, and a race's other side (its
    message names the line of the access it races with)."""
    gk.set_backend("sim")
    try:
        setup = case.build()
        faults = gk.sanitize(setup.launch, *setup.args)
    finally:
        gk.set_backend(None)
    lines = {f.loc.lineno for f in faults if f.loc is not None}
    return lines | {int(n) for f in faults for n in re.findall(r"at line (\d+)", str(getattr(f, "message", f)))}


def test_every_bug_oclgrind_finds_the_simulator_finds_at_the_same_line():
    """A race oclgrind reports is one the simulator reports, both accesses' lines; an uninitialised
    value or an invalid access, the simulator reports at a line oclgrind names (oclgrind also
    names the later lines an uninitialised value flows to, where the simulator stops at the first)."""
    found_by_oclgrind = []
    for case in corpus.BUGGY:
        if case.static:  # refused by the static checks: never runs on any device
            continue
        found, out = oclgrind(case.name)
        if not (found["race"] or found["other"]):
            continue
        found_by_oclgrind.append(case.name)
        sim = simulator_lines(case)
        tail = out[-3000:]
        assert found["race"] <= sim, f"{case.name}: oclgrind races at lines {sorted(found['race'] - sim)}\n{tail}"
        assert not found["other"] or found["other"] & sim, f"{case.name}: the simulator reports none of\n{tail}"
        assert case.line in sim
    # the comparison says something: oclgrind finds 30 of the 35 that run (PoCL 3.1, oclgrind 21.10)
    assert len(found_by_oclgrind) >= 28, found_by_oclgrind


def test_oclgrind_reports_nothing_on_the_correct_kernels():
    for case in corpus.CORRECT:
        found, out = oclgrind(case.name)
        assert not _REPORT.search(out), f"{case.name}:\n{out[-3000:]}"
        assert found == {"race": set(), "other": set()}
