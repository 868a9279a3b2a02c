"""``numba.vectorize``: a scalar function made a ufunc-like object, on the GPU for ``target="cuda"``.

``@vectorize(["float32(float32, float32)", ...], target="cuda") def f(a, b): return ...`` gives an
object called as a NumPy ufunc is: ``f(x, y)``, ``f(x, 2.0, out=d_out)``, ``f(x, y, stream=s)``.  Its
arguments broadcast against each other; the first signature that every argument converts to safely
(NumPy's ``can_cast``; a Python number by the smallest type that holds it, as NumPy's ufuncs did) is
the one used: each argument is converted to its type, the function (a device function, compiled with
the Numba layer's rules) runs once an element in one launch, and the result has the signature's
type.  Given host arrays it returns a host array; given a device array (``cuda.to_device``), a device
array, as Numba's CUDA ufuncs do.  ``f.reduce(a)`` reduces a 1-d array with a binary one
(``cuda.reduce``).  ``target="cpu"`` (or ``"parallel"``) gives NumPy's ``np.vectorize`` of the
Python function with the signature's result type: the same values, on the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import empty, to_device
from ..errors import LaunchError
from ..kernel import kernel
from ..language.core import block_dim, block_idx, func, thread_idx
from ..runtime.array import DeviceArray
from ..types import Signature
from . import types
from .reduce import Reduce
from .rules import NUMBA_RULES

THREADS = 256
MAX_ARGS = 8  # the inputs an element-wise kernel here takes


def parse(sig: Any) -> tuple[np.dtype, tuple[np.dtype, ...]]:
    """(result, arguments) of a signature (``types.signature``: ``"float32(float32, int32)"`` or
    ``float32(float32, int32)``), each a scalar type's dtype."""
    parsed = types.signature(sig)
    if parsed is None:
        raise LaunchError(f"vectorize: a signature is written 'float32(float32, float32)', not {sig!r}")
    if parsed.result is None or any(a is None for a in parsed.args):
        raise LaunchError(f"vectorize: a signature's types are scalar types (float32, int64, ...): {sig!r}")
    return np.dtype(parsed.result.dtype), tuple(np.dtype(a.dtype) for a in parsed.args)


def python_number(a: Any) -> bool:
    return isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic)


def takes(a: Any, want: np.dtype, weak: bool) -> bool:
    """Whether argument ``a`` converts safely to ``want``: an array's (or NumPy scalar's) type by
    ``np.can_cast``; a Python number beside arrays by its kind alone, as NumPy 2 resolves a ufunc's
    types (a weak scalar: an int fits any number type, a float any inexact one)."""
    if weak and python_number(a):
        kind = "b" if isinstance(a, bool) else "iu" if isinstance(a, int) else "f" if isinstance(a, float) else "c"
        order = {"b": "biufc", "iu": "iufc", "f": "fc", "c": "c"}[kind]
        return want.kind in order
    return bool(np.can_cast(np.asarray(a).dtype if not isinstance(a, DeviceArray) else a.dtype, want, "safe"))


def _map_kernel(op: Any, nin: int) -> Any:
    """out[i] = op(ins[0][i], ..., ins[nin - 1][i]) for i < n, a thread an element."""
    NIN = nin

    @kernel(**NUMBA_RULES)  # (the function is the user's Numba code)
    def ufunc_map(out, ins, n):
        i = block_idx.x * block_dim.x + thread_idx.x
        if i < n:
            if NIN == 1:
                out[i] = op(ins[0][i])
            elif NIN == 2:
                out[i] = op(ins[0][i], ins[1][i])
            elif NIN == 3:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i])
            elif NIN == 4:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i], ins[3][i])
            elif NIN == 5:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i], ins[3][i], ins[4][i])
            elif NIN == 6:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i], ins[3][i], ins[4][i], ins[5][i])
            elif NIN == 7:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i], ins[3][i], ins[4][i], ins[5][i], ins[6][i])
            else:
                out[i] = op(ins[0][i], ins[1][i], ins[2][i], ins[3][i], ins[4][i], ins[5][i], ins[6][i], ins[7][i])

    return ufunc_map


