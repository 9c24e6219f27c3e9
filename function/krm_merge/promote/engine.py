"""The promote engine: apply resolved promotions to texts, the one code path of ``promote``.

The function mode hands it one :class:`Unit` per item, the ``promote`` command one per
file; both get back per-unit new texts, changes, warnings and errors, and per-promotion
match counts.  A unit's text is split at ``---`` lines and only the documents a promotion
can touch are looked at, so a file of a hundred Deployments with one marker costs one small
parse.  Each such document takes the fast path (:mod:`~krm_merge.promote.fastpath`: line
markers on one-line scalars of block YAML, no YAML library) when it can, else the full path
(:mod:`~krm_merge.promote.fullpath`: libyaml), which decides every case the fast path leaves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from krm_merge.promote import fastpath
from krm_merge.promote.changes import Change, split_stream
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.request import Resolved
from krm_merge.promote.units import Outcome, Setter, TextOutcome, Unit, UnitResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from krm_merge.promote.locate import MalformedMarker

__all__ = ["Outcome", "TextOutcome", "Unit", "UnitResult", "promote_text", "promote_units"]


def _fullpath() -> Any:
    """The libyaml-backed full path, imported on first use: a run whose documents all take the fast path never loads libyaml."""
    from krm_merge.promote import fullpath  # start-up: see the docstring

    return fullpath


def promote_text(text: str, marker_key: str, setters: Mapping[str, str | None]) -> TextOutcome:
    """Set every field of ``text`` carrying a ``marker_key`` marker whose value is in ``setters``.

    A setter mapped to None names a marker that cannot be served (e.g. ``ns:policy:digest``
    when the image reference has no digest): finding it is an error.  Raises PromoteError for
    invalid YAML and for a matching marker on a mapping, sequence or alias.  (The full path,
    on the whole text: what the fast path must agree with.)
    """
    return _fullpath().promote_text(text, marker_key, setters)


def promote_units(units: Sequence[Unit], resolved: Sequence[Resolved]) -> Outcome:
    """Apply every resolved promotion to every unit; errors are collected per unit."""
    matched = [0] * len(resolved)
    outcome = Outcome([], [], matched)
    marker_keys = sorted({r.marker_key for r in resolved if r.marker_key})
    by_path = [r for r in resolved if r.marker_key is None and r.promotion.strategy in ("path", "kustomize-image")]
    by_labels = [r for r in resolved if r.promotion.strategy == "labels"]
    strategies: Any = None  # the modules, when a run needs them
    kustomize_images: Any = None
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


_Setters = dict[str, dict[str, Setter]]  # marker key -> marker value -> setter


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
        doc_malformed: list[MalformedMarker]
        line_offset = text.count("\n", 0, start)
        fast = None if others else fastpath.promote_chunk(chunk, keys, setters)
        if fast is not None:
            new_chunk, doc_changes, doc_malformed, documents = fast.text, fast.changes, [], 1
            for indices in fast.matches:
                for index in indices:
                    matched[index] += 1
        else:
            new_chunk, doc_changes, doc_malformed, documents = _promote_fully(
                chunk, keys, setters, others, matched, line_offset, unit.what or unit.path or "input")
        malformed.extend(m._replace(line=m.line + line_offset) for m in doc_malformed)
        changes.extend(c._replace(line=c.line + line_offset, doc=c.doc + doc_index) for c in doc_changes)
        doc_index += documents
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


def _promote_fully(chunk: str, keys: list[str], setters: _Setters, others: list[Resolved], matched: list[int],
                   line_offset: int, what: str) -> tuple[str, list[Change], list[MalformedMarker], int]:
    try:
        return _fullpath().promote_chunk_text(chunk, keys, setters, others, matched, what=what,
                                           line_offset=line_offset)
    except PromoteError as err:
        raise _shifted(err, line_offset) from None


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
