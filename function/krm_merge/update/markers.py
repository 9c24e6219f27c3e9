"""kpt's identity markers on the resources an update writes: the ``# kpt-merge`` comment and the upstream identifier.

Placed as kpt places them, by adding lines to the text (about 100x cheaper
than a round trip, and the rest of the text stays byte for byte); every
splice is read back before it is accepted.
"""

from __future__ import annotations

import re

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError
from krm_merge.yaml import scalars

from .identity import Identity, identity_of, with_kpt_merge_comment


_TOP_METADATA = re.compile(r"^metadata:[ \t]*(#[^\n]*)?\n", re.M)
UPSTREAM_IDENTIFIER = "internal.kpt.dev/upstream-identifier"


def upstream_identifier(identity: Identity) -> str:
    """kpt's ``internal.kpt.dev/upstream-identifier`` value: ``group|Kind|namespace|name``.

    kpt writes ``default`` for an empty namespace, cluster-scoped kinds included.
    """
    return f"{identity.group}|{identity.kind}|{identity.namespace or 'default'}|{identity.name}"


def add_identity_markers(obj: KubeObject) -> None:
    """kpt's ``# kpt-merge`` comment and upstream-identifier annotation, where kpt writes them, when missing."""
    identity = identity_of(obj)
    obj.set_text(with_kpt_merge_comment(obj.text, identity))
    try:
        present = UPSTREAM_IDENTIFIER in obj.annotations
    except KrmError:
        return  # not a readable resource: nothing to mark
    if present or not identity.name or not isinstance(obj.data, dict):
        return
    value = upstream_identifier(identity)
    text = with_annotations_text(obj.text, {UPSTREAM_IDENTIFIER: value})
    if text is not None:
        obj.set_text(text)
        return
    data = obj.copy_data()
    meta = data.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations", {}), dict):
        meta.setdefault("annotations", {})[UPSTREAM_IDENTIFIER] = value
        obj.set_data(data)


def _block_end(text: str, start: int, parent_indent: int) -> int:
    """Offset after the last non-blank line of the block starting at ``start`` (lines indented deeper than the parent)."""
    end = pos = start
    for line in text[start:].splitlines(keepends=True):
        stripped = line.lstrip(" ")
        if stripped.strip():
            if len(line) - len(stripped) <= parent_indent:
                break
            end = pos + len(line)
        pos += len(line)
    return end


def with_annotations_text(text: str, annotations: dict[str, str]) -> str | None:
    """``text`` with ``annotations`` added under a block ``metadata:`` (None when the layout is not simple).

    Placed as kpt places them: after the last entry of ``annotations``, or
    a new ``annotations:`` after the last entry of ``metadata``.  The result
    is checked to read back as the text's data plus the annotations.
    """
    m = _TOP_METADATA.search(text)
    if m is None:
        return None
    lines = []
    for key, value in annotations.items():
        k = scalars.double_quoted(key) if scalars.needs_double_quotes(key) else key
        v = scalars.single_quoted(value)  # kpt single-quotes the value
        if v is None or "\n" in k:
            return None
        lines.append(f"{k}: {v}")
    start = m.end()
    block = text[start:_block_end(text, start, 0)]
    first = re.match(r"\s*?^( +)\S", block, re.M)
    if first is None:
        return None
    indent = first.group(1)
    empty = re.search(rf"^{indent}annotations:[ \t]*\{{\}}[ \t]*\n", block, re.M)
    if empty is not None:  # kpt drops an empty flow `annotations: {}` and writes the block where it adds one
        return with_annotations_text(text[:start + empty.start()] + text[start + empty.end():], annotations)
    ann = re.search(rf"^{indent}annotations:[ \t]*(#[^\n]*)?\n", block, re.M)
    if ann is not None:
        child = re.match(r"( +)\S", block[ann.end():])
        child_indent = child.group(1) if child and len(child.group(1)) > len(indent) else indent + "  "
        insert_at = _block_end(text, start + ann.end(), len(indent))
        added = "".join(f"{child_indent}{line}\n" for line in lines)
    else:
        insert_at = _block_end(text, start, 0)
        added = f"{indent}annotations:\n" + "".join(f"{indent}  {line}\n" for line in lines)
    if not text[:insert_at].endswith("\n"):
        added = "\n" + added  # the block ends the text without a newline
    out = text[:insert_at] + added + text[insert_at:]
    try:
        before, after = yamlio.load_data(text), yamlio.load_data(out)
    except KrmError:
        return None
    if not isinstance(before, dict) or not isinstance(before.get("metadata"), dict):
        return None
    expected_ann = dict(before["metadata"].get("annotations") or {})
    expected_ann.update(annotations)
    before["metadata"]["annotations"] = expected_ann
    return out if after == before else None


__all__ = ["UPSTREAM_IDENTIFIER", "add_identity_markers", "upstream_identifier", "with_annotations_text"]
