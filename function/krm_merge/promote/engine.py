"""The promote engine: apply resolved promotions to texts, the one code path of ``promote``.

The function mode hands it one :class:`Unit` per item, the ``promote`` command one per
file; both get back per-unit new texts, changes, warnings and errors, and per-promotion
match counts.  A unit's text is split at ``---`` lines and only the documents a promotion
can touch are parsed (with libyaml) and verified, so a file of a hundred Deployments with
one marker costs one small parse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple


from krm_merge.promote.document import Document, Entry, format_path, parse_document, split_stream
from krm_merge.promote.edit import Change, set_scalars, with_sources
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.locate import MalformedMarker, find_marked_fields
from krm_merge.promote.request import Resolved
from krm_merge.promote.units import Outcome, Unit, UnitResult

# ----------------------------------------------------------------- one text, one key


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
    doc = parse_document(text, (marker_key,))
    return promote_document(doc, marker_key, setters)


def promote_document(doc: Document, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Like promote_text, on an already parsed document."""
    targets: list[_Target] = []
    malformed = _marker_targets(doc, marker_key, {m: (v, (), m) for m, v in setters.items()}, targets)
    new_text, changes = _apply(doc, targets)
    return TextOutcome(new_text, changes, len(_checked(targets)), malformed)


# ------------------------------------------------------------------------ many units

__all__ = ["Outcome", "TextOutcome", "Unit", "UnitResult", "promote_document", "promote_text", "promote_units"]


class _Target(NamedTuple):
    entry: Entry
    value: str
    indices: tuple[int, ...]  # the resolved promotions asking for it (counted as matches)
    source: str  # the marker or strategy, for reports
    marker: str | None = None  # the marker's value, for marker targets


def promote_units(units: Sequence[Unit], resolved: Sequence[Resolved]) -> Outcome:
    """Apply every resolved promotion to every unit; errors are collected per unit."""
    matched = [0] * len(resolved)
    outcome = Outcome([], [], matched)
    marker_keys = sorted({r.marker_key for r in resolved if r.marker_key})
    by_path = [r for r in resolved if r.marker_key is None and r.promotion.strategy in ("path", "kustomize-image")]
    by_labels = [r for r in resolved if r.promotion.strategy == "labels"]
    strategies = kustomize_images = None
    if by_path or any(r.scope for r in resolved):
        from krm_merge.promote import kustomize_images, strategies  # only runs with templates need them
    # Without path-scoped marker promotions every unit gets the same setters: build them once.
    unscoped = None if any(r.scope for r in resolved if r.marker_key) else _setters_for(
        Unit("", None), marker_keys, resolved, strategies)
    for unit in units:
        keys = [k for k in marker_keys if k in unit.text]
        selected = [r for r in by_path if _in_scope(unit, r, strategies, kustomize_images)]
        if not keys and not selected and not by_labels:
            continue
        try:
            setters = unscoped if unscoped is not None else _setters_for(unit, marker_keys, resolved, strategies)
            result = _promote_unit(unit, keys, setters, selected + by_labels, matched)
        except PromoteError as err:
            outcome.errors.append((unit, err))
            continue
        if result is not None:
            outcome.results.append(result)
    return outcome


def _in_scope(unit: Unit, r: Resolved, strategies: Any, kustomize_images: Any) -> bool:
    if unit.path is None or r.scope is None:
        return False
    if r.promotion.strategy == "kustomize-image":
        return kustomize_images.is_kustomization_in(unit.path, r.scope)
    return bool(strategies.path_selected(unit.path, r.scope))


_Setter = tuple["str | None", tuple[int, ...], str]  # (value, promotion indices, marker)
_Setters = dict[str, dict[str, _Setter]]  # marker key -> marker value -> setter


def _setters_for(unit: Unit, keys: list[str], resolved: Sequence[Resolved], strategies: Any) -> _Setters:
    setters: _Setters = {k: {} for k in keys}
    for r in resolved:
        if r.marker_key not in setters:
            continue
        if r.scope is not None and not (unit.path and strategies.path_selected(unit.path, r.scope)):
            continue  # with markers, pathTemplate narrows the files searched (like Flux's update path)
        for marker, value in r.setters.items():
            before = setters[r.marker_key].get(marker)
            if before is not None and before[0] != value:
                first = resolved[before[1][0]].promotion.describe()
                raise PromoteError(f"conflicting promotions for marker {marker!r}: {first} and "
                                   f"{r.promotion.describe()}", file=unit.path)
            indices = (before[1] if before else ()) + (r.index,)
            setters[r.marker_key][marker] = (before[0] if before else value, indices, marker)
    return setters


