"""Generated CUDA C to a cubin: which compiler does it (NVRTC or nvcc), its cache key, its errors.

``cuda_compiler()`` is the one place that decides the compiler: the one asked for by
``gk.set_cuda_compiler(name)``, else by ``GPUKERN_CUDA_COMPILER=nvrtc|nvcc``, else NVRTC where it
is found and knows the device's architecture (no process per kernel, no toolkit), else nvcc.  One
binary cache serves both: the key names the compiler and its version.  A compile failure from
either is a ``gk.CUDACompileError`` carrying the compiler's log and the Python line it names
(through the C's ``#line`` directives, or a generated line's ``// 12: python text`` comment).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from ..codegen.dialects import CUDA
from ..errors import BackendError, CUDACompileError
from ..runtime.cache import binary_cache, make_key
from ..semantics.mma import Capability
from . import nvrtc
from .compile_errors import locate

COMPILERS = ("nvrtc", "nvcc")
ENV = "GPUKERN_CUDA_COMPILER"
_chosen: str | None = None  # gk.set_cuda_compiler's choice


def kernel_arch(device_arch: str, need: Capability | None) -> str | None:
    """The architecture a kernel needing ``need`` (``Variant.matrix_capability``) is compiled for on a
    device of ``device_arch``: the device's, or ``sm_XYa`` for an architecture's own instructions
    (``need.exact``); None where the device lacks what the kernel needs."""
    if need is None:
        return device_arch
    cc = nvrtc.compute_capability(device_arch) or 0
    if need.exact:
        return f"sm_{need.cc}a" if cc == need.cc else None
    return device_arch if cc >= need.cc else None


def set_cuda_compiler(name: str | None) -> None:
    """Compile CUDA C with ``"nvrtc"`` or ``"nvcc"`` from now on in this process (``None``: the
    default again: ``GPUKERN_CUDA_COMPILER``, else NVRTC where found, else nvcc).  Kernels already
    loaded stay loaded; the cache keeps each compiler's binaries apart."""
    global _chosen
    if name is not None and name not in COMPILERS:
        raise BackendError(f"unknown CUDA compiler {name!r}; choose one of {', '.join(COMPILERS)}")
    _chosen = name


# ---------------------------------------------------------------- nvcc
def find_nvcc() -> str | None:
    """Path of nvcc: ``$CUDA_HOME/bin/nvcc`` or the one on PATH."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc")


def nvcc_compile(source: str, arch: str = "sm_90", options: tuple[str, ...] = ()) -> bytes:
    """Compile CUDA C to a cubin for ``arch`` with nvcc; a ``CUDACompileError`` with its output."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise BackendError("nvcc was not found; install the CUDA toolkit or set CUDA_HOME")
    with tempfile.TemporaryDirectory(prefix="gpukern-") as tmp:
        src = os.path.join(tmp, nvrtc.PROGRAM_NAME)
        out = os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", *options, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CUDACompileError(
                f"nvcc failed (exit status {proc.returncode})",
                compiler="nvcc",
                log=proc.stderr + proc.stdout,
                source=source,
                command=" ".join(cmd),
            )
        with open(out, "rb") as f:
            return f.read()


@functools.cache
def nvcc_version() -> str:
    """nvcc's version banner (for ``gpukern info``; cache keys use ``nvcc_fingerprint``)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return "none"
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip()


def nvcc_release() -> str:
    """``release 13.0, V13.0.88`` from nvcc's banner ("" without nvcc)."""
    banner = nvcc_version().splitlines() if find_nvcc() else []
    line = next((x for x in banner if "release" in x), banner[-1] if banner else "")
    return line.split("tools, ", 1)[-1].strip()


