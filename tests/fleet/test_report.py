"""The fleet report and ``krm-merge report merge`` (issue 36): statuses, totals, exit codes, shard reports merged."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from krm_merge.fleet import report

from .world import KRM_MERGE

UPDATE = {"outcome": "written", "changes": [{"path": "a.yaml", "action": "changed"}], "removedDirectories": [],
          "resources": [], "conflicts": [], "warnings": [], "mergedFiles": []}


def entry(path: str, status: str, code: int = 0, **more: object) -> report.Entry:
    fields = {"before": {"ref": "v1", "commit": "a" * 40}, "after": {"ref": "v2", "commit": "b" * 40},
              "error": None, "update": UPDATE, **more}
    return report.Entry(path, status, code, **fields)  # type: ignore[arg-type]


def shard_report(index: int, count: int, *entries: report.Entry, selected: int = 4, ref: str = "v2") -> dict:
    return report.build(list(entries), upstream="https://example.com/blueprints.git/web", ref=ref, dry_run=False,
                        selected=selected, shard=(index, count))


def merge(tmp_path: Path, *reports: dict, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    names = []
    for n, data in enumerate(reports):
        (tmp_path / f"shard-{n}.json").write_text(json.dumps(data))
        names.append(f"shard-{n}.json")
    return subprocess.run([KRM_MERGE, "report", "merge", *(args or tuple(names))], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)


def test_status_and_exit_code_of_a_package_and_of_the_fleet() -> None:
    assert report.status_of(0, changed=True, refused=0) == "updated"
    assert report.status_of(0, changed=False, refused=0) == "current"
    assert report.status_of(3, changed=True, refused=0) == "conflicted"  # --conflicts mark
    assert report.status_of(1, changed=True, refused=2) == "conflicted"  # --conflicts fail: nothing written
    assert report.status_of(1, changed=False, refused=0) == "failed"
    assert report.exit_code(["updated", "current"]) == 0
    assert report.exit_code(["updated", "conflicted"]) == 3
    assert report.exit_code(["conflicted", "failed", "updated"]) == 1
    assert report.exit_code([]) == 0


def test_merged_shards_in_a_folder_as_json_and_markdown(tmp_path: Path) -> None:
    first = shard_report(0, 2, entry("c/b", "updated"), entry("c/d", "failed", 1, error="c/d/Kptfile: broken",
                                                                                    update=None))
    second = shard_report(1, 2, entry("c/a", "current"), entry("c/c", "conflicted", 3, update={
        **UPDATE, "conflicts": [{"message": "conflict: x.yaml: data.a | pipes", "decided": "mark"}]}))
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
    assert "| `c/c` | conflicted | v1 | v2 | 1 | 1 |" in proc.stdout
    assert "- conflict: x.yaml: data.a \\| pipes" in proc.stdout and "- `c/d`: c/d/Kptfile: broken" in proc.stdout
    assert proc.stderr == "krm-merge report: 4 package(s): 1 updated, 1 current, 1 conflicted, 1 failed\n"


@pytest.mark.parametrize("second, words", [
    (shard_report(1, 2, entry("c/a", "current"), ref="v3"), "ref is 'v3' but 'v2'"),
    (shard_report(1, 3, entry("c/a", "current")), "3 shards but 2"),
    (shard_report(0, 2, entry("c/a", "current")), "shard 0 is reported in shard-0.json too"),
    (shard_report(1, 2, entry("c/b", "current")), "package c/b is in shard-0.json too"),
    ({"kind": "Something"}, "not a krm-merge fleet update report"),
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
