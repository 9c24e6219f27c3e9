"""A fleet's pull requests keep under the forge's limits, through the real command line.

Twelve consumers of a real upstream (the first fetched with the real ``kpt pkg get``, the others copies of it)
are moved from v1 to v2 with a pull request each (``--pull-request-per package``, a label each: two
content-creating requests a package) against a stand-in GitHub that enforces GitHub's documented limits scaled
down ten times (8 content-creating requests per 6 s, 50 per 360 s, 500 requests per 360 s) and records every
request it refuses; the runs are given the same scaled budget (``KRM_MERGE_FORGE_BUDGET``).  One run, and two
shard runs started at once on their own checkouts (each over its budget alone: they must share it), never get
a 403 or 429 and report the requests they sent and the time they waited.  A pacing state file that is corrupt
or too large is ignored with a warning.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from krm_merge.change.forges.pacing import BUDGET_ENV, MAX_STATE
from tests.change.conftest import TOKEN as PROMOTE_TOKEN
from tests.change.forge_server import GITHUB_LIMITS, ForgeServer, budget, scaled
from tests.change.gitworld import GitWorld
from tests.change.helpers import krm_merge, promote
from tests.outcomes.schema_check import errors, load_schema

TOKEN = "ghp_PacedFleetT0kenThatMustNeverBeSeen"
LIMITS = scaled(GITHUB_LIMITS, 10)
ENV = {"GITHUB_TOKEN": TOKEN, BUDGET_ENV: budget(LIMITS)}
SITES = [f"site-{n:02d}" for n in range(12)]  # six in each of two shards
HANG_GUARD = 600  # seconds; a run waits about 20 s for its budget


def _consumers(world: GitWorld) -> str:
    """The upstream at v1 and v2, twelve consumers at v1 committed and pushed; the ``--upstream`` spec."""
    up = world.tagged_upstream()
    spec = f"file://{up}.git/pkg"
    clusters = world.work / "clusters"
    clusters.mkdir()
    kpt = subprocess.run(["kpt", "pkg", "get", f"{spec}@v1", f"clusters/{SITES[0]}"], cwd=world.work, env=world.env,
                         capture_output=True, text=True, timeout=120)
    assert kpt.returncode == 0, kpt.stderr
    for site in SITES[1:]:
        shutil.copytree(clusters / SITES[0], clusters / site)
        kptfile = clusters / site / "Kptfile"
        kptfile.write_text(kptfile.read_text().replace(f"name: {SITES[0]}", f"name: {site}"))
    world.git("add", "-A")
    world.git("commit", "--quiet", "-m", "twelve consumers at v1")
    world.git("push", "--quiet", "origin", "main")
    return spec


def _args(forge: ForgeServer, spec: str, *extra: str) -> list[str]:
    return ["update", "clusters", "--upstream", spec, "--ref", "v2", "--pull-request", "--pull-request-per", "package",
            "--label", "fleet", "--forge", "github", "--forge-api", forge.api, "--forge-repo", "acme/deploy", *extra]


def _limited(world: GitWorld) -> ForgeServer:
    return ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None, limits=LIMITS)


def _asked(report: Path) -> dict[str, Any]:
    """The report's one forgeRequests message (the report checked against the published schema)."""
    document = json.loads(report.read_text())
    assert errors(document, load_schema()) == []
    [asked] = [m for m in document["messages"] if m["kind"] == "forgeRequests"]
    return dict(asked)


def _refused(forge: ForgeServer) -> list[dict[str, Any]]:
    return [e for e in forge.exchanges if e["response"].get("status") in (403, 429)]


def test_a_fleets_pull_requests_never_trip_githubs_limits_and_the_report_says_what_they_cost(
        world: GitWorld) -> None:
    spec = _consumers(world)
    forge = _limited(world)
    report = world.tmp / "fleet.json"
    try:
        result = krm_merge(world, *_args(forge, spec, "--report", "json", str(report)), env=ENV, timeout=HANG_GUARD)
        assert result.returncode == 0, result.stderr
        assert forge.tripped == [] and _refused(forge) == []
        assert len(forge.pulls) == 12 and all(p["labels"] == ["fleet"] for p in forge.pulls)
        writes = [e for e in forge.exchanges if e["request"]["method"] != "GET"]
        assert len(writes) == 24  # three windows of 8: the run waited for two of them
        asked = _asked(report)
        host = forge.api.split("//")[1].split("/")[0]
        assert (asked["forge"], asked["host"], asked["requests"]) == ("github", host, len(forge.exchanges))
        assert asked["waited"] > 0
        assert result.stderr.splitlines()[-1] == (
            "krm-merge update: 12 package(s): 12 updated, 0 current, 0 conflicted, 0 failed; "
            f"{asked['requests']} forge request(s), {asked['waited']:.1f} s waited for the forge's request budget")
        assert TOKEN not in result.stdout + result.stderr + report.read_text()
    finally:
        forge.close()


def test_two_shards_started_at_once_share_the_budget(world: GitWorld) -> None:
    """Each shard alone sends 12 content-creating requests (over the 8 of a window): paced apart, together they
    would send 16 in a window; through the shared state they never trip the limit."""
    spec = _consumers(world)
    forge = _limited(world)
    clones = [world.tmp / f"shard-{i}" for i in range(2)]
    for clone in clones:
        world.git("clone", "--quiet", world.remote.as_uri(), str(clone), cwd=world.tmp)
    reports = [world.tmp / f"shard-{i}.json" for i in range(2)]
    try:
        runs = [subprocess.Popen([sys.executable, "-m", "krm_merge", *_args(forge, spec, "--shard", f"{i}/2",
                                                                           "--report", "json", str(reports[i]))],
                                 cwd=clones[i], env={**world.env, **ENV}, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for i in range(2)]
        outputs = [run.communicate(timeout=HANG_GUARD) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        assert forge.tripped == [] and _refused(forge) == []
        assert len(forge.pulls) == 12
        asked = [_asked(report) for report in reports]
        assert sum(a["requests"] for a in asked) == len(forge.exchanges)
        assert all(a["waited"] > 0 for a in asked)
        for _, stderr in outputs:
            assert "6 package(s): 6 updated, 0 current, 0 conflicted, 0 failed; " in stderr.splitlines()[-1]
    finally:
        forge.close()


@pytest.mark.parametrize("content, why", [
    (b"\x1b[31m{]", "is not JSON"),
    (b"[" * (MAX_STATE // 2) + b"]" * (MAX_STATE // 2) + b"\n", f"is larger than {MAX_STATE:,} bytes"),
])
def test_a_corrupt_or_huge_pacing_state_is_ignored_with_a_warning(
        world: GitWorld, github: ForgeServer, content: bytes, why: str) -> None:
    assert promote(world, github, "6.3.0").returncode == 0
    [state] = list((world.tmp / "cache" / "krm-merge" / "forge").glob("*.json"))
    state.write_bytes(content)
    result = promote(world, github, "6.4.0")
    assert result.returncode == 0, result.stderr
    host = github.api.split("//")[1].split("/")[0]
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warnings == [f"krm-merge promote: warning: pull request: the forges' pacing state {state} {why}: ignored, "
                        f"the budget of {host} starts afresh"]
    assert "Traceback" not in result.stderr and PROMOTE_TOKEN not in result.stdout + result.stderr
    assert json.loads(state.read_text())["version"] == 1 and github.pulls[0]["title"].startswith("promote: ")
