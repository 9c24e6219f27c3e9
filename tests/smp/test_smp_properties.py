"""Property tests: a created patch applied to its original gives the modified object."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.smp.apply import apply_patch
from krm_merge.smp.create import create_three_way_patch, create_two_way_patch
from krm_merge.smp.values import deep_copy, deep_equal

from .schema_support import conformance_schema

pytestmark = pytest.mark.slow

SCHEMA = conformance_schema("schema.yaml#/components/schemas/mergeItem")

NAMES = st.sampled_from(["a", "b", "c", "d", "e", "f"])
TEXT = st.sampled_from(["x", "y", "z"])


def merge_items(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """``mergeItem`` documents with unique merge keys (Go's behaviour with duplicates is lossy)."""
    fields: dict[str, st.SearchStrategy[Any]] = {
        "value": TEXT,
        "other": TEXT,
        "mergingIntList": st.lists(st.integers(0, 6), unique=True, max_size=5),
        "nonMergingIntList": st.lists(st.integers(0, 3), max_size=4),
        "simpleMap": st.dictionaries(TEXT, TEXT, max_size=3),
        "retainKeysMap": st.fixed_dictionaries({}, optional={"name": TEXT, "value": TEXT, "other": TEXT}),
    }
    if depth > 0:
        element = merge_items(depth - 1)
        keyed = st.lists(st.tuples(NAMES, element), unique_by=lambda t: t[0], max_size=4).map(
            lambda pairs: [{**item, "name": name} for name, item in pairs]
        )
        fields["mergingList"] = keyed
        fields["nonMergingList"] = keyed
        fields["retainKeysMergingList"] = keyed
    return st.fixed_dictionaries({}, optional=fields)


DOCS = merge_items(2)


def primitive_merge_lists_sorted(value: Any) -> Any:
    """Go does not detect a pure re-ordering of a primitive merge list (it sorts
    the original in place before comparing), so their order is not compared."""
    if isinstance(value, dict):
        return {
            k: sorted(v) if k == "mergingIntList" and isinstance(v, list) else primitive_merge_lists_sorted(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [primitive_merge_lists_sorted(v) for v in value]
    return value


def same_up_to_primitive_order(actual: Any, expected: Any) -> bool:
    return deep_equal(primitive_merge_lists_sorted(actual), primitive_merge_lists_sorted(expected))


@settings(max_examples=examples(300), deadline=None)
@given(DOCS, DOCS)
def test_two_way_patch_round_trips_exactly(original: dict[str, Any], modified: dict[str, Any]) -> None:
    patch = create_two_way_patch(original, modified, SCHEMA)
    assert same_up_to_primitive_order(apply_patch(deep_copy(original), patch, SCHEMA), modified)


@settings(max_examples=examples(200), deadline=None)
@given(DOCS, DOCS)
def test_three_way_patch_against_unchanged_live_round_trips(original: dict[str, Any], modified: dict[str, Any]) -> None:
    # With current == original (nothing changed on the server), the 3-way patch
    # must turn the live object into the modified one, and never conflict.
    patch = create_three_way_patch(original, modified, original, SCHEMA)
    assert same_up_to_primitive_order(apply_patch(deep_copy(original), patch, SCHEMA), modified)


@settings(max_examples=examples(200), deadline=None)
@given(DOCS, DOCS, DOCS)
def test_three_way_patch_keeps_modified_values(
    original: dict[str, Any], modified: dict[str, Any], current: dict[str, Any]
) -> None:
    patch = create_three_way_patch(original, modified, current, SCHEMA, overwrite=True)
    result = apply_patch(deep_copy(current), patch, SCHEMA)
    for key in ("value", "other", "nonMergingIntList", "nonMergingList"):
        if key in modified:
            assert deep_equal(result[key], modified[key])
        elif key in original:
            assert key not in result
