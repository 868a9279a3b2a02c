"""Shared memory sized at launch: ``dynamic_shared(T)`` / ``shared(T, 0)`` and ``k[grid, block, nbytes]``."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, barrier, block_dim, block_idx, dynamic_shared, float32, float64, int32, shared, thread_idx
from gpukern import uint32 as u32


@gk.kernel
def k_reverse(a: Array[float32], out: Array[float32], n_out: Array[gk.int64]):
    s = dynamic_shared(float32)
    t = thread_idx.x
    i = block_idx.x * block_dim.x + t
    n = len(s)
    if t < n:
        s[t] = a[i]
    barrier()
    if t < n:
        out[i] = s[n - 1 - t]
    if i == 0:
        n_out[0] = n


@pytest.mark.parametrize("bs", [1, 8, 32, 64])
def test_block_reversal_sized_at_launch(backend, bs):
    rng = np.random.default_rng(bs)
    a = rng.standard_normal(3 * bs).astype(np.float32)
    out, n = np.zeros_like(a), np.zeros(1, np.int64)
    k_reverse[3, bs, bs * 4](a, out, n)
    np.testing.assert_array_equal(out, a.reshape(3, bs)[:, ::-1].reshape(-1))
    assert n[0] == bs
    # Numba's order, with a stream of None (or 0)
    for stream in (None, 0):
        out[:] = 0
        k_reverse[3, bs, stream, bs * 4](a, out, n)
        np.testing.assert_array_equal(out, a.reshape(3, bs)[:, ::-1].reshape(-1))


@gk.kernel
def k_numba_spelling(a: Array[int32], out: Array[int32]):
    s = shared(int32, 0)  # Numba's cuda.shared.array(0, int32)
    t = thread_idx.x
    s[t] = a[t] * 3
    barrier()
    out[t] = s[(t + 1) % len(s)]


def test_numba_spelling_means_the_same(backend):
    a = np.arange(16, dtype=np.int32) + 5
    out = np.zeros_like(a)
    k_numba_spelling[1, 16, 64](a, out)
    np.testing.assert_array_equal(out, np.roll(a * 3, -1))


@gk.kernel
def k_alias(a: Array[float32], bits: Array[u32], lens: Array[gk.int64]):
    f = dynamic_shared(float32)
    u = dynamic_shared(u32)
    d = dynamic_shared(float64)
    t = thread_idx.x
    f[t] = a[t]
    barrier()
    bits[t] = u[t]  # the same bytes, seen as uint32
    if t == 0:
        lens[0] = len(f)
        lens[1] = len(u)
        lens[2] = len(d)


def test_every_dynamic_array_starts_at_the_same_address(backend):
    a = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    bits, lens = np.zeros(32, np.uint32), np.zeros(3, np.int64)
    k_alias[1, 32, 256](a, bits, lens)
    np.testing.assert_array_equal(bits, a.view(np.uint32))
    np.testing.assert_array_equal(lens, [256 // 4, 256 // 4, 256 // 8])


@gk.func
def tree_sum(s, t: int32, n: int32):
    step = n // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        barrier()
        step //= 2


@gk.kernel
def k_block_sums(x: Array[float64], sums: Array[float64]):
    s = dynamic_shared(float64)
    t = thread_idx.x
    s[t] = x[block_idx.x * block_dim.x + t]
    barrier()
    tree_sum(s, t, block_dim.x)  # a @func takes the dynamic array as a pointer
    if t == 0:
        sums[block_idx.x] = s[0]


@pytest.mark.parametrize("bs", [4, 16, 128])
def test_reduction_with_a_tile_sized_at_run_time(backend, bs):
    x = np.random.default_rng(bs).integers(-100, 100, 5 * bs).astype(np.float64)
    sums = np.zeros(5)
    k_block_sums[5, bs, bs * 8](x, sums)
    np.testing.assert_array_equal(sums, x.reshape(5, bs).sum(axis=1))


@gk.kernel
def k_length(out: Array[gk.int64]):
    s = dynamic_shared(int32)
    if thread_idx.x == 0:
        out[0] = len(s) + s.size + s.shape[0]


def test_zero_bytes_is_an_empty_array(backend):
    out = np.full(1, -1, np.int64)
    k_length[1, 1, 0](out)
    assert out[0] == 0
    k_length[1, 1, 40](out)
    assert out[0] == 30


def test_device_arrays_take_the_fast_path_with_their_size(backend):
    a = gk.to_device(np.arange(64, dtype=np.float32))
    out, n = gk.zeros(64, np.float32), gk.zeros(1, np.int64)
    launch = k_reverse[2, 32, 128]
    assert launch is k_reverse[2, 32, 128] and launch is not k_reverse[2, 32, 64]
    for _ in range(2):
        launch(a, out, n)
    if backend != "sim":
        assert launch.plan is not None and launch.plan.shared == 128
    np.testing.assert_array_equal(out.get(), np.arange(64, dtype=np.float32).reshape(2, 32)[:, ::-1].reshape(-1))
    k_reverse[2, 32, 64](a, out, n)  # half the block reverses its half
    assert n.get()[0] == 16


def test_a_kernel_without_dynamic_arrays_takes_the_bytes_too(backend):
    a = np.arange(16, dtype=np.int32)
    out = np.zeros_like(a)
    k_plain[1, 16, 1024](a, out)
    np.testing.assert_array_equal(out, a + 1)


@gk.kernel
def k_plain(a: Array[int32], out: Array[int32]):
    out[thread_idx.x] = a[thread_idx.x] + 1


# ---------------------------------------------------------------- refusals
def test_launch_without_size_is_refused():
    with pytest.raises(gk.LaunchError, match=r"dynamic_shared\(float32\).*k_reverse\[grid, block, shared_bytes\]"):
        k_reverse[1, 8](np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(1, np.int64))


def test_size_not_a_whole_number_of_elements_is_refused():
    with pytest.raises(gk.LaunchError, match=r"not a whole number of float64 elements"):
        k_alias[1, 8, 12](np.zeros(8, np.float32), np.zeros(8, np.uint32), np.zeros(3, np.int64))


def test_more_than_the_device_allows_is_refused(backend):
    b = gk.get_backend()
    limit = b.max_shared_optin or b.max_shared
    with pytest.raises(gk.LaunchError, match=r"shared memory per block.*allows"):
        k_reverse[1, 8, limit + 4](np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(1, np.int64))


@pytest.mark.parametrize(
    "config, message",
    [
        ((1, 8, -4), "non-negative int"),
        ((1, 8, 32.0), "non-negative int"),
        ((1, 8, True), "non-negative int"),
        ((1, 8, 0, 32, 1), r"k_reverse\[grid, block, stream, shared_bytes\]"),
    ],
)
def test_bad_launch_configurations(config, message):
    with pytest.raises(gk.LaunchError, match=message):
        k_reverse[config]


def test_a_launch_on_something_not_a_stream_is_refused():
    with pytest.raises(gk.LaunchError, match=r"k_reverse\[grid, block, stream\].*stream"):
        k_reverse[1, 8, object(), 32](np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(1, np.int64))


@pytest.mark.parametrize("keyword", ["shared_mem", "sharedmem", "stream"])
def test_numba_and_cupy_launch_keywords_say_where_they_go(keyword):
    """CuPy's ``f(grid, block, args, shared_mem=n)`` and Numba's keywords: a LaunchError that shows
    the bracket spellings, not Python's bare TypeError."""
    with pytest.raises(gk.LaunchError, match=rf"{keyword}=.*k_reverse\[grid, block, shared_bytes\]"):
        k_reverse[1, 8](np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(1, np.int64), **{keyword: 32})


