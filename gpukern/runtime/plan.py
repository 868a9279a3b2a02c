"""Kernel arguments at launch: one description per parameter, and the launch plans made from it.

Each parameter of a kernel is described once, by a ``Param`` (an array, a scalar, a ``Const``, or
a parameter without annotation, inferred from its argument), and that object holds every rule
about the arguments it takes:

- ``key(a)``: the argument's part of the specialisation key (which variant it selects), or a
  ``LaunchError`` naming the argument when the kernel cannot take it;
- ``test(i, a, key)``: the *identity test* a launch plan applies to later arguments in the place
  of ``a``: the argument's exact type, and the very fields that ``key`` and the conversion read
  (a device array's backend, dtype and rank; a scalar's value range, from ``value_range``; a
  constant's key, from the same function ``key`` uses).  It passes only arguments the checked
  path would key and convert exactly as it did ``a``, so the two paths cannot disagree.

Scalars become C arguments through ``convert_scalar``: ``value_range`` says which Python and
NumPy types a parameter type takes and in what range, and ``C_VALUE`` makes the C value.

The first call of ``kernel[grid, block]`` takes the checked path (``Kernel.launch``: keys, the
variant, device limits, compilation, conversion); it leaves a *plan* (``make_plan``): the identity
tests of its arguments, where each C argument comes from, and the backend's launcher for that
variant, grid and block (``Backend.launcher``, which the checked path launches through too).  A
later call whose arguments pass every test goes straight to the launcher (``Plan.fast``); any
other call, or any call after ``set_backend``, takes the checked path, which makes a new plan.
``Plan.describe()`` says what a plan tests and passes.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import KernelTypeError, LaunchError
from ..types import (
    SCALARS,
    ArrayType,
    ScalarType,
    StorageType,
    array_element,
    bool_,
    complex128,
    float16,
    float64,
    from_dtype,
    int64,
)
from .array import DeviceArray, array_kind
from .fast_path import Source, compile_fast, write_launch
from .foreign import Reader, array_info, has_cuda_interface, is_cl_array, order_streams, reader

# ---------------------------------------------------------------- scalar arguments

EVERY = (-math.inf, math.inf)
"""``value_range`` of a type every value of which a parameter takes (no check needed)."""


def _python_class(cls: type) -> type:
    """The Python type that a value of ``cls`` is taken as: a NumPy scalar as its ``item()``."""
    numpy_classes = ((np.bool_, bool), (np.integer, int), (np.floating, float), (np.complexfloating, complex))
    for numpy_cls, python_cls in numpy_classes:
        if issubclass(cls, numpy_cls):
            return python_cls
    return cls


def _same_dtype(cls: type, t: ScalarType) -> bool:
    try:
        return issubclass(cls, np.generic) and np.dtype(cls) == t.dtype
    except TypeError:  # an abstract NumPy class
        return False


@functools.cache
def value_range(t: ScalarType, cls: type) -> tuple[Any, Any] | None:
    """The values of Python or NumPy type ``cls`` that a parameter of type ``t`` takes: ``EVERY``
    value, the finite values in ``(lo, hi)`` (a float parameter also takes NaN and ±inf), or none
    (None).  Integers must fit, floats must not overflow: a lossy conversion is refused, not wrapped."""
    if _same_dtype(cls, t):
        return EVERY
    py = _python_class(cls)
    if t.kind == "b":  # any integer, as its truth value
        return EVERY if issubclass(py, int) else None
    if issubclass(py, bool):
        return None
    if t.is_int:
        info = np.iinfo(t.dtype)
        return (int(info.min), int(info.max)) if issubclass(py, int) else None
    if issubclass(py, complex) and not t.is_complex:
        return None  # a complex number's imaginary part would be lost
    if issubclass(py, (int, float, complex)):  # complex parameters: each part within the range
        big = float(np.finfo(t.dtype).max)
        if issubclass(cls, (np.floating, np.complexfloating)):  # compared in cls's precision: bounds it can hold
            big = min(big, float(np.finfo(cls).max))
        return (-big, big)
    return None


def _c_bool(value: Any) -> np.uint8:
    """A bool argument as the byte the C parameter holds (an integer is taken as its truth value)."""
    return np.uint8(bool(value))


C_VALUE: dict[ScalarType, Callable[[Any], Any]] = {t: _c_bool if t.kind == "b" else t.dtype.type for t in SCALARS}
"""Per scalar type, the C value of an argument that ``value_range`` accepts (a NumPy scalar)."""
C_VALUE[float16] = lambda v: np.float32(np.float16(v))  # a half is passed as the float of its value (C scalar_params)

_PYTHON_SCALAR = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def packed_as_is(t: ScalarType, cls: type) -> bool:
    """Whether a launcher that packs scalars itself (``Backend.packs_scalars``: struct packing) packs
    a value of ``cls`` as the C ``t`` exactly as it would pack ``C_VALUE[t]`` of it: a Python number
    of ``t``'s kind, or a NumPy scalar of ``t``'s dtype (not ``numpy.bool_``, which has no ``__index__``)."""
    if C_VALUE[t] is not t.dtype.type and t.kind != "b":  # converted to another C type (float16)
        return False
    return cls is _PYTHON_SCALAR[t.kind] or (t.kind != "b" and _same_dtype(cls, t))


def _wanted(t: ScalarType) -> str:
    if t.kind == "b":
        return "a bool"
    if t.is_complex:
        return f"a real or complex number ({t.name})"
    return f"an integer ({t.name})" if t.is_int else f"a number ({t.name})"


def _show(value: Any) -> str:
    """A value for a message (an integer of hundreds of digits as its magnitude)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"{'-' if value < 0 else ''}about 10**{int(math.log10(abs(value)))}"
    return repr(value)


