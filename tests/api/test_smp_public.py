"""The public ``krm_merge.smp`` functions on every conformance case, kubectl-captured apply and schemas.

Same 176 upstream cases as ``tests/smp/test_smp_conformance.py``, but through
``smp.apply`` / ``smp.create_two_way`` / ``smp.create_three_way``, and every
input must be unchanged afterwards (deep equality with a snapshot taken first)
and never shared with the result.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from krm_merge import smp
from krm_merge.smp.values import deep_equal
from tests.smp.schema_support import load_yaml
from tests.smp.test_smp_conformance import CASES, _is_conflict_case, assert_same, sort_merge_lists_by_name


def _containers(value: Any) -> Iterator[int]:
    """ids of every dict and list inside ``value`` (to prove results share nothing with inputs)."""
    if isinstance(value, dict):
        yield id(value)
        for v in value.values():
            yield from _containers(v)
    elif isinstance(value, list):
        yield id(value)
        for v in value:
            yield from _containers(v)


class Unmodified:
    """Snapshots the inputs; :meth:`check` asserts they are unchanged and unshared with ``result``."""

    def __init__(self, *inputs: Any) -> None:
        self.inputs = inputs
        self.snapshots = copy.deepcopy(inputs)

    def check(self, result: Any = None) -> None:
        for given, snapshot in zip(self.inputs, self.snapshots):
            assert deep_equal(given, snapshot) and json.dumps(given) == json.dumps(snapshot), "an input was modified"
        shared = set(_containers(result)) & {i for given in self.inputs for i in _containers(given)}
        assert not shared, "the result shares objects with an input"


def test_the_public_tests_see_all_176_cases() -> None:
    assert len(CASES) == 176


@pytest.mark.parametrize(("checks", "schema_node", "case"), CASES)
def test_conformance_case_through_public_api(checks: list[str], schema_node: Any, case: dict[str, Any]) -> None:
    schema = smp.Schema._from_node(schema_node)
    if checks == ["sortMergeLists"]:
        # A test-only normaliser of the upstream suite: nothing public to call.
        assert_same(sort_merge_lists_by_name(case["original"], schema_node), case["sorted"], "sorted")
        return
    if checks == ["twoWayApply"]:
        _apply_only(case, schema)
        return
    if "twoWayCreate" in checks:
        _two_way(case, schema)
    if "threeWayCreate" in checks:
        _three_way(case, schema)


def _apply(target: Any, patch: Any, schema: smp.Schema) -> Any:
    guard = Unmodified(target, patch)
    result = smp.apply(target, patch, schema=schema)
    guard.check(result)
    return result


def _apply_only(case: dict[str, Any], schema: smp.Schema) -> None:
    if "expectedError" in case:
        guard = Unmodified(case["original"], case["twoWay"])
        with pytest.raises(smp.SmpError) as info:
            smp.apply(case["original"], case["twoWay"], schema=schema)
        guard.check()
        assert case["expectedError"] in str(info.value)
        return
    assert_same(_apply(case["original"], case["twoWay"], schema), case["modified"], "apply")


def _two_way(case: dict[str, Any], schema: smp.Schema) -> None:
    original, modified = case.get("original") or {}, case.get("modified") or {}
    guard = Unmodified(original, modified)
    try:
        patch = smp.create_two_way(original, modified, schema=schema)
    except smp.SmpError as err:
        guard.check()
        assert "expectedTwoWayError" in case, f"unexpected error {err}"
        assert case["expectedTwoWayError"] in str(err)
        return
    guard.check(patch)
    if "expectedTwoWayError" in case:
        assert "twoWay" in case, f"expected error {case['expectedTwoWayError']!r}, got patch {patch!r}"
    assert_same(patch, case["twoWay"], "two-way patch")
    assert_same(_apply(original, patch, schema), case.get("twoWayResult", modified), "two-way result")


def _three_way(case: dict[str, Any], schema: smp.Schema) -> None:
    original, modified, current = case.get("original"), case.get("modified") or {}, case.get("current") or {}
    guard = Unmodified(original, modified, current)
    if "expectedThreeWayError" in case:
        try:
            patch = smp.create_three_way(original, modified, current, schema=schema)
        except smp.SmpError as err:
            guard.check()
            assert case["expectedThreeWayError"] in str(err)
            return
        assert "threeWay" in case
    elif _is_conflict_case(case):
        with pytest.raises(smp.ConflictError) as info:
            smp.create_three_way(original, modified, current, schema=schema)
        assert info.value.conflicts, "a conflict error lists the conflicting fields"
        guard.check()
        if not case.get("result"):
            return
        patch = smp.create_three_way(original, modified, current, schema=schema, overwrite=True)
    else:
        patch = smp.create_three_way(original, modified, current, schema=schema)
    guard.check(patch)
    assert_same(patch, case.get("threeWay") or {}, "three-way patch")
    assert_same(_apply(current, patch, schema), case.get("result") or {}, "three-way result")


# -- offline kubectl apply, against what the real kubectl did -------------------------------

CAPTURED = load_yaml("kubectl-apply-cases.yaml")["cases"]


@pytest.mark.parametrize("case", CAPTURED, ids=lambda c: str(c["description"]))
def test_offline_apply_matches_captured_kubectl(case: dict[str, Any]) -> None:
    guard = Unmodified(case["live"], case["desired"])
    result = smp.offline_apply(case["live"], case["desired"])
    guard.check(result)
    assert deep_equal(result, case["result"])
    created = smp.offline_apply(None, case["lastApplied"])
    annotation = smp.LAST_APPLIED_ANNOTATION
    assert created["metadata"]["annotations"][annotation] == case["created"]["metadata"]["annotations"][annotation]
    assert deep_equal(created, case["created"])


def test_offline_apply_without_overwrite_conflicts_on_a_live_change() -> None:
    (case,) = [c for c in CAPTURED if c["description"].startswith("escaping")]
    desired = copy.deepcopy(case["desired"])
    desired["spec"]["replicas"] = 5
    live = copy.deepcopy(case["live"])
    live["spec"]["replicas"] = 7
    with pytest.raises(smp.ConflictError) as info:
        smp.offline_apply(live, desired, overwrite=False)
    assert "spec.replicas" in info.value.conflicts
    assert "conflicts with changes made from original to current" in info.value.message


# -- schemas ---------------------------------------------------------------------------------

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:1"}, {"name": "log", "image": "l"}]}}},
}


def test_default_schema_is_the_builtin_table_by_kind() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
    merged = smp.apply(DEPLOYMENT, patch)
    assert merged["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "app:2"}, {"name": "log", "image": "l"},
    ]
    assert merged == smp.apply(DEPLOYMENT, patch, schema=smp.Schema.builtin())
    # The same document as an unknown kind: no schema, the list is replaced.
    widget = dict(DEPLOYMENT, apiVersion="example.com/v1", kind="Widget")
    assert smp.apply(widget, patch)["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "app:2"}]


WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"parts": [{"id": "a", "size": 1}, {"id": "b", "size": 2}]}}
PART_PATCH = {"spec": {"parts": [{"id": "b", "size": 3}]}}
MERGED_PARTS = [{"id": "a", "size": 1}, {"id": "b", "size": 3}]

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"parts": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "properties": {"id": {"type": "string"}, "size": {"type": "integer"}}},
            }}}},
        }}}],
    },
}


def test_declared_merge_keys_make_a_list_merge() -> None:
    for schema in (
        smp.Schema.builtin().with_merge_keys(smp.MergeKey("Widget", "spec.parts", "id")),
        smp.Schema.from_merge_keys({"kind": "Widget", "path": "spec.parts", "key": "id", "group": "example.com"}),
    ):
        assert smp.apply(WIDGET, PART_PATCH, schema=schema)["spec"]["parts"] == MERGED_PARTS
    other_group = smp.Schema.from_merge_keys(smp.MergeKey("Widget", "spec.parts", "id", group="other.io"))
    assert smp.apply(WIDGET, PART_PATCH, schema=other_group)["spec"]["parts"] == [{"id": "b", "size": 3}]


def test_crd_schema_and_combination() -> None:
    crd_snapshot = copy.deepcopy(CRD)
    from_crd = smp.Schema.from_crd(CRD)
    assert CRD == crd_snapshot
    assert smp.apply(WIDGET, PART_PATCH, schema=from_crd)["spec"]["parts"] == MERGED_PARTS
    # Combined: the CRD's kind and the built-in kinds both merge.
    combined = smp.Schema.builtin() | from_crd
    assert smp.apply(WIDGET, PART_PATCH, schema=combined)["spec"]["parts"] == MERGED_PARTS
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
    assert len(smp.apply(DEPLOYMENT, patch, schema=combined)["spec"]["template"]["spec"]["containers"]) == 2
    # Declared keys win over the CRD: "replace" makes the list atomic again.
    replaced = combined.with_merge_keys(smp.MergeKey("Widget", "spec.parts", None, strategy="replace"))
    assert smp.apply(WIDGET, PART_PATCH, schema=replaced)["spec"]["parts"] == [{"id": "b", "size": 3}]


def test_missing_merge_key_error_has_kubernetes_wording_and_path() -> None:
    patch = {"spec": {"$setElementOrder/parts": [{"id": "b"}, {"id": "a"}]}}
    with pytest.raises(smp.MissingMergeKeyError) as info:
        smp.apply(WIDGET, patch)
    assert isinstance(info.value, smp.SmpError)
    assert info.value.path.startswith("spec")
    assert info.value.message


def test_bad_schemas_are_refused() -> None:
    with pytest.raises(smp.SchemaError, match="CustomResourceDefinition"):
        smp.Schema.from_crd(WIDGET)
    with pytest.raises(smp.SchemaError, match="strategy"):
        smp.Schema.from_merge_keys(smp.MergeKey("Widget", "spec.parts", "id", strategy="zip"))
    with pytest.raises(smp.SchemaError, match="unknown field"):
        smp.Schema.from_merge_keys({"kind": "Widget", "path": "spec.parts", "mergeKey": "id"})
    with pytest.raises(TypeError):
        smp.apply(WIDGET, PART_PATCH, schema="builtin")  # type: ignore[arg-type]


def test_non_map_input_is_a_kubernetes_error() -> None:
    with pytest.raises(smp.SmpError, match="expected a map"):
        smp.apply(WIDGET, ["not", "a", "map"])  # type: ignore[arg-type]