def test_length_inside_a_func_is_refused():
    @gk.func
    def size_of(s):
        return len(s)

    @gk.kernel
    def k(out: Array[gk.int64]):
        s = dynamic_shared(float32)
        out[0] = size_of(s)

    with pytest.raises(gk.KernelTypeError, match="pass it to the @func"):
        k[1, 1, 16](np.zeros(1, np.int64))


def test_bad_element_type_is_refused():
    @gk.kernel
    def k(out: Array[float32]):
        s = dynamic_shared(7)
        out[0] = s[0]

    with pytest.raises(gk.KernelTypeError, match="element type"):
        k[1, 1, 16](np.zeros(1, np.float32))


# ---------------------------------------------------------------- the simulator's checks
def test_index_past_the_launch_size_is_out_of_bounds(on_simulator):
    with pytest.raises(gk.OutOfBoundsError, match=r"shared array.*of shape \(4,\)"):
        k_numba_spelling[1, 8, 16](np.zeros(8, np.int32), np.zeros(8, np.int32))
    with pytest.raises(gk.OutOfBoundsError, match=r"of shape \(0,\)"):
        k_numba_spelling[1, 8, 0](np.zeros(8, np.int32), np.zeros(8, np.int32))


@gk.kernel
def k_racy(out: Array[float32]):
    s = dynamic_shared(float32)
    s[thread_idx.x] = 1.0
    out[thread_idx.x] = s[(thread_idx.x + 1) % len(s)]  # no barrier between


