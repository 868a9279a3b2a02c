"""C code generation: one emitter over the typed IR, and a table of spellings per C dialect.

``emitter`` (programs, functions, statements), ``expressions``, ``tables`` (file-scope constants,
record structs), ``atomics`` (native and compare-and-swap), ``dialect`` (the table's type) and
``dialects`` (CUDA C, OpenCL C), ``tf32`` and ``wgmma`` (CUDA's matrix lowerings), ``names``,
``lines`` (``#line`` directives).  Imports the front end's analyses, the meaning, the IR and the
ground.  A new C spelling is a dialect table entry; the emitter never branches on a dialect's name.
"""
