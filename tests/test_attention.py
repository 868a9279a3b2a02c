"""examples/attention.py: FlashAttention's forward pass on wgmma, against float64 NumPy on the
simulator (checks on: races, uninitialised reads, the accumulators' asynchronous use) and on an sm_90 GPU."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_source import load_example

import gpukern as gk

att = load_example("attention")


def _need_sm90(backend):
    if backend == "opencl":
        pytest.skip("OpenCL has no matrix units in gpukern")
    if backend == "cuda" and getattr(gk.get_backend(), "arch", None) != "sm_90":
        pytest.skip("wgmma needs an sm_90 GPU")


@pytest.mark.parametrize(
    "dtype, d, causal, seq",
    [("float16", 64, False, 100), ("bfloat16", 128, True, 130), ("float16", 64, True, 64)],
)
def test_attention_matches_float64(backend, dtype, d, causal, seq):
    _need_sm90(backend)
    heads = 2
    host = att.host_dtype(dtype)
    rng = np.random.default_rng(seq + d)
    q, k, v = (rng.standard_normal((heads, seq, d)).astype(host) for _ in range(3))
    o, lse = np.full(q.shape, np.nan, host), np.zeros((heads, seq), np.float32)
    kern = att.make_attention(gk.float16 if dtype == "float16" else gk.bfloat16, d, causal)
    att.run(kern, q, k, v, o, lse)
    tol = 2.0**-7 if dtype == "bfloat16" else 2.0**-9
    for h in range(heads):
        want, want_lse = att.reference(q[h], k[h], v[h], causal)
        np.testing.assert_allclose(o[h].astype(np.float64), want, rtol=tol, atol=tol)
        np.testing.assert_allclose(lse[h], want_lse, rtol=1e-4)


def test_the_command_line(capsys):
    assert att.main(["--small", "--backend", "sim", "--causal"]) == 0
    out = capsys.readouterr().out
    assert "1 x 2 heads, seq 100, d 64, float16, causal" in out and "TFLOP/s" in out and out.rstrip().endswith("OK")


def test_head_dimensions():
    with pytest.raises(ValueError, match="head dimension 64 or 128"):
        att.make_attention(gk.float16, 96, False)
