"""A batch of large matrix products spread over every GPU of a machine - or a cluster - by Dask.

gpukern does not schedule work over GPUs itself: Dask does (``distributed``), and each of its
workers owns one GPU and runs gpukern kernels on it.  A task is one independent job of the batch:

1. fill A and B (n x n, float32) on the worker's GPU from the job's seed with a hash kernel (no
   host-to-device copy of a gigabyte: the host can regenerate any element the same way);
2. multiply them ``reps`` times with the register-blocked SGEMM of ``matmul_fast.py``;
3. check the product: a few of its elements (gathered on the device), each against the dot
   product of its row of A and column of B regenerated on the host and summed in float64.

The tasks go to whichever worker is free, so N GPUs finish the batch about N times sooner.

One machine (one worker per GPU, each worker process seeing only its own GPU, as dask-cuda's
``LocalCUDACluster`` arranges it):

    python examples/multi_gpu_matmul.py --gpus 2 --size 8192 --jobs 16
    python examples/multi_gpu_matmul.py --compare          # 1 GPU, then all: the speedup

Several machines (the script unchanged; start one worker per GPU on every node):

    dask scheduler                                           # on one node: tcp://HOST:8786
    CUDA_VISIBLE_DEVICES=0 dask worker tcp://HOST:8786 --nworkers 1 --nthreads 1   # per GPU,
    CUDA_VISIBLE_DEVICES=1 dask worker tcp://HOST:8786 --nworkers 1 --nthreads 1   # per node
    python examples/multi_gpu_matmul.py --scheduler tcp://HOST:8786 --size 8192 --jobs 64

(gpukern must be installed on every node; this script ships itself and ``matmul_fast.py`` to
the workers with ``Client.upload_file``.)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pathlib
import sys
import time
from collections import Counter
from typing import Any

import numpy as np

import gpukern as gk
from gpukern import Array, float32, global_id, int32, kernel, uint32

HERE = pathlib.Path(__file__).resolve().parent


# ---------------------------------------------------------------- data made on the device


@kernel
def fill(a: Array[float32], seed: uint32):
    """a[i] = a value in [-0.5, 0.5) hashed from (seed, i): the same on the host (``host_values``)."""
    i = global_id(0)
    if i < a.shape[0]:
        x = uint32(i) * uint32(0x9E3779B1) + seed
        x ^= x >> 16
        x *= uint32(0x7FEB352D)
        x ^= x >> 15
        x *= uint32(0x846CA68B)
        x ^= x >> 16
        a[i] = float32(x >> 8) * float32(1.0 / 16777216.0) - float32(0.5)


def host_values(seed: int, index: np.ndarray) -> np.ndarray:
    """What ``fill`` writes at ``index`` (uint32 arithmetic wraps alike in NumPy and the kernel)."""
    x = index.astype(np.uint32) * np.uint32(0x9E3779B1) + np.uint32(seed)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return (x >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 16777216.0) - np.float32(0.5)


@kernel
def gather(c: Array[float32], where: Array[int32], out: Array[float32]):
    """out[j] = c[where[j]]: the elements the host checks, without copying all of c back."""
    j = global_id(0)
    if j < out.shape[0]:
        out[j] = c[where[j]]


# ---------------------------------------------------------------- one task, on a worker


def seeds_of(job: int) -> tuple[int, int]:
    return (2 * job + 1) * 7919 % 2**32, (2 * job + 2) * 7919 % 2**32


def run_job(job: int, n: int, reps: int, samples: int = 8) -> dict[str, Any]:
    """Job ``job`` of the batch on this worker's GPU; returns its check and timing."""
    import matmul_fast  # shipped to the worker with the script (Client.upload_file)

    t0 = time.perf_counter()
    sa, sb = seeds_of(job)
    a, b, c = (gk.empty(n * n, np.float32) for _ in range(3))
    threads = 256
    fill[(n * n + threads - 1) // threads, threads](a, np.uint32(sa))
    fill[(n * n + threads - 1) // threads, threads](b, np.uint32(sb))
    config = None if gk.get_backend().name == "cuda" else "64x64x8_8x4"  # None: autotuned for this GPU
    for _ in range(reps):
        matmul_fast.sgemm(a, b, c, n, n, n, config)
    rng = np.random.default_rng(job)
    rows, cols = rng.integers(0, n, samples), rng.integers(0, n, samples)
    got = gk.empty(samples, np.float32)
    gather[1, samples](c, gk.to_device((rows * n + cols).astype(np.int32)), got)
    got = got.get()
    k = np.arange(n)
    worst = 0.0
    for r, col, g in zip(rows, cols, got):
        arow = host_values(sa, r * n + k).astype(np.float64)
        bcol = host_values(sb, k * n + col).astype(np.float64)
        ref = float(arow @ bcol)
        worst = max(worst, abs(g - ref) / (np.sqrt(n) * 0.25))  # relative to the sum's typical size
    return {
        "job": job,
        "worker_gpu": os.environ.get("CUDA_VISIBLE_DEVICES", os.environ.get("GPUKERN_DEVICE", "?")),
        "device": gk.get_backend().device_name(),
        "max_error": worst,
        "seconds": time.perf_counter() - t0,
    }


# ---------------------------------------------------------------- the client


def local_cluster(gpus: int) -> Any:
    """One single-threaded worker process per GPU, each seeing only its own GPU."""
    from distributed import Nanny, Scheduler, SpecCluster

    workers = {
        f"gpu-{i}": {
            "cls": Nanny,
            "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i), "GPUKERN_DEVICE": "0"}},
        }
        for i in range(gpus)
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=logging.ERROR)


def gpu_count() -> int:
    """GPUs on this machine (CUDA: counted through the driver, no context opened here), else 1
    (OpenCL and the simulator run one worker)."""
    chosen, _ = gk.backends.chosen_backend()  # (set_backend's, else GPUKERN_BACKEND's)
    if (chosen or "cuda") != "cuda":
        return 1
    try:
        from gpukern.backends.cuda import CUDABackend

        return len(CUDABackend.device_names())
    except gk.GpukernError:
        return 1


def run_batch(client: Any, n: int, jobs: int, reps: int) -> dict[str, Any]:
    """Warm every worker (compile, autotune), then time the batch; every job's check must pass."""
    import multi_gpu_matmul as me  # by module name, so the workers import it instead of unpickling __main__

    workers = list(client.scheduler_info()["workers"])
    warm = [client.submit(me.run_job, 10**6 + i, n, 1, workers=[w], pure=False) for i, w in enumerate(workers)]
    client.gather(warm)
    t0 = time.perf_counter()
    results = client.gather(client.map(me.run_job, range(jobs), n=n, reps=reps, pure=False))
    wall = time.perf_counter() - t0
    worst = max(r["max_error"] for r in results)
    if not worst < 1e-3:
        raise SystemExit(f"WRONG result: a checked element is off by {worst:.2e} (relative)")
    flops = 2.0 * n**3 * reps * jobs
    return {
        "workers": len(workers),
        "n": n,
        "jobs": jobs,
        "reps": reps,
        "wall_s": wall,
        "tflops": flops / wall / 1e12,
        "max_error": worst,
        "jobs_per_worker": dict(Counter(r["worker_gpu"] for r in results)),
        "device": results[0]["device"],
    }


def with_client(address: str | None, gpus: int, fn: Any) -> Any:
    from distributed import Client

    if address:
        with Client(address) as client:
            return fn(client)
    with local_cluster(gpus) as cluster, Client(cluster) as client:
        return fn(client)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="n of each n x n x n product (default 4096; 256 without a CUDA GPU)")
    p.add_argument("--jobs", type=int, default=8, help="independent products in the batch (default 8)")
    p.add_argument("--reps", type=int, help="multiplications per job (default 4; 1 without a CUDA GPU)")
    p.add_argument("--gpus", type=int, help="workers of the local cluster (default: every GPU here)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler (a multi-node cluster)")
    p.add_argument("--compare", action="store_true", help="time 1 GPU, then all GPUs, and print the speedup")
    p.add_argument("--json", help="write the measurements to this file")
    args = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    if args.size is None or args.reps is None:  # a CPU (OpenCL, the simulator) gets a CPU-sized batch
        where = "cuda" if args.scheduler is not None else gk.get_backend().name
        cpu_n = 64 if where == "sim" else 256  # the simulator runs each thread in turn
        if where != "cuda":
            print(f"no CUDA GPU here: a CPU-sized batch, n = {cpu_n}, 1 product per job (--size, --reps to choose)")
        args.size = args.size if args.size is not None else 4096 if where == "cuda" else cpu_n
        args.reps = args.reps if args.reps is not None else 4 if where == "cuda" else 1

    def batch(client: Any) -> dict[str, Any]:
        client.upload_file(str(HERE / "matmul_fast.py"))
        client.upload_file(str(HERE / "multi_gpu_matmul.py"))
        return run_batch(client, args.size, args.jobs, args.reps)

    runs = []
    counts = [1, args.gpus or gpu_count()] if args.compare else [args.gpus or gpu_count()]
    for gpus in counts:
        r = with_client(args.scheduler, gpus, batch)
        runs.append(r)
        print(
            f"{r['workers']} worker(s) on {r['device']}: {r['jobs']} jobs of {r['reps']} x {r['n']}^3 in "
            f"{r['wall_s']:.2f} s = {r['tflops']:.2f} TFLOP/s (jobs per worker {r['jobs_per_worker']}); "
            f"max error {r['max_error']:.1e}  OK"
        )
    if args.compare and len(runs) == 2:
        print(f"speedup with {runs[1]['workers']} workers: {runs[1]['tflops'] / runs[0]['tflops']:.2f}x")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
