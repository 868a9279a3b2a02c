"""Device arrays: data that stays on a device between launches."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InteropError, LaunchError

_KINDS: dict[tuple[Any, np.dtype, int], tuple[Any, np.dtype, int]] = {}


def array_kind(backend: Any, dtype: np.dtype, ndim: int) -> tuple[Any, np.dtype, int]:
    """The one object standing for (backend, dtype, rank): a launch plan tests a device array with
    one identity comparison (``a.kind is kind``) instead of three attribute tests."""
    key = (backend, np.dtype(dtype), ndim)
    return _KINDS.setdefault(key, key)


def _c_strides(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, ...]:
    """The byte strides of a C-contiguous array of ``shape``."""
    out, step = [], np.dtype(dtype).itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def stream_handle(stream: Any, backend: Any, what: str) -> Any:
    """The runtime's handle of ``stream`` (a ``gpukern.Stream``, checked to belong to ``backend``,
    or a stream of another library that the backend takes; None is the default stream)."""
    if stream is None:
        return None
    owner = getattr(stream, "backend", None)
    if owner is None or not hasattr(stream, "handle"):
        try:
            return backend.foreign_stream(stream)
        except LaunchError as e:
            raise LaunchError(
                f"{what}: stream must be a gpukern.Stream or None, or a stream this backend takes: {e}"
            ) from None
    if owner is not backend:
        raise LaunchError(f"{what}: the stream belongs to backend {owner.name!r}, not {backend.name!r}")
    return stream.handle


def _is_basic(key: Any) -> bool:
    """Whether NumPy's ``x[key]`` is a view (integers, slices, ``...``, ``None``), not a copy."""
    items = key if isinstance(key, tuple) else (key,)
    return all(
        isinstance(k, (int, np.integer, slice)) and not isinstance(k, (bool, np.bool_)) or k is None or k is Ellipsis
        for k in items
    )


