"""A ``--pull-request`` run refused before its write (issue 44): every missing setting in one error, the dry run
refused as the real run is, no line saying a field was set, the error ending "nothing written"."""

from __future__ import annotations

import pytest

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import PROMOTE, krm_merge, promote, snapshot
from tests.change.test_update_pull_request import _upstream

MISSING_ALL = ("krm-merge promote: error: pull request: missing --forge github|gitlab|gitea|bitbucket (the forge origin "
               "is on: a local path does not say); --forge-repo OWNER/NAME (the repository on the forge: origin's URL "
               "does not say); a forge token: set KRM_MERGE_FORGE_TOKEN or GITHUB_TOKEN or GITLAB_TOKEN or CI_JOB_TOKEN"
               " or GITEA_TOKEN or BITBUCKET_TOKEN; --forge-api URL (origin is a local path); nothing written\n")


@pytest.mark.parametrize("dry_run", [False, True])
def test_every_missing_setting_is_said_at_once_and_nothing_claims_a_change(world: GitWorld, dry_run: bool) -> None:
    before = snapshot(world)
    done = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.4.0", "--pull-request",
                     *(["--dry-run"] if dry_run else []))
    assert done.returncode == 1
    assert done.stderr == MISSING_ALL  # one line: no "set: ..." before it, the same for the dry run
    assert done.stdout == ""
    assert snapshot(world) == before


def test_a_dry_run_without_a_token_is_refused_as_the_real_run_is(world: GitWorld, github: ForgeServer) -> None:
    before = snapshot(world)
    runs = [promote(world, github, "6.4.0", *extra, token="") for extra in ([], ["--dry-run"])]
    for done in runs:
        assert done.returncode == 1, done.stderr
        assert done.stderr == ("krm-merge promote: error: pull request: missing a github token: set "
                               "KRM_MERGE_FORGE_TOKEN or GITHUB_TOKEN; nothing written\n")
    assert snapshot(world) == before and github.pulls == []


def test_a_refused_update_says_no_file_changed(world: GitWorld) -> None:
    _upstream(world)
    before = snapshot(world)
    for extra in ([], ["--dry-run"]):
        done = krm_merge(world, "update", "apps/pkg@v2", "--pull-request", "--forge", "gitlab", "--forge-api",
                         "http://127.0.0.1:9", "--forge-repo", "acme/deploy", *extra)
        assert done.returncode == 1, done.stderr
        assert "file(s)" not in done.stderr and "updated" not in done.stderr, done.stderr
        assert done.stderr.endswith("krm-merge update: error: pull request: missing a gitlab token: set "
                                    "KRM_MERGE_FORGE_TOKEN or GITLAB_TOKEN or CI_JOB_TOKEN; nothing written\n"), done.stderr
    assert snapshot(world) == before


def test_a_rerun_that_opens_the_pull_request_says_so_not_nothing_to_change(world: GitWorld, github: ForgeServer) -> None:
    github.fail(401, method="post", body={"message": "Bad credentials"})  # the forge fails after the push
    assert promote(world, github, "6.3.0").returncode == 1
    # The checkout is left as it was (the change went to the branch): the rerun plans the same change, finds
    # its kept commit and opens the pull request, and says so.
    rerun = promote(world, github, "6.3.0")
    assert rerun.returncode == 0, rerun.stderr
    assert "krm-merge promote: pull request #1 opened: krm-merge/promote/flux-system-podinfo-prod into main" \
        in rerun.stderr
    assert rerun.stderr.splitlines()[-1] == "krm-merge promote: flux-system/podinfo after dev=6.3.0 (1 field in 1 file)"
    assert "nothing to change" not in rerun.stderr
