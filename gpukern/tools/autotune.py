"""Autotuning: time a kernel's ``Const`` configurations on this device and keep the fastest.

Tile sizes that are best on one GPU are rarely best on another, or for another
problem shape.  ``autotune`` launches each configuration (compiling it as any
launch would), times it with device events like ``gk.benchmark``, and returns
the fastest.  The choice is stored in the binary cache under a key made of the
kernel's source, the device, the configurations and the caller's ``key`` (the
problem shape), so another process asks the cache instead of timing again.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..backends import get_backend
from ..errors import GpukernError, LaunchError
from ..runtime.cache import binary_cache, make_key
from ..timing import benchmark

Config = dict[str, Any]


def autotune(
    kernel: Any,
    configs: Sequence[Config],
    args: Callable[[Config], tuple[Any, ...]],
    launch: Callable[[Config], tuple[Any, ...]],
    key: Any = (),
    repeat: int = 10,
    warmup: int = 2,
    verbose: bool = True,
    backend: str | None = None,
) -> Config:
    """The fastest of ``configs`` for ``kernel`` on the current device.

    ``args(cfg)`` gives the launch arguments for a configuration (``Const`` values
    included) and ``launch(cfg)`` its ``(grid, block)``, or ``(grid, block, shared_bytes)`` for
    a kernel with ``dynamic_shared`` arrays.  ``key`` names the problem (e.g. its shape):
    choices are remembered per kernel, device, configurations and key.
    Configurations the device cannot run (too many threads, too much shared memory) are
    skipped.  With ``verbose``, progress and timings go to stderr.
    """
    if not configs:
        raise LaunchError("autotune() needs at least one configuration")
    b = get_backend(backend)
    configs = [dict(c) for c in configs]
    cache = binary_cache()
    cache_key = make_key(
        kind="autotune",
        kernel=kernel.__name__,
        source=ast.dump(kernel.parsed.tree),
        device=b.device_name(),
        configs=repr(configs),
        key=repr(key),
    )
    stored = cache.get(cache_key)
    if stored is not None:
        try:
            choice = json.loads(stored)["index"]
            if verbose:
                print(f"autotune {kernel.__name__}: {configs[choice]} (remembered)", file=sys.stderr)
            return configs[choice]
        except (ValueError, KeyError, IndexError, TypeError):
            pass  # a damaged or foreign entry: time again
    times: list[float | None] = []
    for i, cfg in enumerate(configs):
        try:
            a = args(cfg)
            run = kernel[tuple(launch(cfg))]
            if backend is None:  # the current backend, through the launch plan as users will launch it
                t: float | None = benchmark(lambda run=run, a=a: run(*a), repeat, warmup)
            else:
                t = benchmark(lambda run=run, a=a: run(*a, backend=backend), repeat, warmup, backend)
            note = f"{t * 1e3:.3f} ms"
        except GpukernError as e:  # compile or launch limits: this configuration cannot run here
            t, note = None, f"skipped ({str(e).splitlines()[0]})"
        times.append(t)
        if verbose:
            print(f"autotune {kernel.__name__} [{i + 1}/{len(configs)}] {cfg}: {note}", file=sys.stderr)
    valid = [i for i, t in enumerate(times) if t is not None]
    if not valid:
        raise LaunchError(f"autotune(): none of the {len(configs)} configurations of {kernel.__name__} can run here")
    best = min(valid, key=lambda i: times[i])  # type: ignore[arg-type, return-value]
    if verbose:
        print(f"autotune {kernel.__name__}: chose {configs[best]}", file=sys.stderr)
    cache.put(cache_key, json.dumps({"index": best, "config": configs[best], "times": times}).encode())
    return configs[best]
