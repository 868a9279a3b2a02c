"""Language for speed: unroll(), vload/vstore, launch_bounds(); launch plans; autotuning.

Results are checked against NumPy on every backend; the generated C is checked for the
constructs that make it fast (no loop left where unroll() was asked, float4 accesses,
__launch_bounds__); bad uses are compile or launch errors that say where and why.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import (
    Array,
    Const,
    barrier,
    float32,
    float64,
    func,
    global_id,
    int32,
    kernel,
    launch_bounds,
    local,
    shared,
    thread_idx,
    unroll,
    vload,
    vstore,
)
from gpukern.runtime.plan import no_plan

# ---------------------------------------------------------------- unroll


@kernel
def poly(x: Array[float32], out: Array[float32], n: int32, DEG: Const[int]):
    """out = sum_j (j + 1) * x**j, with the powers kept in a local array indexed by the unrolled j."""
    p = local(float32, (DEG,))
    i = global_id(0)
    if i < n:
        p[0] = 1.0
        for j in unroll(range(1, DEG)):
            p[j] = p[j - 1] * x[i]
        s = 0.0
        for j in unroll(range(DEG)):
            s += (j + 1) * p[j]
        out[i] = s


@pytest.mark.parametrize("deg", [1, 3, 8])
def test_unroll_matches_numpy(backend, deg):
    rng = np.random.default_rng(deg)
    x = rng.uniform(-1, 1, 100).astype(np.float32)
    out = np.zeros_like(x)
    poly[4, 32](x, out, 100, deg)
    want = sum((j + 1) * x.astype(np.float64) ** j for j in range(deg))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_unrolled_loop_leaves_no_loop_and_constant_indices():
    src = poly.source(Array[float32], Array[float32], int32, 4)
    assert "for (" not in src
    assert "p[3] = p[2] * x[i];" in src
    assert "s += 4.0f * p[3];" in src


def test_unroll_loop_variable_keeps_its_last_value(backend):
    @kernel
    def last(out: Array[int32]):
        for j in unroll(range(2, 9, 3)):
            pass
        out[0] = j

    out = np.zeros(1, np.int32)
    last[1, 1](out)
    assert out[0] == 8


def test_unroll_needs_compile_time_bounds():
    @kernel
    def bad(out: Array[float32], n: int32):
        for j in unroll(range(n)):
            out[j] = 1.0

    with pytest.raises(gk.KernelTypeError, match="compile-time range bounds") as e:
        bad.source(Array[float32], int32)
    assert e.value.lineno is not None and "Const" in str(e.value)


def test_unroll_refuses_break():
    @kernel
    def bad(out: Array[float32]):
        for j in unroll(range(4)):
            if out[j] > 0:
                break

    with pytest.raises(gk.KernelSyntaxError, match="unrolled loop"):
        bad.source(Array[float32])


def test_unroll_only_as_a_loop_iterable_and_of_a_range():
    @kernel
    def outside(out: Array[float32]):
        r = unroll(range(3))  # noqa: F841
        out[0] = 1.0

    @kernel
    def not_range(out: Array[float32]):
        for j in unroll(4):
            out[j] = 1.0

    with pytest.raises(gk.KernelSyntaxError, match="iterable of a for loop"):
        outside.source(Array[float32])
    with pytest.raises(gk.KernelSyntaxError, match="range"):
        not_range.source(Array[float32])


def test_unroll_has_a_size_limit():
    @kernel
    def huge(out: Array[float32]):
        for j in unroll(range(100000)):
            out[0] += 1.0

    with pytest.raises(gk.KernelTypeError, match="at most"):
        huge.source(Array[float32])


# ---------------------------------------------------------------- vload / vstore


@kernel
def reverse4(a: Array[float32], b: Array[float32], n: int32):
    """Reverse each group of 4: one float4 load and one float4 store per thread."""
    i = global_id(0) * 4
    if i < n:
        x, y, z, w = vload(a, i, 4)
        vstore(b, i, (w, z, y, x))


@kernel
def pairs(a: Array[float64], b: Array[float64], n: int32):
    """Swap each pair of float64 (16 bytes, a double2)."""
    i = global_id(0) * 2
    if i < n:
        v = vload(a, i, 2)
        vstore(b, i, (v[1], v[0]))


@kernel
def through_shared(a: Array[int32], out: Array[int32], T: Const[int]):
    """int4 traffic through a local array and a 2-D shared tile: each thread stores its 4 values as
    row tx, columns 4..7 of the tile, and reads back its neighbour's row."""
    tile = shared(int32, (4, T))
    reg = local(int32, (4,))
    tx = thread_idx.x
    r0, r1, r2, r3 = vload(a, 4 * tx, 4)
    reg[0] = r0
    reg[1] = r1
    reg[2] = r2
    reg[3] = r3
    v = vload(reg, 0, 4)
    vstore(tile, (tx, 4), (v[0], v[1], v[2], v[3]))
    barrier()
    q = vload(tile, ((tx + 1) % 4, 4), 4)
    out[4 * tx] = q[0]
    out[4 * tx + 1] = q[1]
    out[4 * tx + 2] = q[2]
    out[4 * tx + 3] = q[3]