class DeviceArray:
    """An array in one backend's device memory: C-contiguous, or a view into another (``a[2:6]``,
    ``a[:, 1]``, as Numba's and CuPy's device arrays slice).

    Launches use it in place (no copies); ``get()`` copies it back to a NumPy array.  Its backend,
    shape and dtype are fixed when it is made (``kind`` holds them for launch plans).  A view the
    device can address as an array of its own (C-contiguous, at an offset the backend can point
    to) has a handle; any other view (strided, or an OpenCL offset the device cannot address) has
    none and is *staged*: a launch runs the kernel on a contiguous copy and writes what the kernel
    wrote back into the view, as for a NumPy argument of other strides.
    """

    def __init__(
        self,
        backend: Any,
        handle: Any,
        shape: tuple[int, ...],
        dtype: np.dtype,
        owner: Any = None,
        within: tuple[DeviceArray, int, tuple[int, ...]] | None = None,
    ):
        self._backend = backend
        self.owner = owner  # what keeps memory this array does not own alive (an imported DLPack tensor)
        self.handle = handle
        self._shape = tuple(int(s) for s in shape)
        self._dtype = np.dtype(dtype)
        # a view: (the array that owns the memory, byte offset into it, byte strides)
        self.within = within
        # a staged view matches no launch plan's test (kind None): the checked path stages it
        self.kind = None if handle is None else array_kind(backend, self._dtype, len(self._shape))

    @property
    def staged(self) -> bool:
        """Whether the device cannot address this view as an array of its own (launches copy it)."""
        return self.handle is None

    def _place(self) -> tuple[DeviceArray, int, tuple[int, ...]]:
        """(the array owning the memory, this array's byte offset in it, its byte strides)."""
        if self.within is not None:
            return self.within
        return self, 0, _c_strides(self.shape, self.dtype)

    def _host_view(self, root_host: np.ndarray) -> np.ndarray:
        """This view of the owning array's host copy ``root_host``."""
        _, offset, strides = self._place()
        return np.ndarray(self.shape, self.dtype, buffer=root_host, offset=offset, strides=strides)

    @property
    def backend(self) -> Any:
        return self._backend

    @property
    def device(self) -> Any:
        """The ``gk.Device`` the array lives on."""
        return self._backend.gk_device

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides, as NumPy's (a view's are its base array's steps)."""
        return tuple(self._place()[2])

    @property
    def flags(self) -> Any:
        """NumPy's flags of an array of this geometry (``flags["C_CONTIGUOUS"]``, ``flags.f_contiguous``),
        read-only: what a program asks of an array's layout."""
        return np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), self.shape, self.strides, writeable=False).flags

    def get(self, stream: Any = None) -> np.ndarray:
        """Copy to a new NumPy array, after the work queued on ``stream`` (None: the default
        stream) so far; returns when the copy is done."""
        if self.staged:  # the owning array's contents, read through this view
            return self._host_view(self._place()[0].get(stream)).copy()
        if stream is None:
            return self.backend.download(self)
        out = np.empty(self.shape, self.dtype)
        self.backend.copy_to_host(out, self, stream_handle(stream, self.backend, "get()"), True)
        return out

    def get_async(self, host: np.ndarray | None = None, stream: Any = None) -> np.ndarray:
        """Queue a copy into ``host`` (a new pinned array if None) on ``stream`` and return it at
        once: read it after ``stream.synchronize()`` (or an event recorded after the copy)."""
        handle = stream_handle(stream, self.backend, "get_async()")
        self._not_staged("get_async()")
        if host is None:
            host = self.backend.pinned_empty(self.shape, self.dtype)
        else:
            self._check_host(host, "get_async()", writes=True)
        self.backend.copy_to_host(host, self, handle, False)
        return host

    def set(self, host: Any, stream: Any = None) -> None:
        """Copy ``host`` (same shape and dtype) into this array, in order on ``stream``; returns
        when the copy is done."""
        handle = stream_handle(stream, self.backend, "set()")
        host = self._check_host(host, "set()")
        if self.staged:  # written into the owning array's contents through this view
            root = self._place()[0]
            whole = root.get(stream)
            self._host_view(whole)[...] = host
            root.set(whole, stream)
            return
        self.backend.copy_to_device(self, host, handle, True)

    def set_async(self, host: np.ndarray, stream: Any = None) -> None:
        """Queue a copy of ``host`` into this array on ``stream`` and return at once; ``host`` must
        not change until the stream has done it (use pinned memory for copies that overlap)."""
        handle = stream_handle(stream, self.backend, "set_async()")
        self._not_staged("set_async()")
        self.backend.copy_to_device(self, self._check_host(host, "set_async()", exact=True), handle, False)

    def copy_to_host(self, ary: np.ndarray | None = None, stream: Any = None) -> np.ndarray:
        """Numba's name: ``get()`` into a new array, or into ``ary`` (same shape and dtype), returned."""
        if ary is None:
            return self.get(stream)
        self._check_host(ary, "copy_to_host()", writes=True)
        ary[...] = self.get(stream)
        return ary

    def copy_to_device(self, ary: Any, stream: Any = None) -> None:
        """Numba's name for ``set()`` (a device array is copied with ``copy_to``)."""
        if isinstance(ary, DeviceArray):
            ary.copy_to(self, stream)
        else:
            self.set(ary, stream)

    def copy_to(self, dst: DeviceArray, stream: Any = None) -> None:
        """Queue a copy of this array into ``dst`` (same backend, shape and dtype) on ``stream``."""
        if not isinstance(dst, DeviceArray) or dst.backend is not self.backend:
            raise LaunchError(f"copy_to(): the destination must be a device array of backend {self.backend.name!r}")
        if dst.shape != self.shape or dst.dtype != self.dtype:
            raise LaunchError(
                f"copy_to(): destination is {dst.dtype}{list(dst.shape)}, this array {self.dtype}{list(self.shape)}"
            )
        handle = stream_handle(stream, self.backend, "copy_to()")
        if dst is self:  # onto itself: nothing changes (OpenCL refuses the overlapping copy)
            return
        if self.staged or dst.staged or self._overlaps(dst):  # through the host, in order
            dst.set(self.get(stream), stream)
            return
        self.backend.copy_on_device(dst, self, handle)

    def _overlaps(self, other: DeviceArray) -> bool:
        """Whether two views of one array may share elements (a device copy must not overlap)."""
        (r1, o1, _), (r2, o2, _) = self._place(), other._place()
        return r1 is r2 and o1 < o2 + other.nbytes and o2 < o1 + self.nbytes

    def _not_staged(self, what: str) -> None:
        if self.staged:
            raise LaunchError(
                f"{what}: this device array is a view the device cannot address as an array of its own "
                f"(shape {self.shape}, byte strides {self._place()[2]}); use the synchronous get()/set(), "
                "or .copy() it to a contiguous array first"
            )

    def _check_host(self, host: Any, what: str, writes: bool = False, exact: bool = False) -> np.ndarray:
        """``host`` as a C-contiguous NumPy array of this array's shape and dtype.  A copy that
        reads or writes it later (``exact``, ``writes``) needs exactly that: a converted copy could
        be freed before the device reads it."""
        if not isinstance(host, np.ndarray):
            if writes or exact:
                raise LaunchError(f"{what} needs a NumPy array, not {type(host).__name__}")
            host = np.asarray(host, dtype=self.dtype)
        if host.shape != self.shape or host.dtype != self.dtype:
            raise LaunchError(
                f"{what}: the host array is {host.dtype}{list(host.shape)}, the device array "
                f"{self.dtype}{list(self.shape)}"
            )
        if not host.flags.c_contiguous:
            if writes or exact:
                raise LaunchError(f"{what}: the host array must be C-contiguous")
            host = np.ascontiguousarray(host)
        if writes and not host.flags.writeable:
            raise LaunchError(f"{what}: the host array is read-only")
        return host

    def __dlpack_device__(self) -> tuple[int, int]:
        """DLPack's (device type, device id) of this array's memory."""
        return self.backend.dlpack_device()

    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
    ) -> Any:
        """A DLPack capsule of this array, shared without a copy (``torch.from_dlpack(a)``,
        ``cupy.from_dlpack(a)``); work gpukern queued on it is ordered before the consumer's
        ``stream``."""
        if copy:
            raise InteropError("gpukern exports its device arrays without copying them (copy=True was asked)")
        if self.staged:
            raise InteropError(
                f"this device array is a strided view (shape {self.shape}, byte strides {self._place()[2]}); "
                "export a contiguous copy: .copy()"
            )
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise InteropError(f"this array is on DLPack device {self.__dlpack_device__()}, not {tuple(dl_device)}")
        return self.backend.dlpack_export(self, stream, max_version)

    # ------------------------------------------------------------ the NumPy-like surface
    # What one reaches for first.  reshape/ravel and slices share the memory; copy stays on the
    # device; reading or assigning elements, astype and fill go through the host (a copy of the
    # whole array each time: for looking at results, not for loops; kernels index device arrays).
    def reshape(self, *shape: Any) -> DeviceArray:
        """The same memory under another shape of the same size (one entry may be -1), as NumPy's
        ``reshape`` of a C-contiguous array: no copy, writes through either are seen by both."""
        if self.staged:
            raise LaunchError(
                f"cannot reshape a strided device array view of shape {self.shape} without a copy: "
                "reshape .copy() of it"
            )
        # NumPy's own rules and -1, on an array of this shape that holds no memory (every stride 0)
        shadow = np.broadcast_to(np.empty((), np.int8), self.shape)
        try:
            new = shadow.reshape(*shape).shape
        except (TypeError, ValueError) as e:
            raise LaunchError(f"cannot reshape a device array of shape {self.shape}: {e}") from None
        view = self.backend.view(self, new)
        root, offset, _ = self._place()
        view.within = (root, offset, _c_strides(new, self.dtype))
        return view

    def ravel(self) -> DeviceArray:
        """The same memory as one dimension (no copy)."""
        return self.reshape(-1)

    def copy(self) -> DeviceArray:
        """A new C-contiguous device array with the same contents (copied on the device; a strided
        view through the host)."""
        if self.staged:
            return self.backend.to_device(self.get())
        out = self.backend.empty(self.shape, self.dtype)
        self.copy_to(out)
        return out

    def astype(self, dtype: Any) -> DeviceArray:
        """A new device array of ``dtype`` with NumPy's conversion of the values (through the host)."""
        return self.backend.to_device(np.ascontiguousarray(self.get().astype(dtype)))

    def fill(self, value: Any) -> None:
        """Set every element to ``value`` (converted as NumPy's ``fill`` does)."""
        host = np.empty(self.shape, self.dtype)
        host.fill(value)
        self.set(host)

    def __getitem__(self, key: Any) -> Any:
        """``x[key]`` as NumPy indexes: integers, slices, ``...`` and ``None`` give a device array
        sharing this one's memory (a kernel's writes to ``x[2:6]`` or ``x[:, 1]`` land in ``x``, as
        with Numba's and CuPy's device arrays); a single element, or an index array or mask (a copy
        in NumPy too), is read back to the host."""
        if not _is_basic(key):
            return self.get()[key]
        # a trailing ``...`` keeps even a single element a (0-d) view, so nothing is read here
        items = key if isinstance(key, tuple) else (key,)
        element = not any(k is Ellipsis for k in items)
        view = self._view_by(lambda a: a[items + (Ellipsis,) if element else items])
        return view.get()[()] if element and not view.ndim else view

    def transpose(self, *axes: Any) -> DeviceArray:
        """NumPy's ``transpose``: a view with the axes reordered (a launch stages it)."""
        return self._view_by(lambda a: a.transpose(*axes))

    @property
    def T(self) -> DeviceArray:
        return self.transpose()

    def _view_by(self, make: Any) -> DeviceArray:
        """The view NumPy's ``make`` (indexing, transposing) gives of this array: ``make`` runs on
        an array of this geometry whose memory is never touched, and the view's shape, strides and
        byte offset (from the data pointers) are read from what it returns."""
        root, offset, strides = self._place()
        shadow = np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), self.shape, strides, writeable=False)
        try:
            part = make(shadow)
        except (IndexError, TypeError, ValueError) as e:
            raise LaunchError(f"device array of shape {self.shape}: {e}") from None
        moved = offset + part.__array_interface__["data"][0] - shadow.__array_interface__["data"][0]
        return self.backend.view_at(root, moved, part.shape, part.strides, part.flags.c_contiguous)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` as NumPy assigns, written to the device."""
        host = self.get()
        host[key] = value
        self.set(host)

    def __iter__(self) -> Any:
        return iter(self.get())

    def tolist(self) -> Any:
        return self.get().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.get()
        return out if dtype is None else out.astype(dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, backend={self.backend.name})"
