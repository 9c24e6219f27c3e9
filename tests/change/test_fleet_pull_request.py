"""``update ROOT... --upstream R --ref REF --pull-request``: a fleet's packages put up for review.

A real upstream at v1 and v2; four consumers fetched with the real ``kpt pkg get``, committed to the
consumers' repository (a bare remote and its clone): two clean (updated), one whose local edit
conflicts with v2, one whose Kptfile is broken (failed).  Per package each written package gets its
own branch and pull request (the single ``update --pull-request``'s branch); per repository one branch
and pull request holds every written package.  A failed package gets none, a conflict follows the
single update (marked: put up with its markers; ``--conflicts fail``: nothing written, nothing put up).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import krm_merge
from tests.update.world import cm

TOKENS = {"github": "ghp_FleetT0kenThatMustNeverBeSeen", "gitlab": "glpat-FleetToken00000000001"}
CLEAN = ("clusters/east", "clusters/west")
FILES = {"east": ("Kptfile", "a.yaml", "b.yaml"), "west": ("Kptfile", "a.yaml", "b.yaml"), "north": (".krm-merge.conflicts", "Kptfile", "a.yaml", "b.yaml")}


def _fleet(world: GitWorld) -> str:
    """The upstream at v1 and v2, the four consumers committed and pushed; the ``--upstream`` spec."""
    up = world.tagged_upstream()
    spec = f"file://{up}.git/pkg"
    (world.work / "clusters").mkdir()
    for name in ("east", "west", "north", "broken"):
        kpt = subprocess.run(["kpt", "pkg", "get", f"{spec}@v1", f"clusters/{name}"], cwd=world.work,
                             env=world.env, capture_output=True, text=True, timeout=120)
        assert kpt.returncode == 0, kpt.stderr
    (world.work / "clusters/north/a.yaml").write_text(cm("a", "mine"))  # conflicts with v2's a
    broken = world.work / "clusters/broken/Kptfile"
    broken.write_text(broken.read_text() + "  : [unclosed\n")  # its repo: line still names the upstream
    world.git("add", "-A")
    world.git("commit", "--quiet", "-m", "four consumers at v1")
    world.git("push", "--quiet", "origin", "main")
    return spec


def _run(world: GitWorld, forge: ForgeServer, spec: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return krm_merge(world, "update", "clusters", "--upstream", spec, "--ref", "v2", "--jobs", "2",
                     "--pull-request", "--forge", forge.api_kind, "--forge-api", forge.api, "--forge-repo",
                     "acme/deploy", *extra,
                     env={f"{forge.api_kind.upper()}_TOKEN": forge.token, "XDG_CACHE_HOME": str(world.tmp / "cache")})


def _statuses(report: Path) -> dict[str, str]:
    return {p["path"]: p["status"] for p in json.loads(report.read_text())["packages"]}


def _pull_requests(report: Path) -> list[dict[str, object]]:
    return [m for m in json.loads(report.read_text())["messages"] if m["kind"] == "pullRequest"]


def test_per_package_each_written_package_gets_its_branch_and_pull_request(world: GitWorld) -> None:
    spec = _fleet(world)
    forge = ForgeServer("github", TOKENS["github"], branch_exists=lambda b: world.remote_branch(b) is not None)
    report = world.tmp / "fleet.json"
    try:
        result = _run(world, forge, spec, "--pull-request-per", "package", "--conflicts", "mark",
                      "--report", "json", str(report))
        assert result.returncode == 1, result.stderr  # the broken package failed
        assert _statuses(report) == {"clusters/broken": "failed", "clusters/east": "updated",
                                     "clusters/north": "conflicted", "clusters/west": "updated"}
        heads = sorted(p["head"] for p in forge.pulls)
        assert heads == ["krm-merge/update/clusters/east", "krm-merge/update/clusters/north",
                         "krm-merge/update/clusters/west"]  # the failed package: none
        for name in ("east", "west", "north"):
            branch = f"krm-merge/update/clusters/{name}"
            assert sorted(world.changed_files(branch)) == sorted(f"clusters/{name}/{f}" for f in FILES[name])
            [pull] = [p for p in forge.pulls if p["head"] == branch]
            assert pull["title"].startswith(f"krm-merge update clusters/{name} to v2: ")  # the single update's words
        assert "krm-merge:conflict" in world.remote_file("krm-merge/update/clusters/north", "clusters/north/a.yaml")
        assert 'a: "2"' in world.remote_file("krm-merge/update/clusters/east", "clusters/east/a.yaml")
        listed = _pull_requests(report)
        assert sorted(p["branch"] for p in listed) == heads and {p["action"] for p in listed} == {"opened"}
        assert sorted(result.stdout.split()) == sorted(p["url"] for p in listed)  # each URL on stdout
        assert forge.violations == [] and TOKENS["github"] not in result.stdout + result.stderr
    finally:
        forge.close()


def test_per_repo_one_pull_request_holds_every_written_package(world: GitWorld) -> None:
    spec = _fleet(world)
    forge = ForgeServer("gitlab", TOKENS["gitlab"], branch_exists=lambda b: world.remote_branch(b) is not None)
    report = world.tmp / "fleet.json"
    try:
        result = _run(world, forge, spec, "--conflicts", "fail", "--report", "json", str(report))
        assert result.returncode == 1, result.stderr
        assert _statuses(report)["clusters/north"] == "conflicted"
        [merge_request] = forge.pulls
        branch = "krm-merge/fleet/upstream/pkg"
        assert merge_request["head"] == branch
        assert merge_request["title"] == f"krm-merge fleet update: {spec} to v2"
        assert "| `clusters/north` | conflicted |" in merge_request["body"]  # the fleet report of the repository
        # the clean packages only: a refused conflict wrote nothing, the failed package nothing
        assert sorted(world.changed_files(branch)) == sorted(f"{p}/{f}" for p in CLEAN for f in ("Kptfile", "a.yaml", "b.yaml"))
        [listed] = _pull_requests(report)
        assert (listed["action"], listed["branch"], listed["url"]) == (
            "opened", branch, "https://forge.example/acme/deploy/-/merge_requests/1")
        assert result.stdout.splitlines()[-1] == listed["url"]
        # again from a clean checkout of main: the same merge request, nothing pushed
        tip = world.remote_branch(branch)
        world.git("checkout", "--", ".")
        again = _run(world, forge, spec, "--conflicts", "fail")
        assert again.returncode == 1, again.stderr
        assert "merge request !1 already up to date" in again.stderr
        assert world.remote_branch(branch) == tip and len(forge.pulls) == 1
        assert forge.violations == [] and TOKENS["gitlab"] not in result.stdout + result.stderr + again.stderr
    finally:
        forge.close()