def convert_scalar(value: Any, t: ScalarType, name: str, kernel: str | None = None) -> Any:
    """Scalar argument ``name`` as the C value of a ``t`` parameter; a type ``t`` does not take,
    or a value out of its range, is a LaunchError naming the argument (and ``kernel``)."""
    where = f"{kernel}: argument {name!r}" if kernel else f"argument {name!r}"
    bounds = value_range(t, type(value))
    if bounds is None:
        raise LaunchError(f"{where} must be {_wanted(t)}, not {value!r}")
    v = value.item() if isinstance(value, np.generic) else value
    lo, hi = bounds
    for part in (v.real, v.imag) if isinstance(v, complex) else (v,):
        if not (lo <= part <= hi or part != part or part == math.inf or part == -math.inf):
            raise LaunchError(f"{where} = {_show(v)} does not fit in {t.name}")
    return C_VALUE[t](v)


# ---------------------------------------------------------------- identity tests of a plan


class ArrayTest(NamedTuple):
    """A gpukern device array on the plan's backend with this dtype and rank."""

    index: int
    dtype: np.dtype
    ndim: int

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: a DeviceArray on {backend}, dtype {self.dtype}, {self.ndim}-D"

    def write(self, src: Source, backend: Any, align: int) -> str:
        """The fast path's test (``fast_path.Source``); returns the C argument's expression."""
        a, kind = f"a{self.index}", src.const(array_kind(backend, self.dtype, self.ndim), "kind")
        src.fail_if(f"type({a}) is not DeviceArray or {a}.kind is not {kind}")
        return f"{a}.handle"