class CUDAUFunc:
    """What ``@vectorize(signatures, target="cuda")`` gives: see the module's docstring."""

    def __init__(self, fn: Any, signatures: list[Any]) -> None:
        self.py_func = fn
        self.__name__ = getattr(fn, "__name__", "ufunc")
        self.types = [parse(s) for s in signatures]
        counts = {len(args) for _, args in self.types}
        if len(counts) != 1:
            raise LaunchError(f"vectorize: the signatures of {self.__name__} take different numbers of arguments")
        self.nin = counts.pop()
        if not 1 <= self.nin <= MAX_ARGS:
            raise LaunchError(f"vectorize: 1 to {MAX_ARGS} arguments, not {self.nin} ({self.__name__})")
        self.nout = 1
        self._device = func(fn)
        self._kernel = _map_kernel(self._device, self.nin)
        self._reduce: Reduce | None = None  # (made at the first .reduce: its kernels are kept in it)

    def _pick(self, args: tuple[Any, ...]) -> tuple[np.dtype, tuple[np.dtype, ...]]:
        weak = not all(python_number(a) for a in args)  # (Python numbers alone: NumPy's default types)
        for result, want in self.types:
            if all(takes(a, w, weak) for a, w in zip(args, want)):
                return result, want
        have = ", ".join(type(a).__name__ if python_number(a) else str(np.asarray(a).dtype) for a in args)
        sigs = ", ".join(f"{r}({', '.join(map(str, w))})" for r, w in self.types)
        raise LaunchError(
            f"{self.__name__}: no signature takes arguments of ({have}); it has {sigs}: convert the arguments "
            "(a.astype(np.float32)) or add a signature for them"
        )

    def __call__(self, *args: Any, out: Any = None, stream: Any = 0) -> Any:
        if len(args) != self.nin:
            raise LaunchError(f"{self.__name__} takes {self.nin} argument(s), not {len(args)}")
        result, want = self._pick(args)
        try:
            shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        except ValueError:
            shapes = ", ".join(str(np.shape(a)) for a in args)
            raise LaunchError(f"{self.__name__}: the arguments' shapes {shapes} do not broadcast") from None
        on_device = any(isinstance(a, DeviceArray) for a in (*args, out))
        n = int(np.prod(shape))
        ins = []
        for a, t in zip(args, want):
            if isinstance(a, DeviceArray) and a.shape == shape and a.dtype == t:
                ins.append(a.ravel())
            else:  # (converted and broadcast on the host: a device array that needs it comes back first)
                host = a.get() if isinstance(a, DeviceArray) else np.asarray(a)
                if host.dtype.kind not in "biufc":
                    raise LaunchError(f"{self.__name__}: an argument of {host.dtype} is no number")
                ins.append(to_device(np.ascontiguousarray(np.broadcast_to(host.astype(t), shape)).reshape(-1)))
        dout = empty(shape, result) if not isinstance(out, DeviceArray) else out
        if out is not None and (np.shape(out) != shape or np.dtype(out.dtype) != result):
            raise LaunchError(
                f"{self.__name__}: out is {out.dtype}{list(out.shape)}, the result {result}{list(shape)}"
            )
        if n:
            grid = -(-n // THREADS)
            launch = self._kernel[grid, THREADS, stream, 0] if stream else self._kernel[grid, THREADS]
            launch(dout.ravel(), tuple(ins), n)
        if isinstance(out, np.ndarray):
            out[...] = dout.get()
            return out
        if on_device:
            return dout
        host = dout.get()
        return host[()] if host.ndim == 0 else host

    def reduce(self, arr: Any, stream: Any = 0) -> Any:
        """A 1-d array reduced with this binary ufunc (``cuda.reduce``'s way)."""
        if self.nin != 2:
            raise LaunchError(f"{self.__name__}.reduce: a ufunc of two arguments reduces, not of {self.nin}")
        if self._reduce is None:
            self._reduce = Reduce(self.py_func)
        return self._reduce(arr, stream=stream)


def vectorize(signatures: Any = None, target: str = "cpu", **options: Any) -> Any:
    """``numba.vectorize``: ``@vectorize(sigs, target="cuda")`` gives a ``CUDAUFunc``; the CPU
    targets ``np.vectorize`` of the function (its first signature's result type)."""
    if callable(signatures) and not isinstance(signatures, (str, Signature)):
        return vectorize(None, target, **options)(signatures)
    sigs = [signatures] if isinstance(signatures, (str, Signature)) else list(signatures or [])

    def make(fn: Any) -> Any:
        if target == "cuda":
            if not sigs:
                raise LaunchError(
                    f"vectorize({fn.__name__}, target='cuda'): give its signatures "
                    "(@vectorize(['float32(float32, float32)'], target='cuda'))"
                )
            return CUDAUFunc(fn, sigs)
        if target in ("cpu", "parallel"):
            otypes = [parse(sigs[0])[0]] if sigs else None
            return np.vectorize(fn, otypes=otypes)
        raise LaunchError(f"vectorize: target 'cuda', 'cpu' or 'parallel', not {target!r}")

    return make
