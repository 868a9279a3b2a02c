"""Tuple and namedtuple arguments (as Numba passes them): the kernel indexes them (``x[0]``,
``p.x``, ``len(x)``, nested ``x[0][1]``), their arrays are read and written as any argument's; C
takes each item as a parameter of its own, so the items' types specialise the kernel."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import pytest

import gpukern as gk

Point = namedtuple("Point", ("x", "y"))
Soa = namedtuple("Soa", ("xs", "ys", "scale"))


@gk.kernel
def unpack(out, t):
    out[0] = t[0]
    out[1] = t[1] * 2
    out[2] = len(t)


@gk.kernel
def fields(out, p):
    out[0] = p.x + p.y
    out[1] = p.y - p.x


@gk.kernel
def nested(out, t):
    out[0] = len(t[0]) * 100 + t[0][1] * 10 + t[1]


@gk.kernel
def magnitudes(r, v):
    i = gk.global_id(0)
    if i < r.size:
        r[i] = math.sqrt(v.xs[i] ** 2 + v.ys[i] ** 2) * v.scale
        v.xs[i] = 0.0  # an array of a tuple is written back like any argument


@gk.kernel
def clash(out, t):
    t_0 = 5  # the name the items would take: they take another
    out[0] = t[0] + t_0


def test_scalars_and_lengths(backend):
    out = np.zeros(3, np.float64)
    unpack[1, 1](out, (1.5, 2))
    np.testing.assert_array_equal(out, [1.5, 4, 2])


def test_namedtuple_fields(backend):
    out = np.zeros(2, np.int64)
    fields[1, 1](out, Point(3, 10))
    np.testing.assert_array_equal(out, [13, 7])
    fields[1, 1](out, Point(1, 2))  # launched again: the same variant, new values
    np.testing.assert_array_equal(out, [3, 1])


def test_nested(backend):
    out = np.zeros(1, np.int64)
    nested[1, 1](out, ((6, 5, 4), 7))
    assert out[0] == 300 + 50 + 7


def test_struct_of_arrays(backend):
    rng = np.random.default_rng(1)
    xs, ys = rng.random(100), rng.random(100)
    keep = xs.copy()
    r = np.zeros(100)
    magnitudes[2, 64](r, Soa(xs, ys, 2.0))
    np.testing.assert_allclose(r, np.hypot(keep, ys) * 2, rtol=1e-12)
    assert (xs == 0).all()


def test_items_specialise_the_kernel(backend):
    unpack.variants.clear()
    out = np.zeros(3, np.float64)
    unpack[1, 1](out, (1, 2))
    unpack[1, 1](out, (1.0, 2))
    unpack[1, 1](out, (3, 4))
    assert len(unpack.variants) == 2


def test_item_names_do_not_clash(backend):
    out = np.zeros(1, np.int64)
    clash[1, 1](out, (4,))
    assert out[0] == 9


def test_bad_tuples_say_which_item():
    with pytest.raises(gk.KernelTypeError, match="index 0 is not valid for a tuple of 0 items"):
        unpack[1, 1](np.zeros(3), ())  # (an empty tuple is an argument: len() of it is 0)
    with pytest.raises(gk.LaunchError, match=r"t\[1\].*str"):
        unpack[1, 1](np.zeros(3), (1, "two"))
    with pytest.raises(gk.LaunchError, match=r"p\.y.*str"):
        fields[1, 1](np.zeros(2), Point(1, "y"))


def test_c_takes_each_item():
    src = magnitudes.source(np.zeros(4), Soa(np.zeros(4), np.zeros(4), 1.0))
    assert "v_0" in src and "v_1" in src and "double v_2" in src


def test_the_sanitizer_and_the_profiler_take_tuple_arguments(on_simulator):
    """``gk.sanitize`` and ``gk.profile`` open tuples into their items as a launch does (they gave
    an IndexError before: the simulator was handed the tuple unopened)."""

    @gk.kernel
    def affine(t, out: gk.Array[gk.float32]):
        i = gk.global_id(0)
        if i < out.shape[0]:
            out[i] = t[0] * i + t[1]

    out = np.zeros(4, np.float32)
    assert gk.sanitize(affine[1, 4], (np.float32(2), np.float32(1)), out) == []
    np.testing.assert_array_equal(out, [1, 3, 5, 7])
    report = gk.profile(affine[1, 4], (np.float32(3), np.float32(0)), out)
    assert report.total.global_store_elems == 4
    np.testing.assert_array_equal(out, [0, 3, 6, 9])
