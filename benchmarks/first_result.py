"""Time to the first result of a small kernel in a fresh process: gpukern against CuPy's RawKernel.

    python benchmarks/first_result.py [--runs 9] [--n 1048576] [--out DIR]

What a user waits for when a script starts: a fresh Python process imports the library, makes the
arrays, compiles (from a warm disk cache) and launches one axpy on 2^20 floats, and copies the
result back.  Each run is a child process (``sys.executable``), timed inside from before the
library's import to the result on the host (``time.perf_counter``), with the import on its own.
gpukern's child is given NumPy arrays (a program that has not imported CuPy: gpukern then launches
through ctypes, not CuPy's binding, so that it never imports CuPy for that); CuPy's compiles the
same C through ``cupy.RawKernel`` and launches on CuPy arrays.  One untimed run of each first fills
the disk caches (gpukern's, CuPy's kernel cache); then the children alternate, ``--runs`` each;
medians are reported, and every child checks its result against NumPy (a wrong one fails the run).
Before the runs, gpukern's bytecode is written (``compileall``), as ``pip install`` does for an
installed package and as Python does at a first import: a checkout copied to a machine that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise recompile all of gpukern's source in every child while
CuPy loads its installed bytecode.  Each child reports whether gpukern came from bytecode.

Goal (issue 33): gpukern's median time to first result at or below CuPy's on the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common

AXPY_C = """extern "C" __global__ void axpy(float a, const float* x, float* y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""

GPUKERN_CHILD = """
import time
t0 = time.perf_counter()
import numpy as np
import gpukern as gk
t_import = time.perf_counter()

@gk.kernel
def axpy(a: gk.float32, x: gk.Array[gk.float32], y: gk.Array[gk.float32], n: gk.int64):
    i = gk.global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]

n = {n}
x = np.arange(n, dtype=np.float32)
y = np.ones(n, np.float32)
gk.set_backend("cuda")
axpy[gk.grid_for(n, 256), 256](np.float32(2.0), x, y, n)
t_result = time.perf_counter()
ok = bool(np.array_equal(y, 2 * np.arange(n, dtype=np.float32) + 1))
import json, sys
import importlib.util, os
bytecode = os.path.exists(importlib.util.cache_from_source(gk.kernel.__code__.co_filename))
print(json.dumps({{"import_s": t_import - t0, "first_result_s": t_result - t0, "ok": ok,
                  "cupy_imported": "cupy" in sys.modules, "bytecode": bytecode}}))
"""

CUPY_CHILD = """
import time
t0 = time.perf_counter()
import numpy as np
import cupy as cp
t_import = time.perf_counter()
kernel = cp.RawKernel(r'''{code}''', "axpy")
n = {n}
x = cp.asarray(np.arange(n, dtype=np.float32))
y = cp.asarray(np.ones(n, np.float32))
kernel(((n + 255) // 256,), (256,), (np.float32(2.0), x, y, np.int64(n)))
host = cp.asnumpy(y)
t_result = time.perf_counter()
ok = bool(np.array_equal(host, 2 * np.arange(n, dtype=np.float32) + 1))
import json
print(json.dumps({{"import_s": t_import - t0, "first_result_s": t_result - t0, "ok": ok}}))
"""


def child(script: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one child (a file: gpukern reads a kernel's source from its file) and read its JSON line."""
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"error: a child failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if not r["ok"]:
        raise SystemExit(f"error: a child's result differs from NumPy's: {r}")
    return r


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=9, help="timed children of each library (default 9)")
    p.add_argument("--n", type=int, default=1 << 20, help="elements of the axpy (default 2^20)")
    p.add_argument("--out", type=Path, default=_common.DEFAULT_OUT, help="results folder")
    args = p.parse_args(argv)
    backend = _common.select_backend("cuda")

    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_common.ROOT), os.environ.get("PYTHONPATH", "")])}
        env["GPUKERN_CACHE_DIR"] = str(Path(cache) / "gpukern")
        env["CUPY_CACHE_DIR"] = str(Path(cache) / "cupy")
        codes = {
            "gpukern": Path(cache) / "first_gpukern.py",
            "cupy RawKernel": Path(cache) / "first_cupy.py",
        }
        codes["gpukern"].write_text(GPUKERN_CHILD.format(n=args.n))
        codes["cupy RawKernel"].write_text(CUPY_CHILD.format(n=args.n, code=AXPY_C))
        compiled = subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(_common.ROOT / "gpukern")], capture_output=True, text=True
        )
        if compiled.returncode != 0:
            raise SystemExit(f"error: compileall failed:\n{compiled.stdout[-2000:]}{compiled.stderr[-2000:]}")
        for code in codes.values():  # fill the disk caches: the runs measure a warm start
            child(code, env)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
        for _ in range(args.runs):
            for name, code in codes.items():  # alternating, so drift touches both alike
                runs[name].append(child(code, env))
    med = {
        name: {
            "first_result_s": statistics.median(r["first_result_s"] for r in rs),
            "import_s": statistics.median(r["import_s"] for r in rs),
            "min_first_result_s": min(r["first_result_s"] for r in rs),
        }
        for name, rs in runs.items()
    }
    ratio = med["gpukern"]["first_result_s"] / med["cupy RawKernel"]["first_result_s"]
    rows = [
        [name, f"{m['first_result_s'] * 1e3:.0f}", f"{m['min_first_result_s'] * 1e3:.0f}", f"{m['import_s'] * 1e3:.0f}"]
        for name, m in med.items()
    ]
    print(f"device: {backend.device_name()}  axpy of {args.n} floats, {args.runs} fresh processes each, warm caches")
    print(_common.table(["library", "first result ms (median)", "min ms", "import ms (median)"], rows))
    cupy_imported = any(r.get("cupy_imported") for r in runs["gpukern"])
    print(f"gpukern / CuPy RawKernel: {ratio:.2f} (goal <= 1.0: {'met' if ratio <= 1.0 else 'NOT met'})")
    print(f"gpukern's children imported CuPy: {cupy_imported}")
    bytecode = all(r.get("bytecode") for r in runs["gpukern"])
    print(f"gpukern's children loaded its bytecode: {bytecode}")
    results = {"medians": med, "ratio": ratio, "runs": runs, "gpukern_imported_cupy": cupy_imported,
               "gpukern_bytecode": bytecode}
    plot = {
        "kind": "bars",
        "title": "Time to the first result in a fresh process (axpy, warm caches)",
        "xlabel": "",
        "ylabel": "milliseconds (median)",
        "series": {
            "first result": {"x": list(med), "y": [m["first_result_s"] * 1e3 for m in med.values()]},
            "import": {"x": list(med), "y": [m["import_s"] * 1e3 for m in med.values()]},
        },
    }
    _common.save("first_result", args.out, backend, vars(args), results, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
