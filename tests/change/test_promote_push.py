"""``promote --push``: one commit on the base branch, pushed with a lease, planned again whenever it loses a race.

Real git end to end: the remote is served over git's smart HTTP (``git http-backend``), and
another writer pushes at the moment our push starts (the server's ``before_push`` hook), so the
remote moves between our plan and our push as it does when two CI jobs promote at once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.change.gitworld import HELMRELEASE, GitWorld
from tests.git_http import GitHttpServer

RELEASE = "apps/podinfo/release.yaml"
SET = "flux-system:podinfo:prod"


def promote(world: GitWorld, value: str, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "krm_merge", "promote", str(world.package), "--set",
                           f"{SET}={value}", "--push", *more], cwd=world.work, env=world.env, capture_output=True,
                          text=True, timeout=300)


def on_main(world: GitWorld, rel: str) -> str:
    """The file as the remote's main holds it (the world's reader strips the last newline)."""
    return world.remote_file("main", rel) + "\n"


def commit_elsewhere(world: GitWorld, rel: str, text: str) -> str:
    """Another writer's commit on main (a clone of its own, pushed over file://); its id."""
    other = world.tmp / f"other-{len(list(world.tmp.glob('other-*')))}"
    world.git("clone", "--quiet", world.remote.as_uri(), str(other), cwd=world.tmp)
    (other / rel).parent.mkdir(parents=True, exist_ok=True)
    (other / rel).write_text(text)
    world.git("add", "-A", cwd=other)
    world.git("commit", "--quiet", "-m", "another writer", cwd=other)
    world.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=other)
    return world.git("rev-parse", "HEAD", cwd=other)


