"""``promote --push`` on a checkout behind the base branch (issue #47): planned on the base's tip, not refused.

A CI job that starts late checks out the base, and another run pushes before this one reads the
remote: HEAD is an ancestor of the tip, and the promotion is planned again on the tip as after a
lost race.  A HEAD with a commit of its own on the changed files is still refused.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.change.gitworld import HELMRELEASE, GitWorld
from tests.change.test_promote_push import RELEASE, commit_elsewhere, on_main, promote
from tests.git_http import GitHttpServer

UI = HELMRELEASE.replace("podinfo", "ui").replace("6.2.0", "1.0.0")
TWO = HELMRELEASE + "---\n" + UI  # two marked fields in one file


@pytest.fixture()
def two(tmp_path: Path) -> Iterator[GitWorld]:
    """A world whose release file holds two marked fields (podinfo's and ui's), origin over smart HTTP."""
    world = GitWorld(tmp_path, {RELEASE: TWO})
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    yield world
    server.close()


def test_a_checkout_behind_a_promotion_of_another_marker_lands_on_the_tip(two: GitWorld) -> None:
    world = two
    other = world.tmp / "other-ci"
    world.git("clone", "--quiet", world.remote.as_uri(), str(other), cwd=world.tmp)
    theirs = subprocess.run([sys.executable, "-m", "krm_merge", "promote", str(other / "apps" / "podinfo"), "--set",
                             "flux-system:ui:prod=1.1.0", "--push"], cwd=other, env=world.env, capture_output=True,
                            text=True, timeout=300)
    assert theirs.returncode == 0, theirs.stderr
    their_commit = world.remote_branch("main")
    result = promote(world, "6.3.0")  # this checkout is one commit behind main now
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    both = HELMRELEASE.replace("6.2.0", "6.3.0") + "---\n" + UI.replace("1.0.0", "1.1.0")
    assert on_main(world, RELEASE) == both  # byte-exact: theirs kept, ours on top
    assert world.remote_git("rev-parse", "main~1") == their_commit and world.changed_files("main") == [RELEASE]
    assert "HEAD is behind origin main: the promotion is planned again on its tip" in result.stderr
    assert "(1 push(es))" in result.stderr and "'6.2.0' -> '6.3.0'" in result.stderr
    assert world.git("status", "--porcelain") == "" and (world.package / "release.yaml").read_text() == TWO


def test_a_checkout_behind_the_same_field_at_a_higher_version_theirs_stands(two: GitWorld) -> None:
    world = two
    higher = commit_elsewhere(world, RELEASE, TWO.replace("6.2.0", "6.4.0"))
    result = promote(world, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert world.remote_branch("main") == higher  # nothing pushed
    assert on_main(world, RELEASE) == TWO.replace("6.2.0", "6.4.0")
    assert result.stderr.count("another writer set 6.4.0 meanwhile") == 1
    assert "6.4.0 stands over 6.3.0 (theirs: the higher version stands" in result.stderr
    assert "nothing left to push" in result.stderr
    assert "-> '6.3.0'" not in result.stderr  # the checkout's plan is not what the report says: nothing was pushed


def test_a_head_with_its_own_commit_on_the_file_is_still_refused(two: GitWorld) -> None:
    world = two
    (world.package / "release.yaml").write_text(TWO.replace("1.0.0", "1.0.1"))
    world.git("commit", "--quiet", "-am", "a local change not on main")
    before = commit_elsewhere(world, "apps/podinfo/notes.yaml", "moved: true\n")  # diverged from main
    result = promote(world, "6.3.0")
    assert result.returncode == 1, result.stderr
    assert (f"error: base: {RELEASE} differ between HEAD and origin/main: the push would carry those differences "
            "too; run on a checkout of origin/main") in result.stderr
    assert "Traceback" not in result.stderr and world.remote_branch("main") == before


def test_a_dry_run_behind_a_tip_it_already_holds_says_so_and_is_not_refused(two: GitWorld) -> None:
    world = two
    tip = commit_elsewhere(world, RELEASE, TWO.replace("1.0.0", "1.1.0"))
    world.git("fetch", "--quiet", "origin")  # the object store holds the tip: the dry run compares against it
    result = promote(world, "6.3.0", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert (f"push: would push one commit of 1 file(s) to origin main ({tip[:12]}); HEAD is behind it: the commit "
            "would be planned again on its tip") in result.stderr
    assert world.remote_branch("main") == tip and world.git("status", "--porcelain") == ""
