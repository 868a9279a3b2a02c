"""Streams, events, pinned memory and copies on every backend (issue 15).

Copies and launches in stream order, events between streams, launches on another library's
stream or command queue, and the errors for streams and events used wrongly.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk


def test_copies_on_one_stream_run_in_order(backend):
    rng = np.random.default_rng(1)
    s = gk.Stream()
    first = rng.standard_normal(4096).astype(np.float32)
    second = rng.standard_normal(4096).astype(np.float32)
    host = gk.pinned_empty(4096, np.float32)
    host[...] = first
    a = gk.empty(4096, np.float32)
    b = gk.empty(4096, np.float32)
    a.set_async(host, s)
    a.copy_to(b, s)  # queued after the first copy: sees ``first``
    back = b.get_async(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back, first)
    a.set(second, s)
    np.testing.assert_array_equal(a.get(s), second)
    np.testing.assert_array_equal(b.get(), first)


def test_to_device_on_a_stream(backend):
    x = np.arange(100, dtype=np.int32) * 7
    s = gk.Stream()
    a = gk.to_device(x, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(a.get(), x)
    b = gk.to_device([1.5, 2.5], stream=s)  # converted: copied before returning
    np.testing.assert_array_equal(b.get(), np.array([1.5, 2.5]))


def test_event_waits_order_two_streams(backend):
    s1, s2 = gk.Stream(), gk.Stream()
    x = np.random.default_rng(2).integers(1, 1000, 1 << 16).astype(np.int64)
    a = gk.empty(x.shape, x.dtype)
    b = gk.empty(x.shape, x.dtype)
    host = gk.pinned_empty(x.shape, x.dtype)
    host[...] = x
    a.set_async(host, s1)
    done = s1.record()
    s2.wait_event(done)
    a.copy_to(b, s2)  # only after s1's copy, which the event marks
    s2.synchronize()
    np.testing.assert_array_equal(b.get(), x)
    assert done.query()


def test_event_timing_and_default_stream(backend):
    d = gk.default_stream()
    assert d.handle is None and "default" in repr(d)
    start = gk.Event().record()
    a = gk.to_device(np.ones(1 << 16, np.float32))
    a.get()
    end = gk.Event().record(d)
    end.synchronize()
    ms = start.elapsed_time(end)
    assert ms >= 0.0
    assert gk.benchmark(lambda: a.copy_to(gk.empty(a.shape, a.dtype)), repeat=3, warmup=1) >= 0.0
    s = gk.Stream()
    assert gk.benchmark(lambda: a.copy_to(gk.empty(a.shape, a.dtype), s), repeat=3, warmup=1, stream=s) >= 0.0


def test_pinned_empty_is_a_writable_array(backend):
    h = gk.pinned_empty((3, 5), np.float64)
    assert h.shape == (3, 5) and h.dtype == np.float64 and h.flags.c_contiguous and h.flags.writeable
    h[...] = 2.0
    assert h.sum() == 30.0
    with pytest.raises(gk.LaunchError, match="negative"):
        gk.pinned_empty(-1)


def test_wrong_use_is_a_clear_error(backend):
    a = gk.empty(4, np.float32)
    with pytest.raises(gk.LaunchError, match="gpukern.Stream or None"):
        a.get(stream=3)
    with pytest.raises(gk.LaunchError, match="never recorded"):
        gk.Event().synchronize()
    with pytest.raises(gk.LaunchError, match="never recorded"):
        gk.Stream().wait_event(gk.Event())
    with pytest.raises(gk.LaunchError, match="gpukern.Event"):
        gk.Stream().wait_event("now")
    with pytest.raises(gk.LaunchError, match=r"float64\[4\]"):
        a.set(np.zeros(4, np.float64))
    with pytest.raises(gk.LaunchError, match="NumPy array"):
        a.set_async([1, 2, 3, 4])
    with pytest.raises(gk.LaunchError, match="C-contiguous"):
        a.get_async(np.zeros(8, np.float32)[::2])
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(gk.LaunchError, match="read-only"):
        a.get_async(ro)
    with pytest.raises(gk.LaunchError, match="destination"):
        a.copy_to(np.zeros(4, np.float32))
    with pytest.raises(gk.LaunchError, match="destination is"):
        a.copy_to(gk.empty(5, np.float32))
    # issue 33: these met AttributeError, and pinned_empty took a dtype gk.empty refuses
    with pytest.raises(gk.LaunchError, match="wait_stream\\(\\) takes a gpukern.Stream"):
        gk.Stream().wait_stream("x")
    with pytest.raises(gk.LaunchError, match="record\\(\\) takes a gpukern.Event or None"):
        gk.Stream().record("x")
    e = gk.Event().record()
    with pytest.raises(gk.LaunchError, match="elapsed_time\\(\\) takes the end gpukern.Event"):
        e.elapsed_time("x")
    with pytest.raises(gk.KernelTypeError, match="unsupported element type .* for a pinned array"):
        gk.pinned_empty(4, object)
    with pytest.raises(gk.KernelTypeError, match="for a device array"):
        gk.empty(4, object)
    assert gk.pinned_empty(0, np.float32).shape == (0,) and gk.pinned_empty((3, 0), np.int8).shape == (3, 0)
    b = gk.to_device(np.arange(4, dtype=np.float32))
    b.copy_to(b)  # onto itself: nothing to do (OpenCL raised MEM_COPY_OVERLAP)
    assert b.get().tolist() == [0, 1, 2, 3]


@pytest.mark.skipif(len(gk.available_backends()) < 2, reason="needs a second backend")
def test_a_stream_of_another_backend_is_refused():
    gk.set_backend(gk.available_backends()[0])
    try:
        s = gk.Stream("sim")
        with pytest.raises(gk.LaunchError, match="belongs to backend 'sim'"):
            gk.empty(4, np.float32).get(stream=s)
        with pytest.raises(gk.LaunchError, match="belongs to backend 'sim'"):
            gk.Event().record(s)
    finally:
        gk.set_backend(None)


def test_simulator_copies_keep_uninitialised_tracking(on_simulator):
    """A device-to-device copy carries which elements were never written; set() clears it."""

    @gk.kernel
    def read(a: gk.Array[gk.float32], out: gk.Array[gk.float32]):
        i = gk.global_id(0)
        if i < out.shape[0]:
            out[i] = a[i]

    src = gk.empty(8, np.float32)
    dst = gk.empty(8, np.float32)
    src.copy_to(dst)
    with pytest.raises(gk.UninitializedReadError):
        read[1, 8](dst, gk.empty(8, np.float32))
    dst.set(np.arange(8, dtype=np.float32))
    out = gk.empty(8, np.float32)
    read[1, 8](dst, out)
    np.testing.assert_array_equal(out.get(), np.arange(8, dtype=np.float32))


@gk.kernel
def scale_add(x, y, a: gk.float32):
    i = gk.global_id(0)
    if i < x.shape[0]:
        y[i] = a * x[i] + y[i]


def test_launches_on_two_streams_ordered_by_an_event(backend):
    """s1 copies x in and runs y = 2x + y; s2 waits for s1's event and runs y = 3y + y (on the
    results s1 made), all queued before anything is waited for."""
    rng = np.random.default_rng(3)
    n = 1 << 15
    x = rng.uniform(1, 2, n).astype(np.float32)
    y0 = rng.uniform(1, 2, n).astype(np.float32)
    s1, s2 = gk.Stream(), gk.Stream()
    hx, hy = gk.pinned_empty(n, np.float32), gk.pinned_empty(n, np.float32)
    hx[...], hy[...] = x, y0
    dx, dy = gk.empty(n, np.float32), gk.empty(n, np.float32)
    dx.set_async(hx, s1)
    dy.set_async(hy, s1)
    scale_add[n // 256, 256, s1](dx, dy, 2.0)
    scale_add[n // 256, 256, s1](dx, dy, 2.0)  # the second call takes the plan, on s1 too
    s2.wait_event(s1.record())
    scale_add[n // 256, 256, s2](dy, dy, 3.0)
    out = dy.get_async(stream=s2)
    s2.synchronize()
    expect = 4 * (np.float32(2) * x + (np.float32(2) * x + y0))
    np.testing.assert_allclose(out, expect, rtol=1e-6)


def test_launch_with_stream_and_dynamic_shared_memory(backend):
    @gk.kernel
    def reverse(a, out):
        buf = gk.dynamic_shared(gk.float32)
        t = gk.thread_idx.x
        buf[t] = a[t]
        gk.barrier()
        out[t] = buf[gk.block_dim.x - 1 - t]

    a = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    out = gk.zeros(64, np.float32)
    s = gk.Stream()
    reverse[1, 64, s, 64 * 4](gk.to_device(a), out)
    reverse[1, 64, None, 64 * 4](gk.to_device(a), out)  # None: the default stream
    s.synchronize()
    np.testing.assert_array_equal(out.get(), a[::-1])


def test_launch_on_a_wrapped_command_queue():
    """OpenCL: a pyopencl CommandQueue of gpukern's context is a stream; pyopencl arrays are used
    in place (no copy: the kernel's writes are in the pyopencl array)."""
    pytest.importorskip("pyopencl")
    import pyopencl as cl
    import pyopencl.array as cl_array

    try:
        gk.set_backend("opencl")
    except gk.GpukernError as e:
        pytest.skip(f"no OpenCL here: {e}")
    try:
        b = gk.get_backend()
        queue = cl.CommandQueue(b.ctx)
        rng = np.random.default_rng(5)
        x = rng.uniform(1, 2, 1024).astype(np.float32)
        y = rng.uniform(1, 2, 1024).astype(np.float32)
        cx, cy = cl_array.to_device(queue, x), cl_array.to_device(queue, y)
        scale_add[4, 256, queue](cx, cy, 2.0)
        scale_add[4, 256, gk.Stream.wrap(queue)](cx, cy, 2.0)
        queue.finish()
        np.testing.assert_allclose(cy.get(), 2 * x + (2 * x + y), rtol=1e-6)
        other = cl.Context([b.device]) if hasattr(b, "device") else None
        if other is not None:
            with pytest.raises(gk.LaunchError, match="another OpenCL context"):
                scale_add[4, 256, cl.CommandQueue(other)](cx, cy, 2.0)
    finally:
        gk.set_backend(None)