def test_races_on_dynamic_shared_memory_are_found(on_simulator):
    with pytest.raises(gk.DataRaceError):
        k_racy[1, 8, 32](np.zeros(8, np.float32))


def test_profile_counts_dynamic_like_static_shared_memory():
    @gk.kernel
    def k_static(a: Array[float32], out: Array[float32], n_out: Array[gk.int64]):
        s = shared(float32, 32)
        t = thread_idx.x
        i = block_idx.x * block_dim.x + t
        n = len(s)
        if t < n:
            s[t] = a[i]
        barrier()
        if t < n:
            out[i] = s[n - 1 - t]
        if i == 0:
            n_out[0] = n

    args = (np.arange(64, dtype=np.float32), np.zeros(64, np.float32), np.zeros(1, np.int64))
    dyn = gk.profile(k_reverse[2, 32, 128], *args).total
    static = gk.profile(k_static[2, 32], *args).total
    assert dyn.shared_load_elems == static.shared_load_elems == 64
    assert dyn.shared_store_elems == static.shared_store_elems == 64
    assert dyn.shared_load_wavefronts == static.shared_load_wavefronts
    assert gk.sanitize(k_reverse[2, 32, 128], *args) == []


@gk.kernel
def k_reread_through_another_view(a: Array[float32], out: Array[float32], SYNC: gk.Const[bool]):
    f = dynamic_shared(float32)
    u = dynamic_shared(u32)
    t = thread_idx.x
    f[t] = a[t]
    x = f[t]
    u[t] = u[t] ^ u32(0x80000000)  # flips the sign of f[t]: f[t] must be read again below
    if SYNC:
        barrier()
    out[t] = x - f[t]


def test_a_store_through_one_view_is_seen_by_the_next_read_of_another(backend):
    a = np.random.default_rng(9).standard_normal(32).astype(np.float32)
    out = np.zeros_like(a)
    k_reread_through_another_view[1, 32, 128](a, out, True)
    np.testing.assert_array_equal(out, a + a)


def test_a_store_through_one_view_ends_the_reuse_of_a_load_of_another():
    """gpukern reads a shared element once where nothing can change it in between (load_rewrites):
    a store through another dynamic_shared array can, so f[t] is read twice.  (Without a barrier
    between, C compilers may still assume that a float and a uint do not overlap: the docs say so.)"""
    f32 = np.zeros(1, np.float32)
    src = k_reread_through_another_view.source(f32, f32, False, backend="opencl")
    assert "float x = f[t];" in src and "out[t] = x - f[t];" in src


def test_autotune_chooses_among_shared_sizes(backend):
    x = np.random.default_rng(2).integers(-9, 9, 256).astype(np.float64)
    b = gk.get_backend()
    too_much = (b.max_shared_optin or b.max_shared) + 8
    configs = [{"bs": 32, "bytes": too_much}, {"bs": 64, "bytes": 512}, {"bs": 128, "bytes": 1024}]
    best = gk.autotune(
        k_block_sums,
        configs,
        args=lambda cfg: (x, np.zeros(256 // cfg["bs"])),
        launch=lambda cfg: (256 // cfg["bs"], cfg["bs"], cfg["bytes"]),
        key=f"test-{backend}-{np.random.default_rng().integers(1 << 30)}",
        repeat=1,
        warmup=0,
        verbose=False,
    )
    assert best in configs[1:]  # the launch that asks for more than the device has is skipped
