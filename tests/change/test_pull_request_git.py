"""``promote --pull-request`` end to end with real git: bare remotes over file:// and smart HTTP, a fake GitHub.

Each failure of the issue's list (not a work tree, push rejected, lease lost, authentication
refused, forge unreachable, rate limited) is made to happen for real and must end in an
error naming the step, with the local commit and branch kept when there was one, and a
rerun continuing from it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.change.conftest import TOKEN
from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.git_http import GitHttpServer
from tests.change.helpers import BRANCH, krm_merge, promote, snapshot


def _release(world: GitWorld, ref: str) -> str:
    return world.remote_file(ref, "apps/podinfo/release.yaml")


def test_one_command_opens_a_pull_request_holding_exactly_the_changed_file(world: GitWorld, github: ForgeServer) -> None:
    (world.package / "notes.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n")  # unrelated
    (world.work / "scratch.txt").write_text("mine\n")  # untracked, unrelated
    index_before = (world.work / ".git" / "index").read_bytes()
    head_before = world.git("rev-parse", "HEAD")
    result = promote(world, github, "6.3.0", "--label", "promotion", "--reviewer", "alice")
    assert result.returncode == 0, result.stderr
    url = "https://forge.example/acme/deploy/pull/1"
    assert result.stdout.splitlines()[-1] == url
    assert "pull request #1 opened" in result.stderr
    # the branch: main's tip plus one commit holding exactly release.yaml, the new value in it
    main = world.remote_branch("main")
    tip = world.remote_branch(BRANCH)
    assert world.remote_git("rev-parse", f"{tip}^") == main
    assert world.changed_files(BRANCH) == ["apps/podinfo/release.yaml"]
    assert "version: 6.3.0 # {" in _release(world, BRANCH)
    message = world.remote_git("log", "-1", "--format=%an <%ae>%n%s%n%b", BRANCH)
    assert message.startswith("Release Bot <bot@example.com>\npromote: flux-system/podinfo after dev=6.3.0")
    assert "| `6.2.0` | `6.3.0` |" in message and f"Krm-Merge-Branch: {BRANCH}" in message
    # the pull request: title = summary line, body = the Markdown report, labels, reviewers
    [pull] = github.pulls
    assert pull["title"] == message.split("\n")[1] and "| `spec.chart.spec.version` |" in pull["body"]
    assert (pull["head"], pull["base"], pull["labels"], pull["reviewers"]) == (BRANCH, "main", ["promotion"], ["alice"])
    assert github.violations == []
    # the user's side: HEAD, index, files and the unrelated changes as they were; the promoted file not written
    assert world.git("rev-parse", "HEAD") == head_before and world.git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert (world.work / ".git" / "index").read_bytes() == index_before
    status = sorted(line.strip() for line in world.git("status", "--porcelain").splitlines())
    assert status == ["?? scratch.txt", "M apps/podinfo/notes.yaml"]
    assert "version: 6.2.0 # {" in (world.package / "release.yaml").read_text()
    assert world.git("rev-parse", f"refs/heads/{BRANCH}") == tip  # the local branch too


def test_a_second_run_updates_the_same_branch_and_pull_request(world: GitWorld, github: ForgeServer) -> None:
    assert promote(world, github, "6.3.0").returncode == 0
    first = world.remote_branch(BRANCH)
    # the same work tree, the files already written by the first run: a new value
    second = promote(world, github, "6.3.1")
    assert second.returncode == 0, second.stderr
    assert "pull request #1 updated" in second.stderr
    assert len(github.pulls) == 1 and "6.3.1" in github.pulls[0]["title"]
    tip = world.remote_branch(BRANCH)
    assert tip != first and world.remote_git("rev-parse", f"{tip}^") == world.remote_branch("main")
    assert "version: 6.3.1 # {" in _release(world, BRANCH)
    # the checkout was never written: the report says 6.2.0 -> 6.3.1, as a fresh checkout's (a CI job's) would
    assert "| `6.2.0` | `6.3.1` |" in github.pulls[0]["body"] and world.git("status", "--porcelain") == ""
    # the same again: the same change on the same base, nothing to push, nothing to edit
    third = promote(world, github, "6.3.1")
    assert third.returncode == 0, third.stderr
    assert "pull request #1 already up to date" in third.stderr and world.remote_branch(BRANCH) == tip
    assert [e["request"]["method"] for e in github.exchanges].count("POST") == 1  # one pull request ever opened
    assert [e["request"]["method"] for e in github.exchanges].count("PATCH") == 1
    assert len(github.pulls) == 1 and github.violations == []


def test_nothing_to_change_makes_no_commit_no_branch_and_no_pull_request(world: GitWorld, github: ForgeServer) -> None:
    result = promote(world, github, "6.2.0")
    assert result.returncode == 0, result.stderr
    assert "already at the promoted value" in result.stderr and result.stdout == ""  # every human line: stderr
    assert "no pull request: nothing to change" in result.stderr
    assert world.remote_branch(BRANCH) is None and world.git("branch", "--list", BRANCH) == ""
    assert github.pulls == [] and all(e["request"]["method"] == "GET" for e in github.exchanges)


def test_a_dry_run_touches_nothing_local_or_remote(world: GitWorld, github: ForgeServer) -> None:
    before = snapshot(world)
    result = promote(world, github, "6.3.0", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert snapshot(world) == before
    assert all(e["request"]["method"] == "GET" for e in github.exchanges) and github.pulls == []
    out = result.stdout
    assert f"would open a pull request on github acme/deploy: branch {BRANCH} into main, 1 file(s)" in out
    assert "commit message:\n    promote: flux-system/podinfo after dev=6.3.0" in out
    assert f"    Krm-Merge-Branch: {BRANCH}" in out


def test_a_dry_run_names_the_pull_request_it_would_update(world: GitWorld, github: ForgeServer) -> None:
    assert promote(world, github, "6.3.0").returncode == 0
    world.git("checkout", "--", ".")
    before = snapshot(world)
    result = promote(world, github, "6.3.1", "--dry-run")
    assert result.returncode == 0 and snapshot(world) == before
    assert "would update a pull request #1 (https://forge.example/acme/deploy/pull/1)" in result.stdout


def test_uncommitted_changes_to_the_same_file_are_an_error_and_nothing_is_written(
        world: GitWorld, github: ForgeServer) -> None:
    release = world.package / "release.yaml"
    release.write_text(release.read_text() + "# my local note\n")
    before = release.read_text()
    result = promote(world, github, "6.3.0")
    assert result.returncode == 1
    assert "error: work tree: uncommitted changes to files the command would change: apps/podinfo/release.yaml" \
        in result.stderr
    assert release.read_text() == before and world.remote_branch(BRANCH) is None and github.exchanges == []


def test_not_a_git_work_tree_is_an_error_naming_the_step(tmp_path: Path, world: GitWorld, github: ForgeServer) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "release.yaml").write_text((world.package / "release.yaml").read_text())
    (loose / "pipeline.yaml").write_text((world.package / "pipeline.yaml").read_text())
    result = krm_merge(world, "promote", str(loose), "--pipeline", "flux-system/podinfo", "--environment", "prod",
                       "--value", "6.3.0", "--pull-request", "--forge", "github", "--forge-api", github.api,
                       env={"GITHUB_TOKEN": TOKEN, "GIT_CEILING_DIRECTORIES": str(tmp_path)}, cwd=loose)
    assert result.returncode == 1
    assert f"error: work tree: {loose} is not inside a git work tree" in result.stderr
    assert "6.2.0" in (loose / "release.yaml").read_text()


def test_heads_copy_differing_from_the_bases_is_refused(world: GitWorld, github: ForgeServer) -> None:
    world.push_from_elsewhere("main")  # main moves on; this checkout is behind but the file is the same: fine
    assert promote(world, github, "6.3.0").returncode == 0
    other = GitWorld(world.tmp / "second")  # a checkout whose release.yaml is not main's
    server = ForgeServer("github", TOKEN, branch_exists=lambda b: other.remote_branch(b) is not None)
    try:
        clone = other.tmp / "ahead"
        other.git("clone", "--quiet", other.remote.as_uri(), str(clone), cwd=other.tmp)
        (clone / "apps/podinfo/release.yaml").write_text(
            (clone / "apps/podinfo/release.yaml").read_text().replace("chart: podinfo", "chart: podinfo # moved"))
        other.git("commit", "--quiet", "-am", "a change of main", cwd=clone)
        other.git("push", "--quiet", "origin", "main", cwd=clone)
        result = promote(other, server, "6.3.0")
        assert result.returncode == 1
        assert "error: base: apps/podinfo/release.yaml differ between HEAD and origin/main" in result.stderr
        assert "6.2.0 #" in (other.package / "release.yaml").read_text() and server.pulls == []
    finally:
        server.close()


def test_a_push_the_remote_rejects_keeps_the_commit_and_a_rerun_continues(world: GitWorld, github: ForgeServer) -> None:
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'branch protection: pushes need review' >&2\nexit 1\n")
    hook.chmod(0o755)
    result = promote(world, github, "6.3.0")
    assert result.returncode == 1
    assert "error: push: origin rejected the push of krm-merge/promote/flux-system-podinfo-prod" in result.stderr
    local = world.git("rev-parse", f"refs/heads/{BRANCH}")
    assert f"the commit {local[:12]} stays on the local branch {BRANCH}; rerun the command to continue" in result.stderr
    assert world.remote_branch(BRANCH) is None and github.pulls == []
    assert "6.2.0 #" in (world.package / "release.yaml").read_text()  # the change is on the branch only
    hook.unlink()
    rerun = promote(world, github, "6.3.0")  # the same change: the kept commit is published
    assert rerun.returncode == 0, rerun.stderr
    assert world.remote_branch(BRANCH) == local and len(github.pulls) == 1


def test_a_push_that_lands_first_wins_the_lease_and_ours_is_planned_above_it_over_http(
        http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, server = http_world
    forge = ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    try:
        assert promote(world, forge, "6.3.0").returncode == 0
        world.git("checkout", "--", ".")
        theirs: list[str] = []
        # another run pushes krm-merge's own kind of commit to the branch just before our push is answered
        server.before_push = lambda: theirs.append(_push_krm_merge_commit(world, BRANCH))
        result = promote(world, forge, "6.3.1")
        assert result.returncode == 0, result.stderr
        assert f"after planning again on 1 newer head(s) of {BRANCH} (2 push(es) of 20)" in result.stderr
        assert world.remote_git("rev-parse", f"{BRANCH}~1") == theirs[0]  # their push stands, ours above it
        assert world.remote_file(BRANCH, "concurrent.txt") == "another run" and "6.3.1 #" in _release(world, BRANCH)
        assert world.git("rev-parse", f"refs/heads/{BRANCH}") == world.remote_branch(BRANCH)
        assert "6.3.1" in forge.pulls[0]["title"] and "another run" in forge.pulls[0]["title"]  # both commits
    finally:
        forge.close()


def test_a_push_between_the_advertisement_and_the_update_is_refused_by_the_remote_and_planned_again(
        world: GitWorld, github: ForgeServer) -> None:
    """The lease is checked again where the ref is updated: a push landing in git's pre-push window loses nothing,
    and ours is planned again above it."""
    assert promote(world, github, "6.3.0").returncode == 0
    world.git("checkout", "--", ".")
    marker = world.tmp / "theirs"
    hook = world.work / ".git" / "hooks" / "pre-push"
    # git runs pre-push after it compared the lease with the remote's advertisement: another run's push lands now
    # (once: the push planned again goes through)
    hook.write_text(f"""#!/bin/sh
