"""Associative lists: element identity, matching and the rebuilt order.

Pure helpers for :meth:`.walker.Walker.walk_associative_list` (the walker
does the traversal; nothing here walks or merges).  Result order: local's
order is kept, local-only elements stay where they are, elements of
origin/upstream that local lacks are appended in the order origin, then
upstream (so upstream additions come last, in upstream order).
"""

from __future__ import annotations

import copy
from typing import Any

from ruamel.yaml.comments import CommentedSeq

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


def rebuild(seq: CommentedSeq, local_keys: list[Key | None], merged: dict[Key, Any]) -> None:
    """Write the merged elements back into local's ``seq`` keeping local order."""
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
    _replace_items(seq, out, origins)


def _replace_items(seq: CommentedSeq, items: list[Any], origins: list[int | None]) -> None:
    """Replace the elements keeping each surviving element's own comments."""
    old_comments = dict(seq.ca.items) if hasattr(seq, "ca") else {}
    seq[:] = items
    if hasattr(seq, "ca"):
        seq.ca.items.clear()
        for new_i, old_i in enumerate(origins):
            if old_i is not None and old_i in old_comments:
                seq.ca.items[new_i] = old_comments[old_i]
