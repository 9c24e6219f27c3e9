"""resource-merge mode behaviour: placement, comments, conflicts, CRDs, config."""

from __future__ import annotations

from typing import Any

import pytest

from krm_merge.config import ConfigError
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.merge3 import ConflictPolicy
from krm_merge.modes import resource_merge

from .harness import items_of, run_mode

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1 # how many
  template:
    spec:
      containers:
      - name: main
        image: nginx:1
"""


def run(local: dict[str, str], origin: dict[str, str], upstream: dict[str, str], **cfg: Any) -> ResourceList:
    rl = ResourceList()
    rl.items = items_of("local", local) + items_of("origin", origin) + items_of("upstream", upstream)
    resource_merge.run(rl, resource_merge.config_from_configmap(cfg))
    return rl


def local_items(rl: ResourceList) -> dict[str, Any]:
    return {f"{o.path}#{o.index}": o for o in rl.items if (o.path or "").startswith("local/")}


def test_field_merge_keeps_local_comment_and_adds_kpt_merge_comment() -> None:
    local = DEPLOY.replace("replicas: 1 # how many", "replicas: 3 # how many")
    upstream = DEPLOY.replace("nginx:1", "nginx:2")
    rl = run({"app.yaml": local}, {"app.yaml": DEPLOY}, {"app.yaml": upstream})
    app = local_items(rl)["local/app.yaml#0"]
    assert "replicas: 3 # how many" in app.text
    assert "image: nginx:2" in app.text
    assert app.text.startswith("apiVersion: apps/v1\nkind: Deployment\nmetadata: # kpt-merge: /app\n")
    assert not rl.results


def test_upstream_addition_lands_under_local_prefix_and_origin_upstream_unchanged() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n  namespace: ns\ndata:\n  a: '1'\n"
    rl = run({"app.yaml": DEPLOY}, {"app.yaml": DEPLOY}, {"app.yaml": DEPLOY, "sub/cm.yaml": cm})
    new = local_items(rl)["local/sub/cm.yaml#0"]
    assert new.data["data"] == {"a": "1"}
    assert "metadata: # kpt-merge: ns/new" in new.text
    others = [o for o in rl.items if not o.path.startswith("local/")]
    assert len(others) == 5 and all("kpt-merge" not in o.text for o in others)


def test_deleted_upstream_modified_locally_kept_with_warning() -> None:
    local = DEPLOY.replace("replicas: 1", "replicas: 2")
    rl = run({"app.yaml": local}, {"app.yaml": DEPLOY}, {})
    assert "local/app.yaml#0" in local_items(rl)
    (warning,) = rl.results
    assert warning.severity == "warning" and "deleted upstream" in warning.message


def test_deleted_upstream_unmodified_locally_dropped() -> None:
    rl = run({"app.yaml": DEPLOY}, {"app.yaml": DEPLOY}, {})
    assert "local/app.yaml#0" not in local_items(rl)


@pytest.mark.parametrize(("policy", "image"), [("upstream-wins", "nginx:3"), ("local-wins", "nginx:2")])
def test_conflicts_reported_with_winner(policy: str, image: str) -> None:
    rl = run(
        {"app.yaml": DEPLOY.replace("nginx:1", "nginx:2")},
        {"app.yaml": DEPLOY},
        {"app.yaml": DEPLOY.replace("nginx:1", "nginx:3")},
        conflicts=policy,
    )
    assert f"image: {image}" in local_items(rl)["local/app.yaml#0"].text
    (result,) = rl.results
    assert result.field is not None
    assert result.field.path == "spec.template.spec.containers[name=main].image"
    assert (result.field.current_value, result.field.proposed_value) == ("nginx:2", "nginx:3")
    assert policy.split("-")[0] in result.message


def test_conflicts_fail_leaves_local_untouched() -> None:
    local = DEPLOY.replace("nginx:1", "nginx:2")
    rl = run({"app.yaml": local}, {"app.yaml": DEPLOY}, {"app.yaml": DEPLOY.replace("nginx:1", "nginx:3")}, conflicts="fail")
    assert rl.results.has_errors
    assert "image: nginx:2" in local_items(rl)["local/app.yaml#0"].text


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: fruits.example.com
spec:
  group: example.com
  names: {kind: Fruit, plural: fruits}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [id]
                items:
                  type: object
                  properties:
                    id: {type: string}
                    n: {type: integer}
"""
FRUIT = "apiVersion: example.com/v1\nkind: Fruit\nmetadata:\n  name: f\nspec:\n  items:\n  - id: a\n    n: 1\n"


