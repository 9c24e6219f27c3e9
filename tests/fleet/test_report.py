"""The fleet report and ``krm-merge report merge`` (issue 36): statuses, totals, exit codes, shard reports merged."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Any

import pytest

from krm_merge.fleet import report
from krm_merge.krm.results import ResourceRef
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import (
    ConflictOutcome, Decision, FileAction, FileChanged, FleetScope, PackageStatus, PackageUpdate, Version,
)
from krm_merge.outcomes.report import Report, State

from .world import KRM_MERGE


def update_report(*conflicts: ConflictOutcome) -> dict:
    """A package's own update report, as ``krm-merge update --report json`` writes it."""
    one = Report("update", "pkg", State.WRITTEN)
    one.add(FileChanged("a.yaml", FileAction.CHANGED))
    one.extend(conflicts)
    return render.report_document(one)


UPDATE = update_report()


def entry(path: str, status: str, code: int = 0, **more: object) -> PackageUpdate:
    fields = {"before": Version("v1", "a" * 40), "after": Version("v2", "b" * 40), "error": "", "files": 1,
              "conflicts": 0, "report": UPDATE, **more}
    return PackageUpdate(path, PackageStatus(status), code, **fields)  # type: ignore[arg-type]


def shard_report(index: int, count: int, *entries: PackageUpdate, selected: int = 4, ref: str = "v2") -> dict:
    """A shard's report as the fleet update writes it."""
    run = Report("update", "mono", State.WRITTEN)
    run.fleet = FleetScope("https://example.com/blueprints.git/web", ref, selected, count, (index,))
    run.extend(entries)
    return render.report_document(run)


def merge(tmp_path: Path, *reports: dict, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    names = []
    for n, data in enumerate(reports):
        (tmp_path / f"shard-{n}.json").write_text(json.dumps(data))
        names.append(f"shard-{n}.json")
    return subprocess.run([KRM_MERGE, "report", "merge", *(args or tuple(names))], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)


def fleet_exit_code(*statuses: str) -> int:
    run = Report("update")
    run.extend(entry(f"p{n}", status, 1 if status == "failed" else 0) for n, status in enumerate(statuses))
    return run.exit_code


def test_status_and_exit_code_of_a_package_and_of_the_fleet() -> None:
    assert report.status_of(0, changed=True, refused=0) is PackageStatus.UPDATED
    assert report.status_of(0, changed=False, refused=0) is PackageStatus.CURRENT
    assert report.status_of(3, changed=True, refused=0) is PackageStatus.CONFLICTED  # --conflicts mark
    assert report.status_of(1, changed=True, refused=2) is PackageStatus.CONFLICTED  # --conflicts fail: nothing written
    assert report.status_of(1, changed=False, refused=0) is PackageStatus.FAILED
    assert fleet_exit_code("updated", "current") == 0
    assert fleet_exit_code("updated", "conflicted") == 3
    assert fleet_exit_code("conflicted", "failed", "updated") == 1
    assert fleet_exit_code() == 0


def test_merged_shards_in_a_folder_as_json_and_markdown(tmp_path: Path) -> None:
    pipes = ConflictOutcome(ResourceRef("v1", "ConfigMap", "x"), "x.yaml", 0, "data.a | pipes", "1", "2", "0",
                            Decision.MARKED)
    first = shard_report(0, 2, entry("c/b", "updated"), entry("c/d", "failed", 1, error="c/d/Kptfile: broken",
                                                                                    report=None))
    second = shard_report(1, 2, entry("c/a", "current"), entry("c/c", "conflicted", 3, conflicts=1,
                                                                 report=update_report(pipes)))
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "0.json").write_text(json.dumps(first))
    (tmp_path / "reports" / "1.json").write_text(json.dumps(second))
    (tmp_path / "reports" / "notes.txt").write_text("not a report")
    proc = merge(tmp_path, args=("reports", "--report", "json", "all.json", "--report", "markdown", "-"))
    assert proc.returncode == 1, proc.stderr  # a package failed
    data = json.loads((tmp_path / "all.json").read_text())
    assert [p["path"] for p in data["packages"]] == ["c/a", "c/b", "c/c", "c/d"]
    assert data["totals"] == {"packages": 4, "updated": 1, "current": 1, "conflicted": 1, "failed": 1}
    assert data["shards"] == {"count": 2, "reported": [0, 1]} and data["exitCode"] == 1
    assert data["packages"][2]["update"] == update_report(pipes)  # each package's own report, kept whole
    assert "| `c/c` | conflicted | v1 | v2 | 1 | 1 |" in proc.stdout
    assert "- x.yaml: ConfigMap/x: data.a \\| pipes: changed locally" in proc.stdout
    assert "- `c/d`: c/d/Kptfile: broken" in proc.stdout
    assert proc.stderr == "krm-merge report: 4 package(s): 1 updated, 1 current, 1 conflicted, 1 failed\n"


