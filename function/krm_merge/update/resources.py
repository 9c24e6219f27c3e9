"""One resource of a package update: its rules, content comparison, and taking upstream's version.

Texts are compared before data (bookkeeping removed), so only resources
that really differ are parsed; the data comparison is the project's one
equality (:func:`krm_merge.krm.values.same`: 1, 1.0 and true differ).
"""

from __future__ import annotations

from typing import Any

from krm_merge.errors import KrmMergeError
from krm_merge.kptfile import document as kptfile_document
from krm_merge.krm import splice
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import RULES_ANNOTATION, FieldRule, parse_rules
from krm_merge.yaml.load import load_data

from .identity import BOOKKEEPING, bookkeeping_of, content_text, strip_bookkeeping


def rules_of(obj: KubeObject, *, kinds: bool) -> list[FieldRule]:
    """The rules of ``obj``'s conflicts annotation; KrmError naming the resource and the rule."""
    where = f"metadata.annotations.{RULES_ANNOTATION}"
    try:
        return parse_rules(load_data(obj.annotations[RULES_ANNOTATION], f"{obj.display()} {where}"), kinds=kinds)
    except (ValueError, KrmMergeError) as err:
        raise KrmError(f"{where}: {err}", obj, where) from None


def is_crd(obj: KubeObject) -> bool:
    """Whether the item is a CustomResourceDefinition (its schema joins the merge's)."""
    return obj.kind == "CustomResourceDefinition" and obj.group == "apiextensions.k8s.io"


def same_content(a: KubeObject, b: KubeObject, *, kptfile: bool = False) -> bool:
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


def drop_nulls(obj: KubeObject) -> None:
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


def drop_bookkeeping(obj: KubeObject) -> None:
    """Remove kpt's bookkeeping annotations (path, index, identifiers) from the item."""
    if bookkeeping_of(obj):
        data = obj.copy_data()
        strip_bookkeeping(data)
        obj.set_data(data)


def take_upstream(obj: KubeObject, up: KubeObject) -> None:
    """Make ``obj`` upstream's resource, keeping ``obj``'s own bookkeeping annotations."""
    mine = bookkeeping_of(obj)
    new = KubeObject(up.text)
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


__all__ = ["drop_bookkeeping", "drop_nulls", "is_crd", "rules_of", "same_content", "take_upstream"]
