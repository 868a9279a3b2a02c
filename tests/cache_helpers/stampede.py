"""Subprocess for tests/runtime/test_cache.py: rounds of processes that build one kernel at the same moment.

    python stampede.py opencl|cubin PROCESSES ROUNDS WORKDIR

Every round starts cold: a fresh GPUKERN_CACHE_DIR and, for OpenCL, a fresh POCL_CACHE_DIR that
the round's processes share (as one user's processes do).  The processes are forked from this one
after gpukern, NumPy and PyOpenCL are imported but before any OpenCL platform is opened, so a
round costs its builds rather than its imports.  Each process opens its own context (opencl) or
generates the source (cubin), says it is ready, waits for all the others, then builds and checks
its result.  It counts its own compiles (OpenCL builds from source, nvcc runs) by wrapping the
backend's compile function, independently of the cache's counters.

Prints one JSON line per round: each process's exit status and report, the names left in the
cache directory, and the round's wall time.  Needs OPENBLAS_NUM_THREADS=1 (no thread may exist
when it forks).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
import traceback
import warnings

import numpy as np

import gpukern as gk
from gpukern import Array, Const, int32
from gpukern.backends import cuda_compile as cuda_mod
from gpukern.backends import get_backend
from gpukern.backends.opencl import OpenCLBackend
from gpukern.runtime import cache
from gpukern.runtime.cache import CacheWarning

N = 64
K = 5
TIMEOUT = 120.0
compiles = 0


@gk.kernel
def tiny(out: Array[int32], K: Const[int]):
    out[gk.global_id(0)] = K


def counting(original):
    def wrapper(*args, **kwargs):
        global compiles
        compiles += 1
        return original(*args, **kwargs)

    return wrapper


def child(mode: str, cache_dir: str, pocl_dir: str, ready_w: int, go_r: int, report_path: str) -> int:
    report: dict = {"pid": os.getpid()}
    try:
        os.environ["GPUKERN_CACHE_DIR"] = cache_dir
        os.environ["POCL_CACHE_DIR"] = pocl_dir
        cache.reset_cache()
        if mode == "opencl":
            gk.set_backend("opencl")
            get_backend("opencl")  # opens the platform now, reading POCL_CACHE_DIR
        else:
            src = tiny.source(Array[int32], K, backend="cuda")
        os.write(ready_w, b"r")
        if os.read(go_r, 1) != b"g":
            raise RuntimeError("no go")
        went = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if mode == "opencl":
                out = np.zeros(N, np.int32)
                tiny[1, N](out, K)
                report["correct"] = bool((out == K).all())
            else:
                report["correct"] = cuda_mod.cubin(src, "sm_80", compiler="nvcc")[:4] == b"\x7fELF"
        report["cache_warnings"] = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
        report["cache"] = cache.cache_info()
        report["compiles"] = compiles
        report["seconds"] = time.monotonic() - went
        code = 0
    except BaseException:
        report["error"] = traceback.format_exc()
        code = 1
    with open(report_path, "w") as f:
        json.dump(report, f)
    return code


def one_round(mode: str, processes: int, workdir: str) -> dict:
    cache_dir, pocl_dir = os.path.join(workdir, "cache"), os.path.join(workdir, "pocl")
    os.makedirs(pocl_dir)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    reports = [os.path.join(workdir, f"report-{i}.json") for i in range(processes)]
    start = time.monotonic()
    pids = []
    for path in reports:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(ready_r)
                os.close(go_w)
                code = child(mode, cache_dir, pocl_dir, ready_w, go_r, path)
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(ready_w)
    os.close(go_r)
    ready = 0
    while ready < processes:  # all contexts open (or a process died: then EOF)
        if not select.select([ready_r], [], [], TIMEOUT)[0]:
            break
        got = os.read(ready_r, processes)
        if not got:
            break
        ready += len(got)
    opened = time.monotonic() - start
    os.write(go_w, b"g" * processes)  # all build at once
    os.close(go_w)
    os.close(ready_r)
    statuses = []
    deadline = time.monotonic() + TIMEOUT
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                done, status = os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        statuses.append(f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    results = []
    for path in reports:
        try:
            with open(path) as f:
                results.append(json.load(f))
        except (OSError, ValueError):
            results.append(None)
    names = sorted(os.listdir(cache_dir)) if os.path.isdir(cache_dir) else []
    return {
        "statuses": statuses,
        "reports": results,
        "ready": ready,
        "opened_seconds": opened,
        "names": names,
        "seconds": time.monotonic() - start,
    }


def main() -> None:
    mode, processes, rounds, workdir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if mode not in ("opencl", "cubin"):
        sys.exit(f"stampede: unknown mode {mode!r}")
    if os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) != 1:
        sys.exit("stampede: threads exist before the fork (set OPENBLAS_NUM_THREADS=1)")
    OpenCLBackend._build_binary = counting(OpenCLBackend._build_binary)
    cuda_mod.nvcc_compile = counting(cuda_mod.nvcc_compile)
    for r in range(rounds):
        result = one_round(mode, processes, os.path.join(workdir, f"round-{r}"))
        print(json.dumps({"round": r, **result}), flush=True)


if __name__ == "__main__":
    main()
