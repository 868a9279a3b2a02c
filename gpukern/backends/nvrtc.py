"""NVRTC, NVIDIA's runtime compiler library, through ctypes: CUDA C to a cubin without a toolkit.

Why: nvcc needs a whole CUDA toolkit and costs a process per kernel; NVRTC is one library that
PyPI ships (``nvidia-cuda-nvrtc``, with ``cuda_fp16.h`` from ``nvidia-cuda-runtime``), so
``pip install 'gpukern[cuda]'`` and a driver are enough.  It compiles for a real ``sm_XY``, so
the driver loads SASS and never JIT-compiles PTX.  Nothing here needs a GPU.

Where the library is looked for, first found wins (the first that compiles for the GPU, where
one is named): the wheels' folders (``nvidia/cu13/lib``, the CUDA 12 wheel's
``nvidia/cuda_nvrtc/lib``), ``$CUDA_HOME/lib64``, then the system loader.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os
import re
import threading
from dataclasses import dataclass

from ..codegen.dialects import CUDA
from ..errors import CUDACompileError

_WHEEL_LIBS = (  # (folder under nvidia/, file names): the CUDA 13 wheel, then CUDA 12's
    ("cu13/lib", ("libnvrtc.so.13",)),
    ("cuda_nvrtc/lib", ("libnvrtc.so.12",)),
    ("cu13/bin", ("nvrtc64_130_0.dll",)),
    ("cuda_nvrtc/bin", ("nvrtc64_120_0.dll",)),
)
_WHEEL_INCLUDES = ("cu13/include", "cuda_runtime/include")  # nvidia-cuda-runtime's headers
_SYSTEM_NAMES = ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12")
HEADER = "cuda_fp16.h"  # the one header generated CUDA C includes (for float16)
PROGRAM_NAME = CUDA.generated_file  # how NVRTC's log names the source: ``kernel.cu(12): error: ...``


def _nvidia_dirs() -> list[str]:
    """The folders of the ``nvidia`` namespace package that NVIDIA's wheels install into, found
    without importing anything."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


