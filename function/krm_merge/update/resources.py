"""One resource of a package update: its rules, content comparison, and taking upstream's version.

Texts are compared before data (bookkeeping removed), so only resources
that really differ are parsed; the data comparison is the project's one
equality (:func:`krm_merge.krm.values.same`: 1, 1.0 and true differ).
"""

from __future__ import annotations

from typing import Any

from krm_merge.errors import KrmMergeError
from krm_merge.kptfile import document as kptfile_document
from krm_merge.krm import splice, yamlio
from krm_merge.krm.itemviews import with_reader_annotations
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import RULES_ANNOTATION, FieldRule, parse_rules
from krm_merge.yaml.load import load_data

from .identity import BOOKKEEPING, bookkeeping_of, content_text, strip_bookkeeping, without_kpt_merge_comment
from .markers import UPSTREAM_IDENTIFIER
from .unchanged import disjoint_changes, without_bookkeeping


def rules_of(obj: Item, *, kinds: bool) -> list[FieldRule]:
    """The rules of ``obj``'s conflicts annotation; KrmError naming the resource and the rule."""
    where = f"metadata.annotations.{RULES_ANNOTATION}"
    try:
        return parse_rules(load_data(obj.annotations[RULES_ANNOTATION], f"{obj.display()} {where}"), kinds=kinds)
    except (ValueError, KrmMergeError) as err:
        raise KrmError(f"{where}: {err}", obj, where) from None


def is_crd(obj: Item) -> bool:
    """Whether the item is a CustomResourceDefinition (its schema joins the merge's)."""
    return obj.kind == "CustomResourceDefinition" and obj.group == "apiextensions.k8s.io"


def same_content(a: Item, b: Item, *, kptfile: bool = False) -> bool:
    """Equal apart from bookkeeping (Kptfiles: also apart from upstream/upstreamLock/name)."""
    if content_text(a.text) == content_text(b.text):
        return True
    # The one equality of the project: 1, 1.0 and true are different values.
    return same(_comparable(a.data, kptfile), _comparable(b.data, kptfile))


def _comparable(data: Any, kptfile: bool) -> Any:
    if not isinstance(data, dict):
        return data
    out = dict(data)
    meta = dict(out.get("metadata") or {})
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if not _is_bookkeeping(k)}
    if ann:
        meta["annotations"] = ann
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    return kptfile_document.comparable(out) if kptfile else out


def _is_bookkeeping(key: str) -> bool:
    return bool(BOOKKEEPING.match(key))


def drop_nulls(obj: Item) -> None:
    """Remove mapping entries whose value is null, as kpt's merge does in every resource it writes.

    (An explicit null deletes the field: docs/merge.md.)  Untouched resources
    are never written, so theirs stay.
    """
    if not isinstance(obj.data, dict) or not _has_null(obj.data):
        return
    obj.set_data(_without_nulls(obj.copy_data()))


def _has_null(data: Any) -> bool:
    if isinstance(data, dict):
        return any(v is None or _has_null(v) for v in data.values())
    if isinstance(data, list):
        return any(_has_null(v) for v in data)
    return False


def _without_nulls(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_without_nulls(v) for v in data]
    return data


_ABSENT: Any = object()  # a field a version does not have (distinct from an explicit null)


def take_upstream_change(
    obj: Item, base: Item, up: Item, *, renamed: bool = False, comments: bool = False,
) -> bool:
    """Apply upstream's change (origin -> upstream, as data) to ``obj``, a resource local left as origin's.

    The result is ``obj``'s own text with only the fields upstream changed
    edited, through the editing layer (the fast editor; else upstream's
    changed lines where local's text has origin's lines, as for a literal
    block; else the round-trip editor; each proven by reading the text
    back): untouched fields keep local's indentation, quoting, wrapping and
    comments, and a changed one keeps its line comment.  Bookkeeping stays local's, but for kpt's
    identity markers of a resource upstream ``renamed``: they go, and the
    package merge writes the new name's (:mod:`.markers`).  Falls back to
    upstream's text when no editor can print the change faithfully.

    When upstream changed ``comments`` too, only upstream's changed lines
    carried onto local's text keep them: False when that does not read back
    as the change (the caller then merges 3-way, kpt's comment rule).
    """
    if renamed:
        obj.set_text(without_kpt_merge_comment(obj.text))
    local, mine = obj.data, bookkeeping_of(obj)
    if renamed:
        mine = {k: v for k, v in mine.items() if k != UPSTREAM_IDENTIFIER}
    change = upstream_change(without_bookkeeping(local), without_bookkeeping(base.data), without_bookkeeping(up.data))
    if mine:
        change = with_reader_annotations(change, mine)  # local's bookkeeping back (the mappings on the way copied)
    if comments:
        carried = yamlio.carried_edit(obj.text, base.text, up.text, change)
        if carried is not None:
            obj.set_text(carried)
        return carried is not None
    try:
        obj.set_data(change, change=(base.text, up.text))
    except KrmError:  # e.g. anchors an edit cannot keep: upstream's text is upstream's data too
        take_upstream(obj, up)
        drop_nulls(obj)
    return True


