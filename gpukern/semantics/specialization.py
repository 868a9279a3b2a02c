"""What warp specialization's statements mean (PTX ISA: ``barrier{.cta}``, ``elect.sync``,
``setmaxnreg``), once, for the front end, the simulator and the CUDA emitter.

*Named barriers.*  A block has 16 hardware barriers; ``barrier()`` is number 0, with every thread of
the block.  ``named_barrier(id, count)`` (``bar.sync id, count``) waits at barrier ``id`` until
``count`` threads have arrived there; ``named_barrier_arrive(id, count)`` (``bar.arrive``) arrives
without waiting -- a producer telling consumers a buffer is ready.  The hardware counts warps: a
thread that arrives waits first for the other live threads of its warp, and the warp's arrival
counts for all its threads, so ``count`` is a multiple of the warp's 32 threads, and every thread
that arrives at one phase of a barrier must give the same count.  When the count is reached the
barrier's phase completes and the waiting threads go on; their memory accesses before it are seen
by each other after it.  More arrivals than the count at one phase is undefined.

*elect_one()*: true in exactly one of the warp's threads that execute it, the lowest-numbered one
(``elect.sync`` with the executing threads as its mask): where one thread of a warp issues a copy.

*setmaxnreg*: the warpgroup's four warps together change the registers each thread may use (24 to
256, a multiple of 8): a producer warpgroup that only issues copies gives registers up
(``setmaxnreg_dec``) so its consumers can take more (``setmaxnreg_inc``).  It changes no value.
"""

from __future__ import annotations

BARRIERS = 16  # hardware barriers per block
FIRST_NAMED = 1  # barrier 0 is barrier()'s
WARP_THREADS = 32  # the unit a named barrier counts in
MAX_THREADS = 1024  # a block's threads, the most a barrier can wait for
NREG_MIN, NREG_MAX, NREG_STEP = 24, 256, 8


def id_problem(i: int) -> str | None:
    """Why ``i`` cannot name a named barrier (None: it can)."""
    if not FIRST_NAMED <= i < BARRIERS:
        return f"a named barrier is {FIRST_NAMED} to {BARRIERS - 1} (0 is barrier()'s, with every thread), not {i}"
    return None


def count_problem(n: int) -> str | None:
    """Why ``n`` threads cannot be a named barrier's count (None: they can)."""
    if n <= 0 or n > MAX_THREADS or n % WARP_THREADS:
        return f"a named barrier's count is a multiple of {WARP_THREADS} threads from 32 to {MAX_THREADS}, not {n}"
    return None


def nreg_problem(n: int) -> str | None:
    """Why ``n`` cannot be setmaxnreg's register count (None: it can)."""
    if not NREG_MIN <= n <= NREG_MAX or n % NREG_STEP:
        return f"setmaxnreg's count is {NREG_MIN} to {NREG_MAX} registers, a multiple of {NREG_STEP}, not {n}"
    return None