def _cuda_homes() -> list[str]:
    return [h for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")) if h]


def _candidates() -> list[tuple[str, str]]:
    """(what to load, where it was found) in the order they are tried."""
    out: list[tuple[str, str]] = []
    for base in _nvidia_dirs():
        for sub, names in _WHEEL_LIBS:
            for name in names:
                path = os.path.join(base, sub, name)
                if os.path.isfile(path):
                    out.append((path, "the nvidia-cuda-nvrtc wheel"))
        for path in sorted(glob.glob(os.path.join(base, "cu*", "bin", "**", "nvrtc64_*.dll"), recursive=True)):
            out.append((path, "the nvidia-cuda-nvrtc wheel"))
    pattern = "nvrtc64_*.dll" if os.name == "nt" else "libnvrtc.so*"
    for home in _cuda_homes():
        where = "CUDA_HOME" if home == os.environ.get("CUDA_HOME") else "CUDA_PATH"
        for sub in ("lib64", "lib", os.path.join("bin", "x64"), "bin"):
            out += [(path, where) for path in sorted(glob.glob(os.path.join(home, sub, pattern)))]
    out += [(name, "the system library path") for name in _SYSTEM_NAMES]
    return out


def compute_capability(arch: str) -> int | None:
    """90 for ``sm_90`` (``sm_90a``, ``sm_100f``...); None for what is no real architecture."""
    m = re.fullmatch(r"sm_(\d+)[af]?", arch)
    return int(m.group(1)) if m else None


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def _loaded_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the loader actually opened for ``lib`` (glibc's ``dlinfo``), else ``fallback``."""
    try:
        dlinfo = ctypes.CDLL(None).dlinfo
        lm = ctypes.POINTER(_LinkMap)()
        rtld_di_linkmap = 2
        if dlinfo(ctypes.c_void_p(lib._handle), rtld_di_linkmap, ctypes.byref(lm)) == 0 and lm and lm.contents.l_name:
            return os.path.realpath(lm.contents.l_name.decode())
    except (AttributeError, OSError, ValueError):
        pass
    return os.path.realpath(fallback) if os.path.isabs(fallback) else fallback


def _identity(path: str) -> str:
    """A file's resolved path, size and modification time: what changes when it is replaced."""
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:?"
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


@dataclass
class NVRTC:
    """A loaded NVRTC library: its file, where it was found, its version and what it compiles for."""

    lib: ctypes.CDLL
    path: str
    where: str
    version: tuple[int, int]
    archs: tuple[int, ...]  # compute capabilities it compiles for, e.g. (75, 80, ..., 120)
    include: str | None  # the folder holding cuda_fp16.h, passed as -I (None: none found)
    crt: str | None = None  # where crt/mma.h (the tensor cores' header needs it) is, when not in include

    @property
    def includes(self) -> list[str]:
        """The -I options of every compile: the headers' folders, found once when loaded."""
        return [opt for d in (self.include, self.crt) if d for opt in ("-I", d)]

    @property
    def version_text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    @functools.cached_property
    def fingerprint(self) -> str:
        """What identifies this compiler in cache keys: its version, its file and the headers'."""
        header = _identity(os.path.join(self.include, HEADER)) if self.include else "no headers"
        crt = _identity(os.path.join(self.crt, "crt", "mma.h")) if self.crt else ""
        return f"nvrtc {self.version_text} {_identity(self.path)} {header} {crt}".rstrip()

    def check_arch(self, arch: str) -> None:
        """A clear error where this NVRTC cannot compile for ``arch`` (``sm_XY``)."""
        cc = compute_capability(arch)
        if cc is None:
            raise CUDACompileError(f"{arch!r} is not a CUDA architecture (sm_XY)", compiler="nvrtc")
        if cc in self.archs or not self.archs:
            return
        known = f"sm_{min(self.archs)} to sm_{max(self.archs)}"
        if cc < min(self.archs):
            why = (
                f"NVRTC {self.version_text} no longer compiles for {arch} (it knows {known}): install the CUDA 12 "
                "wheel (pip install nvidia-cuda-nvrtc-cu12) or use nvcc from a toolkit that does "
                "(GPUKERN_CUDA_COMPILER=nvcc)"
            )
        else:
            why = (
                f"NVRTC {self.version_text} does not know {arch} (it knows {known}): upgrade it "
                "(pip install -U nvidia-cuda-nvrtc) or use a newer nvcc (GPUKERN_CUDA_COMPILER=nvcc)"
            )
        raise CUDACompileError(why, compiler="nvrtc")

    def compile(self, source: str, arch: str, options: tuple[str, ...] = ()) -> bytes:
        """The cubin of ``source`` for ``arch``; a ``CUDACompileError`` carrying NVRTC's log where
        it refuses the source or an option."""
        return self._output(source, arch, options, "CUBIN")

    def ptx(self, source: str, arch: str, options: tuple[str, ...] = ()) -> str:
        """The PTX of ``source`` for ``arch`` (to read: its ``.loc`` and ``.file`` line table)."""
        return self._output(source, arch, options, "PTX").rstrip(b"\0").decode()

    def _output(self, source: str, arch: str, options: tuple[str, ...], what: str) -> bytes:
        """``what`` ("CUBIN" or "PTX": NVRTC's nvrtcGet<what>) of ``source`` compiled for ``arch``."""
        self.check_arch(arch)
        if what == "PTX":  # PTX for a virtual architecture: compute_XY
            arch = arch.replace("sm_", "compute_")
        opts = [f"--gpu-architecture={arch}", *self.includes, *options]
        lib, prog = self.lib, ctypes.c_void_p()
        self._check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), PROGRAM_NAME.encode(), 0, None, None))
        try:
            c_opts = (ctypes.c_char_p * len(opts))(*(o.encode() for o in opts))
            rc = lib.nvrtcCompileProgram(prog, len(opts), c_opts)
            if rc != 0:
                log = self._log(prog)
                if HEADER in log and self.include is None:
                    log += (
                        f"\nnote: {HEADER} (for float16) was not found: pip install nvidia-cuda-runtime, "
                        "or set CUDA_HOME to a CUDA toolkit"
                    )
                if "crt/mma.h" in log:
                    log += (
                        "\nnote: crt/mma.h (for the tensor cores' mma.h) was not found: pip install nvidia-cuda-crt, "
                        "or set CUDA_HOME to a CUDA toolkit"
                    )
                raise CUDACompileError(
                    f"NVRTC {self.version_text} failed ({self.error_name(rc)})",
                    compiler="nvrtc",
                    log=log,
                    source=source,
                    command=" ".join(opts),
                )
            size = ctypes.c_size_t()
            self._check(getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size)))
            buf = ctypes.create_string_buffer(size.value)
            self._check(getattr(lib, f"nvrtcGet{what}")(prog, buf))
            return buf.raw
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))

    def error_name(self, rc: int) -> str:
        name = self.lib.nvrtcGetErrorString(rc)
        return name.decode() if name else f"NVRTC error {rc}"

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise CUDACompileError(f"NVRTC {self.version_text}: {self.error_name(rc)}", compiler="nvrtc")

    def _log(self, prog: ctypes.c_void_p) -> str:
        size = ctypes.c_size_t()
        if self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)) != 0:
            return ""
        buf = ctypes.create_string_buffer(max(size.value, 1))
        self.lib.nvrtcGetProgramLog(prog, buf)
        return buf.value.decode(errors="replace")


