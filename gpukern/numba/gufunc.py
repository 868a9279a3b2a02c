"""``numba.guvectorize(..., target="cuda")``: a generalized ufunc on the GPU.

    @guvectorize([void(float32[:, :], float32[:, :], float32[:, :])], "(m,n),(n,p)->(m,p)", target="cuda")
    def matmulcore(A, B, C): ...          # the core, over one element of the loop dimensions

The object is called as NumPy's gufuncs are: ``f(A, B)`` (the outputs made and returned), ``f(A, B,
C)`` or ``f(A, B, out=C)`` (written into), ``stream=``.  An argument's trailing dimensions are its
*core* dimensions (the layout's: each name is one size across the arguments), its leading ones its
*loop* dimensions, broadcast against the other arguments'.  One launch runs the core once per loop
element, a thread each, on views of the arguments (``a[i, :, :]``); an argument the signature
declares a scalar (``f8`` in ``"(f8, f8[:])"``) gets the element itself, and a core of no dimensions
declared an array (``f8[:]`` for ``()``) a one-element view, as in Numba.  The first signature whose
input types every input converts to safely is used.  Given host arrays it returns host arrays; given a
device array (``cuda.to_device``), device arrays.  The loop kernel is written as Python text (it has
one ``:`` per core dimension) and compiled as any kernel: ``source()`` shows it.
"""

from __future__ import annotations

import itertools
import linecache
import re
from typing import Any

import numpy as np

from .. import types as _t
from ..backends import empty, to_device
from ..errors import LaunchError
from ..kernel import kernel
from ..language.core import block_dim, block_idx, func, thread_idx
from ..runtime.array import DeviceArray
from . import types
from .rules import NUMBA_RULES
from .vectorize import python_number, takes

THREADS = 128  # threads a block (Numba's ``max_blocksize`` lowers it)
_NAMES = itertools.count()


