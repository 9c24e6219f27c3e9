"""The pieces without a network: settings, branch names, tokens and Secrets, redaction, remote URLs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from krm_merge.change.errors import ChangeError
from krm_merge.change.forges import default_api, detect
from krm_merge.change.redact import Redactor
from krm_merge.change.remote import RepoLocation, parse_location
from krm_merge.change.secrets import find_token, read_secret
from krm_merge.change.settings import (
    SecretRef, Settings, SettingsError, pipeline_pull_request, render_branch, settings_from_config)
from krm_merge.promote.pipeline import pull_request_promotion


@pytest.mark.parametrize("template, values, expected", [
    ("krm-merge/promote/{promotion}", {"promotion": "flux-system-podinfo-prod"}, "krm-merge/promote/flux-system-podinfo-prod"),
    ("promote/{environment}/{value}", {"environment": "prod", "value": "6.3.0+build.1"}, "promote/prod/6.3.0-build.1"),
    ("x/{value}", {"value": "a b~c^d:e?f*g[h\\i..j@{k}"}, "x/a-b-c-d-e-f-g-h-i-j-k"),
    ("x/{value}", {"value": "../../etc"}, "x/etc"),
])
def test_a_branch_template_puts_values_in_safely(template: str, values: dict[str, str], expected: str) -> None:
    assert render_branch(template, values) == expected


def test_an_unknown_placeholder_names_the_known_ones() -> None:
    with pytest.raises(SettingsError) as err:
        render_branch("x/{pipline}", {"pipeline": "p", "environment": "e"})
    assert str(err.value) == "--branch: unknown placeholder {pipline}; known here: {pipeline}, {environment}"


def test_the_config_block_is_checked_key_by_key() -> None:
    settings = settings_from_config({"branch": "b/{environment}", "forge": "forgejo", "labels": ["a", "b"],
                                     "reviewers": "x, y", "forgeApi": "https://git.example/api/v1"}, "spec.pullRequest")
    assert settings == Settings(branch="b/{environment}", forge="gitea", forge_api="https://git.example/api/v1",
                                labels=("a", "b"), reviewers=("x", "y"))
    with pytest.raises(SettingsError) as err:
        settings_from_config({"lables": ["a"]}, "spec.pullRequest")
    assert err.value.field == "spec.pullRequest.lables" and "valid keys: branch" in err.value.message
    with pytest.raises(SettingsError) as err:
        settings_from_config({"forge": "sourcehut"}, "spec.pullRequest")
    assert "unknown forge 'sourcehut'" in str(err.value)


PIPELINE = {"apiVersion": "pipelines.weave.works/v1alpha1", "kind": "Pipeline",
            "metadata": {"name": "app", "namespace": "flux-system"},
            "spec": {"environments": [{"name": "dev"}, {"name": "prod"}],
                     "promotion": {"strategy": {"pull-request": {"type": "GitHub", "url": "https://github.com/a/b",
                                                                 "baseBranch": "main"},
                                                "secretRef": {"name": "creds"}}}}}


def test_the_released_pipeline_api_is_read_with_the_secret_beside_the_block() -> None:
    found = pull_request_promotion(PIPELINE, "prod")
    assert found is not None
    settings = pipeline_pull_request(found, "flux-system")
    assert (settings.where, settings.url, settings.base, settings.forge, settings.secret) == (
        "spec.promotion.strategy.pull-request", "https://github.com/a/b", "main", "github",
        SecretRef("flux-system", "creds"))
    assert pull_request_promotion({"spec": {"promotion": {"manual": True}}}, "prod") is None


@pytest.mark.parametrize("secret", [{"name": "Creds"}, {"name": "a/b"}, {"name": "ok", "key": "../x"}, 7])
def test_a_secret_ref_that_is_not_a_kubernetes_name_is_refused(secret: object) -> None:
    block = ("spec.promotion.pull-request", {"url": "u", "secretRef": secret}, "spec.promotion.pull-request.secretRef")
    with pytest.raises(SettingsError) as err:
        pipeline_pull_request(block, "flux-system")
    assert str(err.value).startswith("spec.promotion.pull-request.secretRef")


def test_tokens_come_from_the_secret_then_krm_merges_variable_then_the_forges(tmp_path: Path) -> None:
    env = {"GITLAB_TOKEN": "gl-1", "CI_JOB_TOKEN": "job-2", "KRM_MERGE_FORGE_TOKEN": "generic-3"}
    assert find_token("gitlab", env) == ("generic-3", "KRM_MERGE_FORGE_TOKEN")
    assert find_token("gitlab", {k: v for k, v in env.items() if k != "KRM_MERGE_FORGE_TOKEN"}).source == "GITLAB_TOKEN"
    assert find_token("gitlab", {"CI_JOB_TOKEN": "job-2"}) == ("job-2", "CI_JOB_TOKEN")
    assert find_token("github", {"GITLAB_TOKEN": "gl-1"}) is None
    secret = tmp_path / "flux-system" / "creds"
    secret.mkdir(parents=True)
    (secret / "token").write_text("from-secret-4\n")
    ref = SecretRef("flux-system", "creds")
    assert find_token("github", env, ref, str(tmp_path)).value == "from-secret-4"
    assert find_token("github", {**env, "KRM_MERGE_SECRETS_DIR": str(tmp_path)}, ref).value == "from-secret-4"
    assert find_token("github", {"GITHUB_TOKEN": "gh-5"}, ref).value == "gh-5"  # no secrets folder: the variable


def test_a_token_file_must_hold_one_line_of_bounded_size(tmp_path: Path) -> None:
    folder = tmp_path / "ns" / "s"
    folder.mkdir(parents=True)
    (folder / "token").write_text("a\nb\n")
    with pytest.raises(ChangeError, match="must hold one token on one line"):
        read_secret(str(tmp_path), SecretRef("ns", "s"))
    (folder / "token").write_text("x" * 20_000)
    with pytest.raises(ChangeError, match="not a token"):
        read_secret(str(tmp_path), SecretRef("ns", "s"))
    os.unlink(folder / "token")
    with pytest.raises(ChangeError, match="cannot read the token of Secret ns/s"):
        read_secret(str(tmp_path), SecretRef("ns", "s"))


@pytest.mark.parametrize("data, kind", [
    (b"Zq9\x00en", "a control character (NUL)"), (b"Zq9\x1b]52;c;eA==\x07en", "a control character (ESC)"),
    ("Zq9\u00e9n".encode(), "a non-ASCII character"), (b"Zq9\xffen", "a non-ASCII character"),
    (b"Zq9\x7fen", "a control character (DEL)"), (b"Zq9\x1cen\n", "a control character (U+001C)"),
    ("\u00a0Zq9".encode(), "a non-ASCII character"),
])
def test_a_token_file_holding_a_control_or_non_ascii_character_is_refused_without_showing_it(
        tmp_path: Path, data: bytes, kind: str) -> None:
    folder = tmp_path / "ns" / "s"
    folder.mkdir(parents=True)
    (folder / "token").write_bytes(data)
    with pytest.raises(ChangeError) as err:
        read_secret(str(tmp_path), SecretRef("ns", "s"))
    assert err.value.message == (f"pull request: {folder / 'token'} (Secret ns/s (key token)) must hold one token on "
                                 f"one line of printable ASCII: it holds {kind}; nothing was sent, written or pushed")
    assert "Zq9" not in err.value.message


@pytest.mark.parametrize("value, kind", [("a\nb", "a control character (a newline)"), ("a\rb", "a control character "
                                         "(a carriage return)"), ("a\tb", "a control character (a tab)"),
                                         ("ab\u00e9", "a non-ASCII character"), ("\u2003ab", "a non-ASCII character")])
def test_a_token_variable_holding_a_control_or_non_ascii_character_is_refused(value: str, kind: str) -> None:
    with pytest.raises(ChangeError) as err:
        find_token("gitlab", {"GITLAB_TOKEN": value, "CI_JOB_TOKEN": "job-2"})
    assert err.value.message == ("pull request: GITLAB_TOKEN must hold one token on one line of printable ASCII: it "
                                 f"holds {kind}; nothing was sent, written or pushed")
    assert find_token("gitlab", {"GITLAB_TOKEN": " gl-1 \n"}) == ("gl-1", "GITLAB_TOKEN")  # blanks around: dropped


def test_redaction_masks_the_token_its_encodings_and_url_credentials() -> None:
    redactor = Redactor(["bot:s3cret-pass", "tok/en+42"])
    text = ("fatal: https://bot:s3cret-pass@git.example/x.git; Authorization: Basic Ym90OnMzY3JldC1wYXNz; "
            "?t=tok%2Fen%2B42; s3cret-pass; tok/en+42; ssh://git@host/x (a user alone is masked too)")
    masked = redactor.redact(text)
    for secret in ("s3cret-pass", "Ym90OnMzY3JldC1wYXNz", "tok%2Fen%2B42", "tok/en+42"):
        assert secret not in masked
    assert masked.startswith("fatal: https://***@git.example/x.git") and "ssh://***@host/x" in masked


@pytest.mark.parametrize("url, expected", [
    ("https://github.com/acme/deploy.git", RepoLocation("github.com", "acme/deploy")),
    ("https://oauth2:tok@gitlab.example.com:8443/group/sub/project.git", RepoLocation("gitlab.example.com", "group/sub/project")),
    ("git@github.com:acme/deploy.git", RepoLocation("github.com", "acme/deploy")),
    ("ssh://git@bitbucket.org/ws/repo", RepoLocation("bitbucket.org", "ws/repo")),
    ("file:///srv/git/acme/deploy.git", RepoLocation("", "srv/git/acme/deploy")),
    ("/srv/git/deploy", RepoLocation("", "srv/git/deploy")),
])
def test_remote_urls_give_host_and_repository(url: str, expected: RepoLocation) -> None:
    assert parse_location(url) == expected


@pytest.mark.parametrize("host, forge, api", [
    ("github.com", "github", "https://api.github.com"), ("github.example.com", "github", "https://github.example.com/api/v3"),
    ("gitlab.com", "gitlab", "https://gitlab.com/api/v4"), ("codeberg.org", "gitea", "https://codeberg.org/api/v1"),
    ("bitbucket.org", "bitbucket", "https://api.bitbucket.org/2.0"), ("git.example.com", None, None),
])
def test_the_forge_and_its_api_from_the_host(host: str, forge: str | None, api: str | None) -> None:
    assert detect(RepoLocation(host, "a/b")) == forge
    if forge is not None:
        assert default_api(forge, host) == api
