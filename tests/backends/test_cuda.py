"""The CUDA backend on a real GPU: foreign arrays without copies, launch checks, selection.

Marked ``gpu``: skipped cleanly where no CUDA device is present.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, float32, global_id, int32, kernel

pytestmark = pytest.mark.gpu


@kernel
def axpy(a: float32, x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@kernel
def fill_index(out: Array[int32], n: int32):
    i = global_id(0)
    if i < n:
        out[i] = i


@pytest.fixture
def cuda():
    gk.set_backend("cuda")
    try:
        yield gk.get_backend()
    finally:
        gk.set_backend(None)


def test_device_name_and_arch(cuda):
    assert cuda.arch.startswith("sm_")
    assert "CUDA" in cuda.device_name()


def test_cupy_arrays_are_used_in_place(cuda):
    cp = pytest.importorskip("cupy")
    n = 1000
    x = cp.asarray(np.random.default_rng(1).standard_normal(n, dtype=np.float32))
    y = cp.ones(n, dtype=cp.float32)
    ptr = y.data.ptr
    axpy[(n + 255) // 256, 256](np.float32(2.5), x, y, n)
    cp.cuda.runtime.deviceSynchronize()
    assert y.data.ptr == ptr  # no copy: the kernel wrote CuPy's own memory
    # nvcc contracts a * x + y into one fused multiply-add: round-off differs near zero
    np.testing.assert_allclose(cp.asnumpy(y), 2.5 * cp.asnumpy(x) + 1, rtol=1e-6, atol=1e-6)


def test_torch_tensors_are_used_in_place(cuda):
    torch = pytest.importorskip("torch")
    n = 777
    out = torch.zeros(n, dtype=torch.int32, device="cuda")
    fill_index[(n + 127) // 128, 128](out, n)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(n, dtype=torch.int32))


def test_pycuda_gpuarray(cuda):
    """A PyCUDA program (which makes its own context: here the primary one, as gpukern's) passes its
    GPUArrays in place."""
    gpuarray = pytest.importorskip("pycuda.gpuarray")
    pytest.importorskip("pycuda.autoprimaryctx")
    from gpukern.backends.cuda_compile import find_nvcc

    if find_nvcc() is None:  # PyCUDA compiles its own kernels (gpuarray.zeros's fill) with nvcc
        pytest.skip("PyCUDA needs nvcc for its own kernels; gpukern does not")
    n = 300
    out = gpuarray.zeros(n, np.int32)
    fill_index[2, 256](out, n)
    assert np.array_equal(out.get(), np.arange(n))


def test_foreign_array_dtype_mismatch_is_a_launch_error(cuda):
    cp = pytest.importorskip("cupy")
    x = cp.zeros(10, dtype=cp.float64)
    with pytest.raises(gk.LaunchError, match="float32"):
        axpy[1, 32](np.float32(1), x, x, 10)


def test_non_contiguous_foreign_arrays_are_staged_or_refused(cuda):
    """A strided CuPy array runs on a contiguous copy its library makes, written back; another
    library's strided array through ``__cuda_array_interface__`` alone is refused."""
    cp = pytest.importorskip("cupy")
    base = cp.full(20, -1, dtype=cp.int32)
    fill_index[1, 32](base[::2], 10)
    want = np.full(20, -1, np.int32)
    want[::2] = np.arange(10)
    np.testing.assert_array_equal(base.get(), want)

    class Interface:  # what Numba's or PyCUDA's strided device arrays present
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    with pytest.raises(gk.LaunchError, match="contiguous"):
        fill_index[1, 32](Interface(base[::2]), 10)


def test_numpy_inputs_copied_back_only_when_written(cuda):
    n = 100
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    x_before = x.copy()
    axpy[1, 128](np.float32(3), x, y, n)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_allclose(y, 3 * x_before + 1)
    assert "x" not in axpy.variants[next(iter(axpy.variants))].written


def test_block_beyond_device_limit(cuda):
    with pytest.raises(gk.LaunchError, match="threads"):
        fill_index[1, 2048](np.zeros(4, np.int32), 4)


def test_shared_memory_beyond_device_limit(cuda):
    @kernel
    def big_shared(out: Array[float32]):
        s = gk.shared(float32, 65536)  # 256 KiB: more than any block may have
        s[0] = 1.0
        out[0] = s[0]

    try:
        with pytest.raises(gk.LaunchError, match="shared memory"):
            big_shared[1, 1](np.zeros(1, np.float32))
    finally:
        big_shared.variants.clear()  # nvcc itself rejects it: keep it from the suite's CUDA check


def test_device_arrays_stay_on_the_device(cuda):
    n = 64
    d = gk.to_device(np.zeros(n, np.float32))
    x = gk.to_device(np.arange(n, dtype=np.float32))
    for _ in range(3):
        axpy[1, 64](np.float32(1), x, d, n)
    np.testing.assert_allclose(d.get(), 3 * np.arange(n))


def test_misaligned_foreign_array_for_vector_access_is_refused(cuda):
    cp = pytest.importorskip("cupy")
    from gpukern import vload, vstore

    @kernel
    def copy4(a: Array[float32], b: Array[float32]):
        i = global_id(0) * 4
        vstore(b, i, vload(a, i, 4))

    a = cp.arange(20, dtype=cp.float32)
    b = cp.zeros(16, dtype=cp.float32)
    copy4[1, 4](a[:16], b)  # aligned: runs
    assert cp.asnumpy(b).tolist() == list(range(16))
    with pytest.raises(gk.LaunchError, match="multiple of 16 bytes"):
        copy4[1, 4](a[1:17], b)  # starts 4 bytes in: a float4 load there would fault the context
