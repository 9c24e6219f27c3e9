"""A hostile or broken forge, through the real command line: one clear error, never a traceback or a hang.

Each answer below is sent by the stand-in forge (``ForgeServer.fail_raw`` sends bytes that
need not be HTTP) first to the request made before the push (finding the open pull
request), then, in the same repository, to the one made after it (opening the pull
request).  Every run must end with exit code 1 and one error line naming the step, with
no Python traceback, no terminal control character of the forge's, no byte of the token,
and the package's lock released; before the push nothing is written, after it the error
says the branch was pushed and a rerun continues.  A forge that sends its answer a byte at
a time is cut off at the request's or the run's deadline (``KRM_MERGE_FORGE_REQUEST_TIMEOUT``,
``KRM_MERGE_FORGE_RUN_TIMEOUT``, set short here); the hang guard is the subprocess's
timeout, far above the deadline.  A token holding a control or non-ASCII character is
refused before anything is sent, written or pushed, without being printed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

import pytest

from tests.change.conftest import TOKEN
from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import BRANCH, krm_merge, promote, snapshot
from tests.change.test_update_pull_request import TOKEN as GITLAB_TOKEN
from tests.change.test_update_pull_request import _upstream

HANG_GUARD = 120  # seconds: the drip tests' deadlines are 2 and 4 s; a run that waits for the drip never ends
URL = "https://forge.example/acme/deploy/pull/1"
# C0 controls but tab and newline, DEL, C1: none of the forge's may reach the terminal
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# an OSC 52 sequence: a terminal that obeys it writes the user's clipboard
OSC_52 = b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"


def _http(body: bytes, status: bytes = b"200 OK", headers: bytes = b"") -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n" + headers + b"\r\n" + body)


def _pull_answer(method: str, number: str) -> bytes:
    """A pull request as GitHub lists it (GET: in a list) or opens it (POST: 201), its number as the JSON text given."""
    pull = ('{"number": ' + number + ', "html_url": "' + URL + '", "title": "t", "body": "b", "state": "open", '
            '"head": {"ref": "' + BRANCH + '"}, "base": {"ref": "main"}}')
    return _http(f"[{pull}]".encode() if method == "get" else pull.encode(),
                 b"200 OK" if method == "get" else b"201 Created")


def _deep(method: str) -> bytes:
    return _http(b"[" * 100_000 + b"]" * 100_000, b"200 OK" if method == "get" else b"201 Created")


# name: (the raw answer for a method, what the error line says)
HOSTILE: dict[str, tuple[Callable[[str], bytes], str]] = {
    "a status line holding OSC 52": (
        lambda m: b"HTTP/1.1 " + OSC_52 + b" OK\r\n\r\n",
        "github's answer cannot be read: its status line is 'HTTP/1.1 \\x1b]52;c;"),
    "more than 100 headers": (
        lambda m: _http(b"[]", headers=b"X-Noise: 1\r\n" * 101),
        "github's answer cannot be read: got more than 100 headers"),
    "a 64 KB header": (
        lambda m: _http(b"[]", headers=b"X-Big: " + b"a" * 65_536 + b"\r\n"),
        "github's answer cannot be read: got more than 65536 bytes when reading header line"),
    "a chunked answer cut short": (
        lambda m: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n[[[[",
        "github's answer cannot be read: its body ended early or its chunks are malformed"),
    "JSON nested 100,000 deep": (
        _deep, "nests deeper than 64 levels"),
    "number '12abc'": (
        lambda m: _pull_answer(m, '"12abc"'),
        'github\'s answer has number "12abc", not a pull request number'),
    "number 1e999": (
        lambda m: _pull_answer(m, "1e999"),
        "github's answer has number Infinity, not a pull request number"),
    "number true": (
        lambda m: _pull_answer(m, "true"),
        "github's answer has number true, not a pull request number"),
}


def _clean_failure(result: subprocess.CompletedProcess[str], expected: str, world: GitWorld) -> str:
    """Exit 1 and one error line holding ``expected``; no traceback, control, token; the package's lock released."""
    output = result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert result.returncode == 1, output
    assert len(errors) == 1 and expected in errors[0], output
    assert errors[0].startswith("krm-merge promote: error: pull request: "), output
    assert "Traceback" not in output and not CONTROLS.search(output), output
    assert TOKEN not in output
    assert not (world.package / ".krm-merge.lock").exists()
    return errors[0]


def _written(world: GitWorld) -> dict[str, str]:
    """What a run writes (a fetch of the base aside, which the checks before the write make)."""
    return {k: v for k, v in snapshot(world).items() if k in ("refs", "remote refs", "files", "status", "HEAD")}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_answer_before_or_after_the_push_is_one_clear_error(
        world: GitWorld, github: ForgeServer, case: str) -> None:
    answer, expected = HOSTILE[case]
    before = _written(world)
    github.fail_raw(answer("get"), method="get")  # finding the open pull request, before anything is written
    error = _clean_failure(promote(world, github, "6.3.0"), expected, world)
    assert "finding the open pull request" in error
    assert _written(world) == before and github.pulls == []

    github.fail_raw(answer("post"), method="post")  # opening it, after the push
    error = _clean_failure(promote(world, github, "6.3.0"), expected, world)
    pushed = world.remote_branch(BRANCH)
    assert pushed is not None and "opening the pull request" in error
    assert f"the commit {pushed[:12]} stays on the local branch {BRANCH} and is pushed to origin; rerun" in error
    assert "6.3.0 #" in world.remote_file(BRANCH, "apps/podinfo/release.yaml")
    checkout = ("files", "status", "HEAD")  # the change is on the branch; the checkout stays as it was
    assert {k: v for k, v in _written(world).items() if k in checkout} == {k: before[k] for k in checkout}


