"""Associative lists: element identity, matching and the rebuilt order.

Pure helpers for :meth:`.walker.Walker.walk_associative_list` (the walker
does the traversal and writes the list through its representation; nothing
here walks, merges or writes).  Result order: local's
order is kept, local-only elements stay where they are, elements of
origin/upstream that local lacks are appended in the order origin, then
upstream (so upstream additions come last, in upstream order).
"""

from __future__ import annotations

import copy
from typing import Any

from krm_merge.krm.values import Label

from .nodes import MISSING, plain
from .rules import ListRule

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


def element_label(rule: ListRule, key: Key) -> Label:
    """``[name=app]`` — how an element appears in a field path."""
    if rule.keys:
        pairs = zip(rule.keys, key)
    elif rule.key_fn is not None:
        pairs = zip(key[:1], key[-1:])
    else:
        value = key[0]
        return Label(str(value[-1] if isinstance(value, tuple) else value))
    return Label(",".join(f"{f}={v}" for f, v in pairs))


def _key_text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value)


def index_elements(versions: Any, rule: ListRule) -> dict[Key, Any]:
    """First element of a list for each key."""
    out: dict[Key, Any] = {}
    if isinstance(versions, list):
        for element in versions:
            k = element_key(element, rule)
            if k is not None and k not in out:
                out[k] = element
    return out


def ordered_keys(*indexes: dict[Key, Any]) -> list[Key]:
    """Keys of local, then origin, then upstream, first occurrence first."""
    seen: dict[Key, None] = {}
    for index in indexes:
        for k in index:
            seen.setdefault(k, None)
    return list(seen)


def rebuilt(seq: list[Any], local_keys: list[Key | None], merged: dict[Key, Any]) -> tuple[list[Any], list[int | None]]:
    """The merged elements in local's order, and for each the index it had in local's ``seq`` (None: new or replaced)."""
    out: list[Any] = []
    origins: list[int | None] = []
    placed: set[Key] = set()
    for i, (element, k) in enumerate(zip(seq, local_keys)):
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
    return out, origins
