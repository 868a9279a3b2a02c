"""RMSNorm over a matrix's rows at the memory's speed, FP32 or BF16: ``examples/rowwise.py``'s kernel and
command line with the op chosen (``--size``, ``--dtype``, ``--small``, ``--backend``, ``--show-source``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (examples/ is no package)
import rowwise  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return rowwise.main(argv, op="rmsnorm")


if __name__ == "__main__":
    raise SystemExit(main())
