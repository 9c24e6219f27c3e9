"""Each forge adapter against a fake forge built from the forge's published description.

One scenario per forge (open a pull request with labels and reviewers, find it, update it)
runs with no request the description refuses, and its exchange equals the one recorded in
``tests/change/exchanges/<forge>.json`` (each recorded request validated against the
description too).  Set ``KRM_MERGE_RECORD=1`` to write the recordings again after a
deliberate change of an adapter.  Then the HTTP client's rules: rate limits retried after the
forge's ``Retry-After`` (bounded), errors worded with the step, the token never in a message,
redirects and foreign pagination links not followed.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from krm_merge.change.errors import ChangeError
from krm_merge.change.forges import Target, open_forge
from krm_merge.change.forges.base import MAX_BODY, TRUNCATED
from krm_merge.change.redact import Redactor
from krm_merge.change.secrets import Token
from tests.change.forge_server import ForgeServer
from tests.change.schema_check import Description

EXCHANGES = Path(__file__).parent / "exchanges"
TOKEN = "tok-Abcdef123456"
BASIC = "release-bot:app-pass-987654"
REVIEWERS = {"github": ("alice", "acme/platform"), "gitea": ("alice", "acme/platform"),
             "forgejo": ("alice",), "gitlab": ("alice", "bob"), "bitbucket": ("{0a1b2c3d-0000-4000-8000-000000000001}",)}


def _forge(server: ForgeServer, token: str = TOKEN, source: str = "KRM_MERGE_FORGE_TOKEN", **client: Any) -> Any:
    kind = "gitea" if server.forge == "forgejo" else server.forge
    return open_forge(Target(kind, server.api, server.repo), Token(token, source), Redactor([token]),
                      sleep=client.pop("sleep", lambda s: None), **client)


def _scenario(server: ForgeServer, token: str = TOKEN, source: str = "KRM_MERGE_FORGE_TOKEN") -> list[str]:
    forge = _forge(server, token, source)
    assert forge.find_open("krm-merge/promote/x", "main") is None
    pr = forge.create("krm-merge/promote/x", "main", "promote: 6.3.0", "| a | b |\n| --- | --- |\n| 1 | 2 |\n")
    forge.add_labels(pr, ("promotion", "prod"))
    forge.request_reviewers(pr, REVIEWERS[server.forge])
    again = forge.find_open("krm-merge/promote/x", "main")
    assert again is not None and again.number == pr.number and again.url == pr.url
    updated = forge.update(again, "promote: 6.3.1", "new body")
    assert (updated.title, updated.body) == ("promote: 6.3.1", "new body")
    return list(forge.notes)


@pytest.mark.parametrize("forge", ["github", "gitea", "forgejo", "gitlab", "bitbucket"])
def test_each_adapter_speaks_its_forges_described_api(forge: str) -> None:
    server = ForgeServer(forge, TOKEN)
    try:
        notes = _scenario(server)
        assert server.violations == []
        [pull] = server.pulls
        assert (pull["title"], pull["body"], pull["head"], pull["base"]) == (
            "promote: 6.3.1", "new body", "krm-merge/promote/x", "main")
        if forge == "bitbucket":
            assert notes == ["Bitbucket Cloud pull requests have no labels; not applied: promotion, prod"]
        else:
            assert pull["labels"] == ["promotion", "prod"] and notes == []
        assert len(pull["reviewers"]) == len(REVIEWERS[forge])
        _compare_with_recording(forge, server)
    finally:
        server.close()


def _compare_with_recording(forge: str, server: ForgeServer) -> None:
    path = EXCHANGES / f"{forge}.json"
    recorded = [{"request": e["request"], "response": {"status": e["response"]["status"]}} for e in server.exchanges]
    if os.environ.get("KRM_MERGE_RECORD"):
        path.write_text(json.dumps({"forge": forge, "description": f"tests/change/openapi/{forge}.json",
                                    "exchanges": server.exchanges}, indent=1) + "\n")
    saved = json.loads(path.read_text())
    assert [{"request": e["request"], "response": {"status": e["response"]["status"]}}
            for e in saved["exchanges"]] == recorded
    assert TOKEN not in path.read_text()


@pytest.mark.parametrize("forge", ["github", "gitea", "forgejo", "gitlab", "bitbucket"])
def test_the_recorded_exchange_validates_against_the_description(forge: str) -> None:
    """Every recorded request body and answer is valid for the vendored description (checked apart from the server)."""
    saved = json.loads((EXCHANGES / f"{forge}.json").read_text())
    server = ForgeServer(forge, TOKEN)  # only for its description and operation matching
    try:
        description = Description(server.doc)
        for exchange in saved["exchanges"]:
            request, response = exchange["request"], exchange["response"]
            found = server.operation_of(request["method"], request["path"])
            assert found is not None, request
            template, op, _ = found
            if "body" in request:
                assert description.errors(request["body"], server.body_schema(template, op)) == [], request
            schema = server.answer_schema(request["method"].lower(), template, op, response["status"])
            assert description.errors(response["body"], schema) == [], request
    finally:
        server.close()


def test_gitlab_uses_job_token_for_a_ci_job_token() -> None:
    server = ForgeServer("gitlab", "tok-private", job_token="job-token-1234")
    try:
        _scenario(server, "job-token-1234", "CI_JOB_TOKEN")
        assert server.violations == []
        assert {e["request"]["auth"] for e in server.exchanges} == {"job-token: <token>"}
    finally:
        server.close()


def test_bitbucket_takes_user_and_app_password_as_basic_auth() -> None:
    server = ForgeServer("bitbucket", BASIC)
    try:
        _scenario(server, BASIC)
        assert server.violations == [] and {e["request"]["auth"] for e in server.exchanges} == {
            "authorization: Basic <token>"}
    finally:
        server.close()


# --- the HTTP client's rules ---------------------------------------------------------------------------


@pytest.fixture()
def github() -> Any:
    server = ForgeServer("github", TOKEN)
    yield server
    server.close()


def test_a_429_is_retried_after_the_forges_retry_after(github: ForgeServer) -> None:
    waits: list[float] = []
    github.fail(429, method="post", headers={"Retry-After": "7"}, body={"message": "slow down"}, times=2)
    pr = _forge(github, sleep=waits.append).create("b", "main", "t", "x")
    assert pr.number == 1 and waits == [7.0, 7.0]
    assert [e["response"]["status"] for e in github.exchanges] == [429, 429, 201]


@pytest.mark.parametrize("headers", [{"Retry-After": "3"}, {"x-ratelimit-remaining": "0", "Retry-After": "3"}])
def test_a_rate_limit_403_is_retried_an_ordinary_403_is_not(github: ForgeServer, headers: dict[str, str]) -> None:
    waits: list[float] = []
    github.fail(403, method="post", headers=headers, body={"message": "API rate limit exceeded"})
    assert _forge(github, sleep=waits.append).create("b", "main", "t", "x").number == 1
    assert waits == [3.0]
    github.fail(403, method="post", body={"message": "Resource not accessible by integration"})
    with pytest.raises(ChangeError) as err:
        _forge(github, sleep=waits.append).create("c", "main", "t", "x")
    assert "authentication refused by github (HTTP 403)" in err.value.message
    assert "Resource not accessible" in err.value.message and waits == [3.0]


def test_a_503_without_retry_after_backs_off_and_gives_up_after_four_attempts(github: ForgeServer) -> None:
    waits: list[float] = []
    github.fail(503, method="post", times=10)
    with pytest.raises(ChangeError) as err:
        _forge(github, sleep=waits.append).create("b", "main", "t", "x")
    assert waits == [1.0, 2.0, 4.0]
    assert err.value.step == "pull request" and "still rate limiting (HTTP 503) after 4 attempts" in err.value.message


def test_a_wait_longer_than_a_minute_is_an_error_saying_how_long(github: ForgeServer) -> None:
    waits: list[float] = []
    github.fail(429, method="post", headers={"Retry-After": "3600"})
    with pytest.raises(ChangeError) as err:
        _forge(github, sleep=waits.append).create("b", "main", "t", "x")
    assert waits == [] and "asks to wait 3600 s (more than 60)" in err.value.message


def test_an_unreachable_forge_is_an_error_naming_the_step_and_host() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    forge = open_forge(Target("github", f"http://127.0.0.1:{port}/api/v3", "acme/deploy"), Token(TOKEN, "X"),
                       Redactor([TOKEN]))
    with pytest.raises(ChangeError) as err:
        forge.find_open("b", "main")
    assert err.value.message.startswith("pull request: finding the open pull request: github at 127.0.0.1:")
    assert "unreachable" in err.value.message


def test_a_dropped_connection_is_an_unreachable_forge(github: ForgeServer) -> None:
    github.fail(0, method="post")
    with pytest.raises(ChangeError) as err:
        _forge(github).create("b", "main", "t", "x")
    assert "unreachable" in err.value.message


def test_the_token_never_appears_in_an_error_even_when_the_forge_echoes_it(github: ForgeServer) -> None:
    echoed = {"message": f"token {TOKEN} is revoked", "documentation_url": f"https://x/?t={TOKEN}"}
    github.fail(401, body=echoed)
    with pytest.raises(ChangeError) as err:
        _forge(github).find_open("b", "main")
    assert TOKEN not in str(err.value) and "token *** is revoked" in err.value.message


def test_a_redirect_is_not_followed_so_the_token_goes_nowhere_else(github: ForgeServer) -> None:
    other = ForgeServer("github", TOKEN)
    try:
        github.fail(301, headers={"Location": other.api + "/repos/acme/deploy/pulls"})
        with pytest.raises(ChangeError) as err:
            _forge(github).find_open("b", "main")
        assert "redirect (HTTP 301), not followed" in err.value.message
        assert other.exchanges == []
    finally:
        other.close()


def test_bitbucket_follows_next_pages_of_its_own_api_only() -> None:
    server = ForgeServer("bitbucket", TOKEN)
    elsewhere = ForgeServer("bitbucket", TOKEN)
    try:
        server.fail(200, method="get", body={"values": [], "next": elsewhere.api + "/repositories/acme/deploy/pullrequests?page=2"})
        assert _forge(server).find_open("b", "main") is None
        assert elsewhere.exchanges == []
        server.fail(200, method="get", body={"values": [], "next": server.api + "/repositories/acme/deploy/pullrequests?state=OPEN&page=2"})
        _forge(server).find_open("b", "main")
        assert server.exchanges[-1]["request"]["path"].endswith("state=OPEN&page=2")
    finally:
        server.close()
        elsewhere.close()


def test_a_description_longer_than_the_forges_limit_is_cut_with_a_note(github: ForgeServer) -> None:
    body = "".join(f"| row {i} | value |\n" for i in range(10_000))
    _forge(github).create("b", "main", "t", body)
    stored = github.pulls[0]["body"]
    assert len(stored) <= MAX_BODY and stored.endswith(TRUNCATED) and body.startswith(stored[:1000])
