"""Offline ``kubectl apply`` against behaviour captured from the real kubectl.

``data/kubectl-apply-cases.yaml`` was recorded by running the real kubectl
(see ``kubectl_capture/``): the object kubectl POSTs on create (with the
last-applied annotation it writes), the PATCH it sends for a changed
configuration, and the result of applying that patch with kubectl.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from krm_merge.schema import builtin_schema
from krm_merge.smp.errors import ConflictError, SmpError
from krm_merge.smp.kubectl_apply import (
    LAST_APPLIED_ANNOTATION,
    apply_desired,
    go_json,
    kubectl_apply_patch,
    last_applied_of,
    with_last_applied,
)
from krm_merge.smp.values import deep_copy, deep_equal

from .schema_support import load_yaml

CAPTURED = load_yaml("kubectl-apply-cases.yaml")["cases"]
SCHEMA = builtin_schema("apps/v1", "Deployment")


def captured(prefix: str) -> dict[str, Any]:
    """The captured case whose description starts with ``prefix``."""
    (case,) = [c for c in CAPTURED if c["description"].startswith(prefix)]
    return case  # type: ignore[no-any-return]


def _ids(case: dict[str, Any]) -> str:
    return str(case["description"])


@pytest.mark.parametrize("case", CAPTURED, ids=_ids)
def test_create_records_the_annotation_kubectl_writes(case: dict[str, Any]) -> None:
    created = apply_desired(None, case["lastApplied"], SCHEMA)
    assert deep_equal(created, case["created"])
    # The annotation text itself, byte for byte (sorted keys, Go escaping, newline).
    assert (
        created["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
        == case["created"]["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
    )


@pytest.mark.parametrize("case", CAPTURED, ids=_ids)
def test_patch_is_the_one_kubectl_sends(case: dict[str, Any]) -> None:
    patch = kubectl_apply_patch(case["live"], case["desired"], SCHEMA)
    assert deep_equal(patch, case["patch"] or {}), json.dumps(patch, sort_keys=True)


@pytest.mark.parametrize("case", CAPTURED, ids=_ids)
def test_applied_result_matches_kubectl(case: dict[str, Any]) -> None:
    live = deep_copy(case["live"])
    result = apply_desired(live, case["desired"], SCHEMA)
    assert deep_equal(result, case["result"])
    assert deep_equal(live, case["live"]), "the live object passed in must not be modified"


def test_design_proposal_env_example_order() -> None:
    case = captured("design proposal env example")
    result = apply_desired(case["live"], case["desired"], SCHEMA)
    env = result["spec"]["template"]["spec"]["containers"][0]["env"]
    # Real kubectl, not the proposal's text ([ENV5, ENV4, ENV1, ENV2, ENV6]).
    assert [e["name"] for e in env] == ["ENV5", "ENV1", "ENV2", "ENV4", "ENV6"]
    assert last_applied_of(result) == case["desired"] | {
        "metadata": case["desired"]["metadata"] | {"annotations": {}}
    }


def test_second_apply_of_same_configuration_changes_nothing() -> None:
    # kubectl still sends $setElementOrder (live has server-added env entries),
    # but applying it again must not move anything.
    case = captured("design proposal env example")
    once = apply_desired(case["live"], case["desired"], SCHEMA)
    assert set(kubectl_apply_patch(once, case["desired"], SCHEMA)) == {"spec"}
    assert deep_equal(apply_desired(once, case["desired"], SCHEMA), once)


def test_existing_annotations_are_kept_in_the_record() -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"a": "1"}}}
    recorded = with_last_applied(desired)["metadata"]["annotations"]
    assert recorded["a"] == "1"
    assert recorded[LAST_APPLIED_ANNOTATION] == (
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"a":"1"},"name":"c"}}\n'
    )
    assert "annotations" not in desired["metadata"] or desired["metadata"]["annotations"] == {"a": "1"}


def test_invalid_annotation_is_reported() -> None:
    live = {"metadata": {"name": "x", "annotations": {LAST_APPLIED_ANNOTATION: "{not json"}}}
    with pytest.raises(SmpError, match="invalid JSON document"):
        apply_desired(live, {"metadata": {"name": "x"}}, SCHEMA)


def test_without_overwrite_a_changed_live_field_conflicts() -> None:
    case = captured("escaping")
    desired = deep_copy(case["desired"])
    desired["spec"]["replicas"] = 5
    live = deep_copy(case["live"])
    live["spec"]["replicas"] = 7
    with pytest.raises(ConflictError) as info:
        apply_desired(live, desired, SCHEMA, overwrite=False)
    assert "spec.replicas" in info.value.conflicts
    assert "conflicts with changes made from original to current" in str(info.value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.5, "1.5"),
        (100.0, "100"),
        (1e-7, "1e-7"),
        (1.234e-6, "0.000001234"),
        (1e21, "1e+21"),
        ("a<b>&c", '"a\\u003cb\\u003e\\u0026c"'),
        ("é\n", '"é\\n"'),
        ({"b": [True, None], "a": 2}, '{"a":2,"b":[true,null]}'),
    ],
)
def test_go_json_encoding(value: Any, text: str) -> None:
    assert go_json(value) == text
