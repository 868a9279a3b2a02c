"""Reduction kernels ported from Numba-CUDA: numba/cuda/tests/doc_examples/test_reduction.py and the array
reductions of numba/cuda/tests/cudapy/test_array_reductions.py (NVIDIA/numba-cuda).

(Numba-CUDA's cudapy/test_reduction.py tests the host-side ``cuda.reduce`` helper, not a kernel.)
Spelling: ``cuda.shared.array(nelem, int32)`` -> ``shared(int32, nelem)``, ``cuda.syncthreads()`` -> ``barrier()``,
``cuda.grid(1)`` -> ``global_id(0)``, ``cuda.blockDim.x`` -> ``block_dim.x``.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import barrier, block_dim, global_id, int32, shared, thread_idx

nelem = 256  # 1024 in the source


# Source: doc_examples/test_reduction.py, test_ex_reduction (array_sum)
@gk.kernel
def array_sum(data):
    tid = thread_idx.x
    size = len(data)
    if tid < size:
        i = global_id(0)

        shr = shared(int32, nelem)
        shr[tid] = data[i]

        barrier()

        s = 1
        while s < block_dim.x:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            barrier()

        if tid == 0:
            data[tid] = shr[tid]


def test_ex_reduction(backend):
    a = np.arange(nelem, dtype=np.int64)
    expected = int(a.sum())
    array_sum[1, nelem](a)
    assert a[0] == expected


# The kernels of cudapy/test_array_reductions.py reduce arrays of the test's closure (constant tables in
# gpukern) with NumPy functions, iterating over a tuple of them with `literal_unroll`; here one array each.
SUM_CASE = np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5])
ALL_CASE = np.float64([[1.0, 1.5], [1.5, 1.0]])


# Source: cudapy/test_array_reductions.py, test_sum_basic (kernel: out[i] = np.sum(arr))
@gk.kernel
def array_np_sum(out):
    out[0] = np.sum(SUM_CASE)


# Source: cudapy/test_array_reductions.py, test_max_basic (kernel: out[i] = np.max(arr))
@gk.kernel
def array_np_max(out):
    out[0] = np.max(SUM_CASE)


# Source: cudapy/test_array_reductions.py, test_all_basic (kernel: out[i] = np.all(case))
@gk.kernel
def array_np_all(out):
    out[0] = np.all(ALL_CASE)


@pytest.mark.parametrize(
    "kernel, ref",
    [(array_np_sum, np.sum(SUM_CASE)), (array_np_max, np.max(SUM_CASE)), (array_np_all, np.all(ALL_CASE))],
)
def test_array_reductions(backend, kernel, ref):
    out = np.zeros(1, np.float64)
    kernel[1, 1](out)
    assert out[0] == ref
