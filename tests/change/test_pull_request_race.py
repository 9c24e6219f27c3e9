"""``promote --pull-request`` never loses a race on its branch (issue #47 point 3).

Real git end to end: the remote is served over git's smart HTTP (``git http-backend``) and another run
pushes to the pull request's branch at the moment our push starts (the server's ``before_push`` hook; the
other run is krm-merge itself, from a clone of its own, against the same forge stand-in), so the branch
moves between our read and our push as it does when two CI jobs promote to one branch at once.  Our run
then plans the same promotion again on the branch's new head, commits above it and pushes again, as
``promote --push`` does on the base branch (tests/change/test_promote_push.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.change.conftest import TOKEN
from tests.change.forge_server import ForgeServer
from tests.change.gitworld import HELMRELEASE, GitWorld
from tests.change.helpers import BRANCH, PROMOTE, krm_merge
from tests.git_http import GitHttpServer

RELEASE = "apps/podinfo/release.yaml"
REDIS = "apps/podinfo/redis.yaml"
REDIS_RELEASE = HELMRELEASE.replace("podinfo", "redis").replace("6.2.0", "7.0.0")
SHARED = "krm-merge/promote/{environment}"  # one branch for every promotion to an environment
SHARED_BRANCH = "krm-merge/promote/prod"

Served = tuple[GitWorld, GitHttpServer, ForgeServer]


@pytest.fixture()
def served(world: GitWorld) -> Iterator[Served]:
    """The world with a second marked release (redis), origin served over smart HTTP, and a fake GitHub."""
    (world.package / "redis.yaml").write_text(REDIS_RELEASE)
    world.git("add", "-A")
    world.git("commit", "--quiet", "-m", "redis")
    world.git("push", "--quiet", "origin", "main")
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    forge = ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    yield world, server, forge
    forge.close()
    server.close()


def promote(world: GitWorld, forge: ForgeServer, *args: str,
            clone: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``promote apps/podinfo ARGS --pull-request`` in ``clone`` (default: the world's work tree)."""
    where = clone or world.work
    return krm_merge(world, "promote", str(where / "apps" / "podinfo"), *args, "--pull-request", "--forge", "github",
                     "--forge-api", forge.api, env={"GITHUB_TOKEN": TOKEN}, cwd=where)


def another_run(world: GitWorld, forge: ForgeServer, branch: str, *args: str) -> str:
    """Another krm-merge run promoting ``args`` by pull request, from a clone of its own over HTTP; the tip it
    leaves on ``branch``."""
    clone = world.tmp / f"racer-{len(list(world.tmp.glob('racer-*')))}"
    world.git("clone", "--quiet", world.git("remote", "get-url", "origin"), str(clone), cwd=world.tmp)
    done = promote(world, forge, *args, clone=clone)
    assert done.returncode == 0, done.stderr
    return world.remote_branch(branch) or ""


def run_commit_on(world: GitWorld, branch: str, rel: str) -> str:
    """A commit of krm-merge's kind (its trailer names ``branch``) adding ``rel``, pushed above the branch's tip
    (main's when it has none); its id."""
    clone = world.tmp / f"stacker-{len(list(world.tmp.glob('stacker-*')))}"
    world.git("clone", "--quiet", world.remote.as_uri(), str(clone), cwd=world.tmp)
    if world.remote_branch(branch):
        world.git("checkout", "--quiet", branch, cwd=clone)
    (clone / rel).write_text("another run\n")
    world.git("add", "-A", cwd=clone)
    world.git("commit", "--quiet", "-m", f"another run\n\nKrm-Merge-Branch: {branch}", cwd=clone)
    world.git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
    return world.git("rev-parse", "HEAD", cwd=clone)


def on_branch(world: GitWorld, branch: str, rel: str) -> str:
    return world.remote_file(branch, rel) + "\n"


def test_another_runs_push_to_the_branch_is_kept_and_ours_is_planned_above_it(served: Served) -> None:
    world, server, forge = served
    theirs: list[str] = []
    server.before_push = lambda: theirs.append(
        another_run(world, forge, SHARED_BRANCH, "--set", "flux-system:redis:prod=7.1.0", "--branch", SHARED))
    result = promote(world, forge, "--set", "flux-system:podinfo:prod=6.3.0", "--branch", SHARED)
    assert result.returncode == 0, result.stderr
    assert world.remote_git("rev-parse", f"{SHARED_BRANCH}~1") == theirs[0]
    assert on_branch(world, SHARED_BRANCH, REDIS) == REDIS_RELEASE.replace("7.0.0", "7.1.0")  # theirs kept
    assert on_branch(world, SHARED_BRANCH, RELEASE) == HELMRELEASE.replace("6.2.0", "6.3.0")  # ours on top
    assert world.changed_files(SHARED_BRANCH) == [RELEASE]
    assert f"after planning again on 1 newer head(s) of {SHARED_BRANCH} (2 push(es) of 20)" in result.stderr
    [pull] = forge.pulls  # the other run opened it; ours updated it to say what the branch holds
    assert "pull request #1 updated" in result.stderr
    assert "`6.3.0`" in pull["body"] and "`7.1.0`" in pull["body"]
    assert "6.3.0" in pull["title"] and "7.1.0" in pull["title"]
    assert world.git("rev-parse", f"refs/heads/{SHARED_BRANCH}") == world.remote_branch(SHARED_BRANCH)
    assert world.git("status", "--porcelain") == "" and "Traceback" not in result.stderr


