"""The language layer: the names a kernel uses, each intrinsic one class owning its typing and lowering.

``core``: threads and blocks, shared and local memory, barriers, atomics, math, ``@func``; ``warp``:
shuffles, votes, ballots; ``mma``: tensor-core fragments and sm_90's warpgroup multiply, with the
``swizzle128`` copy helper; ``compat``: the small classes other languages' names need (``grid(ndim)``,
Numba's ``shared.array(shape, dtype)``, CuPy's ``shared_memory``), for ``gpukern.numba`` and
``gpukern.cupy``.  Imports the meaning, the IR and the ground.  A new intrinsic is a class
with ``lower(cx, node)`` here, exported from ``gpukern/__init__.py``.
"""
