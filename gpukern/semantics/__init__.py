"""The meaning layer: what every operation means, once, for every consumer.

The emitter, the constant folder, the simulator and the profiler all read these tables: operators,
math functions and atomics with their NumPy and C forms (``ops``), complex operations (``complex``),
front-end value kinds (``values``), warp intrinsics and block votes (``warp``), the tensor cores'
fragments and moves (``mma``) and sm_90's warpgroup multiply (``wgmma``), record fields
(``records``), ``print()`` formats (``formats``).  Imports the IR and the ground only, never the
language, the front end or a code generator.  A new operator is one entry in ``ops``.
"""
