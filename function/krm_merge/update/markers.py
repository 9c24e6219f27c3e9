"""kpt's identity markers on the resources an update writes: the ``# kpt-merge`` comment and the upstream identifier.

Placed as kpt places them, by adding lines to the text (about 100x cheaper
than a round trip, and the rest of the text stays byte for byte); every
splice is read back before it is accepted.
"""

from __future__ import annotations

from krm_merge.krm import splice
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import KrmError

from .identity import Identity, identity_of, with_kpt_merge_comment

UPSTREAM_IDENTIFIER = "internal.kpt.dev/upstream-identifier"


def upstream_identifier(identity: Identity) -> str:
    """kpt's ``internal.kpt.dev/upstream-identifier`` value: ``group|Kind|namespace|name``.

    kpt writes ``default`` for an empty namespace, cluster-scoped kinds included.
    """
    return f"{identity.group}|{identity.kind}|{identity.namespace or 'default'}|{identity.name}"


def add_identity_markers(obj: Item) -> None:
    """kpt's ``# kpt-merge`` comment and upstream-identifier annotation, where kpt writes them, when missing."""
    identity = identity_of(obj)
    commented = with_kpt_merge_comment(obj.text, identity)
    try:
        present = UPSTREAM_IDENTIFIER in obj.annotations  # a comment on `metadata:` changes no annotation
    except KrmError:
        obj.set_text(commented)
        return  # not a readable resource: nothing to mark
    if present or not identity.name:
        obj.set_text(commented)
        return
    value = upstream_identifier(identity)
    # Both splices are proven at once: the annotation's read-back compares the final text with the data the item
    # read before the comment (read once: reading the commented text again cost a large resource two parses).
    text = splice.with_annotations(commented, {UPSTREAM_IDENTIFIER: value}, obj.text_data)
    obj.set_text(commented if text is None else text)
    if text is not None or not isinstance(obj.data, dict):
        return
    data = obj.copy_data()
    meta = data.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations", {}), dict):
        meta.setdefault("annotations", {})[UPSTREAM_IDENTIFIER] = value
        obj.set_data(data)


__all__ = ["UPSTREAM_IDENTIFIER", "add_identity_markers", "upstream_identifier"]
