"""``sanitize``: every bug the simulator finds in one launch, not only the first.

A plain launch on the simulator raises the first fault it meets; a tool, a test or a student
fixing a kernel wants them all.  ``sanitize`` runs the launch with every check on and collects
the faults instead (the first of each kind and line: one wrong index in a loop is one report,
not a thousand).  The run goes on past each fault as a GPU would (an access out of bounds is
skipped), so later faults are found too; what the kernel computes after a fault is not to be
trusted, but its faults are each real.
"""

from __future__ import annotations

from typing import Any

from ..errors import BarrierDivergenceError, KernelFault, LaunchError
from ..semantics.warp import LANES


def sanitize(launch: Any, *args: Any, lanes: int | None = None) -> list[KernelFault]:
    """Run ``launch`` (``kernel[grid, block]``) with ``args`` on the simulator, every check on,
    and return every fault found, in the order found; ``[]`` for a clean launch.  ``lanes``: the
    threads of a warp, 32 or 64 (AMD CDNA's wavefronts: code that assumes 32 is then
    ``gk.WarpWidthError``); None: the simulator's (``GPUKERN_SIM_LANES``, default 32).

    The checks: out-of-bounds and misaligned accesses, data races in shared and global memory
    (atomics included), reads of memory nothing wrote, index arithmetic that wraps around, stores
    whose implicit conversion changed a value (``gk.ConversionError``) and integer division by zero
    (``gk.ZeroDivisionFault``), both reported here only, and
    barriers that not every thread reaches (found before the run where the code shows it).
    Output arrays are written as by any launch.
    """
    from ..backends import get_backend
    from ..kernel import configured

    launch = configured(launch, "sanitize")
    kernel = launch.kernel
    args = kernel.complete(tuple(args))
    sim = get_backend("sim")
    if lanes is None:
        lanes = sim.lanes
    elif lanes not in LANES:
        raise LaunchError(f"gk.sanitize(lanes={lanes!r}): the simulator runs warps of 32 or 64 lanes")
    try:
        variant = kernel.variant(kernel.signature_of(args), lanes)
    except BarrierDivergenceError as e:  # the static check: the kernel cannot run anywhere
        e.kernel = kernel.__name__
        return [e]
    faults: list[KernelFault] = []
    args = variant.launch_args(args)
    sim.launch(variant, launch.grid, launch.block, args, faults=faults, shared=launch.shared)
    return faults
