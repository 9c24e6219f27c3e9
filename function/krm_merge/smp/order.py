"""The list ordering step of strategic merge patch.

``normalizeElementOrder`` + ``mergeSortedSlice`` in apimachinery: a merged list
is split into *patch items* (identity present in a patch-order list) and
*server-only items*; each part is sorted by its own order list, then the two
are interleaved: a server-only item is emitted before the next patch item only
when both occur in the server order and the server-only item comes first
there.  Index lookups use dictionaries (first occurrence wins, as Go's linear
``index`` does), so the step is O(n log n) instead of Go's O(n²).
"""

from __future__ import annotations

from .errors import SmpError
from .path import Path, render
from .values import DIRECTIVE_MARKER, go_str, go_type_name, identity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Hashable, Literal, TypeAlias

ServerOnlyPlacement: TypeAlias = 'Literal["interleave", "first"]'


def missing_merge_key_error(item: Any, merge_key: str, path: Path) -> SmpError:
    """``mergepatch.ErrNoMergeKey``."""
    return SmpError(f"map: {go_str(item)} does not contain declared merge key: {merge_key}", render(path))


def not_a_map_error(item: Any, path: Path) -> SmpError:
    """``mergepatch.ErrBadArgType`` for a list element that should be a map."""
    return SmpError(
        f"expected a map[string]interface {{}}, but received a {go_type_name(item)}", render(path)
    )


def item_identity(item: Any, merge_key: str) -> Hashable:
    """What identifies a list item: its merge-key value (maps) or itself (primitives)."""
    value = (item.get(merge_key) if type(item) is dict or isinstance(item, dict) else None) if merge_key else item
    return value if type(value) is str else identity(value)


def first_positions(items: list[Any], merge_key: str) -> dict[Hashable, int]:
    """Identity -> index of its first occurrence."""
    positions: dict[Hashable, int] = {}
    for index, item in enumerate(items):
        positions.setdefault(item_identity(item, merge_key), index)
    return positions


def validate_merge_keys(items: list[Any], merge_key: str, path: Path) -> None:
    """Every item must be a map holding the merge key."""
    for item in items:
        if not isinstance(item, dict):
            raise not_a_map_error(item, path)
        if merge_key not in item:
            raise missing_merge_key_error(item, merge_key, path)


def _go_stable_sort(items: list[Any], keys: list[int | None]) -> list[Any]:
    """Go's insertion sort with the upstream comparator, for items missing from the order.

    The upstream "less" answers true whenever either item is missing, so such
    items bubble towards the front; only reachable with malformed patches.
    """
    pairs = list(zip(keys, items))

    def less(a: int | None, b: int | None) -> bool:
        return a < b if a is not None and b is not None else True

    for i in range(1, len(pairs)):
        j = i
        while j > 0 and less(pairs[j][0], pairs[j - 1][0]):
            pairs[j], pairs[j - 1] = pairs[j - 1], pairs[j]
            j -= 1
    return [item for _, item in pairs]


def sort_by_order(
    to_sort: list[Any], order: list[Any], merge_key: str, is_map: bool, path: Path
) -> list[Any]:
    """``normalizeSliceOrder``: stable sort by position in ``order``.

    For lists of maps, elements carrying ``$patch: delete`` go last.
    """
    to_delete: list[Any] = []
    if is_map:
        validate_merge_keys(to_sort, merge_key, path)
        validate_merge_keys(order, merge_key, path)
        kept = [i for i in to_sort if i.get(DIRECTIVE_MARKER) != "delete"]
        if len(kept) != len(to_sort):
            to_delete = [i for i in to_sort if i.get(DIRECTIVE_MARKER) == "delete"]
            to_sort = kept
    if len(to_sort) > 1:
        positions = first_positions(order, merge_key)
        keys = [positions.get(item_identity(item, merge_key)) for item in to_sort]
        if None in keys:
            to_sort = _go_stable_sort(to_sort, keys)
        else:
            present: list[int] = keys  # type: ignore[assignment]  # no None: checked above
            to_sort = [to_sort[i] for i in sorted(range(len(to_sort)), key=present.__getitem__)]
    return to_sort + to_delete if to_delete else list(to_sort)


def interleave(
    server_only: list[Any], patch_items: list[Any], server_order: list[Any], merge_key: str
) -> list[Any]:
    """``mergeSortedSlice``: emit a server-only item before the next patch item only
    when both are in ``server_order`` and the server-only one comes first there."""
    if not server_only:
        return patch_items
    if not patch_items:
        return server_only
    positions = first_positions(server_order, merge_key)
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) and j < len(patch_items):
        left = positions.get(item_identity(server_only[i], merge_key))
        right = positions.get(item_identity(patch_items[j], merge_key))
        if left is not None and right is not None and left < right:
            out.append(server_only[i])
            i += 1
        else:
            out.append(patch_items[j])
            j += 1
    out.extend(server_only[i:])
    out.extend(patch_items[j:])
    return out


def partition(
    merged: list[Any], partition_by: list[Any], merge_key: str, path: Path
) -> tuple[list[Any], list[Any]]:
    """Split ``merged`` into (items whose identity is in ``partition_by``, the rest)."""
    if merge_key:
        validate_merge_keys(merged, merge_key, path)
        for index, entry in enumerate(partition_by):
            if not isinstance(entry, dict):
                raise SmpError(f"value for key {index} is not a map.", render(path))
        present = {identity(e[merge_key]) for e in partition_by if merge_key in e}
        inside = [m for m in merged if identity(m[merge_key]) in present]
        outside = [m for m in merged if identity(m[merge_key]) not in present]
        return inside, outside
    present = {identity(e) for e in partition_by}
    inside = [m for m in merged if identity(m) in present]
    outside = [m for m in merged if identity(m) not in present]
    return inside, outside


def normalize_element_order(
    merged: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    is_map: bool,
    path: Path,
    placement: ServerOnlyPlacement = "interleave",
) -> list[Any]:
    """Partition ``merged`` by ``patch_order``, sort both parts, then combine them.

    ``placement="first"`` puts all server-only items first (the layout of the
    design proposal) instead of Go's interleaving.
    """
    patch_items, server_only = partition(merged, patch_order, merge_key, path)
    patch_items = sort_by_order(patch_items, patch_order, merge_key, is_map, path)
    server_only = sort_by_order(server_only, server_order, merge_key, is_map, path)
    if placement == "first":
        return server_only + patch_items
    return interleave(server_only, patch_items, server_order, merge_key)
