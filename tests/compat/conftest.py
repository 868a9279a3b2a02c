"""The compatibility corpus: other people's Numba-CUDA and CuPy-JIT programs, ported by spelling.

A case the corpus keeps although gpukern refuses it carries ``@pytest.mark.refused("why", on=(...))``
(``on``: the backends that refuse it, all by default).  It runs as a strict xfail that must raise a
``gk.GpukernError``: a refusal that starts to pass, or that fails any other way (a wrong result, an
internal error), fails the suite.  A case whose program is wrong, where gpukern's checks say so,
carries ``@pytest.mark.finds("what", error=gk.SomeError, on=(...))``: it must raise that error there
(the simulator's finding), and it counts as a pass.  ``test_corpus.py`` counts the cases, the refusals and the findings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import gpukern as gk


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "refused(reason, on=()): gpukern refuses this corpus case (with a GpukernError)")
    config.addinivalue_line("markers", "finds(what, error, on=()): gpukern's checks find a bug in this program")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here not in Path(item.path).parents:  # (the hook sees every test of the session)
            continue
        backend = item.callspec.params.get("backend") if hasattr(item, "callspec") else None
        for mark in item.iter_markers("refused"):
            if backend in mark.kwargs.get("on", ()) or not mark.kwargs.get("on"):
                item.add_marker(pytest.mark.xfail(strict=True, raises=gk.GpukernError, reason=mark.args[0]))
                break
        else:
            for mark in item.iter_markers("finds"):
                if backend in mark.kwargs.get("on", ()) or not mark.kwargs.get("on"):
                    item.stash[FINDING] = mark


FINDING = pytest.StashKey[pytest.Mark]()


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """A case marked ``finds`` passes only if it raises the finding's error."""
    mark = pyfuncitem.stash.get(FINDING, None)
    if mark is None:
        return (yield)
    with pytest.raises(mark.kwargs["error"]):
        yield
    return True
