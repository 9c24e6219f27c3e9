"""One update lists each package copy once (issue 32): local, origin and upstream are each one snapshot.

Every directory listing the process makes (``os.scandir``, ``os.listdir``,
``os.walk``) is recorded by the folder it lists, while ``krm-merge update``
runs in-process on a real git upstream; each folder of the user's copy must
be listed exactly once, and origin and upstream, read out of git into
memory, have no folder to list.  The only listings left out are those of a
scratch folder's removal (``files.remove_tree`` empties a folder by listing
it: a deletion, not a read of the package).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from krm_merge.commands import conflicts, resolve, update
from krm_merge.upstream.git import cache_root

from .world import World, cm, fetched_by_hand

pytestmark = pytest.mark.e2e

# Listings that are not reads of a package: removing the scratch folder empties it by listing it.
NOT_READS = frozenset({"_empty_folder"})


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    from tests.conftest import require_binary

    require_binary("git")
    return World(tmp_path, monkeypatch)


def folder_of(target: Any) -> str:
    """The folder a listing call lists (a descriptor resolved through /proc)."""
    if isinstance(target, int):
        return os.readlink(f"/proc/self/fd/{target}")
    return os.path.realpath(os.fspath(target) if target is not None else ".")


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every folder listed from now on, with how many times (real paths)."""
    seen: Counter[str] = Counter()

    def spy(real: Callable[..., Any]) -> Callable[..., Any]:
        def listing(target: Any = None, *args: Any, **kwargs: Any) -> Any:
            if sys._getframe(1).f_code.co_name not in NOT_READS:
                seen[folder_of(target)] += 1
            return real(target, *args, **kwargs) if target is not None else real(*args, **kwargs)
        return listing

    for name in ("scandir", "listdir"):
        monkeypatch.setattr(os, name, spy(getattr(os, name)))
    real_walk = os.walk

    def walk(top: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for entry in real_walk(top, *args, **kwargs):
            seen[os.path.realpath(entry[0])] += 1
            yield entry

    monkeypatch.setattr(os, "walk", walk)
    return seen


def package_tree(world: World) -> dict[str, str]:
    """Resources in folders, other files, a hidden file, and a .krmignore'd YAML file: every step has work."""
    return {"cm.yaml": cm("cm", "1"), "sub/cm.yaml": cm("sub", "1"), "sub/deep/cm.yaml": cm("deep", "1"),
            "README.md": "one\n", "docs/notes.txt": "one\n", ".hidden": "h\n", "values.yaml": "replicas: 1\n",
            ".krmignore": "values.yaml\n", "gone/only.txt": "x\n"}


def test_an_update_lists_local_origin_and_upstream_once_each(world: World, listings: Counter[str]) -> None:
    tree = package_tree(world)
    v1 = world.commit({**tree, "Kptfile": None}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2"), "sub/deep/cm.yaml": cm("deep", "2"), "README.md": "two\n",
                  "docs/notes.txt": "two\n", "values.yaml": "replicas: 2\n", "gone/only.txt": None,
                  "new/cm.yaml": cm("new", "n")}, tag="v2")
    fetched_by_hand(world, v1)
    local = world.our_pkg
    for rel, text in tree.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_text(text)
    (local / "sub" / "cm.yaml").write_text(cm("sub", "mine"))  # a local edit: the merge has work
    listings.clear()
    assert update.main([f"{local}@v2", "--dry-run"]) == 0

    real_local = os.path.realpath(local)
    local_dirs = {d for d in listings if d == real_local or d.startswith(real_local + os.sep)}
    # origin and upstream are read out of git into memory (issue 33): no folder of theirs exists to be listed
    cache = os.path.realpath(cache_root())  # git's cache, looked over when a repository is first made in it
    elsewhere = {d for d in listings if d not in local_dirs and os.path.commonpath([d, cache]) != cache}
    assert real_local in local_dirs and elsewhere == set(), elsewhere
    assert {d: n for d, n in listings.items() if d in local_dirs and n != 1} == {}, "a folder listed more than once"
    # every folder of the copy was reached by that one listing
    assert {os.path.relpath(d, real_local) for d in local_dirs} >= {".", "sub", "sub/deep", "docs", "gone"}


