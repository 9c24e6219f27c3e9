"""A resource changed on both sides is merged on plain data (issue 45); ruamel.yaml only where that cannot carry it.

The user's case of issue 45: a package fetched with ``kpt pkg get``, edited
as people edit (an env var, a replica count, a pinned image), the edited
files written back whole by a YAML round-trip tool (ruamel.yaml with its own
indentation and width, PyYAML's dump with sorted keys and no comments), then
updated.  The update merges those resources on the data the fast reader
read, writes the answer into local's text with the editing layer, and never
imports ruamel.yaml; the answer is kpt's as data.  A resource re-formatted
only takes upstream's change without a merge, and the documents plain data
cannot carry (comments upstream changed, anchors, keys that are not
strings) still go through the round-trip merge, each for its reason.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from krm_merge.merge3.conflicts import ConflictPolicy
from krm_merge.update import context, planner
from krm_merge.update import plan as update_plan
from tests.conftest import require_binary
from tests.helpers import without_nulls

from .test_review_diff import version
from .test_update_fast_paths import update_in_a_process
from .world import World, cm, kptfile, read_tree

TOKEN = "app/controller/deployment-token-controller.yaml"
CERT = "cert-manager/deployment-cert-manager.yaml"


def ruamel_rewrite(text: str, edit: Any) -> str:
    """``text`` loaded and written back by ruamel.yaml as an editor does: 4-space mappings, 40 columns (a long
    value goes on the line after its key, a long string over lines), quotes kept; ``edit`` changes the data."""
    rt = YAML()
    rt.indent(mapping=4, sequence=4, offset=2)
    rt.width = 40
    rt.preserve_quotes = True
    data = rt.load(text)
    edit(data)
    out = io.StringIO()
    rt.dump(data, out)
    return out.getvalue()


def pyyaml_rewrite(text: str, edit: Any) -> str:
    """``text`` loaded and written back by PyYAML's dump: keys sorted, comments gone, long strings folded."""
    data = yaml.safe_load(text)
    edit(data)
    return yaml.safe_dump(data)


def add_env(data: Any) -> None:
    data["spec"]["template"]["spec"]["containers"][0].setdefault("env", []).append({"name": "MINE", "value": "local"})


def more_replicas_and_args(data: Any) -> None:
    data["spec"]["replicas"] = 3
    data["spec"]["template"]["spec"]["containers"][0]["args"].append("--v=4")


