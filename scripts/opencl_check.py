"""Compile the OpenCL C of every kernel variant the tests made for drivers other than PoCL: clang's
AMD GPU target (amdgcn) and SPIR-V (clang to LLVM IR for spir64, then llvm-spirv).

    GPUKERN_SOURCES=DIR pytest ...       # the tests write each variant's OpenCL C to DIR/opencl
    python scripts/opencl_check.py DIR/opencl [--amd gfx90a,gfx1030] [--jobs 2]

PoCL accepts some C that other OpenCL compilers reject; these two are the front ends of AMD's
driver and of the SPIR-V path (Intel's, Mesa's rusticl, PoCL's own SPIR-V), so a construct only
PoCL takes fails here.  Each variant is its own translation unit (OpenCL C has no namespaces to
batch kernels of one name in), a clang process each, run ``--jobs`` at a time.  Sources a dialect
refused (``// refused:``) are counted, not compiled.  Exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hip_check import OVER_LIMITS, where  # (scripts/: the variant's Python line; a target's limits)

CL = ["-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header", "-Werror=implicit-function-declaration"]
# LLVM IR as the front end writes it (the optimizer's `freeze` has no SPIR-V form in llvm-spirv 15),
# as SPIR-V producers hand it to the translator
SPIR = ["-target", "spir64", "-emit-llvm", "-Xclang", "-disable-llvm-passes"]


def tool(*names: str) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", type=Path, help="the opencl/ folder under the one GPUKERN_SOURCES named")
    p.add_argument("--amd", default="gfx90a,gfx1030", help="amdgcn targets, comma-separated (default gfx90a,gfx1030)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="clang processes at once")
    args = p.parse_args(argv)
    clang, spirv = tool("clang-15", "clang"), tool("llvm-spirv-15", "llvm-spirv")
    if clang is None or spirv is None:
        print("error: needs clang-15 and llvm-spirv-15 (apt-get install clang-15 llvm-spirv-15)", file=sys.stderr)
        return 2
    sources = {f.stem: f.read_text() for f in sorted(args.dir.glob("*.cl"))}
    refused = [n for n, s in sources.items() if s.startswith("// refused:")]
    todo = {n: s for n, s in sources.items() if n not in refused}
    if not todo:
        print(f"error: no OpenCL sources in {args.dir}", file=sys.stderr)
        return 2
    # an object as the driver's compiler makes before linking: -O0 (the checks are the front end's and
    # the instruction selection's) and no device library (its math functions stay calls), a third of
    # the time of -O2 against ROCm's device library
    amd = ["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O0"]
    targets = {f"amdgcn {t}": [*amd, f"-mcpu={t}"] for t in args.amd.split(",")}

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def check(name: str) -> list[tuple[str, str, str]]:
            src = work / f"{name}.cl"
            src.write_text(todo[name])
            out = []
            for target, flags in targets.items():
                cmd = [clang, *CL, *flags, "-c", str(src), "-o", os.devnull]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    out.append((name, target, r.stderr[-4000:]))
            bc = work / f"{name}.bc"
            r = subprocess.run([clang, *CL, *SPIR, "-c", str(src), "-o", str(bc)],
                               capture_output=True, text=True)  # fmt: skip
            if r.returncode == 0:
                r = subprocess.run([spirv, str(bc), "-o", os.devnull], capture_output=True, text=True)
            if r.returncode != 0:
                out.append((name, "SPIR-V", (r.stderr or r.stdout)[-4000:]))
            return out

        with ThreadPoolExecutor(args.jobs) as pool:
            failures = [f for found in pool.map(check, todo) for f in found]
    too_big = [f for f in failures if OVER_LIMITS.search(f[2])]
    failures = [f for f in failures if not OVER_LIMITS.search(f[2])]
    print(
        f"opencl_check: {len(todo)} variants compiled for {', '.join([*targets, 'SPIR-V'])}; "
        f"{len(refused)} refused by the OpenCL dialect; {len(too_big)} over a target's limits; {len(failures)} failed"
    )
    for name, target, err in too_big:
        print(f"  over {target}'s limits: {where(todo[name])}: {OVER_LIMITS.search(err).group(0)}")
    for name, target, err in failures:
        print(f"\nFAILED {name}.cl for {target} ({where(todo[name])}):\n{err}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