def test_rate_limit_headers_that_are_not_ascii_digits_fall_back_to_backing_off(
        world: GitWorld, github: ForgeServer) -> None:
    """``Retry-After: ²`` (``str.isdigit()`` is true, ``int()`` refuses it) is not a wait: 1 s of backing off is."""
    github.fail(429, method="get", headers={"Retry-After": "²"})
    github.fail(403, method="post", headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "²"},
                body={"message": "API rate limit exceeded"})
    result = promote(world, github, "6.3.0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == URL and "Traceback" not in result.stderr
    statuses = [e["response"]["status"] for e in github.exchanges]
    assert statuses[0] == 429 and 403 in statuses and len(github.pulls) == 1


def test_a_forge_dripping_its_status_line_is_cut_off_at_the_request_deadline(
        world: GitWorld, github: ForgeServer) -> None:
    """One byte every 0.25 s: each read is quick, the answer never ends; the request's 2 s end it."""
    github.fail_raw(_http(b"[]" + b" " * 100_000), method="get", drip=0.25, at_once=0)
    result = promote(world, github, "6.3.0", env={"KRM_MERGE_FORGE_REQUEST_TIMEOUT": "2"}, timeout=HANG_GUARD)
    error = _clean_failure(result, "finding the open pull request: github at 127.0.0.1:", world)
    assert "did not answer in full within 2 s (KRM_MERGE_FORGE_REQUEST_TIMEOUT)" in error
    assert world.remote_branch(BRANCH) is None and "6.2.0 #" in (world.package / "release.yaml").read_text()


def test_a_forge_dripping_its_body_after_the_push_is_cut_off_at_the_runs_deadline(
        world: GitWorld, github: ForgeServer) -> None:
    """The status line and headers at once, then the body a byte at a time: the run's 4 s for the forge end it."""
    answer = _http(b" " * 100_000 + b"[]", b"201 Created")
    github.fail_raw(answer, method="post", drip=0.25, at_once=answer.index(b"\r\n\r\n") + 4)
    result = promote(world, github, "6.3.0", env={"KRM_MERGE_FORGE_RUN_TIMEOUT": "4"}, timeout=HANG_GUARD)
    error = _clean_failure(result, "opening the pull request: github at 127.0.0.1:", world)
    assert "left of this run's 4 s for the forge (KRM_MERGE_FORGE_RUN_TIMEOUT)" in error
    assert "is pushed to origin" in error and world.remote_branch(BRANCH) is not None


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf", "1e3", "1_0", "\u0661\u0662"])
def test_a_deadline_that_is_not_a_positive_number_of_seconds_is_refused_before_anything(
        world: GitWorld, github: ForgeServer, value: str) -> None:
    before = snapshot(world)
    result = promote(world, github, "6.3.0", env={"KRM_MERGE_FORGE_RUN_TIMEOUT": value})
    assert result.returncode == 1
    assert f"error: pull request: KRM_MERGE_FORGE_RUN_TIMEOUT must be a number of seconds above 0, got {value!r}" \
        in result.stderr
    assert snapshot(world) == before and github.exchanges == []


BAD_TOKENS = {"a newline": "ghp_Bad0\nInjected: header", "a carriage return": "ghp_Bad1\rX",
              "a non-ASCII character": "ghp_Bad2é", "ESC": "ghp_Bad3\x1b]52;c;eA==\x07", "DEL": "ghp_Bad4\x7f"}


def test_a_token_with_a_control_or_non_ascii_character_is_refused_before_anything(
        world: GitWorld, github: ForgeServer) -> None:
    before = snapshot(world)
    for kind, token in BAD_TOKENS.items():
        result = promote(world, github, "6.3.0", token=token)
        output = result.stdout + result.stderr
        assert result.returncode == 1, output
        assert ("error: pull request: GITHUB_TOKEN must hold one token on one line of printable ASCII: it holds "
                f"{kind if kind == 'a non-ASCII character' else 'a control character'}") in result.stderr, output
        assert "ghp_Bad" not in output and "Traceback" not in output and not CONTROLS.search(output)
        assert snapshot(world) == before and github.exchanges == []


def test_an_update_whose_forge_answers_garbage_ends_in_one_error_and_releases_the_lock(world: GitWorld) -> None:
    """``update --pull-request`` against a GitLab whose answers are not HTTP, before and after the push."""
    _upstream(world)
    forge = ForgeServer("gitlab", GITLAB_TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    env = {"GITLAB_TOKEN": GITLAB_TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}
    args = ["update", "apps/pkg@v2", "--pull-request", "--forge", "gitlab", "--forge-api", forge.api,
            "--forge-repo", "acme/deploy"]
    lock = world.work / "apps/pkg/.krm-merge.lock"
    try:
        for method, step in (("get", "finding the open merge request"), ("post", "opening the merge request")):
            forge.fail_raw(b"HTTP/1.1 200 OK\r\n" + b"X-Noise: 1\r\n" * 101 + b"\r\n", method=method)
            result = krm_merge(world, *args, env=env)
            output = result.stdout + result.stderr
            errors = [line for line in result.stderr.splitlines() if "error:" in line]
            assert result.returncode == 1 and len(errors) == 1, output
            assert f"error: pull request: {step}: gitlab's answer cannot be read: got more than 100 headers" \
                in errors[0], output
            assert "Traceback" not in output and GITLAB_TOKEN not in output and not lock.exists()
        assert world.remote_branch("krm-merge/update/apps/pkg") is not None and "is pushed to origin" in errors[0]
    finally:
        forge.close()