class ForeignTest(NamedTuple):
    """Another library's array (a CuPy array, a PyTorch tensor) of this class, dtype and rank,
    C-contiguous, on the plan's device: what ``reader`` reads of it each call."""

    index: int
    reader: Reader
    elem: ScalarType  # the element type the plan's variant takes (``Reader.dtype_of`` names the library's)
    ndim: int

    def describe(self, name: str, backend: str) -> str:
        cls = f"{self.reader.cls.__module__}.{self.reader.cls.__name__}"
        return f"{name}: a {cls} on the {backend} device, dtype {self.elem.name}, {self.ndim}-D, C-contiguous"

    def write(self, src: Source, backend: Any, align: int) -> str:
        """The fast path's test; returns the C argument's expression (the data pointer).  A
        ``Reader.stable`` library's array seen last time (a weak reference to it and its pointer,
        one item replaced whole, so threads see a pair that belongs together) is re-tested for its
        rank only; a pointer not a multiple of ``align`` is left to the checked path (which says why)."""
        r, a, p = self.reader, f"a{self.index}", f"p{self.index}"
        cls = src.const(r.cls, "cls")
        dtype = src.const(r.dtype_of(self.elem), "dtype")
        check = r.expression(src, r.check, a=a, dtype=dtype, ndim=self.ndim, device=backend.index)

        def test_all(depth: int) -> None:  # every fact, and the pointer read
            src.fail_if(f"type({a}) is not {cls} or not ({check})", depth)
            src.line(f"{p} = {r.expression(src, r.pointer, a=a)}", depth)
            if align > 1:
                src.fail_if(f"{p} % {align}", depth)

        if not r.stable:
            test_all(1)
            return p
        last = src.const([(_nothing, 0)], "last")  # the last object seen and its pointer
        src.line(f"seen, {p} = {last}[0]")
        # the object seen passed the type test, its type is fixed (None: what a dead or unset reference gives)
        src.line(f"if seen() is not {a} or {a} is None:")
        test_all(2)
        src.line(f"{last}[0] = (ref({a}), {p})", 2)
        src.line(f"elif {a}.ndim != {self.ndim}:")
        src.line("return False", 2)
        return p


class TypeTest(NamedTuple):
    """A scalar of exactly this type; every value of it converts."""

    index: int
    cls: type

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: type {self.cls.__name__}, any value"

    def write(self, src: Source, backend: Any, align: int) -> None:
        src.fail_if(f"type(a{self.index}) is not {src.const(self.cls, 'cls')}")


class RangeTest(NamedTuple):
    """A scalar of exactly this type with a value in [lo, hi] (NaN and ±inf fail it)."""

    index: int
    cls: type
    lo: Any
    hi: Any

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: type {self.cls.__name__}, {self.lo!r} <= {name} <= {self.hi!r}"

    def write(self, src: Source, backend: Any, align: int) -> None:
        a, lo, hi = f"a{self.index}", src.const(self.lo, "lo"), src.const(self.hi, "hi")
        src.fail_if(f"type({a}) is not {src.const(self.cls, 'cls')} or not {lo} <= {a} <= {hi}")


class PartsTest(NamedTuple):
    """A complex scalar of exactly this type with both parts in [lo, hi] (NaN and ±inf fail it)."""

    index: int
    cls: type
    lo: Any
    hi: Any

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: type {self.cls.__name__}, {self.lo!r} <= {name}.real, {name}.imag <= {self.hi!r}"

    def write(self, src: Source, backend: Any, align: int) -> None:
        a, lo, hi = f"a{self.index}", src.const(self.lo, "lo"), src.const(self.hi, "hi")
        inside = f"{lo} <= {a}.real <= {hi} and {lo} <= {a}.imag <= {hi}"
        src.fail_if(f"type({a}) is not {src.const(self.cls, 'cls')} or not ({inside})")


class EqualTest(NamedTuple):
    """A constant of exactly this type equal to ``value`` (an int or bool: equal values, equal keys)."""

    index: int
    cls: type
    value: Any

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: type {self.cls.__name__}, the constant {self.value!r}"

    def write(self, src: Source, backend: Any, align: int) -> None:
        a = f"a{self.index}"
        src.fail_if(f"type({a}) is not {src.const(self.cls, 'cls')} or {a} != {src.const(self.value, 'value')}")


class KeyTest(NamedTuple):
    """A constant of exactly this type whose key (by the parameter's own ``key_of``) is ``key``:
    a float, whose equality is not its key's (-0.0 == 0.0, nan != nan)."""

    index: int
    cls: type
    key_of: Callable[[Any], Any]
    key: Any

    def describe(self, name: str, backend: str) -> str:
        return f"{name}: type {self.cls.__name__}, the constant {self.key[2]!r}"

    def write(self, src: Source, backend: Any, align: int) -> None:
        a, key_of, key = f"a{self.index}", src.const(self.key_of, "key_of"), src.const(self.key, "key")
        src.fail_if(f"type({a}) is not {src.const(self.cls, 'cls')} or {key_of}({a}) != {key}")


