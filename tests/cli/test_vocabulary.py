"""The words of a finished run mean one thing each (issue 44): ``current`` (a package already at the ref asked
for, as a fleet update says it), a report's rows agreeing with its files table, a resource's apiVersion kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.update.world import World, cm, kptfile

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")


def krm_merge(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], cwd=world.tmp / "ours", env=world.env, capture_output=True, text=True,
                          timeout=120)


def _world(tmp_path: Path) -> World:
    world = World(tmp_path)
    world.commit({"Kptfile": kptfile("pkg"), "a.yaml": cm("a", "1")}, tag="v1")
    world.commit({"a.yaml": cm("a", "2")}, tag="v2")
    world.get("v1")
    return world


def test_an_update_already_at_the_ref_says_the_package_is_current(tmp_path: Path) -> None:
    world = _world(tmp_path)
    first = krm_merge(world, "update", "local@v2")
    assert first.returncode == 0 and "krm-merge update: updated local: 2 file(s) changed\n" in first.stderr
    again = krm_merge(world, "update", "local@v2")
    assert (again.returncode, again.stderr) == (0, "krm-merge update: local: current to v2\n")
    kptfile_ref = krm_merge(world, "update", "local")  # the Kptfile's ref: no ref asked for
    assert (kptfile_ref.returncode, kptfile_ref.stderr) == (0, "krm-merge update: local: current\n")


def test_the_kptfile_row_agrees_with_the_files_table(tmp_path: Path) -> None:
    world = _world(tmp_path)
    done = krm_merge(world, "update", "local@v2", "--report", "json", "-")
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout)["outcomes"]
    changed = {o["path"] for o in outcomes if o["kind"] == "fileChanged"}
    assert changed == {"Kptfile", "a.yaml"}
    rows = {o["file"]: (o["action"], o["reason"]) for o in outcomes if o["kind"] == "resource"}
    assert rows["Kptfile"] == ("merged", "lockRecorded")  # not "kept local (unchanged upstream)": its file changes
    assert all(action not in ("kept", "unchanged") for file, (action, _) in rows.items() if file in changed)


def test_a_promote_report_names_a_core_resource_by_its_api_version(tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  image: app:1 # {"$imagepolicy": "ns:app"}\n')
    (tmp_path / "k.yaml").write_text('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n'
                                     '  image: app:1 # {"$imagepolicy": "ns:app"}\n  other: [a]\n')
    done = subprocess.run([KRM_MERGE, "promote", str(tmp_path), "--image-policy", "ns:app=app:2", "--report", "json",
                           "-"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    refs = {o["file"]: o["resource"] for o in json.loads(done.stdout)["outcomes"] if o["kind"] == "fieldSet"}
    assert refs == {"cm.yaml": {"apiVersion": "v1", "kind": "ConfigMap", "name": "p"},
                    "k.yaml": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}
