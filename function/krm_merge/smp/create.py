"""Creating strategic merge patches: ``CreateTwoWayMergePatch`` and ``CreateThreeWayMergePatch``.

Returned patches may share unchanged sub-values with the ``modified`` input
(as in Go); treat them as read-only or copy them.  Inputs are never mutated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..schema.base import SchemaNode
from .apply import merge_patches, slice_element_kind
from .conflicts import find_conflicts
from .go_yaml import to_yaml
from .errors import ConflictError, MissingMergeKeyError, SmpError
from .meta import MERGE_STRATEGY, REPLACE_STRATEGY, lookup_list_field, lookup_map_field
from .order import missing_merge_key_error, not_a_map_error, sort_by_order
from .path import Path, child, element, render
from .values import (
    DELETE_FROM_PRIMITIVE_LIST_PREFIX,
    DIRECTIVE_MARKER,
    LIST,
    MAP,
    RETAIN_KEYS,
    SET_ELEMENT_ORDER_PREFIX,
    deduplicate_scalars,
    deep_equal,
    go_sort_by_string,
    go_str,
    identity,
    kind_of,
    sort_scalars,
)


@dataclass(frozen=True)
class DiffOptions:
    """``DiffOptions`` of apimachinery."""

    set_element_order: bool = False
    ignore_changes_and_additions: bool = False
    ignore_deletions: bool = False
    build_retain_keys: bool = False


def create_two_way_patch(
    original: dict[str, Any], modified: dict[str, Any], schema: SchemaNode
) -> dict[str, Any]:
    """The patch that turns ``original`` into ``modified`` (``CreateTwoWayMergePatch``).

    Includes ``$setElementOrder`` lists, ``$deleteFromPrimitiveList`` lists and
    ``$retainKeys`` exactly as Kubernetes generates them.
    """
    return diff_maps(original or {}, modified or {}, schema, DiffOptions(set_element_order=True), None)


def create_three_way_patch(
    original: dict[str, Any] | None,
    modified: dict[str, Any],
    current: dict[str, Any],
    schema: SchemaNode,
    *,
    overwrite: bool = False,
) -> dict[str, Any]:
    """``CreateThreeWayMergePatch``: what ``kubectl apply`` sends.

    The patch holds every change from ``current`` to ``modified`` plus the
    deletions from ``original`` (the last-applied configuration) to
    ``modified``.  With ``overwrite=False`` a patch touching fields changed
    from ``original`` to ``current`` raises :class:`ConflictError`.
    """
    original = original or {}
    modified = modified or {}
    current = current or {}
    delta = diff_maps(current, modified, schema, DiffOptions(set_element_order=True, ignore_deletions=True), None)
    deletions = diff_maps(
        original, modified, schema, DiffOptions(set_element_order=True, ignore_changes_and_additions=True), None
    )
    patch = merge_patches(deletions, delta, schema)
    if not overwrite:
        changed = diff_maps(original, current, schema, DiffOptions(), None)
        conflicts = find_conflicts(patch, changed, schema)
        if conflicts:
            raise ConflictError(to_yaml(patch), to_yaml(changed), conflicts)
    return patch


# -- maps ---------------------------------------------------------------------------------

# Exact types whose Python ``!=`` equals Go's (same type on both sides).
_PLAIN_SCALARS = frozenset({str, int, float, bool})


def diff_maps(
    original: dict[str, Any], modified: dict[str, Any], schema: SchemaNode, options: DiffOptions, path: Path
) -> dict[str, Any]:
    """``diffMaps``: the (recursive) patch from ``original`` to ``modified``."""
    patch: dict[str, Any] = {}
    retain: list[Any] = []
    ignore_changes = options.ignore_changes_and_additions
    for key, new in modified.items():
        if options.build_retain_keys and new is not None:
            retain.append(key)
        if key not in original:
            if not ignore_changes:
                patch[key] = new
            continue
        old = original[key]
        new_type = type(new)
        if type(old) is new_type and new_type in _PLAIN_SCALARS and key != DIRECTIVE_MARKER:
            if not ignore_changes and old != new:
                patch[key] = new
            continue
        if key == DIRECTIVE_MARKER:
            if not isinstance(old, str) or not isinstance(new, str):
                raise SmpError(f"invalid value for special key: {DIRECTIVE_MARKER}", render(path))
            if old != new:
                patch[key] = new
            continue
        kind = kind_of(old)
        if kind != kind_of(new):
            if not ignore_changes:
                patch[key] = new
            continue
        if kind == MAP:
            _diff_map_field(key, old, new, patch, schema, options, path)
        elif kind == LIST:
            _diff_list_field(key, old, new, patch, schema, options, path)
        elif not ignore_changes and not deep_equal(old, new):
            patch[key] = new
    if not options.ignore_deletions:
        for key in original:
            if key not in modified:
                patch[key] = None
    if retain and (patch or _has_additional_field(original, modified)):
        patch[RETAIN_KEYS] = sort_scalars(retain)
    return patch


def _has_additional_field(original: dict[str, Any], modified: dict[str, Any]) -> bool:
    """``hasAdditionalNewField``: original has a non-null key that modified lacks."""
    return any(v is not None and k not in modified for k, v in original.items())


def _with_retain_keys(options: DiffOptions, retain_keys: bool) -> DiffOptions:
    return options if options.build_retain_keys == retain_keys else replace(options, build_retain_keys=retain_keys)


def _diff_map_field(
    key: str,
    old: dict[str, Any],
    new: dict[str, Any],
    patch: dict[str, Any],
    schema: SchemaNode,
    options: DiffOptions,
    path: Path,
) -> None:
    """``handleMapDiff``."""
    sub_path = child(path, key)
    try:
        meta = lookup_map_field(schema, key, sub_path)
    except SmpError:
        if deep_equal(old, new):
            return
        raise
    sub_options = _with_retain_keys(options, meta.retain_keys)
    if meta.strategy == REPLACE_STRATEGY:
        if not options.ignore_changes_and_additions:
            patch[key] = new
        return
    sub_patch = diff_maps(old, new, meta.schema, sub_options, sub_path)
    if sub_patch:
        patch[key] = sub_patch


def _diff_list_field(
    key: str,
    old: list[Any],
    new: list[Any],
    patch: dict[str, Any],
    schema: SchemaNode,
    options: DiffOptions,
    path: Path,
) -> None:
    """``handleSliceDiff``."""
    sub_path = child(path, key)
    try:
        meta = lookup_list_field(schema, key, sub_path)
    except SmpError:
        if deep_equal(old, new):
            return
        raise
    if meta.strategy != MERGE_STRATEGY:
        if not options.ignore_changes_and_additions and not deep_equal(old, new):
            patch[key] = new
        return
    sub_options = _with_retain_keys(options, meta.retain_keys)
    additions, deletions, order = diff_lists(old, new, meta.schema, meta.merge_key, sub_options, sub_path)
    if additions:
        patch[key] = additions
    if deletions:
        patch[f"{DELETE_FROM_PRIMITIVE_LIST_PREFIX}/{key}"] = deletions
    if order:
        patch[f"{SET_ELEMENT_ORDER_PREFIX}/{key}"] = order


# -- lists --------------------------------------------------------------------------------


def diff_lists(
    original: list[Any],
    modified: list[Any],
    schema: SchemaNode,
    merge_key: str,
    options: DiffOptions,
    path: Path,
) -> tuple[list[Any], list[Any], list[Any]]:
    """``diffLists``: (patch list, primitive deletion list, ``$setElementOrder`` list)."""
    if not original:
        if not modified or options.ignore_changes_and_additions:
            return [], [], []
        return modified, [], []
    kind = slice_element_kind(path, original, modified)
    order: list[Any] = []
    if kind == MAP:
        if not merge_key:
            field = render(path).rsplit(".", 1)[-1]
            raise MissingMergeKeyError(
                f"map: {go_str(original[0])} does not contain declared merge key:  "
                f"(no merge key is known for list field {field!r})",
                render(path),
                field,
            )
        changes, deletions = _diff_lists_of_maps(original, modified, schema, merge_key, options, path)
        changes = sort_by_order(changes, modified, merge_key, True, path)
        order_same = _is_order_same(original, modified, merge_key, path)
        patch_list = changes + deletions
        if options.set_element_order and (
            (not options.ignore_changes_and_additions and (patch_list or not order_same))
            or (not options.ignore_deletions and patch_list)
        ):
            order = [{merge_key: item[merge_key]} for item in modified]
        return patch_list, [], order
    additions, removals = _diff_lists_of_scalars(original, modified, options)
    additions = sort_by_order(additions, modified, "", False, path)
    # Go's diffListsOfScalars sorts the original slice in place before this
    # comparison, so a pure re-ordering of a primitive list is not detected:
    # compare the sorted original, as kubectl effectively does.
    if options.set_element_order and (
        (not options.ignore_deletions and removals)
        or (not options.ignore_changes_and_additions and not deep_equal(sort_scalars(original), modified))
    ):
        order = modified
    return additions, removals, order


def _is_order_same(original: list[Any], modified: list[Any], merge_key: str, path: Path) -> bool:
    if len(original) != len(modified):
        return False
    for old, new in zip(original, modified):
        for item in (old, new):
            if not isinstance(item, dict):
                raise not_a_map_error(item, path)
            if merge_key not in item:
                raise missing_merge_key_error(item, merge_key, path)
        if identity(old[merge_key]) != identity(new[merge_key]):
            return False
    return True


def _merge_key_value(item: Any, merge_key: str, path: Path) -> Any:
    if not isinstance(item, dict):
        raise not_a_map_error(item, path)
    if merge_key not in item:
        raise missing_merge_key_error(item, merge_key, path)
    return item[merge_key]


def _diff_lists_of_maps(
    original: list[Any],
    modified: list[Any],
    schema: SchemaNode,
    merge_key: str,
    options: DiffOptions,
    path: Path,
) -> tuple[list[Any], list[Any]]:
    """``diffListsOfMaps``: walk both lists sorted by the merge key's string form."""

    def sort_key(item: Any) -> str:
        return go_str(item.get(merge_key)) if isinstance(item, dict) else ""

    old_sorted = go_sort_by_string(original, sort_key)
    new_sorted = go_sort_by_string(modified, sort_key)
    changes: list[Any] = []
    deletions: list[Any] = []
    i = j = 0
    while i < len(old_sorted) or j < len(new_sorted):
        old = new = old_value = new_value = None
        old_str = new_str = ""
        if i < len(old_sorted):
            old = old_sorted[i]
            old_value = _merge_key_value(old, merge_key, path)
            old_str = go_str(old_value)
        if j < len(new_sorted):
            new = new_sorted[j]
            new_value = _merge_key_value(new, merge_key, path)
            new_str = go_str(new_value)
        both = i < len(old_sorted) and j < len(new_sorted)
        if both and old_str == new_str:
            assert old is not None and new is not None
            sub_path = element(path, merge_key, new)
            sub_patch = diff_maps(old, new, schema, options, sub_path)
            if sub_patch:
                sub_patch[merge_key] = new_value
                changes.append(sub_patch)
            i += 1
            j += 1
        elif i >= len(old_sorted) or (both and old_str > new_str):
            if not options.ignore_changes_and_additions:
                changes.append(new)
            j += 1
        else:
            if not options.ignore_deletions:
                deletions.append({merge_key: old_value, DIRECTIVE_MARKER: "delete"})
            i += 1
    return changes, deletions


def _diff_lists_of_scalars(
    original: list[Any], modified: list[Any], options: DiffOptions
) -> tuple[list[Any], list[Any]]:
    """``diffListsOfScalars``: set difference by Go ``%v`` string form."""
    old_sorted = sort_scalars(original)
    new_sorted = sort_scalars(modified)
    additions: list[Any] = []
    removals: list[Any] = []
    i = j = 0
    while i < len(old_sorted) or j < len(new_sorted):
        in_old, in_new = i < len(old_sorted), j < len(new_sorted)
        old_str = go_str(old_sorted[i]) if in_old else ""
        new_str = go_str(new_sorted[j]) if in_new else ""
        if in_old and in_new and old_str == new_str:
            i += 1
            j += 1
        elif not in_old or (in_new and old_str > new_str):
            if not options.ignore_changes_and_additions:
                additions.append(new_sorted[j])
            j += 1
        else:
            if not options.ignore_deletions:
                removals.append(old_sorted[i])
            i += 1
    return additions, deduplicate_scalars(removals)