def take_disjoint_changes(obj: Item, base: Item, up: Item) -> bool:
    """Apply upstream's change to ``obj``, a resource local changed too, when the two changes touch no common
    field (:func:`.unchanged.disjoint_changes`, bookkeeping aside): the 3-way merge's answer as data, written
    into local's text by the editors as for a resource unchanged locally (no ruamel, no schemas).

    False, ``obj`` unchanged, when the changes meet or no editor prints the result faithfully.
    """
    try:
        local, origin, upstream = (without_bookkeeping(o.data) for o in (obj, base, up))
    except KrmError:
        return False  # the 3-way merge reports it
    if not all(isinstance(d, dict) and "apiVersion" in d and "kind" in d for d in (local, origin, upstream)):
        return False  # a plain YAML file (values.yaml): the reader's bookkeeping would leave a metadata key in it
    if not disjoint_changes(local, origin, upstream):
        return False
    change = upstream_change(local, origin, upstream)
    mine = bookkeeping_of(obj)
    if mine:
        change = with_reader_annotations(change, mine)
    before = obj.text
    try:
        obj.set_data(change, change=(base.text, up.text))
    except KrmError:
        obj.set_text(before)  # drops a round-trip tree the failed print left edited
        return False
    return True


def upstream_change(local: Any, origin: Any, upstream: Any) -> Any:
    """``local`` (which holds origin's data) with what upstream changed: the data a field-level update writes.

    A value upstream left as origin's stays local's (the same data, and its
    bytes); a mapping all three have is edited key by key (a key upstream
    deleted goes, local's own keys stay, a key upstream added is placed after
    its predecessor in upstream's order); a list element equal to one of
    origin's stays local's; anything else is upstream's value.  An explicit
    null is kept where nobody changed it (kubectl keeps one in an object it
    patches); a null upstream writes anew deletes the field, as kpt's merge
    does.
    """
    if origin is not _ABSENT and same(origin, upstream):
        return local
    if isinstance(local, dict) and isinstance(upstream, dict) and (origin is _ABSENT or isinstance(origin, dict)):
        return _map_change(local, {} if origin is _ABSENT else origin, upstream)
    if isinstance(local, list) and isinstance(upstream, list) and isinstance(origin, list):
        return _list_change(local, origin, upstream)
    return _without_nulls(upstream)


def _map_change(local: dict, origin: dict, upstream: dict) -> dict:
    kept = {}
    for key, value in local.items():
        if key in upstream:
            new = upstream_change(value, origin.get(key, _ABSENT), upstream[key])
            if new is not None or (upstream[key] is None and origin.get(key, _ABSENT) is None):
                kept[key] = new
        elif key not in origin:
            kept[key] = value  # local's own (kpt's identifier): not upstream's business
    # A key upstream added goes after the key before it in upstream's order (local's key order stays);
    # before every key when none is local's.
    after: dict[Any, list[Any]] = {}
    anchor = _ABSENT
    for key, value in upstream.items():
        if key in kept:
            anchor = key
        elif key not in local and value is not None:
            after.setdefault(anchor, []).append(key)
    if not after:
        return kept
    order = after.get(_ABSENT, []) + [k for key in kept for k in (key, *after.get(key, ()))]
    return {key: kept[key] if key in kept else _without_nulls(upstream[key]) for key in order}


def _list_change(local: list, origin: list, upstream: list) -> list:
    taken: set[int] = set()
    out = []
    for k, value in enumerate(upstream):
        same_place = k < len(origin) and k < len(local) and k not in taken
        if same_place and same(origin[k], value):
            j: int | None = k  # the common case first: the element where it was
        else:
            j = next((j for j, o in enumerate(origin) if j not in taken and j < len(local) and same(o, value)), None)
        if j is None and same_place and isinstance(value, dict):
            j = k  # an element changed in place: edited field by field
        if j is None:
            out.append(_without_nulls(value))
            continue
        taken.add(j)
        out.append(upstream_change(local[j], origin[j], value))
    return out


def drop_bookkeeping(obj: Item) -> None:
    """Remove kpt's bookkeeping annotations (path, index, identifiers) from the item."""
    if bookkeeping_of(obj):
        data = obj.copy_data()
        strip_bookkeeping(data)
        obj.set_data(data)


def take_upstream(obj: Item, up: Item) -> None:
    """Make ``obj`` upstream's resource, keeping ``obj``'s own bookkeeping annotations."""
    mine = bookkeeping_of(obj)
    new = Item(up.text)
    theirs = bookkeeping_of(new)
    if mine and not theirs:
        # The common case of a package kpt fetched: local carries kpt's upstream identifier,
        # upstream's file does not.  Adding lines is ~100x cheaper than a round trip.
        text = splice.with_annotations(up.text, mine)
        if text is not None:
            obj.set_text(text)
            return
    if mine or theirs:
        data = new.copy_data()
        strip_bookkeeping(data)
        if mine:
            data.setdefault("metadata", {}).setdefault("annotations", {}).update(mine)
        new.set_data(data)
    obj.set_text(new.text)


__all__ = [
    "drop_bookkeeping", "drop_nulls", "is_crd", "rules_of", "same_content", "take_upstream", "take_upstream_change",
    "upstream_change",
]