@functools.cache
def nvcc_fingerprint() -> str:
    """What identifies the installed nvcc in cache keys: its resolved path, size and modification
    time.  Installing another CUDA toolkit changes it; reading it costs a stat, where asking
    ``nvcc --version`` costs a process (about 40 ms, most of a warm start)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return "none"
    real = os.path.realpath(nvcc)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


# ---------------------------------------------------------------- the choice
@dataclass(frozen=True)
class CudaCompiler:
    """The compiler chosen, and why: ``name`` ("nvrtc" or "nvcc"), ``why`` (how it was chosen and
    where it was found; for nvcc chosen by default, why NVRTC could not be), ``lib`` (the NVRTC
    library, where it is NVRTC)."""

    name: str
    why: str
    lib: nvrtc.NVRTC | None = None

    @property
    def version(self) -> str:
        return self.lib.version_text if self.lib else nvcc_release()

    @property
    def fingerprint(self) -> str:
        """Its part of the cache key: NVRTC's version and files (``NVRTC.fingerprint``), or nvcc's file."""
        return self.lib.fingerprint if self.lib else f"nvcc {nvcc_fingerprint()}"

    def compile(self, source: str, arch: str, options: tuple[str, ...] = (), files: Sequence[str] = ()) -> bytes:
        """The cubin of ``source`` for ``arch``; a failure is a ``CUDACompileError`` at the Python
        line its C came from (``files``: the Python files besides the kernel's that may hold it)."""
        try:
            return self.lib.compile(source, arch, options) if self.lib else nvcc_compile(source, arch, options)
        except CUDACompileError as e:
            raise located(e, files) from None


def _nvrtc_state(arch: str | None) -> tuple[nvrtc.NVRTC | None, str]:
    """NVRTC if it can be used for ``arch``, else None and why not."""
    lib = nvrtc.library(arch)
    if lib is None:
        return None, nvrtc.why_not()
    if arch is not None:
        try:
            lib.check_arch(arch)
        except CUDACompileError as e:
            return None, f"found ({lib.path}, {lib.version_text}) but unusable: {e.brief}"
    return lib, ""


def cuda_compiler(name: str | None = None, arch: str | None = None) -> CudaCompiler:
    """The CUDA compiler to use (for ``arch`` where given): ``name``, else ``gk.set_cuda_compiler``'s,
    else ``GPUKERN_CUDA_COMPILER``'s, else NVRTC where found and able, else nvcc.  A
    ``BackendError`` saying what is missing where the one asked for (or both) cannot be used."""
    how = "asked for"
    if name is None and _chosen is not None:
        name, how = _chosen, "chosen by gk.set_cuda_compiler"
    if name is None and os.environ.get(ENV):
        name, how = os.environ[ENV].strip().lower(), f"chosen by {ENV}"
    if name is not None and name not in COMPILERS:
        raise BackendError(f"unknown CUDA compiler {name!r} ({how}); choose one of {', '.join(COMPILERS)}")
    lib, no_nvrtc = _nvrtc_state(arch)
    if name == "nvrtc" or (name is None and lib is not None):
        if lib is None:
            raise BackendError(f"the CUDA compiler NVRTC ({how}) cannot be used: {no_nvrtc}")
        return CudaCompiler("nvrtc", f"{how if name else 'the default: found'}; in {lib.where}", lib)
    nvcc = find_nvcc()
    if nvcc is None:
        if name == "nvcc":
            raise BackendError(f"the CUDA compiler nvcc ({how}) was not found: install a CUDA toolkit or set CUDA_HOME")
        raise BackendError(
            f"no CUDA compiler: NVRTC {no_nvrtc}; nvcc not found either (install a CUDA toolkit or set CUDA_HOME)"
        )
    why = how if name else f"the default where NVRTC cannot be used (NVRTC {no_nvrtc})"
    homes = ("CUDA_HOME", "CUDA_PATH")
    where = next((v for v in homes if os.environ.get(v) and nvcc.startswith(os.environ[v])), "PATH")
    return CudaCompiler("nvcc", f"{why}; found through {where}")


# ---------------------------------------------------------------- errors at Python lines
# ``file.py(12): error: ...`` (NVRTC, nvcc); nvcc names the generated file by its path
_FIRST_ERROR = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?:catastrophic )?error", re.MULTILINE)


def located(e: CUDACompileError, files: Sequence[str] = ()) -> CUDACompileError:
    """``e`` at the Python line its log's first error names (``compile_errors.locate``)."""
    out = locate(e, CUDA.generated_file, _FIRST_ERROR, files)
    assert isinstance(out, CUDACompileError)
    return out


# ---------------------------------------------------------------- cached cubins
def cubin_key(source: str, arch: str, options: tuple[str, ...], compiler: CudaCompiler) -> str:
    """The cache key of a cubin: the source, the target, the compiler and its version, the options."""
    return make_key(source=source, backend="cuda", arch=arch, compiler=compiler.fingerprint, options=tuple(options))


def cubin(source: str, arch: str, options: tuple[str, ...] = (), compiler: str | None = None) -> bytes:
    """The cubin of ``source`` for ``arch``, from the binary cache or compiled now by ``compiler``
    (None: the one ``cuda_compiler`` chooses)."""
    c = cuda_compiler(compiler, arch)
    key = cubin_key(source, arch, options, c)
    return binary_cache().get_or_compile(key, lambda: c.compile(source, arch, options))
