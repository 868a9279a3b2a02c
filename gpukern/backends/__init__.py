"""Backend registry and selection; the device runtimes (CUDA, OpenCL) live beside it.

A backend turns a kernel variant into something that runs and moves data to and
from its device.  Which one is used: ``gk.set_backend(name)``, else the
``GPUKERN_BACKEND`` environment variable, else the best one available (CUDA, then
OpenCL, then the simulator, which needs only NumPy).  Backends are created lazily, once per
process; the registry knows them by module name and imports a runtime only when asked for it
(the simulator's is ``gpukern.sim.interpreter``).  This layer imports ``gpukern.runtime`` and below;
a new runtime is a ``base.Backend`` subclass in its own module, registered in ``_BACKENDS``.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

from ..errors import BackendError, LaunchError
from ..runtime.array import DeviceArray
from ..runtime.plan import convert_scalar
from ..types import array_element
from .base import Backend

# name -> (module, class) ; order is the order of preference
_BACKENDS = {
    "cuda": ("gpukern.backends.cuda", "CUDABackend"),
    "hip": ("gpukern.backends.hip", "HIPBackend"),  # AMD GPUs under ROCm (not yet run on hardware)
    "opencl": ("gpukern.backends.opencl", "OpenCLBackend"),
    "sim": ("gpukern.sim.interpreter", "SimBackend"),  # always works: NumPy only
}
_instances: dict[tuple[str, int], Backend] = {}  # (name, device index) -> the backend on that device
_defaults: dict[str, Backend] = {}  # name -> the instance used where no device is chosen
_unavailable: dict[str, str] = {}
_chosen: str | None = None
_devices: list[Device] = []  # the devices made current by `with gk.Device(i):`, innermost last
selection: list[object] = [object()]  # what a launch plan checks; replaced whenever the choice changes
_tokens: dict[tuple[Any, ...], object] = {}  # one token per (choice, device): a plan of it stays good


class Device:
    """One device of one backend: ``gk.Device(1)`` (of the current backend), ``gk.Device(0,
    "opencl")``.  ``with gk.Device(1):`` makes it current for the process until the block ends:
    launches, ``gk.to_device``, ``gk.empty`` and ``gk.zeros`` go to it (a launch with arrays of
    another device is a ``LaunchError``).  The device opens (a CUDA context, an OpenCL queue) on
    first use."""

    __slots__ = ("backend_name", "index")

    def __init__(self, index: int = 0, backend: str | None = None):
        if type(index) is not int or index < 0:
            raise BackendError(f"a device is a number 0, 1, ..., not {index!r}")
        name = backend or (_devices[-1].backend_name if _devices else None) or _chosen_name() or get_backend().name
        if name not in _BACKENDS:
            raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(_BACKENDS)}")
        self.backend_name, self.index = name, index

    def backend(self) -> Backend:
        """The backend instance that runs on this device (opened now if it was not)."""
        return _create(self.backend_name, self.index)

    @property
    def name(self) -> str:
        return self.backend().device_name()

    def synchronize(self) -> None:
        """Wait for everything queued on this device."""
        self.backend().synchronize()

    def __enter__(self) -> Device:
        self.backend()  # refused here, not at the first launch, if the device does not exist
        _devices.append(self)
        _reselect()
        return self

    def __exit__(self, *exc: Any) -> None:
        if _devices and _devices[-1] is self:
            _devices.pop()
        elif self in _devices:  # left out of order (a generator's with-block): drop the innermost equal one
            del _devices[len(_devices) - 1 - _devices[::-1].index(self)]
        _reselect()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.backend_name, other.index) == (self.backend_name, self.index)

    def __hash__(self) -> int:
        return hash((Device, self.backend_name, self.index))

    def __repr__(self) -> str:
        return f"gk.Device({self.index}, {self.backend_name!r})"


def _chosen_name() -> str | None:
    return _chosen or os.environ.get("GPUKERN_BACKEND") or None


def _reselect() -> None:
    """A new token for launch plans (one per backend choice and current device, so that coming
    back to a device finds its plans good again)."""
    top = (_devices[-1].backend_name, _devices[-1].index) if _devices else None
    selection[0] = _tokens.setdefault((_chosen, os.environ.get("GPUKERN_BACKEND"), top), object())


def _create(name: str, index: int | None = None) -> Backend:
    """The backend ``name`` on device ``index`` (None: its default device), made once."""
    made = _defaults.get(name) if index is None else _instances.get((name, index))
    if made is not None:
        return made
    if name not in _BACKENDS:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(_BACKENDS)}")
    if name in _unavailable:
        raise BackendError(f"backend {name!r} is not available: {_unavailable[name]}")
    module, cls = _BACKENDS[name]
    try:
        kind = getattr(importlib.import_module(module), cls)
        if index is None:  # the default device, unless it is open already
            backend = _instances.get((name, kind.default_index())) or kind()
        else:
            backend = kind(index)
    except BackendError as e:
        if index is None:  # the backend cannot run here at all (a device that does not exist is no reason)
            _unavailable[name] = str(e)
        raise
    except ImportError as e:
        _unavailable[name] = f"{e}"
        raise BackendError(f"backend {name!r} is not available: {e}") from None
    backend = _instances.setdefault((name, backend.index), backend)
    backend.gk_device = Device(backend.index, name)
    if index is None:
        _defaults[name] = backend
    return backend


def devices(backend: str | None = None) -> list[Device]:
    """Every device of ``backend`` (default: the current one), without opening them."""
    name = backend or (_devices[-1].backend_name if _devices else None) or _chosen_name() or get_backend().name
    if name not in _BACKENDS:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(_BACKENDS)}")
    _create(name)  # the backend must be usable here
    module, cls = _BACKENDS[name]
    count = len(getattr(importlib.import_module(module), cls).device_names())
    return [Device(i, name) for i in range(count)]


def current_device() -> Device:
    """The device launches go to now."""
    return get_backend().gk_device


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
    _reselect()


def get_backend(name: str | None = None) -> Backend:
    """The backend ``name``, or the current one; on the device made current by ``with
    gk.Device(i):`` where it is one of that backend's."""
    if _devices and (name is None or name == _devices[-1].backend_name):
        return _devices[-1].backend()
    name = name or _chosen_name()
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
    a = np.asarray(array, order="C")  # C-contiguous, and 0-d stays 0-d (ascontiguousarray makes it 1-d)
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
    "Device",
    "current_device",
    "devices",
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
