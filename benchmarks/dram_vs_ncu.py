"""DRAM traffic: the profiler's count (``gk.profile``: each 32-byte sector of global memory read
once, written once) beside Nsight Compute's, for the row-wise normalisations and a copy.

    python benchmarks/dram_vs_ncu.py [--total 26] [--out DIR]     # on an NVIDIA GPU, with ncu
    python benchmarks/dram_vs_ncu.py --total 26 --profile-only P.json  # anywhere: the profiler's side
    python benchmarks/dram_vs_ncu.py --total 26 --profiles P.json      # ncu's side, beside those counts

Each case runs once on the simulator under ``gk.profile`` (``dram_read_bytes``,
``dram_write_bytes``) and once on the CUDA backend under ``ncu --cache-control none``, between two
*flushes*: a kernel that reads a buffer three times the L2's size and writes nothing.  The flush
before (after the copies of the case's arrays to the device) leaves the L2 holding nothing of them
and writes back what the copies left dirty; the one after evicts the dirty lines the L2 still
held when the case ended.  So the case's DRAM reads are ncu's ``dram__bytes_read`` of its launch,
and its DRAM writes are ncu's ``dram__bytes_write`` of its launch plus that of the flush after
it -- the bytes the launch makes the device write, wherever the L2 happens to write them back.
A *baseline* case (a flush right after a flush, with nothing dirty) measures what the flush itself
writes; its bytes are subtracted from each case's.  Goal (issue 35): equal within 2 %.

The kernels are the gallery's (``examples/rowwise.py``) with the plans an sm_90 device gets, launched
as ``rowwise.run`` does (a pipelined plan with a fixed ``CLUSTERS`` clusters on both sides).  The
simulator's profile of a large case takes minutes; ``--profile-only`` writes those counts (the inputs
come from fixed seeds) so a GPU run can read them with ``--profiles`` instead of simulating again.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
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
CLUSTERS = 32  # a pipelined plan's persistent clusters (any count gives the same DRAM bytes)


@gk.kernel
def flush(x: Array[float32], out: Array[float32]):
    """Reads x (4 floats a thread), writes nothing (no element is -1)."""
    i = global_id(0) * 4
    v = vload(x, i, 4)
    if v[0] + v[1] + v[2] + v[3] == -1.0:
        out[0] = v[0]


def cases(total: int) -> list[tuple[str, Any, tuple[int, int, int], tuple[Any, ...]]]:
    """(label, kernel, (grid, block, shared bytes), NumPy arguments) of every case, the same data each
    time.  The plans are an sm_90 device's (``rowwise.plan(..., hopper=True)``)."""
    rw = _common.example("rowwise")
    out = []
    for dtype in ("float32", "bfloat16"):
        host = rw.host_dtype(dtype)
        for op in rw.OPS:
            for n in (4096, 65536):
                rng = np.random.default_rng(n)
                rows = (1 << total) // n
                how = rw.plan(n, np.dtype(host).itemsize, op, hopper=True)
                kern, how = rw.make_rows(op, rw.TYPES[dtype], n, how)
                x = (rng.standard_normal((rows, n)) * 3).astype(host)
                w, b = rng.standard_normal(n).astype(host), rng.standard_normal(n).astype(host)
                groups = min(rows, CLUSTERS) if how.pipelined else rows // how.rows
                dims = (groups * how.cluster, how.threads * how.rows, kern.shared_bytes)
                out.append((f"{op} {dtype} n={n}", kern, dims, (x, np.zeros_like(x), w, b, 1e-5)))
    x = np.random.default_rng(0).standard_normal(((1 << total) // 1024, 1024)).astype(np.float32)
    out.append(("copy float32", rw.copy_rows, (x.shape[0], 256, 0), (x, np.zeros_like(x))))
    return out


def worker(total: int) -> None:
    gk.set_backend("cuda")
    buf, sink = gk.to_device(np.ones(FLUSH_FLOATS, np.float32)), gk.empty(1, np.float32)
    flush[FLUSH_FLOATS // 1024, 256](buf, sink)
    flush[FLUSH_FLOATS // 1024, 256](buf, sink)  # the baseline: what a flush writes with nothing dirty
    for _, kern, (grid, block, shared), args in cases(total):
        dev = [gk.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        flush[FLUSH_FLOATS // 1024, 256](buf, sink)  # (the copies' dirty lines written back here)
        kern[grid, block, shared](*dev)
        flush[FLUSH_FLOATS // 1024, 256](buf, sink)
        gk.synchronize()
        del dev


def profiles(total: int) -> dict[str, tuple[int, int]]:
    """The profiler's (DRAM bytes read, written) of every case, on the simulator."""
    gk.set_backend("sim")
    out = {}
    for label, kern, (grid, block, shared), host in cases(total):
        prof = gk.profile(kern[grid, block, shared], *host).total
        out[label] = (prof.dram_read_bytes, prof.dram_write_bytes)
        print(f"profiled {label}: {out[label]}", flush=True)
    return out


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
    p.add_argument("--total", type=int, default=26, help="log2 of the elements of a case's input (default 26)")
    p.add_argument("--out", type=_common.Path, default=_common.DEFAULT_OUT)
    p.add_argument("--profile-only", type=_common.Path, help="write the profiler's counts to this JSON file, and stop")
    p.add_argument("--profiles", type=_common.Path, help="the profiler's counts from --profile-only at this --total")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.total)
        return 0
    if args.profile_only:
        args.profile_only.write_text(json.dumps({"total": args.total, "cases": profiles(args.total)}, indent=1))
        return 0
    if args.profiles:
        saved = json.loads(args.profiles.read_text())
        if saved["total"] != args.total:
            raise SystemExit(f"{args.profiles} holds counts for --total {saved['total']}, not {args.total}")
        counted = {k: tuple(v) for k, v in saved["cases"].items()}
    measured = ncu_rows(args.total)
    if not args.profiles:
        counted = profiles(args.total)
    backend = _common.select_backend("cuda")
    base = measured[1]
    assert base["kernel"] == "flush", base
    results = []
    for k, (label, *_rest) in enumerate(cases(args.total)):
        (p_read, p_write), mine, after = counted[label], measured[3 + 3 * k], measured[4 + 3 * k]
        assert after["kernel"] == "flush", after
        ncu_read = mine["dram__bytes_read"]
        ncu_write = mine["dram__bytes_write"] + after["dram__bytes_write"] - base["dram__bytes_write"]
        r = {
            "case": label,
            "profile_read": p_read,
            "ncu_read": ncu_read,
            "profile_write": p_write,
            "ncu_write": ncu_write,
            "ncu_write_during_launch": mine["dram__bytes_write"],
            "flush_baseline_write": base["dram__bytes_write"],
            "l2_write_bytes": mine["lts__t_sectors_srcunit_tex_op_write"] * 32,
            "read_ratio": ncu_read / p_read,
            "write_ratio": ncu_write / p_write,
        }
        r["within_goal"] = abs(r["read_ratio"] - 1) <= GOAL and abs(r["write_ratio"] - 1) <= GOAL
        results.append(r)
        print(
            f"{label:28} read {p_read:>13,} B, ncu {ncu_read:>13,.0f} ({r['read_ratio']:.4f}); "
            f"written {p_write:>13,} B, ncu {ncu_write:>13,.0f} ({r['write_ratio']:.4f}; "
            f"{mine['dram__bytes_write']:,.0f} during the launch; L2 stores {r['l2_write_bytes']:,.0f})",
            flush=True,
        )
    print(f"the flush alone wrote {base['dram__bytes_write']:,.0f} B (subtracted from each case's)")
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
