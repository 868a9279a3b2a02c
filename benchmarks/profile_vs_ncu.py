"""The simulator's memory-traffic counts beside Nsight Compute's, kernel by kernel.

Run on a machine with an NVIDIA GPU, nvcc and ncu:

    python benchmarks/profile_vs_ncu.py            # prints the side-by-side table

It profiles each kernel with ``gk.profile`` (the simulator), then runs the same launches on
the CUDA backend under ``ncu --clock-control none`` (this script again, as ``--worker``),
reading global load/store requests and sectors and shared-memory bank conflicts, and prints
both.  Exit status 1 if any count differs.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gpukern as gk  # noqa: E402
from gpukern import Array, Const, barrier, block_dim, block_idx, float32, global_id, int32, kernel, shared, thread_idx  # noqa: E402  # noqa: E402

METRICS = {
    "global_load_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global_store_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "global_store_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "shared_load_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_store_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
}


@kernel
def copy(x: Array[float32], y: Array[float32], n: int32):
    i = global_id(0)
    if i < n:
        y[i] = x[i]


@kernel
def strided_copy(x: Array[float32], y: Array[float32], n: int32, STRIDE: Const[int]):
    i = global_id(0)
    if i < n:
        y[i] = x[i * STRIDE]


@kernel
def transpose(x: Array[float32, 2], y: Array[float32, 2], T: Const[int], PAD: Const[int]):
    tile = shared(float32, (T, T + PAD))
    tx, ty = thread_idx.x, thread_idx.y
    r = block_idx.y * block_dim.y + ty
    c = block_idx.x * block_dim.x + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    barrier()
    r2 = block_idx.x * block_dim.x + ty
    c2 = block_idx.y * block_dim.y + tx
    if r2 < y.shape[0] and c2 < y.shape[1]:
        y[r2, c2] = tile[tx, ty]


def _example():
    spec = importlib.util.spec_from_file_location("matmul_tiled_example", ROOT / "examples" / "matmul_tiled.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases():
    """(label, launch, args) for every measured launch, in a fixed order."""
    mm = _example()
    rng = np.random.default_rng(0)
    out = []
    for n in (1000, 4096):
        x = rng.standard_normal(n * 8, dtype=np.float32)
        out.append((f"copy n={n}", copy[(n + 255) // 256, 256], (x[:n].copy(), np.zeros(n, np.float32), n)))
        out.append((f"strided x8 n={n}", strided_copy[(n + 255) // 256, 256], (x, np.zeros(n, np.float32), n, 8)))
    for n in (64, 70):
        x = rng.standard_normal((n, n), dtype=np.float32)
        b = (n + 31) // 32
        for pad in (0, 1):
            out.append(
                (f"transpose pad={pad} n={n}", transpose[(b, b), (32, 32)], (x, np.zeros((n, n), np.float32), 32, pad))
            )
    for n in (64, 100):
        a = rng.standard_normal(n * n, dtype=np.float32)
        bb = rng.standard_normal(n * n, dtype=np.float32)
        g = ((n + 15) // 16,) * 2
        out.append((f"matmul naive n={n}", mm.matmul_naive[g, (16, 16)], (a, bb, np.zeros(n * n, np.float32), n, n, n)))
        out.append(
            (f"matmul tiled16 n={n}", mm.matmul_tiled[g, (16, 16)], (a, bb, np.zeros(n * n, np.float32), n, n, n, 16))
        )
    return out


def worker() -> None:
    gk.set_backend("cuda")
    for _, launch, args in cases():
        launch(*args)
    gk.synchronize()


def ncu_counts(n_launches: int) -> list[dict[str, float]]:
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--csv",
        "--metrics",
        ",".join(METRICS.values()),
        sys.executable,
        __file__,
        "--worker",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
    if proc.returncode != 0:
        sys.exit(f"ncu failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    text = proc.stdout[proc.stdout.index('"ID"') :]
    rows: dict[int, dict[str, float]] = {}
    for r in csv.DictReader(io.StringIO(text)):
        value = float(r["Metric Value"].replace(",", "")) if r["Metric Value"] not in ("", "n/a") else float("nan")
        rows.setdefault(int(r["ID"]), {})[r["Metric Name"]] = value
    ordered = [rows[k] for k in sorted(rows)]
    if len(ordered) != n_launches:
        sys.exit(f"expected {n_launches} kernels under ncu, got {len(ordered)}")
    return [{ours: row.get(theirs, float("nan")) for ours, theirs in METRICS.items()} for row in ordered]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker()
        return 0
    measured = cases()
    sim = []
    for _, launch, a in measured:
        t = gk.profile(launch, *a).total
        sim.append({k: getattr(t, k) for k in METRICS})
    hw = ncu_counts(len(measured))
    short = {
        "global_load_requests": "ld req",
        "global_load_sectors": "ld sect",
        "global_store_requests": "st req",
        "global_store_sectors": "st sect",
        "shared_load_conflicts": "sh ld confl",
        "shared_store_conflicts": "sh st confl",
    }
    print(f"{'kernel':<24}" + "".join(f"{short[k]:>24}" for k in METRICS))
    bad = 0
    for (label, _, _), s, h in zip(measured, sim, hw):
        cells = []
        for k in METRICS:
            same = s[k] == h[k]
            bad += not same
            cells.append(f"{s[k]:>10,} / {h[k]:>10,.0f}{'' if same else ' *'}")
        print(f"{label:<24}" + "".join(f"{c:>24}" for c in cells))
    print("each cell: simulator / ncu; * marks a difference")
    print("all counts agree" if not bad else f"{bad} counts differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
