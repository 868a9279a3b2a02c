"""numba.cuda's host-side names on gpukern: devices (``cuda.gpus``, ``detect``, ``list_devices``,
``get_current_device``), contexts (``current_context().get_memory_info()``), the no-op context
managers and calls a program keeps as written, and other libraries' arrays (``as_cuda_array``)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern.numba import cuda


@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_devices_are_the_current_backends(backend, capsys):
    assert len(cuda.gpus) == len(gk.devices()) >= 1
    first = cuda.gpus[0]
    assert first.id == 0 and first.name == gk.devices()[0].name.encode()
    assert [d.id for d in cuda.list_devices()] == list(range(len(cuda.gpus)))
    cc = first.compute_capability
    assert cc is None if backend != "cuda" else cc == divmod(gk.get_backend().cc, 10)
    with cuda.gpus[0] as d:  # (gk.Device: launches go there)
        assert d.id == 0 and cuda.get_current_device().id == 0 and cuda.gpus.current.id == 0
        a = cuda.to_device(np.zeros(8, np.float32))
        add_one[1, 8](a)
        np.testing.assert_array_equal(a.copy_to_host(), np.ones(8, np.float32))
    assert cuda.detect() is True
    out = capsys.readouterr().out
    assert f"on gpukern's {backend} backend" in out and "[SUPPORTED]" in out
    assert f"{len(cuda.gpus)}/{len(cuda.gpus)} devices are supported" in out


def test_memory_info_where_the_backend_can_tell(backend):
    ctx = cuda.current_context()
    if backend == "opencl":
        with pytest.raises(gk.BackendError, match="OpenCL tells a device's total memory"):
            ctx.get_memory_info()
        return
    free, total = ctx.get_memory_info()
    assert 0 < free <= total and ctx.get_memory_info().total == total
    ctx.synchronize()


def test_names_a_program_keeps_as_written(on_simulator):
    @cuda.require_context
    def run(a):
        add_one[1, 4](a)
        return a

    cuda.profile_start()
    with cuda.defer_cleanup(), cuda.pinned(np.zeros(4)):
        a = run(np.zeros(4, np.float32))
    cuda.profile_stop()
    np.testing.assert_array_equal(a, np.ones(4, np.float32))
    default = cuda.default_stream()
    for s in (cuda.per_thread_default_stream(), cuda.legacy_default_stream()):  # (the simulator's one stream)
        assert s.backend is default.backend and s.handle == default.handle
    with pytest.raises(gk.LaunchError, match="takes no streams of other libraries"):
        cuda.external_stream(12345)  # (a CUstream handle: CUDA's)


def test_other_libraries_arrays(on_simulator):
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(np.zeros(3))
    assert cuda.as_cuda_array(d) is d

    class Interface:  # (only __cuda_array_interface__: kernels take it as it is)
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (0, False), "version": 3}

    obj = Interface()
    assert cuda.is_cuda_array(obj) and cuda.as_cuda_array(obj) is obj
    with pytest.raises(gk.BackendError, match="copy a host array with cuda.to_device"):
        cuda.as_cuda_array(np.zeros(3))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape, view", [(10, np.s_[:]), ((10, 12), np.s_[:]), ((10, 12, 14), np.s_[:]),
                                         (10, np.s_[::2]), ((10, 12), np.s_[::2, ::2])])  # fmt: skip
def test_array_likes_are_laid_out_as_numpys_empty_like(backend, order, shape, view):
    """device_array(order=) and the *_array_like calls: strides and flags as NumPy gives them (a
    Fortran array stays Fortran, a strided view becomes dense in its axes' order)."""
    d = cuda.device_array(shape, order=order)[view]
    h = np.zeros(shape, order=order)[view]
    assert d.strides == h.strides and d.flags["C_CONTIGUOUS"] == h.flags["C_CONTIGUOUS"]
    for like in (cuda.device_array_like, cuda.pinned_array_like):
        a, ref = like(d), np.empty_like(h)
        assert (a.shape, a.dtype, a.strides) == (ref.shape, ref.dtype, ref.strides), like
        assert a.flags["F_CONTIGUOUS"] == ref.flags["F_CONTIGUOUS"] and a.flags.c_contiguous == ref.flags.c_contiguous


def test_a_fortran_device_array_takes_a_kernels_writes(backend):
    a = cuda.device_array((3, 4), dtype=np.float64, order="F")
    a.copy_to_device(np.zeros((3, 4)))

    @cuda.jit
    def fill(x):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            x[i, j] = 10 * i + j

    fill[(1, 1), (3, 4)](a)
    np.testing.assert_array_equal(a.copy_to_host(), np.add.outer(10 * np.arange(3), np.arange(4)))


def test_auto_device_and_overload_count(backend):
    d, copied = cuda.devicearray.auto_device(np.arange(4.0))
    assert copied and isinstance(d, gk.DeviceArray) and list(d.copy_to_host()) == [0, 1, 2, 3]
    assert cuda.devicearray.auto_device(d) == (d, False)
    assert cuda.devicearray.auto_device(2)[0].copy_to_host() == 2
    with pytest.raises(ValueError, match="not contiguous"):
        cuda.devicearray.auto_device(np.arange(10.0)[::2])

    @cuda.jit
    def twice(a, out):
        i = cuda.grid(1)
        out[i] = a[i] * 2

    out = np.zeros(8)
    twice[1, 8](np.ones(8), out)
    twice[1, 8](cuda.to_device(np.ones(8)), out)  # (a device array is the same kind of argument)
    assert len(twice.overloads) == 1
    twice[1, 8](np.ones(8, np.float32), out)
    assert len(twice.overloads) == 2
