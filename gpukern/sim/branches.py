"""The two sides of an ``if`` run side by side where they wait on each other (warp specialization).

The simulator runs an ``if``'s two sides one after the other, each for its lanes.  That is every
order a GPU may pick, except where one side waits for the other: a producer warpgroup that
fills stages and waits for them to be emptied, and consumer warpgroups that wait for them to be
filled and empty them (``mbarrier_wait``).  Where both sides of an ``if`` hold such a wait (in
them or in a function they call), each side runs in a thread of its own and the sides take
turns: a side runs until a wait it cannot pass, then hands over to another that can move.
Progress is the mbarriers' state changing (``Branches.moved``) or a side finishing; a side
blocked since the last progress is not run again until there is some.  When no side can move,
the wait that finds it so is a deadlock, reported at its line (``sim.mbarriers``).

Only one thread runs at a time, between waits, so the interpreter's state needs no locking; what
differs between the sides -- the function frames they are in, the loops they are in
(``_Run.thread_state``) -- each side saves when it hands over and installs again when its turn
comes, so the simulator's statements read plain attributes.  A fault raised in a side ends the
others and is raised by the ``if``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import nodes as ir

_WAITS = ("wait", "try_wait")


class _Abort(BaseException):
    """Unwinds a side's thread when another side raised (never seen outside this module)."""


class _Task:
    def __init__(self, parent: _Task | None):
        self.parent = parent
        self.status = "ready"  # ready | blocked (at ``stamp``) | joining (its sides running) | done
        self.stamp = -1
        self.children: list[_Task] = []
        self.state: Any = None  # its interpreter state while another task runs (``_Run.thread_state``)


class Branches:
    """The sides of one launch's ``if``s running side by side, and whose turn it is."""

    def __init__(self, run: Any):
        self.run = run
        self.cond = threading.Condition()
        self.main = _Task(None)
        self.tasks: list[_Task] = [self.main]
        self.current = self.main
        self.progress = 0
        self.aborted = False
        self.error: BaseException | None = None  # the fault a side raised, which ends the others
        self.blocking: dict[int, bool] = {}  # per statement: whether it holds a wait (in it or its callees)
        self._local = threading.local()

    # ------------------------------------------------------------ which ifs
    def waits_in(self, stmts: list[ir.Stmt]) -> bool:
        """Whether running ``stmts`` may wait on an mbarrier (the functions they call included)."""
        key = id(stmts)
        found = self.blocking.get(key)
        if found is None:
            found = self.blocking[key] = any(self._waits(n) for n in ir.walk_body(stmts))
        return found

    def _waits(self, n: ir.Node) -> bool:
        if isinstance(n, ir.Mbarrier):
            return n.op in _WAITS
        if isinstance(n, ir.NamedBarrier):
            return n.wait
        if isinstance(n, ir.Call):
            return self.waits_in(n.func.body)
        return False

    def side_by_side(self, s: ir.If, then: np.ndarray, orelse: np.ndarray) -> bool:
        return bool(then.any() and orelse.any() and s.orelse and self.waits_in(s.then) and self.waits_in(s.orelse))

    # ------------------------------------------------------------ running the sides
    @property
    def me(self) -> _Task:
        return getattr(self._local, "task", self.main)

    def moved(self) -> None:
        """An mbarrier changed: a side blocked on one may pass now."""
        self.progress += 1

    def run_sides(self, sides: list[tuple[Callable[[], None], Any]]) -> None:
        """Run each ``(body, state)`` side in a thread of its own, taking turns with the rest, and
        return when all have finished (``state``: the interpreter's per-thread state to start from)."""
        parent = self.me
        parent.status = "joining"
        threads = []
        for body, state in sides:
            task = _Task(parent)
            parent.children.append(task)
            self.tasks.append(task)
            t = threading.Thread(target=self._side, args=(task, body, state), daemon=True)
            threads.append(t)
            t.start()
        with self.cond:
            self._hand_over(parent)
        for t in threads:
            t.join()
        parent.children = []
        parent.status = "ready"
        self.tasks = [t for t in self.tasks if t.parent is not parent]
        if self.aborted:  # a side raised: the if of the launch's own thread raises it, the others unwind
            if parent is not self.main:
                raise _Abort
            error, self.error, self.aborted = self.error, None, False
            raise error  # type: ignore[misc]

    def _side(self, task: _Task, body: Callable[[], None], state: Any) -> None:
        self._local.task = task
        with self.cond:
            while self.current is not task and not self.aborted:
                self.cond.wait()
        self.run.thread_state(state)  # its turn: its frames and loops are the interpreter's
        try:
            if not self.aborted:
                with np.errstate(all="ignore"), ir.deep_recursion():
                    body()
        except _Abort:
            pass
        except BaseException as e:  # a fault: it ends every side, and the outermost if raises it
            if self.error is None:
                self.error = e
            self.aborted = True
        with self.cond:
            task.status = "done"
            self.progress += 1
            if self.aborted:  # back to the launch's own thread, which raises it once the sides are gone
                self.current = self.main
                self.cond.notify_all()
            else:
                self._pass(task)

    def wait_turn(self) -> bool:
        """Called at a wait the caller cannot pass: let another side move.  False where none can
        (a deadlock: the caller reports it and goes on)."""
        task = self.me
        with self.cond:
            task.status, task.stamp = "blocked", self.progress
            if self._next(task) is None:
                task.status = "ready"
                return False
            self._hand_over(task)
            task.status = "ready"
            return True

    def can_move(self) -> bool:
        """Whether a side other than the caller's could run now (a try_wait's loop would end)."""
        with self.cond:
            return self._next(self.me) is not None

    # ------------------------------------------------------------ turns (the condition held)
    def _can_run(self, t: _Task) -> bool:
        if t.status == "ready":
            return True
        if t.status == "blocked":
            return t.stamp != self.progress
        if t.status == "joining":
            return all(c.status == "done" for c in t.children)
        return False

    def _next(self, after: _Task) -> _Task | None:
        """The next task after ``after``, round the list, that can run."""
        order = self.tasks
        i = order.index(after) if after in order else -1
        for t in order[i + 1 :] + order[: i + 1]:
            if t is not after and self._can_run(t):
                return t
        return None

    def _hand_over(self, task: _Task) -> None:
        """``task`` gives the turn to the next that can run and waits for its own turn again."""
        task.state = self.run.thread_state()
        nxt = self._next(task)
        if nxt is not None:
            self.current = nxt
            self.cond.notify_all()
        while self.current is not task and not (self.aborted and task.parent is not None):
            self.cond.wait()
        if self.aborted and task.parent is not None:
            raise _Abort
        self.run.thread_state(task.state)

    def _pass(self, task: _Task) -> None:
        """A finished ``task`` gives the turn on (its parent, once its sides are all done)."""
        nxt = self._next(task)
        self.current = nxt if nxt is not None else task.parent
        self.cond.notify_all()