@pytest.mark.parametrize(("theirs", "ours", "stands", "who"), [("6.4.0", "6.3.0", "6.4.0", "theirs"),
                                                                ("6.2.5", "6.3.0", "6.3.0", "ours")])
def test_the_same_field_set_by_another_run_the_higher_version_stands(
        served: Served, theirs: str, ours: str, stands: str, who: str) -> None:
    world, server, forge = served
    landed: list[str] = []
    server.before_push = lambda: landed.append(another_run(world, forge, BRANCH, *PROMOTE, "--value", theirs))
    result = promote(world, forge, *PROMOTE, "--value", ours)
    assert result.returncode == 0, result.stderr
    assert on_branch(world, BRANCH, RELEASE) == HELMRELEASE.replace("6.2.0", stands)
    assert result.stderr.count(f"another writer set {theirs} meanwhile") == 1
    assert f"{stands} stands over {ours if who == 'theirs' else theirs} ({who}: the higher version stands" \
        in result.stderr
    tip = world.remote_branch(BRANCH) or ""
    [pull] = forge.pulls
    if who == "theirs":  # nothing pushed, the pull request left as the other run made it
        assert tip == landed[0] and "nothing left to push" in result.stderr
        assert "its pull request is that run's" in result.stderr and "pull request #1 already up to date" \
            in result.stderr
        assert theirs in pull["title"] and ours not in pull["title"] + pull["body"]
        assert world.git("rev-parse", f"refs/heads/{BRANCH}") == tip  # the local branch follows theirs
    else:  # ours above theirs; the pull request says both, ours first
        assert world.remote_git("rev-parse", f"{BRANCH}~1") == landed[0]
        newest, *older = pull["body"].split("\n\n---\n\n")
        assert f"`{ours}`" in newest and older and f"`{ours}`" not in older[-1] and f"`{theirs}`" in older[-1]
        assert "pull request #1 updated" in result.stderr


def test_a_persons_commit_pushed_meanwhile_is_never_built_on_or_overwritten(served: Served) -> None:
    world, server, forge = served
    theirs: list[str] = []
    server.before_push = lambda: theirs.append(world.push_from_elsewhere(BRANCH))
    result = promote(world, forge, *PROMOTE, "--value", "6.3.0")
    assert result.returncode == 1, result.stderr
    assert f"error: branch: origin's branch {BRANCH} now ends in a commit krm-merge did not make " \
           f"({theirs[0][:12]})" in result.stderr
    assert world.remote_branch(BRANCH) == theirs[0] and forge.pulls == []  # theirs stands, untouched
    kept = world.git("rev-parse", f"refs/heads/{BRANCH}")
    assert f"the commit {kept[:12]} stays on the local branch {BRANCH}" in result.stderr
    assert "6.3.0 #" in world.git("show", f"{kept}:{RELEASE}")
    assert world.git("status", "--porcelain") == "" and "Traceback" not in result.stderr


def test_a_branch_that_always_moves_stops_at_the_bound_and_loses_nothing(served: Served) -> None:
    world, server, forge = served
    theirs: list[str] = []

    def always() -> None:  # another run pushes to the branch first every time; the hook re-arms itself
        theirs.append(run_commit_on(world, BRANCH, f"other-{len(theirs)}.txt"))
        server.before_push = always

    server.before_push = always
    result = promote(world, forge, *PROMOTE, "--value", "6.3.0", "--push-attempts", "3")
    assert result.returncode == 1, result.stderr
    assert f"error: push: origin's branch {BRANCH} moved before each of 3 pushes" in result.stderr
    assert "Traceback" not in result.stderr and forge.pulls == []
    assert len(theirs) >= 3 and world.remote_branch(BRANCH) == theirs[-1]  # theirs all stand
    assert on_branch(world, BRANCH, RELEASE) == HELMRELEASE  # ours never landed
    kept = world.git("rev-parse", f"refs/heads/{BRANCH}")
    assert f"the commit {kept[:12]} stays on the local branch {BRANCH}" in result.stderr
    assert "6.3.0 #" in world.git("show", f"{kept}:{RELEASE}")
    assert world.git("status", "--porcelain") == "" and (world.package / "release.yaml").read_text() == HELMRELEASE