def _header_dir(relpath: str, lib_path: str | None = None, wheel_dirs: tuple[str, ...] = ()) -> str | None:
    """The first folder holding ``relpath``: the library's own ``../include`` (a wheel's or a
    toolkit's), the NVIDIA wheels' include folders, ``$CUDA_HOME``/``$CUDA_PATH``'s, the usual
    toolkit place."""
    here = os.path.dirname(lib_path) if lib_path and os.path.isabs(lib_path) else ""
    dirs = [os.path.join(here, os.pardir, "include")] if here else []
    dirs += [os.path.join(base, sub) for base in _nvidia_dirs() for sub in (*_WHEEL_INCLUDES, *wheel_dirs)]
    dirs += [os.path.join(home, "include") for home in _cuda_homes()]
    dirs += ["/usr/local/cuda/include", "/usr/include"]
    for d in dirs:
        if os.path.isfile(os.path.join(d, relpath)):
            return os.path.realpath(d)
    return None


def _headers(lib_path: str) -> tuple[str | None, str | None]:
    """The folder of cuda_fp16.h that goes best with the library, and the folder of crt/mma.h
    where that one lacks it (the CUDA 13 wheels put the crt headers in their own wheel)."""
    include = _header_dir(HEADER, lib_path)
    if include is not None and os.path.isfile(os.path.join(include, "crt", "mma.h")):
        return include, None
    return include, _header_dir(os.path.join("crt", "mma.h"), lib_path, ("cuda_crt/include",))


def _prototype(lib: ctypes.CDLL) -> None:
    """The argument types of the functions used, so ctypes converts and checks them."""
    vp, pvp, i, pi = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.POINTER(ctypes.c_int)
    sz, cp, ccp = ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)
    for name, args in {
        "nvrtcVersion": (pi, pi),
        "nvrtcCreateProgram": (pvp, cp, cp, i, ccp, ccp),
        "nvrtcCompileProgram": (vp, i, ccp),
        "nvrtcGetProgramLogSize": (vp, sz),
        "nvrtcGetProgramLog": (vp, cp),
        "nvrtcGetCUBINSize": (vp, sz),
        "nvrtcGetCUBIN": (vp, cp),
        "nvrtcGetPTXSize": (vp, sz),
        "nvrtcGetPTX": (vp, cp),
        "nvrtcDestroyProgram": (pvp,),
        "nvrtcGetErrorString": (i,),
    }.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = list(args), ctypes.c_int
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p


_lock = threading.Lock()


@functools.cache
def _open(target: str, where: str) -> NVRTC | str:
    """The NVRTC library at ``target``, or why it is not one ("" where nothing is there to say)."""
    try:
        lib = ctypes.CDLL(target)
        _prototype(lib)
    except (OSError, AttributeError) as e:
        return f"{target}: {e}" if os.path.isabs(target) else ""
    major, minor = ctypes.c_int(), ctypes.c_int()
    if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
        return f"{target}: nvrtcVersion failed"
    archs: tuple[int, ...] = ()
    try:
        n = ctypes.c_int()
        if lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)) == 0:
            buf = (ctypes.c_int * n.value)()
            if lib.nvrtcGetSupportedArchs(buf) == 0:
                archs = tuple(buf)
    except AttributeError:  # before CUDA 11.2: no list; let NVRTC itself refuse an arch
        pass
    path = _loaded_path(lib, target)
    return NVRTC(lib, path, where, (major.value, minor.value), archs, *_headers(path))


@functools.cache
def _load(cc: int | None = None) -> tuple[NVRTC | None, str]:
    """The first NVRTC library found that compiles for compute capability ``cc`` (None: any), so
    that with both wheels installed a GPU CUDA 13 dropped (sm_70) gets CUDA 12's; where none
    does, the first found (``check_arch`` then says what to install); or None and why none loads.
    Libraries are opened in order, only as far as needed."""
    tried: list[str] = []
    first: NVRTC | None = None
    for target, where in _candidates():
        got = _open(target, where)
        if isinstance(got, str):
            if got:
                tried.append(got)
            continue
        if cc is None or not got.archs or cc in got.archs:
            return got, ""
        first = first or got
    if first is not None:
        return first, ""
    why = "not found (pip install nvidia-cuda-nvrtc, or set CUDA_HOME to a CUDA toolkit)"
    return None, why + ("; " + "; ".join(tried) if tried else "")


def library(arch: str | None = None) -> NVRTC | None:
    """The NVRTC library, for ``arch`` (``sm_XY``) where given (``_load``), loaded once (None where
    there is none: ``why_not()`` says why)."""
    with _lock:
        return _load(compute_capability(arch) if arch else None)[0]


def why_not() -> str:
    """Why ``library()`` is None ("" when it is not)."""
    with _lock:
        return _load()[1]
