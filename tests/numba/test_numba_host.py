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
