"""``@kernel``: specialisation on argument types and constants, and launching.

A kernel is compiled once per *signature*: the element type and rank of each
array argument, the type of each scalar, and the value of each ``Const``.  The
typed IR of a signature is a ``Variant``; backends compile a variant's C source
and keep the binary with it.
"""

from __future__ import annotations

import inspect
import numbers
import re
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .backends import get_backend, selection
from .errors import GpukernError, KernelSyntaxError, KernelTypeError, LaunchError, is_gpukern_file, user_frames
from .frontend.compiler import Compiler
from .ir import nodes as ir
from .ir.source import ParsedFunction, lambda_loc, parse_function
from .language import core as lang
from .runtime.array import DeviceArray, stream_handle
from .runtime.compile_options import CompileOptions
from .runtime.foreign import contiguous_copy, write_back
from .runtime.plan import (
    ArrayParam,
    ConstParam,
    InferredParam,
    Param,
    Plan,
    ScalarParam,
    TupleKey,
    make_plan,
    no_plan,
)
from .runtime.variant import Variant
from .semantics.values import Rules, Static
from .semantics.warp import WARP_SIZE
from .types import (
    ANY_CONST,
    ArrayType,
    ConstType,
    ScalarType,
    StorageType,
    _ArrayAnnotation,
    _ConstAnnotation,
    from_dtype,
    type_named,
)

_all_kernels: weakref.WeakSet[Kernel] = weakref.WeakSet()


def _dims(value: Any, what: str) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        t = (int(value),)
    elif (
        isinstance(value, tuple)
        and 1 <= len(value) <= 3
        and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
    ):
        t = tuple(int(v) for v in value)
    else:
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    if any(v <= 0 for v in t):
        raise LaunchError(f"{what} must be positive in every dimension, not {value!r}")
    return (t + (1, 1))[:3]  # type: ignore[return-value]


def _plain(part: Any) -> bool:
    """Whether a grid or block is an int or a tuple of ints (not a bool, a float, a NumPy int):
    only such may find its launch by equality, since 2.0 == 2 and True == 1 and they hash alike."""
    return type(part) is int or (type(part) is tuple and all(type(v) is int for v in part))


def configured(launch: Any, tool: str) -> Launch:
    """``launch`` as a ``kernel[grid, block]``, or a LaunchError saying that ``tool`` wants one."""
    if not isinstance(launch, Launch):
        what = f"the kernel {launch.__name__} itself" if isinstance(launch, Kernel) else repr(launch)
        raise LaunchError(f"{tool}() takes a configured launch, kernel[grid, block], not {what}")
    return launch


class Launch:
    """``kernel[grid, block]``: a configured launch, called with the kernel's arguments.

    The first call goes through every check; it leaves a ``plan`` (``gpukern.runtime.plan``) whose
    ``fast`` path makes the next calls with arguments of the same kinds cost about what a
    driver call costs.  ``plan.describe()`` says what it tests.
    """

    __slots__ = ("kernel", "grid", "block", "plan", "fast", "shared", "stream", "plans")

    def __init__(
        self,
        kernel: Kernel,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared: int | None = None,
        stream: Any = None,
    ):
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.shared = shared  # dynamic shared memory bytes per block (k[grid, block, shared]); None: not given
        self.stream = stream  # a gpukern.Stream or another library's stream (k[grid, block, stream]); None: not given
        self.plan: Plan | None = None
        self.fast: Callable[[tuple[Any, ...]], bool] = no_plan
        # the last plan per backend choice and device (``selection``'s token): a program that
        # launches on two devices in turn finds each one's plan again
        self.plans: dict[object, Plan] = {}

    def __call__(self, *args: Any, **options: Any) -> None:
        """Launch; ``backend=`` overrides the current one, ``check=`` the simulator's checking."""
        try:
            if not options and self.fast(args):  # (the fewest steps to the plan: options are rare)
                return
            self._launch(args, options)
        except GpukernError as e:  # the user's frames and the message (errors.user_frames)
            raise user_frames(e) from e.__cause__

    def _launch(self, args: tuple[Any, ...], options: dict[str, Any]) -> None:
        spelt = bool(options)  # (else the fast path refused the call above)
        backend: str | None = options.pop("backend", None)
        check: bool | None = options.pop("check", None)
        if options:
            raise LaunchError(_misplaced_options(self.kernel.__name__, options))
        if backend is None and check is None:
            if spelt and self.fast(args):  # backend=None or check=None spelt out
                return
            kept = self.plans.get(selection[0])
            if kept is not None and kept is not self.plan and kept.fast(args):
                self.plan, self.fast = kept, kept.fast
                return
        b, variant, handle = self.kernel.launch(self.grid, self.block, args, backend, check, self.shared, self.stream)
        if backend is None and check is None and not variant.tuples:  # (tuples: the checked path each time)
            self.plan = make_plan(variant, b, self.grid, self.block, args, selection, self.shared or 0, handle)
            self.fast = no_plan if self.plan is None else self.plan.fast
            if self.plan is not None:
                if len(self.plans) >= 16:
                    self.plans.clear()
                self.plans[selection[0]] = self.plan


