"""``krm-merge update`` on directories: the kpt oracle cases again (with non-KRM files), safety."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.commands import update
from krm_merge.update import plan as update_plan, planner
from krm_merge.errors import KrmMergeError
from tests import helpers

from .harness import MINIMAL_KPTFILE, expected_files, is_krm_file, normalise
from .test_conformance import DATA, DEVIATIONS


def write_tree(root: Path, files: dict[str, str]) -> None:
    files = dict(files)
    files.setdefault("Kptfile", MINIMAL_KPTFILE)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def read_tree(root: Path) -> dict[str, str]:
    return helpers.read_tree(root, text=True)


def make_copies(tmp_path: Path, case: dict[str, Any]) -> tuple[Path, Path, Path]:
    roots = tuple(tmp_path / n for n in ("local", "origin", "upstream"))
    for root, key in zip(roots, ("local", "original", "updated")):
        root.mkdir()
        write_tree(root, case[key])
    return roots  # type: ignore[return-value]


def as_data(files: dict[str, str]) -> dict[str, Any]:
    krm = expected_files({p: t for p, t in files.items() if is_krm_file(p)})
    return {**krm, **{p: t for p, t in files.items() if not is_krm_file(p)}}


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c["name"]) for c in yaml.safe_load((DATA / "kpt-oracle-edge-cases.yaml").read_text())["cases"]]
)
def test_update_command_matches_kpt(tmp_path: Path, case: dict[str, Any]) -> None:
    local, origin, upstream = make_copies(tmp_path, case)
    observed = case["observed"]
    strategy = case.get("strategy") or "resource-merge"
    if observed["update_rc"] != 0:
        before = read_tree(local)
        assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--strategy", strategy]) == 1
        assert read_tree(local) == before
        return
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--strategy", strategy]) == 0
    got, expected = as_data(read_tree(local)), as_data(observed["files"])
    for path, docs in DEVIATIONS.get(case["name"], ("", {}))[1].items():
        assert got.pop(path) == docs
        expected.pop(path)
    assert got == expected


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '{}'\n"


def test_dry_run_writes_nothing_and_prints_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = {"local": {"cm.yaml": CM.format(1), "x.txt": "a\n"}, "original": {"cm.yaml": CM.format(1), "x.txt": "a\n"},
            "updated": {"cm.yaml": CM.format(2), "x.txt": "b\n"}}
    local, origin, upstream = make_copies(tmp_path, case)
    before = read_tree(local)
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--dry-run"]) == 0
    assert read_tree(local) == before
    out = capsys.readouterr().out
    assert "+  a: '2'" in out and "+b" in out and "--- a/x.txt" in out


def test_conflicts_fail_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = {"local": {"cm.yaml": CM.format(3)}, "original": {"cm.yaml": CM.format(1)}, "updated": {"cm.yaml": CM.format(2)}}
    local, origin, upstream = make_copies(tmp_path, case)
    before = read_tree(local)
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--conflicts", "fail"]) == 1
    assert read_tree(local) == before
    err = capsys.readouterr().err
    assert "data.a" in err and "nothing written" in err


def test_local_wins(tmp_path: Path) -> None:
    case = {"local": {"cm.yaml": CM.format(3)}, "original": {"cm.yaml": CM.format(1)}, "updated": {"cm.yaml": CM.format(2)}}
    local, origin, upstream = make_copies(tmp_path, case)
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--conflicts", "local-wins"]) == 0
    assert normalise(yaml.safe_load((local / "cm.yaml").read_text()))["data"] == {"a": "3"}


def test_refuses_to_write_through_symlink(tmp_path: Path) -> None:
    case = {"local": {"x.txt": "a\n"}, "original": {"x.txt": "a\n"}, "updated": {"x.txt": "b\n", "y.txt": "new\n"}}
    local, origin, upstream = make_copies(tmp_path, case)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (local / "y.txt").symlink_to(outside)
    plan = planner.plan_update(local, origin, upstream)
    with pytest.raises(KrmMergeError, match="symbolic link"):
        update_plan.apply_plan(local, plan)
    assert outside.read_text() == "secret\n"
    assert (local / "x.txt").read_text() == "a\n"  # all or nothing


def test_removes_directories_upstream_removed(tmp_path: Path) -> None:
    case = {"local": {"sub/x.txt": "a\n"}, "original": {"sub/x.txt": "a\n"}, "updated": {}}
    local, origin, upstream = make_copies(tmp_path, case)
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream)]) == 0
    assert not (local / "sub").exists()


def test_fast_forward_refuses_modified_non_krm_file(tmp_path: Path) -> None:
    case = {"local": {"x.txt": "mine\n"}, "original": {"x.txt": "a\n"}, "updated": {"x.txt": "b\n"}}
    local, origin, upstream = make_copies(tmp_path, case)
    assert update.main([str(local), "--origin", str(origin), "--upstream", str(upstream), "--strategy", "fast-forward"]) == 1
    assert (local / "x.txt").read_text() == "mine\n"


def test_missing_directory_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert update.main([str(tmp_path / "nope"), "--origin", str(tmp_path), "--upstream", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("krm-merge update: error:") and "Traceback" not in err
