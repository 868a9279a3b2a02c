"""Backend registry and selection.

A backend turns a kernel variant into something that runs and moves data to and
from its device.  Which one is used: ``gk.set_backend(name)``, else the
``GPUKERN_BACKEND`` environment variable, else the best one available (CUDA, then
OpenCL, then the simulator, which needs only NumPy).  Backends are created lazily, once per
process; the registry knows them by module name and imports a runtime only when asked for it.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

from ..array import DeviceArray
from ..errors import BackendError, LaunchError
from ..plan import convert_scalar
from ..types import array_element
from .base import Backend

# name -> (module, class) ; order is the order of preference
_BACKENDS = {
    "cuda": ("gpukern.backends.cuda", "CUDABackend"),
    "opencl": ("gpukern.backends.opencl", "OpenCLBackend"),
    "sim": ("gpukern.backends.sim", "SimBackend"),  # always works: NumPy only
}
_instances: dict[str, Backend] = {}
_unavailable: dict[str, str] = {}
_chosen: str | None = None
selection: list[object] = [object()]  # replaced whenever the choice changes: launch plans check it


def _create(name: str) -> Backend:
    if name in _instances:
        return _instances[name]
    if name not in _BACKENDS:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(_BACKENDS)}")
    if name in _unavailable:
        raise BackendError(f"backend {name!r} is not available: {_unavailable[name]}")
    module, cls = _BACKENDS[name]
    try:
        backend = getattr(importlib.import_module(module), cls)()
    except BackendError as e:
        _unavailable[name] = str(e)
        raise
    except ImportError as e:
        _unavailable[name] = f"{e}"
        raise BackendError(f"backend {name!r} is not available: {e}") from None
    _instances[name] = backend
    return backend


def available_backends() -> list[str]:
    """Names of the backends that can run kernels on this machine, best first."""
    out = []
    for name in _BACKENDS:
        try:
            _create(name)
        except BackendError:
            continue
        out.append(name)
    return out


def set_backend(name: str | None) -> None:
    """Use backend ``name`` from now on (None: back to the environment / default choice)."""
    global _chosen
    if name is not None:
        _create(name)
    _chosen = name
    selection[0] = object()


def get_backend(name: str | None = None) -> Backend:
    """The backend ``name``, or the current one."""
    name = name or _chosen or os.environ.get("GPUKERN_BACKEND") or None
    if name:
        return _create(name)
    reasons = []
    for candidate in _BACKENDS:
        try:
            return _create(candidate)
        except BackendError as e:
            reasons.append(str(e))
    raise BackendError(
        "no backend can run kernels here:\n  "
        + "\n  ".join(reasons)
        + "\nInstall pyopencl and an OpenCL driver (on Debian: apt-get install pocl-opencl-icd), or pycuda with a GPU."
    )


def backend_status() -> dict[str, str | None]:
    """Per known backend, best first: None when it can run kernels here, else why it cannot."""
    status: dict[str, str | None] = {}
    for name in _BACKENDS:
        try:
            _create(name)
            status[name] = None
        except BackendError as e:
            status[name] = _unavailable.get(name, str(e))
    return status


def backend_names() -> list[str]:
    """Every backend gpukern knows, available here or not, best first."""
    return list(_BACKENDS)


def chosen_backend() -> tuple[str | None, str]:
    """The backend asked for, if any, and how: 'set_backend', 'GPUKERN_BACKEND' or 'default'."""
    if _chosen:
        return _chosen, "set_backend"
    env = os.environ.get("GPUKERN_BACKEND")
    return (env, "GPUKERN_BACKEND") if env else (None, "default")


def to_device(array: Any, backend: str | None = None, stream: Any = None) -> DeviceArray:
    """Copy a NumPy array (or anything ``numpy.asarray`` takes) to the device; with ``stream``,
    the copy is queued on it and may still run on return when ``array`` is a C-contiguous NumPy
    array (which must then stay unchanged until the stream has copied it)."""
    a = np.ascontiguousarray(array)
    array_element(a.dtype, " for a device array")
    b = get_backend(backend)
    if stream is None:
        return b.to_device(a)
    out = b.empty(a.shape, a.dtype)
    if a is array:
        out.set_async(a, stream)
    else:  # a converted copy only this function holds: copied before it is freed
        out.set(a, stream)
    return out


def from_dlpack(x: Any, backend: str | None = None) -> DeviceArray:
    """A device array sharing the memory of ``x`` (a PyTorch tensor, CuPy or NumPy array, anything
    with ``__dlpack__``), without a copy; the backend's device must be where ``x`` lives."""
    if isinstance(x, DeviceArray):
        return x
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise LaunchError(f"gk.from_dlpack() takes an object with __dlpack__, not {type(x).__name__}")
    out = get_backend(backend).dlpack_import(x)
    array_element(out.dtype, " for a device array")
    return out


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """An uninitialised device array."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(int(s) < 0 for s in shape):
        raise LaunchError(f"negative dimension in shape {shape}")
    dt = np.dtype(dtype)
    array_element(dt, " for a device array")
    return get_backend(backend).empty(shape, dt)


def zeros(shape: int | tuple[int, ...], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """A device array of zeros."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return to_device(np.zeros(shape, dtype), backend)


__all__ = [
    "Backend",
    "available_backends",
    "backend_names",
    "backend_status",
    "chosen_backend",
    "convert_scalar",
    "empty",
    "from_dlpack",
    "get_backend",
    "set_backend",
    "to_device",
    "zeros",
]
