"""``numba.cuda.random`` on gpukern (the module ``gpukern.numba.cuda.random``): xoroshiro128+
generators, one state per thread, with Numba's streams, so a program's random numbers are the same
on every gpukern backend as under Numba.

The facts followed (Blackman and Vigna's xoroshiro128+ and splitmix64, as Numba seeds and steps
them): a seed goes through splitmix64 once and both words of the first state take the result;
a step returns ``s0 + s1`` and moves the state by the rotations 55 and 36 and the shift 14; state
``i`` is state ``i - 1`` jumped 2**64 steps ahead; a float64 is the top 53 bits times 2**-53, a
float32 that float64 rounded; a normal value is Box-Muller's cosine branch of two float32 uniforms.

Seeding runs on the host, vectorised: a jump is linear over GF(2), so the states are the first one
under powers of the jump's 128 x 128 bit matrix, each power applied to a whole block of states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backends import empty as _empty
from ..language.core import func
from ..types import float32, float64

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = xoroshiro128p_dtype

_MASK = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)
TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)


# ---------------------------------------------------------------- in kernels
@func
def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``index``, advancing its state."""
    s0 = states[index].s0
    s1 = states[index].s1
    result = s0 + s1
    s1 ^= s0
    states[index].s0 = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14)
    states[index].s1 = (s1 << 36) | (s1 >> 28)
    return result


@func
def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0, 1) from generator ``index``."""
    return float64(xoroshiro128p_next(states, index) >> 11) * (1.0 / 9007199254740992.0)


@func
def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0, 1) from generator ``index`` (its float64 rounded)."""
    return float32(xoroshiro128p_uniform_float64(states, index))


@func
def xoroshiro128p_normal_float32(states, index):
    """A normally distributed float32 (mean 0, deviation 1): two steps of generator ``index``."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(float32(-2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)


@func
def xoroshiro128p_normal_float64(states, index):
    """A normally distributed float64: two float32 uniforms of generator ``index``, as Numba draws."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(float64(-2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)


# ---------------------------------------------------------------- on the host
def _splitmix64(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _step(s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of many states at once (the state only: the step is linear over GF(2))."""
    s1 = s1 ^ s0
    n0 = ((s0 << np.uint64(55)) | (s0 >> np.uint64(9))) ^ s1 ^ (s1 << np.uint64(14))
    return n0, (s1 << np.uint64(36)) | (s1 >> np.uint64(28))


def _jump(s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Many states each 2**64 steps ahead."""
    a0, a1 = np.zeros_like(s0), np.zeros_like(s1)
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                a0, a1 = a0 ^ s0, a1 ^ s1
            s0, s1 = _step(s0, s1)
    return a0, a1


def _apply(cols: tuple[np.ndarray, np.ndarray], s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A linear map (its 128 columns: the images of the bits of s0, then of s1) applied to states."""
    out0, out1 = np.zeros_like(s0), np.zeros_like(s1)
    for b in range(128):
        word = s0 if b < 64 else s1
        take = np.uint64(0) - ((word >> np.uint64(b % 64)) & np.uint64(1))  # all ones where the bit is set
        out0 ^= take & cols[0][b]
        out1 ^= take & cols[1][b]
    return out0, out1


def _units() -> tuple[np.ndarray, np.ndarray]:
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    zeros = np.zeros(64, np.uint64)
    return np.concatenate([bits, zeros]), np.concatenate([zeros, bits])


def _states(n: int, seed: int, subsequence_start: int) -> np.ndarray:
    out = np.empty(n, xoroshiro128p_dtype)
    if n == 0:
        return out
    z = _splitmix64(int(seed) & _MASK)
    jump = _jump(*_units())  # the jump's 128 columns (its matrix); its powers by squaring below
    s0, s1 = np.array([z], np.uint64), np.array([z], np.uint64)
    power, start = jump, int(subsequence_start)
    while start:  # J**start: the powers J, J**2, J**4... where start has a bit
        if start & 1:
            s0, s1 = _apply(power, s0, s1)
        start >>= 1
        power = _apply(power, *power) if start else power
    power = jump
    while s0.size < n:  # the block of states so far, and the same jumped by its length
        t0, t1 = _apply(power, s0, s1)
        s0, s1 = np.concatenate([s0, t0]), np.concatenate([s1, t1])
        power = _apply(power, *power)
    out["s0"], out["s1"] = s0[:n], s1[:n]
    return out


def init_xoroshiro128p_states(states: Any, seed: int, subsequence_start: int = 0, stream: Any = 0) -> None:
    """Fill a device array of ``xoroshiro128p_dtype`` with generators 2**64 steps apart."""
    states.copy_to_device(_states(states.shape[0], seed, subsequence_start), stream or None)


def create_xoroshiro128p_states(n: int, seed: int, subsequence_start: int = 0, stream: Any = 0) -> Any:
    """``n`` generators for ``seed`` on the device, each 2**64 steps after the one before."""
    states = _empty(n, xoroshiro128p_dtype)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
