"""The simulator as a sanitizer, over the corpus of ``sanitizer_corpus.py``.

Each buggy kernel must be reported by ``gk.sanitize`` with the right fault class at the marked
line, naming the kernel and the threads involved, and a plain checked launch on the simulator
must raise that class (statically rejected kernels: raise it when compiled).  Each correct
kernel must be reported clean and give NumPy's outputs, on the simulator and on every other
backend here.
"""

from __future__ import annotations

import linecache
from typing import Any

import numpy as np
import pytest
import sanitizer_corpus as corpus

import gpukern as gk


def describe(faults: list[Any]) -> str:
    return "faults found: " + (
        "; ".join(f"{type(f).__name__} at line {f.loc.lineno if f.loc else '?'}" for f in faults) or "none"
    )


def assert_outputs(setup: corpus.Setup) -> None:
    for position, want in (setup.expected or {}).items():
        np.testing.assert_array_equal(np.asarray(setup.args[position]), want, err_msg=f"argument {position}")


# ---------------------------------------------------------------- the corpus itself


def test_corpus_covers_what_it_must(on_simulator):
    names = [c.name for c in (*corpus.BUGGY, *corpus.CORRECT, *corpus.MULTI)]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(corpus.BUGGY) >= 32 and len(corpus.CORRECT) >= 16
    assert {c.category for c in corpus.BUGGY} == set(corpus.CATEGORIES)
    assert {c.tool for c in corpus.BUGGY} <= {*corpus.TOOLS, corpus.NONE}
    for case in corpus.BUGGY:
        assert case.marker in linecache.getline(case.where.fn.__code__.co_filename, case.line), case.name
        assert not case.static or case.fault is gk.BarrierDivergenceError, case.name
    assert all(case.build().expected for case in corpus.CORRECT), "every correct kernel has a NumPy reference"


# ---------------------------------------------------------------- buggy kernels


@pytest.mark.parametrize("case", corpus.BUGGY, ids=lambda c: c.name)
def test_sanitize_reports_the_bug(case: corpus.Buggy, on_simulator):
    setup = case.build()
    faults = gk.sanitize(setup.launch, *setup.args)
    found = [f for f in faults if isinstance(f, case.fault) and f.loc is not None and f.loc.lineno == case.line]
    assert found, f"expected {case.fault.__name__} at line {case.line}; {describe(faults)}"
    assert all(isinstance(f, gk.KernelFault) for f in faults)
    fault = found[0]
    assert fault.kernel == setup.launch.kernel.__name__
    if case.static:
        return  # found before anything ran: no threads
    assert fault.kernel in fault.message
    assert fault.threads, "a fault names the threads involved"
    for block, thread in fault.threads:
        assert len(block) == 3 and len(thread) == 3


@pytest.mark.parametrize("case", corpus.BUGGY, ids=lambda c: c.name)
def test_checked_launch_raises_the_bug(case: corpus.Buggy, on_simulator):
    setup = case.build()
    with pytest.raises(gk.KernelFault) as info:
        setup.launch(*setup.args, check=True)
    e = info.value
    assert isinstance(e, case.fault), f"expected {case.fault.__name__}, got {type(e).__name__}: {e}"
    assert e.lineno == case.line, str(e)


@pytest.mark.parametrize("case", corpus.MULTI, ids=lambda c: c.name)
def test_sanitize_reports_every_bug_of_a_kernel(case: corpus.Multi, on_simulator):
    setup = case.build()
    faults = gk.sanitize(setup.launch, *setup.args)
    assert len(faults) >= 2, describe(faults)
    for cls, line in case.expected():
        assert any(isinstance(f, cls) and f.loc is not None and f.loc.lineno == line for f in faults), (
            f"expected {cls.__name__} at line {line}; {describe(faults)}"
        )


# ---------------------------------------------------------------- correct kernels


@pytest.mark.parametrize("case", corpus.CORRECT, ids=lambda c: c.name)
def test_sanitize_finds_nothing_in_a_correct_kernel(case: corpus.Correct, on_simulator):
    setup = case.build()
    faults = gk.sanitize(setup.launch, *setup.args)
    assert faults == [], describe(faults)
    assert_outputs(setup)


@pytest.mark.parametrize("case", corpus.CORRECT, ids=lambda c: c.name)
def test_correct_kernel_matches_numpy(case: corpus.Correct, backend):
    """On every backend here (the simulator with its default checks on, OpenCL, CUDA)."""
    setup = case.build()
    setup.launch(*setup.args, **({"check": True} if backend == "sim" else {}))
    assert_outputs(setup)
