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
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.change.errors import ChangeError
from krm_merge.change.forges import Target, http, open_forge
from krm_merge.change.forges.base import MAX_BODY, TRUNCATED, PullRequest
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
    """The adapter of ``server``; its waits (``sleep``) take no time but move its wall clock (``wall``), which
    the pacing state goes by, so a wait the forge asked for is over once it is waited."""
    kind = "gitea" if server.forge == "forgejo" else server.forge
    waited = client.pop("sleep", lambda s: None)
    wall = client.pop("wall", None) or FakeWall()
    return open_forge(Target(kind, server.api, server.repo), Token(token, source), Redactor([token]),
                      sleep=lambda seconds: (wall.advance(seconds), waited(seconds)), wall=wall, **client)


class FakeWall:
    """A wall clock that moves only when a wait is waited (in whole seconds from a whole number: exact sums).

    Each starts two days after the last one made: what earlier adapters of a test left in its pacing state
    (one file per server and token) no longer counts, as if they had run days before.
    """

    latest = 1_000_000.0

    def __init__(self) -> None:
        FakeWall.latest += 2 * 86_400
        self.now = FakeWall.latest

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        FakeWall.latest = max(FakeWall.latest, self.now)


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


# --- a hostile or broken forge (in process; tests/change/test_hostile_forge.py runs the command line) ----------


def _raw(body: bytes, status: bytes = b"200 OK", headers: bytes = b"") -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n" + headers
            + b"\r\n" + body)


@pytest.mark.parametrize("raw, expected", [
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
     "its body ended early or its chunks are malformed"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[1, 2]", "it ended after 6 bytes of its body, 94 more announced"),
    (b"HTTP/2.0 200 OK\r\n\r\n[]", "cannot be read: UnknownProtocol: HTTP/2.0"),
    (_raw(b"\xff\xfe[]"), "(HTTP 200) is not JSON (not UTF-8)"),
    (_raw(b"[" * 65 + b"]" * 65), "(HTTP 200) nests deeper than 64 levels"),
    (_raw(b"]["), "(HTTP 200) is not JSON"),
    (_raw(b"[" * 100_000), "(HTTP 200) nests deeper than 64 levels"),
], ids=["bad chunk size", "content-length not met", "HTTP/2 status line", "not UTF-8", "65 levels",
        "brackets that do not pair", "100,000 openers"])
def test_a_broken_answer_is_one_error_naming_what_is_wrong(github: ForgeServer, raw: bytes, expected: str) -> None:
    github.fail_raw(raw, method="get")
    with pytest.raises(ChangeError) as err:
        _forge(github).find_open("b", "main")
    assert expected in err.value.message
    assert err.value.message.startswith("pull request: finding the open pull request: github")


def test_json_nested_to_the_bound_is_read_and_brackets_in_strings_do_not_count(github: ForgeServer) -> None:
    nested = "[" * 61 + "[]" + "]" * 61  # 62 levels, in a pull request (2 more): 64
    strings = json.dumps([{"head": {"ref": "b"}, "base": {"ref": "main"}, "number": 3, "html_url": "u",
                           "title": "[[[[\\\"{{{" * 40, "body": nested * 2, "extra": json.loads(nested)}])
    github.fail_raw(_raw(strings.encode()), method="get")
    pr = _forge(github).find_open("b", "main")
    assert pr is not None and (pr.number, pr.body) == (3, nested * 2)
    github.fail_raw(_raw(strings.replace(nested, "[" + nested + "]").encode()), method="get")  # 65
    with pytest.raises(ChangeError, match="nests deeper than 64 levels"):
        _forge(github).find_open("b", "main")


def test_an_error_body_nested_100000_deep_is_left_out_of_the_message(github: ForgeServer) -> None:
    github.fail_raw(_raw(b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b"401 Unauthorized"))
    with pytest.raises(ChangeError) as err:
        _forge(github).find_open("b", "main")
    assert err.value.message.startswith("pull request: finding the open pull request: authentication refused by "
                                        "github (HTTP 401); check the token and its scopes: {")
    assert len(err.value.message) < 600


