"""Associative lists: elements matched by key (or by value for scalar sets).

Result order: local's order is kept, local-only elements stay where they are,
elements of origin/upstream that local lacks are appended in the order
origin, then upstream (so upstream additions come last, in upstream order).
Each matched element is merged as a map (field by field); an element deleted
upstream loses the fields local did not add and disappears when nothing is
left; an element deleted locally stays deleted unless upstream changed it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ruamel.yaml.comments import CommentedSeq

from .nodes import MISSING, new_seq, plain, same
from .rules import ListRule

if TYPE_CHECKING:
    from .rules import MergeSchema
    from .walker import Merger

Key = tuple[Any, ...]


def element_key(element: Any, rule: ListRule) -> Key | None:
    """Identity of one element, or None when it has none (kept as local-only)."""
    if rule.key_fn is not None:
        return rule.key_fn(element)
    if not rule.keys:
        if isinstance(element, (dict, list)) or element is None:
            return None
        return (plain(element),)
    if not isinstance(element, dict):
        return None
    values = tuple(_key_text(element.get(k)) for k in rule.keys)
    if all(v == "" for v in values):
        return None
    return values


def _key_text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value)


def _index(versions: Any, rule: ListRule) -> dict[Key, Any]:
    """First element of a list for each key."""
    out: dict[Key, Any] = {}
    if isinstance(versions, list):
        for element in versions:
            k = element_key(element, rule)
            if k is not None and k not in out:
                out[k] = element
    return out


def merge_associative(
    merger: Merger, l: Any, o: Any, u: Any, rule: ListRule, elem_schema: MergeSchema | None, path: tuple[Any, ...]
) -> Any:
    """Merge an associative list; returns the new local list or MISSING."""
    upstream_deleted = u is MISSING
    if rule.whole_elements and upstream_deleted and isinstance(o, list):
        u = []  # element-level rules decide what survives
    if (u is MISSING or u is None) and o is not MISSING and o is not None:
        return MISSING
    if u is MISSING and o is MISSING:
        return l
    if l is MISSING or l is None:
        l = new_seq()
    local_keys = [element_key(e, rule) for e in l]  # before elements are merged in place
    li, oi, ui = _index(l, rule), _index(o, rule), _index(u, rule)
    merged: dict[Key, Any] = {}
    for key in _ordered_keys(li, oi, ui):
        merged[key] = _merge_element(merger, li.get(key, MISSING), oi.get(key, MISSING), ui.get(key, MISSING), rule, elem_schema, path, key)
    _rebuild(l, local_keys, merged)
    if not l and upstream_deleted:
        return MISSING
    return l


def _ordered_keys(*indexes: dict[Key, Any]) -> list[Key]:
    seen: dict[Key, None] = {}
    for index in indexes:
        for k in index:
            seen.setdefault(k, None)
    return list(seen)


def _merge_element(
    merger: Merger, l: Any, o: Any, u: Any, rule: ListRule, elem_schema: MergeSchema | None, path: tuple[Any, ...], key: Key
) -> Any:
    if not rule.keys and rule.key_fn is None:
        return _merge_set_member(l, o, u)
    if rule.whole_elements and l is MISSING and o is MISSING:
        return u  # added upstream: taken as upstream wrote it (field order, comments)
    if rule.whole_elements and o is not MISSING:
        if l is MISSING:
            return MISSING
        if u is MISSING:
            return MISSING if same(l, o) else l
    label = "[" + ",".join(f"{f}={v}" for f, v in zip(rule.keys or key[:1], key[-1:] if not rule.keys else key)) + "]"
    result = merger.merge_map(l, o, u, elem_schema, path + (label,))
    if result is MISSING or not result:
        return MISSING
    if l is MISSING:
        for field, value in zip(rule.keys, key):
            if field not in result and value != "":
                source = u if u is not MISSING else o
                result[field] = source[field] if isinstance(source, dict) and field in source else value
    return result


def _merge_set_member(l: Any, o: Any, u: Any) -> Any:
    """A scalar in a set: added/removed upstream wins, else local decides."""
    if (o is MISSING) != (u is MISSING):
        return u
    return l


def _rebuild(l: CommentedSeq, local_keys: list[Key | None], merged: dict[Key, Any]) -> None:
    """Write the merged elements back into ``l`` keeping local order."""
    out: list[Any] = []
    origins: list[int | None] = []
    placed: set[Key] = set()
    for i, (element, k) in enumerate(zip(l, local_keys)):
        if k is None:
            out.append(element)
            origins.append(i)
            continue
        result = merged.get(k, MISSING)
        if result is MISSING:
            continue
        # duplicates of one key all become the merged element (as kpt does)
        out.append(result if k not in placed else copy.deepcopy(result))
        origins.append(i if result is element else None)
        placed.add(k)
    for k, result in merged.items():
        if k not in placed and result is not MISSING:
            out.append(result)
            origins.append(None)
    _replace_items(l, out, origins)


def _replace_items(seq: CommentedSeq, items: list[Any], origins: list[int | None]) -> None:
    """Replace the elements keeping each surviving element's own comments."""
    old_comments = dict(seq.ca.items) if hasattr(seq, "ca") else {}
    seq[:] = items
    if hasattr(seq, "ca"):
        seq.ca.items.clear()
        for new_i, old_i in enumerate(origins):
            if old_i is not None and old_i in old_comments:
                seq.ca.items[new_i] = old_comments[old_i]
