"""reorder-merge mode: config forms, targeting, ordering options, errors."""

from __future__ import annotations

import pytest

from krm_merge.config import ConfigError
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.modes import reorder_merge as rm

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
  labels:
    team: {team}
spec:
  template:
    spec:
      containers:
      - name: a # keep me
        image: a:1
      - name: b
        image: b:1
"""
KPTFILE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
  annotations:
    config.kubernetes.io/local-config: "true"
info:
  description: x
"""


def package() -> ResourceList:
    rl = ResourceList()
    rl.items = [
        KubeObject(DEPLOY.format(name="web", ns="prod", team="blue")),
        KubeObject(DEPLOY.format(name="api", ns="prod", team="red")),
        KubeObject(DEPLOY.format(name="web", ns="dev", team="blue")),
        KubeObject(KPTFILE),
    ]
    return rl


def containers(obj: KubeObject) -> list[str]:
    return [c["name"] for c in obj.get("spec.template.spec.containers")]


ORDER_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  template:
    spec:
      $setElementOrder/containers:
      - name: c
      - name: a
      containers:
      - name: c
        image: c:1
"""


def test_configmap_patch_hits_only_the_named_item() -> None:
    rl = package()
    rm.run(rl, rm.config_from_configmap({"patch": ORDER_PATCH}))
    web_prod, api, web_dev, kptfile = rl.items
    assert containers(web_prod) == ["c", "a", "b"]
    assert "- name: a # keep me" in web_prod.text
    assert not api.changed and not web_dev.changed and not kptfile.changed


def test_server_only_items_first_gives_the_proposal_layout() -> None:
    rl = package()
    rm.run(rl, rm.config_from_configmap({"patch": ORDER_PATCH, "serverOnlyItems": "first"}))
    assert containers(rl.items[0]) == ["b", "c", "a"]


def test_namespace_omitted_matches_every_namespace() -> None:
    rl = package()
    rm.run(rl, rm.config_from_configmap({"patch": ORDER_PATCH.replace("  namespace: prod\n", "")}))
    assert containers(rl.items[0]) == containers(rl.items[2]) == ["c", "a", "b"]


def test_typed_target_selector_hits_many_and_skips_local_config() -> None:
    rl = package()
    config = rm.config_from_typed({
        "patches": [{"target": {"labelSelector": "team=blue"},
                     "patch": {"metadata": {"annotations": {"owner": "blue-team"}}}},
                    {"target": {"name": "pkg"}, "patch": {"info": {"description": "changed"}}, "optional": True}],
    })
    rm.run(rl, config)
    assert [o.annotations.get("owner") for o in rl.items] == ["blue-team", None, "blue-team", None]
    assert not rl.items[3].changed  # local config: not selected without naming its kind
    assert [r.severity for r in rl.results] == ["warning"]


def test_local_config_is_patched_when_named_explicitly() -> None:
    rl = package()
    config = rm.config_from_typed({"patches": [{"target": {"kind": "Kptfile", "name": "pkg"},
                                                "patch": {"info": {"description": "changed"}}}]})
    rm.run(rl, config)
    assert rl.items[3].get("info.description") == "changed"
    warnings = [r for r in rl.results if r.severity == "warning"]
    assert len(warnings) == 1 and "matches only local-config items (Kptfile/pkg" in warnings[0].message


def test_a_functionconfig_passed_as_its_own_patch_is_reported() -> None:
    """`patch=$(cat fn-config.yaml)` from inside the package matches that file only: said, not silent."""
    fn_config = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
                 "    config.kubernetes.io/local-config: \"true\"\ndata:\n  mode: reorder-merge\n"
                 "  patch: |\n    kind: Deployment\n")
    rl = package()
    rl.items.append(KubeObject(fn_config))
    rm.run(rl, rm.config_from_configmap({"patch": fn_config}))
    [warning] = [r for r in rl.results if r.severity == "warning"]
    assert "patch 1 matches only local-config items (ConfigMap/fn" in warning.message
    assert "--fn-config" in warning.message


def test_a_patch_reaching_a_deployed_item_gives_no_local_config_warning() -> None:
    rl = package()
    rm.run(rl, rm.config_from_configmap({"patch": ORDER_PATCH}))
    assert not [r for r in rl.results if "local-config" in r.message]


def test_no_match_lists_near_misses() -> None:
    rl = package()
    patch = ORDER_PATCH.replace("name: web", "name: wbe")
    with pytest.raises(KrmError) as err:
        rm.run(rl, rm.config_from_configmap({"patch": patch}))
    assert "matches no item" in err.value.message
    assert "near misses: Deployment/prod/web, Deployment/prod/api, Deployment/dev/web" in err.value.message


def test_smp_error_names_item_patch_and_field() -> None:
    rl = package()
    # The patch list names c before a; the order list says a before c.
    bad = ORDER_PATCH.replace(
        "      - name: c\n      - name: a\n      containers:\n      - name: c\n        image: c:1\n",
        "      - name: a\n      - name: c\n      containers:\n      - name: c\n        image: c:1\n      - name: a\n        image: a:2\n",
    )
    assert bad != ORDER_PATCH
    with pytest.raises(KrmError) as err:
        rm.run(rl, rm.config_from_configmap({"patch": bad}))
    assert "doesn't match $setElementOrder list" in err.value.message
    assert err.value.obj is rl.items[0]
    assert err.value.field is not None and "containers" in err.value.field
    assert err.value.tags == {"patch": "patch 1"}


def test_missing_merge_key_on_custom_kind_says_how_to_declare_one() -> None:
    rl = ResourceList()
    rl.items = [KubeObject("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  items:\n  - name: a\n")]
    patch = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  $setElementOrder/items:\n  - name: b\n  items:\n  - name: b\n"
    with pytest.raises(KrmError) as err:
        rm.run(rl, rm.config_from_configmap({"patch": patch}))
    assert "mergeKeys" in err.value.message
    # ... and with the key declared it works
    keys = "- {kind: Thing, path: spec.items, key: name}\n"
    rm.run(rl, rm.config_from_configmap({"patch": patch, "mergeKeys": keys}))
    # the API server's order for live [a], order [b], patch [b] (checked with kubectl on containers)
    assert [i["name"] for i in rl.items[0].get("spec.items")] == ["b", "a"]


@pytest.mark.parametrize(
    "data,key",
    [
        ({}, "patch"),
        ({"patch": "- a\n"}, "data.patch"),
        ({"patch": "a: [\n"}, "data.patch"),
        ({"patch": ORDER_PATCH, "serverOnlyItems": "last"}, "data.serverOnlyItems"),
        ({"patch": ORDER_PATCH, "mergeKeys": "- {path: x}"}, "data.mergeKeys[0]"),
        ({"patch": ORDER_PATCH, "bogus": "1"}, "data.bogus"),
    ],
)
def test_config_errors_name_the_key(data: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        rm.config_from_configmap(data)
    assert err.value.key == key


def test_typed_config_errors() -> None:
    with pytest.raises(ConfigError) as err:
        rm.config_from_typed({"patches": [{"patch": {}, "target": {"knd": "X"}}]})
    assert err.value.key == "spec.patches[0].target.knd"
    with pytest.raises(ConfigError) as err:
        rm.config_from_typed({"patches": ["nope"]})
    assert err.value.key == "spec.patches[0]"


def test_patch_keys_must_be_strings() -> None:
    with pytest.raises(ConfigError) as err:
        rm.config_from_configmap({"patch": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  2: x\n"})
    assert "key 2 at data is not a string" in err.value.message
    with pytest.raises(ConfigError):
        rm.config_from_typed({"desired": [{"apiVersion": "v1", "kind": "ConfigMap", None: "x"}]})