def test_an_answer_larger_than_the_bound_is_refused(github: ForgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_RESPONSE", 100_000)
    github.fail_raw(_raw(b"[" + b"1," * 60_000 + b"1]"), method="get")
    with pytest.raises(ChangeError) as err:
        _forge(github).find_open("b", "main")
    assert err.value.message == ("pull request: finding the open pull request: github's answer cannot be read: "
                                 "it is larger than 100,000 bytes")


PULL = {"head": {"ref": "b"}, "base": {"ref": "main"}, "html_url": "https://forge.example/x/pull/1"}


@pytest.mark.parametrize("number, shown", [
    ('"12abc"', '"12abc"'), ('"12"', '"12"'), ("1e999", "Infinity"), ("true", "true"), ("12.0", "12.0"),
    ("0", "0"), ("-3", "-3"), ("9007199254740992", "9007199254740992"), ("null", "null"), ('{"a": 1}', '{"a": 1}'),
    ('"\\u001b]52;c;eA==\\u0007"', '"\\u001b]52;c;eA==\\u0007"'),
])
def test_a_pull_request_number_must_be_a_whole_number_in_bounds(github: ForgeServer, number: str, shown: str) -> None:
    body = json.dumps([PULL])[:-2] + f', "number": {number}}}]'
    github.fail_raw(_raw(body.encode()), method="get")
    with pytest.raises(ChangeError) as err:
        _forge(github).find_open("b", "main")
    assert err.value.message == (f"pull request: finding the open pull request: github's answer has number {shown}, "
                                 "not a pull request number (a whole number from 1 to 9007199254740991)")


def test_retry_after_is_ascii_seconds_or_an_http_date() -> None:
    """Unicode digits (``str.isdigit()`` and ``float()`` take '١٢'; ``int()`` refuses '²') are not seconds."""
    for value in ("²", "١٢", "9" * 11, "1e3", "-1", "12 s", "Wed, 31 Feb 2024 10:00:00 GMT",
                  "Thu, 01 Jan 1970 00:00:00 GMT\r\nX: y", "Thu, 01 Jan 99999 00:00:00 GMT"):
        assert http._retry_after_seconds(value) is None, value
    assert http._retry_after_seconds(" 7 ") == 7.0
    assert http._retry_after_seconds("Thu, 01 Jan 1970 00:00:00 GMT") == 0.0


def test_the_runs_budget_counts_waits_and_refuses_one_it_cannot_afford(github: ForgeServer) -> None:
    waits: list[float] = []
    github.fail(429, method="post", headers={"Retry-After": "7"}, times=2)
    forge = _forge(github, sleep=waits.append, limits=http.Limits(request=60, run=10))
    with pytest.raises(ChangeError) as err:
        forge.create("b", "main", "t", "x")
    assert waits == [7.0]  # the second 7 s wait would pass the 10 s
    assert "asks to wait 7 s, more than this run's 10 s for the forge have left (KRM_MERGE_FORGE_RUN_TIMEOUT)" \
        in err.value.message


def test_a_spent_budget_sends_no_more_requests(github: ForgeServer) -> None:
    now = [0.0]
    forge = _forge(github, clock=lambda: now[0], limits=http.Limits(request=60, run=5))
    assert forge.find_open("b", "main") is None
    now[0] = 1_000.0  # a clock that moves only between requests: the budget is spent by the time taken
    forge.http.left = 0.0
    with pytest.raises(ChangeError) as err:
        forge.find_open("b", "main")
    assert "the requests to github took this run's 5 s (KRM_MERGE_FORGE_RUN_TIMEOUT)" in err.value.message
    assert len(github.exchanges) == 1


@pytest.mark.parametrize("value", ["", "30", " 2.5 "])
def test_the_deadlines_come_from_the_environment(value: str) -> None:
    limits = http.limits_from({"KRM_MERGE_FORGE_REQUEST_TIMEOUT": value, "KRM_MERGE_FORGE_RUN_TIMEOUT": value})
    expected = float(value) if value.strip() else None
    assert limits[:2] == (expected or http.REQUEST_TIMEOUT, expected or http.RUN_TIMEOUT)


# Hostile JSON for the adapters: pull-request shapes whose fields hold what a forge should never send there
# (numbers as strings, floats, bools, huge or negative ints, escapes, nesting), and arbitrary values.
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**64, 2**64), st.floats(allow_nan=False),
                     st.text(max_size=8), st.sampled_from(["12abc", "\x1b]52;c;eA==\x07", "{0a1b}", "b", "main", ""]))