Test = ArrayTest | ForeignTest | TypeTest | RangeTest | PartsTest | EqualTest | KeyTest


def _scalar_test(index: int, a: Any, t: ScalarType) -> Test | None:
    """Arguments of ``a``'s exact type within the range that ``convert_scalar`` takes into ``t``."""
    bounds = value_range(t, type(a))
    if bounds is None:
        return None
    if bounds is not EVERY and issubclass(_python_class(type(a)), complex):
        return PartsTest(index, type(a), *bounds)  # no order: each part in the range
    return TypeTest(index, type(a)) if bounds is EVERY else RangeTest(index, type(a), *bounds)


# ---------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Param:
    """A kernel parameter as declared, and every rule about the arguments it takes.

    ``kind``: 'array', 'infer_array' (``Array`` without an element type), 'scalar', 'const' or
    'infer' (no annotation); ``type``: the declared ``ArrayType``, ``ScalarType`` or ``ConstType``.
    """

    name: str
    kind: str
    type: Any = None

    def key(self, a: Any) -> Any:
        """``a``'s part of the specialisation key, or a LaunchError naming the argument."""
        raise NotImplementedError

    def test(self, index: int, a: Any, key: Any) -> Test | None:
        """The identity test of a plan for arguments like ``a`` (which gave ``key``) in place
        ``index``; None where no cheap test implies what the checked path does."""
        raise NotImplementedError


def is_array(a: Any) -> bool:
    """Whether ``a`` is passed as an array (NumPy, gpukern device array, CUDA array interface,
    pyopencl array)."""
    return isinstance(a, (np.ndarray, DeviceArray)) or has_cuda_interface(a) or is_cl_array(a)


def array_facts(a: Any, name: str) -> tuple[np.dtype, tuple[int, ...]]:
    if isinstance(a, (np.ndarray, DeviceArray)):  # (a NumPy array of any strides: launches stage it)
        return a.dtype, a.shape
    info = array_info(a, name)
    if info is not None:
        return info
    raise LaunchError(
        f"argument {name!r} must be an array (NumPy, gpukern device array, pyopencl array, or one with "
        f"__cuda_array_interface__), not {type(a).__name__}"
    )


class ArrayParam(Param):
    """``Array[T, n]`` (``type``), or ``Array`` alone (kind 'infer_array': dtype and rank from the argument)."""

    def key(self, a: Any) -> Any:
        dtype, shape = array_facts(a, self.name)
        want = self.type
        if want is None:
            try:
                elem = array_element(dtype, f" for argument {self.name!r}")
            except KernelTypeError as e:
                raise LaunchError(e.message) from None
            return ArrayType(elem, len(shape))
        if dtype != want.elem.dtype and from_dtype_or_none(dtype) is not want.elem:
            how = (
                f"convert it with .astype(numpy.{want.elem.name})"
                if isinstance(want.elem, ScalarType)
                else f"make it with the dtype {want.elem.dtype}"  # a record type: the very layout
            )
            raise LaunchError(f"argument {self.name!r} must be an array of {want.elem.name}, got {dtype}; {how}")
        if len(shape) != want.ndim:
            raise LaunchError(f"argument {self.name!r} must have {want.ndim} dimension(s), got shape {tuple(shape)}")
        return want

    def test(self, index: int, a: Any, key: Any) -> Test | None:
        if type(a) is DeviceArray:
            return ArrayTest(index, key.elem.dtype, key.ndim)
        r = reader(a)  # a NumPy array is copied, another foreign one checked: the checked path's work
        if r is None or r.dtype_of(key.elem) is None:  # (a dtype the reader cannot name: no test passes)
            return None
        return ForeignTest(index, r, key.elem, key.ndim)


def from_dtype_or_none(dtype: Any) -> ScalarType | None:
    """The scalar type of a dtype (``ml_dtypes.bfloat16`` is bfloat16), or None."""
    try:
        return from_dtype(dtype)
    except KernelTypeError:
        return None