test -e {marker} && exit 0
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
d=$(mktemp -d)
git clone -q --branch {BRANCH} {world.remote.as_uri()} "$d/c" && cd "$d/c" && echo x > concurrent.txt &&
git add -A && git commit -qm "another run

Krm-Merge-Branch: {BRANCH}" && git push -q origin HEAD:refs/heads/{BRANCH} && git rev-parse HEAD > {marker}
""")
    hook.chmod(0o755)
    result = promote(world, github, "6.3.1")
    assert result.returncode == 0, result.stderr
    assert f"after planning again on 1 newer head(s) of {BRANCH} (2 push(es) of 20)" in result.stderr
    assert world.remote_git("rev-parse", f"{BRANCH}~1") == marker.read_text().strip()
    assert world.remote_file(BRANCH, "concurrent.txt") == "x" and "6.3.1 #" in _release(world, BRANCH)


def _push_krm_merge_commit(world: GitWorld, branch: str) -> str:
    """Another krm-merge run's commit on ``branch`` (its trailer names it), pushed from a clone of its own."""
    clone = world.tmp / f"concurrent-{len(list(world.tmp.glob('concurrent-*')))}"
    world.git("clone", "--quiet", "--branch", branch, world.remote.as_uri(), str(clone), cwd=world.tmp)
    (clone / "concurrent.txt").write_text("another run\n")
    world.git("add", "-A", cwd=clone)
    world.git("commit", "--quiet", "-m", f"another run\n\nKrm-Merge-Branch: {branch}", cwd=clone)
    world.git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
    return world.git("rev-parse", "HEAD", cwd=clone)