_KEYS = st.sampled_from(["number", "iid", "id", "html_url", "web_url", "links", "html", "href", "head", "base", "ref",
                         "title", "body", "description", "summary", "raw", "reviewers", "uuid", "account_id", "values",
                         "next", "message", "source", "destination", "branch", "name"])
_ANY = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5),
                    max_leaves=6)
_PULL = st.fixed_dictionaries({
    "number": _SCALARS, "iid": _SCALARS, "id": _SCALARS, "html_url": _SCALARS, "web_url": _SCALARS,
    "links": st.one_of(_SCALARS, st.fixed_dictionaries({"html": st.fixed_dictionaries({"href": _SCALARS})})),
    "head": st.just({"ref": "b"}), "base": st.just({"ref": "main"}), "source_branch": st.just("b"),
    "target_branch": st.just("main"), "source": st.just({"branch": {"name": "b"}}),
    "destination": st.just({"branch": {"name": "main"}}), "title": _SCALARS, "body": _SCALARS,
    "description": _SCALARS, "summary": _ANY, "reviewers": _ANY})
HOSTILE_JSON = st.one_of(_PULL, st.lists(_PULL, max_size=2),
                         st.fixed_dictionaries({"values": st.lists(_PULL, max_size=2), "next": _ANY}), _ANY)


@pytest.mark.parametrize("forge", ["github", "gitea", "gitlab", "bitbucket"])
def test_any_json_a_forge_answers_is_a_pull_request_or_one_error(forge: str) -> None:
    """Each of the adapter's calls answered with hostile JSON in turn: each ends in a result or a ChangeError."""
    server = ForgeServer(forge, TOKEN)  # one server (its description read once), its failures reset per example
    pr = PullRequest(1, "u", "t", "b")

    @settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(answers=st.lists(HOSTILE_JSON, min_size=1, max_size=4))
    def check(answers: list[Any]) -> None:
        server.failures.clear()
        for answer in answers:
            server.fail(200, body=answer)
        adapter = _forge(server)
        for step in (lambda: adapter.find_open("b", "main"), lambda: adapter.create("b", "main", "t", "x"),
                     lambda: adapter.update(pr, "t", "y"), lambda: adapter.request_reviewers(pr, REVIEWERS[forge])):
            try:
                step()
            except ChangeError as err:
                assert err.step == "pull request" and "\x1b" not in err.message

    try:
        check()
    finally:
        server.close()


@pytest.fixture()
def tls_github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fake GitHub over HTTPS with a self-signed certificate for 127.0.0.1, which the client is made to trust."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client's default context reads it
    server = ForgeServer("github", TOKEN, tls=context)
    yield server
    server.close()


def test_over_https_the_adapter_works_and_a_drip_is_cut_off_at_the_deadline(tls_github: ForgeServer) -> None:
    assert tls_github.api.startswith("https://127.0.0.1:")
    _scenario(tls_github)
    assert tls_github.violations == [] and len(tls_github.pulls) == 1
    answer = _raw(b" " * 10_000 + b"[]")
    tls_github.fail_raw(answer, method="get", drip=0.2, at_once=answer.index(b"\r\n\r\n") + 4)
    start = time.monotonic()
    with pytest.raises(ChangeError) as err:
        _forge(tls_github, limits=http.Limits(request=1.5, run=300)).find_open("b", "main")
    assert "did not answer in full within 1.5 s (KRM_MERGE_FORGE_REQUEST_TIMEOUT)" in err.value.message
    assert time.monotonic() - start < 60  # hang guard: the drip lasts 2,000 s