def _promote_unit(unit: Unit, keys: list[str], setters: _Setters, others: list[Resolved],
                  matched: list[int]) -> UnitResult | None:
    text = unit.text
    chunks = split_stream(text) if not others else None
    if chunks is None:
        chunks = [(0, text)]
    pieces: list[str] = []
    changes: list[Change] = []
    malformed: list[MalformedMarker] = []
    touched = False
    doc_index = 0
    pos = 0
    for start, chunk in chunks:
        if not others and not any(k in chunk for k in keys):
            doc_index += _count_documents_cheaply(chunk)
            continue
        touched = True
        line_offset = text.count("\n", 0, start)
        try:
            # Marker-only chunks index just the lines around the markers; strategies and
            # kustomize images look fields up by path and need the whole index.
            doc = parse_document(chunk, None if others else keys)
            new_chunk, doc_changes, doc_malformed = _promote_chunk(doc, keys, setters, others, matched)
        except PromoteError as err:
            raise _shifted(err, line_offset) from None
        malformed.extend(m._replace(line=m.line + line_offset) for m in doc_malformed)
        changes.extend(c._replace(line=c.line + line_offset, doc=c.doc + doc_index) for c in doc_changes)
        doc_index += len(doc.roots)
        if new_chunk is not chunk:
            pieces.append(text[pos:start])
            pieces.append(new_chunk)
            pos = start + len(chunk)
    if not touched:
        return None
    if not pieces:
        return UnitResult(unit, text, changes, malformed)
    pieces.append(text[pos:])
    return UnitResult(unit, "".join(pieces), changes, malformed)


def _count_documents_cheaply(chunk: str) -> int:
    """1 when an unparsed chunk holds content (so document indexes stay right), else 0."""
    for line in chunk.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return 1
    return 0


def _shifted(err: PromoteError, lines: int) -> PromoteError:
    if err.line is None or lines == 0:
        return err
    return PromoteError(err.message, file=err.file, index=err.index, field=err.field, line=err.line + lines)


def _promote_chunk(doc: Document, keys: list[str], setters: _Setters, others: list[Resolved],
                   matched: list[int]) -> tuple[str, list[Change], list[MalformedMarker]]:
    targets: list[_Target] = []
    malformed: list[MalformedMarker] = []
    for key in keys:
        malformed.extend(_marker_targets(doc, key, setters[key], targets))
    inserts: list[Any] = []
    if others:
        from krm_merge.promote import kustomize_images, strategies
    for r in others:
        if r.promotion.strategy == "kustomize-image":
            found = kustomize_images.plan(doc, r)
            if found is None:
                continue
            targets.extend(_Target(e, v, (), r.label) for e, v in found.scalars)
            inserts.extend(found.inserts)
            matched[r.index] += 1
            continue
        for entry in strategies.select_fields(doc, r):
            targets.append(_Target(entry, r.promotion.value, (r.index,), r.label))
    for t in _checked(targets):
        for index in t.indices:
            matched[index] += 1
    if inserts:
        new_text, changes = kustomize_images.apply(doc, _checked(targets), inserts)
    else:
        new_text, changes = _apply(doc, targets)
    return new_text, changes, malformed


def _marker_targets(doc: Document, key: str, setters: Mapping[str, _Setter],
                    targets: list[_Target]) -> list[MalformedMarker]:
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
        targets.append(_Target(marked.target, value, indices, f'{{"{key}": "{marker}"}}', marker))
    return malformed


def _checked(targets: list[_Target]) -> list[_Target]:
    """One target per field; the same field asked for two different values is a conflict."""
    chosen: dict[int, _Target] = {}
    for t in targets:
        before = chosen.get(id(t.entry.node))
        if before is None:
            chosen[id(t.entry.node)] = t
        elif before.value != t.value:
            raise PromoteError(f"conflicting values for the same field: {before.value!r} from {before.source} "
                               f"and {t.value!r} from {t.source}", field=format_path(t.entry.path))
    return list(chosen.values())


def _apply(doc: Document, targets: list[_Target]) -> tuple[str, list[Change]]:
    unique = _checked(targets)
    new_text, changes = set_scalars(doc, [(t.entry, t.value, t.marker) for t in unique])
    return new_text, with_sources(doc, unique, changes)