def test_vector_loads_and_stores_global(backend):
    a = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    b = np.zeros_like(a)
    reverse4[1, 16](a, b, 64)
    np.testing.assert_array_equal(b, a.reshape(-1, 4)[:, ::-1].ravel())
    d = np.random.default_rng(1).standard_normal(32)
    e = np.zeros_like(d)
    pairs[1, 16](d, e, 32)
    np.testing.assert_array_equal(e, d.reshape(-1, 2)[:, ::-1].ravel())


def test_vector_accesses_of_shared_and_local_arrays(backend):
    a = np.arange(16, dtype=np.int32) * 7 + 1
    out = np.zeros(16, np.int32)
    through_shared[1, 4](a, out, 8)
    np.testing.assert_array_equal(out, np.roll(a.reshape(4, 4), -1, axis=0).ravel())


def test_vector_accesses_are_vector_types_in_c():
    cuda = reverse4.source(Array[float32], Array[float32], int32)
    assert "*reinterpret_cast<const float4*>(&a[i])" in cuda and "make_float4(w, z, y, x)" in cuda
    ocl = reverse4.source(Array[float32], Array[float32], int32, backend="opencl")
    assert "vload4(0, &a[i])" in ocl and "vstore4((float4)(w, z, y, x), 0, &b[i])" in ocl
    assert "double2" in pairs.source(Array[float64], Array[float64], int32)
    shared_src = through_shared.source(Array[int32], Array[int32], 8)
    assert "__shared__ __align__(16) int tile[4][8];" in shared_src  # float4 accesses need 16-byte alignment


@func
def fill_row4(tile, r, x):
    vstore(tile, (r, 0), (x, x + 1, x + 2, x + 3))


@kernel
def via_helper(out: Array[float32]):
    """A shared tile written by float4 stores in a helper: the kernel's declaration must be aligned."""
    tile = shared(float32, (4, 4))
    tx = thread_idx.x
    fill_row4(tile, tx, 4.0 * tx)
    barrier()
    out[4 * tx] = tile[(tx + 1) % 4, 3]


def test_vector_access_in_a_helper_aligns_the_kernels_array(backend):
    assert "__shared__ __align__(16) float tile[4][4];" in via_helper.source(Array[float32])
    out = np.zeros(16, np.float32)
    via_helper[1, 4](out)
    np.testing.assert_array_equal(out[::4], [4.0 * ((t + 1) % 4) + 3 for t in range(4)])


def test_misaligned_vector_access_is_found_by_the_simulator():
    @kernel
    def off_by_one(a: Array[float32], b: Array[float32]):
        i = global_id(0) * 4 + 1
        x, y, z, w = vload(a, i, 4)
        b[i] = x + y + z + w

    a = np.ones(16, np.float32)
    with pytest.raises(gk.MisalignedAccessError, match="not a multiple of 4") as e:
        off_by_one[1, 2](a, np.zeros_like(a), backend="sim")
    assert e.value.lineno is not None


def test_vector_access_past_the_end_is_out_of_bounds():
    a = np.ones(6, np.float32)  # the second thread's float4 would read elements 4..7
    with pytest.raises(gk.OutOfBoundsError):
        reverse4[1, 2](a, np.zeros(8, np.float32), 8, backend="sim")


@pytest.mark.parametrize(
    "body, words",
    [
        ("x = vload(a, 1, 4)\n    b[0] = x[0]", "not a multiple of 4"),
        ("x = vload(a, 0, 3)\n    b[0] = x[0]", "2, 4 or 8"),
        ("vstore(b, 0, 1.0)", "tuple"),
        ("vstore(b, 0, (1.0, 2.0, 3.0))", "2, 4 or 8"),
        ("t = shared(float32, (2, 6))\n    x = vload(t, (0, 4), 4)\n    b[0] = x[0]", "out of bounds"),
        ("x = vload(d, 0, 4)\n    d[0] = x[0]", "16 bytes"),
        ("x = vload(2.0, 0, 4)", "needs an array"),
        ("if a[0] > 0:\n        v = vload(a, 0, 4)\n    b[0] = v[0]", "inside an if or loop body"),
        ("v = vload(a, 0, 4)\n    b[0] = v[4]", "not valid for a tuple"),
        ("launch_bounds(0)", "positive integers"),
    ],
)
def test_bad_uses_are_compile_errors(body, words):
    with pytest.raises(gk.CompileError, match=words) as e:
        _compile_snippet(body)
    assert e.value.lineno is not None


