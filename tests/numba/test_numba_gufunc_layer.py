"""``guvectorize(..., target="cuda")`` on gpukern (gpukern.numba.gufunc): the loop kernel it writes,
what it returns for host and device arrays, and each misuse a clear ``gk.LaunchError`` (numba-cuda's
own cases are in the corpus, tests/compat/numba_cuda_tests/test_numba_gufunc.py)."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern.numba import cuda, float32, guvectorize, int32, void
from gpukern.numba.gufunc import parse_layout, parse_signature


@guvectorize([void(float32[:, :], float32[:], float32[:])], "(m,n),(n)->(m)", target="cuda")
def matvec(a, x, y):
    for i in range(a.shape[0]):
        s = float32(0)
        for j in range(a.shape[1]):
            s += a[i, j] * x[j]
        y[i] = s


def test_a_thread_a_loop_element_on_views(backend):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 4, 6)).astype(np.float32)
    x = rng.standard_normal(6).astype(np.float32)  # (broadcast over the loop dimensions (3, 5))
    y = matvec(a, x)
    assert isinstance(y, np.ndarray) and y.shape == (3, 5, 4)
    np.testing.assert_allclose(y, a @ x, rtol=1e-5, atol=1e-5)
    d = matvec(cuda.to_device(a), x)  # (a device input: a device result)
    assert isinstance(d, gk.DeviceArray)
    np.testing.assert_allclose(d.copy_to_host(), a @ x, rtol=1e-5, atol=1e-5)
    src = matvec._kernel(0).source(gk.int64, *(gk.Array[gk.float32, k] for k in (3, 2, 2)))
    assert "a0[" in src and "matvec" in src  # (the loop kernel, views of each argument)


def test_the_layout_and_the_signatures_are_read():
    assert parse_layout("(m, n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
    assert parse_layout("(),()->()") == ([(), ()], [()])
    assert parse_signature("void(float32[:, ::1], int32, f8[:])") == [
        (np.dtype(np.float32), 2), (np.dtype(np.int32), None), (np.dtype(np.float64), 1)
    ]  # fmt: skip
    assert parse_signature((int32[:], float32)) == [(np.dtype(np.int32), 1), (np.dtype(np.float32), None)]


@pytest.mark.parametrize(
    "make, call, message",
    [
        (lambda: guvectorize([int32(int32[:], int32[:])], "(m)->(m)", target="cuda")(lambda a, b: None), None,
         r"cannot return values: int32\(Array\[int32, 1\], Array\[int32, 1\]\) specifies int32 return type"),
        (lambda: guvectorize(["int32(int32[:], int32[:])"], "(m)->(m)", target="cuda")(lambda a, b: None), None,
         r"specifies int32 return type"),
        (lambda: guvectorize([void(int32[:], int32[:])], "(m)->(m)", target="cuda", nopython=False), None,
         r"nopython flag must be True"),
        (lambda: guvectorize([void(int32[:], int32[:])], "(m)->(m)", target="cuda", what1=True), None,
         r"not supported: 'what1'"),
        (lambda: guvectorize([void(int32[:], int32[:])], "(m)(m)", target="cuda")(lambda a, b: None), None,
         r"a layout is written"),
        (lambda: guvectorize([void(int32[:], int32[:])], "(m),(m)->(m)", target="cuda")(lambda a, b: None), None,
         r"has 2 arguments; the layout"),
        (lambda: guvectorize([void(int32[:, :], int32[:])], "(m)->(m)", target="cuda")(lambda a, b: None), None,
         r"2 dimension\(s\)"),
        (lambda: guvectorize([void(int32[:], int32)], "(m)->()", target="cuda")(lambda a, b: None), None,
         r"an output is an array"),
        (lambda: guvectorize([void(int32[:], int32[:])], "(m)->(m)", target="cpu")(lambda a, b: None), None,
         r"run on the GPU"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), np.float32)), r"accepts 2 positional arguments or 3"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), np.float32), np.ones(3), np.ones(2), out=np.ones(2)),
         r"both positional and keyword"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), np.float32), np.ones(4, np.float32)),
         r"core dimension n is 3 and 4"),
        (lambda: matvec, lambda f: f(np.ones((2, 2, 3), np.float32), np.ones((3, 3), np.float32)), r"do not broadcast"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), "U1"), np.ones(3, np.float32)), r"no signature takes"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), np.float32), np.ones(3, np.float32), out=np.ones(5, np.float32)),
         r"the core dimension m is 2 and 5"),
        (lambda: matvec, lambda f: f(np.ones((2, 3), np.float32), np.ones(3, np.float32), out=np.ones(2)),
         r"out is float64\[2\], the result float32\[2\]"),
    ],
)
def test_misuse_is_a_clear_error(on_simulator, make, call, message):
    with pytest.raises(gk.LaunchError, match=message):
        f = make()
        if call is not None:
            call(f)
