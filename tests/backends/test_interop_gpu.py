"""CuPy and PyTorch arrays and streams with gpukern's CUDA backend, on a real GPU (issue 15).

In place (no copy, through the fast path as well as the checked one), DLPack both ways, launches
on the libraries' streams, and ordering: a launch on an array that its owner is still writing on
a non-blocking stream waits for that write.  Marked ``gpu``: skipped cleanly without a CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, int64, kernel

pytestmark = pytest.mark.gpu


@kernel
def axpy(a: float32, x: Array[float32], y: Array[float32]):
    i = gk.global_id(0)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


@kernel
def spin_then_fill(out: Array[float32], rounds: int64, value: float32):
    """Busy for ``rounds`` iterations (so that work queued after it on another stream would run
    first if nothing ordered them), then writes ``value`` everywhere."""
    i = gk.global_id(0)
    acc = gk.float32(0)
    for r in range(rounds):
        acc = acc * gk.float32(0.5) + gk.float32(1)
    if i < out.shape[0]:
        out[i] = value + acc * gk.float32(0)


@kernel
def copy(src: Array[float32], dst: Array[float32]):
    i = gk.global_id(0)
    if i < dst.shape[0]:
        dst[i] = src[i]


@pytest.fixture
def cuda():
    gk.set_backend("cuda")
    try:
        yield gk.get_backend()
    finally:
        gk.set_backend(None)


def _data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(1, 2, n).astype(np.float32)


def test_cupy_arrays_in_place_on_the_fast_path(cuda):
    cp = pytest.importorskip("cupy")
    n = 4096
    x, y0 = _data(n, 1), _data(n, 2)
    cx, cy = cp.asarray(x), cp.asarray(y0)
    ptr = cy.data.ptr
    launch = axpy[n // 256, 256]
    for _ in range(3):  # the first call is checked and leaves a plan; the others take it
        launch(np.float32(0.5), cx, cy)
    assert launch.plan is not None and "cupy" in launch.plan.describe()
    cp.cuda.Device().synchronize()
    assert cy.data.ptr == ptr
    expect = y0.copy()
    for _ in range(3):
        expect = np.float32(0.5) * x + expect
    np.testing.assert_allclose(cp.asnumpy(cy), expect, rtol=1e-6)


def test_torch_tensors_in_place_on_the_fast_path(cuda):
    torch = pytest.importorskip("torch")
    n = 4096
    x, y0 = _data(n, 3), _data(n, 4)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y0).cuda()
    launch = axpy[n // 256, 256]
    for _ in range(3):
        launch(np.float32(2.0), tx, ty)
    assert launch.plan is not None and "torch" in launch.plan.describe()
    torch.cuda.synchronize()
    np.testing.assert_allclose(ty.cpu().numpy(), y0 + 6 * x, rtol=1e-6)


def test_a_plan_rechecks_what_can_change(cuda):
    """A CuPy array of another dtype, or not contiguous, in the place of the one the plan saw,
    takes the checked path (which refuses or re-specialises) instead of being misread."""
    cp = pytest.importorskip("cupy")
    n = 1024
    cx, cy = cp.asarray(_data(n, 5)), cp.asarray(_data(n, 6))
    launch = axpy[n // 256, 256]
    launch(np.float32(1), cx, cy)
    with pytest.raises(gk.LaunchError, match="float32"):
        launch(np.float32(1), cx.astype(cp.float64), cy)
    before = cy.get()
    x2 = cp.asarray(_data(2 * n, 7))
    launch(np.float32(1), x2[::2], cy)  # not contiguous: staged through a contiguous copy
    np.testing.assert_allclose(cy.get(), before + _data(2 * n, 7)[::2], rtol=1e-6)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_strided_arrays_of_other_libraries_are_staged_and_written_back(cuda, library):
    """``y[::2]`` and a transposed matrix of CuPy or PyTorch: the kernel runs on a contiguous copy
    made by the array's own library, and what it wrote lands in the caller's array (issue 32)."""
    lib = pytest.importorskip(library)
    n = 1024
    host_y = _data(2 * n, 8)
    if library == "cupy":
        x, y = lib.asarray(_data(n, 9)), lib.asarray(host_y)
        back = y.get
    else:
        x, y = lib.as_tensor(_data(n, 9), device="cuda"), lib.as_tensor(host_y, device="cuda")
        back = lambda: y.cpu().numpy()  # noqa: E731
    axpy[n // 256, 256](np.float32(2), x, y[::2])
    want = host_y.copy()
    want[::2] += 2 * _data(n, 9)
    np.testing.assert_allclose(back(), want, rtol=1e-6)


def test_a_plan_sees_arrays_changed_in_place(cuda):
    """The plan keeps the pointer of the CuPy array it saw last (its data and dtype are read-only);
    a reshape in place to another rank still takes the checked path.  A tensor can change
    anything in place (``t_()``, ``resize_()``): each call re-reads it."""
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    n = 1024
    cx, cy = cp.asarray(_data(n, 1)), cp.asarray(_data(n, 2))
    y0 = cy.get()
    launch = axpy[n // 256, 256]
    launch(np.float32(2), cx, cy)
    launch(np.float32(2), cx, cy)  # the same objects again: the pointers kept
    cx.shape = (32, 32)
    with pytest.raises(gk.LaunchError, match="2-D|dimension|rank"):
        launch(np.float32(2), cx, cy)
    cx.shape = (n,)
    launch(np.float32(2), cx, cy)
    cp.cuda.Device().synchronize()
    np.testing.assert_allclose(cy.get(), y0 + 6 * cx.get(), rtol=1e-6)

    tx, ty = (torch.as_tensor(_data(n, s), device="cuda") for s in (3, 4))
    ty0 = ty.cpu().numpy()
    launch(np.float32(1), tx, ty)
    launch(np.float32(1), tx, ty)
    square = tx.reshape(32, 32)
    square.t_()  # in place: no longer C-contiguous
    with pytest.raises(gk.LaunchError, match="contiguous|2-D|dimension"):
        launch(np.float32(1), square, ty)
    tx.resize_(2 * n)  # in place: new storage, a new pointer
    tx[n:] = 0
    tx[:n] = torch.as_tensor(_data(n, 3), device="cuda")
    launch(np.float32(1), tx[:n], ty)
    torch.cuda.synchronize()
    np.testing.assert_allclose(ty.cpu().numpy(), ty0 + 3 * _data(n, 3), rtol=1e-6)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_launch_follows_the_owners_stream(cuda, library):
    """The owner writes ``src`` on a non-blocking stream (a long kernel, then the value); gpukern
    copies it with no stream given, as the owner's current stream. Without the launch following
    that stream (it would go on the legacy default stream, which a non-blocking stream does not
    wait for) the copy reads ``src`` before the write and the check fails."""
    n = 1 << 16
    rounds = 1 << 22
    if library == "cupy":
        cp = pytest.importorskip("cupy")
        src, dst = cp.zeros(n, cp.float32), cp.zeros(n, cp.float32)
        side = cp.cuda.Stream(non_blocking=True)
        with side:
            spin_then_fill[n // 256, 256, side](src, rounds, 7.0)
            copy[n // 256, 256](src, dst)  # no stream: follows CuPy's current stream, ``side``
            copy[n // 256, 256](src, dst)  # the plan follows it too
        side.synchronize()
        got = cp.asnumpy(dst)
    else:
        torch = pytest.importorskip("torch")
        src = torch.zeros(n, dtype=torch.float32, device="cuda")
        dst = torch.zeros(n, dtype=torch.float32, device="cuda")
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            spin_then_fill[n // 256, 256, side](src, rounds, 7.0)
            copy[n // 256, 256](src, dst)
            copy[n // 256, 256](src, dst)
        side.synchronize()
        got = dst.cpu().numpy()
    assert (got == 7.0).all()


def test_an_explicit_stream_waits_for_the_owners_stream(cuda):
    """A launch on a gpukern stream, on an array its owner writes on another (non-blocking)
    stream, is ordered after the owner's work (the interface's v3 ``stream`` field)."""
    cp = pytest.importorskip("cupy")
    n = 1 << 16
    src, dst = cp.zeros(n, cp.float32), cp.zeros(n, cp.float32)
    side = cp.cuda.Stream(non_blocking=True)
    mine = gk.Stream()
    with side:
        spin_then_fill[n // 256, 256](src, 1 << 22, 5.0)  # follows ``side``
        copy[n // 256, 256, mine](src, dst)  # on ``mine``, after ``side``'s work
    mine.synchronize()
    assert (cp.asnumpy(dst) == 5.0).all()


def test_dlpack_both_ways(cuda):
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    x = _data(1000, 8)
    a = gk.to_device(x)
    t = torch.from_dlpack(a)  # no copy: the tensor reads gpukern's memory
    assert t.data_ptr() == int(a.handle)
    c = cp.from_dlpack(a)
    assert c.data.ptr == int(a.handle)
    t2 = torch.from_numpy(_data(1000, 9)).cuda()
    b = gk.from_dlpack(t2)
    assert int(b.handle) == t2.data_ptr()
    axpy[4, 256](np.float32(1), a, b)  # b = x + b, in the tensor's memory
    torch.cuda.synchronize()
    np.testing.assert_allclose(t2.cpu().numpy(), x + _data(1000, 9), rtol=1e-6)
    np.testing.assert_allclose(cp.asnumpy(c), x)


def test_streams_of_other_libraries(cuda):
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    n = 2048
    x, y = _data(n, 10), _data(n, 11)
    for stream in (cp.cuda.Stream(), torch.cuda.Stream(), gk.Stream.wrap(cp.cuda.Stream(non_blocking=True))):
        dx, dy = gk.to_device(x), gk.to_device(y)
        axpy[n // 256, 256, stream](np.float32(3), dx, dy)
        stream.synchronize()
        np.testing.assert_allclose(dy.get(), 3 * x + y, rtol=1e-6)


def test_async_copies_with_pinned_memory_and_events(cuda):
    n = 1 << 20
    x = _data(n, 12)
    host = gk.pinned_empty(n, np.float32)
    host[...] = x
    s = gk.Stream()
    d = gk.empty(n, np.float32)
    start = s.record()
    d.set_async(host, s)
    axpy[n // 256, 256, s](np.float32(2), d, d)
    out = d.get_async(stream=s)
    end = s.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    np.testing.assert_allclose(out, 3 * x, rtol=1e-6)


def test_arrays_of_another_device_are_refused(cuda):
    cp = pytest.importorskip("cupy")
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU")
    with cp.cuda.Device(1):
        x = cp.ones(256, cp.float32)
        y = cp.ones(256, cp.float32)
    with pytest.raises(gk.LaunchError, match="device 1"):
        axpy[1, 256](np.float32(1), x, y)
