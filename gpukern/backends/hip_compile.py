"""hipcc for AMD GPUs: the HIP C++ of a kernel compiled for a gfx target, and what its code object
uses (VGPRs, SGPRs, LDS, scratch, wavefront size), read from the assembly's AMDGPU metadata.

No AMD GPU is needed: Debian's ``hipcc`` (``HIP_PLATFORM=amd``) compiles device code for any gfx
target.  ``gpukern show --backend hip --resources`` prints these figures, as a kernel author reads
``--resource-usage`` from nvcc.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import HIPCompileError

DEFAULT_TARGETS = ("gfx90a", "gfx1030")  # CDNA 2 (wave64), RDNA 2 (wave32)
_TARGET = re.compile(r"gfx[0-9a-f]{3,4}[a-z0-9:+-]*")
# the kernel's entries in the code object's metadata (YAML in the assembly): scalars at 4 spaces
_FIELDS = {
    ".name": "name",
    ".vgpr_count": "vgprs",
    ".sgpr_count": "sgprs",
    ".agpr_count": "agprs",
    ".group_segment_fixed_size": "lds_bytes",
    ".private_segment_fixed_size": "scratch_bytes",
    ".vgpr_spill_count": "vgpr_spills",
    ".sgpr_spill_count": "sgpr_spills",
    ".wavefront_size": "wavefront",
    ".max_flat_workgroup_size": "max_block",
}


def find_hipcc() -> str | None:
    """The ``hipcc`` on PATH (``GPUKERN_HIPCC`` names another), or None."""
    return os.environ.get("GPUKERN_HIPCC") or shutil.which("hipcc")


@functools.cache
def fingerprint() -> str:
    """hipcc's identity for the binary cache's key (its version line; a new ROCm recompiles)."""
    hipcc = find_hipcc()
    if hipcc is None:
        return "no hipcc"
    p = subprocess.run([hipcc, "--version"], capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return f"{hipcc}: {p.stdout.splitlines()[0] if p.stdout else p.returncode}"


def _check_target(target: str) -> None:
    if not _TARGET.fullmatch(target):
        raise HIPCompileError(f"{target!r} is not an AMD GPU target (gfx908, gfx90a, gfx1030, ...)", compiler="hipcc")


def _hipcc(source: str, targets: tuple[str, ...], mode: list[str], suffix: str) -> bytes:
    """What hipcc writes of ``source`` for ``targets`` in ``mode`` (its options: assembly, a code
    object bundle), or a ``HIPCompileError`` with its log."""
    for target in targets:
        _check_target(target)
    hipcc = find_hipcc()
    if hipcc is None:
        raise HIPCompileError(
            "hipcc is not installed: `apt-get install hipcc` (Debian, Ubuntu) or ROCm's hipcc", compiler="hipcc"
        )
    with tempfile.TemporaryDirectory(prefix="gpukern-hip-") as tmp:
        src, out = Path(tmp) / "kernel.hip", Path(tmp) / f"kernel{suffix}"
        src.write_text(source)
        cmd = [hipcc, *(f"--offload-arch={t}" for t in targets), *mode, "-O3", "-o", str(out), str(src)]
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HIP_PLATFORM": "amd"})
        if p.returncode != 0 or not out.exists():
            raise HIPCompileError(
                f"hipcc failed for {', '.join(targets)}", compiler="hipcc", log=p.stderr or p.stdout, source=source,
                command=" ".join(cmd),
            )  # fmt: skip
        return out.read_bytes()


def assemble(source: str, target: str) -> str:
    """The AMDGPU assembly hipcc makes of ``source`` (HIP C++) for ``target`` (``gfx90a``)."""
    return _hipcc(source, (target,), ["--cuda-device-only", "-S"], ".s").decode()


def code_object(source: str, targets: tuple[str, ...]) -> bytes:
    """One code object bundle of ``source`` for every target (``hipModuleLoadData`` takes the
    device's), as hipcc's ``--genco`` writes it."""
    return _hipcc(source, targets, ["--genco"], ".hsaco")


def resources(assembly: str) -> dict[str, dict[str, int]]:
    """Per kernel name, what its code object uses (the ``_FIELDS`` figures and ``occupancy``, the
    waves per SIMD the compiler reports), from ``assembly``'s ``amdhsa.kernels`` metadata."""
    kernels: list[dict[str, int | str]] = []
    inside = False
    for line in assembly.splitlines():
        if line.startswith("amdhsa.kernels:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            inside = False
        if not inside:
            continue
        if line.startswith("  - "):
            kernels.append({})
        m = re.match(r"^ {2}(?:- | {2})(\.[a-z_]+):\s+(\S+)\s*$", line)
        if m and m.group(1) in _FIELDS and kernels:
            key, value = _FIELDS[m.group(1)], m.group(2)
            kernels[-1][key] = value if key == "name" else int(value)
    occupancy = [int(v) for v in re.findall(r"^; Occupancy: (\d+)", assembly, re.M)]
    out: dict[str, dict[str, int]] = {}
    for i, k in enumerate(kernels):
        name = str(k.pop("name", f"kernel{i}"))
        figures = {key: int(v) for key, v in k.items()}
        if i < len(occupancy):
            figures["occupancy"] = occupancy[i]
        out[name] = figures
    return out


def describe(target: str, figures: dict[str, int]) -> str:
    """One line of a kernel's figures on ``target``, as ``gpukern show --resources`` prints them."""
    parts = [f"{figures.get('vgprs', 0)} VGPRs"]
    if figures.get("agprs"):
        parts.append(f"{figures['agprs']} AGPRs")
    parts += [
        f"{figures.get('sgprs', 0)} SGPRs",
        f"{figures.get('lds_bytes', 0)} bytes LDS",
        f"{figures.get('scratch_bytes', 0)} bytes scratch",
    ]
    spills = figures.get("vgpr_spills", 0) + figures.get("sgpr_spills", 0)
    if spills:
        parts.append(f"{spills} registers spilled")
    parts.append(f"wave{figures.get('wavefront', 64)}")
    if "occupancy" in figures:
        parts.append(f"occupancy {figures['occupancy']} waves/SIMD")
    return f"{target}: " + ", ".join(parts)
