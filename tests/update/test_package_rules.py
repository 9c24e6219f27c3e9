"""kpt's package rules, each run through the real ``kpt pkg update`` and ``krm-merge update`` on one git repo.

Every test builds the same upstream history, fetches it with ``kpt pkg get``,
makes the same local edits in two copies and updates one with kpt, the
other with krm-merge; the packages must then be equal as data (Kptfiles,
``upstream``/``upstreamLock`` included), except where a test says why not.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from krm_merge.commands import update

from tests.conftest import require_binary

from .world import World, cm, kptfile, read_tree

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("kpt")
    require_binary("git")
    return World(tmp_path, monkeypatch)


def same(world: World) -> dict[str, Any]:
    ours, theirs = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    assert ours == theirs
    return ours


# -- problem 1: fast-forward and the Kptfile kpt pkg get generated ------------------------------


def test_fast_forward_ignores_the_generated_kptfile(world: World) -> None:
    world.commit({"cm.yaml": cm("cm", "1")})  # upstream has no Kptfile: kpt pkg get generates one
    world.get()
    world.commit({"cm.yaml": cm("cm", "2")})
    assert world.both(strategy="fast-forward") == (0, 0)
    files = same(world)
    assert files["cm.yaml"][0]["data"] == {"a": "2"}
    assert files["Kptfile"][0]["upstream"]["updateStrategy"] == "fast-forward"


def test_fast_forward_still_refuses_a_pipeline_added_to_the_generated_kptfile(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    world.commit({"cm.yaml": cm("cm", "2")})
    kf = (world.our_pkg / "Kptfile").read_text() + "pipeline:\n  mutators:\n    - image: foo:v1\n"
    world.edit_local({"Kptfile": kf})
    before = read_tree(world.our_pkg)
    assert world.both(strategy="fast-forward") == (1, 1)
    assert "local package files have been modified" in capsys.readouterr().err
    assert read_tree(world.our_pkg) == before
    # kpt writes --strategy into the Kptfile before it fails; we write nothing on failure.
    theirs = read_tree(world.kpt_pkg)
    assert theirs["Kptfile"][0]["upstream"].pop("updateStrategy") == "fast-forward"
    before["Kptfile"][0]["upstream"].pop("updateStrategy")
    assert theirs == before


# -- problem 2: force-delete-replace keeps the root Kptfile ----------------------------------


@pytest.mark.parametrize("strategy", ["force-delete-replace", "resource-merge"])
def test_root_kptfile_survives_an_upstream_without_one(world: World, strategy: str) -> None:
    world.commit({"cm.yaml": cm("cm", "1"), "extra.yaml": cm("extra", "1")})
    world.get()
    commit = world.commit({"cm.yaml": cm("cm", "2"), "extra.yaml": None})
    kf = (world.our_pkg / "Kptfile").read_text() + "pipeline:\n  mutators:\n    - image: foo:v1\n"
    world.edit_local({"Kptfile": kf, "mine.yaml": cm("mine", "1")})
    assert world.both(strategy=strategy) == (0, 0)
    files = same(world)
    kpt_file = files["Kptfile"][0]
    assert kpt_file["upstreamLock"]["git"]["commit"] == commit
    assert kpt_file["pipeline"] == {"mutators": [{"image": "foo:v1"}]}
    assert "extra.yaml" not in files


# -- problem 3: subpackages -----------------------------------------------------------------


def _with_subpackage(world: World) -> None:
    world.commit({
        "cm.yaml": cm("cm", "1"),
        "sub/Kptfile": kptfile("sub"), "sub/s1.yaml": cm("s1", "1"), "sub/s2.yaml": cm("s2", "1"), "sub/notes.txt": "hi\n",
    })
    world.get()


def test_subpackage_deleted_upstream_but_changed_locally_is_kept_whole(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    _with_subpackage(world)
    world.commit({"sub": None, "cm.yaml": cm("cm", "2")})
    world.edit_local({"sub/s1.yaml": cm("s1", "9")})
    assert world.both() == (0, 0)
    files = same(world)
    assert {"sub/Kptfile", "sub/s1.yaml", "sub/s2.yaml", "sub/notes.txt"} <= set(files)
    assert "subpackage sub deleted upstream but modified locally: kept" in capsys.readouterr().err


def test_subpackage_deleted_upstream_with_a_changed_readme_is_kept_whole(world: World) -> None:
    _with_subpackage(world)
    world.commit({"sub": None})
    world.edit_local({"sub/notes.txt": "mine\n"})
    assert world.both() == (0, 0)
    assert "sub/Kptfile" in same(world)


def test_subpackage_deleted_upstream_and_unchanged_locally_is_removed(world: World) -> None:
    _with_subpackage(world)
    world.commit({"sub": None})
    assert world.both() == (0, 0)
    assert set(same(world)) == {"Kptfile", "cm.yaml"}
    assert not (world.our_pkg / "sub").exists()


def test_subpackage_deleted_locally_stays_deleted(world: World) -> None:
    _with_subpackage(world)
    world.commit({"sub/s1.yaml": cm("s1", "2"), "sub/s3.yaml": cm("s3", "1"), "sub/new.txt": "x\n"})
    world.edit_local({"sub": None})
    assert world.both() == (0, 0)
    assert set(same(world)) == {"Kptfile", "cm.yaml"}


def test_subpackage_added_on_both_sides_is_an_error(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    world.commit({"sub/Kptfile": kptfile("sub"), "sub/s1.yaml": cm("s1", "1")})
    world.edit_local({"sub/Kptfile": kptfile("sub"), "sub/s2.yaml": cm("s2", "1")})
    before = read_tree(world.our_pkg)
    assert world.both() == (1, 1)
    assert 'subpackage "sub" added in both upstream and local' in capsys.readouterr().err
    assert read_tree(world.our_pkg) == before


def test_local_subpackage_is_untouched_and_upstream_subpackage_changes_merge(world: World) -> None:
    _with_subpackage(world)
    world.commit({"sub/s2.yaml": cm("s2", "2"), "sub/Kptfile": kptfile("sub", "info:\n  description: up\n")})
    world.edit_local({"mine/Kptfile": kptfile("mine"), "mine/m.yaml": cm("m", "1"), "sub/s1.yaml": cm("s1", "7")})
    assert world.both() == (0, 0)
    files = same(world)
    assert files["sub/s2.yaml"][0]["data"] == {"a": "2"} and files["sub/s1.yaml"][0]["data"] == {"a": "7"}
    assert files["sub/Kptfile"][0]["info"] == {"description": "up"}
    assert "mine/m.yaml" in files


def test_kptfile_removed_upstream(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.commit({"cm.yaml": cm("cm", "1"), "Kptfile": kptfile("pkg", "info:\n  description: hi\n  site: s\n")})
    world.get()
    world.commit({"Kptfile": None})
    world.edit_local({"Kptfile": (world.our_pkg / "Kptfile").read_text().replace("site: s", "site: mine")})
    assert world.both() == (0, 0)
    ours, theirs = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    # kpt leaves `info: {}` (a map emptied by the merge); we remove emptied maps (docs/merge.md).
    assert theirs["Kptfile"][0].pop("info") == {}
    assert ours == theirs
    assert "conflict" in capsys.readouterr().err  # info.site: changed locally, deleted upstream


# -- remote subpackages (their own upstream) --------------------------------------------------


def test_remote_subpackage_is_updated_from_its_own_upstream(world: World) -> None:
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    other = world.tmp / "other"
    (other / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=other)
    (other / "pkg" / "o.yaml").write_text(cm("o", "1"))
    world.git("add", "-A", cwd=other)
    world.git("commit", "-qm", "o", cwd=other)
    world.kpt("pkg", "get", f"file://{other}.git/pkg@main", "local/remote")
    world.kpt("pkg", "get", f"file://{other}.git/pkg@main", "remote", cwd=world.tmp / "ours" / "local")
    (other / "pkg" / "o.yaml").write_text(cm("o", "2"))
    world.git("commit", "-qam", "o2", cwd=other)
    world.commit({"cm.yaml": cm("cm", "2")})
    world.edit_local({"remote/mine.yaml": cm("mine", "1")})
    assert world.both() == (0, 0)
    files = same(world)
    assert files["remote/o.yaml"][0]["data"] == {"a": "2"} and files["cm.yaml"][0]["data"] == {"a": "2"}
    assert files["remote/Kptfile"][0]["upstreamLock"]["git"]["commit"] == world.git("rev-parse", "HEAD", cwd=other)


def test_no_recursive_leaves_remote_subpackages_alone(world: World) -> None:
    world.commit({"cm.yaml": cm("cm", "1"), "sub/s.yaml": cm("s", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2"), "sub/s.yaml": cm("s", "2")}, tag="v2")
    world.get("v1")
    # a remote subpackage from the same repository and ref, fetched separately
    world.kpt("pkg", "get", f"file://{world.up}.git/pkg/sub@v1", "remote", cwd=world.our_pkg)
    world.kpt("pkg", "get", f"file://{world.up}.git/pkg/sub@v1", "remote", cwd=world.kpt_pkg)
    copy = world.tmp / "copy"
    shutil.copytree(world.our_pkg, copy)
    assert update.main([f"{copy}@v2", "--no-recursive"]) == 0
    assert "a: \"1\"" in (copy / "remote" / "s.yaml").read_text() and "a: \"2\"" in (copy / "cm.yaml").read_text()
    assert world.update_kpt("v2").returncode == 0
    assert world.update_ours("v2") == 0  # follows the root's new ref: same repo, ref and directory tree
    files = same(world)
    assert files["remote/s.yaml"][0]["data"] == {"a": "2"}
    assert files["remote/Kptfile"][0]["upstream"]["git"]["ref"] == "v2"


def test_remote_subpackage_inside_the_upstream_package(world: World) -> None:
    other = world.tmp / "other"
    (other / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=other)
    (other / "pkg" / "o.yaml").write_text(cm("o", "1"))
    world.git("add", "-A", cwd=other)
    world.git("commit", "-qm", "o", cwd=other)
    world.commit({"cm.yaml": cm("cm", "1")})
    world.kpt("pkg", "get", f"file://{other}.git/pkg@main", "remote", cwd=world.up / "pkg")  # upstream vendors it
    world.commit({})
    world.get()
    (other / "pkg" / "o.yaml").write_text(cm("o", "2"))
    world.git("commit", "-qam", "o2", cwd=other)
    world.commit({"cm.yaml": cm("cm", "2"), "remote/extra.yaml": cm("extra", "1")})
    world.edit_local({"remote/mine.yaml": cm("mine", "1")})
    assert world.both() == (0, 0)
    files = same(world)
    assert files["remote/o.yaml"][0]["data"] == {"a": "2"} and "remote/extra.yaml" in files and "remote/mine.yaml" in files


# -- where kpt loses local data (documented deviations, docs/merge.md) ------------------------------


def test_local_data_under_a_null_and_explicit_nulls_are_kept(world: World) -> None:
    a = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: null\ndata:\n  x: '1'\n"
    b = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  x: '1'\n  y: null\n"
    world.commit({"a.yaml": a, "b.yaml": b, "c.yaml": cm("c", "1")})
    world.get()
    world.commit({"c.yaml": cm("c", "2")})
    world.edit_local({"a.yaml": (world.our_pkg / "a.yaml").read_text().replace("labels: null", "labels:\n    mine: x")})
    assert world.both() == (0, 0)
    ours, theirs = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    # kpt drops the label added locally under a field that is null in origin and upstream ...
    assert "labels" not in theirs["a.yaml"][0]["metadata"]
    assert ours["a.yaml"][0]["metadata"]["labels"] == {"mine": "x"}
    # ... and strips an explicit null from a resource nobody changed
    assert theirs["b.yaml"][0]["data"] == {"x": "1"} and ours["b.yaml"][0]["data"] == {"x": "1", "y": None}
    for tree in (ours, theirs):
        del tree["a.yaml"], tree["b.yaml"]
    assert ours == theirs
