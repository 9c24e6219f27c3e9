"""The full path: promoting a document through its libyaml index.

Every document the fast path (:mod:`krm_merge.promote.fastpath`) does not take comes here:
the document is composed with libyaml and indexed (:mod:`~krm_merge.promote.document`),
markers are placed by :mod:`~krm_merge.promote.locate`'s rules, path and label strategies
and kustomize images find their fields, and the edited text is parsed again and compared
node by node (:mod:`~krm_merge.promote.edit`) before it is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krm_merge.krm.values import format_path
from krm_merge.promote import kustomize_images, strategies
from krm_merge.promote.changes import Change
from krm_merge.promote.document import Document, Entry, parse_document
from krm_merge.promote.edit import set_scalars, with_sources
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.locate import MalformedMarker, find_marked_fields
from krm_merge.promote.request import Resolved
from krm_merge.promote.units import Setter, TextOutcome
from krm_merge.records import Record


_BOM = "\ufeff"


def promote_text(text: str, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Set every field of ``text`` carrying a ``marker_key`` marker whose value is in ``setters``.

    A setter mapped to None names a marker that cannot be served (e.g. ``ns:policy:digest``
    when the image reference has no digest): finding it is an error.  Raises PromoteError for
    invalid YAML and for a matching marker on a mapping, sequence or alias.
    """
    if marker_key not in text:
        return TextOutcome(text, [], 0, [])
    bom, body = _split_bom(text)
    outcome = promote_document(parse_document(body, (marker_key,)), marker_key, setters)
    return outcome if outcome.text is body else outcome._replace(text=bom + outcome.text)


def promote_chunk_text(chunk: str, keys: list[str], setters: Mapping[str, Mapping[str, Setter]],
                       others: list[Resolved], matched: list[int], *, what: str,
                       line_offset: int) -> tuple[str, list[Change], list[MalformedMarker], int]:
    """Index one ``---`` chunk and promote it: (new text, changes, malformed markers, documents).

    The text is the input object when nothing changed.
    """
    bom, body = _split_bom(chunk)
    # Marker-only chunks index just the lines around the markers; strategies and
    # kustomize images look fields up by path and need the whole index.
    doc = parse_document(body, None if others else keys, what=what, line_offset=line_offset)
    new_body, changes, malformed = promote_chunk(doc, keys, setters, others, matched)
    return (chunk if new_body is body else bom + new_body), changes, malformed, len(doc.roots)


def _split_bom(text: str) -> tuple[str, str]:
    # libyaml drops a stream's leading byte order mark and counts its marks from after it,
    # so the index would be one character early (and one more for each further mark the
    # text starts with, once one is set aside): index the text without them all (they are
    # on no line of their own) and put them back.
    body = text.lstrip(_BOM)
    return text[: len(text) - len(body)], body


def promote_document(doc: Document, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Like promote_text, on an already parsed document."""
    targets: list[Target] = []
    malformed = marker_targets(doc, marker_key, {m: (v, (), m) for m, v in setters.items()}, targets)
    new_text, changes = apply_targets(doc, targets)
    return TextOutcome(new_text, changes, len(checked(targets)), malformed)


class Target(Record):
    """A field to set, and why."""

    entry: Entry
    value: str
    indices: tuple[int, ...]  # the resolved promotions asking for it (counted as matches)
    source: str  # the marker or strategy, for reports
    marker: str | None = None  # the marker's value, for marker targets


def promote_chunk(doc: Document, keys: list[str], setters: Mapping[str, Mapping[str, Setter]], others: list[Resolved],
                  matched: list[int]) -> tuple[str, list[Change], list[MalformedMarker]]:
    """Apply marker setters and the other promotions to one indexed document; count matches."""
    targets: list[Target] = []
    malformed: list[MalformedMarker] = []
    for key in keys:
        malformed.extend(marker_targets(doc, key, setters[key], targets))
    inserts: list[Any] = []
    for r in others:
        if r.promotion.strategy == "kustomize-image":
            found = kustomize_images.plan(doc, r)
            if found is None:
                continue
            targets.extend(Target(e, v, (), r.label) for e, v in found.scalars)
            inserts.extend(found.inserts)
            matched[r.index] += 1
            continue
        for entry in strategies.select_fields(doc, r):
            targets.append(Target(entry, r.promotion.value, (r.index,), r.label))
    for t in checked(targets):
        for index in t.indices:
            matched[index] += 1
    if inserts:
        new_text, changes = kustomize_images.apply(doc, checked(targets), inserts)
    else:
        new_text, changes = apply_targets(doc, targets)
    return new_text, changes, malformed


def marker_targets(doc: Document, key: str, setters: Mapping[str, Setter],
                    targets: list[Target]) -> list[MalformedMarker]:
    found, malformed = find_marked_fields(doc, key)
    for marked in found:
        setter = setters.get(marked.marker)
        if setter is None:
            continue  # other pipelines/environments: silently not ours
        if not marked.target.is_scalar:
            raise PromoteError(
                f"marker {marked.marker!r} is on a {marked.target.kind()}; only scalar values can be promoted",
                field=format_path(marked.target.path), line=marked.line)
        value, indices, marker = setter
        if value is None:
            raise PromoteError(f"marker {marked.marker!r} asks for a part the new value does not have",
                               field=format_path(marked.target.path), line=marked.line)
        targets.append(Target(marked.target, value, indices, f'{{"{key}": "{marker}"}}', marker))
    return malformed


def checked(targets: list[Target]) -> list[Target]:
    """One target per field; the same field asked for two different values is a conflict."""
    chosen: dict[int, Target] = {}
    for t in targets:
        before = chosen.get(id(t.entry.node))
        if before is None:
            chosen[id(t.entry.node)] = t
        elif before.value != t.value:
            raise PromoteError(f"conflicting values for the same field: {before.value!r} from {before.source} "
                               f"and {t.value!r} from {t.source}", field=format_path(t.entry.path))
    return list(chosen.values())


def apply_targets(doc: Document, targets: list[Target]) -> tuple[str, list[Change]]:
    unique = checked(targets)
    new_text, changes = set_scalars(doc, [(t.entry, t.value, t.marker) for t in unique])
    return new_text, with_sources(doc, unique, changes)
