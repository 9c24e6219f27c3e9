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

SIGTERM, SIGINT or SIGHUP to this process stops handing out tasks and lets
each worker finish the task it is running (for at most :data:`STOP_TIMEOUT`
seconds: then it is killed, and its package's transaction is finished or
dropped by the next command on it, :mod:`krm_merge.txn`); every task not
started gets its ``lost`` result, then :class:`krm_merge.txn.Interrupted` is
raised, so the caller can still report what was done.  The workers ignore
those signals themselves (Ctrl-C reaches the whole process group): this
process decides, so no package's update is cut short at an instant its lock
does not cover.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Generic, Sequence, TypeVar

from krm_merge.records import Record
from krm_merge.txn import Interrupted

T = TypeVar("T")
R = TypeVar("R")

TASKS_PER_WORKER = 16
"""Tasks a worker runs before it exits and a fresh one takes its place (what one package's update leaves
in memory does not pile up; a fork costs milliseconds)."""
STOP_TIMEOUT = 20
"""Seconds a worker may take to finish its task once the run is stopped, before it is killed (within
Kubernetes' default grace period of 30 s, so the report is written before the pod is killed)."""
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
    with _Stopping() as stopping:
        pool.run(stopping)
        if stopping.signo is not None:
            pool.stop(f"stopped: still running {STOP_TIMEOUT} s after the fleet update was interrupted; its package "
                      "is as before, updated, or finished by the next krm-merge command on it (krm-merge recover)",
                      "not started: the fleet update was interrupted")
            raise Interrupted(stopping.signo)
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
    """One :func:`run_all`: the tasks not yet handed out, the workers, the results found."""

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

    def run(self, stopping: _Stopping) -> None:
        """Hand out every task and collect the results, until they are all in or a signal says stop."""
        while stopping.signo is None:
            self._hand_out()
            if not self.workers:
                return
            ready = set(wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]
                             + [stopping.fd]))
            if stopping.fd in ready:
                stopping.drain()
                continue  # stop (the results already sent are received by stop), or a stray wake-up
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
        """After a signal: each worker finishes its task (or is killed past the timeout), then every task
        without a result gets a lost one."""
        while self.pending:
            index = self.pending.popleft()
            self._keep(index, self.lost(self.tasks[index], unstarted))
        for worker in list(self.workers):
            self._finish(worker, running)

    def _finish(self, worker: _Worker, running: str) -> None:
        """A stopping worker's last result, if it sends it in time; then it is gone."""
        if worker.task is not None:
            if wait([worker.conn], STOP_TIMEOUT):  # its result, or the end of its pipe
                self._receive(worker)
            else:
                worker.process.kill()
        if worker not in self.workers:
            return  # received and retired, or buried
        if worker.task is not None:
            self._keep(worker.task, self.lost(self.tasks[worker.task], running))
            worker.task = None
        self._retire(worker)


def _serve(conn: Connection, work: Callable[[Any], Any], limit: int, siblings: list[Connection]) -> None:
    """A worker: up to ``limit`` tasks from the pipe, one at a time, each result sent back; ``None`` stops it."""
    for signo in _SIGNALS:  # the main process decides when to stop (see the module's docstring)
        signal.signal(signo, signal.SIG_IGN)
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


class _Crashed(Record):
    """What a worker sends back when its task raised."""

    error: str


class _Stopping:
    """While the pool runs, a termination signal is noted and wakes the pool's wait (a self-pipe), never raised
    at an arbitrary instant: a result half read from a worker's pipe would be lost."""

    def __enter__(self) -> _Stopping:
        self.signo: int | None = None
        self.fd, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._old = {}
        for signo in _SIGNALS:
            if signal.getsignal(signo) not in (signal.SIG_IGN, None):  # e.g. nohup: ignored, as asked
                self._old[signo] = signal.signal(signo, self._note)
        return self

    def _note(self, signo: int, _frame: Any) -> None:
        self.signo = signo
        try:
            os.write(self._write, b"!")
        except OSError:  # the pipe is full: the pool is being woken already
            pass

    def drain(self) -> None:
        """Empty the pipe (a worker forked a moment before it ignores signals may have written to it too)."""
        try:
            while os.read(self.fd, 512):
                pass
        except BlockingIOError:
            pass

    def __exit__(self, *exc: object) -> None:
        for signo, handler in self._old.items():
            signal.signal(signo, handler)
        os.close(self.fd)
        os.close(self._write)


__all__ = ["TASKS_PER_WORKER", "default_jobs", "run_all"]
