"""``krm-merge update`` fetches only what the update needs (issue 24).

Checked on a local repository whose server side allows partial fetches (as
GitHub's does): the cache ends up with the two commits the update reads, the
trees, and the blobs of the package directory only; an update to the commit
the package is at asks the remote for its refs and fetches nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from krm_merge.commands import update

from .world import World, cm, fetched_by_hand, filtering_world, read_tree, spy_git

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return filtering_world(tmp_path, monkeypatch)


def cached_objects(world: World, kind: str = "") -> set[str]:
    """Every object the cache holds, or those of type ``kind`` (listing them never fetches)."""
    (cache,) = (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git")
    out = world.git("--git-dir", str(cache), "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    return {oid for oid, found in (line.split() for line in out.splitlines()) if not kind or found == kind}


def blob(world: World, rev: str, path: str) -> str:
    return world.git("rev-parse", f"{rev}:{path}")


def test_only_the_two_commits_and_the_package_directory_are_fetched(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    old = world.commit({"cm.yaml": cm("cm", "0"), "../other/big.yaml": cm("big", "x" * 5000)}, tag="v0")
    v1 = world.commit({"cm.yaml": cm("cm", "1"), "../other/big.yaml": cm("big", "y" * 5000)}, tag="v1")
    v2 = world.commit({"cm.yaml": cm("cm", "2"), "new.yaml": cm("new", "n")}, tag="v2")
    fetched_by_hand(world, v1)
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert (world.our_pkg / "new.yaml").is_file() and '"2"' in (world.our_pkg / "cm.yaml").read_text()
    commits, blobs = [c for c in calls if "fetch" in c and "--depth=1" in c], [c for c in calls if "fetch" in c and "--stdin" in c]
    # two fetches in all: the two commits with their trees (v2 by its name: the cache is cold, so the ref is
    # resolved inside that fetch), then the package's files by id (git's own lazy fetches, one per version,
    # are not needed)
    assert len(commits) == 1 and len(blobs) == 1 and len([c for c in calls if "fetch" in c]) == 2
    assert not [c for c in calls if "init" in c]  # the empty cache is laid out by krm-merge, no `git init` (#33)
    assert "ls-remote" not in [c[1] for c in calls]
    assert "--filter=blob:none" in commits[0] and f"+{v1}:refs/krm-merge/{v1}" in commits[0]
    assert "+refs/tags/v2*:refs/krm-merge/probe/tags/v2*" in commits[0]
    objects = cached_objects(world)
    assert {v1, v2} <= objects and old not in objects  # the two commits, not the history
    # exactly the package's files at the two commits: nothing else of the repository
    assert cached_objects(world, "blob") == {blob(world, "v1", "pkg/cm.yaml"), blob(world, "v2", "pkg/cm.yaml"),
                                             blob(world, "v2", "pkg/new.yaml")}


@pytest.mark.parametrize("at", ["v1", "pkg/v1"])
def test_an_update_to_the_ref_the_package_is_at_lists_refs_and_fetches_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch, at: str,
) -> None:
    """The daily "is there an update?" job: the package locked at REF (or at kpt's DIR/REF tag of it) is updated
    to REF again, on a cold cache: one ``ls-remote``, no cache."""
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag=at)
    fetched_by_hand(world, v1)
    kptfile = world.our_pkg / "Kptfile"
    kptfile.write_text(kptfile.read_text().replace("    ref: v1\n    commit:", f"    ref: {at}\n    commit:"))
    before = {p.name: p.read_bytes() for p in world.our_pkg.iterdir()}
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@v1"]) == 0
    assert [c[1] for c in calls] == ["ls-remote"]  # one round trip, no object transferred
    assert {p.name: p.read_bytes() for p in world.our_pkg.iterdir()} == before
    assert not (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge").exists()  # not even a cache


def test_an_update_to_another_name_of_the_commit_fetches_its_trees_once_and_no_file(
    world: World, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a cold cache an update to another ref than the package's is resolved inside the fetch of the trees:
    when that ref names the commit the package is at, the trees were fetched for nothing, but no file is."""
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.git("tag", "same")  # another name of the same commit
    fetched_by_hand(world, v1)
    before = (world.our_pkg / "cm.yaml").read_bytes()
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@same"]) == 0
    assert [c[c.index("fetch")] for c in calls if "fetch" in c] == ["fetch"]  # one fetch: the trees, no blob
    assert "ls-remote" not in [c[1] for c in calls]
    assert (world.our_pkg / "cm.yaml").read_bytes() == before
    assert "ref: same" in (world.our_pkg / "Kptfile").read_text()
    assert cached_objects(world, "blob") == set()


def test_a_server_refusing_partial_fetches_still_gets_an_update(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.git("config", "uploadpack.allowFilter", "false")
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()


def test_a_commit_id_and_an_abbreviated_one_resolve(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    v2 = world.commit({"cm.yaml": cm("cm", "2")})
    world.commit({"cm.yaml": cm("cm", "3")})
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@{v2}"]) == 0
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()
    assert update.main([f"{world.our_pkg}@{v1[:10]}"]) == 0  # not a ref name: the whole mirror resolves it
    assert '"1"' in (world.our_pkg / "cm.yaml").read_text()


def subcommands(calls: list[list[str]]) -> list[str]:
    """The git subcommand of each process (with cat-file's mode): what the update asked git for."""
    names = ("ls-remote", "fetch", "rev-list", "update-ref", "cat-file")
    out = []
    for call in calls:
        name = next(word for word in call if word in names)
        out.append(f"cat-file {call[call.index(name) + 1]}" if name == "cat-file" else name)
    return out


def two_copies(world: World) -> tuple[Path, Path]:
    """The package fetched at v1 and a second copy of it, v2 committed upstream: two updates of one package."""
    v1 = world.commit({"cm.yaml": cm("cm", "1"), "sub/a.yaml": cm("a", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2"), "sub/a.yaml": cm("a", "2"), "notes.txt": "n\n"}, tag="v2")
    fetched_by_hand(world, v1)
    second = world.our_pkg.parent / "second"
    shutil.copytree(world.our_pkg, second)
    return world.our_pkg, second


def test_a_warm_update_asks_git_for_the_refs_and_reads_everything_through_one_process(
    world: World, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 33: once a first update has read a version whole, the next one lists nothing, fetches nothing and asks
    no size apart: `ls-remote`, then one `cat-file --batch-command` for the trees, the sizes and the files."""
    first, second = two_copies(world)
    calls = spy_git(monkeypatch)
    assert update.main([f"{first}@v2"]) == 0
    assert "rev-list" in subcommands(calls) and "update-ref" in subcommands(calls)  # cold: listed, then recorded
    calls.clear()
    assert update.main([f"{second}@v2"]) == 0
    assert subcommands(calls) == ["ls-remote", "cat-file --batch-command"]
    assert read_tree(second) == read_tree(first)


def test_a_git_without_batch_command_reads_the_older_way(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """git before 2.36 has no `cat-file --batch-command`: the reader falls back to `--batch` and the sizes come from
    one `cat-file --batch-check`, with the same result."""
    wrapper = tmp_path / "oldgit"
    wrapper.mkdir()
    real = shutil.which("git")
    (wrapper / "git").write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = --batch-command ] && '
                                 f'{{ echo "error: unknown option \\`batch-command\'" >&2; exit 129; }}; done\n'
                                 f'exec {real} "$@"\n')
    (wrapper / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{os.environ['PATH']}")
    first, second = two_copies(world)
    calls = spy_git(monkeypatch)
    assert update.main([f"{first}@v2"]) == 0
    calls.clear()
    assert update.main([f"{second}@v2"]) == 0
    assert subcommands(calls) == ["ls-remote", "cat-file --batch-command", "cat-file --batch",
                                  "cat-file --batch-check=%(objectname) %(objectsize)"]
    assert read_tree(second) == read_tree(first) and '"2"' in (second / "cm.yaml").read_text()


def test_a_version_recorded_whole_whose_files_are_gone_is_still_read(world: World) -> None:
    """The record that the cache holds a directory's files only spares listing them: were they gone (a cache
    repacked by hand), git's own lazy fetch brings each one back; slower, never wrong."""
    first, second = two_copies(world)
    assert update.main([f"{first}@v2"]) == 0
    (cache,) = (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git")
    marks = world.git("--git-dir", str(cache), "for-each-ref", "--format=%(refname)", "refs/krm-merge/complete/")
    assert sorted(marks.split()) == sorted(f"refs/krm-merge/complete/{world.git('rev-parse', f'v{n}:pkg')}"
                                           for n in (1, 2))
    for pack in (cache / "objects" / "pack").glob("*"):  # every blob gone: only the commits and trees fetched again
        pack.unlink()
    world.git("--git-dir", str(cache), "fetch", "-q", "--depth=1", "--filter=blob:none", "origin",
              *(f"+{world.git('rev-parse', f'v{n}')}:refs/x/{n}" for n in (1, 2)))
    assert cached_objects(world, "blob") == set()
    assert update.main([f"{second}@v2"]) == 0
    assert read_tree(second) == read_tree(first)
