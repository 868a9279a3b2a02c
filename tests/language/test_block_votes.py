"""Block-wide votes -- syncthreads_count / syncthreads_and / syncthreads_or (CUDA's __syncthreads_*):
every backend against NumPy; that they are barriers to the divergence check and the simulator's race
checks; threads that returned early; what is refused."""

from __future__ import annotations

import numpy as np
import pytest

import gpukern as gk
from gpukern import Array, bool_, int32, shared, thread_idx


@gk.kernel
def votes(pred: Array[bool_], out: Array[int32, 2]):
    i = gk.global_id(0)
    out[i, 0] = gk.syncthreads_count(pred[i])
    out[i, 1] = int32(gk.syncthreads_and(pred[i]))
    out[i, 2] = int32(gk.syncthreads_or(pred[i]))
    out[i, 3] = gk.syncthreads_count(thread_idx.x % 3 == 0) + gk.syncthreads_count(True)


def expected(pred: np.ndarray, tpb: int, live: np.ndarray | None = None) -> np.ndarray:
    """Per thread: the votes of its block over its live threads (all, unless ``live`` says)."""
    live = np.ones(len(pred), bool) if live is None else live
    out = np.zeros((len(pred), 4), np.int32)
    for b in range(0, len(pred), tpb):
        p, alive = pred[b : b + tpb], live[b : b + tpb]
        x = np.arange(tpb) % 3 == 0
        out[b : b + tpb] = [
            np.count_nonzero(p & alive),
            np.all(p[alive]),
            np.any(p[alive]),
            np.count_nonzero(x & alive) + np.count_nonzero(alive),
        ]
    return out


@pytest.mark.parametrize("tpb", [96, 7, 256])
def test_votes(backend, tpb):
    rng = np.random.default_rng(tpb)
    nblocks = 4
    pred = rng.random(nblocks * tpb) < 0.5
    pred[:tpb] = True  # block 0: all true; block 1: all false
    pred[tpb : 2 * tpb] = False
    out = np.zeros((len(pred), 4), np.int32)
    votes[nblocks, tpb](pred, out)
    np.testing.assert_array_equal(out, expected(pred, tpb))


@gk.kernel
def after_return(pred: Array[bool_], out: Array[int32, 2], n: int32):
    i = gk.global_id(0)
    if i >= n:
        return
    out[i, 0] = gk.syncthreads_count(pred[i])
    out[i, 1] = int32(gk.syncthreads_and(pred[i]))
    out[i, 2] = int32(gk.syncthreads_or(pred[i]))
    out[i, 3] = gk.syncthreads_count(thread_idx.x % 3 == 0) + gk.syncthreads_count(pred[i] or True)


def test_threads_that_returned_do_not_vote(backend):
    """Threads past n have left: they still arrive (as at barrier()), but their predicate, which
    would read past the end of ``pred``, is not evaluated and counts for nothing."""
    tpb, n = 64, 100
    pred = np.ones(n, bool)
    pred[70] = False
    out = np.full((128, 4), -1, np.int32)
    after_return[2, tpb](pred, out, n)
    live = np.arange(128) < n
    want = expected(np.append(pred, np.zeros(28, bool)), tpb, live)
    np.testing.assert_array_equal(out[:n], want[:n])
    assert (out[n:] == -1).all()


@gk.kernel
def exchange(vals: Array[int32], out: Array[int32]):
    """Each thread reads its neighbour's shared element after the vote: ordered by it, as by barrier()."""
    s = shared(int32, 64)
    t = thread_idx.x
    s[t] = vals[t]
    n = gk.syncthreads_count(vals[t] > 0)
    out[t] = s[(t + 1) % 64] * 1000 + n


def test_vote_is_a_barrier_to_the_race_checks(backend):
    vals = np.arange(64, dtype=np.int32) - 10
    out = np.zeros(64, np.int32)
    exchange[1, 64](vals, out)
    np.testing.assert_array_equal(out, np.roll(vals, -1) * 1000 + np.count_nonzero(vals > 0))


