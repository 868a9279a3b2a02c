"""Row-wise softmax, LayerNorm and RMSNorm (``examples/rowwise.py``) against the device's copy
bandwidth and PyTorch, on FP32 or BF16 rows of 1,024 to 262,144 elements.

    python benchmarks/norms.py [--dtype float32|bfloat16] [--total 28] [--cols 1024 ... 262144] [--reps 10] [--out DIR]

For each row length n: a tensor of 2**total elements (rows = 2**total / n), random normal times 3,
as a PyTorch tensor gpukern reads in place.  In each of ``--reps`` repetitions, one after the other
on the same stream with CUDA events (after 3 warm-up rounds): a device-to-device copy of the tensor
(``y.copy_(x)``), gpukern's kernel, and PyTorch's (``torch.softmax``, ``layer_norm``, ``rms_norm``).
Bandwidth is the bytes read and written (2 x the tensor) over the median time; the fraction is
gpukern's over the copy's, the ratio the median of the repetitions' torch / gpukern times.
Checked in the same run: gpukern's output against PyTorch's on the device (within float32's
rounding over a row, or bfloat16's of the result) and 16 rows against a float64 NumPy reference.
BF16 rows are in and out BF16 (PyTorch's ops on BF16 tensors), the math float32's.  Goal (issue 35): >= 0.9 of the
copy's bandwidth at every row length.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import _common
import numpy as np

GOAL = 0.9
COLS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total", type=int, default=28, help="log2 of the elements of a tensor (default 28)")
    p.add_argument("--cols", type=int, nargs="+", default=COLS)
    p.add_argument("--ops", nargs="+", default=["softmax", "layernorm", "rmsnorm"])
    p.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    p.add_argument("--exact", action="store_true", help="compile without fastmath (IEEE exp, division, sqrt)")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--sweep", action="store_true", help="time other ways of spreading the rows too (a plan each)")
    p.add_argument("--staged", action="store_true", help="time plans holding the row in shared memory too")
    p.add_argument(
        "--pipelined",
        type=int,
        nargs="*",
        help="time persistent plans (later rows landing while this one works), with these buffers (default 1)",
    )
    p.add_argument("--out", type=_common.Path, default=_common.DEFAULT_OUT)
    args = p.parse_args(argv)
    import torch
    import torch.nn.functional as F


    backend = _common.select_backend("cuda")
    rw = _common.example("rowwise")
    torch_ops = {
        "softmax": lambda x, w, b: torch.softmax(x, dim=1),
        "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[1],), w, b, 1e-5),
        "rmsnorm": lambda x, w, b: F.rms_norm(x, (x.shape[1],), w, 1e-5),
    }
    rng = np.random.default_rng(0)
    rows_out: list[dict] = []
    for n in args.cols:
        rows_out += _one_length(n, 1 << args.total, args, rw, torch_ops, rng, backend)
        torch.cuda.empty_cache()
    ok = all(r["checked"] for r in rows_out)
    goals = {f"{r['op']} {r['n']}": r["fraction_of_copy"] >= GOAL for r in rows_out}
    print(f"goal >= {GOAL} of the copy's bandwidth: {sum(goals.values())} of {len(goals)} met")
    series = {}
    for op in args.ops:
        pts = [r for r in rows_out if r["op"] == op]
        series[f"gpukern {op}"] = {"x": [r["n"] for r in pts], "y": [r["gpukern_tbs"] for r in pts]}
        series[f"torch {op}"] = {"x": [r["n"] for r in pts], "y": [r["torch_tbs"] for r in pts]}
    pts = [r for r in rows_out if r["op"] == args.ops[0]]
    series["device-to-device copy"] = {"x": [r["n"] for r in pts], "y": [r["copy_tbs"] for r in pts]}
    plot = {
        "kind": "lines",
        "title": f"Row-wise normalisations, {args.dtype} (bytes read + written / time)",
        "xlabel": "row length (elements)",
        "ylabel": "TB/s",
        "log_x": True,
        "series": series,
    }
    name = "norms" if args.dtype == "float32" else "norms_bf16"
    _common.save(name, args.out, backend, vars(args), {"rows": rows_out, "goals": goals}, plot)
    return 0 if ok else 1


def _one_length(
    n: int, total: int, args: argparse.Namespace, rw: Any, torch_ops: dict, rng: Any, backend: Any
) -> list[dict]:
    """Every op on rows of ``n`` elements (``total`` elements in all), timed beside the copy and torch."""
    import torch

    rows = total // n
    tdtype = torch.float32 if args.dtype == "float32" else torch.bfloat16
    T = rw.TYPES[args.dtype]
    x = (torch.randn((rows, n), device="cuda") * 3).to(tdtype)
    y = torch.empty_like(x)
    copy_out = torch.empty_like(x)
    w = torch.randn(n, device="cuda").to(tdtype)
    b = torch.randn(n, device="cuda").to(tdtype)
    pick = rng.choice(rows, min(rows, 16), replace=False)

    def host(t: Any) -> np.ndarray:  # float64 NumPy of a float32 or bfloat16 tensor (its exact values)
        return t.float().cpu().numpy().astype(np.float64)

    x_host = host(x[pick])
    nbytes = 2 * x.numel() * x.element_size()
    out = []
    plans: list = []  # (beside each op's own plan: rw.plan)
    item = 4 if args.dtype == "float32" else 2
    if args.sweep and n <= 2048:  # a warp a row: 4 or 8 rows a block; or a block of 64 to 256 threads a row
        plans += [rw.Plan(32, rows, 1, n // 32, m) for rows in (4, 8) for m in (1, 2, 4)]
        plans += [rw.Plan(t, 1, 1, n // t, m) for t in (64, 128, 256) if (n // t) * item >= 16
                  for m in (2, 4, 8, 16) if t * m <= 2048]  # fmt: skip
    if args.sweep and n >= 4096:  # blocks of 64 to 1024 threads, 32 (or 64) elements each, and the clusters that needs
        for threads in (64, 128, 256, 512, 1024):
            for per in (32, 64) if args.dtype == "bfloat16" else (32,):
                cluster = n // (threads * per)
                if 1 <= cluster <= 8 and cluster * threads * per == n:
                    plans += [rw.Plan(threads, 1, cluster, per, m) for m in (1, 2, 4) if threads * m <= 1024]
        plans = list(dict.fromkeys(plans))
    if args.staged:  # the row's part in shared memory: 16 to 128 KiB a block, budgeted for as many blocks as fit
        for span in (16384, 32768, 65536, 131072):
            cluster = n * item // span
            for threads in (128, 256, 512):
                per = span // item // threads
                fit = min(227 * 1024 // (span + 1024), 65536 // (threads * 80), 8)  # (shared memory; 80 registers)
                if 1 <= cluster <= 16 and 16 // item <= per <= 128:
                    plans += [rw.Plan(threads, 1, cluster, per, m, True) for m in sorted({1, max(fit, 1)})]
    if args.pipelined is not None:  # persistent: parts landing in shared memory, worked on in registers
        for threads in (64, 128, 256, 512, 1024):
            for per in (8, 16, 32, 64):
                cluster, span = n // (threads * per), threads * per * item
                regs = per + 40  # (about what a thread needs: its part and the rest)
                if per * item < 16 or not 1 <= cluster <= 16 or cluster * threads * per != n:
                    continue
                plans += [
                    rw.Plan(threads, 1, cluster, per, m, False, stages, hold)
                    for m in (1, 2, 4, 8)
                    for stages in args.pipelined or (1,)
                    for hold in (False, True)  # (True: the weights and biases held too; LayerNorm's two arrays)
                    if threads * m * regs <= 65536 and threads * m <= 2048
                    and m * ((stages + 2 * hold) * span + 2048) <= 227 * 1024
                ]
        plans = list(dict.fromkeys(plans))
    made = [(op, *rw.make_rows(op, T, n, how, fast=not args.exact)) for op in args.ops for how in [None, *plans]
            if how != rw.plan(n, item, op) and not (op == "softmax" and how is not None and how.held)]  # fmt: skip
    with ThreadPoolExecutor(8) as pool:  # (compiled side by side first: NVRTC takes a second or two a kernel)
        list(pool.map(lambda m: backend.compiled(m[1].specialise(x, y, w, b, 1e-5)), made))
    for op, kern, how in made:
        mine = lambda k=kern, h=how, op=op: rw.run(op, k, h, x, y, w, b)  # noqa: E731
        theirs = lambda f=torch_ops[op]: f(x, w, b)  # noqa: E731
        copy = lambda: copy_out.copy_(x)  # noqa: E731
        y.fill_(float("nan"))
        t_copy, t_gk, t_torch = _common.paired([copy, mine, theirs], args.reps, events="torch")
        ref = rw.reference(op, x_host, host(w), host(b))
        rtol, atol = rw.tolerance(op, T, n)
        good = bool(np.allclose(host(y[pick]), ref, rtol=rtol, atol=atol))
        good &= bool(torch.allclose(y.float(), theirs().float(), rtol=2 * rtol, atol=2 * atol))
        med = {k: statistics.median(v) for k, v in (("copy", t_copy), ("gpukern", t_gk), ("torch", t_torch))}
        r = {
            "op": op,
            "n": n,
            "rows": rows,
            "plan": how._asdict(),
            "copy_tbs": nbytes / med["copy"] / 1e12,
            "gpukern_tbs": nbytes / med["gpukern"] / 1e12,
            "torch_tbs": nbytes / med["torch"] / 1e12,
            "fraction_of_copy": statistics.median(c / g for c, g in zip(t_copy, t_gk)),
            "vs_torch": statistics.median(t / g for t, g in zip(t_torch, t_gk)),
            "checked": good,
        }
        out.append(r)
        print(
            f"{op:9} n={n:>6} {tuple(how)}: gpukern {r['gpukern_tbs']:.2f} TB/s = {r['fraction_of_copy']:.3f} of "
            f"the copy's {r['copy_tbs']:.2f}; torch {r['torch_tbs']:.2f} TB/s ({r['vs_torch']:.2f}x) "
            f"{'OK' if good else 'WRONG'}",
            flush=True,
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
