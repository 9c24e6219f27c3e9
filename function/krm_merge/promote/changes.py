"""What a promotion changed and where a stream's documents are.

Text-level and free of YAML library imports: the fast path (:mod:`krm_merge.promote.fastpath`)
and the full, libyaml-backed path share these (field paths and resource labels are
:mod:`krm_merge.krm.values`'s, also free of YAML imports), and a run whose documents all take the fast
path never loads the YAML library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from krm_merge.records import Record


class Change(Record):
    """One field set by a promotion (for the info result / command output)."""

    doc: int  # index of the YAML document in the text
    path: str  # field path inside the document, e.g. "spec.chart.spec.version"
    line: int  # 1-based line of the value in the original text
    old: str | None  # None when the field was added (kustomize images)
    new: str
    marker: str | None = None
    source: str = ""  # what set it: the marker or strategy (for reports)
    resource: str = ""  # kind/name of the document, e.g. "HelmRelease/podinfo"
    api_version: str = ""  # the document's apiVersion (a report's resource reference carries it)


def lines_holding(text: str, keys: Sequence[str]) -> list[int]:
    """The (0-based) numbers of the lines where any of ``keys`` occurs, in order."""
    found: set[int] = set()
    for key in keys:
        line = counted = 0
        pos = text.find(key)
        while pos != -1:
            line += text.count("\n", counted, pos)
            counted = pos
            found.add(line)
            pos = text.find(key, pos + len(key))
    return sorted(found)


_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.|%)", re.M)
_MARKER_STARTS = ("---", "...", "%")  # what a line :data:`_DOCUMENT_MARKER` finds starts with
_LINE_MARKER_STARTS = tuple("\n" + start for start in _MARKER_STARTS)


def split_stream(text: str) -> list[tuple[int, str]] | None:
    """The documents of a YAML stream as (start index, text) chunks, split at ``---`` lines.

    Splitting lets a file of many documents be parsed (and verified) only where a marker is.
    A ``---`` at column 0 always ends a document (even inside a block scalar), so a line scan
    is exact.  None when the stream is not safe to split this simply: directives (``%``),
    document end markers (``...``), or content after ``---`` on its line.
    """
    if not text.startswith(_MARKER_STARTS) and not any(start in text for start in _LINE_MARKER_STARTS):
        return [(0, text)]  # no line starts a marker: one chunk, without a regex search at every character
    chunks: list[tuple[int, str]] = []
    pos = 0
    for m in _DOCUMENT_MARKER.finditer(text):
        start = m.start()
        if text[start] != "-":
            return None
        end = text.find("\n", start)
        end = len(text) if end == -1 else end + 1
        rest = text[start + 3 : end].strip(" \t\r\n")
        if text[start + 3 : start + 4] not in ("", " ", "\t", "\r", "\n") or (rest and not rest.startswith("#")):
            return None
        chunks.append((pos, text[pos:start]))
        pos = end
    chunks.append((pos, text[pos:]))
    return chunks
