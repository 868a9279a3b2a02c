"""Stands for the few CuPy calls the ported programs make arrays with (``cp.asarray``, ``cp.zeros``,
``cp.empty``), so their host code runs as written where CuPy is not: each returns a gpukern device
array on the current backend, which has CuPy's ``get()``.  Programs import it as ``cp``."""

from __future__ import annotations

from typing import Any

import numpy as np

import gpukern as gk


def asarray(a: Any, dtype: Any = None) -> gk.DeviceArray:
    return gk.to_device(np.asarray(a, dtype=dtype))


array = asarray


def zeros(shape: Any, dtype: Any = float) -> gk.DeviceArray:
    return gk.to_device(np.zeros(shape, dtype))


def empty(shape: Any, dtype: Any = float) -> gk.DeviceArray:
    return gk.empty(shape, dtype)
