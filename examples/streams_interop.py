"""Streams, events, pinned memory, other libraries' arrays and several devices, in one program.

    python examples/streams_interop.py [--size N] [--backend cuda|opencl|sim]

1. A copy on one stream and a kernel on another, ordered by an event: ``y = 2 x + y``.
2. The same kernel on CuPy arrays and PyTorch tensors in place (where those import, on CUDA),
   on their current streams and on a stream of theirs; DLPack both ways.
3. Every device of the backend in turn (``with gk.Device(i):``), each with its own arrays.

Each result is checked against NumPy; a mismatch prints WRONG and exits 1.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gpukern as gk


@gk.kernel
def axpy(a: gk.float32, x: gk.Array[gk.float32], y: gk.Array[gk.float32]):
    i = gk.global_id(0)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


def check(what: str, got: np.ndarray, want: np.ndarray) -> bool:
    ok = np.allclose(got, want, rtol=1e-6)
    print(f"{what:<48} {'OK' if ok else 'WRONG'}")
    return ok


def streams(n: int, rng: np.random.Generator) -> bool:
    s1, s2 = gk.Stream(), gk.Stream()
    host = gk.pinned_empty(n, np.float32)  # page-locked: the copy may overlap other work
    host[:] = rng.uniform(-1, 1, n)
    y0 = rng.uniform(-1, 1, n).astype(np.float32)
    x, y = gk.empty(n, np.float32), gk.to_device(y0)
    x.set_async(host, s1)
    s2.wait_event(s1.record())  # the kernel on s2 starts after the copy on s1
    axpy[(n + 255) // 256, 256, s2](np.float32(2), x, y)
    out = y.get_async(stream=s2)
    s2.synchronize()
    return check("copy on one stream, kernel on another", out, 2 * host + y0)


def other_libraries(n: int, rng: np.random.Generator) -> bool:
    ok = True
    grid = (n + 255) // 256
    try:
        import cupy as cp
    except ImportError:
        print("CuPy not installed: skipped")
    else:
        cx = cp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
        cy = cp.zeros(n, cp.float32)
        axpy[grid, 256](np.float32(2), cx, cy)  # in place, on CuPy's current stream
        first = cp.cuda.get_current_stream().record()
        with cp.cuda.Stream(non_blocking=True) as s:
            s.wait_event(first)  # inside the with, CuPy's current stream is s: the launch follows s
            # alone, and a non-blocking stream does not wait for the legacy one by itself
            axpy[grid, 256, s](np.float32(1), cx, cy)  # on a CuPy stream
        s.synchronize()
        ok &= check("CuPy arrays in place, CuPy's streams", cy.get(), 3 * cx.get())
        before = cy.get()
        g = gk.from_dlpack(cy)  # the same memory as a gpukern array
        axpy[grid, 256](np.float32(-1), cx, g)
        ok &= check("gk.from_dlpack(cupy array)", cp.from_dlpack(g).get(), before - cx.get())
    try:
        import torch
    except ImportError:
        print("PyTorch not installed: skipped")
    else:
        tx = torch.rand(n, device="cuda")
        ty = torch.zeros(n, device="cuda")
        ts = torch.cuda.Stream()
        axpy[grid, 256, ts](np.float32(4), tx, ty)  # on a torch stream, after torch's current one
        ts.synchronize()
        ok &= check("PyTorch tensors in place, a torch stream", ty.cpu().numpy(), 4 * tx.cpu().numpy())
    return ok


def devices(n: int, rng: np.random.Generator) -> bool:
    ok = True
    for d in gk.devices():
        with d:  # launches and new arrays go to device d
            x0 = rng.uniform(-1, 1, n).astype(np.float32)
            x, y = gk.to_device(x0), gk.zeros(n, np.float32)
            axpy[(n + 255) // 256, 256](np.float32(5), x, y)
            ok &= check(f"{d}: {d.name}", y.get(), 5 * x0)
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, help="elements per array (default 2^20; 2^14 on the simulator)")
    p.add_argument("--backend", choices=["cuda", "opencl", "sim"], default=None)
    args = p.parse_args(argv)
    if args.backend:
        gk.set_backend(args.backend)
    print(f"backend: {gk.get_backend().device_name()}")
    n = gk.problem_size(args.size, 1 << 20, 1 << 14)
    rng = np.random.default_rng(0)
    ok = streams(n, rng)
    if gk.get_backend().name == "cuda":
        ok &= other_libraries(n, rng)
    ok &= devices(n, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
