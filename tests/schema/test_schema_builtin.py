"""Built-in Kubernetes patch metadata: lookups on real kinds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge.schema import (
    NO_META,
    OPEN_SCHEMA,
    SchemaLookupError,
    builtin_kubernetes_version,
    builtin_schema,
)
from krm_merge.schema.builtin import TABLE_RESOURCE, builtin_api_versions, builtin_last_served, load_table

POD_SPEC = "spec.template.spec"


def deployment():
    node = builtin_schema("apps/v1", "Deployment")
    assert node is not None
    return node


@pytest.mark.parametrize(
    ("api_version", "kind", "path", "strategies", "merge_key", "list_map_keys"),
    [
        ("apps/v1", "Deployment", f"{POD_SPEC}.containers[]", ("merge",), "name", ("name",)),
        ("apps/v1", "Deployment", f"{POD_SPEC}.initContainers[]", ("merge",), "name", ("name",)),
        (
            "apps/v1",
            "Deployment",
            f"{POD_SPEC}.containers[].ports[]",
            ("merge",),
            "containerPort",
            ("containerPort", "protocol"),
        ),
        ("apps/v1", "Deployment", f"{POD_SPEC}.containers[].env[]", ("merge",), "name", ("name",)),
        (
            "apps/v1",
            "Deployment",
            f"{POD_SPEC}.containers[].volumeMounts[]",
            ("merge",),
            "mountPath",
            ("mountPath",),
        ),
        (
            "apps/v1",
            "Deployment",
            f"{POD_SPEC}.volumes[]",
            ("merge", "retainKeys"),
            "name",
            ("name",),
        ),
        ("apps/v1", "Deployment", f"{POD_SPEC}.imagePullSecrets[]", ("merge",), "name", ("name",)),
        ("apps/v1", "Deployment", f"{POD_SPEC}.tolerations[]", (), None, ()),
        ("apps/v1", "Deployment", f"{POD_SPEC}.containers[].args[]", (), None, ()),
        ("apps/v1", "Deployment", "metadata.finalizers[]", ("merge",), None, ()),
        ("apps/v1", "Deployment", "metadata.ownerReferences[]", ("merge",), "uid", ("uid",)),
        ("apps/v1", "Deployment", "spec.strategy", ("retainKeys",), None, ()),
        ("v1", "Service", "spec.ports[]", ("merge",), "port", ("port", "protocol")),
        ("v1", "Pod", "spec.containers[]", ("merge",), "name", ("name",)),
        ("v1", "Pod", "spec.hostAliases[]", ("merge",), "ip", ("ip",)),
        ("v1", "Pod", "status.conditions[]", ("merge",), "type", ("type",)),
        (
            "v1",
            "Pod",
            "spec.topologySpreadConstraints[]",
            ("merge",),
            "topologyKey",
            ("topologyKey", "whenUnsatisfiable"),
        ),
        ("batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.containers[]", ("merge",), "name", ("name",)),
    ],
)
def test_list_metadata_of_real_kinds(
    walk, api_version, kind, path, strategies, merge_key, list_map_keys
):
    root = builtin_schema(api_version, kind)
    assert root is not None
    _, meta = walk(root, path)
    assert meta.strategies == strategies
    assert meta.merge_key == merge_key
    assert meta.list_map_keys == list_map_keys


def test_list_lookup_returns_the_element_schema(walk):
    containers, _ = walk(deployment(), f"{POD_SPEC}.containers[]")
    assert containers is not None
    # The element schema knows Container's fields...
    _, meta = containers.lookup_slice("env")
    assert meta.merge_key == "name"
    # ...and nothing else.
    with pytest.raises(SchemaLookupError, match='unable to find api field "replicas" in io.k8s.api.core.v1.Container'):
        containers.lookup_struct("replicas")


def test_unknown_field_uses_the_openapi_wording():
    with pytest.raises(SchemaLookupError) as caught:
        deployment().lookup_struct("spek")
    assert str(caught.value) == 'unable to find api field "spek" in io.k8s.api.apps.v1.Deployment'
    with pytest.raises(SchemaLookupError):
        deployment().lookup_slice("spek")


def test_maps_are_transparent_and_their_values_typed(walk):
    labels, meta = walk(deployment(), "metadata.labels")
    assert meta == NO_META
    # Any key of a map has the value schema: labels hold strings.
    with pytest.raises(SchemaLookupError, match="expected kind, but got primitive"):
        walk(deployment(), "metadata.labels.app.deeper")
    limits, _ = walk(deployment(), f"{POD_SPEC}.containers[].resources.limits")
    assert limits is not None
    # Quantity is a primitive too.
    with pytest.raises(SchemaLookupError, match="expected slice, but got primitive"):
        limits.lookup_struct("cpu")[0].lookup_slice("x")


def test_arbitrary_subtrees_know_nothing_and_never_fail(walk):
    crd = builtin_schema("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd is not None
    # JSONSchemaProps.default is apiextensions JSON: arbitrary.
    node, meta = walk(crd, "spec.versions[].schema.openAPIV3Schema.default")
    assert node is OPEN_SCHEMA and meta == NO_META
    below, meta = node.lookup_struct("anything")
    assert meta == NO_META
    assert below.lookup_slice("at-all")[1] == NO_META


def test_map_of_objects_yields_the_object_schema(walk):
    crd = builtin_schema("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd is not None
    # properties: map[string]JSONSchemaProps, so a property's schema knows `required`.
    _, meta = walk(crd, "spec.versions[].schema.openAPIV3Schema.properties.*.properties.*.required[]")
    assert meta.strategies == ()
    with pytest.raises(SchemaLookupError, match="JSONSchemaProps"):
        walk(crd, "spec.versions[].schema.openAPIV3Schema.properties.*.nope")


def test_shape_mismatches_fail_like_apimachinery(walk):
    containers, _ = walk(deployment(), f"{POD_SPEC}.containers")  # a list looked into as a map
    assert containers is not None
    with pytest.raises(SchemaLookupError, match="expected kind, but got slice"):
        containers.lookup_struct("name")
    spec, _ = walk(deployment(), "spec")
    assert spec is not None
    with pytest.raises(SchemaLookupError, match="expected slice, but got primitive"):
        spec.lookup_slice("replicas")
    metadata, _ = walk(deployment(), "metadata")
    assert metadata is not None
    with pytest.raises(SchemaLookupError, match="expected slice, but got map"):
        metadata.lookup_slice("labels")


def test_unknown_kinds_and_versions_have_no_builtin_schema():
    assert builtin_schema("example.com/v1", "Widget") is None
    assert builtin_schema("apps/v1alpha1", "Deployment") is None  # never served
    assert builtin_schema("v1", "Deployment") is None
    assert builtin_schema("apps/v1", "DeploymentList") is not None


@pytest.mark.parametrize(
    ("api_version", "kind", "path", "strategy", "key"),
    [
        ("apps/v1beta1", "Deployment", "spec.template.spec.containers[]", ("merge",), "name"),
        ("apps/v1beta2", "DaemonSet", "spec.template.spec.containers[]", ("merge",), "name"),
        ("extensions/v1beta1", "Deployment", "spec.template.spec.volumes[]", ("merge", "retainKeys"), "name"),
        ("extensions/v1beta1", "DaemonSet", "spec.template.spec.containers[].env[]", ("merge",), "name"),
        ("extensions/v1beta1", "Ingress", "metadata.finalizers[]", ("merge",), None),
        ("batch/v1beta1", "CronJob", "spec.jobTemplate.spec.template.spec.containers[]", ("merge",), "name"),
        ("policy/v1beta1", "PodDisruptionBudget", "metadata.ownerReferences[]", ("merge",), "uid"),
    ],
)
def test_kinds_only_old_releases_served_are_in_the_table(walk, api_version, kind, path, strategy, key):
    root = builtin_schema(api_version, kind)
    assert root is not None, (api_version, kind)
    _, meta = walk(root, path)
    assert meta.strategies == strategy
    assert meta.merge_key == key
    assert builtin_last_served(api_version, kind) is not None
    assert builtin_last_served("apps/v1", "Deployment") is None  # still served


def test_old_kinds_share_todays_core_types(walk):
    """kubectl's Go types for old group versions embed today's core types (v1.37 fields included)."""
    old, _ = walk(builtin_schema("apps/v1beta1", "Deployment"), "spec.template.spec")
    new, _ = walk(builtin_schema("apps/v1", "Deployment"), "spec.template.spec")
    assert old is new
    # ...while the old kind keeps its own fields: rollbackTo left apps/v1.
    spec, _ = walk(builtin_schema("apps/v1beta1", "Deployment"), "spec")
    assert spec is not None and spec.lookup_struct("rollbackTo")[0] is not None
    with pytest.raises(SchemaLookupError, match="rollbackTo"):
        walk(builtin_schema("apps/v1", "Deployment"), "spec.rollbackTo")


def test_every_served_version_of_a_kind_is_listed():
    assert set(builtin_api_versions("apps", "Deployment")) == {"apps/v1", "apps/v1beta1", "apps/v1beta2"}
    assert set(builtin_api_versions("extensions", "Deployment")) == {"extensions/v1beta1"}
    assert builtin_api_versions("", "Pod") == ["v1"]
    assert builtin_api_versions("example.com", "Widget") == []


def test_every_core_workload_kind_is_present():
    for api_version, kind in [
        ("v1", "Pod"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Secret"),
        ("v1", "Namespace"), ("v1", "ServiceAccount"), ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"), ("apps/v1", "ReplicaSet"), ("batch/v1", "Job"),
        ("networking.k8s.io/v1", "Ingress"), ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"), ("policy/v1", "PodDisruptionBudget"),
    ]:
        assert builtin_schema(api_version, kind) is not None, (api_version, kind)


def test_lookups_are_cached_and_stable():
    first = deployment().lookup_struct("spec")
    again = deployment().lookup_struct("spec")
    assert first[0] is again[0]
    assert builtin_schema("apps/v1", "Deployment") is builtin_schema("apps/v1", "Deployment")


def test_table_records_its_source_and_stays_small():
    table = load_table()
    assert builtin_kubernetes_version() == table.kubernetes_version
    assert table.kubernetes_version.startswith("v1.")
    assert "kubernetes-validate" in table.source
    size = (Path(__file__).parents[2] / "function/krm_merge/schema" / TABLE_RESOURCE).stat().st_size
    assert size < 300_000


def test_importing_the_package_does_not_load_the_table():
    code = (
        "import krm_merge.schema as s, krm_merge.schema.builtin as b;"
        "print(b.load_table.cache_info().currsize);"
        "s.builtin_schema('v1', 'Pod');"
        "print(b.load_table.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "1"]
