"""The simulator finds kernel bugs: each buggy kernel raises the right error at the right line,
naming the block, the threads and the array; the correct versions raise nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_source import line_of

import gpukern as gk
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, global_id, int32, kernel, shared, thread_idx

pytestmark = pytest.mark.usefixtures("on_simulator")  # every test here runs on the simulator


# ---------------------------------------------------------------- tiled matmul without its second barrier
@kernel
def matmul_ok(a: Array[float32], b: Array[float32], c: Array[float32], n: int32, TILE: Const[int]):
    ta = shared(float32, (TILE, TILE))
    tb = shared(float32, (TILE, TILE))
    tx, ty = thread_idx.x, thread_idx.y
    row = block_idx.y * TILE + ty
    col = block_idx.x * TILE + tx
    acc = 0.0
    for t in range((n + TILE - 1) // TILE):
        ta[ty, tx] = a[row * n + t * TILE + tx] if row < n and t * TILE + tx < n else 0.0
        tb[ty, tx] = b[(t * TILE + ty) * n + col] if t * TILE + ty < n and col < n else 0.0
        barrier()
        for i in range(TILE):
            acc += ta[ty, i] * tb[i, tx]
        barrier()
    if row < n and col < n:
        c[row * n + col] = acc


@kernel
def matmul_one_barrier(a: Array[float32], b: Array[float32], c: Array[float32], n: int32, TILE: Const[int]):
    ta = shared(float32, (TILE, TILE))
    tb = shared(float32, (TILE, TILE))
    tx, ty = thread_idx.x, thread_idx.y
    row = block_idx.y * TILE + ty
    col = block_idx.x * TILE + tx
    acc = 0.0
    for t in range((n + TILE - 1) // TILE):
        ta[ty, tx] = a[row * n + t * TILE + tx] if row < n and t * TILE + tx < n else 0.0  # RACE-A
        tb[ty, tx] = b[(t * TILE + ty) * n + col] if t * TILE + ty < n and col < n else 0.0
        barrier()
        for i in range(TILE):
            acc += ta[ty, i] * tb[i, tx]
    if row < n and col < n:
        c[row * n + col] = acc


def matmul_args(n: int):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n * n, dtype=np.float32)
    b = rng.standard_normal(n * n, dtype=np.float32)
    return a, b, np.zeros(n * n, np.float32)


def test_matmul_with_both_barriers_is_clean_and_right():
    n, tile = 40, 8
    a, b, c = matmul_args(n)
    matmul_ok[((n + tile - 1) // tile,) * 2, (tile, tile)](a, b, c, n, tile)
    np.testing.assert_allclose(c.reshape(n, n), a.reshape(n, n) @ b.reshape(n, n), rtol=1e-4, atol=1e-4)


def test_matmul_without_second_barrier_races():
    n, tile = 32, 8
    a, b, c = matmul_args(n)
    with pytest.raises(gk.DataRaceError) as info:
        matmul_one_barrier[(n // tile,) * 2, (tile, tile)](a, b, c, n, tile)
    e = info.value
    assert e.lineno == line_of(matmul_one_barrier, "RACE-A")  # the next iteration's store
    msg = str(e)
    assert "matmul_one_barrier" in msg and "'ta'" in msg and "block (" in msg and "thread (" in msg
    assert "barrier" in msg


# ---------------------------------------------------------------- reduction missing a barrier
@kernel
def block_sum(x: Array[float32], out: Array[float32], n: int32, B: Const[int], SYNC: Const[bool]):
    buf = shared(float32, B)
    t = thread_idx.x
    i = block_idx.x * B + t
    buf[t] = x[i] if i < n else 0.0
    barrier()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # REDUCE
        if SYNC:
            barrier()
        s //= 2
    if t == 0:
        out[block_idx.x] = buf[0]


def test_reduction_with_barriers_is_right():
    x = np.random.default_rng(3).standard_normal(1000, dtype=np.float32)
    out = np.zeros(8, np.float32)
    block_sum[8, 128](x, out, 1000, 128, True)
    np.testing.assert_allclose(out.sum(), x.sum(dtype=np.float64), rtol=1e-4)


def test_reduction_missing_a_barrier_races():
    x = np.ones(256, np.float32)
    out = np.zeros(2, np.float32)
    with pytest.raises(gk.DataRaceError) as info:
        block_sum[2, 128](x, out, 256, 128, False)
    assert info.value.lineno == line_of(block_sum, "# REDUCE")
    assert "'buf'" in str(info.value)


# ---------------------------------------------------------------- barrier in thread-dependent control flow
@kernel
def divergent(x: Array[float32]):
    t = thread_idx.x
    if t < 16:
        barrier()  # DIVERGENT
    x[global_id(0)] += 1.0


def test_barrier_inside_thread_dependent_if_is_rejected_before_running():
    x = np.zeros(64, np.float32)
    with pytest.raises(gk.BarrierDivergenceError) as info:
        divergent[2, 32](x)
    e = info.value
    assert e.lineno == line_of(divergent, "# DIVERGENT")
    assert "depends on the thread" in str(e) and isinstance(e, gk.KernelFault) and isinstance(e, gk.CompileError)
    assert not x.any()  # nothing ran


@gk.func
def sync_upper_half(x, i):
    if thread_idx.x < 16:
        return  # these threads go on without waiting
    barrier()  # HALF
    x[i] += 1.0


def _divergent_at_run_time(monkeypatch):
    """A kernel whose barrier only some threads reach, past the static check that refuses it (the
    simulator's run-time check stands behind that one, for what a static check cannot see)."""
    from gpukern.frontend import compiler as frontend

    monkeypatch.setattr(frontend, "check_barriers", lambda fd, varying=frozenset(): None)

    def divergent_at_run_time(x: Array[float32]):
        sync_upper_half(x, global_id(0))

    return gk.kernel(divergent_at_run_time)


def test_barrier_after_a_return_in_a_func_is_refused_before_running():
    @kernel
    def calls_it(x: Array[float32]):
        sync_upper_half(x, global_id(0))

    with pytest.raises(gk.BarrierDivergenceError, match="after a return"):
        calls_it[2, 32](np.zeros(64, np.float32))


def test_barrier_reached_by_half_a_block_is_found_by_the_simulator(monkeypatch):
    x = np.zeros(64, np.float32)
    with pytest.raises(gk.BarrierDivergenceError) as info:
        _divergent_at_run_time(monkeypatch)[2, 32](x)
    e = info.value
    assert e.lineno == line_of(sync_upper_half, "# HALF")
    msg = str(e)
    assert "16 of the 32" in msg and "block (0, 0, 0)" in msg and "thread (16, 0, 0) arrived" in msg
    assert "thread (0, 0, 0) did not" in msg


def test_barrier_reached_by_no_thread_of_a_block_is_fine(monkeypatch):
    x = np.zeros(32, np.float32)
    _divergent_at_run_time(monkeypatch)[2, 16](x)  # blocks of 16: every thread returns before the barrier
    assert not x.any()


@kernel
def early_exit_then_barrier(x: Array[float32], n: int32):
    i = global_id(0)
    if i >= n:
        return
    x[i] = 1.0
    barrier()  # the threads that returned are not waited for


def test_barrier_after_early_return_is_not_divergence():
    x = np.zeros(40, np.float32)
    early_exit_then_barrier[2, 32](x, 40)
    np.testing.assert_array_equal(x, np.ones(40))


# ---------------------------------------------------------------- off-by-one load
@kernel
def neighbour_diff(x: Array[float32], out: Array[float32], n: int32, OFF_BY_ONE: Const[bool]):
    i = global_id(0)
    limit = n if OFF_BY_ONE else n - 1
    if i < limit:
        out[i] = x[i + 1] - x[i]  # LOAD


def test_off_by_one_load_is_out_of_bounds():
    x = np.arange(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    with pytest.raises(gk.OutOfBoundsError) as info:
        neighbour_diff[1, 64](x, out, 50, True)
    e = info.value
    assert e.lineno == line_of(neighbour_diff, "# LOAD")
    msg = str(e)
    assert "(50,)" in msg and "'x'" in msg and "thread (49, 0, 0)" in msg


def test_correct_neighbour_diff():
    x = np.arange(50, dtype=np.float32) ** 2
    out = np.zeros(50, np.float32)
    neighbour_diff[1, 64](x, out, 50, False)
    np.testing.assert_array_equal(out[:49], np.diff(x))


@kernel
def shared_oob(x: Array[float32]):
    s = shared(float32, 8)
    t = thread_idx.x
    s[t] = x[t]  # SHARED
    barrier()
    x[t] = s[7 - t]


def test_shared_index_out_of_bounds():
    x = np.zeros(16, np.float32)
    with pytest.raises(gk.OutOfBoundsError) as info:
        shared_oob[1, 16](x)
    assert info.value.lineno == line_of(shared_oob, "# SHARED")
    assert "shared array 's'" in str(info.value)


def test_checks_off_runs_correct_kernels_too():
    n, tile = 24, 8
    a, b, c = matmul_args(n)
    matmul_ok[(3, 3), (tile, tile)](a, b, c, n, tile, check=False)
    np.testing.assert_allclose(c.reshape(n, n), a.reshape(n, n) @ b.reshape(n, n), rtol=1e-4, atol=1e-4)


def test_checks_off_misses_the_race_by_design():
    n, tile = 16, 8
    a, b, c = matmul_args(n)
    matmul_one_barrier[(2, 2), (tile, tile)](a, b, c, n, tile, check=False)  # no error: checks are off
    assert np.count_nonzero(c) == n * n  # and the kernel did run to the end


# ---------------------------------------------------------------- no false alarms
@kernel
def transpose_tiled(x: Array[float32, 2], y: Array[float32, 2], T: Const[int]):
    tile = shared(float32, (T, T + 1))
    tx, ty = thread_idx.x, thread_idx.y
    r = block_idx.y * block_dim.y + ty
    c = block_idx.x * block_dim.x + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    barrier()
    r2 = block_idx.x * block_dim.x + ty
    c2 = block_idx.y * block_dim.y + tx
    if r2 < y.shape[0] and c2 < y.shape[1]:
        y[r2, c2] = tile[tx, ty]


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 70),
    tile=st.sampled_from([4, 8, 16]),
    extra=st.tuples(st.integers(0, 2), st.integers(0, 2)),
)
def test_random_launches_of_correct_kernels_raise_nothing(n, tile, extra):
    a, b, c = matmul_args(n)
    grid = ((n + tile - 1) // tile + extra[0], (n + tile - 1) // tile + extra[1])  # spare blocks too
    matmul_ok[grid, (tile, tile)](a, b, c, n, tile)
    np.testing.assert_allclose(c.reshape(n, n), a.reshape(n, n) @ b.reshape(n, n), rtol=1e-4, atol=1e-4)
    x = np.random.default_rng(n).standard_normal((n, n + 3), dtype=np.float32)
    y = np.zeros((n + 3, n), np.float32)
    g = ((n + 3 + tile - 1) // tile, (n + tile - 1) // tile)
    transpose_tiled[g, (tile, tile)](x, y, tile)
    np.testing.assert_array_equal(y, x.T)
    s = np.random.default_rng(n).standard_normal(n * 5, dtype=np.float32)
    blocks = (n * 5 + 63) // 64
    out = np.zeros(blocks, np.float32)
    block_sum[blocks, 64](s, out, n * 5, 64, True)
    np.testing.assert_allclose(out.sum(), s.sum(dtype=np.float64), rtol=1e-4, atol=1e-4)


@kernel
def exchange_after_early_return(x: Array[float32], out: Array[float32], n: int32):
    s = shared(float32, 32)
    t = thread_idx.x
    i = global_id(0)
    s[t] = -1.0
    barrier()
    if i >= n:
        return  # the rest of the block still meets at the barriers below
    s[t] = x[i]
    barrier()
    for k in range(3):
        if x[i] < 0:
            return
        barrier()
    out[i] = s[t] + s[(t + 1) % 32]


def test_early_return_before_barriers_on_every_backend(backend):
    """Returned threads are not waited for, on every backend (on OpenCL a barrier after an early
    return is undefined, so the generated code keeps returned threads arriving at barriers)."""
    n = 45
    x = np.arange(1, 65, dtype=np.float32)
    x[7] = -3.0  # thread 7 returns inside the loop
    out = np.zeros(64, np.float32)
    exchange_after_early_return[2, 32](x, out, n)
    s = np.where(np.arange(64) < n, x, -1.0).reshape(2, 32)
    want = (s + np.roll(s, -1, axis=1)).reshape(-1)
    want[n:] = 0.0
    want[7] = 0.0
    np.testing.assert_array_equal(out, want)
    assert "return;" not in exchange_after_early_return.source(x, out, n, backend="opencl")


def test_a_fault_shows_the_users_frames_and_the_message(tmp_path):
    """issue 33: a launch's error printed after 12 to 86 lines of gpukern's own traceback; now the
    user's frames and one line of gpukern (the call that raised), and everything with
    GPUKERN_TRACEBACK=full."""
    import os
    import subprocess
    import sys

    script = tmp_path / "user_program.py"
    script.write_text(
        "import numpy as np\nimport gpukern as gk\n\ngk.set_backend('sim')\n\n\n@gk.kernel\n"
        "def oob(a: gk.Array[gk.float32]):\n    a[gk.global_id(0) + 1] = 1.0\n\n\n"
        "def main():\n    oob[1, 4](np.zeros(4, np.float32))\n\n\nmain()\n"
    )
    package = os.path.dirname(gk.__file__)

    def run(**env: str) -> str:
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
        )
        assert done.returncode == 1
        return done.stderr

    short = run()
    assert "OutOfBoundsError" in short and "index (4,) is out of bounds" in short
    assert f'"{script}", line 13, in main' in short and f'"{script}", line 16' in short
    assert short.count(package) == 1, short  # the one call into gpukern that raised
    assert run(GPUKERN_TRACEBACK="full").count(package) > 3
    script.write_text(script.read_text().replace("a[gk.global_id(0) + 1] = 1.0", "a[0] = a @ a"))
    compile_error = run()  # raised through the front end's ast visitors: none of their frames either
    assert "KernelSyntaxError" in compile_error and "ast.py" not in compile_error
    assert compile_error.count(package) == 1, compile_error