@pytest.mark.e2e
def test_the_users_edits_written_back_by_yaml_tools_merge_without_ruamel(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: two Deployments changed on both sides in their containers (upstream's image or args,
    local's env var or args), their files written back by ruamel.yaml and by PyYAML: the update imports no
    ruamel.yaml, writes kpt's answer as data, and keeps local's lines where upstream changed nothing."""
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    v1 = {**version("nephio-operator", "v1"), **version("cert-manager-basic", "v1")}
    v2 = {**version("nephio-operator", "v2"), **version("cert-manager-basic", "v2")}
    world.commit(v1, tag="v1")
    world.commit(v2, tag="v2")
    world.get("v1")
    fetched = (world.our_pkg / TOKEN).read_text()
    edits = {TOKEN: ruamel_rewrite(fetched, add_env),
             CERT: pyyaml_rewrite((world.our_pkg / CERT).read_text(), more_replicas_and_args)}
    assert "image: \n" in edits[TOKEN]  # the long image went to the line after its key
    world.edit_local(edits)
    assert world.update_kpt("v2").returncode == 0
    assert update_in_a_process(world, "v2") == "0 False"  # exit code 0, no ruamel.yaml imported
    assert without_nulls(read_tree(world.our_pkg)) == without_nulls(read_tree(world.kpt_pkg))
    ours = (world.our_pkg / TOKEN).read_text()
    changed = [line for line in ours.splitlines() if line not in edits[TOKEN].splitlines()]
    assert changed == ["                image: docker.io/nephio/nephio-operator:v4.0.0"]  # the two lines, as one


def test_a_resource_only_reformatted_takes_upstreams_change_without_a_merge(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Written back by PyYAML (keys sorted, comments gone), with conflict rules in the package (which used to send
    every resource changed on both sides to the merge): upstream's change in local's text, no 3-way merge."""
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    origin = cm("a", "1", "  # upstream's note\n  z: keep\n")
    rules = "metadata:\n  name: pkg\n  annotations:\n    krm-merge.dev/conflicts: '{\"*\": local-wins}'\n"
    for root, text in ((base, origin), (up, origin.replace('"1"', '"2"')), (local, pyyaml_rewrite(origin, lambda d: d))):
        root.mkdir()
        (root / "a.yaml").write_text(text)
        (root / "Kptfile").write_text(kptfile("pkg").replace("metadata:\n  name: pkg\n", rules))

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a 3-way merge ran")

    monkeypatch.setattr(context.MergeContext, "_full_merge", refuse)
    update_plan.apply_plan(local, planner.plan_update(local, base, up))
    assert (local / "a.yaml").read_text() == (  # and kpt's identity markers, as on every resource merged
        "apiVersion: v1\ndata:\n  a: '2'\n  z: keep\nkind: ConfigMap\nmetadata: # kpt-merge: /a\n  name: a\n"
        "  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|a'\n")


ANCHORED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {{x: y}}\ndata:\n  a: \"{value}\"\n"
CASES = {
    # reason: (origin, upstream, local, the update's options)
    "upstream changed comments": (cm("a", "1", "  b: x\n"), cm("a", "2", "  b: x # upstream's\n"), cm("a", "3", "  b: x\n"),
                                  []),
    "anchors and aliases": (ANCHORED.format(value=1), ANCHORED.format(value=2),
                            ANCHORED.format(value=3) + "spec: {l: *l}\n", []),
    "keys that are not strings": (cm("a", "1", "  1: one\n"), cm("a", "2", "  1: one\n"), cm("a", "3", "  1: one\n"), []),
}


@pytest.mark.parametrize("reason", CASES)
def test_what_plain_data_cannot_carry_goes_through_the_round_trip_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        reason: str) -> None:
    """Each document issue 45 leaves to ruamel.yaml, for its reason; its answer is upstream's value (kpt's rule).
    (Conflict markers go on the plain merge's text: tests/update/test_marks_as_data.py.)"""
    origin, upstream, local_text, extra = CASES[reason]
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    for root, text in ((base, origin), (up, upstream), (local, local_text)):
        root.mkdir()
        (root / "a.yaml").write_text(text)
    seen: list[str | None] = []
    real = context.MergeContext._merge_round_trip

    def spy(self: context.MergeContext, obj: Any, *args: Any) -> bool:
        seen.append(self.round_trip_reason(obj, *args[:2]))
        return real(self, obj, *args)

    monkeypatch.setattr(context.MergeContext, "_merge_round_trip", spy)
    plan = planner.plan_update(local, base, up, conflicts=ConflictPolicy(extra[1] if extra else "upstream-wins"))
    update_plan.apply_plan(local, plan)
    assert seen == [reason]
    data = yaml.safe_load((local / "a.yaml").read_text())
    assert data["data"]["a"] == "2"


def crd(group: str, kind: str) -> str:
    """A CRD of ``group`` whose ``spec.items`` is a list keyed by ``id`` (x-kubernetes-list-map-keys)."""
    return (f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {kind.lower()}s.{group}\n"
            f"spec:\n  group: {group}\n  names:\n    kind: {kind}\n    plural: {kind.lower()}s\n  scope: Namespaced\n"
            "  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
            "        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n"
            "              items:\n                type: array\n                x-kubernetes-list-type: map\n"
            "                x-kubernetes-list-map-keys: [id]\n                items:\n                  type: object\n")


def widget(items: str, replicas: int = 1) -> str:
    return (f"apiVersion: a.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  replicas: {replicas}\n"
            f"  items:\n{items}")


DEPLOY = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n"
          "      containers:\n      - name: app\n        image: app:{tag}\n")


def test_a_merge_reads_only_the_crds_of_the_kind_it_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Deployment changed on both sides reads none of the package's CRDs; a custom resource reads its own
    group's only, and its CRD's list keys still decide how its list merges (both sides' elements kept)."""
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    crds = {"crd-a.yaml": crd("a.example.com", "Widget"), "crd-b.yaml": crd("b.example.com", "Gadget")}
    versions = {
        base: (widget("  - id: x\n    v: 1\n"), DEPLOY.format(replicas=1, tag="v1")),
        up: (widget("  - id: x\n    v: 2\n  - id: up\n", replicas=2), DEPLOY.format(replicas=1, tag="v2")),
        local: (widget("  - id: x\n    v: 1\n  - id: mine\n", replicas=3), DEPLOY.format(replicas=3, tag="v1-pinned")),
    }
    for root, (w, d) in versions.items():
        root.mkdir()
        for name, text in {**crds, "w.yaml": w, "d.yaml": d}.items():
            (root / name).write_text(text)
    from krm_merge.schema import registry

    read: list[list[str]] = []
    real_init = registry.SchemaRegistry.__init__

    def spy(self: Any, crds: Any = (), declared: Any = ()) -> None:
        crds = list(crds)
        read.append(sorted({c["spec"]["group"] for c in crds}))
        real_init(self, crds, declared)

    monkeypatch.setattr(registry.SchemaRegistry, "__init__", spy)
    update_plan.apply_plan(local, planner.plan_update(local, base, up))
    assert sorted(read) == [[], ["a.example.com"]]  # apps: no CRD read; a.example.com: its own
    assert yaml.safe_load((local / "w.yaml").read_text())["spec"] == {
        "replicas": 2, "items": [{"id": "x", "v": 2}, {"id": "mine"}, {"id": "up"}]}
    assert yaml.safe_load((local / "d.yaml").read_text())["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v2"
