"""Pacing: the forge client keeps under a forge's limits before it reaches them, shared by every client of one
API host and identity through the state file, which is read as untrusted input.

The stand-in forge (``ForgeServer(..., limits=...)``) enforces GitHub's documented limits scaled down ten times
(8 content-creating requests per 6 s, 50 per 360 s, 500 requests per 360 s) and records each request it
refuses in ``tripped``: a client that paces itself is never there.  The client is given the same scaled figures
(``KRM_MERGE_FORGE_BUDGET``).  Waits here are real (about 6 s in the slowest test).  The command-line tests of a
fleet and its shards are tests/change/test_fleet_pacing.py.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from krm_merge.change.errors import ChangeError
from krm_merge.change.forges import Target, http, open_forge
from krm_merge.change.forges.pacing import (BUDGET_ENV, DEFAULT_BUDGETS, MAX_STATE, Rate, Tally, budget_from,
                                            default_budget)
from krm_merge.change.redact import Redactor
from krm_merge.change.secrets import Token
from tests.change.forge_server import GITHUB_LIMITS, ForgeServer, budget, scaled

TOKEN = "ghp_PacingT0kenThatMustNeverBeSeen"
LIMITS = scaled(GITHUB_LIMITS, 10)  # 500 requests per 360 s; 8 content-creating ones per 6 s, 50 per 360 s
HANG_GUARD = 120  # seconds; the slowest test waits about 6 s for its budget


def _forge(server: ForgeServer, state: Path, *, rates: str = budget(LIMITS), run: float = 300,
           tally: Tally | None = None, token: str = TOKEN, **client: Any) -> Any:
    """An adapter of ``server`` whose pacing state is kept in ``state``, its budget ``rates``."""
    limits = http.Limits(60, run, budget_from({BUDGET_ENV: rates}), str(state))
    return open_forge(Target(server.api_kind, server.api, server.repo), Token(token, "GITHUB_TOKEN"),
                      Redactor([token]), limits=limits, tally=tally or Tally(), **client)


@pytest.fixture()
def limited() -> Any:
    server = ForgeServer("github", TOKEN, limits=LIMITS)
    yield server
    server.close()


def _statuses(server: ForgeServer) -> list[int]:
    return [e["response"]["status"] for e in server.exchanges]


def test_the_documented_figures_are_the_defaults() -> None:
    """GitHub's 5,000 an hour and 80 content-creating a minute, 500 an hour; GitLab.com's 2,000 a minute;
    Bitbucket Cloud's 1,000 an hour; Gitea and Forgejo publish none: GitHub's figures."""
    assert default_budget("github") == (Rate(5000, 3600.0), Rate(80, 60.0, True), Rate(500, 3600.0, True))
    assert default_budget("gitlab") == (Rate(2000, 60.0),)
    assert default_budget("bitbucket") == (Rate(1000, 3600.0),)
    assert default_budget("gitea") == DEFAULT_BUDGETS["github"]
    assert [rate.words() for rate in default_budget("github")] == [
        "5000 requests an hour", "80 content-creating requests a minute", "500 content-creating requests an hour"]


@pytest.mark.parametrize("value, rates", [
    ("", None), ("none", ()), ("writes:80/1m, all:5000/1h", (Rate(80, 60.0, True), Rate(5000, 3600.0))),
    ("8/6s,writes:0.5/1m", None), ("7/0.5m", (Rate(7, 30.0),)),
])
def test_the_budget_comes_from_the_environment(value: str, rates: Any) -> None:
    if value == "8/6s,writes:0.5/1m":  # half a request is not one
        with pytest.raises(ChangeError, match=f"{BUDGET_ENV} must be 'none' or up to 16 comma-separated rates"):
            budget_from({BUDGET_ENV: value})
        return
    assert budget_from({BUDGET_ENV: value}) == rates


@pytest.mark.parametrize("value", ["fast", "80/min", "0/1m", "5/0s", "5/25h", "reads:5/1m", "5/1m,", "٣/1m", "5/1m\n6/1m"])
def test_a_budget_that_is_not_one_is_refused(value: str) -> None:
    with pytest.raises(ChangeError) as err:
        budget_from({BUDGET_ENV: value})
    assert err.value.step == "pull request" and BUDGET_ENV in err.value.message and "\n" not in err.value.message


def test_a_paced_client_never_trips_githubs_limits(limited: ForgeServer, tmp_path: Path) -> None:
    """Twelve pull requests opened at once: 8 go, the rest wait for the window; the forge never refuses one."""
    tally = Tally()
    forge = _forge(limited, tmp_path / "state", tally=tally)
    start = time.monotonic()
    for n in range(12):
        forge.create(f"b{n}", "main", "t", "x")
    assert limited.tripped == [] and set(_statuses(limited)) == {201} and len(limited.pulls) == 12
    [(requests, waited)] = tally.used.values()
    assert requests == 12 and waited >= 3  # the 9th went once the first had been out of the window for 6 s
    assert time.monotonic() - start < HANG_GUARD


def test_the_budget_is_shared_by_every_client_of_the_host_and_identity(limited: ForgeServer, tmp_path: Path) -> None:
    """A second client (another process would be the same: they meet in the state file) waits for the first's."""
    first, second = Tally(), Tally()
    for n in range(8):
        _forge(limited, tmp_path / "state", tally=first).create(f"a{n}", "main", "t", "x")
    _forge(limited, tmp_path / "state", tally=second).create("b", "main", "t", "x")
    assert limited.tripped == [] and len(limited.pulls) == 9
    assert list(first.used.values())[0][1] == 0 and list(second.used.values())[0][1] > 0  # the second waited
    # another identity (token) on the same host has its own budget: it does not wait
    other = ForgeServer("github", "ghp_AnotherIdentity0000", limits=LIMITS)
    try:
        third = Tally()
        for n in range(8):
            _forge(other, tmp_path / "state", tally=third, token="ghp_AnotherIdentity0000").create(f"c{n}", "main",
                                                                                                 "t", "x")
        assert other.tripped == [] and list(third.used.values())[0][1] == 0
    finally:
        other.close()


