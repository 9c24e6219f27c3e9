"""Running a fleet's packages side by side: one worker process per job, each package on its own.

:func:`run_all` hands the tasks out, in order, to at most ``jobs`` worker
processes forked from this one (so they start with everything it has loaded,
the merge included, at no cost).  A worker runs one task at a time and sends
back only the task's small result; after :data:`TASKS_PER_WORKER` tasks it
exits and a fresh worker takes its place, so memory is bounded by the number
of jobs, not by the number of packages.  Each task holds its own package lock
and transaction (the single update's), so a task that fails, a worker that
dies (killed, out of memory) or a signal never touches another package: the
task in that worker gets ``lost(task, why)`` as its result, the others go on.

SIGTERM, SIGINT or SIGHUP to this process stops handing out tasks, passes
SIGTERM to the workers (a package in its transaction finishes or drops it:
:mod:`krm_merge.txn`) and waits for them; every task that did not finish gets
its ``lost`` result, then :class:`krm_merge.txn.Interrupted` is raised, so the
caller can still report what was done.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Generic, NamedTuple, Sequence, TypeVar

from krm_merge.txn import Interrupted

T = TypeVar("T")
R = TypeVar("R")

TASKS_PER_WORKER = 16
"""Tasks a worker runs before it exits and a fresh one takes its place (what one package's update leaves
in memory does not pile up; a fork costs milliseconds)."""
STOP_TIMEOUT = 120
"""Seconds a worker told to stop may take to finish or drop its package's transaction before it is killed."""
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


def default_jobs() -> int:
    """The number of CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_all(tasks: Sequence[T], work: Callable[[T], R], *, jobs: int, lost: Callable[[T, str], R],
            on_result: Callable[[int, R], None] | None = None, tasks_per_worker: int = TASKS_PER_WORKER) -> list[R]:
    """``work(task)`` of every task in worker processes, at most ``jobs`` at once; the results in the tasks' order.

    ``on_result(index, result)`` is called here as each result arrives.  A
    task whose worker died, or whose ``work`` raised, gets ``lost(task, why)``.
    """
    pool = _Pool(tasks, work, jobs, tasks_per_worker, lost, on_result)
    with _interrupting():
        try:
            pool.run()
        except Interrupted:
            pool.stop("interrupted before it finished: its package is as before or updated (each package is "
                      "written all-or-nothing)", "not started: the fleet update was interrupted")
            raise
    return pool.results()


class _Worker:
    """A forked worker process and the parent's end of its pipe; ``task`` is the index it is running."""

    __slots__ = ("process", "conn", "task", "done")

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.task: int | None = None
        self.done = 0


