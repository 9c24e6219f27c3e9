"""Promoting by pipeline: the Pipeline's pull-request promotion (url, base branch, type, secretRef) end to end.

The token is read from a secrets folder laid out as Kubernetes mounts a Secret
(``<dir>/<namespace>/<name>/<key>``, the key a symbolic link into ``..data``, as the kubelet
makes it); the forge comes from the Pipeline's ``type``, the base from its ``baseBranch``
(or the RFC's ``branch``); its ``url`` must be the remote's repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import PIPELINE, GitWorld
from tests.git_http import GitHttpServer
from tests.change.helpers import BRANCH, PROMOTE, krm_merge

SECRET_TOKEN = "ghp_FromTheSecretVolume0099"


def _mount_secret(root: Path, namespace: str, name: str, data: dict[str, str]) -> Path:
    """A Secret as a volume: the keys are links to ``..data/<key>``, ``..data`` a link to a timestamped folder."""
    folder = root / namespace / name
    stamped = folder / "..2024_06_01_12_00_00.000000001"
    stamped.mkdir(parents=True)
    for key, value in data.items():
        (stamped / key).write_text(value + "\n")
    os.symlink(stamped.name, folder / "..data")
    for key in data:
        os.symlink(f"..data/{key}", folder / key)
    return root


def _pipeline_with(promotion: str) -> str:
    return PIPELINE.replace("  appRef:", promotion + "  appRef:")


RELEASED_API = """\
  promotion:
    strategy:
      pull-request:
        type: github
        url: {url}
        baseBranch: release
      secretRef:
        name: promotion-credentials
"""
RFC = """\
  promotion:
    pull-request:
      url: {url}
      branch: release
      secretRef: promotion-credentials
"""


@pytest.fixture()
def route(tmp_path: Path) -> tuple[GitWorld, GitHttpServer, ForgeServer, Path]:
    world = GitWorld(tmp_path)
    server = GitHttpServer(tmp_path / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    world.git("push", "--quiet", "origin", "main:release")
    forge = ForgeServer("github", SECRET_TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    secrets = _mount_secret(tmp_path / "secrets", "flux-system", "promotion-credentials",
                            {"token": SECRET_TOKEN, "username": "bot", "password": "git-pass"})
    yield world, server, forge, secrets
    forge.close()
    server.close()


def _commit_pipeline(world: GitWorld, text: str) -> None:
    (world.package / "pipeline.yaml").write_text(text)
    world.git("commit", "--quiet", "-am", "promotion by pull request")
    world.git("push", "--quiet", "origin", "HEAD:main", "HEAD:release")


@pytest.mark.parametrize("shape, forge_option", [(RELEASED_API, []), (RFC, ["--forge", "github"])],
                         ids=["strategy.pull-request", "rfc pull-request"])
def test_the_pipelines_pull_request_promotion_opens_the_pull_request(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path], shape: str, forge_option: list[str]) -> None:
    """The released API names the forge (``type``); the RFC's shape does not, and 127.0.0.1 says nothing of it."""
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(shape.format(url=server.url("acme/deploy"))))
    result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                       "--secrets-dir", str(secrets), "--forge-api", forge.api, *forge_option)  # no token variable
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/pull/1"
    [pull] = forge.pulls
    assert (pull["head"], pull["base"]) == (BRANCH, "release")  # the base from the Pipeline
    assert world.remote_git("rev-parse", f"{BRANCH}^") == world.remote_branch("release")
    assert {e["request"]["auth"] for e in forge.exchanges} == {"authorization: Bearer <token>"}
    assert forge.violations == [] and SECRET_TOKEN not in result.stdout + result.stderr


def _event(tmp: Path, namespace: str = "dev") -> str:
    """A repository_dispatch body (the githubdispatch provider's): podinfo upgraded to 6.3.0 in ``namespace``."""
    event = {"involvedObject": {"kind": "HelmRelease", "namespace": namespace, "name": "podinfo",
                                "apiVersion": "helm.toolkit.fluxcd.io/v2"},
             "severity": "info", "reason": "UpgradeSucceeded", "message": "Helm upgrade succeeded",
             "metadata": {"revision": "6.3.0"}, "reportingController": "helm-controller"}
    path = tmp / "event.json"
    path.write_text(json.dumps({"event_type": "HelmRelease/podinfo.dev", "client_payload": event}))
    return str(path)


def test_an_event_opens_the_pull_request_the_pipeline_asks_for(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    """No --pull-request: the Pipeline's pull-request promotion is what opens it (pipeline-controller's strategy)."""
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(RELEASED_API.format(url=server.url("acme/deploy"))))
    result = krm_merge(world, "promote", str(world.package), "--pipeline", "flux-system/podinfo",
                       "--event", _event(world.tmp), "--secrets-dir", str(secrets), "--forge-api", forge.api)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/pull/1"
    [pull] = forge.pulls
    assert (pull["head"], pull["base"]) == (BRANCH, "release")
    assert "6.3.0" in world.remote_git("show", f"{BRANCH}:apps/podinfo/release.yaml")
    assert forge.violations == [] and SECRET_TOKEN not in result.stdout + result.stderr


