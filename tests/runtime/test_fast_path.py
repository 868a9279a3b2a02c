"""The fast path a launch plan writes for itself (gpukern.runtime.fast_path, plan._fast_path), run without a
GPU: foreign arrays through a stand-in library's reader, the way CuPy's and PyTorch's are read on
CUDA (tests/backends/test_interop_gpu.py runs the real ones there)."""

from __future__ import annotations

import dataclasses
import re
from types import SimpleNamespace

import numpy as np

from gpukern import float32 as gk_float32
from gpukern import uint32 as gk_uint32
from gpukern.runtime import plan
from gpukern.runtime.foreign import Reader
from gpukern.runtime.plan import ForeignTest, RangeTest, Slot, TypeTest

F32 = gk_float32  # the element type a plan's variant takes


class Foreign:
    """A stand-in for another library's device array: a pointer, a rank."""

    def __init__(self, ptr: int, ndim: int = 1, ok: bool = True):
        self.ptr, self.ndim, self.ok = ptr, ndim, ok
        self.reads = 0


def reader(stable: bool, cls: type = Foreign, streams: dict[int, int] | None = None) -> Reader:
    """The stand-in library's reader; ``streams``: its current stream per device (7 on device 0)."""

    def pointer(a: Foreign) -> int:
        a.reads += 1
        return a.ptr

    def check(a: Foreign, dtype: np.dtype, ndim: int, device: int) -> bool:
        return dtype == F32.dtype and a.ndim == ndim and a.ok and device == 0

    names = {"pointer": pointer, "check": check, "current": streams if streams is not None else {0: 7}}
    test = "{check}({a}, {dtype}, {ndim}, {device})"
    return Reader(cls, "{pointer}({a})", test, "{current}[{device}]", names, stable=stable)


def fast_path(tests, slots, stream=None, align=None, nargs=2):
    launched, waits = [], []
    backend = SimpleNamespace(index=0, name="fake", wait_stream=lambda s, other: waits.append((s, other)))
    selection = [object()]
    fast = plan._fast_path(
        nargs, selection, backend, tests, slots, lambda cargs, s: launched.append((cargs, s)), stream, align or {}, "k"
    )
    return fast, launched, waits, selection


def test_a_stable_librarys_array_seen_last_time_is_retested_for_its_rank_only():
    tests = (ForeignTest(0, reader(True), F32, 1), RangeTest(1, int, -(2**31), 2**31 - 1))
    slots = (Slot(0, "handle", 0, None), Slot(1, "value", 0, None))
    fast, launched, waits, selection = fast_path(tests, slots, align={0: 16})
    x = Foreign(4096)
    assert fast((x, 5)) and launched[-1] == ([4096, 5], 7)  # on the library's current stream
    assert fast((x, 6)) and x.reads == 1  # the same object: its pointer kept
    x.ndim = 2  # its shape changed in place (CuPy's a.shape = ...): the checked path takes it
    assert not fast((x, 6))
    y = Foreign(4100)  # another array, not 16-byte aligned: the checked path says why
    assert not fast((y, 6))
    assert not fast((Foreign(8192, ok=False), 6))  # its checker fails
    assert not fast((x, 2**31))  # a value out of the scalar's range
    assert not fast((object(), 6)) and not fast((x,)) and not fast((x, 6.0))
    assert not fast((None, 6))  # None is what a dead weak reference to the last array gives
    z = Foreign(8192)
    assert fast((z, 1)) and launched[-1] == ([8192, 1], 7) and not waits
    selection[0] = object()  # set_backend() was called: the plan no longer holds
    assert not fast((z, 1))
    assert "if seen() is not a0 or a0 is None:" in fast.source  # the text is kept


def test_none_is_refused_before_and_after_the_last_array_seen_is_gone():
    tests = (ForeignTest(0, reader(True), F32, 1),)
    fast, launched, _, _ = fast_path(tests, (Slot(0, "handle", 0, None),), nargs=1)
    assert not fast((None,))  # nothing seen yet: the unset reference gives None too
    x = Foreign(64)
    assert fast((x,)) and launched[-1] == ([64], 7)
    del x  # the reference to the last array seen is dead now
    assert not fast((None,)) and len(launched) == 1


def test_plans_of_no_arguments():
    fast, launched, _, _ = fast_path((), (), nargs=0)
    assert fast(()) and launched == [([], None)]
    assert not fast((1,))


