"""reorder-merge at scale (issue 15): the target index, many-document patches, offline apply.

Speed itself is measured in ``bench/``; these tests prove the faster paths give
the same answers as the simple ones they replace.
"""

from __future__ import annotations

import itertools
import random

import pytest
import yaml

from krm_merge.krm import yamlio
from krm_merge.yaml.libyaml import Loader
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.selectors import ItemIndex, Selector, select
from krm_merge.modes import reorder_merge as rm

ITEM = """\
apiVersion: {api}
kind: {kind}
metadata:
  name: {name}
  namespace: {ns}
  labels:
    team: {team}
    tier: {tier}
  annotations:
    owner: {owner}
data:
  x: "1"
"""


def random_items(rng: random.Random, count: int) -> list[KubeObject]:
    items = []
    for _ in range(count):
        kind = rng.choice(["Deployment", "Service", "ConfigMap"])
        api = "v1" if kind != "Deployment" else rng.choice(["apps/v1", "apps/v1beta1"])
        items.append(KubeObject(ITEM.format(
            api=api, kind=kind, name=rng.choice(["web", "api", "db", "web-1", "web-2"]),
            ns=rng.choice(["dev", "prod"]), team=rng.choice(["red", "blue"]),
            tier=rng.choice(["a", "b", "c"]), owner=rng.choice(["me", "you"]))))
    return items


SELECTORS = [
    {}, {"kind": "Deployment"}, {"name": "web"}, {"kind": "Service", "name": "api"},
    {"name": "web-.*"}, {"kind": "Deployment", "name": "web.*", "namespace": "prod"},
    {"labelSelector": "team=red"}, {"labelSelector": "team=red,tier=b", "kind": "ConfigMap"},
    {"annotationSelector": "owner=me"}, {"group": "apps", "version": "v1beta1"},
    {"apiVersion": "v1", "name": "db"}, {"name": "nothing"}, {"labelSelector": "team=green"},
]


@pytest.mark.parametrize("seed", range(5))
def test_index_selects_exactly_what_a_scan_selects(seed: int) -> None:
    rng = random.Random(seed)
    items = random_items(rng, 60)
    index = ItemIndex(items)
    for spec in SELECTORS:
        selector = Selector.from_dict(spec)
        for local in (False, True):
            assert index.select(selector, include_local_config=local) == select(items, selector, include_local_config=local)


def test_index_follows_edits_of_identity() -> None:
    items = random_items(random.Random(7), 40)
    index = ItemIndex(items)
    by_label = Selector.from_dict({"labelSelector": "team=red"})
    assert index.select(by_label)  # builds the label table before the edits
    rng = random.Random(8)
    for obj in rng.sample(items, 15):
        before = index.identity(obj)
        data = obj.copy_data()
        data["metadata"]["name"] = rng.choice(["web", "renamed"])
        data["metadata"]["labels"]["team"] = rng.choice(["red", "green"])
        data["kind"] = rng.choice(["Deployment", "Job"])
        obj.set_data(data)
        index.refresh(obj, before)
    for spec in SELECTORS + [{"name": "renamed"}, {"kind": "Job"}, {"labelSelector": "team=green"}]:
        selector = Selector.from_dict(spec)
        assert index.select(selector) == select(items, selector)


def test_a_later_patch_sees_the_label_an_earlier_patch_added() -> None:
    rl = ResourceList()
    rl.items = [KubeObject(ITEM.format(api="v1", kind="ConfigMap", name=f"c{n}", ns="dev", team="red",
                                       tier="a", owner="me")) for n in range(3)]
    config = rm.config_from_typed({"patches": [
        {"target": {"name": "c1"}, "patch": {"metadata": {"labels": {"picked": "yes"}}}},
        {"target": {"labelSelector": "picked=yes"}, "patch": {"data": {"x": "2"}}},
    ]})
    rm.run(rl, config)
    assert [obj.get("data.x") for obj in rl.items] == ["1", "2", "1"]


