"""Subprocess for tests/runtime/test_cache.py: compile one kernel through the process cache, print a JSON report.

    python worker.py opencl|cubin [GO_FILE READY_FILE]

With GO_FILE and READY_FILE it creates READY_FILE, then waits for GO_FILE to appear before
compiling, so that several workers start at the same moment.  The cache directory comes from
GPUKERN_CACHE_DIR, as in any process.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

import gpukern as gk
from gpukern import Array, Const, float32, int32
from gpukern.runtime.cache import CacheWarning


@gk.kernel
def worker_scale(a: Array[float32], out: Array[float32], n: int32, K: Const[int]):
    i = gk.global_id(0)
    if i < n:
        out[i] = a[i] * K + 1.0


def wait_for_go(go: str, ready: str) -> None:
    with open(ready, "w"):
        pass
    deadline = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            sys.exit("worker: the go file never appeared")
        time.sleep(0.005)


def main() -> None:
    mode = sys.argv[1]
    if len(sys.argv) > 3:
        wait_for_go(sys.argv[2], sys.argv[3])
    report: dict = {"mode": mode, "pid": os.getpid()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(mode, report)
    report["cache_warnings"] = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    report["cache"] = gk.cache_info()
    print(json.dumps(report))


def run(mode: str, report: dict) -> None:
    if mode == "opencl":
        gk.set_backend("opencl")
        n = 1000
        a = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        worker_scale[(n + 63) // 64, 64](a, out, n, 3)
        report["correct"] = bool(np.array_equal(out, a * 3 + 1))
    elif mode == "cubin":
        from gpukern.backends.cuda_compile import cubin

        src = worker_scale.source(Array[float32], Array[float32], int32, 3, backend="cuda")
        binary = cubin(src, "sm_80", compiler="nvcc")
        report["correct"] = binary[:4] == b"\x7fELF"
        report["size"] = len(binary)
    else:
        sys.exit(f"worker: unknown mode {mode!r}")


if __name__ == "__main__":
    main()
