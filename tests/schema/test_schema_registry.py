"""SchemaRegistry precedence, declared keys and the 3-way-merge helpers."""

from __future__ import annotations

import pytest

from krm_merge.schema import (
    KPT_DOCUMENTED_ASSOCIATIVE_KEYS,
    NO_META,
    OPEN_SCHEMA,
    DeclaredKey,
    DeclaredKeyError,
    SchemaLookupError,
    SchemaRegistry,
    associative_key,
    builtin_schema,
)

POD_SPEC = "spec.template.spec"


def crd(group="example.com", kind="Widget", list_key="name"):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "items": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": [list_key],
                                            "items": {"type": "object"},
                                        },
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


def test_builtin_kinds_come_from_the_table(walk):
    registry = SchemaRegistry()
    node = registry.for_object("apps/v1", "Deployment")
    assert node is builtin_schema("apps/v1", "Deployment")
    assert walk(node, f"{POD_SPEC}.containers[]")[1].merge_key == "name"


def test_unknown_kinds_get_an_open_schema():
    registry = SchemaRegistry()
    node = registry.for_object("example.com/v1", "Widget")
    assert node is OPEN_SCHEMA
    assert node.lookup_slice("anything")[1] == NO_META


def test_crd_schemas_are_used_for_their_kind_and_version(walk):
    registry = SchemaRegistry(crds=[crd()])
    node = registry.for_object("example.com/v1", "Widget")
    assert walk(node, "spec.items[]")[1].merge_key == "name"
    with pytest.raises(SchemaLookupError):
        node.lookup_struct("spek")
    assert registry.stand_in_for("example.com/v1", "Widget") is None
    # Another group of the same kind is unknown...
    assert registry.for_object("other.com/v1", "Widget") is OPEN_SCHEMA
    assert registry.stand_in_for("other.com/v1", "Widget") is None
    # ...another version the CRD does not serve stands in for with its served one.
    assert registry.for_object("example.com/v2", "Widget") is node
    assert registry.stand_in_for("example.com/v2", "Widget") == "example.com/v1"


@pytest.mark.parametrize(
    ("api_version", "kind", "stand_in"),
    [
        ("apps/v1alpha1", "Deployment", "apps/v1"),
        ("apps/v2", "StatefulSet", "apps/v1"),
        ("extensions/v1alpha1", "Deployment", "extensions/v1beta1"),
        ("batch/v2", "CronJob", "batch/v1"),
        ("v2", "Service", "v1"),
    ],
)
def test_a_version_never_served_uses_the_newest_served_one(walk, api_version, kind, stand_in):
    registry = SchemaRegistry()
    assert registry.stand_in_for(api_version, kind) == stand_in
    assert registry.for_object(api_version, kind) is builtin_schema(stand_in, kind)


def test_served_versions_and_other_kinds_need_no_stand_in(walk):
    registry = SchemaRegistry()
    for api_version in ("apps/v1", "apps/v1beta1", "apps/v1beta2", "extensions/v1beta1"):
        assert registry.stand_in_for(api_version, "Deployment") is None
        assert walk(registry.for_object(api_version, "Deployment"), f"{POD_SPEC}.containers[]")[1].merge_key == "name"
    assert registry.stand_in_for("apps/v1", "Widget") is None
    assert registry.for_object("apps/v1", "Widget") is OPEN_SCHEMA
    assert registry.stand_in_for("", "Pod") is None  # no apiVersion: nothing to stand in for
    assert registry.for_object("", "Pod") is OPEN_SCHEMA


def test_version_priority_is_kubernetes_order():
    from krm_merge.schema.registry import version_priority

    ordered = ["v2", "v1", "v1beta2", "v1beta1", "v1alpha2", "v1alpha1", "v10x", "abc"]
    assert sorted(ordered, key=version_priority, reverse=True) == ordered[:-2] + ["v10x", "abc"]


def test_crd_overrides_builtin(walk):
    # A (contrived) CRD that redefines apps/v1 Deployment wins over the table.
    registry = SchemaRegistry(crds=[crd(group="apps", kind="Deployment")])
    node = registry.for_object("apps/v1", "Deployment")
    assert walk(node, "spec.items[]")[1].merge_key == "name"
    with pytest.raises(SchemaLookupError):
        walk(node, "spec.template")


