"""Tools over kernels and backends: the memory profiler, ``gk.sanitize``, autotuning, the ``gpukern`` command.

``profile`` and ``sanitize`` run on the simulator, ``autotune`` times configurations on any backend,
``cli`` is the ``gpukern`` command (``python -m gpukern``).  The top layer: may import anything in
``gpukern``, and nothing imports it but the face (``gpukern/__init__.py``, ``__main__``).
"""