def parse_layout(layout: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``"(m,n),(n,p)->(m,p)"``: each input's and each output's core dimension names."""
    text = layout.replace(" ", "")
    if text.count("->") != 1:
        raise LaunchError(f"guvectorize: a layout is written '(m,n),(n)->(m)', not {layout!r}")
    sides = text.split("->")
    groups = []
    for side in sides:
        found = re.fullmatch(r"(\((\w+(,\w+)*)?\))(,\((\w+(,\w+)*)?\))*", side)
        if found is None:
            raise LaunchError(f"guvectorize: a layout is written '(m,n),(n)->(m)', not {layout!r}")
        groups.append([tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([\w,]*)\)", side)])
    return groups[0], groups[1]


def parse_signature(sig: Any) -> list[tuple[np.dtype, int | None]]:
    """``void(float32[:, :], int64)``, ``"void(float32[:, :], int64)"`` or ``"(f8, f8[:])"``: each
    argument's (dtype, dimensions or None) (``types.argument_types``)."""
    split = types.split_signature(sig)
    result = sig.result if isinstance(sig, _t.Signature) else None if split is None else split[0]
    if isinstance(result, _t.ScalarType) or result not in (None, "", "void", "none") and split is not None:
        name = result.name if isinstance(result, _t.ScalarType) else result
        raise LaunchError(
            f"guvectorized functions cannot return values: {sig!r} specifies {name} return type; write the "
            "results into the output arguments"
        )
    args = types.argument_types(sig)
    if args is None:
        raise LaunchError(f"guvectorize: a signature is written 'void(float32[:], float32[:])', not {sig!r}")
    out = []
    for t in args:
        if isinstance(t, _t.ArrayType):
            out.append((np.dtype(t.elem.dtype), t.ndim))
        elif isinstance(t, _t.ScalarType):
            out.append((np.dtype(t.dtype), None))
        else:
            raise LaunchError(f"guvectorize: {sig!r} has an argument type it cannot read")
    return out


def _loop_kernel(core: Any, ranks: list[int | None], name: str) -> Any:
    """The kernel running ``core`` once per loop element: argument k is ``a_k[i]`` (a scalar) or
    ``a_k[i, :, ...]`` with one ``:`` per dimension of its view (Python text, compiled as written)."""
    params = [f"a{k}" for k in range(len(ranks))]
    views = [f"a{k}[i]" if r is None else f"a{k}[i{', :' * r}]" for k, r in enumerate(ranks)]
    text = (
        f"def {name}(n, {', '.join(params)}):\n"
        "    i = block_idx.x * block_dim.x + thread_idx.x\n"
        "    if i < n:\n"
        f"        core({', '.join(views)})\n"
    )
    filename = f"<gpukern guvectorize {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # (its source, for gpukern)
    scope = {"core": core, "block_idx": block_idx, "block_dim": block_dim, "thread_idx": thread_idx}
    exec(compile(text, filename, "exec"), scope)  # noqa: S102 - gpukern's own text, above
    return kernel(**NUMBA_RULES)(scope[name])


def _dtype(a: Any) -> np.dtype:
    return a.dtype if isinstance(a, DeviceArray) else np.asarray(a).dtype


class CUDAGUFunc:
    """What ``@guvectorize(signatures, layout, target="cuda")`` gives: see the module's docstring."""

    def __init__(self, fn: Any, signatures: list[Any], layout: str) -> None:
        self.py_func = fn
        self.__name__ = getattr(fn, "__name__", "gufunc")
        self.ins, self.outs = parse_layout(layout)
        self.nin, self.nout = len(self.ins), len(self.outs)
        self.types = [parse_signature(s) for s in signatures]
        self.max_blocksize = THREADS
        for sig, args in zip(signatures, self.types):
            if len(args) != self.nin + self.nout:
                raise LaunchError(
                    f"guvectorize({self.__name__}): {sig!r} has {len(args)} arguments; the layout {layout!r} "
                    f"{self.nin + self.nout}"
                )
            for (_, nd), dims in zip(args, self.ins + self.outs):
                if nd is not None and nd != len(dims) and not (nd == 1 and not dims):
                    raise LaunchError(
                        f"guvectorize({self.__name__}): an argument of {nd} dimension(s) in {sig!r} has the core "
                        f"({','.join(dims)}) in the layout {layout!r}"
                    )
            for dt, nd in args[self.nin :]:
                if nd is None:
                    raise LaunchError(f"guvectorize({self.__name__}): an output is an array ({dt}[:]), in {sig!r}")
        self._core = func(fn)
        self._kernels: dict[int, Any] = {}

    def _kernel(self, which: int) -> Any:
        if which not in self._kernels:
            ranks = [nd for _, nd in self.types[which]]
            self._kernels[which] = _loop_kernel(self._core, ranks, f"{self.__name__}_loop_{next(_NAMES)}")
        return self._kernels[which]

    def _pick(self, args: tuple[Any, ...]) -> int:
        weak = not all(python_number(a) for a in args)  # (as vectorize: a Python number beside arrays by its kind)
        for k, sig in enumerate(self.types):
            if all(takes(a, t, weak) for a, (t, _) in zip(args, sig)):
                return k
        for k, sig in enumerate(self.types):  # (else, as Numba: the first that takes them within their kind)
            if all(np.can_cast(_dtype(a), t, "same_kind") for a, (t, _) in zip(args, sig)):
                return k
        have = ", ".join(str(_dtype(a)) for a in args)
        raise LaunchError(
            f"{self.__name__}: no signature takes inputs of ({have}); convert them (a.astype(np.float32)) or add "
            "a signature for them"
        )

    def __call__(self, *args: Any, out: Any = None, stream: Any = 0) -> Any:
        if len(args) == self.nin + self.nout:
            if out is not None:
                raise LaunchError("cannot specify argument 'out' as both positional and keyword")
            args, out = args[: self.nin], args[self.nin :]
        if len(args) != self.nin:
            k = len(args)
            raise LaunchError(
                f"{self.__name__}: gufunc accepts {self.nin} positional arguments or {self.nin + self.nout} "
                f"positional arguments (its inputs, or its inputs and outputs). Got {k} positional "
                f"argument{'s' if k != 1 else ''}."
            )
        outs = None if out is None else (list(out) if isinstance(out, (tuple, list)) else [out])
        if outs is not None and len(outs) != self.nout:
            raise LaunchError(f"{self.__name__} has {self.nout} output(s); out= gives {len(outs)}")
        which = self._pick(args)
        sig = self.types[which]
        sizes: dict[str, int] = {}
        loops = []
        for a, dims, k in zip((*args, *(outs or ())), self.ins + self.outs, itertools.count()):
            shape = np.shape(a) if not isinstance(a, DeviceArray) else a.shape
            if len(shape) < len(dims):
                raise LaunchError(
                    f"{self.__name__}: argument {k} has {len(shape)} dimension(s), fewer than its core "
                    f"({','.join(dims)})"
                )
            core = shape[len(shape) - len(dims) :]
            for d, size in zip(dims, core):
                if sizes.setdefault(d, size) != size:
                    raise LaunchError(f"{self.__name__}: the core dimension {d} is {sizes[d]} and {size}")
            loops.append(shape[: len(shape) - len(dims)])
        try:
            loop = np.broadcast_shapes(*loops[: self.nin])
        except ValueError:
            raise LaunchError(
                f"{self.__name__}: the inputs' loop dimensions {loops[: self.nin]} do not broadcast"
            ) from None
        missing = [d for dims in self.outs for d in dims if d not in sizes]
        if missing:
            raise LaunchError(f"{self.__name__}: the output dimension {missing[0]} is no input's: give out=")
        n = int(np.prod(loop))
        on_device = any(isinstance(a, DeviceArray) for a in (*args, *(outs or ())))
        launch_args = []
        for a, dims, (t, nd) in zip(args, self.ins, sig):
            core = tuple(sizes[d] for d in dims)
            flat = (n,) if nd is None else (n, *(core or (1,)))  # (a core of no dimensions, as an array: 1 element)
            if isinstance(a, DeviceArray) and a.shape == loop + core and a.dtype == t:
                launch_args.append(a.reshape(flat))
                continue
            host = a.get() if isinstance(a, DeviceArray) else np.asarray(a)
            if host.dtype.kind not in "biufc":
                raise LaunchError(f"{self.__name__}: an argument of {host.dtype} is no number")
            full = np.ascontiguousarray(np.broadcast_to(host.astype(t), loop + core))
            launch_args.append(to_device(full.reshape(flat)))
        results = []
        for k, (dims, (t, _)) in enumerate(zip(self.outs, sig[self.nin :])):
            core = tuple(sizes[d] for d in dims)
            given = None if outs is None else outs[k]
            fits = given is not None and tuple(np.shape(given))[len(np.shape(given)) - len(core) :] == core
            if fits:  # (its loop dimensions: the loop's, but for dimensions of 1 -- Numba's scalar-as-array)
                have = tuple(np.shape(given))[: len(np.shape(given)) - len(core)]
                fits = int(np.prod(have)) == n and np.broadcast_shapes(have, loop) == loop
            if given is not None and (not fits or np.dtype(given.dtype) != t):
                raise LaunchError(
                    f"{self.__name__}: out is {given.dtype}{list(np.shape(given))}, the result {t}{list(loop + core)}"
                )
            d = given if isinstance(given, DeviceArray) else empty(loop + core if given is None else np.shape(given), t)
            results.append((d, given))
            launch_args.append(d.reshape((n, *(core or (1,)))))
        if n:
            threads = max(1, min(int(self.max_blocksize), THREADS))
            grid = -(-n // threads)
            kern = self._kernel(which)
            launch = kern[grid, threads, stream, 0] if stream else kern[grid, threads]
            launch(n, *launch_args)
        back = []
        for d, given in results:
            if isinstance(given, np.ndarray):
                given[...] = d.get()
                back.append(given)
            else:
                back.append(d if on_device else d.get())
        return back[0] if self.nout == 1 else tuple(back)


def guvectorize(signatures: Any, layout: str, target: str = "cpu", **options: Any) -> Any:
    """``numba.guvectorize(signatures, layout, target="cuda")``: a ``CUDAGUFunc``; the CPU targets are
    NumPy's ``np.vectorize`` with the layout as its ``signature`` (the outputs returned, not written)."""
    sigs = [signatures] if isinstance(signatures, (str, _t.Signature)) else list(signatures)
    if options.get("nopython", True) is not True:
        raise LaunchError("nopython flag must be True")
    unknown = sorted(set(options) - {"nopython", "fastmath", "cache", "identity", "writable_args"})
    if unknown:
        raise LaunchError(f"The following target options are not supported: {', '.join(map(repr, unknown))}")

    def make(fn: Any) -> Any:
        if target == "cuda":
            return CUDAGUFunc(fn, sigs, layout)
        raise LaunchError(
            f"guvectorize({fn.__name__}, target={target!r}): gpukern's generalized ufuncs run on the GPU "
            "(target='cuda'); on the host, call the Python function over the loop yourself"
        )

    return make
