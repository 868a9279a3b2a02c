"""The tensor-core GEMM of ``examples/matmul_tensorcore.py`` against cuBLAS, side by side.

    python benchmarks/tensorcore.py [--sizes 1024 2048 4096 8192] [--reps 10] [--out DIR]

For each n: A and B are n x n float16 (random, uniform in [-1, 1)), on CuPy arrays so that
cuBLAS (``cupy.matmul`` on float16: FP16 inputs, FP32 accumulation, FP16 output) and gpukern's
``hgemm`` (FP16 inputs, FP32 accumulation, FP32 output) read the same memory; both on CuPy's
stream, timed with CuPy events after 3 warm-up runs, one after the other in each of ``--reps``
repetitions (cuBLAS's speed drifts with the GPU's clocks): the ratio is the median of the
repetitions' ratios, the TFLOP/s are medians.  Checked in the same
run: 64 random rows of gpukern's C against a float64 product of the same rows on the host, within
``gpukern.semantics.mma.tolerance``, and cuBLAS's against the same reference within float16's rounding.
With ``--tf32``: float32 A and B, gpukern's ``tgemm_pipelined`` (TF32 fragments) against cuBLAS's
float32 GEMM with TF32 on (``CUPY_TF32=1``), checked within TF32's rounding.
Goal (issue 17): gpukern / cuBLAS >= 0.5 at 4096 and 8192 (aim 0.7), FP16 and TF32 alike.

``--configs KS:STAGES:GROUP ...`` times, beside the example's kernel, kernels of its
``make_pipelined`` with other k steps, numbers of stages and tile groups (each checked the same
way), so that the choice the example makes is measured, not guessed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import _common
import numpy as np

import gpukern as gk
from gpukern.semantics import mma as mma_ops

GOAL = 0.5


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument(
        "--tf32", action="store_true", help="float32 inputs in TF32 (tgemm_pipelined) against cuBLAS with TF32 on"
    )
    p.add_argument(
        "--configs",
        nargs="*",
        default=[],
        help="other kernels to time: KS:STAGES:GROUP (pipelined), wg:STAGES:GROUP (warpgroup), 'pipelined'",
    )
    p.add_argument("--out", type=_common.Path, default=_common.DEFAULT_OUT)
    args = p.parse_args(argv)
    if args.tf32:  # CuPy reads it when it loads: cuBLAS's float32 GEMMs then use TF32 tensor cores
        os.environ["CUPY_TF32"] = "1"
    import cupy as cp

    backend = _common.select_backend("cuda")
    tc = _common.example("matmul_tensorcore")
    rng = np.random.default_rng(0)
    rows, ok = [], True
    runs = {"example": tc.matmul_tf32 if args.tf32 else tc.matmul}
    T = gk.float32 if args.tf32 else gk.float16
    for cfg in args.configs:
        if cfg == "pipelined":  # the sm_80 kernel (mma.sync), beside the example's choice
            kern = tc.tgemm_pipelined if args.tf32 else tc.hgemm_pipelined
            runs[cfg] = lambda da, db, dc, m, n, k, kern=kern: tc.run_pipelined(kern, da, db, dc, m, n, k)
        elif cfg.startswith("wg:"):  # a warpgroup kernel: wg:STAGES:GROUP
            stages, group = map(int, cfg.split(":")[1:])
            kern = tc.make_warpgroup(T, stages, group)
            runs[cfg] = lambda da, db, dc, m, n, k, kern=kern: tc.run_warpgroup(kern, da, db, dc, m, n, k)
        else:
            ks, stages, group = map(int, cfg.split(":"))
            kern = tc.make_pipelined(T, 8 if args.tf32 else 16, ks, stages, group)
            runs[cfg] = lambda da, db, dc, m, n, k, kern=kern: tc.run_pipelined(kern, da, db, dc, m, n, k)
    for n in args.sizes:
        dtype = np.float32 if args.tf32 else np.float16
        a = rng.uniform(-1, 1, (n, n)).astype(dtype)
        b = rng.uniform(-1, 1, (n, n)).astype(dtype)
        da, db = cp.asarray(a), cp.asarray(b)
        dc = cp.zeros((n, n), cp.float32)
        pick = rng.choice(n, 64, replace=False)
        ref = a[pick].astype(np.float64) @ b.astype(np.float64)
        if args.tf32:  # against the float32 inputs: TF32 keeps 10 of their 23 mantissa bits
            tol = 2.0**-10 * (np.abs(a[pick]).astype(np.float64) @ np.abs(b).astype(np.float64))
        else:
            tol = mma_ops.tolerance(np.abs(a[pick]), np.abs(b), 16)
        cub = cp.matmul(da, db).get()[pick].astype(np.float64)
        cub_good = bool((np.abs(cub - ref) <= tol + 2.0**-10 * np.abs(ref)).all())
        ok &= cub_good
        flops = 2.0 * n**3
        for name, run in runs.items():
            dc.fill(np.nan)
            gk_run = lambda da=da, db=db, dc=dc, n=n, run=run: run(da, db, dc, n, n, n)  # noqa: E731
            t_gks, t_cubs = _common.paired([gk_run, lambda da=da, db=db: cp.matmul(da, db)], args.reps)
            t_gk, t_cublas = statistics.median(t_gks), statistics.median(t_cubs)
            got = dc.get()[pick].astype(np.float64)
            good = bool((np.abs(got - ref) <= tol).all())
            ok &= good
            rows.append(
                {
                    "n": n,
                    "kernel": name,
                    "gpukern_ms": t_gk * 1e3,
                    "cublas_ms": t_cublas * 1e3,
                    "gpukern_tflops": flops / t_gk / 1e12,
                    "cublas_tflops": flops / t_cublas / 1e12,
                    "ratio": statistics.median(c / g for c, g in zip(t_cubs, t_gks)),
                    "ratio_of_medians": t_cublas / t_gk,
                    "checked": good,
                    "cublas_checked": cub_good,
                }
            )
            r = rows[-1]
            print(
                f"n={n} {name}: gpukern {r['gpukern_tflops']:.1f} TFLOP/s, cuBLAS {r['cublas_tflops']:.1f}, "
                f"ratio {r['ratio']:.3f} ({'OK' if good else 'WRONG'}; cuBLAS {'OK' if cub_good else 'WRONG'})"
            )
    goals = {str(r["n"]): r["ratio"] >= GOAL for r in rows if r["n"] in (4096, 8192) and r["kernel"] == "example"}
    print(f"goal gpukern / cuBLAS >= {GOAL} at 4096 and 8192: {goals}")
    plot = {
        "kind": "lines",
        "title": ("TF32" if args.tf32 else "FP16") + " GEMM, FP32 accumulate: gpukern tensor cores against cuBLAS",
        "xlabel": "n (n x n x n)",
        "ylabel": "TFLOP/s",
        "log_x": True,
        "series": {
            **{
                f"gpukern {name}": {
                    "x": [r["n"] for r in rows if r["kernel"] == name],
                    "y": [r["gpukern_tflops"] for r in rows if r["kernel"] == name],
                }
                for name in dict.fromkeys(r["kernel"] for r in rows)
            },
            "cuBLAS (cupy.matmul)": {
                "x": [r["n"] for r in rows if r["kernel"] == "example"],
                "y": [r["cublas_tflops"] for r in rows if r["kernel"] == "example"],
            },
        },
    }
    _common.save(
        "tensorcore-tf32" if args.tf32 else "tensorcore",
        args.out,
        backend,
        vars(args),
        {"rows": rows, "goal": GOAL, "met": goals},
        plot,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
