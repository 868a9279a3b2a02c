"""DRAM traffic: the profiler's count (``gk.profile``: each 32-byte sector of global memory read
once, written once) beside Nsight Compute's, for the row-wise normalisations and a copy.

    python benchmarks/dram_vs_ncu.py [--total 22] [--out DIR]     # on an NVIDIA GPU, with ncu

Each case runs once on the simulator under ``gk.profile`` (``dram_read_bytes``,
``dram_write_bytes``) and once on the CUDA backend under ``ncu --cache-control none``, between two
*flushes*: a kernel that reads a buffer three times the L2's size and writes nothing.  The flush
before (after the copies of the case's arrays to the device) leaves the L2 holding nothing of them
and writes back what the copies left dirty; the one after evicts the dirty lines the L2 still
held when the case ended.  So the case's DRAM reads are ncu's ``dram__bytes_read`` of its launch,
and its DRAM writes are ncu's ``dram__bytes_write`` of its launch plus that of the flush after
it -- the bytes the launch makes the device write, wherever the L2 happens to write them back.
Goal (issue 35): equal within 2 %.
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from typing import Any

import _common  # noqa: E402  (puts the checkout first on sys.path)
import numpy as np

import gpukern as gk  # noqa: E402
from gpukern import Array, float32, global_id, vload

GOAL = 0.02
METRICS = ["dram__bytes_read", "dram__bytes_write", "lts__t_sectors_srcunit_tex_op_write"]
FLUSH_FLOATS = 3 * (64 << 20) // 4  # three times an H200's L2 (60 MiB), rounded up


@gk.kernel
def flush(x: Array[float32], out: Array[float32]):
    """Reads x (4 floats a thread), writes nothing (no element is -1)."""
    i = global_id(0) * 4
    v = vload(x, i, 4)
    if v[0] + v[1] + v[2] + v[3] == -1.0:
        out[0] = v[0]


def cases(total: int) -> list[tuple[str, Any, Any, tuple[Any, ...]]]:
    """(label, kernel, (grid, block), NumPy arguments) of every case, the same data each time."""
    rw = _common.example("rowwise")
    out = []
    for dtype in ("float32", "bfloat16"):
        host = rw.host_dtype(dtype)
        for op in rw.OPS:
            for n in (4096, 65536):
                rng = np.random.default_rng(n)
                rows = (1 << total) // n
                kern, how = rw.make_rows(op, rw.TYPES[dtype], n)
                x = (rng.standard_normal((rows, n)) * 3).astype(host)
                w, b = rng.standard_normal(n).astype(host), rng.standard_normal(n).astype(host)
                dims = (rows // how.rows * how.cluster, how.threads * how.rows)
                out.append((f"{op} {dtype} n={n}", kern, dims, (x, np.zeros_like(x), w, b, 1e-5)))
    x = np.random.default_rng(0).standard_normal(((1 << total) // 1024, 1024)).astype(np.float32)
    out.append(("copy float32", rw.copy_rows, (x.shape[0], 256), (x, np.zeros_like(x))))
    return out


def worker(total: int) -> None:
    gk.set_backend("cuda")
    buf, sink = gk.to_device(np.ones(FLUSH_FLOATS, np.float32)), gk.empty(1, np.float32)
    flush[FLUSH_FLOATS // 1024, 256](buf, sink)
    for _, kern, (grid, block), args in cases(total):
        dev = [gk.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        flush[FLUSH_FLOATS // 1024, 256](buf, sink)  # (the copies' dirty lines written back here)
        kern[grid, block](*dev)
        flush[FLUSH_FLOATS // 1024, 256](buf, sink)
        gk.synchronize()


def ncu_rows(total: int) -> list[dict[str, float]]:
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "none", "--csv"]
    cmd += ["--metrics", ",".join(f"{m}.sum" for m in METRICS)]
    cmd += [sys.executable, __file__, "--worker", "--total", str(total)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if '"ID"' not in proc.stdout:
        sys.stderr.write(f"ncu failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}\n")
        raise SystemExit(2)
    rows: dict[int, dict[str, Any]] = {}
    for r in csv.DictReader(io.StringIO(proc.stdout[proc.stdout.index('"ID"') :])):
        row = rows.setdefault(int(r["ID"]), {"kernel": r["Kernel Name"]})
        row[r["Metric Name"].removesuffix(".sum")] = float(r["Metric Value"].replace(",", "") or "nan")
    return [rows[k] for k in sorted(rows)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total", type=int, default=22, help="log2 of the elements of a case's input (default 22)")
    p.add_argument("--out", type=_common.Path, default=_common.DEFAULT_OUT)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.total)
        return 0
    measured = ncu_rows(args.total)
    backend = _common.select_backend("cuda")
    results = []
    for k, (label, kern, (grid, block), host) in enumerate(cases(args.total)):
        prof = gk.profile(kern[grid, block], *host).total
        mine, after = measured[2 + 3 * k], measured[3 + 3 * k]
        assert after["kernel"] == "flush", after
        ncu_read = mine["dram__bytes_read"]
        ncu_write = mine["dram__bytes_write"] + after["dram__bytes_write"]
        r = {
            "case": label,
            "profile_read": prof.dram_read_bytes,
            "ncu_read": ncu_read,
            "profile_write": prof.dram_write_bytes,
            "ncu_write": ncu_write,
            "ncu_write_during_launch": mine["dram__bytes_write"],
            "l2_write_bytes": mine["lts__t_sectors_srcunit_tex_op_write"] * 32,
            "read_ratio": ncu_read / prof.dram_read_bytes,
            "write_ratio": ncu_write / prof.dram_write_bytes,
        }
        r["within_goal"] = abs(r["read_ratio"] - 1) <= GOAL and abs(r["write_ratio"] - 1) <= GOAL
        results.append(r)
        print(
            f"{label:28} read {prof.dram_read_bytes:>12,} B, ncu {ncu_read:>12,.0f} ({r['read_ratio']:.4f}); "
            f"written {prof.dram_write_bytes:>12,} B, ncu {ncu_write:>12,.0f} ({r['write_ratio']:.4f}; "
            f"{mine['dram__bytes_write']:,.0f} during the launch)",
            flush=True,
        )
    met = sum(r["within_goal"] for r in results)
    print(f"within {GOAL:.0%} of ncu's DRAM bytes, read and written: {met} of {len(results)} cases")
    plot = {
        "kind": "bars",
        "title": f"DRAM bytes, ncu / gk.profile ({1 << args.total:,} elements a case)",
        "xlabel": "case",
        "ylabel": "ncu / profile",
        "series": {
            "read": {"x": [r["case"] for r in results], "y": [r["read_ratio"] for r in results]},
            "written": {"x": [r["case"] for r in results], "y": [r["write_ratio"] for r in results]},
        },
    }
    _common.save("dram_vs_ncu", args.out, backend, vars(args), {"cases": results, "goal": GOAL}, plot)
    return 0 if met == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
