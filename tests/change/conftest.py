"""Fixtures of the pull-request tests: fake forges from their descriptions, real git worlds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.git_http import GitHttpServer

TOKEN = "ghp_T0kenThatMustNeverBeSeen42"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own cache folder (the forges' pacing state, the git cache), in-process and in the worlds'
    commands (a world copies the environment it is made in): no test shares another's request budget."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture()
def world(tmp_path: Path) -> GitWorld:
    """A bare remote (over file://) and a clone holding apps/podinfo."""
    return GitWorld(tmp_path)


@pytest.fixture()
def http_world(world: GitWorld) -> Iterator[tuple[GitWorld, GitHttpServer]]:
    """The same world with origin served over git's smart HTTP by git http-backend on 127.0.0.1."""
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    yield world, server
    server.close()


@pytest.fixture()
def github(world: GitWorld) -> Iterator[ForgeServer]:
    """A fake GitHub whose head-branch check asks the world's remote."""
    server = ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    yield server
    server.close()
