"""``--report`` and ``--results`` files are checked before anything is written (issue 44): a folder that does not
exist, a path that is a folder or below a file is one error naming the path as typed, nothing written, exit 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.world import Fleet
from tests.helpers import locked_kptfile, read_tree

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "{k}"\n'
IMAGE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  image: app:1 # {"$imagepolicy": "ns:app"}\n'
NOTHING = "; nothing written\n"


def krm_merge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _copies(tmp: Path) -> None:
    for name, k in (("origin", "1"), ("local", "1"), ("upstream", "2")):
        (tmp / name).mkdir()
        (tmp / name / "cm.yaml").write_text(CM.format(k=k))


def _bad_destinations(tmp: Path) -> list[tuple[str, str]]:
    """Paths that cannot be written, as a user would type them (relative), and what the error says of each."""
    (tmp / "a-file").write_text("x")
    (tmp / "a-folder").mkdir()
    return [("missing/r.out", "the folder missing does not exist"), ("a-folder", "it is a folder"),
            ("a-file/r.out", "a-file is not a folder")]


def _refused(done: subprocess.CompletedProcess[str], command: str, option: str, path: str, why: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"krm-merge {command}: error: cannot write {option} {path}: {why}" + (
        " (krm-merge creates none)" if "does not exist" in why else "") + NOTHING, done.stderr
    assert ".tmp" not in done.stderr


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("option", ["--report", "--results"])
def test_update_checks_its_report_before_writing_the_package(tmp_path: Path, option: str, dry_run: bool) -> None:
    _copies(tmp_path)
    for path, why in _bad_destinations(tmp_path):
        before = read_tree(tmp_path)
        dest = ["--report", "json", path] if option == "--report" else ["--results", path]
        done = krm_merge("update", "local", "--origin", "origin", "--upstream", "upstream", *dest,
                         *(["--dry-run"] if dry_run else []), cwd=tmp_path)
        _refused(done, "update", option, path, why)
        assert read_tree(tmp_path) == before  # the package untouched, no folder made, no temporary file left


@pytest.mark.parametrize("dry_run", [False, True])
def test_promote_checks_its_report_before_writing(tmp_path: Path, dry_run: bool) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "cm.yaml").write_text(IMAGE)
    for path, why in _bad_destinations(tmp_path):
        before = read_tree(tmp_path)
        done = krm_merge("promote", "pkg", "--image-policy", "ns:app=app:2", "--report", "markdown", path,
                         *(["--dry-run"] if dry_run else []), cwd=tmp_path)
        _refused(done, "promote", "--report", path, why)
        assert read_tree(tmp_path) == before


def test_resolve_and_run_check_their_results_file_before_writing(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "Kptfile").write_text(locked_kptfile("pkg"))
    (tmp_path / "pkg" / "cm.yaml").write_text(IMAGE)
    for path, why in _bad_destinations(tmp_path):
        before = read_tree(tmp_path)
        _refused(krm_merge("resolve", "pkg", "--take", "upstream", "--results", path, cwd=tmp_path),
                 "resolve", "--results", path, why)
        _refused(krm_merge("run", "pkg", "--results", path, "--", "mode=promote", "imagePolicy=ns:app",
                           "value=app:2", cwd=tmp_path), "run", "--results", path, why)
        assert read_tree(tmp_path) == before


def test_a_fleet_update_checks_its_report_before_the_first_package(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.consumer("east", "v1")
    before = read_tree(fleet.mono)
    done = fleet.fleet("--report", "json", "reports/shard-0.json")
    _refused(done, "update", "--report", "reports/shard-0.json", "the folder reports does not exist")
    assert read_tree(fleet.mono) == before
    (tmp_path / "reports").mkdir()  # the folder made: the same run goes through and writes its report there
    assert fleet.fleet("--report", "json", "reports/shard-0.json").returncode == 0
    assert (tmp_path / "reports" / "shard-0.json").is_file()


def test_a_report_that_fails_at_the_end_names_the_users_path_not_a_temporary_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from krm_merge.outcomes import render
    from krm_merge.outcomes.report import Report, State

    report = Report("update", "pkg", State.WRITTEN)  # the folder went away after the check, during the run
    assert render.finish(report, results_file=str(tmp_path / "gone" / "r.yaml"), report_to=None) == 1
    err = capsys.readouterr().err
    assert f"error: cannot write --results {tmp_path}/gone/r.yaml: No such file or directory" in err, err
    assert ".tmp" not in err
