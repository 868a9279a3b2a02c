"""Line information on a GPU: a kernel whose out-of-bounds write compute-sanitizer reports at its
Python line, and a kernel whose Nsight Compute source view is the Python file.

    compute-sanitizer python scripts/line_info_demo.py oob      # "... at saxpy_oob+0x.. in .../line_info_demo.py:NN"
    ncu --import-source yes -o OUT/demo python scripts/line_info_demo.py
"""

from __future__ import annotations

import sys

import numpy as np

import gpukern as gk
from gpukern import Array, float32, int32


@gk.kernel
def saxpy_oob(a: float32, x: Array[float32], y: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:  # the bug is the caller's: n is twice the arrays' length
        y[i] = a * x[i] + y[i]


@gk.kernel(fastmath=True)
def smooth(x: Array[float32], y: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        left = x[max(i - 1, 0)]
        right = x[min(i + 1, n - 1)]
        y[i] = 0.25 * left + 0.5 * x[i] + 0.25 * right


def main() -> None:
    gk.set_backend("cuda")
    n = 1 << 20
    x = gk.to_device(np.random.rand(n).astype(np.float32))
    y = gk.zeros(n, np.float32)
    if sys.argv[1:] == ["oob"]:
        # (an index just past the end can land in another allocation, which memcheck cannot tell
        # from a right one: this writes a whole array's length past y's end)
        saxpy_oob[(2 * n + 255) // 256, 256](np.float32(2.0), x, y, 2 * n)
    else:
        smooth[(n + 255) // 256, 256](x, y, n)
    gk.synchronize()
    print(saxpy_oob.source(float32, Array[float32], Array[float32], int32, line_directives=True))


if __name__ == "__main__":
    main()