def test_a_branch_ending_in_someone_elses_commit_is_never_overwritten(world: GitWorld, github: ForgeServer) -> None:
    assert promote(world, github, "6.3.0").returncode == 0
    theirs = world.push_from_elsewhere(BRANCH)  # a human adds a commit to the pull request
    world.git("checkout", "--", ".")
    result = promote(world, github, "6.3.1")
    assert result.returncode == 1
    assert f"error: branch: origin's branch {BRANCH} ends in a commit krm-merge did not make" in result.stderr
    assert world.remote_branch(BRANCH) == theirs and "6.2.0 #" in (world.package / "release.yaml").read_text()


def test_authentication_refused_by_the_git_server(http_world: tuple[GitWorld, GitHttpServer]) -> None:
    world, server = http_world
    forge = ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    try:
        # reading needs credentials git does not have (and may not prompt for): refused before any write
        server.credentials = "bot:git-password-1"
        result = promote(world, forge, "6.3.0")
        assert result.returncode == 1
        assert "error: remote: authentication refused by origin" in result.stderr
        assert "6.2.0 #" in (world.package / "release.yaml").read_text()
        # reading is open, pushing is not, and the push URL carries a wrong password: refused at the push
        server.credentials, server.push_credentials = None, "bot:git-password-1"
        url = server.url("acme/deploy.git")
        world.git("remote", "set-url", "--push", "origin", url.replace("//", "//bot:wrong-password-2@"))
        result = promote(world, forge, "6.3.0")
        assert result.returncode == 1
        assert "error: push: authentication refused by origin" in result.stderr
        local = world.git("rev-parse", f"refs/heads/{BRANCH}")
        assert f"the commit {local[:12]} stays on the local branch {BRANCH}" in result.stderr
        assert "wrong-password-2" not in result.stderr + result.stdout
        # the right password in the push URL: the rerun continues from the kept commit
        world.git("remote", "set-url", "--push", "origin", url.replace("//", "//bot:git-password-1@"))
        rerun = promote(world, forge, "6.3.0")
        assert rerun.returncode == 0, rerun.stderr
        assert world.remote_branch(BRANCH) == local and "git-password-1" not in rerun.stderr + rerun.stdout
    finally:
        forge.close()


