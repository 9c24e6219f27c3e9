"""Every upstream strategic-merge-patch conformance case (176), run as upstream runs them.

Per file (see ``data/README.md``):

* twoWayCreate / twoWayApply: ``create2(original, modified) == twoWay`` and
  ``apply(original, twoWay) == twoWayResult`` (or ``modified``).
* threeWayCreate / threeWayApply: ``create3(original, modified, current)``;
  when the description mentions a conflict it must raise a conflict error,
  and (when ``result`` is non-empty) ``create3(..., overwrite=True)`` must give
  ``threeWay`` and applying it to ``current`` must give ``result``.
* twoWayApply only (custom files): ``apply(original, twoWay) == modified`` or
  the error contains ``expectedError``.
* unknown-field cases: an ``expected…Error`` means creating fails with that
  text (the ``json`` case also accepts success, as upstream does).
* sort cases: the test-only normaliser ``sortMergeListsByName``.

Comparison is exact, list order included, map key order ignored, types
compared as Go does (``1`` ≠ ``1.0`` ≠ ``true``), also for the files upstream
compares after normalising ("sorted").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from krm_merge.schema.base import SchemaNode
from krm_merge.smp.apply import apply_patch, slice_element_kind
from krm_merge.smp.create import create_three_way_patch, create_two_way_patch
from krm_merge.smp.errors import ConflictError, SmpError
from krm_merge.smp.meta import MERGE_STRATEGY, lookup_list_field, lookup_map_field
from krm_merge.smp.values import (
    DELETE_FROM_PRIMITIVE_LIST_PREFIX,
    DIRECTIVE_MARKER,
    MAP,
    RETAIN_KEYS,
    SET_ELEMENT_ORDER_PREFIX,
    deduplicate_scalars,
    deep_copy,
    deep_equal,
    go_str,
    sort_scalars,
)

from .schema_support import conformance_schema, load_yaml

FILES = [
    "create-cases.yaml",
    "raw-cases.yaml",
    "raw-extension-cases.yaml",
    "custom-apply-cases.yaml",
    "custom-apply-raw-cases.yaml",
    "unknown-field-cases.yaml",
    "number-conversion-cases.yaml",
    "sort-cases.yaml",
]


def _load_cases() -> list[Any]:
    params = []
    for name in FILES:
        data = load_yaml(name)
        schema = conformance_schema(data["schema"])
        for case in data["cases"]:
            params.append(pytest.param(data["checks"], schema, case, id=f"{name}:{case['description']}"))
    return params


CASES = _load_cases()


def test_all_176_cases_are_collected() -> None:
    counts = load_yaml("counts.yaml")
    assert len(CASES) == counts["total"]["cases"] == 176


def assert_same(actual: Any, expected: Any, what: str) -> None:
    """Exact comparison as Go's JSON comparison: list order and types matter, key order does not."""
    assert deep_equal(actual, expected), f"{what}:\n  got      {actual!r}\n  expected {expected!r}"


def _apply(target: Any, patch: Any, schema: SchemaNode) -> Any:
    return apply_patch(deep_copy(target or {}), patch, schema)


def _is_conflict_case(case: dict[str, Any]) -> bool:
    return "conflict" in case["description"].lower()


@pytest.mark.parametrize(("checks", "schema", "case"), CASES)
def test_conformance_case(checks: list[str], schema: SchemaNode, case: dict[str, Any]) -> None:
    if checks == ["sortMergeLists"]:
        assert_same(sort_merge_lists_by_name(case["original"], schema), case["sorted"], "sorted")
        return
    if checks == ["twoWayApply"]:
        _check_apply_only(case, schema)
        return
    if "twoWayCreate" in checks:
        _check_two_way(case, schema)
    if "threeWayCreate" in checks:
        _check_three_way(case, schema)


def _check_apply_only(case: dict[str, Any], schema: SchemaNode) -> None:
    if "expectedError" in case:
        with pytest.raises(SmpError) as info:
            _apply(case["original"], case["twoWay"], schema)
        assert case["expectedError"] in str(info.value)
        return
    assert_same(_apply(case["original"], case["twoWay"], schema), case["modified"], "apply")


def _check_two_way(case: dict[str, Any], schema: SchemaNode) -> None:
    original, modified = case.get("original") or {}, case.get("modified") or {}
    if "expectedTwoWayError" in case:
        try:
            patch = create_two_way_patch(original, modified, schema)
        except SmpError as err:
            assert case["expectedTwoWayError"] in str(err)
            return
        # Upstream accepts success too when an expectation for it is given.
        assert "twoWay" in case, f"expected error {case['expectedTwoWayError']!r}, got patch {patch!r}"
    else:
        patch = create_two_way_patch(original, modified, schema)
    assert_same(patch, case["twoWay"], "two-way patch")
    if "twoWayJSON" in case:
        assert json.dumps(patch, sort_keys=True, separators=(",", ":")) == case["twoWayJSON"]
    expected = case.get("twoWayResult", modified)
    assert_same(_apply(original, patch, schema), expected, "two-way result")


def _check_three_way(case: dict[str, Any], schema: SchemaNode) -> None:
    original, modified, current = case.get("original"), case.get("modified"), case.get("current")
    if "expectedThreeWayError" in case:
        try:
            patch = create_three_way_patch(original, modified or {}, current or {}, schema)
        except SmpError as err:
            assert case["expectedThreeWayError"] in str(err)
            return
        assert "threeWay" in case
    elif _is_conflict_case(case):
        with pytest.raises(ConflictError):
            create_three_way_patch(original, modified or {}, current or {}, schema)
        if not case.get("result"):
            return
        patch = create_three_way_patch(original, modified or {}, current or {}, schema, overwrite=True)
    else:
        patch = create_three_way_patch(original, modified or {}, current or {}, schema)
    assert_same(patch, case.get("threeWay") or {}, "three-way patch")
    assert_same(_apply(current, patch, schema), case.get("result") or {}, "three-way result")


# -- the upstream test-only normaliser (sortMergeListsByName) ---------------------------------


def sort_merge_lists_by_name(document: dict[str, Any], schema: SchemaNode) -> dict[str, Any]:
    """Sort every merge list (maps by merge-key string, primitives de-duplicated and sorted)."""
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key == RETAIN_KEYS or key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX):
            value = sort_scalars(value)
        elif key.startswith(SET_ELEMENT_ORDER_PREFIX) or key == DIRECTIVE_MARKER:
            pass
        elif isinstance(value, dict):
            value = sort_merge_lists_by_name(value, lookup_map_field(schema, key, None).schema)
        elif isinstance(value, list):
            meta = lookup_list_field(schema, key, None)
            if meta.strategy == MERGE_STRATEGY:
                value = _sort_list(value, meta.schema, meta.merge_key)
        out[key] = value
    return out


def _sort_list(items: list[Any], schema: SchemaNode, merge_key: str) -> list[Any]:
    if not items:
        return items
    if slice_element_kind(None, items) != MAP:
        return sort_scalars(deduplicate_scalars(items))
    normalised = [sort_merge_lists_by_name(item, schema) for item in items]
    return sorted(normalised, key=lambda item: go_str(item.get(merge_key)))
