"""``krm-merge update ROOT... --upstream REPO[/DIRECTORY] --ref REF`` (issue 36): a fleet of real kpt packages.

Consumers fetched with the real ``kpt pkg get`` at different versions of one
upstream, each edited locally, in one run: one behind with no conflict, one
whose local edit conflicts with upstream's, one already at the ref, one with a
broken Kptfile, one nested deeper, beside packages of another directory and
another repository that must not be touched.  Each package must come out
exactly as a single ``krm-merge update PATH@REF`` leaves it, byte for byte,
with the same report data; the upstream is fetched once and each version
extracted once, whatever the number of packages.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import require_binary

from .world import Fleet, configmap, deployment, report_of, tree

pytestmark = pytest.mark.e2e

SELECTED = ["mono/clusters/apps/nested", "mono/clusters/broken", "mono/clusters/east", "mono/clusters/north",
            "mono/clusters/south", "mono/clusters/west"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The fleet as kpt leaves it, built once (kpt pkg get is slow); each test works on a copy."""
    require_binary("git")
    require_binary("kpt")
    fleet = Fleet(tmp_path_factory.mktemp("fleet"))
    fleet.consumer("clusters/east", "v1", edits={"deploy.yaml": deployment("web:1.0", replicas=3)})
    fleet.consumer("clusters/west", "v2", edits={"local.yaml": configmap("mine", "local-only")})
    fleet.consumer("clusters/north", "v1", edits={"settings.yaml": configmap("north")})  # upstream changes it too
    fleet.consumer("clusters/south", "v3")  # already there
    broken = fleet.consumer("clusters/broken", "v1")
    (broken / "Kptfile").write_text((broken / "Kptfile").read_text() + "pipeline: [\n")
    fleet.consumer("clusters/apps/nested", "v2")
    fleet.consumer("clusters/other", "v1", directory="other")  # another package of the same repository
    fleet.consumer("clusters/elsewhere", "v1", repo=fleet.up2)  # another repository
    (fleet.mono / "docs").mkdir()
    (fleet.mono / "docs" / "README.md").write_text("not a package\n")
    return fleet


