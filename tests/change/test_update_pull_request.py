"""``update --pull-request``: a ``kpt pkg get`` package in a git work tree, updated, pushed, put up for review.

The upstream is a real git repository at v1 and v2, the package fetched with the real
``kpt pkg get`` and committed to the deploy repository; a local edit conflicts with v2.  The
pull request's body is the update report: every file, every conflict and how it was decided.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import krm_merge
from tests.git_http import GitHttpServer
from tests.outcomes.schema_check import errors, load_schema
from tests.update.world import cm

TOKEN = "glpat-UpdateToken0000000001"


def _upstream(world: GitWorld) -> Path:
    """The tagged upstream; ``apps/pkg`` fetched at v1 with kpt, edited (a.yaml conflicts with v2), pushed."""
    up = world.tagged_upstream()
    kpt = subprocess.run(["kpt", "pkg", "get", f"file://{up}.git/pkg@v1", "apps/pkg"], cwd=world.work,
                         env=world.env, capture_output=True, text=True, timeout=120)
    assert kpt.returncode == 0, kpt.stderr
    (world.work / "apps/pkg/a.yaml").write_text(cm("a", "mine"))  # a local edit: conflicts with v2
    world.git("add", "-A")
    world.git("commit", "--quiet", "-m", "add pkg at v1, with a local edit")
    world.git("push", "--quiet", "origin", "main")
    return up


def test_an_update_becomes_a_merge_request_whose_body_is_the_update_report(world: GitWorld) -> None:
    _upstream(world)
    forge = ForgeServer("gitlab", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    env = {"GITLAB_TOKEN": TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}
    try:
        result = krm_merge(world, "update", "apps/pkg@v2", "--pull-request", "--forge", "gitlab",
                           "--forge-api", forge.api, "--forge-repo", "acme/deploy", "--label", "upstream",
                           "--reviewer", "alice", env=env)
        assert result.returncode == 0, result.stderr
        branch = "krm-merge/update/apps/pkg"
        assert result.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/-/merge_requests/1"
        [merge_request] = forge.pulls
        assert merge_request["title"] == "krm-merge update apps/pkg to v2: 3 file(s) changed, 1 conflict(s)"
        body = merge_request["body"]
        assert "### Conflicts" in body  # the conflict: its resource, file, field, the three values, how decided
        assert "| ConfigMap/a | `a.yaml` | `data.a` | `mine` | `2` | `1` | upstream's value |" in body
        assert "| `apps/pkg/b.yaml` |" not in body and "| `b.yaml` | changed |" in body
        assert (merge_request["head"], merge_request["labels"], merge_request["reviewers"]) == (
            branch, ["upstream"], [11])
        assert sorted(world.changed_files(branch)) == ["apps/pkg/Kptfile", "apps/pkg/a.yaml", "apps/pkg/b.yaml"]
        assert 'a: "2"' in world.remote_file(branch, "apps/pkg/b.yaml")
        assert forge.violations == [] and TOKEN not in result.stdout + result.stderr
        # the same update again from a fresh checkout: the same merge request, nothing pushed
        tip = world.remote_branch(branch)
        world.git("checkout", "--", ".")
        again = krm_merge(world, "update", "apps/pkg@v2", "--pull-request", "--forge", "gitlab",
                          "--forge-api", forge.api, "--forge-repo", "acme/deploy", env=env)
        assert again.returncode == 0, again.stderr
        assert "merge request !1 already up to date" in again.stderr
        assert world.remote_branch(branch) == tip and len(forge.pulls) == 1
    finally:
        forge.close()


def test_the_same_update_pushed_meanwhile_by_another_run_stands_aside_not_an_error(world: GitWorld) -> None:
    """Two jobs running one update at once: the second's push loses its race to the first's identical change."""
    _upstream(world)
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    forge = ForgeServer("gitlab", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    env = {"GITLAB_TOKEN": TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}
    update = ("update", "apps/pkg@v2", "--pull-request", "--forge", "gitlab", "--forge-api", forge.api,
              "--forge-repo", "acme/deploy")
    branch = "krm-merge/update/apps/pkg"
    theirs: list[str] = []

    def another_run() -> None:  # the same update from a clone of its own, pushed just before ours is answered
        clone = world.tmp / "other"
        world.git("clone", "--quiet", server.url("acme/deploy.git"), str(clone), cwd=world.tmp)
        done = krm_merge(world, *update, env=env, cwd=clone)
        assert done.returncode == 0, done.stderr
        theirs.append(world.remote_branch(branch) or "")

    server.before_push = another_run
    try:
        result = krm_merge(world, *update, env=env)
        assert result.returncode == 0, result.stderr
        assert f"nothing left to push after reading 1 newer head(s) of {branch}" in result.stderr
        assert "merge request !1 already up to date" in result.stderr and "lease lost" not in result.stderr
        assert world.remote_branch(branch) == theirs[0] and len(forge.pulls) == 1
        assert world.git("rev-parse", f"refs/heads/{branch}") == theirs[0]  # the local branch follows theirs
    finally:
        forge.close()
        server.close()


def test_an_update_dry_run_with_a_report_names_the_pull_request_and_writes_nothing(world: GitWorld) -> None:
    _upstream(world)
    forge = ForgeServer("gitlab", TOKEN)
    report = world.tmp / "report.json"
    try:
        before = (world.work / "apps/pkg/b.yaml").read_text()
        result = krm_merge(world, "update", "apps/pkg@v2", "--dry-run", "--pull-request", "--forge", "gitlab",
                           "--forge-api", forge.api, "--forge-repo", "acme/deploy", "--report", "json", str(report),
                           env={"GITLAB_TOKEN": TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")})
        assert result.returncode == 0, result.stderr
        assert "would open a pull request on gitlab acme/deploy: branch krm-merge/update/apps/pkg into main" \
            in result.stdout
        assert (world.work / "apps/pkg/b.yaml").read_text() == before
        assert world.remote_branch("krm-merge/update/apps/pkg") is None and forge.pulls == []
        data = json.loads(report.read_text())
        assert errors(data, load_schema()) == []  # the pull request's outcome and entry: the published schema's
        assert data["pullRequest"] == {"action": "would open", "branch": "krm-merge/update/apps/pkg", "base": "main",
                                       "forge": "gitlab", "repo": "acme/deploy"}
        [outcome] = [o for o in data["outcomes"] if o["kind"] == "pullRequest"]
        assert outcome["files"] == 3 and "Krm-Merge-Branch: krm-merge/update/apps/pkg" in outcome["commitMessage"]
    finally:
        forge.close()


def test_the_summary_says_the_files_changed_on_the_branch_and_what_the_pull_request_got(world: GitWorld) -> None:
    """The checkout stays as it was: the summary names the branch the files changed on, and the pull request."""
    _upstream(world)
    forge = ForgeServer("gitlab", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    env = {"GITLAB_TOKEN": TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}
    options = ["--pull-request", "--forge", "gitlab", "--forge-api", forge.api, "--forge-repo", "acme/deploy"]
    try:
        first = krm_merge(world, "update", "apps/pkg@v2", *options, env=env)
        assert first.returncode == 0, first.stderr
        assert ("krm-merge update: updated apps/pkg: 3 file(s) changed on branch krm-merge/update/apps/pkg; "
                "merge request !1 opened\n") in first.stderr
        assert world.git("status", "--porcelain") == ""  # what the summary says: not the user's files
        again = krm_merge(world, "update", "apps/pkg@v2", *options, env=env)
        assert again.returncode == 0, again.stderr
        assert ("krm-merge update: updated apps/pkg: 3 file(s) changed on branch krm-merge/update/apps/pkg; "
                "merge request !1 already up to date\n") in again.stderr
    finally:
        forge.close()