@gk.kernel
def loop_until_done(vals: Array[int32], out: Array[int32]):
    """The vote's result is the same in every thread: a loop that it ends is uniform, so it may hold
    barriers."""
    t = thread_idx.x
    x = vals[t]
    rounds = 0
    while True:
        if not gk.syncthreads_or(x > 1):
            break
        x = x // 2
        rounds += 1
    out[t] = rounds


def test_vote_ends_a_uniform_loop(backend):
    vals = np.array([1, 2, 8, 40] * 16, np.int32)
    out = np.zeros(64, np.int32)
    loop_until_done[1, 64](vals, out)
    np.testing.assert_array_equal(out, np.full(64, 5))  # 40 -> 20 -> 10 -> 5 -> 2 -> 1: 5 halvings


# ---------------------------------------------------------------- refusals
@gk.kernel
def divergent(pred: Array[bool_], out: Array[int32]):
    i = gk.global_id(0)
    if thread_idx.x < 16:
        out[i] = gk.syncthreads_count(pred[i])


@gk.kernel
def races_without(vals: Array[int32], out: Array[int32]):
    s = shared(int32, 64)
    t = thread_idx.x
    s[t] = vals[t]
    x = s[(t + 1) % 64]
    out[t] = x + gk.syncthreads_count(vals[t] > 0)


@gk.kernel
def vote_first(vals: Array[int32], out: Array[int32]):
    s = shared(int32, 64)
    t = thread_idx.x
    s[t] = vals[t]
    out[t] = s[(t + 1) % 64] * 1000 + gk.syncthreads_count(vals[t] > 0)


def test_divergent_vote_is_refused(on_simulator):
    with pytest.raises(gk.BarrierDivergenceError, match="depends on the thread"):
        divergent[1, 32](np.ones(32, bool), np.zeros(32, np.int32))


def test_read_before_the_vote_still_races(on_simulator):
    """A read of another thread's element before the vote: a race, as it would be before barrier()."""
    with pytest.raises(gk.DataRaceError, match="shared array 's'"):
        races_without[1, 64](np.ones(64, np.int32), np.zeros(64, np.int32))


def test_vote_runs_before_the_rest_of_its_statement(backend):
    """The vote is a statement of its own, made before the rest of the statement it is in (C leaves
    the order of ``+``'s operands unspecified): the read of ``s`` comes after its barrier."""
    vals = np.arange(64, dtype=np.int32) - 10
    out = np.zeros(64, np.int32)
    vote_first[1, 64](vals, out)
    np.testing.assert_array_equal(out, np.roll(vals, -1) * 1000 + np.count_nonzero(vals > 0))


@gk.func
def counted(p: bool_) -> int32:
    return gk.syncthreads_count(p)


@gk.kernel
def in_func(pred: Array[bool_], out: Array[int32]):
    i = gk.global_id(0)
    out[i] = counted(pred[i])


def test_vote_in_a_func(backend):
    """A @func may vote on CUDA and the simulator; OpenCL's emulation needs a __local count, which
    only the kernel's body can declare: a CompileError that says so."""
    pred = np.arange(64) % 4 == 0
    out = np.zeros(64, np.int32)
    if backend == "opencl":
        with pytest.raises(gk.CompileError, match="syncthreads_count\\(\\) in a @func cannot be compiled to opencl"):
            in_func[1, 64](pred, out)
        return
    in_func[1, 64](pred, out)
    np.testing.assert_array_equal(out, np.full(64, 16))


@pytest.mark.parametrize(
    "body, text",
    [
        ("gk.syncthreads_count()", "takes 1 argument"),
        ("gk.syncthreads_and(a[0], a[1])", "takes 1 argument"),
        ("gk.syncthreads_or(a)", "predicate"),
    ],
)
def test_typing(on_simulator, body, text):
    from kernel_source import load_kernel

    k = load_kernel(
        "import gpukern as gk\n"
        "from gpukern import Array, int32\n"
        "@gk.kernel\n"
        "def k(a: Array[int32]):\n"
        f"    a[0] = {body}\n"
    )
    with pytest.raises(gk.KernelTypeError, match=text):
        k[1, 32](np.zeros(4, np.int32))


def test_outside_a_kernel():
    with pytest.raises(gk.GpukernError, match="only be used inside"):
        gk.syncthreads_count(True)