def _compile_snippet(body: str) -> None:
    """Compile a kernel whose body is ``body`` (through a real file, so it has source lines)."""
    import importlib.util
    import tempfile

    text = (
        "from gpukern import Array, float32, float64, kernel, launch_bounds, shared, vload, vstore\n"
        "@kernel\n"
        "def k(a: Array[float32], b: Array[float32], d: Array[float64]):\n"
        f"    {body}\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("snippet", f.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.k.source(Array[float32], Array[float32], Array[float64])


def test_vector_value_may_be_used_inside_its_block(backend):
    @kernel
    def in_block(a: Array[float32], b: Array[float32]):
        i = global_id(0)
        if a[4 * i] > 0:
            v = vload(a, 4 * i, 4)
            b[i] = v[0] + v[3]

    a = np.arange(1, 17, dtype=np.float32)
    b = np.zeros(4, np.float32)
    in_block[1, 4](a, b)
    np.testing.assert_array_equal(b, a[0::4] + a[3::4])


# ---------------------------------------------------------------- launch_bounds


@kernel
def bounded(out: Array[int32], PER: Const[int]):
    launch_bounds(PER * 32)
    out[global_id(0)] = thread_idx.x


def test_launch_bounds_in_cuda_and_checked_at_launch(backend):
    assert "__launch_bounds__(64) void bounded" in bounded.source(Array[int32], 2)
    assert "__launch_bounds__" not in bounded.source(Array[int32], 2, backend="opencl")
    out = np.zeros(64, np.int32)
    bounded[1, 64](out, 2)
    np.testing.assert_array_equal(out, np.arange(64))
    with pytest.raises(gk.LaunchError, match=r"launch_bounds\(64\)"):
        bounded[1, 128](out, 2)


def test_launch_bounds_errors():
    @kernel
    def twice(out: Array[int32]):
        launch_bounds(64)
        launch_bounds(128)
        out[0] = 1

    with pytest.raises(gk.KernelTypeError, match="contradicts"):
        twice.source(Array[int32])

    @func
    def helper(x):
        launch_bounds(64)
        return x

    @kernel
    def calls(out: Array[int32]):
        out[0] = helper(1)

    with pytest.raises(gk.KernelSyntaxError, match="belongs in the kernel"):
        calls.source(Array[int32])


# ---------------------------------------------------------------- launch plans


@kernel
def axpb(x: Array[float32], y: Array[float32], a: float32, n: int32):
    i = global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@pytest.fixture
def device_backend(request):
    """The runtime backends that keep data on a device (the simulator has no launch plans)."""
    names = [b for b in gk.available_backends() if b != "sim"]
    if not names:
        pytest.skip("no device backend here")
    gk.set_backend(names[0])
    try:
        yield names[0]
    finally:
        gk.set_backend(None)


def test_second_launch_takes_the_plan(device_backend, monkeypatch):
    x = gk.to_device(np.arange(8, dtype=np.float32))
    y = gk.to_device(np.ones(8, np.float32))
    launch = axpb[1, 8]
    launch(x, y, 2.0, 8)
    assert launch.fast is not no_plan and launch.fast is launch.plan.fast
    described = launch.plan.describe()
    assert f"x: a DeviceArray on {device_backend}, dtype float32, 1-D" in described
    assert "n: type int, -2147483648 <= n <= 2147483647" in described
    checked = []
    real = axpb.launch
    monkeypatch.setattr(axpb, "launch", lambda *a, **k: checked.append(1) or real(*a, **k))
    launch(x, y, 2.0, 8)
    launch(x, y, 0.5, 4)
    assert checked == []  # both went through the plan
    want = np.ones(8, np.float32) + 2 * np.arange(8) * 2.0
    want[:4] += 0.5 * np.arange(4)
    np.testing.assert_allclose(y.get(), want)


def test_plan_guards_fall_back_to_the_checked_path(device_backend):
    x = gk.to_device(np.arange(8, dtype=np.float32))
    y = gk.to_device(np.zeros(8, np.float32))
    launch = axpb[1, 8]
    launch(x, y, 1.0, 8)
    with pytest.raises(gk.LaunchError, match="does not fit in int32"):
        launch(x, y, 1.0, 2**40)
    with pytest.raises(gk.LaunchError, match="float32"):
        launch(gk.to_device(np.arange(8, dtype=np.float64)), y, 1.0, 8)
    with pytest.raises(gk.LaunchError, match="4 arguments"):
        launch(x, y, 1.0)
    host = np.zeros(8, np.float32)  # a NumPy array is copied in and back: the checked path
    launch(x, host, 1.0, 8)
    np.testing.assert_array_equal(host, np.arange(8))
    sim_x = gk.to_device(np.zeros(8, np.float32), backend="sim")
    launch(x, y, 1.0, 8)
    with pytest.raises(gk.LaunchError, match="lives on sim device 0"):
        launch(sim_x, y, 1.0, 8)


def test_plan_converts_numpy_scalars_like_the_checked_path(device_backend):
    x = gk.to_device(np.arange(8, dtype=np.float32))
    y = gk.to_device(np.zeros(8, np.float32))
    launch = axpb[1, 8]
    launch(x, y, np.float32(1.0), np.int64(8))  # an int64 for the int32 n: converted, in range
    np.testing.assert_array_equal(y.get(), np.arange(8))
    with pytest.raises(gk.LaunchError, match="does not fit in int32"):
        launch(x, y, np.float32(1.0), np.int64(2**40))  # never wrapped or packed by a plan
    launch(x, y, 1, 8)  # a Python int for the float32 a: the checked path every time, still right
    np.testing.assert_array_equal(y.get(), 2 * np.arange(8))


def test_set_backend_invalidates_plans(device_backend):
    x = np.arange(8, dtype=np.float32)
    dx, dy = gk.to_device(x), gk.to_device(np.zeros(8, np.float32))
    launch = axpb[1, 8]
    launch(dx, dy, 1.0, 8)
    plan = launch.fast
    gk.set_backend("sim")
    with pytest.raises(gk.LaunchError, match=r"lives on \w+ device 0, but the launch runs on sim device 0"):
        launch(dx, dy, 1.0, 8)  # not silently launched on the old backend
    gk.set_backend(device_backend)
    launch(dx, dy, 1.0, 8)
    assert launch.fast is plan  # the choice it was made for is back: its plan is good again
    np.testing.assert_array_equal(dy.get(), 2 * x)


def test_const_argument_selects_the_variant_in_the_plan(device_backend):
    out = gk.to_device(np.zeros(64, np.int32))
    launch = bounded[1, 32]
    launch(out, 1)
    launch(out, 2)
    assert len([k for k in bounded.variants if k[1][2] in (1, 2)]) == 2
    np.testing.assert_array_equal(out.get()[:32], np.arange(32))


# ---------------------------------------------------------------- autotune


@kernel
def scale_blocks(x: Array[float32], y: Array[float32], n: int32, PER: Const[int]):
    """Each thread scales PER consecutive elements."""
    base = global_id(0) * PER
    for j in unroll(range(PER)):
        if base + j < n:
            y[base + j] = 3.0 * x[base + j]


def _tune(backend_name: str, configs, key=("n", 256), verbose=False):
    n = 256
    x = gk.to_device(np.arange(n, dtype=np.float32), backend=backend_name)
    y = gk.to_device(np.zeros(n, np.float32), backend=backend_name)

    def grid(cfg):
        threads = cfg["threads"]
        return (n // cfg["PER"] + threads - 1) // threads, threads

    best = gk.autotune(
        scale_blocks,
        configs,
        args=lambda cfg: (x, y, n, cfg["PER"]),
        launch=grid,
        key=key,
        repeat=2,
        warmup=1,
        verbose=verbose,
        backend=backend_name,
    )
    return best, y


def test_autotune_picks_a_runnable_config_and_remembers_it(monkeypatch, capsys, tmp_path):
    from gpukern.runtime import cache

    monkeypatch.setattr(cache, "_cache", cache.BinaryCache(str(tmp_path)))
    configs = [{"PER": 1, "threads": 64}, {"PER": 4, "threads": 32}, {"PER": 2, "threads": 4096}]
    best, y = _tune("sim", configs, verbose=True)
    assert best in configs[:2]  # 4096 threads per block cannot run: skipped
    np.testing.assert_array_equal(y.get(), 3.0 * np.arange(256))
    err = capsys.readouterr().err
    assert "[3/3]" in err and "skipped" in err and "chose" in err
    # another process (a fresh in-memory cache over the same directory) asks the disk, not the device
    monkeypatch.setattr(cache, "_cache", cache.BinaryCache(str(tmp_path)))
    launched = []
    real = gk.Kernel.launch
    monkeypatch.setattr(gk.Kernel, "launch", lambda *a, **k: launched.append(1) or real(*a, **k))
    again, _ = _tune("sim", configs, verbose=True)
    assert again == best and launched == []
    assert "remembered" in capsys.readouterr().err
    other, _ = _tune("sim", configs, key=("n", 512))  # another problem: timed again
    assert launched and other in configs[:2]


def test_autotune_with_nothing_runnable():
    with pytest.raises(gk.LaunchError, match="none of the 1 configurations"):
        _tune("sim", [{"PER": 1, "threads": 100000}], key=("nothing",))
    with pytest.raises(gk.LaunchError, match="at least one"):
        _tune("sim", [], key=("empty",))


# ---------------------------------------------------------------- the fast SGEMM example


def _load_fast():
    from kernel_source import load_example

    return load_example("matmul_fast")


matmul_fast = _load_fast()


@pytest.mark.parametrize(
    "shape, config",
    [
        ((64, 64, 32), "64x64x16_4x4"),  # multiples of 4: float4 path
        ((70, 33, 45), "64x64x16_4x4"),  # ragged: scalar path (VEC=False), partial tiles
        ((65, 68, 20), "64x64x8_4x8"),  # float4 path with partial tiles in m and n
    ],
)
def test_fast_sgemm_matches_numpy(backend, shape, config):
    m, n, k = shape
    rng = np.random.default_rng(m * n * k)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    da, db = gk.to_device(a.ravel()), gk.to_device(b.ravel())
    dc = gk.to_device(np.full(m * n, np.nan, np.float32))
    matmul_fast.sgemm(da, db, dc, m, n, k, config)
    np.testing.assert_allclose(dc.get().reshape(m, n), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


SYNC_CONFIGS = [
    # those of 128-wide tiles and more (10-60 s each, simulated and compiled) run in .ci/run only
    # (-m slow), the 64 x 64 ones in the README's command
    pytest.param(name, marks=pytest.mark.slow) if cfg["BM"] * cfg["BN"] >= 8192 else name
    for name, cfg in matmul_fast.CONFIGS.items()
    if not matmul_fast.is_async(cfg)
]


@pytest.mark.parametrize("name", SYNC_CONFIGS)
def test_every_sgemm_kernel_config_matches_numpy(backend, name):
    """Every tile configuration of ``sgemm_kernel`` (those with several float4s a thread too, whose
    offsets ``store_tiles`` derives from the arrays' shapes) at partial tiles: float4 loads (k and n
    multiples of 4, k over three tiles), scalar ones (k over two), and k shorter than one tile.
    Not on OpenCL, whose CPU compiler (PoCL) takes 10-17 s for each of the large configurations'
    fully unrolled kernels: the simulator runs the same program; the three above, OpenCL too."""
    if backend == "opencl":
        pytest.skip("compile time on PoCL; the simulator and CUDA run every configuration")
    cfg = matmul_fast.CONFIGS[name]
    bm, bn, bk = cfg["BM"], cfg["BN"], cfg["BK"]
    rng = np.random.default_rng(bm * bn + bk)
    for m, n, k in ((bm - 3, bn - 4, 2 * bk + 4), (bm - 1, bn - 3, bk + 5), (bm + 2, 12, bk - 4)):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        da, db = gk.to_device(a.ravel()), gk.to_device(b.ravel())
        dc = gk.to_device(np.full(m * n, np.nan, np.float32))
        matmul_fast.sgemm(da, db, dc, m, n, k, name)
        want = a.astype(np.float64) @ b
        np.testing.assert_allclose(dc.get().reshape(m, n), want, rtol=1e-4, atol=1e-4, err_msg=f"{(m, n, k)}")


def test_fast_sgemm_configs_are_valid_and_bad_ones_refused():
    for cfg in matmul_fast.CONFIGS.values():
        matmul_fast.check_config(cfg)
    with pytest.raises(gk.LaunchError, match="not supported"):
        matmul_fast.check_config({"BM": 64, "BN": 64, "BK": 8, "TM": 4, "TN": 4})


def test_fast_sgemm_c_is_unrolled_and_vectorised():
    src = matmul_fast.sgemm_kernel.source(*(Array[float32],) * 3, int32, int32, int32, 64, 64, 16, 4, 4, True)
    assert "__launch_bounds__(256)" in src
    assert "reinterpret_cast<const float4*>(&a[" in src and "make_float4(" in src
    assert "acc[3][3] += a_reg[3] * b_reg[3];" in src
    assert src.count("for (") == 1  # only the loop over k tiles remains
