"""What every runtime backend provides, and the argument conversion they share."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.dialect import Dialect
from ..errors import BackendError, InteropError, LaunchError
from ..runtime.array import DeviceArray
from ..runtime.plan import C_VALUE, convert_scalar
from ..runtime.variant import Variant
from ..semantics import cluster as cluster_ops
from ..types import int64


class Backend:
    """What every runtime backend provides.

    A backend sets ``max_group`` (threads per block), ``max_items`` (per dimension),
    ``max_grid`` (blocks per dimension) and ``max_shared`` (bytes per block) from its device,
    where it has them ``max_threads`` and ``max_blocks`` (in a whole launch) and
    ``max_shared_optin`` (static and dynamic shared bytes a block may have when the launch asks
    for more than ``max_shared``, as CUDA's opt-in allows), and implements
    ``device_pointer`` for the arrays it accepts.
    """

    name: str
    dialect: Dialect
    index: int = 0  # which of the backend's devices (``gk.devices()``) this instance runs on
    gk_device: Any = None  # that device as a ``gk.Device`` (set by the registry)
    max_group: int
    max_items: tuple[int, ...]
    max_grid: tuple[int, ...] = (2**31 - 1, 2**31 - 1, 2**31 - 1)
    max_threads: int | None = None
    max_blocks: int | None = None
    max_shared: int
    max_shared_optin: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        """The backend and device: what a variant's compiled form is kept under (a kernel loaded
        in one device's context is no kernel in another's)."""
        return (self.name, self.index)

    def where(self) -> str:
        """The device in words, for messages."""
        return f"{self.name} device {self.index}"

    @staticmethod
    def default_index() -> int:
        """The device used where none is chosen (``with gk.Device(i):``)."""
        return 0

    @staticmethod
    def device_names() -> list[str]:
        """The names of the backend's devices, in index order, without opening any."""
        raise NotImplementedError

    def check_limits(
        self, variant: Variant, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int | None = None
    ) -> None:
        """Refuse, before anything runs, a launch the device cannot take (``shared``: its dynamic
        shared memory in bytes, None where the launch gave none)."""
        threads = block[0] * block[1] * block[2]
        if threads > self.max_group or any(b > m for b, m in zip(block, self.max_items)):
            raise LaunchError(
                f"block {block} has {threads} threads; this device allows at most {self.max_group} "
                f"per block and {self.max_items} per dimension"
            )
        bounds = variant.program.kernel.launch_bounds
        if bounds and threads > bounds[0]:
            raise LaunchError(
                f"block {block} has {threads} threads but {variant.kernel.__name__} declares "
                f"launch_bounds({bounds[0]}): it may not run with more"
            )
        dims = variant.program.kernel.cluster
        why = cluster_ops.grid_problem(grid, dims) if dims is not None else None
        if why is not None:
            raise LaunchError(
                f"{variant.kernel.__name__} runs in clusters of {dims} blocks (cluster_dims): {why}; launch a "
                "grid whose size in each dimension is a multiple of the cluster's"
            )
        if any(g > m for g, m in zip(grid, self.max_grid)):
            raise LaunchError(
                f"{variant.kernel.__name__}: grid {grid} exceeds this device's limits {self.max_grid} "
                f"(blocks per dimension)"
            )
        blocks = math.prod(grid)
        if self.max_blocks is not None and blocks > self.max_blocks:
            raise LaunchError(
                f"{variant.kernel.__name__}[{grid}, {block}] has {blocks} blocks; "
                f"{self.name} launches at most {self.max_blocks}"
            )
        if self.max_threads is not None and blocks * threads > self.max_threads:
            raise LaunchError(
                f"{variant.kernel.__name__}[{grid}, {block}] has {blocks * threads} threads; "
                f"{self.name} launches at most {self.max_threads}"
            )
        if variant.shared_bytes > self.max_shared:
            raise LaunchError(
                f"{variant.kernel.__name__} uses {variant.shared_bytes} bytes of shared memory; "
                f"this device allows {self.max_shared} per block"
            )
        if shared is not None or variant.dynamic_shared:
            self.check_dynamic_shared(variant, shared)

    def check_dynamic_shared(self, variant: Variant, shared: int | None) -> None:
        """A kernel with dynamic_shared() arrays needs their size from the launch, a whole number of
        elements of each, and room for it beside the static shared memory."""
        name = variant.kernel.__name__
        for ref in variant.dynamic_shared:
            t, line = ref.type.elem, f" (line {ref.loc.lineno})" if ref.loc is not None else ""
            if shared is None:
                raise LaunchError(
                    f"{name} declares dynamic_shared({t.name}) {ref.name!r}{line}, whose size the launch gives: "
                    f"launch it as {name}[grid, block, shared_bytes](...)"
                )
            if shared % t.itemsize:
                raise LaunchError(
                    f"{name}[grid, block, {shared}]: {shared} bytes of dynamic shared memory is not a whole number "
                    f"of {t.name} elements ({t.itemsize} bytes each) for dynamic_shared({t.name}) {ref.name!r}{line}"
                )
        total = variant.shared_bytes + (shared or 0)
        limit = self.max_shared_optin or self.max_shared
        if total > limit:
            raise LaunchError(
                f"{name}[grid, block, {shared}] needs {total} bytes of shared memory per block "
                f"({variant.shared_bytes} static, {shared} dynamic); this device allows {limit}"
            )

    def check_arrays(self, variant: Variant, args: tuple[Any, ...]) -> None:
        """Refuse, before anything is copied or runs, an array argument this backend cannot use:
        a device array of another backend, or a read-only NumPy array that the kernel writes."""
        for p in variant.kernel_params:
            if p.kind != "array":
                continue
            a = args[p.arg_index]
            if isinstance(a, DeviceArray):
                self._own(a, p.name)
            elif isinstance(a, np.ndarray) and not a.flags.writeable and p.name in variant.written:
                raise LaunchError(
                    f"{variant.kernel.__name__}: argument {p.name!r} is a read-only NumPy array "
                    f"(flags.writeable is False) but the kernel writes it; pass a writable copy"
                )

    def pack_args(
        self, variant: Variant, args: tuple[Any, ...], stream: Any = None
    ) -> tuple[list[Any], list[tuple[np.ndarray, Any]]]:
        """The C arguments of a launch, and the (host array, device buffer) pairs to copy back
        (NumPy arguments are copied in on ``stream``, the launch's)."""
        self.check_arrays(variant, args)  # nothing is copied before every argument is known to be usable
        params = variant.kernel_params
        kernel = variant.kernel.__name__
        # scalars first: a bad one must fail before any array is copied to the device
        cargs: list[Any] = [
            convert_scalar(args[p.arg_index], p.type, p.name, kernel) if p.kind == "scalar" else None for p in params
        ]
        copy_back: list[tuple[np.ndarray, Any]] = []
        pointers: dict[int, Any] = {}
        for i, p in enumerate(params):
            a = args[p.arg_index]
            if p.kind == "array":
                cargs[i] = self.device_pointer(a, p.name, copy_back if p.name in variant.written else None, stream)
                pointers[p.arg_index] = cargs[i]
            elif p.kind == "shape":
                cargs[i] = C_VALUE[int64](a.shape[p.dim])
            elif p.kind == "tensor_map":  # (after its array: kernel._kernel_params orders them so)
                cargs[i] = self.tensor_map(int(pointers[p.arg_index]), tuple(a.shape), p.map)
        return cargs, copy_back

    def tensor_map(self, pointer: int, shape: tuple[int, ...], m: Any) -> Any:
        """A TMA descriptor of the array at ``pointer`` (``ir.TensorMap`` ``m``): backends with TMA say how."""
        raise LaunchError(f"{self.name} has no TMA copies (gk.tensor_map)")

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of the device's memory: backends that can tell say."""
        raise BackendError(f"the {self.name} backend cannot say how much device memory is free")

    def resident_blocks(self, variant: Variant, block: tuple[int, int, int], shared: int = 0) -> int:
        """How many blocks of ``variant`` the device runs at once: backends with an occupancy calculator say."""
        raise BackendError(
            f"the {self.name} backend cannot say how many blocks of {variant.kernel.__name__} run at once (CUDA's "
            "occupancy calculator can); choose the grid from the work instead, e.g. one block per row"
        )

    lanes = 32  # the threads of a warp its variants are compiled for (semantics.values.Rules.lanes)
    plans = False  # whether launches leave plans (gpukern.runtime.plan): the backend has a launcher
    reads_foreign = False  # whether its plans take other libraries' arrays (gpukern.runtime.foreign.Reader)
    packs_scalars = False  # whether its launcher packs scalars itself (gpukern.runtime.plan.packed_as_is says which)

    def launcher(
        self, variant: Variant, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any], Any], None]:
        """The driver call that launches ``variant`` on ``grid`` x ``block`` with ``shared`` bytes of
        dynamic shared memory, given its C arguments (a list, as ``pack_args`` makes them) and a
        stream handle (None: the default stream).  Made once per configuration on this device
        (``make_launcher``) and kept on the variant: the checked path and the launch plan it leaves
        share it, and checked launches (NumPy arguments) do not build one per call."""
        key = (self.key, grid, block, shared)
        made = variant.launchers.get(key)
        if made is None:
            if len(variant.launchers) >= 64:  # unplanned launches over ever new grids: start again
                variant.launchers.clear()
            made = variant.launchers.setdefault(key, self.make_launcher(variant, grid, block, shared))
        return made

    def make_launcher(
        self, variant: Variant, grid: tuple[int, int, int], block: tuple[int, int, int], shared: int = 0
    ) -> Callable[[list[Any], Any], None]:
        """A new ``launcher``.  A kernel with dynamic_shared() arrays takes the bytes (and on OpenCL
        the buffer) after its own arguments: the launcher adds them."""
        raise NotImplementedError

    def device_pointer(
        self, a: Any, name: str, copy_back: list[tuple[np.ndarray, Any]] | None, stream: Any = None
    ) -> Any:
        """The device memory of array argument ``a``; a NumPy array is copied in on ``stream`` (and
        noted in ``copy_back`` when the kernel writes it)."""
        raise NotImplementedError

    def _own(self, a: DeviceArray, name: str) -> Any:
        if a.backend is not self:
            raise LaunchError(
                f"argument {name!r} lives on {a.backend.where()}, but the launch runs on {self.where()}: copy it "
                f"(a.get(), gk.to_device) or launch inside `with gk.Device({a.backend.index}, {a.backend.name!r}):`"
            )
        return a.handle

    def launch(
        self,
        variant: Variant,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        shared: int | None = None,
        stream: Any = None,
    ) -> None:
        """The checked launch path (``stream``: a stream handle, None for the default stream)."""
        raise NotImplementedError

    def to_device(self, array: np.ndarray) -> DeviceArray:
        raise NotImplementedError

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        raise NotImplementedError

    def download(self, array: DeviceArray) -> np.ndarray:
        raise NotImplementedError

    def view(self, array: DeviceArray, shape: tuple[int, ...]) -> DeviceArray:
        """``array``'s memory under another shape of the same size (C order: no copy); it keeps
        ``array`` alive."""
        return DeviceArray(self, array.handle, shape, array.dtype, owner=array)

    def view_at(
        self, root: DeviceArray, offset: int, shape: tuple[int, ...], strides: tuple[int, ...], contiguous: bool
    ) -> DeviceArray:
        """A view of ``root``'s memory (``root[key]``): ``shape`` elements from byte ``offset`` at
        byte ``strides``.  A C-contiguous view the device can point to has a handle of its own; any
        other is staged (no handle: launches copy it, copies go through the host)."""
        within = (root, offset, strides)
        handle = self.address(root, offset, shape) if contiguous else None
        view = DeviceArray(self, handle, shape, root.dtype, owner=root, within=within)
        if handle is not None:
            self.share_flags(root, view, offset)
        return view

    def address(self, root: DeviceArray, offset: int, shape: tuple[int, ...]) -> Any:
        """A handle for a C-contiguous array of ``shape`` in ``root``'s memory from byte
        ``offset``, or None where the device cannot address it as an array of its own."""
        return root.handle if offset == 0 else None

    def share_flags(self, root: DeviceArray, view: DeviceArray, offset: int) -> None:
        """Hook for a backend that tracks something per element (the simulator's written flags)."""

    def synchronize(self) -> None:
        raise NotImplementedError

    def timer(self) -> Any:
        """A device event recorded now on the default stream; ``elapsed(a, b)`` gives seconds
        between two."""
        return self.record(None)

    def elapsed(self, start: Any, end: Any) -> float:
        raise NotImplementedError

    # ------------------------------------------------------------ streams and events
    # A stream handle is the runtime's own object (None: the default stream); an event handle is
    # what ``record`` returns.  ``gpukern.streams`` wraps both for users.
    def new_stream(self) -> Any:
        raise NotImplementedError

    def stream_ref(self, stream: Any) -> Any:
        """The handle launches and copies take for a stream ``new_stream`` made (the object itself
        where the runtime's calls take it)."""
        return stream

    def foreign_stream(self, stream: Any, handles: bool = False) -> Any:
        """The handle of another library's stream object, for ``gk.Stream.wrap``."""
        raise LaunchError(f"the {self.name} backend takes no streams of other libraries (given {stream!r})")

    def stream_synchronize(self, stream: Any) -> None:
        raise NotImplementedError

    def stream_wait(self, stream: Any, event: Any) -> None:
        """Work queued on ``stream`` after this waits until ``event`` has happened."""
        raise NotImplementedError

    def record(self, stream: Any) -> Any:
        """An event that happens when the work queued on ``stream`` so far has finished."""
        raise NotImplementedError

    def event_synchronize(self, event: Any) -> None:
        raise NotImplementedError

    def event_done(self, event: Any) -> bool:
        raise NotImplementedError

    # ------------------------------------------------------------ DLPack
    def dlpack_device(self) -> tuple[int, int]:
        """DLPack's (device type, device id) of this backend's memory."""
        raise InteropError(f"the {self.name} backend's arrays cannot be shared through DLPack")

    def dlpack_export(self, array: DeviceArray, stream: Any, max_version: Any) -> Any:
        raise InteropError(f"the {self.name} backend's arrays cannot be shared through DLPack")

    def dlpack_import(self, x: Any) -> DeviceArray:
        """A device array sharing the memory of ``x`` (which has ``__dlpack__``) with no copy."""
        raise LaunchError(f"the {self.name} backend cannot take arrays through DLPack")

    # ------------------------------------------------------------ copies
    def pinned_empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """Host memory the device copies to and from without staging (page-locked where the
        runtime has it; plain memory elsewhere)."""
        return np.empty(shape, dtype)

    def copy_to_device(self, dst: DeviceArray, src: np.ndarray, stream: Any, wait: bool) -> None:
        """Copy host ``src`` into ``dst`` on ``stream``; with ``wait`` False it may still be running
        on return (``src`` must then stay untouched until the stream has done it)."""
        raise NotImplementedError

    def copy_to_host(self, dst: np.ndarray, src: DeviceArray, stream: Any, wait: bool) -> None:
        raise NotImplementedError

    def copy_on_device(self, dst: DeviceArray, src: DeviceArray, stream: Any) -> None:
        raise NotImplementedError

    def device_name(self) -> str:
        raise NotImplementedError
