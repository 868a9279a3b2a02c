"""The front end: Python's AST to typed IR, with the static checks and passes over it.

``compiler`` (statements and the driver), ``expressions``, ``calls``, ``reductions``, ``views``
(slices), ``checks`` (definite assignment, divergent barriers and warp operations), ``passes``
(declaration placement, index arithmetic), ``load_rewrites`` (shared loads made once, rows read
in vectors).  Imports the language, the meaning, the IR and the ground; never code generation or a
runtime.  A new statement form goes in ``compiler``; a new check, in ``checks``.
"""