@pytest.mark.parametrize("second, words", [
    (shard_report(1, 2, entry("c/a", "current"), ref="v3"), "ref is 'v3' but 'v2'"),
    (shard_report(1, 3, entry("c/a", "current")), "3 shards but 2"),
    (shard_report(0, 2, entry("c/a", "current")), "shard 0 is reported in shard-0.json too"),
    (shard_report(1, 2, entry("c/b", "current")), "package c/b is in shard-0.json too"),
    ({"kind": "Something"}, "not a krm-merge fleet update report"),
    ({**shard_report(1, 2), "packages": [{"path": "c/a", "status": "lost", "exitCode": 0}]}, "status must be one of"),
    ({**shard_report(1, 2), "packages": [{"path": "c/a", "status": "current", "exitCode": 0, "to": "v2"}]},
     "from and to are a ref and a commit"),
    ({**shard_report(1, 2), "shards": {"count": "two", "reported": [1]}}, "needs upstream, ref, dryRun, selected"),
])
def test_reports_that_do_not_fit_are_refused(tmp_path: Path, second: dict, words: str) -> None:
    proc = merge(tmp_path, shard_report(0, 2, entry("c/b", "updated")), second)
    assert proc.returncode == 1 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_missing_shards_and_packages_are_said(tmp_path: Path) -> None:
    proc = merge(tmp_path, shard_report(0, 3, entry("c/b", "updated")), shard_report(2, 3, entry("c/a", "updated")))
    assert proc.returncode == 1 and "error: shard 1 of 3 not reported" in proc.stderr
    proc = merge(tmp_path, shard_report(0, 1, entry("c/b", "updated"), selected=2))
    assert proc.returncode == 1 and "1 package(s) reported but 2 selected" in proc.stderr
    (tmp_path / "bad.json").write_text("{")
    proc = merge(tmp_path, args=("bad.json",))
    assert proc.returncode == 1 and "bad.json: not JSON" in proc.stderr and "Traceback" not in proc.stderr
    proc = merge(tmp_path, args=("missing.json",))
    assert proc.returncode == 1 and "missing.json" in proc.stderr and "Traceback" not in proc.stderr


def test_hostile_report_files_are_refused_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    proc = merge(tmp_path, args=("deep.json",))
    assert proc.returncode == 1 and "nested too deeply" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "big.json").write_text(" " * (2 * 1024 * 1024) + "{}")
    proc = subprocess.run([KRM_MERGE, "report", "merge", "big.json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "KRM_MERGE_MAX_INPUT_MB": "1"})
    assert proc.returncode == 1 and "big.json" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def _ceiling() -> None:
    # the child's address space: a read of /dev/zero to its end fails fast instead of taking the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))


@pytest.mark.parametrize(("name", "make", "words"), [
    ("zero.json", lambda p: p.symlink_to("/dev/zero"), "zero.json: a character device, not a regular file; not read"),
    ("fifo.json", os.mkfifo, "fifo.json: a FIFO (named pipe), not a regular file; not read"),
    ("shards/x.json", lambda p: p.mkdir(parents=True), "shards/x.json: a folder, not a regular file; not read"),
    ("empty", os.mkdir, "empty: a folder holding no *.json report"),
    ("latin1.json", lambda p: p.write_bytes(b'{"ref": "caf\xe9"}'), "latin1.json: not UTF-8 text (byte 12)"),
])
def test_a_report_that_is_no_regular_file_is_refused_by_name(tmp_path: Path, name: str, make: Any, words: str) -> None:
    """A link to /dev/zero was read until MemoryError, a FIFO hung the merge (its size checked, then read to its
    end); now each is one error naming it, exit code 1, nothing read from it (the timeout: the hang guard)."""
    make(tmp_path / name)
    given = name.partition("/")[0]  # a folder's reports: its *.json entries
    proc = subprocess.run([KRM_MERGE, "report", "merge", given], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, preexec_fn=_ceiling, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr
    assert f"krm-merge report: error: {words}" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


EDIT = ConflictOutcome(ResourceRef("v1", "ConfigMap", "settings"), "settings.yaml", 0, "data.level", "north", "3", "1",
                       Decision.UPSTREAM)


@pytest.mark.parametrize(("edits", "words"), [
    ("not a list", "localEdits is a list of conflicts"),
    ([{"file": 3}], "localEdits[0]: expected a conflict with file, field, local, upstream and origin"),
    ([{"decision": "local"}], "localEdits[0]: decision must be upstream or marked"),
    ([{"decision": "upstream", "resource": "ConfigMap/x"}], "localEdits[0]: resource is apiVersion, kind, name"),
])
def test_a_shard_report_s_local_edits_are_read_back_or_refused(tmp_path: Path, edits: Any, words: str) -> None:
    shard = shard_report(0, 1, entry("mono/a", "updated", edits=(EDIT,)), selected=1)
    proc = merge(tmp_path, shard, args=("shard-0.json", "--report", "json", "-"))
    assert proc.returncode == 3, proc.stderr  # a local edit lost to upstream: as the fleet exited
    assert json.loads(proc.stdout)["packages"][0]["localEdits"] == shard["packages"][0]["localEdits"]
    shard["packages"][0]["localEdits"] = edits
    proc = merge(tmp_path, shard)
    assert proc.returncode == 1 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
