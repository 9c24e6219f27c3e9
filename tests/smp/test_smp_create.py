"""Targeted tests of patch creation (the upstream cases cover the bulk)."""

from __future__ import annotations

import copy

import pytest

from krm_merge.smp.apply import apply_patch
from krm_merge.smp.create import create_three_way_patch, create_two_way_patch
from krm_merge.smp.errors import ConflictError
from krm_merge.smp.values import deep_copy, deep_equal

from .schema_support import conformance_schema

SCHEMA = conformance_schema("schema.yaml#/components/schemas/mergeItem")


def test_two_way_list_of_maps_reorder_change_add_delete() -> None:
    original = {"mergingList": [{"name": 1}, {"name": 2}, {"name": 3}]}
    modified = {"mergingList": [{"name": 3}, {"name": 1, "value": "x"}, {"name": 4}]}
    patch = create_two_way_patch(original, modified, SCHEMA)
    assert patch == {
        "$setElementOrder/mergingList": [{"name": 3}, {"name": 1}, {"name": 4}],
        "mergingList": [{"name": 1, "value": "x"}, {"name": 4}, {"name": 2, "$patch": "delete"}],
    }
    assert deep_equal(apply_patch(deep_copy(original), patch, SCHEMA), modified)


def test_two_way_primitive_list() -> None:
    original = {"mergingIntList": [1, 2, 3]}
    modified = {"mergingIntList": [3, 1, 5]}
    patch = create_two_way_patch(original, modified, SCHEMA)
    assert patch == {
        "$setElementOrder/mergingIntList": [3, 1, 5],
        "mergingIntList": [5],
        "$deleteFromPrimitiveList/mergingIntList": [2],
    }
    assert apply_patch(deep_copy(original), patch, SCHEMA) == modified


def test_pure_reorder_sends_only_the_order() -> None:
    patch = create_two_way_patch(
        {"mergingList": [{"name": 1}, {"name": 2}]}, {"mergingList": [{"name": 2}, {"name": 1}]}, SCHEMA
    )
    assert patch == {"$setElementOrder/mergingList": [{"name": 2}, {"name": 1}]}


def test_type_change_is_a_change() -> None:
    assert create_two_way_patch({"value": 1}, {"value": 1.0}, SCHEMA) == {"value": 1.0}
    assert create_two_way_patch({"value": 1}, {"value": True}, SCHEMA) == {"value": True}
    assert create_two_way_patch({"value": 1}, {"value": 1}, SCHEMA) == {}


def test_inputs_are_not_modified() -> None:
    original = {"mergingList": [{"name": 1, "value": "a"}], "simpleMap": {"a": "1"}}
    modified = {"mergingList": [{"name": 2}, {"name": 1, "value": "b"}], "simpleMap": {"b": "2"}}
    current = {"mergingList": [{"name": 1, "value": "a"}, {"name": 5}], "simpleMap": {"a": "1", "c": "3"}}
    saved = copy.deepcopy((original, modified, current))
    create_three_way_patch(original, modified, current, SCHEMA, overwrite=True)
    create_two_way_patch(original, modified, SCHEMA)
    assert (original, modified, current) == saved


def test_conflict_error_lists_every_conflicting_field_in_kubernetes_wording() -> None:
    original = {"name": "a", "value": "1", "simpleMap": {"k": "v"}}
    modified = {"name": "b", "value": "2", "simpleMap": {"k": "w"}}
    current = {"name": "c", "value": "3", "simpleMap": {"k": "x"}}
    with pytest.raises(ConflictError) as info:
        create_three_way_patch(original, modified, current, SCHEMA)
    err = info.value
    assert sorted(err.conflicts) == ["name", "simpleMap.k", "value"]
    assert str(err).startswith("patch:\nname: b\n")
    assert "\nconflicts with changes made from original to current:\nname: c\n" in str(err)
    assert "name, value, simpleMap.k" in err.summary() or "simpleMap.k" in err.summary()


def test_same_change_on_both_sides_is_not_a_conflict() -> None:
    patch = create_three_way_patch({"value": "1"}, {"value": "2"}, {"value": "2"}, SCHEMA)
    assert patch == {}


def test_conflict_yaml_is_printed_like_go_yaml() -> None:
    from krm_merge.smp.go_yaml import to_yaml

    text = to_yaml({"b": ["y", "x", "1"], "a": "line\n", "c": "it's"})
    assert text == 'a: |\n  line\nb:\n- "y"\n- x\n- "1"\nc: it\'s\n'


def test_reorder_of_a_primitive_merge_list_into_sorted_order_is_lost_as_in_go() -> None:
    # Go sorts the original list in place before comparing it with the modified
    # one: re-ordering into sorted order looks like "no change" (kubectl too).
    assert create_two_way_patch({"mergingIntList": [3, 1, 2]}, {"mergingIntList": [1, 2, 3]}, SCHEMA) == {}
    assert create_two_way_patch({"mergingIntList": [1, 2, 3]}, {"mergingIntList": [3, 2, 1]}, SCHEMA) == {
        "$setElementOrder/mergingIntList": [3, 2, 1]
    }
