"""Schemas derived from CustomResourceDefinitions."""

from __future__ import annotations

import pytest

from krm_merge.schema import NO_META, OPEN_SCHEMA, InvalidCrdError, SchemaLookupError, crd_schemas, is_crd

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "port": {"x-kubernetes-int-or-string": True},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {
                        "type": "object",
                        "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}},
                    },
                },
                "backends": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "weight": {"type": "integer"},
                            "tags": {
                                "type": "array",
                                "x-kubernetes-list-type": "set",
                                "items": {"type": "string"},
                            },
                        },
                    },
                },
                "rules": {
                    "type": "array",
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "id",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"id": {"type": "string"}}},
                },
                "args": {"type": "array", "items": {"type": "string"}},
                "atomicThings": {
                    "type": "array",
                    "x-kubernetes-list-type": "atomic",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "selector": {"type": "object", "additionalProperties": {"type": "string"}},
                "pools": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"size": {"type": "integer"}},
                    },
                },
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"name": {"type": "string"}},
                },
                "anything": {},
            },
        },
    },
}


def widget_crd(**spec_extra):
    spec = {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": WIDGET_SCHEMA}},
            {"name": "v2", "served": True, "storage": False},
        ],
    }
    spec.update(spec_extra)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": spec,
    }


@pytest.fixture
def widget():
    return crd_schemas(widget_crd())[("example.com", "v1", "Widget")]


def test_one_schema_per_version():
    schemas = crd_schemas(widget_crd())
    assert set(schemas) == {("example.com", "v1", "Widget"), ("example.com", "v2", "Widget")}


def test_single_key_list_map_merges_on_that_key(walk, widget):
    node, meta = walk(widget, "spec.backends[]")
    assert meta.strategies == ("merge",)
    assert meta.merge_key == "name"
    assert meta.list_map_keys == ("name",)
    assert meta.list_type == "map"
    _, tags = node.lookup_slice("tags")
    assert tags.strategies == ("merge",) and tags.merge_key is None  # set of scalars


def test_multi_key_list_map_keeps_keys_but_is_replaced_by_smp(walk, widget):
    _, meta = walk(widget, "spec.ports[]")
    assert meta.strategies == ()
    assert meta.merge_key is None
    assert meta.list_map_keys == ("port", "protocol")


def test_explicit_patch_extensions_win_over_list_type(walk, widget):
    _, meta = walk(widget, "spec.rules[]")
    assert meta.strategies == ("merge",)
    assert meta.merge_key == "id"


def test_atomic_and_plain_lists_have_no_strategy(walk, widget):
    assert walk(widget, "spec.atomicThings[]")[1].strategies == ()
    assert walk(widget, "spec.args[]")[1] == NO_META


def test_unknown_field_uses_the_v3_wording(widget):
    spec, _ = widget.lookup_struct("spec")
    with pytest.raises(SchemaLookupError) as caught:
        spec.lookup_struct("replicaz")
    assert str(caught.value) == 'unable to find api field "replicaz"'


def test_preserve_unknown_fields_and_untyped_values_are_arbitrary(walk, widget):
    node, meta = walk(widget, "spec.config")
    assert node is OPEN_SCHEMA and meta == NO_META
    assert walk(widget, "spec.config.deep.deeper")[1] == NO_META
    assert walk(widget, "spec.anything.x")[0] is OPEN_SCHEMA
    # Known fields of a preserve-unknown object are typed, others are open.
    with pytest.raises(SchemaLookupError, match="primitive"):
        walk(widget, "spec.template.name.x")
    assert walk(widget, "spec.template.other.x")[0] is OPEN_SCHEMA


def test_maps_use_additional_properties(walk, widget):
    with pytest.raises(SchemaLookupError, match="primitive"):
        walk(widget, "spec.selector.*.x")
    pool, meta = walk(widget, "spec.pools.*")
    assert meta == NO_META
    with pytest.raises(SchemaLookupError, match='"sizes"'):
        pool.lookup_struct("sizes")


def test_int_or_string_is_a_primitive(walk, widget):
    with pytest.raises(SchemaLookupError, match="expected kind, but got primitive"):
        walk(widget, "spec.port.x")


def test_metadata_is_the_builtin_object_meta(walk, widget):
    _, meta = walk(widget, "metadata.finalizers[]")
    assert meta.strategies == ("merge",)
    _, meta = walk(widget, "metadata.ownerReferences[]")
    assert meta.merge_key == "uid"


def test_version_without_schema_knows_only_metadata(walk):
    v2 = crd_schemas(widget_crd())[("example.com", "v2", "Widget")]
    assert walk(v2, "spec.anything.at.all")[1] == NO_META
    assert walk(v2, "metadata.finalizers[]")[1].strategies == ("merge",)


def test_v1beta1_layout_with_shared_validation(walk):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "version": "v1",
            "names": {"kind": "Widget"},
            "validation": {"openAPIV3Schema": WIDGET_SCHEMA},
        },
    }
    schemas = crd_schemas(crd)
    assert list(schemas) == [("example.com", "v1", "Widget")]
    assert walk(schemas[("example.com", "v1", "Widget")], "spec.backends[]")[1].merge_key == "name"


@pytest.mark.parametrize(
    "crd",
    [
        {"kind": "CustomResourceDefinition", "metadata": {"name": "x"}},
        {"spec": {"names": {"kind": "Widget"}, "versions": [{"name": "v1"}]}},
        {"spec": {"group": "example.com", "versions": [{"name": "v1"}]}},
        {"spec": {"group": "example.com", "names": {"kind": "W"}, "versions": [{"served": True}]}},
    ],
)
def test_malformed_crds_raise_invalid_crd(crd):
    with pytest.raises(InvalidCrdError):
        crd_schemas(crd)


def test_is_crd():
    assert is_crd(widget_crd())
    assert not is_crd({"apiVersion": "v1", "kind": "CustomResourceDefinition"})
    assert not is_crd({"apiVersion": "apiextensions.k8s.io/v1", "kind": "Widget"})
