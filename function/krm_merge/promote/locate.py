"""Finding marked fields: which comment carries a marker, and which value it marks.

Placement rules (pipeline-controller's, see docs/promote.md):

* a line comment marks the node that ends last on its line before the comment; when that
  node is a mapping key, its value is marked (``key: | # m``, ``key: # m``);
* a comment alone on its line marks the node starting on the next line (the value of the
  key there, or the sequence item whose ``-`` is there), when it is a one-line comment
  (the line above is not a comment too) not indented deeper than that next line;
* a line-comment marker wins over a head-comment marker on the same value.
"""

from __future__ import annotations

from typing import Literal

from krm_merge.promote.changes import lines_holding
from krm_merge.promote.document import Document, Entry
from krm_merge.promote.markers import looks_like_marker, marker_value
from krm_merge.records import Record

Placement = Literal["line", "head"]


class MarkedField(Record):
    """A value carrying a marker comment for the searched marker key."""

    marker: str  # the marker's value, e.g. "default:podinfo:prod"
    target: Entry  # the marked value
    placement: Placement
    line: int  # 1-based line of the comment


class MalformedMarker(Record):
    """A comment that mentions the marker key but marks nothing (for diagnostics)."""

    line: int
    comment: str
    reason: str = "is not a valid marker (a JSON object of strings)"


def _deepest(entries: list[Entry]) -> Entry:
    return max(entries, key=lambda e: (e.depth, e.role == "key"))


def _as_value(entry: Entry | None) -> Entry | None:
    if entry is not None and entry.role == "key":
        return entry.value
    return entry


def _line_comment_target(doc: Document, line: int, comment: int) -> Entry | None:
    first = doc.first_content(line)
    if first is None:
        return None
    # Nodes whose last character is on this line before the comment; block collections that
    # merely end where this line's first token starts do not count.
    ending = [
        e for e in doc.entries_ending_between(first, comment)
        if e.end > first or (e.start == e.end and e.start >= first)
    ]
    if ending:
        last_end = max(e.end for e in ending)
        tied = [e for e in ending if e.end == last_end]
        # On a tie the outermost node is the one the comment follows (`[a, b] # m`).
        return _as_value(min(tied, key=lambda e: (e.depth, e.role == "key")))
    if doc.text[first] == "-":
        return doc.item_with_dash_at(first)  # `- # m` with the item on the next lines
    return None


def _head_comment_target(doc: Document, line: int, comment: int, key: str) -> Entry | None:
    if line > 0 and doc.is_comment_only(line - 1):
        return None  # multi-line head comments are not markers (upstream rule)
    if line + 1 >= len(doc.line_starts):
        return None
    nxt = doc.first_content(line + 1)
    if nxt is None or doc.text[nxt] == "#":
        return None
    next_start, _ = doc.line_span(line + 1)
    comment_start, _ = doc.line_span(line)
    if comment - comment_start > nxt - next_start:
        return None  # deeper than the next line: a foot comment of what precedes it
    if doc.text[nxt] == "-" and doc.text[nxt + 1 : nxt + 2] in ("", " ", "\t", "\r", "\n"):
        return _unless_hidden(doc, doc.item_with_dash_at(nxt), key)
    starting = doc.entries_starting_at(nxt)
    if not starting:
        return None
    deepest = _deepest(starting)
    if deepest.role == "key":
        return deepest.value  # a head comment of the key: the value inherits it
    return _unless_hidden(doc, deepest, key)


def _unless_hidden(doc: Document, entry: Entry | None, key: str) -> Entry | None:
    """A head comment of the value itself counts only when the value has no line comment.

    Upstream reads one comment per node, the line comment first: `- 1.0 # pinned` hides a
    marker on the line above the item (a marker above a *key* is the key's and still counts).
    """
    if entry is None or not entry.is_scalar:
        return entry
    line = doc.line_of(entry.end)
    comment = doc.comment_start(line)
    if comment is None:
        return entry
    _, line_end = doc.line_span(line)
    return entry if marker_value(doc.text[comment:line_end], key) is not None else None


def find_marked_fields(doc: Document, key: str) -> tuple[list[MarkedField], list[MalformedMarker]]:
    """Every field of ``doc`` marked with a ``key`` marker, plus malformed marker-like comments."""
    text = doc.text
    found: list[MarkedField] = []
    malformed: list[MalformedMarker] = []
    for line in lines_holding(text, (key,)):
        comment = doc.comment_start(line)
        if comment is None:
            continue
        _, line_end = doc.line_span(line)
        comment_text = text[comment:line_end]
        if key not in comment_text:
            continue
        value = marker_value(comment_text, key)
        if value is None:
            if looks_like_marker(comment_text, key):
                malformed.append(MalformedMarker(line + 1, comment_text))
            continue
        placement: Placement
        if doc.first_content(line) == comment:
            target, placement = _head_comment_target(doc, line, comment, key), "head"
        else:
            target, placement = _line_comment_target(doc, line, comment), "line"
        if target is None:
            # Upstream ignores such comments; say why instead of staying silent.
            malformed.append(MalformedMarker(line + 1, comment_text, "marks no field (a marker goes after "
                                             "the value, or alone on the line above its key or item; an "
                                             "item's own line comment hides the one above it)"))
            continue
        found.append(MarkedField(value, target, placement, line + 1))
    return _line_markers_win(found), malformed


def _line_markers_win(found: list[MarkedField]) -> list[MarkedField]:
    with_line_marker = {id(m.target) for m in found if m.placement == "line"}
    return [m for m in found if m.placement == "line" or id(m.target) not in with_line_marker]
