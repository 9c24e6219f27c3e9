"""Promotion of one YAML text: find marked fields, set those whose marker has a setter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from krm_merge.promote.document import Document, format_path, parse_document
from krm_merge.promote.edit import Change, set_scalars
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.locate import MalformedMarker, find_marked_fields


class TextOutcome(NamedTuple):
    """The result of promoting one text."""

    text: str  # the new text (the same object when nothing changed)
    changes: list[Change]
    matched: int  # marked fields whose marker has a setter (already-current ones included)
    malformed: list[MalformedMarker]

    @property
    def changed(self) -> bool:
        """True when the text differs from the input."""
        return bool(self.changes)


def promote_text(text: str, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Set every field of ``text`` carrying a ``marker_key`` marker whose value is in ``setters``.

    A setter mapped to None names a marker that cannot be served (e.g. ``ns:policy:digest``
    when the image reference has no digest): finding it is an error.  Raises PromoteError for
    invalid YAML and for a matching marker on a mapping, sequence or alias.
    """
    if marker_key not in text:
        return TextOutcome(text, [], 0, [])
    doc = parse_document(text)
    return promote_document(doc, marker_key, setters)


def promote_document(doc: Document, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Like promote_text, on an already parsed document."""
    found, malformed = find_marked_fields(doc, marker_key)
    targets = []
    for marked in found:
        if marked.marker not in setters:
            continue  # other pipelines/environments: silently not ours
        if not marked.target.is_scalar:
            raise PromoteError(
                f"marker {marked.marker!r} is on a {marked.target.kind()}; only scalar values can be promoted",
                field=format_path(marked.target.path), line=marked.line)
        value = setters[marked.marker]
        if value is None:
            raise PromoteError(f"marker {marked.marker!r} asks for a part the new value does not have",
                               field=format_path(marked.target.path), line=marked.line)
        targets.append((marked.target, value, marked.marker))
    new_text, changes = set_scalars(doc, targets)
    return TextOutcome(new_text, changes, len(targets), malformed)
