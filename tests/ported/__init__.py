"""Kernels ported by spelling from Numba-CUDA's and CuPy's own test suites (see README.md)."""