def test_push_lands_one_commit_on_the_base_and_leaves_the_checkout(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, _ = http_world
    before = world.remote_branch("main")
    result = promote(world, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert on_main(world, RELEASE) == HELMRELEASE.replace("6.2.0", "6.3.0")  # byte-exact, one scalar
    assert world.remote_git("rev-parse", "main~1") == before and world.changed_files("main") == [RELEASE]
    assert world.git("status", "--porcelain") == ""  # the checkout is as it was
    assert "push: pushed" in result.stderr and "(1 push(es))" in result.stderr


def test_a_push_refused_because_the_remote_moved_is_planned_again_and_lands(
        http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, server = http_world
    theirs: list[str] = []
    server.before_push = lambda: theirs.append(commit_elsewhere(world, "apps/podinfo/notes.yaml", "moved: true\n"))
    result = promote(world, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert "after planning again on 1 newer head(s) of main (2 push(es))" in result.stderr
    assert world.remote_git("rev-parse", "main~1") == theirs[0]  # theirs kept, ours on top of it
    assert on_main(world, "apps/podinfo/notes.yaml") == "moved: true\n"
    assert on_main(world, RELEASE) == HELMRELEASE.replace("6.2.0", "6.3.0")
    assert world.changed_files("main") == [RELEASE]


@pytest.mark.parametrize(("theirs", "ours", "stands", "who"), [("6.4.0", "6.3.0", "6.4.0", "theirs"),
                                                                ("6.2.5", "6.3.0", "6.3.0", "ours")])
def test_the_same_field_set_meanwhile_the_higher_version_stands(
        http_world: tuple[GitWorld, GitHttpServer], theirs: str, ours: str, stands: str, who: str) -> None:
    world, server = http_world
    landed: list[str] = []
    server.before_push = lambda: landed.append(
        commit_elsewhere(world, RELEASE, HELMRELEASE.replace("6.2.0", theirs)))
    result = promote(world, ours)
    assert result.returncode == 0, result.stderr
    assert on_main(world, RELEASE) == HELMRELEASE.replace("6.2.0", stands)
    assert f"another writer set {theirs} meanwhile" in result.stderr
    assert f"{stands} stands over {ours if who == 'theirs' else theirs} ({who}: the higher version stands" \
        in result.stderr
    if who == "theirs":
        assert world.remote_branch("main") == landed[0] and "nothing left to push" in result.stderr
    else:
        assert world.remote_git("rev-parse", "main~1") == landed[0]


def test_the_bound_reached_is_one_error_and_nothing_is_lost(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, server = http_world
    theirs: list[str] = []

    def always() -> None:  # another writer pushes first every time; the hook re-arms itself
        theirs.append(commit_elsewhere(world, f"apps/podinfo/other-{len(theirs)}.yaml", "x: 1\n"))
        server.before_push = always

    server.before_push = always
    result = promote(world, "6.3.0", "--push-attempts", "3")
    assert result.returncode == 1, result.stderr
    assert "error: push: origin's branch main moved before each of 3 pushes" in result.stderr
    assert "Traceback" not in result.stderr
    assert world.remote_branch("main") == theirs[-1]  # theirs all stand
    assert len(theirs) >= 3 and on_main(world, RELEASE) == HELMRELEASE  # ours never landed
    kept = world.git("rev-parse", "refs/heads/krm-merge/push/flux-system-podinfo-prod-6.3.0")
    assert f"the commit {kept[:12]} stays on the local branch" in result.stderr
    assert world.git("show", f"{kept}:{RELEASE}") == HELMRELEASE.replace("6.2.0", "6.3.0").rstrip("\n")
    assert world.git("status", "--porcelain") == "" and (world.package / "release.yaml").read_text() == HELMRELEASE


def test_push_refuses_pull_request_and_attempts_without_push(world: GitWorld) -> None:
    both = promote(world, "6.3.0", "--pull-request")
    assert both.returncode == 2 and "--push: does not go with --pull-request" in both.stderr
    alone = subprocess.run([sys.executable, "-m", "krm_merge", "promote", str(world.package), "--set",
                            f"{SET}=6.3.0", "--push-attempts", "3"], env=world.env, capture_output=True, text=True)
    assert alone.returncode == 2 and "--push-attempts: goes with --push" in alone.stderr
    assert on_main(world, RELEASE) == HELMRELEASE


def test_a_recorded_repository_dispatch_is_pushed_to_main_byte_exactly(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    """Flux's staging → production scenario with --push: the recorded dispatch body, one commit on main."""
    world, _ = http_world
    pipeline = world.tmp / "pipeline.yaml"
    pipeline.write_text("apiVersion: pipelines.weave.works/v1alpha1\nkind: Pipeline\nmetadata:\n  name: podinfo\n"
                        "  namespace: flux-system\nspec:\n  appRef:\n    apiVersion: helm.toolkit.fluxcd.io/v2\n"
                        "    kind: HelmRelease\n    name: podinfo\n  environments:\n  - name: staging\n    targets:\n"
                        "    - namespace: podinfo-staging\n  - name: prod\n    targets:\n    - namespace: prod\n")
    event = Path(__file__).parent.parent / "promote" / "events" / "repository-dispatch.json"
    result = subprocess.run([sys.executable, "-m", "krm_merge", "promote", str(world.package), "--event", str(event),
                             "--pipeline-file", str(pipeline), "--push"], cwd=world.work, env=world.env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert on_main(world, RELEASE) == HELMRELEASE.replace("6.2.0", "6.5.4")
    assert world.changed_files("main") == [RELEASE] and world.git("status", "--porcelain") == ""


def test_a_dry_run_says_where_it_would_push_and_fetches_nothing(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, _ = http_world
    commit_elsewhere(world, "apps/podinfo/notes.yaml", "moved: true\n")  # main moved: a fetch would bring it
    before = world.remote_branch("main")
    result = promote(world, "6.3.0", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"push: would push one commit of 1 file(s) to origin main ({before[:12]})" in result.stderr
    assert world.remote_branch("main") == before and world.git("status", "--porcelain") == ""
    assert world.git("cat-file", "-t", before, check=False) == ""  # not fetched: the object store is as it was


def test_a_contest_met_again_on_a_later_head_is_said_once(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, server = http_world
    pushes = [lambda: commit_elsewhere(world, RELEASE, HELMRELEASE.replace("6.2.0", "6.2.5")),
              lambda: commit_elsewhere(world, "apps/podinfo/notes.yaml", "moved: true\n")]

    def next_writer() -> None:  # two other writers, one before each of our first two pushes
        pushes.pop(0)()
        if pushes:
            server.before_push = next_writer

    server.before_push = next_writer
    result = promote(world, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert "after planning again on 2 newer head(s) of main (3 push(es))" in result.stderr
    assert result.stderr.count("another writer set 6.2.5 meanwhile") == 1
    assert on_main(world, RELEASE) == HELMRELEASE.replace("6.2.0", "6.3.0")
    assert on_main(world, "apps/podinfo/notes.yaml") == "moved: true\n"