class CompletingLaunch(Launch):
    """The launch of a kernel whose last parameters have defaults: the arguments left out take them
    (the launches of other kernels make no such step)."""

    __slots__ = ()

    def __call__(self, *args: Any, **options: Any) -> None:
        super().__call__(*self.kernel.complete(args), **options)


def _misplaced_options(name: str, options: dict[str, Any]) -> str:
    """What to write instead of launch options given as keywords (Numba's and CuPy's spellings)."""
    said = ", ".join(f"{k}=" for k in options)
    return (
        f"{name}: a launch takes no {said} keyword; give the stream and the dynamic shared memory in "
        f"the brackets: {name}[grid, block, shared_bytes](...), {name}[grid, block, stream](...) or "
        f"{name}[grid, block, stream, shared_bytes](...); the keywords a launch takes are backend= and check="
    )


class Kernel(lang.KernelObject):
    """A GPU kernel written as a restricted Python function (see ``gpukern.kernel``)."""

    def __init__(self, fn: Any, options: CompileOptions | None = None):
        if not inspect.isfunction(fn):
            raise KernelTypeError(f"@kernel decorates a function, not {fn!r}")
        self.fn = fn
        self.options = options or CompileOptions()  # every variant is compiled with them
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._parsed: ParsedFunction | None = None
        self.scope: dict[str, Any] = {}  # the decorating scope's names its annotations use (``kernel``)
        self._params: list[Param] | None = None
        self._defaults: tuple[Any, ...] = ()
        self.variants: dict[tuple[Any, ...], Variant] = {}
        self._launches: dict[Any, Launch] = {}
        self._sized_launches: dict[Any, Launch] = {}  # k[grid, block, shared_bytes] and the 4-item form
        # a compatibility layer's conversion of the launch's arguments before they are typed (Numba's
        # declared signature: a scalar converted to the type it names); None: taken as given
        self.convert_args: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None
        _all_kernels.add(self)

    def __repr__(self) -> str:
        return f"<gpukern kernel {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise LaunchError(f"launch a kernel with a grid and block: {self.__name__}[grid, block](...)")

    # ------------------------------------------------------------ declaration
    @property
    def parsed(self) -> ParsedFunction:
        if self._parsed is None and getattr(self.fn, "__name__", "") == "<lambda>":
            raise KernelSyntaxError(
                "a kernel must be a def function, not a lambda",
                lambda_loc(self.fn),
                "define it with def (a device function, as cuda.reduce's, may be a one-line lambda)",
            )
        if self._parsed is None:
            self._parsed = parse_function(self.fn)
        return self._parsed

    @property
    def params(self) -> list[Param]:
        if self._params is None:
            signature = inspect.signature(self.fn).parameters
            params = [self._param_spec(name, p) for name, p in signature.items()]
            self._defaults = tuple(p.default for p in signature.values() if p.default is not p.empty)
            for spec, p in zip(params, signature.values()):
                if p.default is not p.empty and spec.kind in ("array", "infer_array"):
                    raise KernelSyntaxError(
                        f"array parameter {spec.name!r} cannot have a default: pass the array at each launch",
                        self.parsed.loc(next(a for a in self.parsed.tree.args.args if a.arg == spec.name)),
                    )
            self._params = params
        return self._params

    @property
    def defaults(self) -> tuple[Any, ...]:
        """The defaults of the last parameters (a ``Const`` or a scalar's), which a launch may leave out."""
        _ = self.params  # (parsed on first use: it sets the defaults)
        return self._defaults

    @property
    def completes(self) -> bool:
        """Whether a launch first completes (``complete``) its arguments."""
        return bool(self.defaults) or self.convert_args is not None

    def complete(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with the defaults of the parameters they leave out (as a Python call would take them),
        converted by ``convert_args`` where a compatibility layer set it."""
        if self.convert_args is not None:
            args = self.convert_args(args)
        n, d = len(self.params), self._defaults
        if len(args) >= n or len(args) < n - len(d):
            return args  # (signature_of says what is wrong with a count that does not fit)
        return args + d[len(d) - (n - len(args)) :]

    def _param_spec(self, name: str, p: inspect.Parameter) -> Param:
        ann = p.annotation
        node = next((a for a in self.parsed.tree.args.args if a.arg == name), self.parsed.tree)
        loc = self.parsed.loc(node)
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise KernelSyntaxError(
                f"kernel parameter {name!r} must be a plain positional parameter (a Const or a scalar one may "
                "have a default)",
                loc,
            )
        if isinstance(ann, str):
            try:
                scope = {**self.scope, **dict(self.parsed.closure)}
                ann = eval(ann, self.fn.__globals__, scope)  # noqa: S307 - the user's own annotation
            except Exception as e:
                raise KernelTypeError(f"cannot evaluate the annotation of {name!r}: {e}", loc) from None
        if ann is p.empty:
            return InferredParam(name, "infer")
        if isinstance(ann, ArrayType):
            return ArrayParam(name, "array", ann)
        if ann is _ArrayAnnotation:
            return ArrayParam(name, "infer_array")
        if type_named(ann) is not None:
            return ScalarParam(name, "scalar", type_named(ann))
        if isinstance(ann, ConstType):
            return ConstParam(name, "const", ann)
        if ann is _ConstAnnotation:
            return ConstParam(name, "const", ANY_CONST)
        try:
            return ScalarParam(name, "scalar", from_dtype(ann))
        except GpukernError:
            raise KernelTypeError(
                f"parameter {name!r} has annotation {ann!r}, which is not a kernel type",
                loc,
                "use Array[float32], a scalar type such as int32, or Const[int]",
            ) from None

    # ------------------------------------------------------------ specialisation
    def signature_of(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The specialisation key of a call: per parameter, what the variant depends on (``args``
        completed with the defaults)."""
        params = self.params
        if len(args) != len(params):
            least = len(params) - len(self._defaults)
            takes = f"{least} to {len(params)}" if self._defaults else f"{len(params)}"
            raise LaunchError(f"{self.__name__} takes {takes} arguments but {len(args)} were given")
        try:
            return tuple(p.key(a) for p, a in zip(params, args))
        except LaunchError as e:
            raise LaunchError(f"{self.__name__}: {e}") from None

    def variant(self, key: tuple[Any, ...], lanes: int = WARP_SIZE) -> Variant:
        """The variant of specialisation ``key``, compiled for warps of ``lanes`` threads (32; the
        simulator's wave64 mode compiles its own, of 64: ``Rules.lanes``)."""
        cached = key if lanes == WARP_SIZE else (key, lanes)
        v = self.variants.get(cached)
        if v is None:
            v = self.variants[cached] = self._compile(key, lanes)
        return v

    def _compile(self, key: tuple[Any, ...], lanes: int = WARP_SIZE) -> Variant:
        bindings: dict[str, Any] = {}
        consts = []
        for spec, k in zip(self.params, key):
            if isinstance(k, ArrayType):
                bindings[spec.name] = ir.ArrayRef(spec.name, k)
            elif isinstance(k, ScalarType):
                bindings[spec.name] = ir.Var(spec.name, k)
            elif isinstance(k, TupleKey):
                n = len(list(k.leaves()))
                taken = set(self.fn.__code__.co_varnames) | set(self.fn.__code__.co_names)
                stem = spec.name
                while any(f"{stem}_{j}" in taken for j in range(n)):
                    stem += "_"  # the items' names clash with none of the kernel's
                bindings[spec.name] = _tuple_binding(stem, k, iter(range(n)))
            else:
                bindings[spec.name] = Static(k[2])
                consts.append(f"{spec.name}={k[2]!r}")
        description = ", ".join([self.__name__] + consts)
        rules = Rules(
            casting=self.options["casting"],
            bools=self.options["bools"],
            negative_indices=self.options["negative_indices"],
            unbound=self.options["unbound"],
            literals=self.options["literals"],
            lanes=lanes,
        )
        program = Compiler(rules).lower_kernel(self.parsed, bindings, description)
        captured = tuple(ref.type for ref, _ in program.captured)  # the module's device arrays, after the arguments
        with ir.deep_recursion():
            program.kernel.kernel_params = _kernel_params(program.kernel, key + captured)
        return Variant(self, key, program, key, options=self.options)

    # ------------------------------------------------------------ user API
    def __getitem__(self, config: Any) -> Launch:
        """The launch of a configuration; one per (grid, block), cached under its plain spellings
        too (``k[2, 4]`` and ``k[(2, 1, 1), (4, 1, 1)]``), never under a float's or a bool's."""
        try:
            launch = self._launches.get(config)
        except TypeError:  # unhashable: a list or an array; _dims explains what is wanted
            launch = None
        if launch is not None and _plain(config[0]) and _plain(config[1]):  # it equals a cached 2-tuple
            return launch
        if isinstance(config, tuple) and len(config) in (3, 4):
            return self._sized_launch(config)
        if not isinstance(config, tuple) or len(config) != 2:
            raise LaunchError(
                f"launch as {self.__name__}[grid, block](...), with grid and block ints or tuples, or with "
                f"dynamic shared memory as {self.__name__}[grid, block, shared_bytes](...) or "
                f"{self.__name__}[grid, block, stream, shared_bytes](...)"
            )
        dims = (_dims(config[0], "grid"), _dims(config[1], "block"))
        launch = self._launches.get(dims)
        if launch is None:
            launch = (CompletingLaunch if self.completes else Launch)(self, *dims)
        if len(self._launches) < 256:
            self._launches[dims] = launch
            if _plain(config[0]) and _plain(config[1]):
                self._launches[config] = launch
        return launch

    def _sized_launch(self, config: tuple[Any, ...]) -> Launch:
        """``k[grid, block, shared_bytes]``, ``k[grid, block, stream]`` or ``k[grid, block, stream,
        shared_bytes]`` (Numba's order): a launch with dynamic shared memory or on a stream, cached
        apart from the 2-item ones (so their lookup does no more work), under its plain spelling only."""
        try:
            launch = self._sized_launches.get(config)
        except TypeError:
            launch = None
        if launch is not None and _plain(config[0]) and _plain(config[1]) and type(config[-1]) is int:
            return launch
        if launch is not None and _plain(config[0]) and _plain(config[1]) and launch.stream is config[2]:
            return launch
        nbytes: Any = None
        if len(config) == 4:
            stream, nbytes = config[2], config[3]
        elif isinstance(config[2], numbers.Number):  # shared bytes (checked below); a stream is no number
            stream, nbytes = None, config[2]
        else:
            stream = config[2]
        if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool) and stream == 0:
            stream = None  # Numba's spelling of the default stream
        if nbytes is not None and (not isinstance(nbytes, (int, np.integer)) or isinstance(nbytes, bool) or nbytes < 0):
            raise LaunchError(
                f"{self.__name__}[grid, block, shared_bytes]: shared_bytes (the dynamic shared memory per block) "
                f"must be a non-negative int, not {nbytes!r}"
            )
        shared = None if nbytes is None else int(nbytes)
        cls = CompletingLaunch if self.completes else Launch
        launch = cls(self, _dims(config[0], "grid"), _dims(config[1], "block"), shared, stream)
        if len(self._sized_launches) < 256 and _plain(config[0]) and _plain(config[1]):
            try:
                self._sized_launches[config] = launch
            except TypeError:  # an unhashable stream object: the launch is made anew each time
                pass
        return launch

    def forall(self, n: int, tpb: int = 0, stream: Any = None, sharedmem: int = 0) -> Launch:
        """``k.forall(n)(args)``: a 1-D launch of at least ``n`` threads, ``tpb`` a block (0: 128),
        as Numba's ``forall``; the kernel checks ``i < n`` itself."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise LaunchError(f"{self.__name__}.forall() takes a count of threads, 0 or more, not {n!r}")
        if not isinstance(tpb, (int, np.integer)) or isinstance(tpb, bool) or tpb < 0:
            raise LaunchError(
                f"{self.__name__}.forall(): tpb must be a positive number of threads a block, not {tpb!r}"
            )
        tpb = int(tpb) or 128
        blocks = max(1, -(-int(n) // tpb))
        if stream is None and not sharedmem:
            return self[blocks, tpb]
        return self[blocks, tpb, stream, sharedmem]

    def launch(
        self,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: tuple[Any, ...],
        backend: str | None = None,
        check: bool | None = None,
        shared: int | None = None,
        stream: Any = None,
    ) -> tuple[Any, Variant, Any]:
        """The checked launch path; returns the backend, the variant it used and the stream handle it
        launched on.  ``shared``: the launch's dynamic shared memory in bytes (None: the launch did
        not give any); ``stream``: a gpukern.Stream or another library's stream (None: not given)."""
        b = get_backend(backend)
        # Arrays of other strides: NumPy's (Fortran order, a.T, a[::2]), device array views the
        # device cannot address (d[:, 1]), CuPy's and PyTorch's: a C-contiguous copy in, and
        # written back into the caller's array after, as Numba's copies to and from the device do
        given = args
        copied = tuple(_contiguous(a) for a in args)
        staged = [i for i, c in enumerate(copied) if c is not None]
        if staged:
            _check_staged_alone(self.__name__, args, staged)
            args = tuple(a if c is None else c for a, c in zip(args, copied))
        variant = self.variant(self.signature_of(args), b.lanes)  # (args completed: Launch.__call__)
        copies = args
        args = variant.launch_args(args)  # tuples opened, the module's device arrays after them
        handle = stream_handle(stream, b, f"{self.__name__}[grid, block, stream]")
        if check is None:
            b.launch(variant, grid, block, args, shared=shared, stream=handle)
        elif b.name == "sim":
            b.launch(variant, grid, block, args, check=check, shared=shared, stream=handle)
        else:
            raise LaunchError(f"check= is an option of the simulator backend, not of {b.name!r}")
        written = [i for i in staged if self.params[i].name in variant.written]
        for i in written:
            if isinstance(given[i], DeviceArray):
                given[i].set(copies[i].get())
            elif isinstance(given[i], np.ndarray):
                given[i][...] = copies[i]
            elif isinstance(given[i], np.void):  # one record of a NumPy array: written in place
                for name in given[i].dtype.names:
                    given[i][name] = copies[i][name]
            else:  # another library's: after the kernel, whatever stream its library copies on
                b.synchronize()
                write_back(given[i], copies[i])
        return b, variant, handle

    def source(self, *args: Any, backend: str = "cuda", line_directives: bool = False) -> str:
        """The generated C for the variant these arguments select ('cuda' or 'opencl').

        ``args`` are example arguments as for a launch (arrays and scalars) or types:
        an ``Array[...]``/scalar type stands for an argument of that type.  ``line_directives``:
        the text as compiled, with the ``#line`` directives that name the Python lines.
        """
        try:
            return self.specialise(*args).source(backend, line_directives)
        except GpukernError as e:  # the user's frames and the message (errors.user_frames)
            raise user_frames(e) from e.__cause__

    def resident_blocks(self, *args: Any, block: Any, shared: int = 0, backend: str | None = None) -> int:
        """How many blocks of ``block`` threads and ``shared`` dynamic bytes each, of the variant these
        example arguments or types select, the device runs at once (whole clusters, for a kernel of
        clusters): the grid of a *persistent* kernel, whose blocks loop over the work so that each
        may start its next piece's loads while it finishes the last, and the most blocks a
        ``grid_sync()`` launch may have.  CUDA's occupancy calculator; other backends raise a
        BackendError (the simulator runs any grid: choose one from the work)."""
        try:
            if not isinstance(shared, (int, np.integer)) or isinstance(shared, bool) or shared < 0:
                raise LaunchError(f"resident_blocks(): shared is the dynamic shared bytes a block, not {shared!r}")
            b = get_backend(backend)
            return b.resident_blocks(self.specialise(*args), _dims(block, "block"), int(shared))
        except GpukernError as e:  # the user's frames and the message (errors.user_frames)
            raise user_frames(e) from e.__cause__

    def specialise(self, *args: Any) -> Variant:
        """The variant these example arguments or types select (as ``source`` takes them), compiled
        to gpukern's IR now: what ``source`` and ``gpukern.tools.export`` write out."""
        return self.variant(self.signature_of(self.complete(tuple(_example(a) for a in args))))


