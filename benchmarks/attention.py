"""Fused attention forward (``examples/attention.py``) beside cuDNN's and FlashAttention-2's, through
PyTorch's ``scaled_dot_product_attention`` in the same run.

    python benchmarks/attention.py [--seq 4096] [--reps 10] [--out DIR]

Cases (issue 35): FP16 and BF16; batch 8 x 32 heads at head dimension 64 and 4 x 16 at 128; causal
and not; sequence 4096.  In each of ``--reps`` repetitions, one after the other on the same stream
with CUDA events (after 3 warm-up rounds): gpukern's kernel on PyTorch's tensors in place, then
``scaled_dot_product_attention`` under ``sdpa_kernel(CUDNN_ATTENTION)`` and under
``sdpa_kernel(FLASH_ATTENTION)``.  TFLOP/s = 4 b h s^2 d (half that when causal) over the median
time; the ratios are the medians of the repetitions' ratios.  Checked in the same run: gpukern's O
against cuDNN's (both rounded to the inputs' type) and its log-sum-exp of two heads against
float64.  Goal: >= 0.9x cuDNN and >= 1.5x FlashAttention-2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import _common
import numpy as np

CASES = [(8, 32, 64), (4, 16, 128)]  # (batch, heads, head dimension)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--dtypes", nargs="+", default=["float16", "bfloat16"])
    p.add_argument(
        "--plans", nargs="+", default=["0x0x0"],
        help="warpgroups x blocks an SM x keys a step (0: the example's PLANS) [x stages (2)]",
    )
    p.add_argument("--cases", nargs="+", type=int, default=[64, 128], help="head dimensions")
    p.add_argument("--out", type=_common.Path, default=_common.DEFAULT_OUT)
    args = p.parse_args(argv)
    backend = _common.select_backend("cuda")
    att = _common.example("attention")
    rows = []
    for dtype in args.dtypes:
        for batch, heads, d in CASES:
            if d not in args.cases:
                continue
            for causal in (False, True):
                for plan in args.plans:
                    rows.append(_one(att, dtype, batch, heads, d, causal, args, plan))
    ok = all(r["checked"] for r in rows)
    series = {
        name: {"x": [r["case"] for r in rows], "y": [r[key] for r in rows]}
        for name, key in (("gpukern", "gpukern_tflops"), ("cuDNN", "cudnn_tflops"), ("FlashAttention-2", "fa2_tflops"))
    }
    plot = {
        "kind": "bars",
        "title": f"Attention forward, sequence {args.seq}",
        "xlabel": "case",
        "ylabel": "TFLOP/s",
        "series": series,
    }
    _common.save("attention", args.out, backend, vars(args), {"rows": rows}, plot)
    return 0 if ok else 1


def _one(att: Any, dtype: str, batch: int, heads: int, d: int, causal: bool, args: Any, plan: str) -> dict:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import gpukern as gk

    seq = args.seq
    tdtype = torch.float16 if dtype == "float16" else torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn((batch, heads, seq, d), device="cuda", dtype=tdtype, generator=gen) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty((batch * heads, seq), device="cuda", dtype=torch.float32)
    wg, blocks, bn, stages = ([int(x) for x in plan.split("x")] + [2])[:4]
    T = gk.float16 if dtype == "float16" else gk.bfloat16
    kern = att.make_attention(T, d, causal, wg or None, blocks or None, bn or None, stages)
    heads3 = [x.view(batch * heads, seq, d) for x in (q, k, v, o)]

    def mine() -> None:
        att.run(kern, *heads3, lse)

    def library(which: Any) -> Any:
        def fn() -> Any:
            with sdpa_kernel(which):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        return fn

    cudnn, fa2 = library(SDPBackend.CUDNN_ATTENTION), library(SDPBackend.FLASH_ATTENTION)
    t_gk, t_cudnn, t_fa2 = _common.paired([mine, cudnn, fa2], args.reps, events="torch")
    mine()
    ref = cudnn()
    tol = 2.0**-6 if dtype == "bfloat16" else 2.0**-8
    good = bool(torch.allclose(o.float(), ref.float(), rtol=tol, atol=tol))
    for h in (0, batch * heads - 1):  # the log-sum-exp of two heads against float64
        host = [x.view(batch * heads, seq, d)[h].float().cpu().numpy() for x in (q, k, v)]
        _, want = att.reference(*host, causal)
        good &= bool(np.allclose(lse[h].cpu().numpy(), want, rtol=1e-4, atol=1e-4))
    flops = 4 * batch * heads * seq * seq * d / (2 if causal else 1)
    med = {name: statistics.median(t) for name, t in (("gk", t_gk), ("cudnn", t_cudnn), ("fa2", t_fa2))}
    r = {
        "case": f"{dtype} d={d} {'causal' if causal else 'full'}" + ("" if plan == "0x0x0" else f" {plan}"),
        "plan": plan,
        "dtype": dtype,
        "batch": batch,
        "heads": heads,
        "head_dim": d,
        "causal": causal,
        "seq": seq,
        "gpukern_tflops": flops / med["gk"] / 1e12,
        "cudnn_tflops": flops / med["cudnn"] / 1e12,
        "fa2_tflops": flops / med["fa2"] / 1e12,
        "vs_cudnn": statistics.median(c / g for c, g in zip(t_cudnn, t_gk)),
        "vs_fa2": statistics.median(f / g for f, g in zip(t_fa2, t_gk)),
        "max_abs_error_vs_cudnn": float((o.float() - ref.float()).abs().max()),
        "checked": good,
    }
    print(
        f"{r['case']:28} gpukern {r['gpukern_tflops']:6.1f} TFLOP/s = {r['vs_cudnn']:.2f}x cuDNN "
        f"({r['cudnn_tflops']:.1f}), {r['vs_fa2']:.2f}x FA2 ({r['fa2_tflops']:.1f})  {'OK' if good else 'WRONG'}",
        flush=True,
    )
    return r


if __name__ == "__main__":
    sys.exit(main())