def test_crd_schema_from_the_sources_makes_lists_associative() -> None:
    local = FRUIT + "  - id: b\n    n: 2\n"
    upstream = FRUIT.replace("n: 1", "n: 10") + "  - id: c\n    n: 3\n"
    rl = run({"crd.yaml": CRD, "f.yaml": local}, {"crd.yaml": CRD, "f.yaml": FRUIT}, {"crd.yaml": CRD, "f.yaml": upstream},
             fallbackKeys="")
    items = local_items(rl)["local/f.yaml#0"].data["spec"]["items"]
    assert items == [{"id": "a", "n": 10}, {"id": "b", "n": 2}, {"id": "c", "n": 3}]


def test_without_schema_or_fallback_keys_list_is_plain() -> None:
    local = FRUIT + "  - id: b\n    n: 2\n"
    upstream = FRUIT.replace("n: 1", "n: 10")
    rl = run({"f.yaml": local}, {"f.yaml": FRUIT}, {"f.yaml": upstream}, fallbackKeys="")
    assert local_items(rl)["local/f.yaml#0"].data["spec"]["items"] == [{"id": "a", "n": 10}]


def test_config_validation() -> None:
    assert resource_merge.config_from_typed({"fallbackKeys": ["id"], "conflicts": "fail"}).conflicts is ConflictPolicy.FAIL
    with pytest.raises(ConfigError, match="strategy"):
        resource_merge.config_from_configmap({"strategy": "yolo"})
    with pytest.raises(ConfigError, match="valid keys"):
        resource_merge.config_from_configmap({"nope": "x"})
    with pytest.raises(ConfigError, match="one folder"):
        resource_merge.config_from_configmap({"localPrefix": "a/b"})


SUB_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n"
SUB_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: '{}'\n"


def test_mode_keeps_a_changed_subpackage_deleted_upstream_whole() -> None:
    case = {
        "original": {"sub/Kptfile": SUB_KPTFILE, "sub/cm.yaml": SUB_CM.format(1)},
        "local": {"sub/Kptfile": SUB_KPTFILE, "sub/cm.yaml": SUB_CM.format(2)},
        "updated": {},
    }
    rl, files = run_mode(case)
    assert set(files) == {"Kptfile", "sub/Kptfile", "sub/cm.yaml"}
    assert any("subpackage sub deleted upstream but modified locally" in r.message for r in rl.results)


def test_mode_removes_an_unchanged_subpackage_deleted_upstream() -> None:
    case = {
        "original": {"sub/Kptfile": SUB_KPTFILE, "sub/cm.yaml": SUB_CM.format(1)},
        "local": {"sub/Kptfile": SUB_KPTFILE, "sub/cm.yaml": SUB_CM.format(1)},
        "updated": {},
    }
    _, files = run_mode(case)
    assert set(files) == {"Kptfile"}


def test_mode_subpackage_added_on_both_sides_is_an_error() -> None:
    case = {"original": {}, "local": {"sub/Kptfile": SUB_KPTFILE}, "updated": {"sub/Kptfile": SUB_KPTFILE}}
    with pytest.raises(KrmError, match='subpackage "sub" added in both upstream and local'):
        run_mode(case)


def test_mode_resource_follows_upstream_to_its_new_file_unless_local_moved_it() -> None:
    a = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: '1'\n"
    b = a.replace("name: a", "name: b")
    mine_a = a.replace("'1'", "'local'")  # changed locally, still in origin's file
    rl = run({"both.yaml": mine_a, "kept-by-me.yaml": b}, {"both.yaml": a + "---\n" + b},
             {"split/a.yaml": a, "split/b.yaml": b})
    placed = {o.data["metadata"]["name"]: o.path for o in rl.items if o.path.startswith("local/")
              and o.kind == "ConfigMap"}
    assert placed == {"a": "local/split/a.yaml", "b": "local/kept-by-me.yaml"}
    assert next(o for o in rl.items if o.path == "local/split/a.yaml").data["data"] == {"k": "local"}


def test_conflicts_mark_keeps_local_with_a_marker_and_a_warning() -> None:
    rl = run(
        {"app.yaml": DEPLOY.replace("nginx:1", "nginx:2")},
        {"app.yaml": DEPLOY},
        {"app.yaml": DEPLOY.replace("nginx:1", "nginx:3")},
        conflicts="mark",
    )
    assert 'image: nginx:2 # krm-merge:conflict upstream="nginx:3" origin="nginx:1"\n' in local_items(rl)["local/app.yaml#0"].text
    (result,) = rl.results
    assert result.severity == "warning" and "local's value, marked" in result.message
    assert result.tags == {"kind": "conflict"} and result.field.path == "spec.template.spec.containers[name=main].image"
