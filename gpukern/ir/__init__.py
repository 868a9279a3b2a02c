"""The IR layer: the typed intermediate representation every later layer reads, and kernel source.

``nodes``: the IR's node classes (memory spaces and barriers first-class, every node with its Python
location, ``CHILDREN`` per class, ``accesses()`` per node that touches memory); ``source``: a
function's source parsed with true positions.  Imports only the ground (``gpukern.errors``,
``gpukern.types``).  A new statement or expression is a dataclass in ``nodes`` (with ``accesses()``
if it reads or writes an array: ``tests/frontend/test_ir_accesses.py`` checks).
"""
