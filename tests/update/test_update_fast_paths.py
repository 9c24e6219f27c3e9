"""The cheap paths of ``krm-merge update``: an update to the commit the package is at, an unchanged upstream Kptfile.

Each is checked for its answer (what kpt writes, as data) and for the work
it skips (no ``git archive``, no Kptfile merge), never for its time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from krm_merge.commands import update
from krm_merge.kptfile import merge as kptfile_merge
from krm_merge.update import context, planner
from krm_merge.update import plan as update_plan
from tests.conftest import require_binary

from .world import World, cm, kptfile, read_tree, spy_git

pytestmark = pytest.mark.e2e


def update_in_a_process(world: World, ref: str, *modules: str) -> str:
    """``update`` of ours to ``ref`` in a new interpreter: its exit code, and whether ruamel.yaml or one of
    ``modules`` was imported, as ``"0 False"``; a test of what an update imports needs a fresh process."""
    script = ("import sys\nfrom krm_merge.commands import update\n"
              f"code = update.main([{str(world.our_pkg) + '@' + ref!r}])\n"
              f"print(code, any(m.startswith('ruamel') or m in {modules!r} for m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", script], env=world.env, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip(), proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_update_to_the_locked_commit_only_records_the_ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    world.commit({"a.yaml": cm("a", "1"), "Kptfile": kptfile("pkg", "info:\n  description: d\n")}, tag="v1")
    world.git("tag", "same")  # another name of the same commit
    world.get("v1")
    world.edit_local({"a.yaml": (world.our_pkg / "a.yaml").read_text().replace('"1"', '"mine"'), "b.yaml": cm("b", "2")})
    before = {p.name: p.read_bytes() for p in world.our_pkg.iterdir() if p.name != "Kptfile"}
    calls = spy_git(monkeypatch)
    assert world.both("same") == (0, 0)
    assert not any("archive" in c for c in calls)
    assert {p.name: p.read_bytes() for p in world.our_pkg.iterdir() if p.name != "Kptfile"} == before
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    lock = yaml.safe_load((world.our_pkg / "Kptfile").read_text())["upstreamLock"]["git"]
    assert lock["ref"] == "same"


def test_fast_forward_to_the_locked_commit_still_checks_local_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    commit = world.commit({"a.yaml": cm("a", "1")}, tag="v1")
    world.our_pkg.mkdir(parents=True)
    git = f"    repo: file://{world.up}\n    directory: /pkg\n    ref: v1\n"
    (world.our_pkg / "Kptfile").write_text(kptfile("local", f"upstream:\n  type: git\n  git:\n{git}"
                                                    f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {commit}\n"))
    (world.our_pkg / "a.yaml").write_text(cm("a", "mine"))
    assert update.main([f"{world.our_pkg}@v1", "--strategy", "fast-forward"]) == 1
    assert update.main([f"{world.our_pkg}@v1", "--strategy", "force-delete-replace"]) == 0
    assert yaml.safe_load((world.our_pkg / "a.yaml").read_text())["data"] == {"a": "1"}


def test_an_unchanged_upstream_kptfile_is_not_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    body = "info:\n  description: d\npipeline:\n  mutators:\n    - image: set-labels:v1\n"
    for root in (base, up, local):
        (root / "sub").mkdir(parents=True)
        (root / "Kptfile").write_text(kptfile("pkg", body))
        (root / "sub" / "Kptfile").write_text(kptfile("sub"))
        (root / "a.yaml").write_text(cm("a", "2" if root is up else "1"))
    local_kptfile = kptfile("pkg", "# ours\ninfo:\n  description: mine  # edited\n" + body.split("\n", 2)[2])
    (local / "Kptfile").write_text(local_kptfile)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the Kptfile merge ran")

    monkeypatch.setattr(context.MergeContext, "_merge_kptfile", refuse)
    plan = planner.plan_update(local, base, up)
    update_plan.apply_plan(local, plan)
    assert (local / "Kptfile").read_text() == local_kptfile
    assert yaml.safe_load((local / "a.yaml").read_text())["data"] == {"a": "2"}


def test_a_no_op_update_reads_no_round_trip_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second update to the same ref parses nothing with ruamel (it is not even imported)."""
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    commit = world.commit({"a.yaml": cm("a", "1")}, tag="v1")
    world.our_pkg.mkdir(parents=True)
    git = f"    repo: file://{world.up}\n    directory: /pkg\n    ref: v1\n"
    text = kptfile("local", f"upstream:  # from kpt\n  type: git\n  git:\n{git}  updateStrategy: resource-merge\n"
                            f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {commit}\n")
    (world.our_pkg / "Kptfile").write_text(text)
    (world.our_pkg / "a.yaml").write_text(cm("a", "mine"))
    assert update_in_a_process(world, "v1") == "0 False"
    assert (world.our_pkg / "Kptfile").read_text() == text


PIPELINE = ("info:\n  description: the package  # upstream's words\npipeline:\n  mutators:\n"
            "    - image: gcr.io/kpt-fn/set-labels:v0.1  # labels\n      configMap:\n        app: web\n"
            "    - image: gcr.io/kpt-fn/set-namespace:v0.4\n")


def test_a_kptfile_local_left_as_fetched_takes_upstreams_change_without_the_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: a root Kptfile that differs from origin's only by what kpt's get wrote (its name,
    upstream and lock; kpt drops its comments too) takes upstream's pipeline change as a resource does:
    no Kptfile merge, no ruamel; the result equals kpt's as data, local's other lines kept (issue 33)."""
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    world.commit({"Kptfile": kptfile("pkg", PIPELINE), "a.yaml": cm("a", "1")}, tag="v1")
    world.commit({"Kptfile": kptfile("pkg", PIPELINE.replace("set-namespace:v0.4", "set-namespace:v0.5")),
                  "a.yaml": cm("a", "1")}, tag="v2")
    world.get("v1")
    before = (world.our_pkg / "Kptfile").read_text()
    assert update_in_a_process(world, "v2", "krm_merge.kptfile.merge") == "0 False"
    assert world.update_kpt("v2").returncode == 0
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    after = (world.our_pkg / "Kptfile").read_text().splitlines()
    assert len(after) == len(before.splitlines())
    changed = [line for line in after if line not in before.splitlines()]
    assert len(changed) == 4, changed  # the image; the ref, the lock's ref and commit


def test_a_kptfile_changed_locally_beside_its_own_fields_still_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    for root in (base, up, local):
        root.mkdir()
    (base / "Kptfile").write_text(kptfile("pkg", PIPELINE))
    (up / "Kptfile").write_text(kptfile("pkg", PIPELINE.replace("set-namespace:v0.4", "set-namespace:v0.5")))
    (local / "Kptfile").write_text(kptfile("local", PIPELINE.replace("app: web", "app: mine")))
    merges: list[object] = []
    real = kptfile_merge.merge_kptfile

    def spy(*args: object, **kwargs: object) -> object:
        merges.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(kptfile_merge, "merge_kptfile", spy)
    update_plan.apply_plan(local, planner.plan_update(local, base, up))
    assert len(merges) == 1  # local changed a function's config: the pipeline-aware merge decides
    merged = yaml.safe_load((local / "Kptfile").read_text())
    assert [m["image"] for m in merged["pipeline"]["mutators"]] == ["gcr.io/kpt-fn/set-labels:v0.1", "gcr.io/kpt-fn/set-namespace:v0.5"]
    assert merged["pipeline"]["mutators"][0]["configMap"] == {"app": "mine"} and merged["metadata"]["name"] == "local"


NRF = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nrf-configmap\n  labels:\n    app: free5gc\n"
       "data:\n  nrfcfg.yaml: |\n    info:\n      version: 1.0.1\n    \n    logger:\n      NRF:\n"
       "        debugLevel: info\n")


def test_a_changed_block_scalar_beside_a_new_namespace_takes_no_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: free5gc-cp's NRF ConfigMap (nephio catalog) as kpt fetched it (a blank-only line of its
    configuration file printed empty, its identifier annotation added); upstream changes that file and the
    namespace.  The fast editor takes it (ruamel.yaml is not imported) and writes kpt's bytes (issue 33)."""
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    world.commit({"nrf.yaml": NRF, "Kptfile": kptfile("pkg")}, tag="v1")
    v2 = NRF.replace("    app: free5gc\n", "    app: free5gc\n  namespace: free5gc-cp\n").replace("1.0.1\n    \n", "1.0.2\n\n")
    world.commit({"nrf.yaml": v2.replace("      NRF:\n        debugLevel: info", "      enable: true\n      level: info"),
                  "Kptfile": kptfile("pkg")}, tag="v2")
    world.get("v1")
    assert update_in_a_process(world, "v2") == "0 False"
    assert world.update_kpt("v2").returncode == 0
    assert (world.our_pkg / "nrf.yaml").read_text() == (world.kpt_pkg / "nrf.yaml").read_text()
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
