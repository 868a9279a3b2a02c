"""Several devices: ``gk.devices()``, ``gk.Device(i)`` as a context manager, arrays that know their
device, and launches refused when an array lives on another device (issue 15).

The simulator has ``GPUKERN_SIM_DEVICES`` devices, each its own memory, so all of this runs in CI;
the CUDA cases run on the GPU machine (two devices where it has them)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, global_id, kernel


@kernel
def double(x: Array[float32]):
    i = global_id(0)
    if i < x.shape[0]:
        x[i] = x[i] * 2


@pytest.fixture
def two_sims(monkeypatch):
    monkeypatch.setenv("GPUKERN_SIM_DEVICES", "2")
    gk.set_backend("sim")
    try:
        yield
    finally:
        gk.set_backend(None)


def _data(n: int = 16) -> np.ndarray:
    return np.random.default_rng(n).uniform(1, 2, n).astype(np.float32)


def test_devices_are_listed_without_opening_them(two_sims):
    from gpukern import backends

    backends._instances.pop(("sim", 1), None)  # (another test may have opened it)
    devs = gk.devices()
    assert ("sim", 1) not in backends._instances  # listed, not opened
    assert devs == [gk.Device(0, "sim"), gk.Device(1, "sim")]
    assert repr(devs[1]) == "gk.Device(1, 'sim')" and len({*devs, gk.Device(1, "sim")}) == 2
    assert gk.current_device() == gk.Device(0, "sim")
    assert type(gk.get_backend()).device_names()[1] == "gpukern simulator 1 (CPU, NumPy)"


def test_a_device_made_current_receives_arrays_and_launches(two_sims):
    host = _data()
    a = gk.to_device(host)
    with gk.Device(1) as d:
        assert gk.current_device() == d == gk.Device(1, "sim")
        b = gk.to_device(host)
        e = gk.empty(4, np.float32)
        z = gk.zeros(4, np.float32)
        double[1, 16](b)
        assert b.device == e.device == z.device == d
        assert b.backend is d.backend() and b.backend is not a.backend
    assert gk.current_device() == gk.Device(0, "sim") == a.device
    double[1, 16](a)
    np.testing.assert_array_equal(a.get(), host * 2)
    np.testing.assert_array_equal(b.get(), host * 2)


def test_an_array_of_another_device_is_refused_with_both_named(two_sims):
    a = gk.to_device(_data())
    launch = double[1, 16]
    launch(a)
    with gk.Device(1):
        with pytest.raises(
            gk.LaunchError, match=r"'x' lives on sim device 0.*runs on sim device 1.*gk\.Device\(0, 'sim'\)"
        ):
            launch(a)
    launch(a)  # back on device 0: fine again
    np.testing.assert_array_equal(a.get(), _data() * 4)


def test_contexts_nest_and_unwind(two_sims):
    with gk.Device(1):
        with gk.Device(0):
            assert gk.current_device() == gk.Device(0, "sim")
        assert gk.current_device() == gk.Device(1, "sim")
        with pytest.raises(ZeroDivisionError):
            with gk.Device(0):
                1 / 0  # noqa: B018 - an exception inside leaves the device stack as it was
        assert gk.current_device() == gk.Device(1, "sim")
    assert gk.current_device() == gk.Device(0, "sim")


@pytest.mark.parametrize("bad", [-1, "1", 1.0, True])
def test_a_device_is_a_number(two_sims, bad):
    with pytest.raises(gk.BackendError, match="a device is a number"):
        gk.Device(bad)


def test_a_device_that_does_not_exist_is_refused_on_entry(two_sims):
    with pytest.raises(gk.BackendError, match=r"simulated device 2 does not exist \(there are 2"):
        with gk.Device(2):
            pass
    assert gk.current_device() == gk.Device(0, "sim")
    with pytest.raises(gk.BackendError, match="unknown backend"):
        gk.Device(0, "vulkan")


def test_the_default_device_is_device_0_of_the_registry(backend):
    """The backend used without a device context is the instance ``gk.Device(i)`` opens for
    its index: arrays made either way work together."""
    b = gk.get_backend()
    d = gk.current_device()
    assert d.backend() is b and d in gk.devices()
    host = _data()
    a = gk.to_device(host)
    with d:
        double[1, 16](a)
    np.testing.assert_array_equal(a.get(), host * 2)
    assert a.device == d


def test_compiled_kernels_are_kept_per_device():
    """A kernel loaded for one device (a CUDA context, an OpenCL context) is kept under the
    backend and device: another device loads its own (the binary cache is shared)."""
    if "opencl" not in gk.available_backends():
        pytest.skip("no OpenCL device")
    gk.set_backend("opencl")
    try:
        a = gk.to_device(_data())
        double[1, 16](a)
        variant = next(iter(double.variants.values()))
        assert ("opencl", gk.current_device().index) in variant.compiled
    finally:
        gk.set_backend(None)


@pytest.mark.gpu
def test_cuda_devices():
    gk.set_backend("cuda")
    try:
        from gpukern.backends import cuda_driver

        devs = gk.devices()
        assert len(devs) == cuda_driver.device_count() and devs[0] == gk.Device(0, "cuda")
        if len(devs) < 2:
            pytest.skip("one GPU: the two-device case needs two")
        host = _data(1 << 16)
        arrays = []
        for d in devs[:2]:
            with d:
                x = gk.to_device(host)
                double[256, 256](x)
                arrays.append(x)
                assert x.device == d
        with devs[1]:
            with pytest.raises(gk.LaunchError, match="cuda device 0"):
                double[256, 256](arrays[0])
        for d, x in zip(devs, arrays):
            d.synchronize()
            np.testing.assert_array_equal(x.get(), host * 2)
    finally:
        gk.set_backend(None)


@pytest.mark.gpu
def test_the_threads_own_context_is_current_again_after_every_call():
    """A context of another library current on this thread (here one made on the same device, as
    PyCUDA's ``make_context`` makes one) stays current through gpukern's copies, launches, streams,
    events and device blocks, which run in gpukern's context; a thread with none is left with
    none, or with device 0's primary context where that is gpukern's (the one the CUDA runtime
    would make current there: launches then find it current and fail no call).  (The CUDA runtime
    takes the current context's device as its own: CuPy and PyTorch would see gpukern's device
    after a ``with gk.Device(1)`` block otherwise.)"""
    import ctypes
    import threading

    gk.set_backend("cuda")
    try:
        from gpukern.backends import cuda_driver

        backend = gk.get_backend()
        lib = cuda_driver.library()
        dev, other = ctypes.c_int(), ctypes.c_void_p()
        assert lib.cuDeviceGet(ctypes.byref(dev), backend.driver.ordinal) == 0
        assert lib.cuCtxCreate_v2(ctypes.byref(other), 0, dev) == 0  # made current on this thread
        try:
            assert cuda_driver.current_context() == other.value != backend.driver.context
            host = _data(1 << 12)
            x = gk.to_device(host)
            double[16, 256](x)
            s = gk.Stream()
            double[16, 256, s](x)
            e = s.record()
            e.synchronize()
            with gk.Device(backend.index, "cuda"):
                y = gk.zeros(8, np.float32)
            np.testing.assert_array_equal(x.get(), host * 4)
            assert y.get().sum() == 0
            del x, y, s, e  # freed and destroyed in gpukern's context too
            assert cuda_driver.current_context() == other.value
        finally:
            lib.cuCtxDestroy_v2(other)

        seen = []

        def bare_thread() -> None:
            z = gk.to_device(host)
            double[16, 256](z)
            seen.append((z.get(), cuda_driver.current_context()))

        t = threading.Thread(target=bare_thread)
        t.start()
        t.join()
        np.testing.assert_array_equal(seen[0][0], host * 2)
        assert seen[0][1] == (backend.driver.context if backend.driver.default_context else None)
    finally:
        gk.set_backend(None)


def test_a_launch_keeps_a_plan_per_device():
    """Launching in turn inside and outside a device context (two choices of device) finds each
    one's plan again instead of re-checking every call."""
    if "opencl" not in gk.available_backends():
        pytest.skip("no OpenCL device")
    gk.set_backend("opencl")
    try:
        a = gk.to_device(_data())
        launch = double[1, 16]
        launch(a)
        outside = launch.plan
        with gk.Device(0, "opencl"):
            launch(a)
            inside = launch.plan
        assert outside is not None and inside is not None and inside is not outside
        for _ in range(3):
            launch(a)
            assert launch.plan is outside
            with gk.Device(0, "opencl"):
                launch(a)
                assert launch.plan is inside
        np.testing.assert_array_equal(a.get(), _data() * 2**8)
    finally:
        gk.set_backend(None)


def test_a_sim_device_keeps_its_name_when_the_count_shrinks(two_sims, monkeypatch):
    """A simulated device made while GPUKERN_SIM_DEVICES said 2 keeps its name after the variable
    says 1 (device_name() re-read the variable: an IndexError)."""
    d = gk.Device(1, "sim")
    name = d.name
    monkeypatch.setenv("GPUKERN_SIM_DEVICES", "1")
    assert d.name == name


def test_a_context_switch_that_fails_is_a_status_not_an_exception():
    """Driver.in_context (the calls through Driver.call, and the frees of finalizers) returns the driver's
    status where it cannot query or switch the current context (the driver shutting down), and
    then does not run the call; it raised from finalizers before.  A fake driver library: no GPU."""
    from gpukern.backends.cuda_driver import Driver

    class Lib:
        def __init__(self, get_rc: int, set_rc: int):
            self.get_rc, self.set_rc, self.current = get_rc, set_rc, []

        def cuCtxGetCurrent(self, ref):
            return self.get_rc

        def cuCtxSetCurrent(self, ctx):
            self.current.append(ctx)
            return self.set_rc

    ran = []
    for get_rc, set_rc, want in [(4, 0, 4), (0, 4, 4), (0, 0, 0)]:
        d = Driver.__new__(Driver)
        d.lib, d.context, d.default_context = Lib(get_rc, set_rc), 1234, False
        assert d.in_context(lambda: ran.append(1) or 0) == want
        if not want:  # made current for the call, then the thread's own (none) put back
            assert d.lib.current[0] == 1234 and len(d.lib.current) == 2
    assert ran == [1]
