"""The fake forges refuse what their published descriptions refuse (so a passing adapter test means something)."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.change.forge_server import ForgeServer

FORGES = ["github", "gitea", "forgejo", "gitlab", "bitbucket"]
GOOD_AUTH = {"github": {"Authorization": "Bearer tok-1234"}, "gitea": {"Authorization": "token tok-1234"},
             "forgejo": {"Authorization": "token tok-1234"}, "gitlab": {"PRIVATE-TOKEN": "tok-1234"},
             "bitbucket": {"Authorization": "Bearer tok-1234"}}
CREATE = {
    "github": ("POST", "/repos/acme/deploy/pulls", {"title": "t", "head": "b", "base": "main", "body": "x"}),
    "gitea": ("POST", "/repos/acme/deploy/pulls", {"title": "t", "head": "b", "base": "main", "body": "x"}),
    "forgejo": ("POST", "/repos/acme/deploy/pulls", {"title": "t", "head": "b", "base": "main", "body": "x"}),
    "gitlab": ("POST", "/projects/acme%2Fdeploy/merge_requests",
               {"title": "t", "source_branch": "b", "target_branch": "main", "description": "x"}),
    "bitbucket": ("POST", "/repositories/acme/deploy/pullrequests",
                  {"type": "pullrequest", "title": "t", "source": {"branch": {"name": "b"}},
                   "destination": {"branch": {"name": "main"}}, "description": "x"}),
}


def _call(server: ForgeServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
          ) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.api + path, data=data, method=method, headers={
        **(headers if headers is not None else GOOD_AUTH[server.forge]),
        **({"Content-Type": "application/json"} if data is not None else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.fixture(params=FORGES)
def server(request: pytest.FixtureRequest) -> Any:
    server = ForgeServer(request.param, "tok-1234")
    yield server
    server.close()


def test_a_described_request_is_answered_from_the_described_schema(server: ForgeServer) -> None:
    method, path, body = CREATE[server.forge]
    status, answer = _call(server, method, path, body)
    assert status == 201 and server.violations == []
    assert isinstance(answer, dict) and len(answer) >= 5  # the schema's required fields filled in


@pytest.mark.parametrize("case", ["unknown path", "wrong method", "wrong type", "unknown property",
                                  "unknown query parameter", "missing required"])
def test_a_request_the_description_refuses_is_rejected(server: ForgeServer, case: str) -> None:
    method, path, body = CREATE[server.forge]
    body = json.loads(json.dumps(body))
    if case == "unknown path":
        path += "/nonsense"
    elif case == "wrong method":
        method = "DELETE"
    elif case == "wrong type":
        body["title"] = 42
    elif case == "unknown property":
        body["titel"] = "typo"
    elif case == "unknown query parameter":
        path += "?frobnicate=1"
    elif case == "missing required":
        if server.forge == "github":
            body.pop("head")
        elif server.forge == "gitlab":
            body.pop("source_branch")
        elif server.forge == "bitbucket":
            body.pop("type")
        else:  # Gitea declares no required field for a new pull request; a list item of the wrong type instead
            body["labels"] = ["not-an-id"]
    status, answer = _call(server, method, path, body)
    assert status == 400, answer
    assert len(server.violations) == 1 and "description" in answer["message"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Basic dG9rLTEyMzQ="}, {"X-Token": "tok-1234"}])
def test_a_request_without_the_documented_auth_header_is_rejected(server: ForgeServer, headers: dict[str, str]) -> None:
    if server.forge == "bitbucket" and headers.get("Authorization", "").startswith("Basic"):
        headers = {"Authorization": "token tok-1234"}  # Basic is documented for Bitbucket
    method, path, body = CREATE[server.forge]
    status, _ = _call(server, method, path, body, headers=headers)
    assert status == 400 and "auth header" in server.violations[0]


def test_the_documented_header_with_another_token_is_refused_as_the_forge_would(server: ForgeServer) -> None:
    method, path, body = CREATE[server.forge]
    wrong = {k: v.replace("tok-1234", "other-9999") for k, v in GOOD_AUTH[server.forge].items()}
    status, _ = _call(server, method, path, body, headers=wrong)
    assert status == 401 and server.violations == []
    assert server.pulls == []


def test_gitlab_takes_a_ci_job_token_in_job_token() -> None:
    server = ForgeServer("gitlab", "tok-1234", job_token="job-5678")
    try:
        method, path, body = CREATE["gitlab"]
        assert _call(server, method, path, body, headers={"JOB-TOKEN": "job-5678"})[0] == 201
    finally:
        server.close()


def test_one_open_pull_request_per_head_and_base(server: ForgeServer) -> None:
    method, path, body = CREATE[server.forge]
    assert _call(server, method, path, body)[0] == 201
    status, answer = _call(server, method, path, body)
    assert status == 422 and "already exists" in json.dumps(answer)


def test_a_raw_answer_is_sent_as_given_then_the_connection_closes() -> None:
    """The hostile answers of test_hostile_forge.py are the bytes the client reads: the stand-in adds nothing."""
    server = ForgeServer("github", "tok-1234")
    try:
        server.fail_raw(b"NOT HTTP\r\n", method="get")
        with socket.create_connection(("127.0.0.1", server.httpd.server_address[1]), timeout=10) as sock:
            sock.sendall(b"GET /api/v3/repos/acme/deploy/pulls HTTP/1.1\r\nHost: x\r\n\r\n")
            received = b""
            while chunk := sock.recv(4096):
                received += chunk
        assert received == b"NOT HTTP\r\n"
        assert server.exchanges[-1]["response"] == {"raw": 10, "drip": 0.0}
        assert _call(server, *CREATE["github"])[0] == 201  # once: the next request is the operation's
    finally:
        server.close()