def remote_sub(repo: str, name: str) -> str:
    """A subpackage's Kptfile naming its own upstream: folder /leaf of ``repo`` at tag ``leaf``."""
    from .world import kptfile

    return kptfile(name, f"upstream:\n  type: git\n  git:\n    repo: {repo}\n    directory: /leaf\n    ref: leaf\n")


@pytest.fixture
def fan_out(world: World) -> Path:
    """A package whose next version brings three remote subpackages (each then updated from its own upstream)."""
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"../leaf/x.yaml": cm("x", "1"), "../leaf/notes.txt": "leaf\n"}, tag="leaf")
    world.commit({f"s{i}/Kptfile": remote_sub(f"file://{world.up}", f"s{i}") for i in range(3)}, tag="v2")
    fetched_by_hand(world, v1)
    return world.our_pkg


def test_a_recursive_update_writes_nothing_before_its_one_transaction(
    fan_out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Each subpackage is planned over its parent's plan in memory: no scratch copy, no transaction per level."""
    import shutil

    from krm_merge import txn

    commits: list[str] = []
    real_commit = txn.commit

    def commit(root: Any, *args: Any, **kwargs: Any) -> Any:
        commits.append(os.fspath(root))
        return real_commit(root, *args, **kwargs)

    def no_copy(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a tree was copied: {args}")

    monkeypatch.setattr(txn, "commit", commit)
    monkeypatch.setattr(shutil, "copytree", no_copy)
    assert update.main([f"{fan_out}@v2", "--dry-run"]) == 0
    diff = capsys.readouterr().out
    assert commits == []  # a dry run writes nothing at all
    for i in range(3):  # each subpackage updated from its own upstream, shown in the one diff
        assert f"s{i}/x.yaml" in diff and f"s{i}/notes.txt" in diff
    assert not (fan_out / "s0").exists()
    assert update.main([f"{fan_out}@v2"]) == 0
    assert commits == [os.fspath(fan_out)]  # the one transaction, on the user's package
    assert sorted(p.relative_to(fan_out).as_posix() for p in fan_out.rglob("x.yaml")) == [
        "s0/x.yaml", "s1/x.yaml", "s2/x.yaml"]


@pytest.fixture
def marked(world: World) -> Path:
    """A package an update left with a field marker (cm.yaml) and a diff3 region (README.md), recorded."""
    tree = package_tree(world)
    v1 = world.commit({**tree, "Kptfile": None}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2"), "sub/deep/cm.yaml": cm("deep", "2"), "README.md": "two\n"}, tag="v2")
    fetched_by_hand(world, v1)
    local = world.our_pkg
    for rel, text in tree.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_text(text)
    (local / "cm.yaml").write_text(cm("cm", "mine"))
    (local / "README.md").write_text("mine\n")
    assert update.main([f"{local}@v2", "--conflicts", "mark", "--files", "merge"]) == 3
    return local


def package_listed_more_than_once(local: Path, seen: Counter[str]) -> dict[str, int]:
    real_local = os.path.realpath(local)
    mine = {d: n for d, n in seen.items() if d == real_local or d.startswith(real_local + os.sep)}
    assert {os.path.relpath(d, real_local) for d in mine} >= {".", "sub", "sub/deep", "docs", "gone"}
    return {os.path.relpath(d, real_local): n for d, n in mine.items() if n != 1}


def test_conflicts_lists_the_package_once(marked: Path, listings: Counter[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    listings.clear()
    assert conflicts.main([str(marked), "--output", "json"]) == 3
    assert package_listed_more_than_once(marked, listings) == {}
    found = json.loads(capsys.readouterr().out)
    assert {"cm.yaml", "README.md"} <= {m["file"] for m in found}


def test_resolve_lists_the_package_once(marked: Path, listings: Counter[str]) -> None:
    listings.clear()
    assert resolve.main([str(marked), "--take", "upstream"]) == 0
    assert package_listed_more_than_once(marked, listings) == {}
    assert (marked / "README.md").read_text() == "two\n" and "mine" not in (marked / "cm.yaml").read_text()
