"""The simulator: a runtime that executes the IR on the CPU and checks what the hardware does not.

``interpreter`` (``SimBackend``: blocks, lanes, statements), ``memory`` (the one memory path every
access takes, whose steps are the checks), ``access`` (the event they share), ``races`` (shared and
global races), ``init`` (uninitialised reads), ``asynchronous`` (copies and wgmma reads in flight),
``overflow`` (index overflow), ``limits`` (allocations against the machine's memory), ``warp``
(warps and their masks), ``mma`` (fragments and the matrix units' reads).  Imports the runtime layer,
``backends.base`` and below.  A new memory check is a class with ``track(access)`` added to
``memory.MemoryPath.steps``; a new IR statement is an ``s_<Node>`` method of the interpreter.
"""
