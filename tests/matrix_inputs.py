"""Matrix inputs of the matrix-unit tests (``test_tensor_cores``, ``test_wgmma``), and the values the
matrix units multiply: float16 and bfloat16 as they are, float32 rounded to TF32."""

from __future__ import annotations

import numpy as np

from gpukern import bfloat16
from gpukern.semantics import mma as mma_ops


def inputs(kind: str, m: int, n: int, kdim: int, seed: int = 0):
    """A, B as the kernel takes them, and the float64 values the fragments hold."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, kdim)), rng.standard_normal((kdim, n))
    if kind == "float16":
        a, b = a.astype(np.float16), b.astype(np.float16)
        return a, b, a.astype(np.float64), b.astype(np.float64)
    if kind == "bfloat16":
        a, b = bfloat16.bits(a.astype(np.float32)), bfloat16.bits(b.astype(np.float32))
        return a, b, bfloat16.floats(a).astype(np.float64), bfloat16.floats(b).astype(np.float64)
    a, b = a.astype(np.float32), b.astype(np.float32)
    return a, b, mma_ops.to_tf32(a).astype(np.float64), mma_ops.to_tf32(b).astype(np.float64)