def test_an_event_without_a_pull_request_promotion_writes_in_place(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    world, server, forge, secrets = route
    result = krm_merge(world, "promote", str(world.package), "--pipeline", "flux-system/podinfo",
                       "--event", _event(world.tmp), "--forge-api", forge.api)
    assert result.returncode == 0, result.stderr
    assert forge.pulls == [] and forge.exchanges == [] and result.stdout == ""
    assert "6.3.0" in (world.package / "release.yaml").read_text()
    assert world.remote_branch(BRANCH) is None


def test_an_event_with_nothing_to_promote_opens_nothing(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(RELEASED_API.format(url=server.url("acme/deploy"))))
    result = krm_merge(world, "promote", str(world.package), "--pipeline", "flux-system/podinfo",
                       "--event", _event(world.tmp, "prod"), "--secrets-dir", str(secrets), "--forge-api", forge.api)
    assert result.returncode == 0, result.stderr
    assert "nothing to promote: prod is the last environment of Pipeline flux-system/podinfo" in result.stderr
    assert forge.exchanges == [] and world.remote_branch(BRANCH) is None
    assert world.git("status", "--porcelain") == ""


def test_the_secrets_folder_may_come_from_the_environment(route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(RELEASED_API.format(url=server.url("acme/deploy"))))
    result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                       "--forge-api", forge.api, env={"KRM_MERGE_SECRETS_DIR": str(secrets)})
    assert result.returncode == 0, result.stderr
    assert len(forge.pulls) == 1


def test_an_environments_own_promotion_wins(route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    world, server, forge, secrets = route
    text = _pipeline_with(RELEASED_API.format(url=server.url("acme/deploy")).replace("release", "nowhere"))
    text = text.replace("  - name: prod\n", "  - name: prod\n    promotion:\n      strategy:\n        pull-request:\n"
                        f"          type: github\n          url: {server.url('acme/deploy')}\n"
                        "          baseBranch: release\n        secretRef:\n          name: promotion-credentials\n")
    _commit_pipeline(world, text)
    result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                       "--secrets-dir", str(secrets), "--forge-api", forge.api)
    assert result.returncode == 0, result.stderr
    assert forge.pulls[0]["base"] == "release"


def test_a_pipeline_url_naming_another_repository_is_refused_and_nothing_is_written(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(RELEASED_API.format(url="https://github.com/attacker/collect-tokens")))
    result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                       "--secrets-dir", str(secrets), "--forge-api", forge.api)
    assert result.returncode == 1
    assert ("error: pull request: spec.promotion.strategy.pull-request.url names "
            "https://github.com/attacker/collect-tokens, not origin's repository") in result.stderr
    assert forge.exchanges == [] and "6.2.0 #" in (world.package / "release.yaml").read_text()


@pytest.mark.parametrize("secret_ref, expected", [
    ("name: missing-secret", "cannot read the token of Secret flux-system/missing-secret (key token)"),
    ("name: ../../etc", "spec.promotion.strategy.secretRef.name: must be a Secret's name"),
])
def test_a_secret_that_cannot_be_read_is_an_error_before_anything_is_written(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path], secret_ref: str, expected: str) -> None:
    world, server, forge, secrets = route
    shape = RELEASED_API.format(url=server.url("acme/deploy")).replace("name: promotion-credentials", secret_ref)
    _commit_pipeline(world, _pipeline_with(shape))
    result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                       "--secrets-dir", str(secrets), "--forge-api", forge.api)
    assert result.returncode == 1 and expected in result.stderr, result.stderr
    assert "6.2.0 #" in (world.package / "release.yaml").read_text() and forge.exchanges == []


def test_a_secret_holding_a_control_or_non_ascii_character_is_refused_before_anything(
        route: tuple[GitWorld, GitHttpServer, ForgeServer, Path]) -> None:
    """A NUL, an ESC, a non-ASCII letter in the mounted Secret's token: refused by name, never printed."""
    world, server, forge, secrets = route
    _commit_pipeline(world, _pipeline_with(RELEASED_API.format(url=server.url("acme/deploy"))))
    token_file = secrets / "flux-system" / "promotion-credentials" / "token"
    for data in (b"ghp_Bad0\x00tail", b"ghp_Bad1\x1b]52;c;eA==\x07", "ghp_Bad2\u00e9".encode()):
        token_file.resolve().write_bytes(data + b"\n")
        result = krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                           "--secrets-dir", str(secrets), "--forge-api", forge.api)
        output = result.stdout + result.stderr
        assert result.returncode == 1, output
        assert ("error: pull request: " + str(token_file) + " (Secret flux-system/promotion-credentials (key token)) "
                "must hold one token on one line of printable ASCII: it holds ") in result.stderr, output
        assert "ghp_Bad" not in output and "Traceback" not in output and "\x1b" not in output
        assert "6.2.0 #" in (world.package / "release.yaml").read_text() and forge.exchanges == []
        assert world.remote_branch(BRANCH) is None