def test_an_unstable_librarys_array_is_read_every_call():
    tests = (ForeignTest(0, reader(False), F32, 1), TypeTest(1, float))
    slots = (Slot(0, "handle", 0, None), Slot(1, "value", 0, np.float32))
    fast, launched, _, _ = fast_path(tests, slots)
    x = Foreign(64)
    assert fast((x, 0.5)) and fast((x, 0.25))
    assert x.reads == 2 and launched[-1] == ([64, np.float32(0.25)], 7)
    assert type(launched[-1][0][1]) is np.float32  # converted by the slot's function
    x.ptr = 128  # a tensor's storage swapped (t.data = ...): seen at once
    assert fast((x, 0.5)) and launched[-1][0][0] == 128


def test_arrays_of_one_library_name_its_reads_once():
    """Two arrays of one library: the fast path reads both through the same named constants (one
    name per object: ``Source.const``), each array's own lines testing its own argument."""
    r = reader(False)
    r = dataclasses.replace(r, names={**r.names, "unused": object()})  # a name no template uses
    tests = (ForeignTest(0, r, F32, 1), ForeignTest(1, r, F32, 1))
    fast, launched, _, _ = fast_path(tests, (Slot(0, "handle", 0, None), Slot(1, "handle", 0, None)))
    assert fast((Foreign(16), Foreign(32))) and launched[-1] == ([16, 32], 7)
    for hint in ("pointer", "check", "current", "cls"):
        assert len(set(re.findall(rf"\b{hint}_\d+", fast.source))) == 1, (hint, fast.source)
    assert "pointer_" in fast.source and "(a0)" in fast.source and "(a1)" in fast.source
    assert not any(name.startswith("unused") for name in fast.__globals__)  # only what the lines read


def test_a_given_stream_waits_for_every_owner_stream():
    other = type("Other", (Foreign,), {})  # a second library
    streams = {0: 3}, {0: 4}
    tests = (
        ForeignTest(0, reader(True, streams=streams[0]), F32, 1),
        ForeignTest(1, reader(False, other, streams[1]), F32, 1),
    )
    slots = (Slot(0, "handle", 0, None), Slot(1, "handle", 0, None))
    fast, launched, waits, _ = fast_path(tests, slots, stream=99)
    assert fast((Foreign(16), other(32)))
    assert launched[-1] == ([16, 32], 99) and waits == [(99, 3), (99, 4)]
    fast, launched, waits, _ = fast_path(tests, slots)  # none given: the first library's, after the other's
    assert fast((Foreign(16), other(32)))
    assert launched[-1] == ([16, 32], 3) and waits == [(3, 4)]
    streams[0][0] = 5  # the library made another stream current: the next launch follows it
    assert fast((Foreign(16), other(32))) and launched[-1] == ([16, 32], 5) and waits[-1] == (5, 4)


def test_plans_of_one_shape_share_their_compiled_code():
    """A plan rebuilt (its arguments' kinds alternating, a launch configuration not kept) compiles
    nothing again and registers no more lines for tracebacks: its text is its shape's."""
    import linecache

    tests = (ForeignTest(0, reader(True), F32, 1), RangeTest(1, int, -(2**31), 2**31 - 1))
    slots = (Slot(0, "handle", 0, None), Slot(1, "value", 0, None))
    first, *_ = fast_path(tests, slots)
    cached = len(linecache.cache)
    again, *_ = fast_path(tests, slots)
    assert again is not first and again.__code__ is first.__code__ and len(linecache.cache) == cached
    other, *_ = fast_path(tests[:1] + (RangeTest(1, int, 0, 255),), slots)  # other bounds: constants, same text
    assert other.__code__ is first.__code__


def test_no_plan_for_an_array_whose_dtype_the_reader_cannot_name(monkeypatch):
    """A library's array of a dtype its reader has no name for (a tensor of a type PyTorch's
    reader does not list) gets no identity test: the checked path takes it, and no plan is
    built (and thrown away) on each call."""
    from types import SimpleNamespace as NS

    from gpukern.runtime import foreign
    from gpukern.runtime.plan import ArrayParam

    named = Reader(Foreign, "{a}.ptr", "True", "7", dtype_of={F32: "f32"}.get)
    monkeypatch.setitem(foreign._READERS, Foreign, named)
    param = ArrayParam("x", "array")
    key = NS(elem=F32, ndim=1)
    assert param.test(0, Foreign(64), key) == ForeignTest(0, named, F32, 1)
    key = NS(elem=gk_uint32, ndim=1)
    assert param.test(0, Foreign(64), key) is None
