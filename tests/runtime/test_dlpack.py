"""DLPack both ways: gpukern arrays given to other libraries and theirs taken, with no copy.

On the simulator the device memory is host memory, so NumPy is the other library here; the
same code paths (the capsule built and read with ctypes) carry CUDA memory to and from PyTorch
and CuPy on the GPU machine (tests/backends/test_interop_gpu.py).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from compilers import needs_opencl

import gpukern as gk
from gpukern.runtime import dlpack


@gk.kernel
def scale(a: gk.Array[gk.float32], s: gk.float32):
    i = gk.global_id(0)
    if i < a.shape[0]:
        a[i] = a[i] * s


def test_capsule_round_trip_through_numpy_shares_memory():
    owner = np.arange(12, dtype=np.float32).reshape(3, 4)

    class Producer:
        def __init__(self, capsule):
            self.capsule = capsule

        def __dlpack__(self, stream=None, **kwargs):
            return self.capsule

        def __dlpack_device__(self):
            return (dlpack.CPU, 0)

    view = np.from_dlpack(Producer(dlpack.export(owner.ctypes.data, owner.shape, owner.dtype, (dlpack.CPU, 0), owner)))
    assert view.shape == (3, 4) and view.dtype == np.float32
    owner[1, 2] = -5.0
    assert view[1, 2] == -5.0  # the same memory
    assert len(dlpack._exports) == 1
    del view
    gc.collect()
    assert len(dlpack._exports) == 0  # the consumer's deleter released the export


def test_an_unconsumed_capsule_releases_its_export():
    owner = np.zeros(4, np.int32)
    capsule = dlpack.export(owner.ctypes.data, owner.shape, owner.dtype, (dlpack.CPU, 0), owner)
    assert len(dlpack._exports) == 1
    del capsule
    gc.collect()
    assert len(dlpack._exports) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.int64, np.bool_])
def test_imported_tensor_reads_dtype_shape_and_strides(dtype):
    x = np.ones((2, 3), dtype)
    t = dlpack.Imported(x.__dlpack__())
    assert t.dtype == np.dtype(dtype) and t.shape == (2, 3) and t.pointer == x.ctypes.data
    assert t.device == (dlpack.CPU, 0) and t.c_contiguous()
    assert not dlpack.Imported(np.ones((4, 4), dtype)[:, ::2].__dlpack__()).c_contiguous()


def test_a_used_capsule_cannot_be_taken_twice():
    capsule = np.ones(3).__dlpack__()
    dlpack.Imported(capsule)
    with pytest.raises(gk.InteropError, match="dltensor"):
        dlpack.Imported(capsule)


def test_simulator_arrays_go_both_ways_without_a_copy(on_simulator):
    host = np.arange(8, dtype=np.float32)
    a = gk.from_dlpack(host)
    scale[1, 8](a, np.float32(3.0))
    np.testing.assert_array_equal(host, np.arange(8, dtype=np.float32) * 3)  # in place
    d = gk.to_device(np.linspace(0, 1, 5, dtype=np.float32))
    view = np.from_dlpack(d)
    assert d.__dlpack_device__() == (dlpack.CPU, 0)
    scale[1, 8](d, np.float32(2.0))
    np.testing.assert_array_equal(view, np.linspace(0, 1, 5, dtype=np.float32) * 2)
    assert gk.from_dlpack(d) is d


def test_from_dlpack_refuses_what_it_cannot_use(on_simulator):
    with pytest.raises(gk.LaunchError, match="__dlpack__"):
        gk.from_dlpack([1, 2, 3])
    with pytest.raises(gk.LaunchError, match="C-contiguous"):
        gk.from_dlpack(np.ones((4, 4), np.float32)[:, ::2])
    with pytest.raises(gk.InteropError, match="without copying"):
        gk.to_device(np.ones(3, np.float32)).__dlpack__(copy=True)


@gk.kernel
def _ones(a: gk.Array[gk.float32]):
    a[gk.global_id(0)] = 1.0


def test_a_kernel_writing_a_read_only_imported_array_is_a_launch_error(on_simulator):
    """issue 33: the simulator raised NumPy's ValueError from inside its store."""
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(gk.LaunchError, match="argument 'a' is a read-only device array"):
        _ones[1, 4](gk.from_dlpack(ro))
    assert not ro.any()


@needs_opencl
def test_opencl_arrays_say_they_cannot_use_dlpack():
    a = gk.to_device(np.ones(3, np.float32), backend="opencl")
    with pytest.raises(gk.InteropError, match="opencl backend's arrays cannot be shared"):
        a.__dlpack__()
    with pytest.raises(BufferError):  # DLPack's own exception, for libraries that catch it
        np.from_dlpack(a)
