"""Git's trust rules stay per package in a fleet update (issue 36, docs/security.md).

A repository the user's own Kptfiles name is fetched under the user's git
rules; one named only by upstream content is fetched under git's rules for
URLs that do not come from the user, which refuse a local ``file://``
repository.  In a fleet every package is updated by the same worker
processes: the repository one package's own Kptfile names must not become
trusted for another package's upstream content.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_binary

from .world import Fleet, report_of, write_files

pytestmark = pytest.mark.e2e


def test_a_repository_one_package_names_is_not_trusted_for_another(tmp_path: Path) -> None:
    require_binary("git")
    require_binary("kpt")
    fleet = Fleet(tmp_path)
    other = tmp_path / "other-repo"  # a local repository: refused unless the user's own Kptfiles name it
    other.mkdir()
    fleet.git(["init", "-q", "-b", "main"], other)
    write_files(other / "sub", {"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
                                "s.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n"})
    fleet.git(["add", "-A"], other)
    fleet.git(["commit", "-qm", "sub"], other)
    trusting = fleet.consumer("clusters/a-names-it", "v1")
    fleet.consumer("clusters/b-does-not", "v1")
    # the user of the first package fetched a subpackage of their own from that repository
    fleet.consumer("clusters/a-names-it/mine", "main", repo=other, directory="sub")
    assert f"repo: file://{other}" in (trusting / "mine" / "Kptfile").read_text()
    # the new upstream version brings a remote subpackage from the same repository
    remote = (f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\nupstream:\n  type: git\n  git:\n"
              f"    repo: file://{other}\n    directory: /sub\n    ref: main\n  updateStrategy: resource-merge\n")
    write_files(fleet.up / "pkg" / "sub", {"Kptfile": remote})
    fleet.git(["add", "-A"], fleet.up)
    fleet.git(["commit", "-qm", "v5"], fleet.up)
    fleet.git(["tag", "v5"], fleet.up)
    single = fleet.copy("single")
    expected = {}
    for name in ("a-names-it", "b-does-not"):
        proc = fleet.krm_merge(["update", f"mono/clusters/{name}@v5"], cwd=single)
        expected[name] = proc.returncode
    assert expected == {"a-names-it": 0, "b-does-not": 1}
    proc = fleet.fleet("--jobs", "1", "--report", "json", "r.json", ref="v5")  # one worker: a, then b
    statuses = {p["path"]: p for p in report_of(tmp_path / "r.json")["packages"]}
    assert statuses["mono/clusters/a-names-it"]["status"] == "updated"
    refused = statuses["mono/clusters/b-does-not"]
    assert refused["status"] == "failed" and "not allowed" in refused["error"] and "upstream content" in refused["error"]
    assert proc.returncode == 1