def test_authentication_refused_by_the_forge_before_anything_is_written(world: GitWorld, github: ForgeServer) -> None:
    result = promote(world, github, "6.3.0", token="ghp_revoked000000")
    assert result.returncode == 1
    assert "error: pull request: finding the open pull request: authentication refused by github (HTTP 401)" \
        in result.stderr
    assert "6.2.0 #" in (world.package / "release.yaml").read_text() and world.remote_branch(BRANCH) is None


@pytest.mark.parametrize("failure", ["401", "unreachable", "429 for an hour"])
def test_the_forge_failing_after_the_push_keeps_the_commit_and_a_rerun_opens_the_pull_request(
        world: GitWorld, github: ForgeServer, failure: str) -> None:
    if failure == "401":
        github.fail(401, method="post", body={"message": "Bad credentials"})
        expected = "authentication refused by github (HTTP 401)"
    elif failure == "unreachable":
        github.fail(0, method="post")
        expected = "github at 127.0.0.1:"
    else:
        github.fail(429, method="post", headers={"Retry-After": "3600"})
        expected = "asks to wait 3600 s"
    result = promote(world, github, "6.3.0")
    assert result.returncode == 1
    assert "error: pull request: opening the pull request: " in result.stderr and expected in result.stderr
    pushed = world.remote_branch(BRANCH)
    assert pushed is not None and world.git("rev-parse", f"refs/heads/{BRANCH}") == pushed
    assert f"the commit {pushed[:12]} stays on the local branch {BRANCH}" in result.stderr
    if failure == "429 for an hour":  # the forge's wait binds every run of the token until it is over
        sent = len(github.exchanges)
        early = promote(world, github, "6.3.0")
        assert early.returncode == 1 and len(github.exchanges) == sent
        assert "its request budget (the wait it asked for (Retry-After)) needs 60 min more" in early.stderr
        shutil.rmtree(world.tmp / "cache" / "krm-merge" / "forge")  # the hour is over: the pacing state forgotten
    rerun = promote(world, github, "6.3.0")
    assert rerun.returncode == 0, rerun.stderr
    assert "pull request #1 opened" in rerun.stderr and world.remote_branch(BRANCH) == pushed