def test_renamed_item_is_found_by_its_new_name() -> None:
    rl = ResourceList()
    rl.items = [KubeObject(ITEM.format(api="v1", kind="ConfigMap", name="old", ns="dev", team="red",
                                       tier="a", owner="me"))]
    config = rm.config_from_typed({"patches": [
        {"target": {"kind": "ConfigMap", "name": "old"}, "patch": {"metadata": {"name": "new"}}},
        {"patch": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\ndata:\n  x: \"2\"\n"},
        {"target": {"name": "old"}, "optional": True, "patch": {"data": {"x": "3"}}},
    ]})
    rm.run(rl, config)
    assert rl.items[0].get("metadata.name") == "new"
    assert rl.items[0].get("data.x") == "2"
    assert "patch 3 matches no item" in rl.results[0].message


def test_many_patch_documents_each_hit_their_own_item() -> None:
    rl = ResourceList()
    rl.items = [KubeObject(ITEM.format(api="v1", kind="ConfigMap", name=f"c{n}", ns="dev", team="red",
                                       tier="a", owner="me")) for n in range(50)]
    patches = "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{n}\ndata:\n  x: \"{n}\"\n"
                           for n in range(50))
    rm.run(rl, rm.config_from_configmap({"patch": patches}))
    assert [obj.get("data.x") for obj in rl.items] == [str(n) for n in range(50)]


PIECES = ["a: 1\n", "---\n", "# c\n", "\n", "b:\n  c: [1, 2]\n", "--- \n", "- x\n", "  # i\n",
          "k: |\n  x\n", "--- |\n  t\n", "...\n"]


def test_multi_document_text_reads_as_libyaml_reads_it() -> None:
    """The fast reader splits ``---`` streams itself; every split must match libyaml's."""
    fast_used = 0
    for k in range(1, 4):
        for combo in itertools.product(PIECES, repeat=k):
            text = "".join(combo)
            try:
                expected = list(yaml.load_all(text, Loader=Loader))
            except yaml.YAMLError:
                expected = None
            try:
                got = yamlio.load_all_data(text)
            except Exception:
                got = None
            assert got == expected, repr(text)
            fast = yamlio._load_all_fast(text) if text.strip() else None
            if fast is not None:
                fast_used += 1
                assert fast == expected, repr(text)
    assert fast_used > 100


OFFLINE_ITEM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app # keep
  namespace: ns
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: app:1
"""


def test_offline_apply_writes_last_applied_in_place() -> None:
    """The new last-applied annotation (JSON and a newline) is spliced in, not re-printed by ruamel."""
    rl = ResourceList()
    rl.items = [KubeObject(OFFLINE_ITEM)]
    desired = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: ns\n"
               "spec:\n  replicas: 3\n")
    rm.run(rl, rm.config_from_configmap({"desired": desired}))
    obj = rl.items[0]
    assert not obj.has_tree  # the fast editor took the edit
    slow = KubeObject(OFFLINE_ITEM)
    _ = slow.rt
    slow.set_data(obj.data)
    assert obj.text == slow.text
    assert "  name: app # keep\n" in obj.text
    assert obj.get("spec.replicas") == 3


def test_streaming_entry_point_prints_what_run_function_prints() -> None:
    """The CLI's streaming path (one copy of the input alive) gives run_function's bytes and exit code."""
    import io

    from krm_merge.runner import run_function, run_function_streams

    items = "".join("- " + ITEM.format(api="v1", kind="ConfigMap", name=f"c{n}", ns="dev", team="red", tier="a",
                                       owner="me").replace("\n", "\n  ").rstrip(" ") for n in range(800))
    fc = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n" \
         "    mode: reorder-merge\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n" \
         "      metadata:\n        name: c7\n      data:\n        x: \"9\"\n"
    outputs, codes = [], []
    for given in (f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}{fc}".encode(),
                  b"\xff\xfe not utf-8", b"kind: Pod\n"):
        out = io.BytesIO()
        code, _ = run_function_streams(io.BytesIO(given), out)
        expected, expected_code = run_function(given)
        assert out.getvalue() == expected.encode() and code == expected_code
        outputs.append(out.getvalue())
        codes.append(code)
    assert codes == [0, 1, 1]
    assert outputs[0].count(b'x: "9"') == 2 and len(outputs[0]) > 1 << 16  # the item and the functionConfig; several chunks
