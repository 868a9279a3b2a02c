"""DLPack: handing device memory to other array libraries, and taking theirs, without a copy.

The DLPack ABI (dlpack.h, the unversioned ``dltensor`` capsule every consumer accepts) is a C
struct; this module builds and reads it with ctypes, so gpukern needs no compiled extension.
A capsule we make owns a reference to the exported array until the consumer calls the deleter
(or, unconsumed, the capsule is freed); a capsule we take is kept alive by the array made from
it and its deleter called when that array goes.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..errors import InteropError

CPU, CUDA, CUDA_HOST, OPENCL = 1, 2, 3, 4  # DLDeviceType values gpukern meets
_CODE = {"i": 0, "u": 1, "f": 2, "b": 6, "c": 5}  # DLDataTypeCode: Int, UInt, Float, Bool, Complex
_KIND = {v: k for k, v in _CODE.items()}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int),
        ("dtype", _DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

# The destructor gets the dying capsule as a raw pointer: wrapping it as a py_object would take
# and drop a reference on an object being freed, and free it twice.
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Exports alive: the managed struct's address -> (struct, shape array, owner).  The deleter drops
# the entry, which releases the owner.
_exports: dict[int, tuple[Any, Any, Any]] = {}


@_DELETER
def _delete(managed: Any) -> None:
    _exports.pop(ctypes.addressof(managed.contents), None)


@_CAPSULE_DESTRUCTOR
def _capsule_freed(capsule: int) -> None:
    """A capsule freed unconsumed (still named ``dltensor``) deletes its tensor itself."""
    if _is_valid_raw(capsule, b"dltensor"):
        _exports.pop(_pointer_raw(capsule, b"dltensor"), None)


def export(pointer: int, shape: tuple[int, ...], dtype: np.dtype, device: tuple[int, int], owner: Any) -> Any:
    """A ``dltensor`` capsule of a C-contiguous array at ``pointer``; ``owner`` lives as long as
    the consumer holds the tensor."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _CODE:
        raise InteropError(f"DLPack cannot describe dtype {dtype}")
    managed = _Managed()
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    t = managed.dl_tensor
    t.data = pointer
    t.device = _Device(*device)
    t.ndim = len(shape)
    t.dtype = _DataType(_CODE[dtype.kind], dtype.itemsize * 8, 1)
    t.shape = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    t.strides = None  # C-contiguous
    t.byte_offset = 0
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    _exports[address] = (managed, dims, owner)
    return _api.PyCapsule_New(address, b"dltensor", _capsule_freed)


class Imported:
    """What a consumed ``dltensor`` capsule describes; deleting it calls the producer's deleter."""

    def __init__(self, capsule: Any):
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise InteropError(
                "__dlpack__() did not return a DLPack 'dltensor' capsule (a used one cannot be taken twice)"
            )
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor")
        self._managed = _Managed.from_address(address)
        _api.PyCapsule_SetName(capsule, b"used_dltensor")  # consumed: the capsule no longer deletes it
        t = self._managed.dl_tensor
        code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        if lanes != 1 or code not in _KIND or bits % 8:
            raise InteropError(f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes) has no NumPy equivalent")
        self.dtype = np.dtype(f"{_KIND[code]}{bits // 8}") if code != _CODE["b"] else np.dtype(bool)
        self.shape = tuple(int(t.shape[i]) for i in range(t.ndim))
        self.strides = None if not t.strides else tuple(int(t.strides[i]) for i in range(t.ndim))
        self.pointer = (t.data or 0) + t.byte_offset
        self.device = (t.device.device_type, t.device.device_id)

    def c_contiguous(self) -> bool:
        if self.strides is None:
            return True
        expect = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True

    def __del__(self) -> None:
        managed = getattr(self, "_managed", None)
        if managed is not None and managed.deleter:
            managed.deleter(ctypes.pointer(managed))
