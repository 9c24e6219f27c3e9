"""A fleet update's packages read shared trees, and each package's update is still charged them (bounds, #31).

A single update charges every tree it reads to one budget (``files.update_budget``): the
fleet's shared folders must cost a package's update what its own extraction would, so a
package whose versions together exceed the bound is refused the same way in both forms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge import files
from krm_merge.fleet.versions import Extracted, Shared, SharedVersions
from krm_merge.kptfile.upstream import GitLock, GitUpstream
from krm_merge.upstream.git import GitCache

REPO = "file:///nowhere/up.git"


def shared(tmp_path: Path, files_each: int, bytes_each: int) -> Shared:
    folders = {name: tmp_path / name for name in ("v1", "v2", "empty")}
    for folder in folders.values():
        folder.mkdir()
    extracted = {
        (REPO, "c1", "/pkg"): Extracted(folders["v1"], (), files_each, bytes_each),
        (REPO, "c2", "/pkg"): Extracted(folders["v2"], (), files_each, bytes_each),
    }
    return Shared(tmp_path / "cache", "git", {}, extracted, folders["empty"])


def test_a_package_reading_shared_trees_is_charged_their_files_and_bytes(tmp_path: Path) -> None:
    versions = SharedVersions(GitCache(tmp_path / "cache"), shared(tmp_path, 3, 100))
    budget = files.update_budget()
    lock = GitLock(REPO, "/pkg", "v1", "c1")
    with versions.trees(lock, GitUpstream(REPO, "/pkg", "v2"), "c2", budget) as trees:
        assert trees.origin == tmp_path / "v1" and trees.upstream == tmp_path / "v2"
    assert (budget.files, budget.size) == (6, 200)


def test_shared_trees_past_the_update_budget_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_TREE_FILES", 5)
    versions = SharedVersions(GitCache(tmp_path / "cache"), shared(tmp_path, 3, 100))
    lock = GitLock(REPO, "/pkg", "v1", "c1")
    with pytest.raises(files.UntrustedTreeError, match="more than 5 files in one update"):
        with versions.trees(lock, GitUpstream(REPO, "/pkg", "v2"), "c2", files.update_budget()):
            pass
