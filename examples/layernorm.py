"""LayerNorm over the rows of a matrix at the memory's speed: FP32 or BF16 in and out, rows of 1,024 to
262,144 elements, each row read once from global memory and written once.

The kernel is ``examples/rowwise.py``'s (one definition for the three row-wise ops): a row held in
registers (a warp a row up to 2,048 elements, a block up to 16,384), a longer row on a thread-block
cluster whose blocks' statistics meet through distributed shared memory.  This program runs it and
prints the bandwidth it reached and its fraction of a device copy of the same bytes, timed in the
same run; the result is checked against float64 NumPy.

    python examples/layernorm.py                          # rows of 8,192 float32, best backend
    python examples/layernorm.py --size 262144 --dtype bfloat16
    python examples/layernorm.py --small --backend sim    # a warp's rows and a cluster's, in seconds
    python examples/layernorm.py --show-source
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (examples/ is no package)
import rowwise  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return rowwise.main(argv, op="layernorm")


if __name__ == "__main__":
    raise SystemExit(main())
