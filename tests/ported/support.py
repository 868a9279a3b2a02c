"""The xfail marks of the ported corpus: one spelling for each kind of reason, so the README's list
and the marks agree and a search for a feature finds every kernel that waits on it."""

from __future__ import annotations

import numpy as np
import pytest


def needs(feature: str) -> pytest.MarkDecorator:
    """A kernel that waited on ``feature`` of issue 14, which has landed: no mark any more (the ones
    that still fail are listed with their reasons in ``conftest.py``)."""
    return pytest.mark.filterwarnings("default")


def gap(what: str) -> pytest.MarkDecorator:
    """A kernel that fails because gpukern lacks ``what``, which issue 14's API list does not add."""
    return pytest.mark.xfail(strict=True, reason=f"gpukern gap, not in issue 14's API list: {what}")


def bug(what: str) -> pytest.MarkDecorator:
    """A kernel that gpukern accepts but runs wrongly, or refuses although it is valid gpukern."""
    return pytest.mark.xfail(strict=True, reason=f"gpukern bug: {what}")


def rng(seed: int = 0) -> np.random.Generator:
    """The inputs' random source (Numba's tests seed NumPy's global one with 0)."""
    return np.random.default_rng(seed)
