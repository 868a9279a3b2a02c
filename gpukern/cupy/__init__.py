"""CuPy's JIT kernels on gpukern: ``from gpukern.cupy import jit`` in place of ``from cupyx import jit``.

As ``gpukern.numba``, names only: each ``cupyx.jit`` name points at gpukern's one definition, or
is a small class reordering arguments onto it (``jit.shared_memory(dtype, size)``).  A kernel is a
``gk.Kernel`` behind CuPy's launch spelling ``kernel((grid,), (block,), (args...), shared_mem=n)``,
so it runs on CUDA, OpenCL and the simulator.  docs/numba.md has the CuPy section.

Layer: with ``tools`` and ``numba``, the top.
"""

from __future__ import annotations

from . import jit

__all__ = ["jit"]
