"""Targeted tests of apply_patch beyond the upstream cases: the caller contract,
layout choices, errors and the schemaless case."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from krm_merge.schema.base import OPEN_SCHEMA
from krm_merge.smp.apply import apply_patch
from krm_merge.smp.errors import MissingMergeKeyError, SmpError
from krm_merge.smp.values import deep_equal

from .schema_support import conformance_schema

SCHEMA = conformance_schema("schema.yaml#/components/schemas/mergeItem")


def names(items: list[dict[str, Any]]) -> list[Any]:
    return [i["name"] for i in items]


def test_original_is_mutated_in_place_and_list_elements_keep_identity() -> None:
    original = {"name": "x", "mergingList": [{"name": 1, "value": "a"}, {"name": 2}, {"name": 3}]}
    first, second, third = original["mergingList"]
    patch = {
        "$setElementOrder/mergingList": [{"name": 3}, {"name": 1}, {"name": 4}],
        "mergingList": [{"name": 3, "value": "c"}, {"name": 1, "value": "z"}, {"name": 4}],
    }
    result = apply_patch(original, patch, SCHEMA)
    assert result is original
    merged = result["mergingList"]
    # Go interleaves: 2 sat before 3 in the live list, so it stays before it.
    assert names(merged) == [2, 3, 1, 4]
    assert merged[0] is second
    assert merged[1] is third and merged[1]["value"] == "c"
    assert merged[2] is first and merged[2]["value"] == "z"
    assert all(m is not p for m in merged for p in patch["mergingList"])


def test_patch_is_not_modified_and_never_aliased() -> None:
    patch = {
        "mergingList": [{"name": 5, "mergingList": [{"name": "n"}]}, {"name": 1, "$patch": "delete"}],
        "simpleMap": {"k": "v"},
        "$setElementOrder/mergingList": [{"name": 5}],
    }
    before = copy.deepcopy(patch)
    result = apply_patch({"mergingList": [{"name": 1}]}, patch, SCHEMA)
    assert patch == before
    result["mergingList"][0]["mergingList"].append({"name": "other"})
    result["simpleMap"]["k2"] = "v2"
    assert patch == before


def test_map_key_order_keeps_original_and_appends_new_keys_in_patch_order() -> None:
    original = {"value": "1", "name": "n", "other": "o"}
    result = apply_patch(original, {"simpleMap": {"b": "1"}, "other": None, "name": "m", "nonMergingList": []}, SCHEMA)
    assert list(result) == ["value", "name", "simpleMap", "nonMergingList"]


def test_retain_keys_keeps_order_of_survivors() -> None:
    original = {"retainKeysMap": {"other": "a", "name": "b", "value": "c"}}
    result = apply_patch(original, {"retainKeysMap": {"$retainKeys": ["value", "other"], "value": "d"}}, SCHEMA)
    assert list(result["retainKeysMap"].items()) == [("other", "a"), ("value", "d")]


def test_new_items_go_first_without_set_element_order() -> None:
    # Go: patching [A, B, C] with [D] gives [D, A, B, C].
    original = {"mergingList": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}
    result = apply_patch(original, {"mergingList": [{"name": "D"}]}, SCHEMA)
    assert names(result["mergingList"]) == ["D", "A", "B", "C"]


@pytest.mark.parametrize(
    ("placement", "expected"),
    [("interleave", ["C", "D", "A", "B", "E"]), ("first", ["C", "D", "E", "A", "B"])],
)
def test_server_only_items_placement(placement: str, expected: list[str]) -> None:
    # The design proposal's example: live [C, B, D, A, E], order [A, B].
    original = {"mergingList": [{"name": n} for n in "CBDAE"]}
    patch = {
        "$setElementOrder/mergingList": [{"name": "A"}, {"name": "B"}],
        "mergingList": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    }
    result = apply_patch(original, patch, SCHEMA, server_only_items=placement)  # type: ignore[arg-type]
    assert names(result["mergingList"]) == expected


def test_placement_first_appends_new_items_after_live_ones() -> None:
    original = {"mergingIntList": [1, 2, 3]}
    assert apply_patch(original, {"mergingIntList": [4]}, SCHEMA, server_only_items="first") == {
        "mergingIntList": [1, 2, 3, 4]
    }


def test_merge_keys_are_compared_with_go_types() -> None:
    original = {"mergingList": [{"name": 1, "value": "int"}, {"name": True, "value": "bool"}]}
    result = apply_patch(original, {"mergingList": [{"name": 1.0, "value": "float"}, {"name": "1", "value": "s"}]}, SCHEMA)
    assert [(type(i["name"]).__name__, i["value"]) for i in result["mergingList"]] == [
        ("float", "float"),
        ("str", "s"),
        ("int", "int"),
        ("bool", "bool"),
    ]


def test_primitive_union_deduplicates_by_go_value() -> None:
    result = apply_patch({"mergingIntList": ["1", "2"]}, {"mergingIntList": ["2", "3"]}, SCHEMA)
    assert result["mergingIntList"] == ["1", "2", "3"]


def test_primitive_union_of_mixed_go_types_is_an_error() -> None:
    # 1 and True are equal in Python but different Go types: Go refuses the list.
    with pytest.raises(SmpError, match="list element types are not identical"):
        apply_patch({"mergingIntList": [1, 2]}, {"mergingIntList": [True]}, SCHEMA)
    with pytest.raises(SmpError, match="list element types are not identical"):
        apply_patch({"mergingIntList": [1]}, {"mergingIntList": [1.0]}, SCHEMA)


def test_appended_elements_are_stored_without_nulls_or_directives() -> None:
    original = {"mergingList": [{"name": 1}]}
    patch = {"mergingList": [{"name": 2, "value": None, "mergingList": [{"name": 9, "$patch": "delete"}],
                              "$setElementOrder/mergingList": [{"name": 9}]}]}
    result = apply_patch(original, patch, SCHEMA)
    assert result == {"mergingList": [{"name": 2, "mergingList": []}, {"name": 1}]}


@pytest.mark.parametrize(
    ("original", "patch", "path", "text"),
    [
        ({"mergingList": [{"name": 1}]}, {"mergingList": [{"value": "x"}]}, "mergingList",
         "does not contain declared merge key: name"),
        ({"mergingList": [{"name": 1, "mergingList": [{"name": "a"}]}]},
         {"mergingList": [{"name": 1, "mergingList": [{"name": "a", "$patch": "merge"}]}]},
         "mergingList[name=1].mergingList", "merging lists cannot yet be specified in the patch"),
        ({"simpleMap": {"a": "b"}}, {"simpleMap": {"$patch": "bogus"}}, "simpleMap", "unknown patch type: bogus"),
        ({"mergingIntList": [1, 3, 2]}, {"$setElementOrder/mergingIntList": [1, 2, 3], "mergingIntList": [3, 1]},
         "mergingIntList", "doesn't match $setElementOrder list"),
        ({"retainKeysMap": {"name": "a"}}, {"retainKeysMap": {"$retainKeys": ["name"], "value": "x"}},
         "retainKeysMap", "invalid patch format of retainKeys"),
        ({"x": {"a": {"b": 1}}}, {"x": {"a": {"b": 2}}}, "x", 'unable to find api field "x"'),
        ({"mergingList": [[1]]}, {"mergingList": [[2]]}, "mergingList", "lists of lists are not supported"),
    ],
)
def test_errors_carry_kubernetes_text_and_field_path(
    original: dict[str, Any], patch: dict[str, Any], path: str, text: str
) -> None:
    with pytest.raises(SmpError) as info:
        apply_patch(original, patch, SCHEMA)
    assert info.value.path == path
    assert text in info.value.message


def test_schemaless_lists_are_replaced_and_maps_merged() -> None:
    original = {"spec": {"a": 1, "items": [{"name": "x"}, {"name": "y"}]}}
    result = apply_patch(original, {"spec": {"b": 2, "items": [{"name": "z"}]}}, OPEN_SCHEMA)
    assert result == {"spec": {"a": 1, "items": [{"name": "z"}], "b": 2}}


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"items": [{"name": "x", "$patch": "delete"}]}},
        {"spec": {"$setElementOrder/items": [{"name": "y"}, {"name": "x"}]}},
    ],
)
def test_directive_needing_a_merge_key_without_one_says_so(patch: dict[str, Any]) -> None:
    original = {"spec": {"items": [{"name": "x"}, {"name": "y"}]}}
    with pytest.raises(SmpError) as info:
        apply_patch(original, patch, OPEN_SCHEMA)
    assert isinstance(info.value, MissingMergeKeyError) and info.value.field == "items"
    assert "no merge key is known for list field 'items'" in info.value.message
    assert info.value.path == "spec.items"


def test_top_level_replace_and_delete() -> None:
    assert apply_patch({"a": 1}, {"$patch": "replace", "b": 2, "c": None}, SCHEMA) == {"b": 2}
    assert apply_patch({"a": 1}, {"$patch": "delete"}, SCHEMA) == {}


def test_non_mapping_inputs_are_errors() -> None:
    with pytest.raises(SmpError):
        apply_patch([], {}, SCHEMA)  # type: ignore[arg-type]