def test_declared_keys_override_builtin(walk):
    registry = SchemaRegistry(
        declared=[DeclaredKey(kind="Deployment", path=f"{POD_SPEC}.tolerations", merge_key="key")]
    )
    node = registry.for_object("apps/v1", "Deployment")
    _, meta = walk(node, f"{POD_SPEC}.tolerations[]")
    assert meta.strategies == ("merge",) and meta.merge_key == "key"
    # Untouched fields keep the built-in metadata and errors.
    assert walk(node, f"{POD_SPEC}.containers[].env[]")[1].merge_key == "name"
    with pytest.raises(SchemaLookupError):
        walk(node, f"{POD_SPEC}.nope")
    # The built-in schema itself is not modified.
    assert walk(builtin_schema("apps/v1", "Deployment"), f"{POD_SPEC}.tolerations[]")[1].strategies == ()


def test_declared_keys_override_crds(walk):
    registry = SchemaRegistry(
        crds=[crd()], declared=[DeclaredKey(kind="Widget", path="spec.items", merge_key="id")]
    )
    _, meta = walk(registry.for_object("example.com/v1", "Widget"), "spec.items[]")
    assert meta.merge_key == "id"


def test_declared_keys_on_unknown_kinds_and_through_lists(walk):
    registry = SchemaRegistry(
        declared=[
            DeclaredKey(kind="Widget", path="spec.groups", merge_key="name"),
            DeclaredKey(kind="Widget", path="spec.groups[].members", merge_key="email"),
            DeclaredKey(kind="Widget", path="spec.tags"),
        ]
    )
    node = registry.for_object("example.com/v1", "Widget")
    assert walk(node, "spec.groups[]")[1].merge_key == "name"
    assert walk(node, "spec.groups[].members[]")[1].merge_key == "email"
    tags = walk(node, "spec.tags[]")[1]
    assert tags.strategies == ("merge",) and tags.merge_key is None
    assert walk(node, "spec.other[]")[1] == NO_META


def test_declared_group_restricts_the_match(walk):
    registry = SchemaRegistry(
        declared=[DeclaredKey(kind="Widget", group="example.com", path="spec.items", merge_key="id")]
    )
    assert walk(registry.for_object("example.com/v1", "Widget"), "spec.items[]")[1].merge_key == "id"
    assert walk(registry.for_object("other.com/v1", "Widget"), "spec.items[]")[1] == NO_META


def test_declared_core_group_is_the_empty_string(walk):
    registry = SchemaRegistry(declared=[DeclaredKey(kind="Service", group="", path="spec.externalIPs")])
    assert walk(registry.for_object("v1", "Service"), "spec.externalIPs[]")[1].strategies == ("merge",)


@pytest.mark.parametrize(
    "key",
    [
        DeclaredKey(kind="", path="spec.x", merge_key="k"),
        DeclaredKey(kind="W", path="", merge_key="k"),
        DeclaredKey(kind="W", path="spec..x", merge_key="k"),
        DeclaredKey(kind="W", path="spec.x", merge_key="k", strategy="mrege"),
    ],
)
def test_malformed_declarations_are_rejected(key):
    with pytest.raises(DeclaredKeyError):
        SchemaRegistry(declared=[key])


def test_associative_key_follows_kyaml(walk):
    deployment = builtin_schema("apps/v1", "Deployment")
    pod_spec, _ = walk(deployment, POD_SPEC)
    container, _ = walk(deployment, f"{POD_SPEC}.containers[]")
    metadata, _ = walk(deployment, "metadata")
    assert associative_key(pod_spec, "containers") == ("name",)
    assert associative_key(container, "ports") == ("containerPort", "protocol")
    assert associative_key(metadata, "finalizers") == ()
    assert associative_key(pod_spec, "tolerations") is None
    assert associative_key(container, "args") is None
    assert associative_key(pod_spec, "notAField") is None
    assert associative_key(None, "containers") is None
    assert associative_key(OPEN_SCHEMA, "containers") is None
    # Only a patch strategy makes a list associative: list-map-keys alone do not.
    policy = builtin_schema("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")
    status, _ = walk(policy, "status")
    assert status.lookup_slice("conditions")[1].list_map_keys == ("type",)
    assert associative_key(status, "conditions") is None


def test_kpt_documented_keys_are_recorded():
    assert KPT_DOCUMENTED_ASSOCIATIVE_KEYS == (
        "mountPath", "devicePath", "ip", "type", "topologyKey", "name", "containerPort",
    )


def test_registry_caches_per_type():
    registry = SchemaRegistry(declared=[DeclaredKey(kind="Pod", path="spec.tolerations", merge_key="key")])
    assert registry.for_object("v1", "Pod") is registry.for_object("v1", "Pod")