@pytest.fixture
def fleet(built: Fleet, tmp_path: Path) -> Fleet:
    """A fresh copy of the built fleet (its repositories are shared, read-only)."""
    copy = Fleet.__new__(Fleet)
    copy.__dict__.update(built.__dict__)
    copy.tmp = tmp_path
    copy.mono = tmp_path / "mono"
    copy.env = {**built.env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    import shutil

    shutil.copytree(built.mono, copy.mono, symlinks=True)
    return copy


def single_runs(fleet: Fleet, *options: str, ref: str = "v3") -> tuple[Path, dict[str, tuple[int, str, dict | None]]]:
    """Each selected package updated alone (``krm-merge update PATH@REF``) in a copy: (the copy, path -> exit code,
    stderr, report data)."""
    where = fleet.copy("single")
    found = {}
    for rel in SELECTED:
        out = where / (rel.replace("/", "_") + ".json")
        proc = fleet.krm_merge(["update", f"{rel}@{ref}", *options, "--report", "json", str(out)], cwd=where)
        found[rel] = (proc.returncode, proc.stderr, report_of(out) if out.exists() else None)
    return where, found


def test_one_run_moves_every_consumer_as_single_updates_would(fleet: Fleet) -> None:
    before = tree(fleet.mono)
    single_dir, single = single_runs(fleet, "--conflicts", "mark")
    proc = fleet.fleet("--conflicts", "mark", "--report", "json", "report.json")
    assert proc.returncode == 1, proc.stderr  # a package failed (and one conflicted)
    report = report_of(fleet.tmp / "report.json")
    entries = {p["path"]: p for p in report["packages"]}
    assert sorted(entries) == SELECTED
    assert {path: p["status"] for path, p in entries.items()} == {
        "mono/clusters/apps/nested": "updated", "mono/clusters/broken": "failed", "mono/clusters/east": "updated",
        "mono/clusters/north": "conflicted", "mono/clusters/south": "current", "mono/clusters/west": "updated"}
    assert report["totals"] == {"packages": 6, "updated": 3, "current": 1, "conflicted": 1, "failed": 1}
    assert report["exitCode"] == 1 and report["selected"] == 6 and report["shards"] == {"count": 1, "reported": [0]}
    # byte for byte what single runs leave, package by package; nothing else under the root changed
    assert tree(fleet.mono) == tree(single_dir / "mono")
    after = tree(fleet.mono)
    untouched = [rel for rel in before if not any(rel.startswith(p.removeprefix("mono/") + "/") for p in SELECTED)]
    assert untouched and all(after[rel] == before[rel] for rel in untouched)
    for path, (code, stderr, data) in single.items():
        entry = entries[path]
        assert entry["exitCode"] == code, path
        assert entry.get("update") == data, path  # the single update's own report data
        if entry["status"] == "failed":
            assert f"krm-merge update: error: {entry['error']}\n" in stderr
    assert entries["mono/clusters/east"]["from"] == {"ref": "v1", "commit": fleet.tags["v1"]}
    assert entries["mono/clusters/east"]["to"] == {"ref": "v3", "commit": fleet.tags["v3"]}
    north = [o for o in entries["mono/clusters/north"]["update"]["outcomes"] if o["kind"] == "conflict"]
    assert len(north) == 1 and "settings.yaml" in north[0]["message"] and entries["mono/clusters/north"]["conflicts"] == 1
    lines = proc.stderr.splitlines()
    assert "krm-merge update: mono/clusters/south: current to v3" in "\n".join(lines)
    assert lines[-1] == "krm-merge update: 6 package(s): 3 updated, 1 current, 1 conflicted, 1 failed"
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_the_upstream_is_fetched_once_and_each_version_extracted_once(fleet: Fleet, tmp_path: Path) -> None:
    log = tmp_path / "git.log"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nexec {require_binary('git')} \"$@\"\n")
    shim.chmod(0o755)
    env = {**fleet.env, "PATH": f"{shim.parent}{os.pathsep}{fleet.env['PATH']}"}
    proc = fleet.fleet("--conflicts", "mark", "--jobs", "3", env=env)
    assert proc.returncode == 1, proc.stderr
    calls = log.read_text().splitlines()
    assert sum(" fetch " in c for c in calls) == 1, calls  # the whole fleet: one fetch of the repository
    assert sum(c.startswith("ls-remote") for c in calls) == 1, calls
    # v1, v2 (origins) and v3 (the new version, south's origin too): three trees for five packages, each read
    # out of git's objects once (one `cat-file --batch-command` reader per tree; no `git archive` any more)
    assert sum(c.endswith(" cat-file --batch-command") for c in calls) == 3, calls
    assert not any(" archive " in c for c in calls), calls


def test_dry_run_writes_nothing_and_shows_each_package_s_diff(fleet: Fleet) -> None:
    before = tree(fleet.mono)
    proc = fleet.fleet("--dry-run", "--report", "json", "r.json")
    assert proc.returncode == 1, proc.stderr  # the broken Kptfile still fails
    assert tree(fleet.mono) == before
    report = report_of(fleet.tmp / "r.json")
    assert report["dryRun"] is True and report["totals"]["updated"] == 4  # north's conflict: upstream wins
    assert "==> mono/clusters/east <==\n" in proc.stdout and "-        image: web:1.0" in proc.stdout
    assert "==> mono/clusters/south <==" not in proc.stdout  # nothing to change there
    assert proc.stderr.splitlines()[-1].endswith("(dry run: nothing written)")


def test_exit_codes_all_clean_then_conflicted(fleet: Fleet) -> None:
    assert fleet.fleet("--match", "*/east").returncode == 0
    before = tree(fleet.mono / "clusters" / "north")
    proc = fleet.fleet("--match", "clusters/n*", "--conflicts", "fail", "--report", "json", "-")
    assert proc.returncode == 3, proc.stderr  # refused: conflicted, nothing written
    (north,) = json.loads(proc.stdout)["packages"]
    assert north["status"] == "conflicted" and north["exitCode"] == 1
    assert tree(fleet.mono / "clusters" / "north") == before
    proc = fleet.fleet("--match", "clusters/n*", "--conflicts", "mark", "--report", "markdown", "-")
    assert proc.returncode == 3, proc.stderr
    assert "| `mono/clusters/north` | conflicted | v1 | v3 |" in proc.stdout
    assert "### Conflicts in `mono/clusters/north`" in proc.stdout
    assert proc.stdout.startswith("## krm-merge fleet update:") and "Traceback" not in proc.stderr
    assert "krm-merge:conflict" in (fleet.mono / "clusters" / "north" / "settings.yaml").read_text()