def test_a_429_with_retry_after_is_waited_for_and_the_run_succeeds(world: GitWorld, github: ForgeServer) -> None:
    github.fail(429, method="post", headers={"Retry-After": "1"}, body={"message": "secondary rate limit"})
    result = promote(world, github, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert [e["response"]["status"] for e in github.exchanges if e["request"]["method"] == "POST"][:2] == [429, 201]


def test_the_token_appears_in_no_output_result_report_commit_or_request(world: GitWorld, github: ForgeServer) -> None:
    # the forge echoes the token in an error (first attempt); requests carry it only in the auth header
    github.fail(500, method="post", body={"message": f"internal error for {TOKEN}"})
    results, report = world.tmp / "results.yaml", world.tmp / "report.json"
    failed = promote(world, github, "6.3.0", "--results", str(results), "--report", "json", str(report))
    rerun = promote(world, github, "6.3.0", "--results", str(results), "--report", "json", str(report))
    assert failed.returncode == 1 and rerun.returncode == 0
    data = json.loads(report.read_text())
    assert data["pullRequest"]["url"] == "https://forge.example/acme/deploy/pull/1"
    everything = "".join([failed.stdout, failed.stderr, rerun.stdout, rerun.stderr, results.read_text(),
                          report.read_text(), world.git("log", "--all", "--format=%B"),
                          world.remote_git("log", "--all", "--format=%B"), json.dumps(github.pulls),
                          json.dumps([e["request"] for e in github.exchanges])])
    assert "internal error for ***" in failed.stderr
    assert TOKEN not in everything
    for path in world.work.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_signed_commits_follow_the_users_git_configuration(world: GitWorld, github: ForgeServer) -> None:
    key = world.tmp / "signing-key"
    os.system(f"ssh-keygen -q -t ed25519 -N '' -C bot -f {key}")  # noqa: S605 (a test fixture)
    allowed = world.tmp / "allowed"
    allowed.write_text(f"bot@example.com {(world.tmp / 'signing-key.pub').read_text()}")
    for setting in (("gpg.format", "ssh"), ("user.signingKey", f"{key}.pub"), ("commit.gpgSign", "true"),
                    ("gpg.ssh.allowedSignersFile", str(allowed))):
        world.git("config", "--global", *setting)
    assert promote(world, github, "6.3.0").returncode == 0
    verified = world.git("verify-commit", "--raw", BRANCH, check=False)
    assert world.git("log", "-1", "--format=%G?", BRANCH) == "G", verified


def test_a_commit_that_cannot_be_made_stops_the_run_before_any_file_is_written(
        world: GitWorld, github: ForgeServer) -> None:
    """The commit is made from the planned bytes before the write: a signing key that fails leaves the files alone."""
    for setting in (("gpg.format", "ssh"), ("user.signingKey", str(world.tmp / "no-such-key.pub")),
                    ("commit.gpgSign", "true")):
        world.git("config", "--global", *setting)
    result = promote(world, github, "6.3.0")
    assert result.returncode == 1
    assert "error: commit: writing the commit (git's author and signing configuration apply)" in result.stderr
    assert "6.2.0 #" in (world.package / "release.yaml").read_text()
    assert world.git("branch", "--list", BRANCH) == "" and world.remote_branch(BRANCH) is None
    assert github.pulls == []
