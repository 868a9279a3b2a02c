"""The ``gpukern`` command: what a kernel author runs outside Python.

``gpukern info`` says what this machine can run and why not the rest (the first thing to
run on a new machine); ``gpukern show FILE.py:KERNEL`` prints the C a kernel became;
``gpukern check FILE.py|DIR...`` compiles every kernel of files (and directories) for both C
dialects and prints errors as a compiler would (for editors and CI; a kernel it cannot compile
for want of types fails it too, unless ``--allow-skipped``); ``gpukern cache`` lists or clears the
binary cache.  Bad input is one line on stderr and exit status 2, never a traceback;
kernels that fail ``check`` give exit status 1.

Types on the command line: a scalar is its name (``int32``); an array is the element type
followed by one ``:`` per dimension, NumPy-slice style: ``float32[:]``, ``float32[:,:]``,
``float32[:,:,:]``.  Element types: bool, int32, uint32, int64, float32, float64.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import itertools
import os
import platform
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import backends as _backends
from .._version import __version__
from ..errors import CompileError, GpukernError
from ..kernel import Kernel
from ..runtime.cache import cache_info, clear_cache
from ..types import SCALARS, ArrayType, ScalarType

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
DIALECTS = ("cuda", "opencl", "hip")
DEFAULT_CHECKED = ("cuda", "opencl")  # what `gpukern check` writes unless --backend names one
_TYPE_RE = re.compile(r"^\s*(\w+)\s*(?:\[\s*(:(?:\s*,\s*:)*)\s*\])?\s*$")
_SCALARS = {t.name: t for t in SCALARS} | {"bool_": SCALARS[0]}
_module_ids = itertools.count()


class UsageError(Exception):
    """Bad input from the user: reported as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line and status 2, like every other usage error of this command."""
        raise UsageError(f"{message} (see {self.prog} --help)")


# ---------------------------------------------------------------- types and constants
def parse_type(text: str) -> ScalarType | ArrayType:
    """``int32`` → ``gk.int32``; ``float32[:,:]`` → ``gk.Array[gk.float32, 2]``."""
    m = _TYPE_RE.match(text)
    elem = _SCALARS.get(m.group(1)) if m else None
    if m is None or elem is None:
        names = ", ".join(t.name for t in SCALARS)
        raise UsageError(
            f"malformed type {text!r}: write a scalar type (int32) or an array as float32[:], float32[:,:] "
            f"or float32[:,:,:]; element types: {names}"
        )
    if m.group(2) is None:
        return elem
    return ArrayType(elem, m.group(2).count(":"))


def parse_const(text: str) -> tuple[str, Any]:
    """``TILE=16`` → ``("TILE", 16)``; values are Python literals (int, float, True/False)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise UsageError(f"malformed constant {text!r}: write NAME=VALUE, e.g. TILE=16")
    value = value.strip()
    lowered = {"true": "True", "false": "False"}.get(value.lower(), value)
    try:
        v = ast.literal_eval(lowered)
    except (ValueError, SyntaxError):
        v = None
    if not isinstance(v, (bool, int, float)):
        raise UsageError(f"constant {name.strip()!r}: {value!r} is not an int, a float or a bool")
    return name.strip(), v