class ScalarParam(Param):
    """A scalar of a declared type (``float32``, ``int``...): the argument is converted to it."""

    def key(self, a: Any) -> Any:
        if isinstance(self.type, StorageType):
            raise LaunchError(
                f"parameter {self.name!r}: {self.type.name} is an array element type (values are "
                f"{self.type.value.name}); annotate the scalar {self.type.value.name}"
            )
        return self.type

    def test(self, index: int, a: Any, key: Any) -> Test | None:
        return _scalar_test(index, a, self.type)


# Every NaN constant is keyed with this one object: nan != nan, but tuples holding the same object
# compare equal (and hash alike), so every NaN selects one variant.
_NAN = math.nan


class ConstParam(Param):
    """``Const[int]``, ``Const[float]``, ``Const[bool]`` or ``Const``: each value is its own variant."""

    def key(self, a: Any) -> Any:
        want = self.type.py_type
        if want is int:
            ok = isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
        elif want is float:
            ok = isinstance(a, (int, float, np.integer, np.floating)) and not isinstance(a, (bool, np.bool_))
        elif want is bool:
            ok = isinstance(a, (bool, np.bool_))
        else:
            ok = isinstance(a, (bool, int, float, np.number, np.bool_))
        if not ok:
            kind_name = want.__name__ if want else "number"
            raise LaunchError(f"argument {self.name!r} is a Const[{kind_name}] and must be one, not {a!r}")
        key = self.value_key(a)
        if key is None:
            raise LaunchError(f"argument {self.name!r} = {_show(a)} does not fit in a float")
        return key

    def value_key(self, a: Any) -> tuple[Any, ...] | None:
        """The key of constant ``a`` (of a type the parameter takes; None: no float can hold it):
        ``('const', type, value)``, a float with its exact spelling (``float.hex``) after, so the
        key tells apart the constants the generated code does (-0.0 from 0.0) and no others (every
        NaN one)."""
        v = a.item() if isinstance(a, np.generic) else a
        if self.type.py_type is float:
            try:
                v = float(v)
            except OverflowError:
                return None
        if type(v) is float:
            return ("const", float, _NAN if v != v else v, v.hex())
        return ("const", type(v), v)

    def test(self, index: int, a: Any, key: Any) -> Test | None:
        if key[1] is float:
            return KeyTest(index, type(a), self.value_key, key)
        return EqualTest(index, type(a), key[2])


@dataclass(frozen=True)
class TupleKey:
    """The key of a tuple argument (a namedtuple's class in ``cls``): its items' keys, each an
    array's, a scalar's or a nested tuple's.  The kernel sees the tuple (``x[0]``, ``p.x``,
    ``len(x)``); C sees its items as parameters of their own, in order (``flatten``)."""

    cls: type
    items: tuple[Any, ...]

    def leaves(self) -> Iterator[Any]:
        """The items' keys, nested tuples opened, in order."""
        for k in self.items:
            if isinstance(k, TupleKey):
                yield from k.leaves()
            else:
                yield k


