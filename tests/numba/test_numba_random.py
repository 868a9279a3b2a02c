"""``gpukern.numba.cuda.random``: xoroshiro128+ generators with Numba's streams (issue 32), against a
plain Python stepping of the algorithm here, on every backend, and against Numba itself where it is
installed with a GPU (the lent machine)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gpukern.numba.cuda.random import (
    create_xoroshiro128p_states,
    xoroshiro128p_dtype,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

from gpukern.numba import cuda

M = (1 << 64) - 1


def step(a: int, b: int) -> tuple[int, int, int]:
    """One xoroshiro128+ step in Python ints: the new state and the output."""
    out = (a + b) & M
    b ^= a
    a = (((a << 55) | (a >> 9)) & M) ^ b ^ ((b << 14) & M)
    return a, ((b << 36) | (b >> 28)) & M, out


def jump(a: int, b: int) -> tuple[int, int]:
    x = y = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for bit in range(64):
            if word >> bit & 1:
                x, y = x ^ a, y ^ b
            a, b, _ = step(a, b)
    return x, y


def splitmix64(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def reference_states(n: int, seed: int, start: int = 0) -> list[tuple[int, int]]:
    a = b = splitmix64(seed)
    for _ in range(start):
        a, b = jump(a, b)
    out = [(a, b)]
    for _ in range(n - 1):
        out.append(jump(*out[-1]))
    return out[:n]


@pytest.mark.parametrize(("n", "seed", "start"), [(1, 0, 0), (7, 42, 0), (5, 2**64 - 1, 3), (0, 1, 0)])
def test_seeding_gives_the_generators_2_to_the_64_steps_apart(on_simulator, n, seed, start):
    states = create_xoroshiro128p_states(n, seed, subsequence_start=start).copy_to_host()
    assert states.dtype == xoroshiro128p_dtype and states.shape == (n,)
    assert [(int(s0), int(s1)) for s0, s1 in states] == reference_states(n, seed, start)


@cuda.jit
def draw(states, u32, u64, g32, g64):
    i = cuda.grid(1)
    if i < u32.size:
        u32[i] = xoroshiro128p_uniform_float32(states, i)
        u64[i] = xoroshiro128p_uniform_float64(states, i)
        g32[i] = xoroshiro128p_normal_float32(states, i)
        g64[i] = xoroshiro128p_normal_float64(states, i)


def test_draws_are_the_streams_on_every_backend(backend):
    n = 40
    states = create_xoroshiro128p_states(n, seed=2024)
    u32, u64, g32, g64 = np.zeros(n, np.float32), np.zeros(n), np.zeros(n, np.float32), np.zeros(n)
    draw[1, 64](states, u32, u64, g32, g64)
    for i, (a, b) in enumerate(reference_states(n, 2024)):
        outs = []
        for _ in range(6):
            a, b, x = step(a, b)
            outs.append((x >> 11) * 2.0**-53)
        assert u32[i] == np.float32(outs[0]) and u64[i] == outs[1]
        r1, r2 = np.float32(outs[2]), np.float32(outs[3])
        want32 = math.sqrt(-2.0 * math.log(r1)) * math.cos(2 * math.pi * r2)
        assert g32[i] == pytest.approx(want32, rel=2e-6, abs=2e-6)
        r1, r2 = np.float32(outs[4]), np.float32(outs[5])
        want64 = math.sqrt(-2.0 * math.log(float(r1))) * math.cos(2 * math.pi * float(r2))
        assert g64[i] == pytest.approx(want64, rel=1e-6, abs=1e-6)  # log(u1) in float32, as Numba computes
    assert ((u64 >= 0) & (u64 < 1)).all()


def _numba_random():
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("Numba finds no CUDA GPU")
    from numba.cuda import random as nr

    return numba_cuda, nr


@pytest.mark.gpu
def test_the_states_are_numbas():
    """Numba's own seeding (numba-cuda, on the GPU machine) gives the same generator states."""
    _, nr = _numba_random()
    for n, seed, start in [(33, 7, 0), (5, 987654321, 2)]:  # (Numba takes seeds below 2**63)
        theirs = nr.create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
        ours = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
        assert theirs["s0"].tolist() == ours["s0"].tolist() and theirs["s1"].tolist() == ours["s1"].tolist()


@pytest.mark.gpu
def test_the_draws_are_numbas():
    """Numba's kernels draw the same uniforms from the same states (where Numba compiles kernels:
    numba 0.68 cannot with NumPy 2.5, seen on the GPU machine)."""
    numba_cuda, nr = _numba_random()

    @numba_cuda.jit
    def numba_draw(states, u32, u64):
        i = numba_cuda.grid(1)
        if i < u32.size:
            u32[i] = nr.xoroshiro128p_uniform_float32(states, i)
            u64[i] = nr.xoroshiro128p_uniform_float64(states, i)

    a32, a64 = np.zeros(33, np.float32), np.zeros(33)
    try:
        numba_draw[1, 64](nr.create_xoroshiro128p_states(33, seed=7), a32, a64)
    except AttributeError as e:  # Numba's own typing against this NumPy
        pytest.skip(f"Numba cannot compile a kernel here: {e}")
    b32, b64 = np.zeros(33, np.float32), np.zeros(33)
    draw[1, 64](create_xoroshiro128p_states(33, seed=7), b32, b64, np.zeros(33, np.float32), np.zeros(33))
    assert a32.tolist() == b32.tolist() and a64.tolist() == b64.tolist()
