"""The worker pool of a fleet update (:mod:`krm_merge.fleet.run`), with real processes.

At most ``jobs`` tasks run at once, each worker is replaced after a few
tasks, results come back in the tasks' order, and a task whose worker dies or
raises gets its own ``lost`` result while the others finish.  A termination
signal stops the pool: the running tasks finish, the others are not started,
and every task still gets a result.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from krm_merge.fleet.run import run_all


def lost(task: int, why: str) -> tuple[int, str]:
    return task, f"lost: {why}"


def test_results_in_order_at_most_jobs_at_once_and_workers_recycled(tmp_path: Path) -> None:
    counter = tmp_path / "running"
    counter.write_text("0 0")

    def work(task: int) -> tuple[int, int]:
        with open(counter, "r+") as fh:  # how many run at once, under a lock shared by the workers
            fcntl.flock(fh, fcntl.LOCK_EX)
            now, most = map(int, fh.read().split())
            fh.seek(0), fh.truncate(), fh.write(f"{now + 1} {max(most, now + 1)}")
        time.sleep(0.05)
        with open(counter, "r+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            now, most = map(int, fh.read().split())
            fh.seek(0), fh.truncate(), fh.write(f"{now - 1} {most}")
        return task * task, os.getpid()

    seen: list[int] = []
    results = run_all(list(range(11)), work, jobs=3, lost=lost, tasks_per_worker=2,
                      on_result=lambda index, _: seen.append(index))
    assert [r[0] for r in results] == [n * n for n in range(11)]
    assert sorted(seen) == list(range(11))
    pids = {r[1] for r in results}
    assert len(pids) >= 6 and os.getpid() not in pids  # 11 tasks, 2 per worker: at least 6 workers, none of them us
    running, most = map(int, counter.read_text().split())
    assert running == 0 and most <= 3


def test_a_dying_or_failing_task_loses_only_itself(tmp_path: Path) -> None:
    def work(task: int) -> tuple[int, str]:
        if task == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        if task == 4:
            raise ValueError("a bug")
        return task, "done"

    results = run_all(list(range(7)), work, jobs=2, lost=lost)
    assert results[2] == (2, "lost: its worker process ended (killed by signal 9)")
    assert results[4] == (4, "lost: internal error: ValueError: a bug")
    assert [r for n, r in enumerate(results) if n not in (2, 4)] == [(n, "done") for n in (0, 1, 3, 5, 6)]


POOL = """
import json, os, sys, time
from krm_merge.fleet.run import run_all
from krm_merge.txn import Interrupted
done = {}
def work(task):
    time.sleep(0.3)
    return [task, "done"]
try:
    run_all(list(range(40)), work, jobs=2, lost=lambda t, why: [t, why],
            on_result=lambda i, r: (done.__setitem__(i, r), print(i, flush=True)))
    code = 0
except Interrupted as stop:
    code = 128 + stop.signo
print(json.dumps({"code": code, "done": done}), flush=True)
"""


def test_a_signal_stops_the_pool_and_every_task_still_gets_a_result() -> None:
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # one task is done: the pool runs
    assert first.strip().isdigit()
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group, workers included
    out, _ = proc.communicate(timeout=120)
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["code"] == 128 + signal.SIGINT
    results = summary["done"]
    assert sorted(map(int, results)) == list(range(40))
    finished = [r for r in results.values() if r[1] == "done"]
    unstarted = [r for r in results.values() if r[1].startswith("not started")]
    assert finished and unstarted and len(finished) + len(unstarted) == 40  # the running ones finished
    assert proc.returncode == 0
    time.sleep(0.1)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
    assert not children  # no worker left behind