@pytest.mark.parametrize("forge", ["github", "gitlab"])
def test_the_forges_remaining_requests_are_obeyed_before_a_refusal(forge: str, tmp_path: Path) -> None:
    """X-RateLimit-Remaining/-Reset (GitLab: RateLimit-*) say none is left: the next request is not sent; the wait
    until the reset is longer than the run has, so the run ends in an error saying how long the budget needs."""
    server = ForgeServer(forge, TOKEN, limits=(("all", 3, 60.0),))
    try:
        adapter = _forge(server, tmp_path / "state", rates="none", run=10)
        for _ in range(3):
            assert adapter.find_open("b", "main") is None
        with pytest.raises(ChangeError) as err:
            adapter.find_open("b", "main")
        assert server.tripped == [] and len(server.exchanges) == 3
        assert "its request budget (its rate-limit headers: no request left until the reset) needs" in err.value.message
        assert "(KRM_MERGE_FORGE_RUN_TIMEOUT); retry later" in err.value.message
    finally:
        server.close()


def test_a_retry_after_binds_every_client_of_the_identity(limited: ForgeServer, tmp_path: Path) -> None:
    """One client told to wait an hour stops; the next one sends nothing before the hour is over."""
    limited.fail(429, method="post", headers={"Retry-After": "3600"})
    with pytest.raises(ChangeError, match="asks to wait 3600 s"):
        _forge(limited, tmp_path / "state").create("b", "main", "t", "x")
    with pytest.raises(ChangeError) as err:
        _forge(limited, tmp_path / "state").find_open("b", "main")
    assert "its request budget (the wait it asked for (Retry-After)) needs 60 min more" in err.value.message
    assert len(limited.exchanges) == 1


def test_the_state_file_names_the_host_and_a_hash_never_the_token(limited: ForgeServer, tmp_path: Path) -> None:
    _forge(limited, tmp_path / "state").create("b", "main", "t", "x")
    [state] = list((tmp_path / "state").iterdir())  # the lock file is gone with its holder
    host = limited.api.split("//")[1].split("/")[0].replace(":", "_")
    assert state.name.startswith(host + "-") and state.suffix == ".json"
    text = state.read_text()
    assert TOKEN not in state.name + text and "PacingT0ken" not in text
    data = json.loads(text)
    assert data["version"] == 1 and data["pending"] == [] and data["counts"]["writes:8/6s"]