def _contiguous(a: Any) -> Any:
    """A C-contiguous copy of an array argument of other strides, made where it lives; None for
    any other argument."""
    if isinstance(a, np.ndarray):
        return None if a.flags.c_contiguous else np.ascontiguousarray(a)
    if isinstance(a, np.void) and a.dtype.names is not None:  # one record (a[0]): a 0-dimensional array of it
        return np.array(a)
    if isinstance(a, DeviceArray):
        return a.copy() if a.staged else None
    return contiguous_copy(a)


def _check_staged_alone(name: str, args: tuple[Any, ...], staged: list[int]) -> None:
    """A staged view runs on a copy: another argument on the same memory would not see the
    kernel's writes through it (or it theirs), so that launch is refused."""
    for i in staged:
        if not isinstance(args[i], DeviceArray):
            continue  # (NumPy's and other libraries' views: as Numba stages NumPy's, unchecked)
        root = args[i]._place()[0]
        for j, b in enumerate(args):
            if j != i and isinstance(b, DeviceArray) and b._place()[0] is root:
                raise LaunchError(
                    f"{name}: arguments {i + 1} and {j + 1} share one device array's memory, and argument "
                    f"{i + 1} is a strided view the kernel runs on a copy of, which argument {j + 1} would not "
                    "see; pass .copy() of the view and write it back, or index the whole array in the kernel"
                )


