"""kpt's identity markers, byte for byte against real kpt: the ``# kpt-merge: NS/NAME`` comment and the
``internal.kpt.dev/upstream-identifier`` annotation, on every resource and where kpt writes them.

kpt appends the annotation after the last entry of ``metadata`` (or of
``annotations``), so a resource taken from upstream must not move it before
``name``; resources added upstream or locally, and every resource of
fast-forward and force-delete-replace, get both markers.  Every file written
must equal kpt's except where a documented rule keeps local's bytes (a
``metadata:`` line carrying a user's comment keeps it: docs/merge.md).  An
explicit null nobody changed stays where resource-merge edits a resource
(kpt's merge drops every null of a resource it writes; issue 33: the review
diff shows upstream's change only).  Contents are drawn from fixed seeds.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from krm_merge.krm import splice
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.update import markers
from tests.conftest import require_binary

from .world import World

pytestmark = pytest.mark.e2e

SEEDS = (41, 42, 43)
STRATEGIES = ("resource-merge", "fast-forward", "force-delete-replace")


def resource(rng: random.Random, kind: str, name: str, namespace: str, value: str) -> str:
    """A resource in one of the shapes real packages have (labels, annotations, namespaces, comments)."""
    meta = f"  name: {name}\n" + (f"  namespace: {namespace}\n" if namespace else "")
    if rng.random() < 0.5:
        meta += f"  labels:\n    app: {name}\n"
    if rng.random() < 0.4:
        meta += "  annotations:\n    owner: team # who to ask\n"
    if kind == "ConfigMap":
        return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n{meta}data:\n  k: \"{value}\" # the value\n"
    return f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n{meta}spec:\n  replicas: {value}\n"


def versions(rng: random.Random) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """v1 and v2: changed resources, one changed only in a comment, one multi-document file, one added."""
    specs = [("ConfigMap" if i % 2 else "Deployment", f"r{i}", rng.choice(["", "ns1"])) for i in range(5)]
    v1 = {f"r{i}.yaml": resource(random.Random(rng.random()), k, n, ns, "1") for i, (k, n, ns) in enumerate(specs[:3])}
    # explicit nulls nobody changes, in resources upstream changes (kpt's merge drops them)
    for rel in ("r0.yaml", "r1.yaml"):
        v1[rel] = v1[rel].replace("metadata:\n", "metadata:\n  creationTimestamp: null\n", 1)
    v1["multi.yaml"] = "---\n".join(resource(random.Random(i), k, n, ns, "1") for i, (k, n, ns) in enumerate(specs[3:]))
    v2: dict[str, str | None] = {
        "r0.yaml": v1["r0.yaml"].replace(": 1\n", ": 2\n").replace('"1"', '"2"'),
        "r1.yaml": (v1["r1.yaml"] or "").replace("# the value", "# a new comment").replace("spec:", "spec: # new"),
        "multi.yaml": (v1["multi.yaml"] or "").replace('"1"', '"3"').replace(": 1\n", ": 3\n"),
        "added.yaml": resource(rng, "ConfigMap", "added", rng.choice(["", "ns2"]), "9"),
    }
    return v1, v2


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", SEEDS)
def test_files_written_equal_kpts_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, strategy: str) -> None:
    require_binary("kpt")
    require_binary("git")
    rng = random.Random(seed)
    world = World(tmp_path, monkeypatch)
    v1, v2 = versions(rng)
    world.commit(v1, tag="v1")
    world.commit(v2, tag="v2")
    world.get("v1")
    if strategy != "fast-forward":
        world.edit_local({"mine.yaml": resource(rng, "ConfigMap", "mine", rng.choice(["", "ns1"]), "local")})
    assert world.both("v2", strategy) == (0, 0)
    names = sorted(p.name for p in world.kpt_pkg.iterdir())
    assert names == sorted(p.name for p in world.our_pkg.iterdir())
    for name in names:
        ours, theirs = (world.our_pkg / name).read_bytes(), (world.kpt_pkg / name).read_bytes()
        if strategy == "resource-merge" and name in ("r0.yaml", "r1.yaml"):
            assert ours.count(NULL_LINE) == 1 and theirs.count(NULL_LINE) == 0, name  # kept: nobody changed it
            ours = ours.replace(NULL_LINE, b"")
        assert ours == theirs, name


NULL_LINE = b"  creationTimestamp: null\n"


def test_markers_on_a_resource_the_text_editor_declines() -> None:
    """A literal block with keep chomping ends metadata: the annotation still arrives (through the data editor)."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: |+\n      a\n\n\ndata: {}\n"
    obj = KubeObject(text)
    markers.add_identity_markers(obj)  # the rule under test
    assert obj.text.startswith("apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /a\n")
    assert obj.data["metadata"]["annotations"] == {markers.UPSTREAM_IDENTIFIER: "|ConfigMap|default|a"}
    assert obj.data["metadata"]["labels"] == {"x": "a\n\n\n"}


def test_annotation_goes_after_the_last_entry_and_its_comments() -> None:
    text = "kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    foo: bar\n    # about foo\n\n# data\ndata: {}\n"
    out = splice.with_annotations(text, {markers.UPSTREAM_IDENTIFIER: "|ConfigMap|default|a"})
    assert out == ("kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    foo: bar\n    # about foo\n"
                   "    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|a'\n\n# data\ndata: {}\n")
