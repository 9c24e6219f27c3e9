"""Differential test: kpt's directory-prefixed tags (``pkg/v1`` for the package at ``pkg/``), against real kpt.

A repository that versions several packages independently tags each with
its directory as prefix; ``kpt pkg get REPO/pkg@v1`` then records
``upstream.git.ref: v1`` and ``upstreamLock.git.ref: pkg/v1``.  Both
``update PKG@v2`` and ``update PKG`` must resolve refs as kpt does: the tag
``DIR/REF`` for the package directory and each parent first (even when a
plain tag ``REF`` exists too), then ``REF``.  Local edits are drawn from fixed
seeds; both packages must be equal as data, Kptfiles included.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from krm_merge.upstream import git as gitmod
from tests.conftest import require_binary

from .world import World, cm, read_tree

pytestmark = pytest.mark.e2e

SEEDS = (21, 22, 23)


def version(rng: random.Random, n: int) -> dict[str, str | None]:
    """Upstream files of version ``n``: one ConfigMap per app, values drawn from the seed."""
    return {f"app{i}.yaml": cm(f"app{i}", f"{n}-{rng.randint(0, 99)}") for i in range(3)}


def commit_at(world: World, directory: str, files: dict[str, str | None], tags: tuple[str, ...]) -> str:
    """Commit ``files`` under ``directory`` of the upstream repository and tag the commit."""
    for rel, text in files.items():
        target = world.up / directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text or "")
    world.git("add", "-A")
    world.git("commit", "-q", "-m", f"{directory} {tags}")
    for tag in tags:
        world.git("tag", tag)
    return world.git("rev-parse", "HEAD")


def locks(world: World) -> tuple[dict[str, str], dict[str, str]]:
    ours = yaml.safe_load((world.our_pkg / "Kptfile").read_text())
    theirs = yaml.safe_load((world.kpt_pkg / "Kptfile").read_text())
    return ours["upstreamLock"]["git"], theirs["upstreamLock"]["git"]


@pytest.mark.parametrize("seed", SEEDS)
def test_package_tags_resolve_like_kpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    require_binary("kpt")
    require_binary("git")
    rng = random.Random(seed)
    world = World(tmp_path, monkeypatch)
    commit_at(world, "pkg", version(rng, 1), ("pkg/v1",))
    v2 = commit_at(world, "pkg", version(rng, 2), ("pkg/v2",))
    # a plain tag of the same name on a later commit: the package's own tag must win
    commit_at(world, "pkg", version(rng, 9), ("v2",))
    world.get("v1")
    edited = rng.randrange(3)
    world.edit_local({f"app{edited}.yaml": cm(f"app{edited}", "local", "  mine: \"yes\"\n")})
    assert world.both("v2") == (0, 0)
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    ours, theirs = locks(world)
    assert ours == theirs and ours["ref"] == "pkg/v2" and ours["commit"] == v2
    assert world.both() == (0, 0)  # PKG alone: upstream.git.ref v2 resolves to pkg/v2 again
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    assert locks(world)[0] == locks(world)[1]


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_parent_directory_tag_then_plain_tag_like_kpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    require_binary("kpt")
    require_binary("git")
    rng = random.Random(seed)
    world = World(tmp_path, monkeypatch)
    commit_at(world, "team/pkg", version(rng, 1), ("team/v1",))
    commit_at(world, "team/pkg", version(rng, 2), ("team/v2", "v2"))
    v3 = commit_at(world, "team/pkg", version(rng, 3), ("v3",))
    world.get("v1", directory="team/pkg")
    ours, theirs = locks(world)
    assert theirs["ref"] == "team/v1"
    assert world.both("v2") == (0, 0)
    assert locks(world)[0] == locks(world)[1] and locks(world)[0]["ref"] == "team/v2"
    assert world.both("v3") == (0, 0)  # no team/v3: the plain tag
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    ours, theirs = locks(world)
    assert ours == theirs and ours["ref"] == "v3" and ours["commit"] == v3


def test_package_tags_innermost_directory_first() -> None:
    assert gitmod.package_tags("/a/b/", "v1") == ["a/b/v1", "a/v1"]
    assert gitmod.package_tags("/", "v1") == []