def grid_for(shape: int | Sequence[int], block: int | Sequence[int]) -> tuple[int, ...]:
    """The smallest grid of ``block``-sized blocks covering ``shape``: ``k[gk.grid_for(n, 256), 256]``,
    ``k[gk.grid_for((rows, cols), (16, 16)), (16, 16)]``.  ``shape`` is in NumPy order (rows first),
    the grid in launch order (x first), since a kernel indexes ``a[row, col]`` with ``col`` from
    dimension x so that neighbouring threads read neighbouring memory.  The kernel still checks
    ``row < rows and col < cols``: the last blocks reach past the edge."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    blk = (block,) if isinstance(block, (int, np.integer)) else tuple(block)
    if len(blk) != len(dims) or not 1 <= len(dims) <= 3:
        raise LaunchError(f"grid_for(): block {blk} and shape {dims} must have the same 1 to 3 dimensions")
    if any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0 for v in dims) or any(
        not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b < 1 for b in blk
    ):
        raise LaunchError(f"grid_for(): the shape {dims} must be counts, 0 or more, and the block {blk} positive")
    return tuple(max(1, -(-int(s) // int(b))) for s, b in zip(reversed(dims), blk))


def _example(a: Any) -> Any:
    if isinstance(a, ArrayType):
        dtype = a.elem.dtype
        if isinstance(a.elem, StorageType):  # ml_dtypes' bfloat16 keys as bfloat16 (its uint16 bits would not)
            try:
                import ml_dtypes

                dtype = np.dtype(getattr(ml_dtypes, a.elem.name))
            except ImportError:
                pass
        return np.empty((1,) * a.ndim, dtype)
    if isinstance(a, ScalarType):
        return a.dtype.type(0)
    return a


def _tuple_binding(name: str, key: TupleKey, leaf: Iterator[int]) -> tuple[Any, ...]:
    """What a tuple parameter names in the kernel: a tuple (a namedtuple of its class) of arrays and
    variables named ``{name}_{k}`` for its k-th item in order, nested tuples opened (``flatten``)."""
    items: list[Any] = []
    for k in key.items:
        if isinstance(k, TupleKey):
            items.append(_tuple_binding(name, k, leaf))
        elif isinstance(k, ArrayType):
            items.append(ir.ArrayRef(f"{name}_{next(leaf)}", k))
        else:
            items.append(ir.Var(f"{name}_{next(leaf)}", k))
    return key.cls._make(items) if hasattr(key.cls, "_fields") else tuple(items)


def _kernel_params(fd: ir.FuncDef, key: tuple[Any, ...]) -> list[ir.KernelParam]:
    """The C parameters of a kernel: data pointers, the shapes the code needs, scalars; a tuple's
    items each in turn (``arg_index`` counts the arguments with tuples opened: ``plan.flatten``).
    Their names are the lowered function's parameters', which come in that order (a Const has none)."""
    leaves = [leaf for k in key for leaf in (k.leaves() if isinstance(k, TupleKey) else [k])]
    names = iter(p.name for p in fd.params)
    flat = [(next(names) if isinstance(k, (ArrayType, ScalarType)) else "", k) for k in leaves]
    shapes_used: dict[str, set[int]] = {}
    for n in ir.walk_body(fd.body):
        if isinstance(n, ir.Shape):
            shapes_used.setdefault(n.array.name, set()).add(n.dim)
        elif isinstance(n, ir.Call):
            for a in n.args:
                if isinstance(a, ir.ArrayRef) and a.type.space == "global":
                    shapes_used.setdefault(a.name, set()).update(range(a.type.ndim))
    maps: dict[str, list[ir.TensorMap]] = {}  # per array: the TMA descriptors of it the kernel copies with
    for n in ir.walk_body(fd.body):
        copy = isinstance(n, (ir.TmaLoad, ir.TmaStore))
        if copy and all(m.name != n.map.name for m in maps.get(n.map.array.name, [])):
            maps.setdefault(n.map.array.name, []).append(n.map)
    out = []
    for i, (name, k) in enumerate(flat):
        if isinstance(k, ArrayType):
            out.append(ir.KernelParam("array", name, i, k))
            dims = shapes_used.get(name, set()) | set(range(1, k.ndim))
            out += [ir.KernelParam("shape", name, i, k, d) for d in sorted(dims)]
            out += [ir.KernelParam("tensor_map", m.name, i, k, map=m) for m in maps.get(name, [])]
        elif isinstance(k, ScalarType):
            out.append(ir.KernelParam("scalar", name, i, k))
    return out


def kernel(fn: Any = None, /, **options: Any) -> Any:
    """Decorate a Python function as a GPU kernel; launch it as ``k[grid, block](args)``.

    ``@kernel(fastmath=True, ...)`` compiles it with options (``gpukern.runtime.compile_options.OPTIONS``;
    docs/language.md, "Compile options"); an unknown one is a ``KernelTypeError``."""
    if fn is None:

        def decorate(f: Any) -> Kernel:
            k = Kernel(f, CompileOptions.make(f"@kernel on {getattr(f, '__name__', f)!r}", options))
            k.scope = _annotation_scope(f)
            return k

        return decorate
    if options:
        raise KernelTypeError("write @kernel(option=value) above the function, not kernel(fn, option=value)")
    k = Kernel(fn)
    k.scope = _annotation_scope(fn)
    return k


def _annotation_scope(fn: Any) -> dict[str, Any]:
    """The decorating scope's names that ``fn``'s annotations use: under ``from __future__ import
    annotations`` they are strings, and a factory's local named only there (``Array[T, 2]``) is no
    closure variable of the kernel, so Python keeps it nowhere else.  The decorating scope is the
    nearest caller outside gpukern (``cuda.jit`` decorates through the Numba layer's own function)."""
    frame = sys._getframe(1)
    while frame is not None and is_gpukern_file(frame.f_code.co_filename):
        frame = frame.f_back
    local = frame.f_locals if frame is not None else {}
    if local is getattr(fn, "__globals__", None):
        return {}
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(a for a in fn.__annotations__.values() if isinstance(a, str))))
    return {k: v for k, v in local.items() if k in words}


def iter_kernels() -> Iterator[Kernel]:
    """Every kernel defined in this process (used by the test suite to check CUDA output)."""
    return iter(list(_all_kernels))


__all__ = ["Kernel", "Launch", "Variant", "grid_for", "iter_kernels", "kernel"]
