"""A fleet update killed in the middle (issue 36): every package is as before or as updated, never half.

Each package is updated in its own transaction (:mod:`krm_merge.txn`), so a
SIGKILL of the whole process group (a node lost, a pod killed) leaves each
package old, new, or with a journal that ``krm-merge recover PKG`` finishes.
A SIGTERM (a pod being stopped) stops the run: each worker finishes the
package it is updating, the others are not started, the report is still
written with every package in it, and the exit code is 143.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import require_binary
from tests.reliability.killing import strays

from .world import KRM_MERGE, Fleet, configmap, deployment, report_of, tree

pytestmark = pytest.mark.e2e

COUNT = 24


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    require_binary("git")
    require_binary("kpt")
    fleet = Fleet(tmp_path_factory.mktemp("kill"))
    for n in range(COUNT):
        fleet.consumer(f"clusters/c{n:02d}", "v1", edits={
            "deploy.yaml": deployment("web:1.0", replicas=n + 2),
            **{f"local/cm-{k}.yaml": configmap(str(k), f"local-{k}") for k in range(20)}})
    return fleet


def packages(root: Path) -> dict[str, dict[str, bytes]]:
    return {f"c{n:02d}": tree(root / "mono" / "clusters" / f"c{n:02d}") for n in range(COUNT)}


def start(fleet: Fleet, where: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([KRM_MERGE, "update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--jobs", "2",
                             *extra], cwd=where, env=fleet.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def wait_for_progress(proc: subprocess.Popen[str]) -> None:
    """Until the first package's line: workers are running."""
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert ": updated to v3" in line, line


@pytest.fixture(scope="module")
def after(fleet: Fleet) -> dict[str, dict[str, bytes]]:
    where = fleet.copy("uninterrupted")
    proc = fleet.fleet(cwd=where)
    assert proc.returncode == 0, proc.stderr
    return packages(where)


def test_sigkill_in_the_middle_leaves_each_package_old_or_new(fleet: Fleet, after: dict[str, dict[str, bytes]]) -> None:
    before = packages(fleet.tmp)  # the built monorepo: fleet.mono
    rng = random.Random(36)
    for trial in range(12):
        where = fleet.tmp / f"trial-{trial}"
        shutil.rmtree(where, ignore_errors=True)
        fleet.copy(where.name)
        proc = start(fleet, where)
        wait_for_progress(proc)
        time.sleep(rng.uniform(0, 0.6))
        os.killpg(proc.pid, signal.SIGKILL)  # the parent and every worker at once
        proc.wait()
        found = packages(where)
        old = [name for name, files in found.items() if files == before[name]]
        new = [name for name, files in found.items() if files == after[name]]
        pending = [name for name in found if name not in old and name not in new]
        for name in pending:  # killed in its transaction: recover settles it, as for one package
            assert strays(found[name]), name
            done = fleet.krm_merge(["recover", f"mono/clusters/{name}"], cwd=where)
            assert done.returncode == 0, done.stderr
        settled = packages(where)
        assert all(settled[name] in (before[name], after[name]) for name in settled), trial
        assert not [name for name in settled if strays(settled[name])]
        if old and (new or pending):  # killed in the middle: the next run finishes the fleet
            rerun = fleet.fleet(cwd=where)
            assert rerun.returncode == 0, rerun.stderr
            assert packages(where) == after
            return
    pytest.fail("no trial killed the fleet update in the middle")


def test_sigterm_stops_the_workers_and_still_reports_every_package(fleet: Fleet, after: dict[str, dict[str, bytes]]) -> None:
    before = packages(fleet.tmp)
    where = fleet.copy("terminated")
    proc = start(fleet, where, "--report", "json", "report.json")
    wait_for_progress(proc)
    os.kill(proc.pid, signal.SIGTERM)  # the pod is being stopped: the signal reaches the main process only
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    report = report_of(where / "report.json")
    statuses = {p["path"]: p["status"] for p in report["packages"]}
    assert len(statuses) == COUNT and "updated" in statuses.values() and "failed" in statuses.values()
    found = packages(where)
    for entry in report["packages"]:  # each package as its entry says: nothing half, no recovery needed
        name = entry["path"].rsplit("/", 1)[1]
        if entry["status"] == "failed":
            assert entry["error"] == "not started: the fleet update was interrupted"
            assert found[name] == before[name]
        else:
            assert entry["status"] == "updated" and found[name] == after[name]
    time.sleep(0.2)
    assert subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True).returncode == 1  # no worker left