def test_the_upstream_is_named_as_kpt_or_the_kptfile_spells_it(fleet: Fleet) -> None:
    for spec, found in [
        (f"file://{fleet.up}.git/pkg", 6), (f"file://{fleet.up}/pkg", 6), (f"file://{fleet.up}/pkg/", 6),
        (f"file://{fleet.up}.git/other", 1), (f"file://{fleet.up}", 7), (f"file://{fleet.up}.git", 7),
        (f"file://{fleet.up2}", 1), (f"file://{fleet.up}/nothing", 0),
    ]:
        proc = fleet.krm_merge(["update", "mono", "--upstream", spec, "--ref", "v1", "--dry-run",
                                "--report", "json", "-"])
        assert json.loads(proc.stdout)["selected"] == found, (spec, proc.stderr)


def test_selection_by_glob_several_roots_and_nested_packages(fleet: Fleet) -> None:
    proc = fleet.fleet("--match", "clusters/[ew]*", "--dry-run", "--report", "json", "-")
    assert [p["path"] for p in json.loads(proc.stdout)["packages"]] == ["mono/clusters/east", "mono/clusters/west"]
    # overlapping roots name a package once, in the order of the roots
    proc = fleet.fleet("--dry-run", "--report", "json", "-", roots=("mono/clusters/apps", "mono"))
    paths = [p["path"] for p in json.loads(proc.stdout)["packages"]]
    assert paths[0] == "mono/clusters/apps/nested" and len(paths) == 6 and paths.count("mono/clusters/apps/nested") == 1
    # a package inside a selected one is that package's remote subpackage: its own update's, not selected apart
    fleet.consumer("clusters/east/inner", "v1")
    # links are not followed: to a folder holding a consumer, or as a Kptfile
    (fleet.mono / "linked").symlink_to(fleet.mono / "clusters" / "west")
    (fleet.mono / "docs" / "Kptfile").symlink_to(fleet.mono / "clusters" / "west" / "Kptfile")
    proc = fleet.fleet("--dry-run", "--report", "json", "-")
    paths = [p["path"] for p in json.loads(proc.stdout)["packages"]]
    assert paths == SELECTED


def test_the_extracted_versions_are_read_only_and_removed(fleet: Fleet, tmp_path: Path) -> None:
    proc = fleet.fleet("--match", "*/east")
    assert proc.returncode == 0, proc.stderr
    assert not list((tmp_path / "tmp").iterdir())  # the run's folder of versions is gone
    from krm_merge.fleet import versions
    from krm_merge.fleet.select import select
    from krm_merge.upstream.git import GitCache

    packages = select([str(fleet.mono)], fleet.spec, "*/west")
    folder = tmp_path / "trees"
    folder.mkdir()
    shared = versions.prepare(packages, "v3", GitCache(tmp_path / "cache" / "krm-merge" / "git"), folder, 1)
    assert len(shared.extracted) == 2  # v2 (west's origin) and v3
    for found in shared.extracted.values():
        for path in [found.folder, *found.folder.rglob("*")]:
            assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path


def test_usage_errors(fleet: Fleet) -> None:
    for args, env, words in [
        (["update", "mono", "--ref", "v3"], {}, "needs --upstream"),
        (["update", "mono", "mono2"], {}, "give --upstream REPO[/DIRECTORY] --ref REF"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--shard", "2/2"], {}, "indices start at 0"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--shard", "x"], {}, "expected I/N"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3"], {"JOB_COMPLETION_INDEX": "1"}, "KRM_MERGE_SHARDS"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--origin", "x"], {}, "--origin"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--jobs", "0"], {}, "--jobs"),
        (["update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--report", "xml", "-"], {}, "json or markdown"),
    ]:
        proc = fleet.krm_merge(args, env={**fleet.env, **env})
        assert proc.returncode == 2 and words in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    proc = fleet.krm_merge(["update", "nowhere", "--upstream", fleet.spec, "--ref", "v3"])
    assert proc.returncode == 1 and "nowhere: not a directory" in proc.stderr
    proc = fleet.krm_merge(["update", "mono", "--upstream", fleet.spec, "--ref", "nope", "--match", "*/east"])
    assert proc.returncode == 1 and "ref 'nope' not found" in proc.stderr and "Traceback" not in proc.stderr
