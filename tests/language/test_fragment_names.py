"""Two names of one fragment (gpukern.frontend.compiler.bind_fragment): ``f = a`` or ``f = a if h == 0
else b`` with ``h`` known at compile time names the same register tile, as Python names one object
twice -- what alternating two accumulators needs (FlashAttention's S of this tile beside P of the last,
``examples/attention.py``).  Which tile a name stands for is fixed at compile time: the choices that
would depend on the path taken at run time are refused at their line."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import line_of, load_kernel

import gpukern as gk
from gpukern import Array, float16, float32, int32


@gk.kernel
def alternate(s: Array[float16, 2], out: Array[float32, 2], n: int32):
    """Rows 0-63 of out: the sum of the even-numbered 64 x 64 products Q K_j^T (j < n), rows 64-127 the
    odd ones', accumulated into two accumulators taken in turn by one name."""
    sh = gk.shared(float16, 64 * 64 * 3)
    t = gk.thread_idx.x
    for e in range(t, 64 * 64, 128):
        r = e // 64
        c = e % 64
        sh[gk.swizzle128(r, c, 64, 8)] = s[r, c]  # Q
        sh[4096 + gk.swizzle128(r, c, 64, 8)] = s[64 + r, c]  # K_even
        sh[8192 + gk.swizzle128(r, c, 64, 8)] = s[128 + r, c]  # K_odd
    gk.barrier()
    even = gk.fragment("accumulator", 64, 64, 16, float32)
    odd = gk.fragment("accumulator", 64, 64, 16, float32)
    gk.fill_fragment(even, 0.0)
    gk.fill_fragment(odd, 0.0)
    for j2 in range(0, n, 2):
        for h in gk.unroll(range(2)):
            cur = even if h == 0 else odd  # (h: known at compile time)
            if j2 + h < n:
                for kk in gk.unroll(range(0, 64, 16)):
                    cur = gk.wgmma(cur, sh, kk, sh, 4096 * (1 + h) + kk)
                gk.wgmma_commit()
                gk.wgmma_wait(0)
                cur[0] += 1.0  # (each pass: one more in each thread's element 0)
    other = odd
    for i in gk.unroll(range(32)):
        r, c = gk.acc_row(even, i), gk.acc_col(even, i)
        out[r, c] = even[i]
        out[64 + r, c] = other[i]


@pytest.mark.parametrize("n", [3, 4])
def test_one_name_takes_two_accumulators_in_turn(backend, n):
    if backend == "opencl":
        pytest.skip("wgmma: the simulator and sm_90 GPUs")
    if backend == "cuda" and getattr(gk.get_backend(), "arch", None) != "sm_90":
        pytest.skip("wgmma needs an sm_90 GPU")
    rng = np.random.default_rng(n)
    s = rng.integers(-3, 4, (192, 64)).astype(np.float16)
    out = np.zeros((128, 64), np.float32)
    alternate[1, 128](s, out, n)
    q, ke, ko = (s[64 * i : 64 * i + 64].astype(np.float64) for i in range(3))
    want_even, want_odd = (q @ ke.T) * ((n + 1) // 2), (q @ ko.T) * (n // 2)
    bumps = np.zeros((64, 64))  # element 0 of each thread: (row g, column 2t) of its warp's rows
    for lane in range(128):
        r, c = 16 * (lane // 32) + lane % 32 // 4, lane % 4 * 2
        bumps[r, c] = 1
    np.testing.assert_array_equal(out[:64], want_even + bumps * ((n + 1) // 2))
    np.testing.assert_array_equal(out[64:], want_odd + bumps * (n // 2))


@pytest.mark.parametrize(
    "body, at, message",
    [
        (
            "f = a\nfor j in range(n):\n    f = b  # here\n    f[0] = 1.0",
            "# here",
            r"'f' names fragment 'a', bound outside this if or loop body; binding it to 'b' here",
        ),
        ("f = a if n > 0 else b  # here", "# here", r"chooses between arrays or fragments at run time"),
        ("if n > 0:\n    f = a\nx = f[0]  # here\nout[0] = x", "# here", r"array or fragment bound inside an if"),
        ("x = float32(1.0)\nx = a  # here", "# here", r"'x' names something else; it cannot also name a fragment"),
    ],
)
def test_choices_made_at_run_time_are_refused(body, at, message):
    src = "\n".join("    " + line for line in body.splitlines())
    k = load_kernel(
        "import gpukern as gk\nfrom gpukern import float32, int32\n\n@gk.kernel\n"
        "def k(out: gk.Array[float32], n: int32):\n"
        "    a = gk.fragment('accumulator', 64, 16, 16, float32)\n"
        "    b = gk.fragment('accumulator', 64, 16, 16, float32)\n"
        f"{src}\n",
        "fragment_names",
    )
    with pytest.raises(gk.KernelTypeError, match=message) as info:
        k.source(Array[float32], int32, backend="cuda")
    assert info.value.lineno == line_of(k, at)