def parse_arg_types(items: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
    """``--arg-types`` values: ``TYPE`` in order of the untyped parameters, or ``NAME=TYPE``."""
    positional: list[Any] = []
    named: dict[str, Any] = {}
    for item in items:
        name, sep, t = item.partition("=")
        if sep and name.strip().isidentifier():
            named[name.strip()] = parse_type(t)
        else:
            positional.append(parse_type(item))
    return positional, named


def example_args(
    k: Kernel, positional: list[Any], named: dict[str, Any], consts: dict[str, Any], strict: bool
) -> tuple[list[Any] | None, str]:
    """Example arguments for ``kernel.source``, or None and what is missing.

    ``strict`` (``show``, one kernel) refuses names the kernel does not have and types left
    over; ``check`` applies the same options to every kernel of a file, so it cannot.
    """
    params = k.params
    pnames = {p.name for p in params}
    if strict:
        for name in list(named) + list(consts):
            if name not in pnames:
                raise UsageError(f"kernel {k.__name__!r} has no parameter {name!r}; it has {', '.join(pnames)}")
    queue = list(positional)
    args: list[Any] = []
    missing: list[str] = []
    defaults = dict(zip([p.name for p in params][len(params) - len(k.defaults) :], k.defaults))
    for p in params:
        if p.kind == "const":
            if p.name in named:
                raise UsageError(f"parameter {p.name!r} of {k.__name__!r} is a Const: give it with --const")
            if p.name in consts:
                args.append(consts[p.name])
            elif p.name in defaults:  # the file's own value
                args.append(defaults[p.name])
            else:
                missing.append(f"--const {p.name}=VALUE")
            continue
        if p.name in consts and strict:
            raise UsageError(f"parameter {p.name!r} of {k.__name__!r} is not a Const; give its type with --arg-types")
        if p.name in named:
            args.append(named[p.name])
        elif p.kind in ("array", "scalar"):
            args.append(p.type)
        elif queue:
            args.append(queue.pop(0))
        else:
            what = "an Array of which element type and rank" if p.kind == "infer_array" else "no annotation"
            missing.append(f"--arg-types {p.name}=TYPE ({what})")
    if strict and queue:
        raise UsageError(f"{len(queue)} more --arg-types than kernel {k.__name__!r} has untyped parameters")
    if missing:
        return None, "needs " + ", ".join(missing)
    return args, ""


# ---------------------------------------------------------------- loading the user's file
def load_file(path: str) -> tuple[Any, list[Kernel]]:
    """Import ``path`` under a fresh module name; its kernels in the order they were defined."""
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: not a file")
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_gpukern_cli_{next(_module_ids)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be imported as Python (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)  # the file may import its neighbours, as `python FILE.py` would allow
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        raise UsageError(
            f"{e.filename or path}:{e.lineno}:{e.offset or 0}: error: {e.msg} (cannot import it)"
        ) from None
    except (Exception, SystemExit) as e:
        sys.modules.pop(name, None)
        first = str(e).splitlines()[0] if str(e) else ""
        raise UsageError(f"{path}: importing it raised {type(e).__name__}: {first}") from None
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass
    source = os.path.abspath(path)
    kernels = [
        v
        for v in vars(module).values()
        if isinstance(v, Kernel) and os.path.abspath(v.fn.__code__.co_filename) == source
    ]
    kernels.sort(key=lambda k: k.fn.__code__.co_firstlineno)
    return module, kernels


def _kernel_location(k: Kernel) -> str:
    return f"{k.fn.__code__.co_filename}:{k.fn.__code__.co_firstlineno}:1"


# ---------------------------------------------------------------- info
def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _version(module: str) -> str:
    try:
        mod = importlib.import_module(module)
    except Exception:
        return "not installed"
    return str(getattr(mod, "VERSION_TEXT", None) or getattr(mod, "__version__", "installed"))


def cmd_info(args: argparse.Namespace) -> int:
    """Everything one needs to know about a new machine, or to paste into a bug report."""
    from ..backends import nvrtc
    from ..backends.cuda_compile import cuda_compiler, find_nvcc, nvcc_release

    out = sys.stdout
    status = _backends.backend_status()
    available = [name for name, why in status.items() if why is None]
    print(f"gpukern {__version__}", file=out)
    print(f"python {platform.python_version()} ({sys.executable})", file=out)
    print(f"numpy {_version('numpy')}", file=out)
    print("backends:", file=out)
    for name, why in status.items():
        if why is None:
            b = _backends.get_backend(name)
            try:
                device = b.device_name()
            except Exception as e:  # a driver that cannot name its device should not hide the rest
                device = f"(device name unavailable: {e})"
            items = "x".join(str(i) for i in b.max_items)
            print(f"  {name:<7} available    {device}", file=out)
            print(
                f"  {'':<7}              max {b.max_group} threads per block ({items}), "
                f"{_human(b.max_shared)} shared memory",
                file=out,
            )
            names = type(b).device_names()
            for i, n in enumerate(names):
                mark = "*" if i == b.index else " "
                print(f"  {'':<7}            {mark} device {i}: {n}", file=out)
        else:
            print(f"  {name:<7} unavailable  {why}", file=out)
    current, how = _backends.chosen_backend()
    how = "the best available" if how == "default" else how
    print(f"default backend: {current or (available[0] if available else 'none')} ({how})", file=out)
    print("compilers and drivers:", file=out)
    cuda = _backends.get_backend("cuda") if "cuda" in available else None
    try:
        c = cuda_compiler(arch=getattr(cuda, "arch", None))
        print(f"  CUDA C    compiled by {c.name} {c.version} ({c.why})", file=out)
    except GpukernError as e:
        print(f"  CUDA C    no compiler: {e}", file=out)
    lib = nvrtc.library(getattr(cuda, "arch", None))  # the one compiling for this GPU
    if lib is None:
        print(f"  nvrtc     {nvrtc.why_not()}", file=out)
    else:
        headers = f"headers {lib.include}" if lib.include else f"no {nvrtc.HEADER} (pip install nvidia-cuda-runtime)"
        print(f"  nvrtc     {lib.version_text}: {lib.path} ({lib.where}); {headers}", file=out)
    nvcc = find_nvcc()
    print(f"  nvcc      {f'{nvcc}: {nvcc_release()}' if nvcc else 'not found (CUDA_HOME or PATH)'}", file=out)
    if cuda is not None:  # how kernels run: the driver library itself, whatever else is installed
        from ..backends.cuda_driver import driver_version

        v = driver_version()
        print(
            f"  CUDA runs through the driver API by ctypes (libcuda, CUDA {v // 1000}.{v % 1000 // 10}); "
            "PyCUDA is not needed",
            file=out,
        )
    print(f"  pycuda    {_version('pycuda')} (optional: its arrays and contexts are used where present)", file=out)
    print(f"  pyopencl  {_version('pyopencl')}", file=out)
    if "opencl" in available:
        dev = _backends.get_backend("opencl").device  # type: ignore[attr-defined]
        print(f"  OpenCL    {dev.platform.version.strip()}; driver {dev.driver_version.strip()}", file=out)
    info = cache_info()
    if info["dir"] is None:
        print("cache: disk cache off (GPUKERN_NO_CACHE)", file=out)
    else:
        print(f"cache: {info['dir']} ({info['entries']} entries, {_human(info['bytes'])})", file=out)
    return EXIT_OK


# ---------------------------------------------------------------- show
def _highlight(source: str, dialect: str, color: str) -> str:
    """Pygments colours on a terminal when it is installed; plain text otherwise."""
    if color == "never" or (color == "auto" and not sys.stdout.isatty()):
        return source
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import CLexer, CudaLexer
    except ImportError:
        return source
    lexer = CudaLexer() if dialect == "cuda" else CLexer()  # Pygments has no OpenCL lexer; C is close
    return highlight(source, lexer, TerminalFormatter())


def _split_target(target: str) -> tuple[str, str]:
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"name a kernel as FILE.py:KERNEL, not {target!r}")
    if not name.isidentifier():
        raise UsageError(f"{name!r} is not a Python name; name a kernel as FILE.py:KERNEL")
    return path, name


def cmd_show(args: argparse.Namespace) -> int:
    """Print the C one kernel became, so the user sees exactly what their Python turned into."""
    if args.resources and args.backend != "hip":
        raise UsageError(
            "--resources reads AMD code objects (VGPRs, SGPRs, LDS, scratch): use it with --backend hip; for CUDA, "
            "nvcc --resource-usage on the output of --as-compiled"
        )
    path, name = _split_target(args.target)
    module, kernels = load_file(path)
    k = getattr(module, name, None)
    if not isinstance(k, Kernel):
        names = ", ".join(x.__name__ for x in kernels) or "none"
        if k is None:
            raise UsageError(f"{path} has no kernel named {name!r} (its kernels: {names})")
        raise UsageError(f"{name!r} in {path} is a {type(k).__name__}, not a @gk.kernel (its kernels: {names})")
    positional, named = parse_arg_types(args.arg_types)
    consts = dict(parse_const(c) for c in args.const)
    try:
        example, missing = example_args(k, positional, named, consts, strict=True)
        if example is None:
            raise UsageError(f"kernel {name!r} {missing}")
        source = k.source(*example, backend=args.backend, line_directives=args.as_compiled)
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return EXIT_ERRORS
    except GpukernError as e:
        raise UsageError(f"kernel {name!r}: {str(e).splitlines()[0]}") from None
    sys.stdout.write(_highlight(source, args.backend, args.color))
    if not source.endswith("\n"):
        sys.stdout.write("\n")
    if args.resources:
        return show_resources(k, example, args)
    return EXIT_OK


def show_resources(k: Kernel, example: list[Any], args: argparse.Namespace) -> int:
    """What the kernel's code object uses on each AMD target (``--backend hip --resources``)."""
    from ..backends import hip_compile

    source = k.source(*example, backend="hip", line_directives=True)
    targets = args.arch.split(",") if args.arch else list(hip_compile.DEFAULT_TARGETS)
    for target in targets:
        try:
            found = hip_compile.resources(hip_compile.assemble(source, target))
        except CompileError as e:
            print(str(e), file=sys.stderr)
            return EXIT_ERRORS
        for name, figures in found.items():
            print(f"// {name}: {hip_compile.describe(target, figures)}")
    return EXIT_OK


# ---------------------------------------------------------------- export
def cmd_export(args: argparse.Namespace) -> int:
    """Write a kernel's C header and source that launch it from C (``gpukern.tools.export``)."""
    from .export import DEFAULT_ARCHS, DEFAULT_HIP_ARCHS, export

    path, name = _split_target(args.target)
    module, kernels = load_file(path)
    k = getattr(module, name, None)
    if not isinstance(k, Kernel):
        names = ", ".join(x.__name__ for x in kernels) or "none"
        raise UsageError(f"{path} has no kernel named {name!r} (its kernels: {names})")
    positional, named = parse_arg_types(args.signature)
    consts = dict(parse_const(c) for c in args.const)
    example, missing = example_args(k, positional, named, consts, strict=True)
    if example is None:
        raise UsageError(f"kernel {name!r} {missing}")
    default = DEFAULT_HIP_ARCHS if args.backend == "hip" else DEFAULT_ARCHS
    archs = tuple(args.arch.split(",")) if args.arch else default
    try:
        written = export(k, *example, backend=args.backend, out=args.output, archs=archs, ptx=not args.no_ptx)
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return EXIT_ERRORS
    except GpukernError as e:
        raise UsageError(f"kernel {name!r}: {str(e).splitlines()[0]}") from None
    for f in written:
        print(f"wrote {f}")
    return EXIT_OK


# ---------------------------------------------------------------- check
def check_kernel(k: Kernel, example: list[Any], dialects: Sequence[str]) -> list[str]:
    """Compiler-format diagnostics for one kernel over ``dialects`` (empty when it compiles)."""
    found: dict[str, list[str]] = {}
    for d in dialects:
        try:
            k.source(*example, backend=d)
        except CompileError as e:
            found.setdefault(str(e), []).append(d)
        except GpukernError as e:
            found.setdefault(f"{_kernel_location(k)}: error: in kernel {k.__name__}: {e}", []).append(d)
        except Exception as e:  # a bug of gpukern's, not the user's: still one diagnostic, not a crash
            msg = f"{_kernel_location(k)}: error: internal compiler error in kernel {k.__name__}: "
            found.setdefault(msg + f"{type(e).__name__}: {e} (please report this)", []).append(d)
    out = []
    for text, where in found.items():
        if len(where) < len(dialects):
            text += f"\n  note: only when generating {' and '.join(where)}"
        out.append(text)
    return out


def python_files(paths: Sequence[str]) -> list[str]:
    """The files named, and the ``.py`` files under the directories named (hidden directories,
    ``__pycache__`` and virtual environments left out), in order; a UsageError for a path that
    does not exist."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and d != "__pycache__"
                    and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
                )
                out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
        elif os.path.exists(path):
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return out


def cmd_check(args: argparse.Namespace) -> int:
    """Compile every kernel of the files (and of the .py files under the directories) for every
    dialect; a lint step for editors and CI.  A kernel it cannot compile for want of types
    (unannotated parameters, a Const without a default) is *skipped*, which fails the check
    unless ``--allow-skipped``: a CI job must not pass having compiled nothing."""
    files = python_files(args.files)
    positional, named = parse_arg_types(args.arg_types)
    consts = dict(parse_const(c) for c in args.const)
    dialects = [args.backend] if args.backend else list(DEFAULT_CHECKED)
    ok = skipped = failed = total = 0
    for path in files:
        try:
            _, kernels = load_file(path)
        except UsageError as e:
            if len(files) == 1 and path == args.files[0]:
                raise
            print(f"{e}")  # one file of several that does not import: an error, the rest still checked
            failed += 1
            continue
        total += len(kernels)
        for k in kernels:
            try:
                example, missing = example_args(k, positional, named, consts, strict=False)
            except CompileError as e:  # an annotation that is not a kernel type, a default on an array
                print(str(e))
                failed += 1
                continue
            if example is None:
                if not (args.quiet and args.allow_skipped):
                    print(
                        f"{_kernel_location(k)}: {'warning' if args.allow_skipped else 'error'}: kernel {k.__name__} "
                        f"not checked: it {missing}"
                    )
                skipped += 1
                continue
            diagnostics = check_kernel(k, example, dialects)
            for text in diagnostics:
                print(text)
            if diagnostics:
                failed += 1
            else:
                ok += 1
    where = args.files[0] if len(args.files) == 1 else f"{len(files)} files"
    if not args.quiet or failed or (skipped and not args.allow_skipped):
        print(
            f"{where}: {total} kernel{'s' if total != 1 else ''}: "
            f"{ok} ok, {failed} with errors, {skipped} not checked ({', '.join(dialects)})"
        )
    if skipped and not args.allow_skipped and not failed:
        print(
            f"{where}: {skipped} kernel{'s' if skipped != 1 else ''} not checked: give the types "
            "(--arg-types, --const) or annotate the parameters, or pass --allow-skipped"
        )
    return EXIT_ERRORS if failed or (skipped and not args.allow_skipped) else EXIT_OK


# ---------------------------------------------------------------- cache
def cmd_cache(args: argparse.Namespace) -> int:
    """List or empty the disk cache of compiled binaries."""
    info = cache_info()
    directory = info["dir"]
    if directory is None:
        print("the disk cache is off (GPUKERN_NO_CACHE is set); nothing to list or clear")
        return EXIT_OK
    if args.action == "clear":
        clear_cache()
        n = info["entries"]
        print(f"removed {n} {'entry' if n == 1 else 'entries'} ({_human(info['bytes'])}) from {directory}")
        return EXIT_OK
    n = info["entries"]
    print(f"{directory}: {n} {'entry' if n == 1 else 'entries'}, {_human(info['bytes'])}")
    import time

    from ..runtime.cache import binary_cache

    for e in binary_cache().entries():
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["time"]))
        what = e.get("kernel", "(no description: an older entry)")
        where = f"  {e['source']}" if e.get("source") else ""
        backend = f"  {e['backend']}" if e.get("backend") else ""
        print(f"  {stamp}  {what}{backend}{where}  {_human(e['bytes'])}  {e['key'][:16]}")
    return EXIT_OK


# ---------------------------------------------------------------- entry point
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpukern", description="Tools for gpukern kernel authors.")
    parser.add_argument("--version", action="version", version=f"gpukern {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("info", help="backends, devices, compilers and the cache of this machine")
    p.set_defaults(func=cmd_info)

    types_help = (
        "types of parameters without annotations: TYPE in order, or NAME=TYPE (int32, float32[:], float32[:,:])"
    )
    p = sub.add_parser("show", help="print the CUDA C or OpenCL C a kernel becomes")
    p.add_argument("target", metavar="FILE.py:KERNEL")
    p.add_argument("--backend", "-b", choices=DIALECTS, default="cuda", help="which C dialect (default cuda)")
    p.add_argument("--arg-types", nargs="+", default=[], metavar="TYPE", help=types_help)
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE", help="a Const parameter's value")
    p.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="highlight (auto: on a terminal)"
    )
    p.add_argument(
        "--as-compiled",
        action="store_true",
        help="the text as compiled: with the #line directives that name the Python lines",
    )
    p.add_argument(
        "--resources",
        action="store_true",
        help="after the source, what the code object uses per AMD target: VGPRs, SGPRs, LDS, scratch (--backend hip)",
    )
    p.add_argument("--arch", help="AMD targets for --resources, comma-separated (default gfx90a,gfx1030)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("export", help="write a kernel as a C header and source that launch it without Python")
    p.add_argument("target", metavar="FILE.py:KERNEL")
    p.add_argument(
        "--signature", "--arg-types", nargs="+", default=[], metavar="TYPE",
        help="types of parameters without annotations: " + types_help.split(": ", 1)[1],
    )  # fmt: skip
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE", help="a Const parameter's value")
    p.add_argument(
        "--backend", "-b", choices=("cuda", "opencl", "hip"), default="cuda", help="which runtime (default cuda)"
    )
    p.add_argument("--output", "-o", default=".", metavar="DIR", help="where gk_KERNEL.h and gk_KERNEL.c go")
    p.add_argument(
        "--arch",
        help="CUDA: cubins for these architectures (default sm_80,sm_90); HIP: gfx targets (default "
        "gfx908,gfx90a,gfx1030); comma-separated",
    )
    p.add_argument("--no-ptx", action="store_true", help="CUDA: no PTX for architectures newer than those")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("check", help="compile every kernel of files and directories for every dialect; print errors")
    p.add_argument("files", nargs="+", metavar="FILE.py|DIR", help="files, and directories whose .py files to check")
    p.add_argument(
        "--allow-skipped", action="store_true", help="exit 0 when kernels could not be checked for want of types"
    )
    p.add_argument(
        "--backend", "-b", choices=DIALECTS, help="check one dialect only (default: cuda and opencl)"
    )
    p.add_argument("--arg-types", nargs="+", default=[], metavar="TYPE", help=types_help)
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE", help="a Const parameter's value")
    p.add_argument("--quiet", "-q", action="store_true", help="print only errors")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("cache", help="list or clear the compiled-binary cache")
    p.add_argument("action", nargs="?", choices=("list", "clear"), default="list")
    p.set_defaults(func=cmd_cache)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (0 ok, 1 kernel errors, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except UsageError as e:
        print(f"gpukern: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gpukern show ... | head`
        return EXIT_OK
