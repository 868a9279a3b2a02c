"""Black-Scholes ported from Numba-CUDA: numba/cuda/tests/cudapy/test_blackscholes.py (NVIDIA/numba-cuda).

Spelling: ``@cuda.jit(double(double), device=True)`` -> ``@gk.func``, ``math.*`` unchanged,
``cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x`` -> ``thread_idx.x + block_idx.x * block_dim.x``.
The NumPy reference is the source's ``black_scholes``/``cnd``; the assertion is the source's (L1 norm and
largest absolute error below 1e-13).
"""

from __future__ import annotations

import math

import numpy as np

import gpukern as gk
from gpukern import block_dim, block_idx, thread_idx

RISKFREE = 0.02
VOLATILITY = 0.30

A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = RSQRT2PI * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


def black_scholes(callResult, putResult, stockPrice, optionStrike, optionYears, Riskfree, Volatility):
    S, X, T, R, V = stockPrice, optionStrike, optionYears, Riskfree, Volatility
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd(d1)
    cndd2 = cnd(d2)
    expRT = np.exp(-R * T)
    callResult[:] = S * cndd1 - X * expRT * cndd2
    putResult[:] = X * expRT * (1.0 - cndd2) - S * (1.0 - cndd1)


def randfloat(rand_var, low, high):
    return (1.0 - rand_var) * low + rand_var * high


# Source: test_blackscholes.py, test_blackscholes (cnd_cuda)
@gk.func
def cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


# Source: test_blackscholes.py, test_blackscholes (black_scholes_cuda)
@gk.kernel
def black_scholes_cuda(callResult, putResult, S, X, T, R, V):
    i = thread_idx.x + block_idx.x * block_dim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_cuda(d1)
    cndd2 = cnd_cuda(d2)

    expRT = math.exp((-1.0 * R) * T[i])
    callResult[i] = S[i] * cndd1 - X[i] * expRT * cndd2
    putResult[i] = X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1)


def test_blackscholes(backend):
    OPT_N = 200  # 400 in the source
    g = np.random.default_rng(0)
    stockPrice = randfloat(g.random(OPT_N), 5.0, 30.0)
    optionStrike = randfloat(g.random(OPT_N), 1.0, 100.0)
    optionYears = randfloat(g.random(OPT_N), 0.25, 10.0)

    callResultNumpy = np.zeros(OPT_N)
    putResultNumpy = -np.ones(OPT_N)
    black_scholes(callResultNumpy, putResultNumpy, stockPrice, optionStrike, optionYears, RISKFREE, VOLATILITY)

    callResult = np.zeros(OPT_N)
    putResult = -np.ones(OPT_N)
    blockdim = 128
    griddim = -(-OPT_N // blockdim)
    for _ in range(2):  # the source's `iterations`
        black_scholes_cuda[griddim, blockdim](
            callResult, putResult, stockPrice, optionStrike, optionYears, RISKFREE, VOLATILITY
        )

    delta = np.abs(callResultNumpy - callResult)
    L1norm = delta.sum() / np.abs(callResultNumpy).sum()
    assert L1norm < 1e-13
    assert delta.max() < 1e-13
    np.testing.assert_allclose(putResult, putResultNumpy, rtol=1e-12, atol=1e-12)
