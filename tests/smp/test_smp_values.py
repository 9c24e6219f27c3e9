"""Go semantics of values: type-aware equality, %v strings, sorting, cleaning."""

from __future__ import annotations

from typing import Any

import pytest

from krm_merge.smp.values import (
    DROPPED,
    clean_new_value,
    deduplicate_scalars,
    deep_equal,
    go_sort_by_string,
    go_str,
    identity,
    remove_patch_directives,
    sort_scalars,
)


@pytest.mark.parametrize(
    ("left", "right"),
    [(1, 1.0), (True, 1), (False, 0), ("1", 1), ([1], [True]), ({"a": 1}, {"a": 1.0})],
)
def test_values_python_equates_are_different_in_go(left: Any, right: Any) -> None:
    assert left == right or str(left) == str(right)  # Python (or the string form) says equal...
    assert not deep_equal(left, right)  # ...Go does not
    assert identity(left) != identity(right) or isinstance(left, (list, dict))


def test_deep_equal_ignores_key_order_but_not_list_order() -> None:
    assert deep_equal({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1})
    assert not deep_equal({"b": [1, 2]}, {"b": [2, 1]})
    assert not deep_equal({"a": 1}, {"a": 1, "b": None})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (10, "10"),
        (1.0, "1"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (0.5, "0.5"),
        (True, "true"),
        (None, "<nil>"),
        ("x", "x"),
        ({"b": 1, "a": "x"}, "map[a:x b:1]"),
        ([1, "a"], "[1 a]"),
    ],
)
def test_go_str_matches_go_percent_v(value: Any, text: str) -> None:
    assert go_str(value) == text


def test_sort_scalars_sorts_by_string_form() -> None:
    assert sort_scalars([10, 9, 100]) == [10, 100, 9]


def test_go_insertion_sort_reverses_duplicates_like_go() -> None:
    items = [{"k": "b", "n": 1}, {"k": "a"}, {"k": "b", "n": 2}]
    ordered = go_sort_by_string(items, lambda i: i["k"])
    assert [i.get("n") for i in ordered] == [None, 2, 1]


def test_deduplicate_scalars_keeps_go_order() -> None:
    # Go replaces a duplicate by the last item: [1, 1, 2, 3] -> [1, 3, 2].
    assert deduplicate_scalars([1, 1, 2, 3]) == [1, 3, 2]
    assert deduplicate_scalars([1, True, 1.0]) == [1, True, 1.0]


def test_clean_new_value_drops_nulls_and_directives() -> None:
    value = {
        "a": None,
        "b": {"c": None, "d": 1, "$setElementOrder/x": [1]},
        "l": [{"name": "x", "$patch": "delete"}, {"name": "y", "v": None}, None],
        "m": {"$patch": "replace", "z": 1},
    }
    assert clean_new_value(value) == {"b": {"d": 1}, "l": [{"name": "y"}, None]}
    assert clean_new_value({"$patch": "delete"}) is DROPPED


def test_remove_patch_directives_keeps_nulls() -> None:
    assert remove_patch_directives([{"name": "a", "v": None}, {"name": "b", "$patch": "delete"}]) == [
        {"name": "a", "v": None}
    ]
