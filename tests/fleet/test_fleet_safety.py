"""A fleet update never overwrites a local edit in silence, and a run that selected nothing is no green job (#46).

Every local edit that upstream's change replaced (``--conflicts upstream-wins``,
the default) or that is left marked (``--conflicts mark``) is named with its
package, resource, field and three values on stderr (the first 20, then a
count) and in every report format (JSON, Markdown, ``--results``, and a merged
report of shards); the exit code is 3 then.  A selection of no package exits 4
naming the upstreams the roots' Kptfiles do track, closest first; the
repository is recognised however it is spelled (a path or ``file://``,
``.git`` or not, ``https://`` or ``git@host:``, the host in any case).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from krm_merge.fleet.select import names
from tests.conftest import require_binary

from .world import Fleet, configmap, deployment, report_of

pytestmark = pytest.mark.e2e

EDITED = 11  # consumers whose two local edits (level, image) upstream's v3 also changes: 22 edits, past the 20 shown


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    require_binary("git")
    require_binary("kpt")
    fleet = Fleet(tmp_path_factory.mktemp("fleet"))
    fleet.consumer("clusters/north", "v1", edits={"settings.yaml": configmap("north")})  # v3 changes level too
    fleet.consumer("clusters/west", "v2", edits={"local.yaml": configmap("mine", "local-only")})  # nothing replaced
    for n in range(EDITED):
        fleet.consumer(f"many/c{n:02}", "v1", edits={"settings.yaml": configmap(f"m{n}"),
                                                     "deploy.yaml": deployment(f"web:1.{n + 1}")})
    return fleet


@pytest.fixture
def fleet(built: Fleet, tmp_path: Path) -> Fleet:
    """A fresh copy of the built fleet (its repositories are shared, read-only)."""
    import shutil

    copy = Fleet.__new__(Fleet)
    copy.__dict__.update(built.__dict__)
    copy.tmp = tmp_path
    copy.mono = tmp_path / "mono"
    copy.env = {**built.env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    shutil.copytree(built.mono, copy.mono, symlinks=True)
    return copy


NORTH = 'mono/clusters/north/settings.yaml: ConfigMap/settings data.level: '


def test_an_overwritten_local_edit_is_named_everywhere_and_exits_3(fleet: Fleet) -> None:
    proc = fleet.fleet("--match", "clusters/*", "--report", "json", "r.json", "--results", "results.yaml")
    assert proc.returncode == 3, proc.stderr  # upstream's value replaced north's local edit: not "all clean"
    assert 'data:\n  level: "3"' in (fleet.mono / "clusters" / "north" / "settings.yaml").read_text()
    said = [line for line in proc.stderr.splitlines() if NORTH in line]
    assert said == [f"krm-merge update: {NORTH}local edit overwritten by upstream: origin=1 local=north upstream=3"], \
        proc.stderr
    assert "mono/clusters/north: updated to v3" in proc.stderr and "1 local edit(s) overwritten" in proc.stderr
    assert "west" not in "".join(line for line in proc.stderr.splitlines() if "overwritten" in line)
    report = report_of(fleet.tmp / "r.json")
    assert report["exitCode"] == 3
    entries = {p["path"]: p for p in report["packages"]}
    (edit,) = entries["mono/clusters/north"]["localEdits"]
    assert {k: edit[k] for k in ("file", "field", "origin", "local", "upstream", "decision")} == {
        "file": "settings.yaml", "field": "data.level", "origin": "1", "local": "north", "upstream": "3",
        "decision": "upstream"}
    assert edit["resource"]["kind"] == "ConfigMap" and edit["resource"]["name"] == "settings"
    assert entries["mono/clusters/west"]["localEdits"] == []
    markdown = fleet.krm_merge(["report", "merge", "r.json", "--report", "markdown", "-"]).stdout
    assert ("| `mono/clusters/north` | ConfigMap/settings | `settings.yaml` | `data.level` | `1` | `north` | `3` | "
            "overwritten by upstream |") in markdown
    results = (fleet.tmp / "results.yaml").read_text()
    assert "data.level: local edit overwritten by upstream: origin=1 local=north upstream=3" in results
    # the shards' reports merged say it too, and exit as the fleet did
    merged = fleet.krm_merge(["report", "merge", "r.json", "--report", "json", "-"])
    assert merged.returncode == 3, merged.stderr
    assert json.loads(merged.stdout)["packages"][0]["localEdits"] == entries["mono/clusters/north"]["localEdits"]
    assert any(NORTH in line for line in merged.stderr.splitlines()), merged.stderr
    # a run that replaced no local edit is clean
    proc = fleet.fleet("--match", "clusters/west")
    assert proc.returncode == 0 and "overwritten" not in proc.stderr, proc.stderr


def test_edits_left_marked_are_named_and_stderr_is_bounded(fleet: Fleet) -> None:
    proc = fleet.fleet("--match", "many/*", "--conflicts", "mark", "--jobs", "2", "--report", "json", "r.json")
    assert proc.returncode == 3, proc.stderr
    named = [line for line in proc.stderr.splitlines() if re.search(r": local edit left marked", line)]
    assert len(named) == 20, proc.stderr  # the first 20, then how many more
    assert f"krm-merge update: ... and {2 * EDITED - 20} more local edit(s): the report lists every one" in proc.stderr
    assert any(line.startswith("krm-merge update: mono/many/c00/deploy.yaml: Deployment/web ")
               and line.endswith('local edit left marked: origin=web:1.0 local=web:1.1 upstream=web:3.0')
               for line in named), proc.stderr
    report = report_of(fleet.tmp / "r.json")
    edits = [e for p in report["packages"] for e in p["localEdits"]]
    assert len(edits) == 2 * EDITED and {e["decision"] for e in edits} == {"marked"}


def test_a_selection_of_nothing_exits_4_naming_the_closest_upstreams(fleet: Fleet) -> None:
    proc = fleet.krm_merge(["update", "mono", "--upstream", f"file://{fleet.up}/pkgs", "--ref", "v3",
                            "--report", "json", "-"])
    assert proc.returncode == 4, proc.stderr
    assert json.loads(proc.stdout)["exitCode"] == 4 and json.loads(proc.stdout)["selected"] == 0
    error = [line for line in proc.stderr.splitlines() if "no package under mono tracks" in line]
    assert len(error) == 1 and f"the closest: file://{fleet.up}.git/pkg" in error[0], proc.stderr
    # --match that keeps nothing is no success either
    assert fleet.fleet("--match", "nowhere/*").returncode == 4


def test_the_repository_is_recognised_however_it_is_spelled(fleet: Fleet) -> None:
    # the Kptfiles say file://UP.git (as kpt pkg get wrote them); a path, a trailing slash, no .git all name it
    for spec in (f"{fleet.up}.git/pkg", f"{fleet.up}/pkg", f"{fleet.up}/pkg/", f"file://{fleet.up}/pkg/",
                 f"{fleet.up}.git/pkg/"):
        proc = fleet.krm_merge(["update", "mono", "--upstream", spec, "--ref", "v1", "--dry-run", "--report", "json",
                                "-"])
        assert json.loads(proc.stdout)["selected"] == 2 + EDITED, (spec, proc.stderr)


SPELLINGS = [  # --upstream, a Kptfile's repo and directory, whether they name one package
    ("git@github.com:org/blueprints.git/apps/web", "https://github.com/org/blueprints", "apps/web", True),
    ("https://GitHub.com/org/blueprints/apps/web", "git@github.com:org/blueprints.git", "/apps/web", True),
    ("ssh://git@github.com/org/blueprints", "https://github.com/org/blueprints.git/", "/", True),
    ("/srv/up.git/pkg", "file:///srv/up.git", "pkg", True),
    ("file:///srv/up/pkg/", "/srv/up", "pkg", True),
    ("file:///srv/up.git/", "/srv/up", "pkg", True),  # the whole repository
    ("https://github.com/org/blueprints", "https://gitlab.com/org/blueprints", "/", False),  # another host
    ("https://github.com/org/blueprints/apps", "https://github.com/org/blueprints", "apps/web", False),  # directory
    ("/srv/up/pkg", "file:///srv/other", "pkg", False),
    ("/srv/upstream", "file:///srv/up", "stream", False),  # a name's prefix is no folder
]


def test_one_normalisation_of_repository_spellings() -> None:
    assert [names(spec, repo, directory) for spec, repo, directory, _ in SPELLINGS] == [s[3] for s in SPELLINGS]