class _Pool(Generic[T, R]):
    def __init__(self, tasks: Sequence[T], work: Callable[[T], R], jobs: int, per_worker: int,
                 lost: Callable[[T, str], R], on_result: Callable[[int, R], None] | None) -> None:
        self.tasks, self.work, self.jobs, self.per_worker = tasks, work, max(1, jobs), max(1, per_worker)
        self.lost, self.on_result = lost, on_result
        self.pending = deque(range(len(tasks)))
        self.found: dict[int, R] = {}
        self.workers: list[_Worker] = []
        self.context = multiprocessing.get_context("fork")

    def results(self) -> list[R]:
        return [self.found[i] for i in range(len(self.tasks))]

    def run(self) -> None:
        while True:
            self._hand_out()
            if not self.workers:
                return
            ready = set(wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]))
            for worker in list(self.workers):
                if worker.conn in ready:
                    self._receive(worker)
                elif worker.process.sentinel in ready:
                    self._bury(worker, "its worker process ended")

    def _hand_out(self) -> None:
        for worker in self.workers:
            if worker.task is None and self.pending:
                self._give(worker, self.pending.popleft())
        while self.pending and len(self.workers) < self.jobs:
            self.workers.append(self._start())
            self._give(self.workers[-1], self.pending.popleft())
        for worker in [w for w in self.workers if w.task is None]:  # nothing left to hand out
            self._retire(worker)

    def _start(self) -> _Worker:
        sys.stdout.flush()  # else the child would write this process's buffered output a second time
        sys.stderr.flush()
        parent, child = self.context.Pipe()
        siblings = [w.conn for w in self.workers]  # the child closes its copies: only this process holds them
        process = self.context.Process(target=_serve, args=(child, self.work, self.per_worker, siblings), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _give(self, worker: _Worker, index: int) -> None:
        worker.task = index
        try:
            worker.conn.send(self.tasks[index])
        except OSError:  # it died meanwhile: the sentinel says so next
            pass

    def _receive(self, worker: _Worker) -> None:
        try:
            result: R = worker.conn.recv()
        except (EOFError, OSError):
            self._bury(worker, "its worker process ended")
            return
        index, worker.task = worker.task, None
        assert index is not None
        if isinstance(result, _Crashed):
            result = self.lost(self.tasks[index], f"internal error: {result.error}")
        self._keep(index, result)
        worker.done += 1
        if worker.done >= self.per_worker:  # it exits by itself: a fresh one takes its place
            self._retire(worker)

    def _keep(self, index: int, result: R) -> None:
        self.found[index] = result
        if self.on_result is not None:
            self.on_result(index, result)

    def _bury(self, worker: _Worker, why: str) -> None:
        """A worker that ended without a result for its task."""
        worker.process.join()
        code = worker.process.exitcode
        if worker.task is not None:
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            self._keep(worker.task, self.lost(self.tasks[worker.task], f"{why} ({how})"))
        self._drop(worker)

    def _retire(self, worker: _Worker) -> None:
        if worker.done < self.per_worker:  # else it has already exited by itself
            try:
                worker.conn.send(None)  # no more tasks: an idle worker exits
            except OSError:
                pass
        worker.process.join()
        self._drop(worker)

    def _drop(self, worker: _Worker) -> None:
        worker.conn.close()
        self.workers.remove(worker)

    def stop(self, running: str, unstarted: str) -> None:
        """After a signal: the workers told to stop and waited for; every task without a result gets a lost one."""
        with _signals_ignored():
            for worker in self.workers:
                if worker.process.is_alive():
                    os.kill(worker.process.pid, signal.SIGTERM)
            for worker in list(self.workers):
                self._collect_last(worker, running)
            while self.pending:
                index = self.pending.popleft()
                self._keep(index, self.lost(self.tasks[index], unstarted))

    def _collect_last(self, worker: _Worker, running: str) -> None:
        """A stopping worker's result, if it finished its task before it stopped; then it is gone."""
        if worker.task is not None:
            if not wait([worker.conn, worker.process.sentinel], STOP_TIMEOUT):
                worker.process.kill()  # stuck: its package's transaction is finished by the next command on it
            if worker.conn.poll(0):
                try:
                    self._keep(worker.task, worker.conn.recv())
                    worker.task = None
                except (EOFError, OSError):
                    pass
        if worker.task is not None:
            self._keep(worker.task, self.lost(self.tasks[worker.task], running))
            worker.task = None
        worker.process.join()
        self._drop(worker)


def _serve(conn: Connection, work: Callable[[Any], Any], limit: int, siblings: list[Connection]) -> None:
    """A worker: up to ``limit`` tasks from the pipe, one at a time, each result sent back; ``None`` stops it."""
    for signo in _SIGNALS:  # the parent's handler is not this process's: a package's lock installs its own
        signal.signal(signo, signal.SIG_DFL)
    for sibling in siblings:  # else a sibling's pipe would stay open here after the parent is gone
        sibling.close()
    for _ in range(limit):
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if task is None:
            return
        try:
            result = work(task)
        except Exception as err:  # a bug in one task: said as that task's result, no traceback
            result = _Crashed(f"{type(err).__name__}: {err}")
        conn.send(result)


class _Crashed(NamedTuple):
    """What a worker sends back when its task raised."""

    error: str


class _interrupting:
    """While the pool runs, a termination signal raises :class:`~krm_merge.txn.Interrupted` in this process."""

    def __enter__(self) -> None:
        self._old = {}
        for signo in _SIGNALS:
            if signal.getsignal(signo) not in (signal.SIG_IGN, None):
                self._old[signo] = signal.signal(signo, _raise_interrupted)

    def __exit__(self, *exc: object) -> None:
        for signo, handler in self._old.items():
            signal.signal(signo, handler)


def _raise_interrupted(signo: int, _frame: Any) -> None:
    raise Interrupted(signo)


class _signals_ignored:
    """A second signal while the workers are being stopped does not cut the stopping short."""

    def __enter__(self) -> None:
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)

    def __exit__(self, *exc: object) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)


__all__ = ["TASKS_PER_WORKER", "default_jobs", "run_all"]
