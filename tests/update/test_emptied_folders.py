"""Folders an update empties are found on the one lister's folders (``Listing.dirs``), deepest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.update.planner import plan_update

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n"


def _copies(tmp_path: Path) -> tuple[Path, Path, Path]:
    roots = tuple(tmp_path / name for name in ("local", "origin", "upstream"))
    for root in roots:
        (root / "kept").mkdir(parents=True)
        (root / "kept" / "cm.yaml").write_text(CM.format("kept"))
    for root in roots[:2]:  # origin and local have gone/ and gone/deeper/; upstream removed both
        (root / "gone" / "deeper").mkdir(parents=True)
        (root / "gone" / "deeper" / "cm.yaml").write_text(CM.format("deeper"))
        (root / "gone" / "notes.txt").write_text("notes\n")
    return roots


def test_folders_emptied_upstream_are_removed_inner_first(tmp_path: Path) -> None:
    local, origin, upstream = _copies(tmp_path)
    plan = plan_update(local, origin, upstream)
    assert sorted(w.path for w in plan.writes if w.data is None) == ["gone/deeper/cm.yaml", "gone/notes.txt"]
    assert plan.remove_dirs == ["gone/deeper", "gone"]


@pytest.mark.parametrize("left", ["gone/local.txt", "gone/.hidden", "gone/.git"])
def test_a_folder_holding_something_of_locals_stays(tmp_path: Path, left: str) -> None:
    local, origin, upstream = _copies(tmp_path)
    (local / left).mkdir() if left.endswith(".git") else (local / left).write_text("mine\n")
    assert plan_update(local, origin, upstream).remove_dirs == ["gone/deeper"]
