"""gpukern.testing: the strategies generate what they promise, and assert_kernel_matches
checks kernels on every backend and explains a mismatch well enough to act on it.

Few distinct kernels on purpose: conftest nvcc-compiles every new variant (about 1 s each).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpukern as gk
from gpukern import Array, Const, barrier, block_idx, float32, int32, shared, thread_idx
from gpukern import backends as gk_backends
from gpukern import testing as gkt

SETTINGS = settings(max_examples=12, deadline=None)
FAST = settings(max_examples=60, deadline=None)
BLOCK_SIZES = (32, 128)  # each is a variant of block_sums: keep them few


@gk.kernel
def vadd(a: Array[float32], b: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = a[i] + b[i]


@gk.kernel
def scaled_transpose(a: Array[float32, 2], out: Array[float32, 2], s: float32):
    col = block_idx.x * gk.block_dim.x + thread_idx.x
    row = block_idx.y * gk.block_dim.y + thread_idx.y
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col] * s


@gk.kernel
def block_sums(x: Array[int32], out: Array[int32], n: int32, BS: Const[int]):
    buf = shared(int32, BS)
    t = thread_idx.x
    i = block_idx.x * BS + t
    buf[t] = x[i] if i < n else 0
    barrier()
    s = BS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        barrier()
        s //= 2
    if t == 0:
        out[block_idx.x] = buf[0]


def block_sums_reference(x: np.ndarray, out: np.ndarray, n: int, bs: int) -> np.ndarray:
    padded = np.zeros(out.size * bs, np.int32)
    padded[:n] = x
    return padded.reshape(out.size, bs).sum(axis=1, dtype=np.int32)


# ---------------------------------------------------------------- the helpers on real kernels
@SETTINGS
@given(st.data())
def test_vector_add_matches_on_every_backend(data):
    shape = data.draw(gkt.shapes(1, max_size=3000), label="shape")
    config = data.draw(gkt.launch_configs(shape, extra_blocks=1), label="config")
    a = data.draw(gkt.arrays(np.float32, shape, op="add"), label="a")
    b = data.draw(gkt.arrays(np.float32, shape, op="add"), label="b")
    out = np.zeros(shape, np.float32)
    results = gkt.assert_kernel_matches(
        lambda a, b, out: vadd[config](a, b, out, out.size),
        lambda a, b, out: {"out": a + b},
        [a, b, out],
    )
    assert set(results) == set(gk.available_backends())
    assert not out.any(), "the caller's arrays are never written"


@SETTINGS
@given(st.data())
def test_2d_kernel_matches(data):
    shape = data.draw(gkt.shapes(2, max_size=2000), label="shape")
    config = data.draw(gkt.launch_configs(shape, extra_blocks=1, max_threads=256), label="config")
    a = data.draw(gkt.arrays(np.float32, shape, op="mul", magnitude=1e6), label="a")
    s = data.draw(st.floats(-1e6, 1e6, width=32, allow_subnormal=False), label="s")
    out = np.zeros(shape[::-1], np.float32)
    gkt.assert_kernel_matches(
        (scaled_transpose, config.grid, config.block),
        lambda a, out, s: {"out": a.T * np.float32(s)},
        {"a": a, "out": out, "s": s},
    )


@SETTINGS
@given(st.data())
def test_shared_memory_reduction_matches(data):
    bs = data.draw(st.sampled_from(BLOCK_SIZES), label="block")
    n = data.draw(gkt.sizes(1, 2000, tile=bs), label="n")
    config = data.draw(gkt.launch_configs(n, block=bs), label="config")
    x = data.draw(gkt.arrays(np.int32, n, op="sum", terms=n), label="x")
    out = np.zeros(config.grid[0], np.int32)
    gkt.assert_kernel_matches(
        (block_sums, config.grid, config.block),
        block_sums_reference,
        [x, out, n, bs],
        outputs=["out"],
    )


# ---------------------------------------------------------------- the report
def _short_add_inputs(n: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32), np.zeros(n, np.float32)


def test_mismatch_report_names_backend_array_index_values_and_inputs():
    a, b, out = _short_add_inputs()
    with pytest.raises(AssertionError) as info:
        gkt.assert_kernel_matches(
            (vadd, 1, 8),  # 8 threads for 10 elements: the last two are never written
            lambda a, b, out, n: {"out": a + b},
            [a, b, out, 10],
        )
    report = str(info.value)
    for backend in gk.available_backends():
        assert f"backend {backend!r}: output 'out' differs at 2 of 10 elements" in report
    assert "worst at index (9,): got 0.0, expected 9.5" in report
    assert "vadd[1, 8]" in report
    assert "inputs that reproduce it:" in report
    assert "  a = array([0., 1., 2., 3., 4., 5., 6., 7., 8., 9.], dtype=float32)" in report
    assert "  n = 10" in report
    err = info.value
    assert isinstance(err, gkt.KernelMismatchError)
    m = err.mismatches[0]
    assert (m.array, m.index, float(m.actual), float(m.expected), m.count) == ("out", (9,), 0.0, 9.5, 2)
    np.testing.assert_array_equal(err.inputs["a"], a)
    assert "note: the simulator gives a wrong result too: a bug in the kernel" in report


@pytest.mark.skipif("opencl" not in gk.available_backends(), reason="no OpenCL device")
def test_a_device_that_differs_from_the_simulator_is_pointed_to_it(monkeypatch):
    """Where only a device's result is wrong, the report says the simulator's matches and how to
    look for what the device exposes (gk.sanitize)."""
    a, b, out = _short_add_inputs()
    opencl = gk.get_backend("opencl")
    real = opencl.launch

    def corrupting(variant, grid, block, args, *rest, **kw):
        real(variant, grid, block, args, *rest, **kw)
        if isinstance(args[2], np.ndarray):
            args[2][3] = -1.0  # what a race might leave behind on this device only

    monkeypatch.setattr(opencl, "launch", corrupting)
    with pytest.raises(gkt.KernelMismatchError) as info:
        gkt.assert_kernel_matches((vadd, 2, 8), lambda a, b, out, n: {"out": a + b}, [a, b, out, 10])
    report = str(info.value)
    assert "does not match the NumPy reference on opencl" in report
    assert "note: the simulator's result matches NumPy, so the device differs: gk.sanitize" in report


def test_kernel_fault_on_the_simulator_is_reported_and_checks_are_forced_on():
    sim = gk.get_backend("sim")
    before = sim.check
    sim.check = False
    try:
        x, out = np.ones(64, np.int32), np.zeros(1, np.int32)
        with pytest.raises(AssertionError) as info:  # 64 threads for a 32-element shared array
            gkt.assert_kernel_matches((block_sums, 1, 64), lambda x, out, n, bs: None, [x, out, 64, 32], backends="sim")
        assert "backend 'sim': OutOfBoundsError" in str(info.value)
        assert isinstance(info.value.__cause__, gk.OutOfBoundsError)
        assert sim.check is False, "the simulator's own setting is restored"
    finally:
        sim.check = before


def test_inputs_are_fresh_for_every_backend_and_the_caller_keeps_theirs():
    a, b, out = _short_add_inputs()
    out[:] = 1.0
    # out = out + b: a backend that saw another's result would get 2.0, not 1.5
    gkt.assert_kernel_matches(lambda out, b: vadd[1, 32](out, b, out, 10), lambda out, b: {"out": out + b}, [out, b])
    assert (out == 1.0).all()


def test_reference_forms_and_stray_writes():
    a, b, out = _short_add_inputs()
    launch = (vadd, 1, 32)
    args = [a, b, out, 10]

    def in_place(a, b, out, n):
        out[:] = a + b

    gkt.assert_kernel_matches(launch, in_place, args)  # every array argument is compared
    gkt.assert_kernel_matches(launch, lambda a, b, out, n: a + b, args, outputs=2)
    gkt.assert_kernel_matches(launch, lambda a, b, out, n: (a + b,), args, outputs=("out",))
    with pytest.raises(ValueError, match="outputs="):
        gkt.assert_kernel_matches(launch, lambda a, b, out, n: a + b, args)
    with pytest.raises(ValueError, match="not an input"):
        gkt.assert_kernel_matches(launch, lambda a, b, out, n: {"c": a}, args)
    with pytest.raises(AssertionError, match="output 'a' differs"):  # the kernel writes an input
        gkt.assert_kernel_matches(lambda a, b, out: vadd[1, 32](a, b, a, 10), lambda a, b, out: None, [a, b, out])


def test_tolerances():
    a, b, out = _short_add_inputs()
    off = lambda a, b, out, n: {"out": (a + b) * np.float32(1 + 1e-6)}  # noqa: E731
    gkt.assert_kernel_matches((vadd, 1, 32), off, [a, b, out, 10])  # within float32's default rtol
    with pytest.raises(AssertionError, match="rtol=1e-08, atol=0"):
        gkt.assert_kernel_matches((vadd, 1, 32), off, [a, b, out, 10], rtol=1e-8, atol=0)
    x, sums = np.arange(64, dtype=np.int32), np.zeros(2, np.int32)
    exact = block_sums_reference(x, sums, 64, 32)
    with pytest.raises(AssertionError, match="compared exactly"):
        gkt.assert_kernel_matches((block_sums, 2, 32), lambda *_: {"out": exact + 1}, [x, sums, 64, 32])
    gkt.assert_kernel_matches((block_sums, 2, 32), lambda *_: {"out": exact + 1}, [x, sums, 64, 32], atol=1)


def test_backend_selection_and_restoring_the_choice():
    a, b, out = _short_add_inputs()
    ref = lambda a, b, out, n: {"out": a + b}  # noqa: E731
    gk.set_backend("sim")
    try:
        assert list(gkt.assert_kernel_matches((vadd, 1, 32), ref, [a, b, out, 10], backends=["sim"])) == ["sim"]
        gkt.assert_kernel_matches((vadd, 1, 32), ref, [a, b, out, 10])
        assert gk_backends.chosen_backend() == ("sim", "set_backend")
    finally:
        gk.set_backend(None)
    with pytest.raises(AssertionError, match="backend 'nope' was asked for but is unknown"):
        gkt.assert_kernel_matches((vadd, 1, 32), ref, [a, b, out, 10], backends=["sim", "nope"])
    if "cuda" not in gk.available_backends():
        with pytest.raises(AssertionError, match="backend 'cuda' was asked for but is not available here: "):
            gkt.assert_kernel_matches((vadd, 1, 32), ref, [a, b, out, 10], backends="cuda")
    with pytest.raises(TypeError, match="NumPy arrays"):
        gkt.assert_kernel_matches((vadd, 1, 32), ref, [gk.to_device(a), b, out, 10])


# ---------------------------------------------------------------- the strategies
def test_sizes_include_the_awkward_ones():
    awkward = gkt._awkward(1, 300, 16)
    assert {1, 2, 3, 7, 97, 293, 15, 17, 63, 65, 300} <= set(awkward)
    assert all(1 <= v <= 300 for v in awkward)


@FAST
@given(st.data())
def test_sizes_and_shapes_stay_in_range(data):
    assert 5 <= data.draw(gkt.sizes(5, 40)) <= 40
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(gkt.shapes(ndim, min_side=2, max_side=100, max_size=1000))
    assert len(shape) == ndim and all(2 <= s <= 100 for s in shape) and math.prod(shape) <= 1000


@FAST
@given(st.data())
def test_launch_configs_cover_the_shape_within_device_limits(data):
    shape = data.draw(gkt.shapes(data.draw(st.integers(1, 3)), max_size=5000))
    extra = data.draw(st.integers(0, 2))
    config = data.draw(gkt.launch_configs(shape, extra_blocks=extra))
    max_group, max_items = gkt.device_limits()
    assert len(config.grid) == len(config.block) == len(shape)
    assert config.covers(shape)
    assert config.threads <= max_group and all(b <= m for b, m in zip(config.block, max_items))
    for g, b, s in zip(config.grid, config.block, reversed(shape)):
        assert (g - 1 - extra) * b < s, "no more spare blocks than asked for"
    for name in gk.available_backends():
        backend = gk.get_backend(name)
        assert config.threads <= backend.max_group
        assert all(b <= m for b, m in zip(config.block, backend.max_items))


@FAST
@given(st.data())
def test_launch_config_options(data):
    n = data.draw(gkt.sizes(1, 5000))
    config = data.draw(gkt.launch_configs(n, pow2=True, max_threads=64))
    (b,) = config.block
    assert b & (b - 1) == 0 and b <= 64 and config.grid == gkt.grid_for(n, b)
    fixed = data.draw(gkt.launch_configs((n, 3), block=(8, 4)))
    assert fixed.block == (8, 4) and fixed.grid == (1, -(-n // 4))


def test_grid_for_and_limits():
    assert gkt.grid_for(100, 32) == (4,)
    assert gkt.grid_for((10, 33), (32, 4)) == (2, 3)
    assert gkt.device_limits("sim") == (1024, (1024, 1024, 64))
    with pytest.raises(ValueError, match="exceeds"):
        gkt.launch_configs(10, block=2048, backends="sim")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("op,terms", [(None, 1), ("add", 2), ("sum", 1000), ("mul", 2), ("prod", 3), ("dot", 64)])
def test_value_range_cannot_overflow(dtype, op, terms):
    lo, hi = gkt.value_range(dtype, op, terms=terms)
    dt = np.dtype(dtype)
    top = float(np.finfo(dt).max) if dt.kind == "f" else np.iinfo(dt).max
    assert lo <= 0 < hi and (lo == 0 or lo == -hi)

    def worst(v):  # the largest magnitude `op` can reach from operands of magnitude v
        if op in ("mul", "prod"):
            return v**terms
        return v * v * terms if op == "dot" else v * terms

    assert worst(hi) <= top
    if dt.kind in "iu" and op is not None:  # and the range is not needlessly narrow
        assert worst(hi + 1) > top


@FAST
@given(st.data())
def test_arrays_respect_their_range(data):
    dtype = data.draw(gkt.dtypes("biuf"))
    shape = data.draw(gkt.shapes(2, max_size=50))
    x = data.draw(gkt.arrays(dtype, shape, op="mul"))
    assert x.dtype == dtype and x.shape == shape and x.flags.c_contiguous
    if dtype.kind != "b":
        lo, hi = gkt.value_range(dtype, "mul")
        assert ((x >= lo) & (x <= hi)).all()
    if dtype.kind == "f":
        assert np.isfinite(x).all()
        assert not ((x != 0) & (np.abs(x) < np.finfo(dtype).tiny)).any(), "no subnormals"
    assert np.abs(data.draw(gkt.arrays(np.float64, 5, magnitude=10.0))).max() <= 10.0


def test_dtypes_by_kind():
    floats = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}
    assert set(gkt.dtypes("f").example() for _ in range(20)) <= floats
    assert set(gkt.dtypes("c").example() for _ in range(20)) <= {np.dtype(np.complex64), np.dtype(np.complex128)}
    with pytest.raises(ValueError):
        gkt.dtypes("x")


def test_strategies_without_hypothesis_say_how_to_install_it(monkeypatch):
    """issue 33: ``gkt.sizes()`` without Hypothesis raised a bare ModuleNotFoundError."""
    import sys

    for name in [m for m in sys.modules if m == "hypothesis" or m.startswith("hypothesis.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: importing it fails
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    for make in (lambda: gkt.sizes(), lambda: gkt.shapes(2), lambda: gkt.dtypes("f")):
        with pytest.raises(gk.DependencyError, match=r"pip install 'gpukern\[test\]'"):
            make()
