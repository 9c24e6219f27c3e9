"""The pull-request workflow closes: open with conflicts, resolve on the branch, merge, pull — no manual step.

A ``kpt pkg get`` package in a checkout of a bare remote, updated with ``--conflicts mark
--pull-request`` against the forge stand-in (built from the forge's OpenAPI description, rejecting
any request it does not allow); the conflict is decided with ``resolve --pull-request``; the pull
request is merged on the remote with git; ``git pull`` on the user's base branch then just works.
After every ``--pull-request`` run the user's checkout is as it was (``git status`` clean), as
docs/pull-requests.md says.
"""

from __future__ import annotations

import json

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import krm_merge, promote
from tests.change.test_update_pull_request import TOKEN, _upstream

BRANCH = "krm-merge/update/apps/pkg"
LEDGER = "apps/pkg/.krm-merge.conflicts"


def _forge(world: GitWorld) -> tuple[ForgeServer, list[str], dict[str, str]]:
    forge = ForgeServer("gitlab", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    options = ["--pull-request", "--forge", "gitlab", "--forge-api", forge.api, "--forge-repo", "acme/deploy"]
    return forge, options, {"GITLAB_TOKEN": TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}


def _merge_on_the_remote(world: GitWorld, branch: str) -> None:
    """What the forge's merge button does: a merge commit of ``branch`` into main, in the bare repository."""
    tree = world.remote_git("merge-tree", "--write-tree", "main", branch)
    commit = world.remote_git("commit-tree", tree, "-p", "main", "-p", branch, "-m", f"Merge {branch}")
    world.remote_git("update-ref", "refs/heads/main", commit)


def _clean(world: GitWorld) -> None:
    assert world.git("status", "--porcelain", "--untracked-files=all") == ""


def test_an_update_with_conflicts_is_resolved_on_its_pull_request_merged_and_pulled(world: GitWorld) -> None:
    _upstream(world)
    head = world.git("rev-parse", "HEAD")
    forge, options, env = _forge(world)
    try:
        opened = krm_merge(world, "update", "apps/pkg@v2", "--conflicts", "mark", *options, env=env)
        assert opened.returncode == 3, opened.stderr  # the merge request opened with the marker
        [pull] = forge.pulls
        assert "| ConfigMap/a | `a.yaml` | `data.a` | `mine` | `2` | `1` | local's value, marked" in pull["body"]
        assert "left in apps/pkg on the pull request's branch: decide with krm-merge resolve apps/pkg --take " \
            "local\\|upstream --pull-request" in pull["body"]  # how the conflicts are decided: on the branch
        assert "krm-merge:conflict" in world.remote_file(BRANCH, "apps/pkg/a.yaml")
        assert world.remote_file(BRANCH, LEDGER)
        _clean(world)  # the user's checkout: as it was
        assert world.git("rev-parse", "HEAD") == head

        resolved = krm_merge(world, "resolve", "apps/pkg", "--take", "upstream", *options, env=env)
        assert resolved.returncode == 0, resolved.stderr
        assert resolved.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/-/merge_requests/1"
        assert "merge request !1 updated" in resolved.stderr
        a_yaml = world.remote_file(BRANCH, "apps/pkg/a.yaml")
        assert "krm-merge:conflict" not in a_yaml and 'a: "2"' in a_yaml  # upstream's value, as recorded
        assert LEDGER not in world.remote_git("ls-tree", "-r", "--name-only", BRANCH).split("\n")
        [pull] = forge.pulls
        assert pull["body"].startswith("**No conflict is left**")
        assert "### Conflicts" in pull["body"]  # the update's report stays below
        assert world.remote_git("log", "-1", "--format=%P", BRANCH) != world.remote_git("rev-parse", "main")
        _clean(world)

        # the same update again: the decided branch is kept, not rebuilt with the marker
        tip = world.remote_branch(BRANCH)
        again = krm_merge(world, "update", "apps/pkg@v2", "--conflicts", "mark", *options, env=env)
        assert again.returncode == 3, again.stderr
        assert "merge request !1 already up to date" in again.stderr
        assert world.remote_branch(BRANCH) == tip and forge.pulls[0]["body"].startswith("**No conflict is left**")
        _clean(world)

        _merge_on_the_remote(world, BRANCH)
        pulled = world.git("pull", "--quiet", "--no-rebase", "origin", "main", check=False)
        assert pulled == "" and world.git("rev-parse", "HEAD") == world.remote_git("rev-parse", "main")
        assert 'a: "2"' in (world.work / "apps/pkg/a.yaml").read_text()
        assert not (world.work / LEDGER).exists()
        _clean(world)
        assert forge.violations == [] and TOKEN not in "".join(r.stdout + r.stderr for r in (opened, resolved, again))
    finally:
        forge.close()


def test_resolve_on_a_pull_request_takes_local_for_one_conflict_and_says_what_is_left(world: GitWorld) -> None:
    _upstream(world)  # a.yaml edited locally: conflicts with v2; b.yaml edited too, below
    (world.work / "apps/pkg/b.yaml").write_text((world.work / "apps/pkg/b.yaml").read_text().replace('"1"', '"mine"'))
    world.git("commit", "--quiet", "-am", "edit b too")
    world.git("push", "--quiet", "origin", "main")
    forge, options, env = _forge(world)
    try:
        assert krm_merge(world, "update", "apps/pkg@v2", "--conflicts", "mark", *options, env=env).returncode == 3
        one = krm_merge(world, "resolve", "apps/pkg", "--take", "local", "ConfigMap/a", *options, env=env)
        assert one.returncode == 3, one.stderr  # one conflict left
        assert forge.pulls[0]["body"].startswith("**1 conflict(s) left**")
        assert "on the pull request's branch: decide with krm-merge resolve apps/pkg" in one.stderr
        assert "a: mine" in world.remote_file(BRANCH, "apps/pkg/a.yaml").replace('"', "")
        assert "krm-merge:conflict" in world.remote_file(BRANCH, "apps/pkg/b.yaml")
        ledger = json.loads(world.remote_file(BRANCH, LEDGER))
        assert len(ledger["conflicts"]) == 1
        rest = krm_merge(world, "resolve", "apps/pkg", "--take", "upstream", *options, env=env)
        assert rest.returncode == 0, rest.stderr
        assert forge.pulls[0]["body"].startswith("**No conflict is left**")
        assert "**1 conflict(s) left**" in forge.pulls[0]["body"]  # the earlier resolution's report, below
        _clean(world)
    finally:
        forge.close()


def test_resolve_without_the_pull_requests_branch_is_one_clear_error(world: GitWorld) -> None:
    _upstream(world)
    forge, options, env = _forge(world)
    try:
        result = krm_merge(world, "resolve", "apps/pkg", "--take", "upstream", *options, env=env)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert f"origin has no branch {BRANCH}: no pull request to resolve" in result.stderr
        assert forge.pulls == [] and world.remote_branch(BRANCH) is None
        _clean(world)
    finally:
        forge.close()


def test_a_promotion_put_up_for_review_leaves_the_checkout_clean_and_pulls_after_the_merge(
        world: GitWorld, github: ForgeServer) -> None:
    before = (world.package / "release.yaml").read_text()
    result = promote(world, github, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert (world.package / "release.yaml").read_text() == before  # the change is on the branch only
    _clean(world)
    branch = "krm-merge/promote/flux-system-podinfo-prod"
    assert "6.3.0 #" in world.remote_file(branch, "apps/podinfo/release.yaml")
    _merge_on_the_remote(world, branch)
    world.git("pull", "--quiet", "--no-rebase", "origin", "main")
    assert "6.3.0 #" in (world.package / "release.yaml").read_text()
    _clean(world)


def test_resolve_never_builds_on_someone_elses_commit_on_the_pull_requests_branch(world: GitWorld) -> None:
    _upstream(world)
    forge, options, env = _forge(world)
    try:
        assert krm_merge(world, "update", "apps/pkg@v2", "--conflicts", "mark", *options, env=env).returncode == 3
        theirs = world.push_from_elsewhere(BRANCH)  # a reviewer's commit, without krm-merge's trailer
        body = forge.pulls[0]["body"]
        result = krm_merge(world, "resolve", "apps/pkg", "--take", "upstream", *options, env=env)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert f"origin's branch {BRANCH} ends in a commit krm-merge did not make ({theirs[:12]})" in result.stderr
        assert world.remote_branch(BRANCH) == theirs and forge.pulls[0]["body"] == body  # nothing of theirs lost
        _clean(world)
    finally:
        forge.close()