BROKEN: dict[str, tuple[Any, str]] = {
    "not JSON": (b"\x1b]52;c;eA==\x07 not json", "is not JSON"),
    "larger than the bound": (b" " * MAX_STATE + b"{}", f"is larger than {MAX_STATE:,} bytes"),
    "nested too deep": (b"[" * 30_000 + b"]" * 30_000, "is not JSON"),
    "another version": (b'{"version": 2}', "is not a krm-merge pacing state (version 1)"),
    "a count that is not a whole number": (
        json.dumps({"version": 1, "host": "h", "counts": {"writes:8/6s": [[1, 2.5]]}, "pending": [], "block": 0,
                    "remaining": None}).encode(), "[bucket, requests] pairs"),
    "a rate with no window": (
        json.dumps({"version": 1, "host": "h", "counts": {"writes:8/0s": [[1, 1]]}, "pending": [], "block": 0,
                    "remaining": None}).encode(), "a rate named 'writes:8/0s'"),
    "a time that is not one": (
        b'{"version": 1, "host": "h", "counts": {}, "pending": [], "block": NaN, "remaining": null}', "block: a time"),
    "a link": (None, "is not readable as a file (Too many levels of symbolic links)"),
    "a FIFO": ("fifo", "is not a regular file"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_state_file_is_ignored_with_a_warning(limited: ForgeServer, tmp_path: Path, case: str) -> None:
    folder = tmp_path / "state"
    _forge(limited, folder).find_open("b", "main")
    [state] = list(folder.iterdir())
    raw, why = BROKEN[case]
    secret = tmp_path / "secret"
    secret.write_text("not to be read")
    if raw is None:
        state.unlink()
        state.symlink_to(secret)
    elif raw == "fifo":  # a read would wait for a writer for ever
        state.unlink()
        os.mkfifo(state)
    else:
        state.write_bytes(raw)
    tally = Tally()
    assert _forge(limited, folder, tally=tally).find_open("b", "main") is None
    [warning] = tally.warnings
    assert warning.startswith(f"the forges' pacing state {state} ") and why in warning
    assert warning.endswith(": ignored, the budget of " + limited.api.split("//")[1].split("/")[0] + " starts afresh")
    assert "\x1b" not in warning
    assert not state.is_symlink() and json.loads(state.read_text())["version"] == 1  # rewritten whole
    assert secret.read_text() == "not to be read"


def test_times_ahead_of_the_clock_do_not_hold_the_budget(limited: ForgeServer, tmp_path: Path) -> None:
    """A state written by a clock set ahead (or by hand): buckets and waits further ahead than they can be are
    dropped or cut to an hour, not waited for."""
    folder = tmp_path / "state"
    _forge(limited, folder).find_open("b", "main")
    [state] = list(folder.iterdir())
    far = time.time() + 86_400 * 30
    data = json.loads(state.read_text())
    data["counts"] = {"writes:8/6s": [[int(far / 0.1), 1000]], "all:500/360s": [[int(far / 6), 1000]]}
    data["remaining"] = [0, far]
    state.write_text(json.dumps(data))
    tally = Tally()
    with pytest.raises(ChangeError) as err:  # the headers' reset is cut to an hour: more than the run's 10 s
        _forge(limited, folder, run=10, tally=tally).create("b", "main", "t", "x")
    assert "no request left until the reset) needs 60 min more" in err.value.message
    data["remaining"] = None
    state.write_text(json.dumps(data))
    _forge(limited, folder, run=10, tally=tally).create("b", "main", "t", "x")  # the far buckets: dropped
    assert tally.warnings == [] and limited.tripped == [] and len(limited.pulls) == 1


def test_a_folder_that_cannot_hold_the_state_is_a_warning_and_the_run_paces_alone(
        limited: ForgeServer, tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.write_text("a file where the folder should be")  # as a read-only or full disk would, for root too
    tally = Tally()
    forge = _forge(limited, folder, tally=tally)
    for n in range(9):
        forge.create(f"b{n}", "main", "t", "x")
    assert limited.tripped == [] and list(tally.used.values())[0][1] > 0  # paced by the process alone
    [warning] = tally.warnings
    assert warning.startswith(f"the forges' pacing state cannot be kept in {folder} (File exists): this run paces")