def flatten(args: tuple[Any, ...], keys: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments with each tuple argument replaced by its items, nested ones opened: one per
    C parameter, as ``kernel._kernel_params`` numbers them."""
    out: list[Any] = []

    def add(a: Any, k: Any) -> None:
        if isinstance(k, TupleKey):
            for item, ik in zip(a, k.items):
                add(item, ik)
        else:
            out.append(a)

    for a, k in zip(args, keys):
        add(a, k)
    return tuple(out)


class InferredParam(ArrayParam):
    """A parameter without annotation: an array as ``Array``, a scalar by its type (Python bool,
    int, float: bool, int64, float64; a NumPy scalar: its own dtype), a tuple or namedtuple of
    these by its items (``TupleKey``)."""

    def key(self, a: Any) -> Any:
        if is_array(a):
            return super().key(a)
        if isinstance(a, tuple):
            fields = getattr(type(a), "_fields", None)
            names = [f".{f}" for f in fields] if fields else [f"[{i}]" for i in range(len(a))]
            return TupleKey(type(a), tuple(InferredParam(self.name + n, "infer").key(v) for n, v in zip(names, a)))
        if isinstance(a, (bool, np.bool_)):
            return bool_
        if isinstance(a, np.generic):
            try:
                return from_dtype(a.dtype, f" for argument {self.name!r}")
            except KernelTypeError as e:
                raise LaunchError(e.message) from None
        if isinstance(a, int):
            return int64
        if isinstance(a, float):
            return float64
        if isinstance(a, complex):
            return complex128
        raise LaunchError(f"argument {self.name!r}: cannot pass {type(a).__name__} to a kernel")

    def test(self, index: int, a: Any, key: Any) -> Test | None:
        if isinstance(key, ArrayType):
            return super().test(index, a, key)
        if isinstance(key, TupleKey):  # (tuples take the checked path each launch: no plan)
            return None
        return _scalar_test(index, a, key)  # the type alone decides the key: the exact type is tested


# ---------------------------------------------------------------- plans


class Slot(NamedTuple):
    """Where one C argument of a plan comes from: argument ``index``'s ``.handle`` ('handle'),
    ``.shape[dim]`` ('shape') or itself ('value'), passed through ``convert`` unless it is None; or
    ('map') a TMA descriptor, ``convert(handle, shape)``."""

    index: int
    what: str
    dim: int
    convert: Callable[[Any], Any] | None


def _tensor_map(make: Callable[..., Any], m: Any, pointer: Any, shape: tuple[int, ...]) -> Any:
    """A plan's TMA descriptor: ``Backend.tensor_map`` of the array's pointer and shape."""
    return make(int(pointer), tuple(shape), m)


def no_plan(args: tuple[Any, ...]) -> bool:
    """The fast path of a launch without a plan: always take the checked path."""
    return False


@dataclass(frozen=True, eq=False)
class Plan:
    """The fast path of one launch configuration (see the module docstring); ``fast(args)``
    launches and returns True, or returns False for the checked path to take the call."""

    variant: Any
    backend: Any
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    tests: tuple[Test, ...]
    slots: tuple[Slot, ...]
    fast: Callable[[tuple[Any, ...]], bool]
    shared: int = 0  # dynamic shared memory bytes per block

    def describe(self, source: bool = False) -> str:
        """What the plan tests, and the C arguments it then passes to the backend's launcher;
        ``source``: and the Python of its fast path, as written for it (``gpukern.runtime.fast_path``)."""
        names = [p.name for p in self.variant.kernel.params]
        head = f"{repr(self)[1:-1]} (until set_backend() is called), for arguments that pass:"
        lines = [head] + ["  " + t.describe(names[t.index], self.backend.name) for t in self.tests]

        def spell(s: Slot) -> str:
            read = {"handle": ".handle", "shape": f".shape[{s.dim}]", "value": ""}[s.what]
            text = names[s.index] + read
            return f"{getattr(s.convert, '__name__', 'convert')}({text})" if s.convert else text

        lines.append(f"  then launches with ({', '.join(spell(s) for s in self.slots)})")
        if source:
            lines += ["", self.fast.source]
        return "\n".join(lines)

    def __repr__(self) -> str:
        config = f"{self.grid}, {self.block}" + (f", {self.shared}" if self.shared else "")
        return f"<launch plan of {self.variant.kernel.__name__}[{config}] on {self.backend.name}>"


def make_plan(
    variant: Any,
    backend: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    args: tuple[Any, ...],
    selection: list[object],
    shared: int = 0,
    stream: Any = None,
) -> Plan | None:
    """The plan for launching ``variant`` again as the checked path just did with ``args`` (on
    ``stream``, a handle; None: not given), or None (a backend without plans, an argument no cheap
    test covers: a NumPy array to copy, a foreign array without a reader or on a backend that reads
    none).  ``selection[0]`` is replaced whenever the backend choice changes: that ends the plan."""
    if not backend.plans or variant.program.captured:  # (the module's device arrays: the checked path adds them)
        return None
    tests = []
    for i, (param, a, key) in enumerate(zip(variant.kernel.params, args, variant.key)):
        test = param.test(i, a, key)
        if test is None or (type(test) is ForeignTest and not backend.reads_foreign):
            return None
        tests.append(test)
    raw = backend.packs_scalars
    slots = []
    for p in variant.kernel_params:
        if p.kind == "array":
            slots.append(Slot(p.arg_index, "handle", 0, None))
        elif p.kind == "shape":
            slots.append(Slot(p.arg_index, "shape", p.dim, None if raw else C_VALUE[int64]))
        elif p.kind == "tensor_map":  # the descriptor of the array's address and shape (made once, kept)
            slots.append(Slot(p.arg_index, "map", 0, functools.partial(_tensor_map, backend.tensor_map, p.map)))
        else:  # the tests fix the argument's exact type, so whether it can go as it is (already the C value)
            cls = type(args[p.arg_index])
            as_is = packed_as_is(p.type, cls) if raw else cls is C_VALUE[p.type]
            slots.append(Slot(p.arg_index, "value", 0, None if as_is else C_VALUE[p.type]))
    launch = backend.launcher(variant, grid, block, shared)
    align = {p.arg_index: variant.vector_alignment.get(p.name, 1) for p in variant.kernel_params if p.kind == "array"}
    fast = _fast_path(
        len(args), selection, backend, tuple(tests), tuple(slots), launch, stream, align, variant.kernel.__name__
    )
    return Plan(variant, backend, grid, block, tuple(tests), tuple(slots), fast, shared)


def _nothing() -> None:
    """What a dead weak reference returns: no object is the last one seen yet."""
    return None


def _fast_path(
    nargs: int,
    selection: list[object],
    backend: Any,
    tests: tuple[Test, ...],
    slots: tuple[Slot, ...],
    launch: Callable[[list[Any], Any], None],
    stream: Any,
    align: dict[int, int],
    name: str,
) -> Callable[[tuple[Any, ...]], bool]:
    """The plan's per-call function, written out for it (``gpukern.runtime.fast_path``): each test's
    lines, in the order of the kinds (device arrays, foreign arrays, scalars, constants), then
    the launch with each slot's C argument (``write_launch``); a call allocates the C values of
    scalars not already of their C type (and the list of C arguments where the backend's launcher
    writes no lines of its own: OpenCL's), a weak reference to a stable foreign array it has not
    seen last time, and, with several libraries' arrays or a stream given, the list of the owners'
    streams. Foreign arrays also give the streams their owners work on (one read per library): the
    launch is ordered after them by ``foreign.order_streams``, the checked path's rule, called per
    launch (written out only for one library's arrays and no stream given, where it answers that
    library's stream)."""
    src = Source(DeviceArray=DeviceArray, ref=weakref.ref, order_streams=order_streams)
    order = (ArrayTest, ForeignTest, RangeTest, PartsTest, TypeTest, EqualTest, KeyTest)
    handles = {}
    for kind in order:
        for t in tests:
            if type(t) is kind:
                got = t.write(src, backend, align.get(t.index, 1))
                if got is not None:
                    handles[t.index] = got

    def carg(s: Slot) -> str:
        if s.what == "map":
            return f"{src.const(s.convert, 'tensor_map')}({handles[s.index]}, a{s.index}.shape)"
        read = {
            "handle": handles[s.index] if s.what == "handle" else "",
            "shape": f"a{s.index}.shape[{s.dim}]",
            "value": f"a{s.index}",
        }
        return read[s.what] if s.convert is None else f"{src.const(s.convert, 'convert')}({read[s.what]})"

    cargs = [carg(s) for s in slots]
    owners = dict.fromkeys(t.reader for t in tests if type(t) is ForeignTest)  # one stream read per library
    given = src.const(stream, "stream")
    if len(owners) == 1 and stream is None:  # order_streams' answer then: the library's current stream
        (r,) = owners
        on = r.expression(src, r.stream, device=backend.index)
    elif owners:
        named = ", ".join(r.expression(src, r.stream, device=backend.index) for r in owners)
        on = f"order_streams({given}, [{named}], {src.const(getattr(backend, 'wait_stream', None), 'wait')})"
    else:
        on = given
    token = src.const(selection[0], "token")
    guard = f"{src.const(selection, 'selection')}[0] is not {token}"
    write_launch(src, launch, cargs, on)
    return compile_fast(src, nargs, guard, name)
