"""3-way conflict detection (``MergingMapsHaveConflicts``)."""

from __future__ import annotations

from typing import Any

from ..schema.base import SchemaNode
from .apply import slice_element_kind
from .errors import SmpError
from .meta import MERGE_STRATEGY, REPLACE_STRATEGY, lookup_list_field, lookup_map_field
from .path import Path, child, element, render
from .values import (
    BOOL,
    DIRECTIVE_MARKER,
    FLOAT,
    INT,
    LIST,
    MAP,
    NULL,
    RETAIN_KEYS,
    STRING,
    deduplicate_scalars,
    deep_equal,
    go_str,
    identity,
    kind_of,
    sort_scalars,
)

_SCALARS = frozenset({STRING, FLOAT, BOOL, INT, NULL})


def find_conflicts(patch: dict[str, Any], changed: dict[str, Any], schema: SchemaNode) -> list[str]:
    """Field paths where ``patch`` and ``changed`` overlap with different values.

    Non-empty iff Go's ``MergingMapsHaveConflicts`` is true.  Go stops at the
    first conflict; all of them are collected here for the message.
    """
    found: list[str] = []
    _fields_conflict(patch, changed, schema, "", "", None, found)
    return found


def _fields_conflict(
    left: Any, right: Any, schema: SchemaNode, strategy: str, merge_key: str, path: Path, found: list[str]
) -> None:
    """``mergingMapFieldsHaveConflicts``."""
    kind = kind_of(left)
    if kind == MAP:
        if not isinstance(right, dict):
            found.append(render(path))
            return
        has_left, has_right = DIRECTIVE_MARKER in left, DIRECTIVE_MARKER in right
        if has_left or has_right:
            if has_left != has_right or identity(left[DIRECTIVE_MARKER]) != identity(right[DIRECTIVE_MARKER]):
                found.append(render(path))
                return
        if strategy == REPLACE_STRATEGY:
            return
        _maps_conflict(left, right, schema, path, found)
    elif kind == LIST:
        if not isinstance(right, list):
            found.append(render(path))
            return
        _slices_conflict(left, right, schema, strategy, merge_key, path, found)
    elif kind in _SCALARS:
        if not deep_equal(left, right):
            found.append(render(path))
    else:
        raise SmpError(f"unknown type: {type(left).__name__}", render(path))


def _maps_conflict(
    left: dict[str, Any], right: dict[str, Any], schema: SchemaNode, path: Path, found: list[str]
) -> None:
    """``mapsHaveConflicts``: compare the keys both maps have."""
    for key, left_value in left.items():
        if key in (DIRECTIVE_MARKER, RETAIN_KEYS) or key not in right:
            continue
        right_value = right[key]
        sub_path = child(path, key)
        if key.startswith("$"):
            # Parallel directive lists ($deleteFromPrimitiveList/...) are not
            # fields; Go looks them up and fails, we compare them as sets.
            continue
        if isinstance(left_value, list):
            meta = lookup_list_field(schema, key, sub_path)
        elif isinstance(left_value, dict):
            meta = lookup_map_field(schema, key, sub_path)
        else:
            _fields_conflict(left_value, right_value, schema, "", "", sub_path, found)
            continue
        _fields_conflict(left_value, right_value, meta.schema, meta.strategy, meta.merge_key, sub_path, found)


def _slices_conflict(
    left: list[Any],
    right: list[Any],
    schema: SchemaNode,
    strategy: str,
    merge_key: str,
    path: Path,
    found: list[str],
) -> None:
    """``slicesHaveConflicts``."""
    element_kind = slice_element_kind(path, left, right)
    if strategy == MERGE_STRATEGY:
        if element_kind != MAP:
            return
        left_by_key = _by_merge_key(left, merge_key, path)
        right_by_key = _by_merge_key(right, merge_key, path)
        for ident, item in left_by_key.items():
            if ident in right_by_key:
                sub_path = element(path, merge_key, item)
                _fields_conflict(item, right_by_key[ident], schema, "", "", sub_path, found)
        return
    if len(left) != len(right):
        found.append(render(path))
        return
    if element_kind != MAP:
        left = sort_scalars(deduplicate_scalars(left))
        right = sort_scalars(deduplicate_scalars(right))
    for index, (a, b) in enumerate(zip(left, right)):
        _fields_conflict(a, b, schema, "", "", element(path, None, a, index), found)


def _by_merge_key(items: list[Any], merge_key: str, path: Path) -> dict[Any, dict[str, Any]]:
    """``sliceOfMapsToMapOfMaps`` (later duplicates win, as in Go)."""
    out: dict[Any, dict[str, Any]] = {}
    for item in items:
        if not isinstance(item, dict):
            raise SmpError(f"invalid element type in merging list:{go_str(items)}", render(path))
        if merge_key not in item:
            raise SmpError(
                f"cannot find merge key `{merge_key}` in merging list element:{go_str(item)}", render(path)
            )
        out[identity(item[merge_key])] = item
    return out
