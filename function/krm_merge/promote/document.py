"""A structural index over YAML text: every node with its exact character span.

libyaml gives each node start/end marks (character indices into the text, CR LF counted as
two) but drops comments.  This index lets the marker locator map a comment on a line to the
key or value it belongs to, and lets the editor splice a scalar's exact bytes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Literal

import yaml

from krm_merge.errors import KrmMergeError
from krm_merge.krm.values import PathPart
from krm_merge.promote.changes import lines_holding
from krm_merge.promote.errors import PromoteError, UnreadableYaml
from krm_merge.yaml import load

Role = Literal["key", "value"]


class Entry:
    """One occurrence of a node: a mapping key, or a value (mapping value, item, document root)."""

    __slots__ = ("node", "start", "end", "role", "path", "doc", "in_flow", "depth", "alias", "value", "dash")

    def __init__(self, node: yaml.Node, role: Role, path: tuple[PathPart, ...], doc: int, in_flow: bool,
                 depth: int, alias: bool) -> None:
        self.node = node
        self.start: int = node.start_mark.index
        self.end: int = node.end_mark.index
        self.role = role
        self.path = path
        self.doc = doc
        self.in_flow = in_flow
        self.depth = depth
        self.alias = alias
        self.value: Entry | None = None  # for keys: the entry of the value they name
        self.dash: int | None = None  # for block sequence items: index of their `-` indicator

    @property
    def is_scalar(self) -> bool:
        """True for a scalar value that is not an alias of a node defined elsewhere."""
        return isinstance(self.node, yaml.ScalarNode) and not self.alias

    def kind(self) -> str:
        """A word for error messages: scalar, mapping, sequence or alias."""
        if self.alias:
            return "alias"
        if isinstance(self.node, yaml.MappingNode):
            return "flow mapping" if self.node.flow_style else "mapping"
        if isinstance(self.node, yaml.SequenceNode):
            return "flow sequence" if self.node.flow_style else "sequence"
        return "scalar"


class Document:
    """The parsed structure of one YAML text (one or more documents).

    Built by :func:`parse_document`; read-only afterwards.
    """

    __slots__ = ("text", "roots", "entries", "line_starts", "_by_end", "_ends", "_by_start", "_starts",
                 "_dashes", "_protected", "_protected_starts")

    def __init__(self, text: str, roots: list[yaml.Node], entries: list[Entry], dashes: dict[int, Entry],
                 protected: list[tuple[int, int]], line_starts: list[int] | None = None) -> None:
        self.text = text
        self.roots = roots
        self.entries = entries
        self.line_starts = line_starts if line_starts is not None else _line_starts(text)
        # Alias entries carry the marks of the node they point to; they must not be found
        # by position, only through their key.
        placed = [e for e in entries if not e.alias]
        self._by_end = sorted(placed, key=lambda e: e.end)
        self._ends = [e.end for e in self._by_end]
        self._by_start = sorted(placed, key=lambda e: e.start)
        self._starts = [e.start for e in self._by_start]
        self._dashes = dashes
        self._protected = sorted(protected)
        self._protected_starts = [start for start, _ in self._protected]

    # ------------------------------------------------------------------ lines
    def line_of(self, index: int) -> int:
        """0-based line number of a character index."""
        return bisect_right(self.line_starts, index) - 1

    def line_span(self, line: int) -> tuple[int, int]:
        """(start, end) of a line's content, excluding its line break (LF or CR LF)."""
        start = self.line_starts[line]
        # The next line starts after "\n"; the last line runs to the end of the text.
        end = self.line_starts[line + 1] - 1 if line + 1 < len(self.line_starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return start, end

    def is_protected(self, index: int) -> bool:
        """True when ``index`` lies inside a scalar's text (so a ``#`` there is no comment)."""
        pos = bisect_right(self._protected_starts, index) - 1
        return pos >= 0 and index < self._protected[pos][1]

    def comment_start(self, line: int) -> int | None:
        """Index of the ``#`` starting the comment on ``line``, or None if it has none."""
        start, end = self.line_span(line)
        text = self.text
        pos = text.find("#", start, end)
        while pos != -1:
            if (pos == start or text[pos - 1] in " \t") and not self.is_protected(pos):
                return pos
            pos = text.find("#", pos + 1, end)
        return None

    def first_content(self, line: int) -> int | None:
        """Index of the first non-blank character of ``line``, or None for a blank line."""
        start, end = self.line_span(line)
        for i in range(start, end):
            if self.text[i] not in " \t":
                return i
        return None

    def is_comment_only(self, line: int) -> bool:
        """True for a line holding nothing but a comment."""
        first = self.first_content(line)
        return first is not None and self.text[first] == "#" and not self.is_protected(first)

    # ------------------------------------------------------------- node lookup
    def entries_ending_between(self, lo: int, hi: int) -> list[Entry]:
        """Entries whose end index lies in [lo, hi]."""
        return self._by_end[bisect_left(self._ends, lo) : bisect_right(self._ends, hi)]

    def entries_starting_at(self, index: int) -> list[Entry]:
        """Entries whose start index is exactly ``index``."""
        return self._by_start[bisect_left(self._starts, index) : bisect_right(self._starts, index)]

    def item_with_dash_at(self, index: int) -> Entry | None:
        """The block sequence item whose ``-`` indicator is at ``index``."""
        return self._dashes.get(index)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _key_text(node: yaml.Node) -> str:
    return node.value if isinstance(node, yaml.ScalarNode) else f"<{node.tag}>"


class _Indexer:
    """Walks composed nodes once, recording entries, dash positions and scalar spans.

    With ``focus`` (sorted, disjoint character ranges) only nodes whose text overlaps a
    range are recorded: a marker needs the nodes on its own line and the lines next to it,
    and skipping the rest of a large document is most of the indexing cost.
    """

    def __init__(self, text: str, focus: list[tuple[int, int]] | None = None) -> None:
        self.text = text
        self.entries: list[Entry] = []
        self.dashes: dict[int, Entry] = {}
        self.protected: list[tuple[int, int]] = []
        self.focus = focus
        self.focus_starts = [lo for lo, _ in focus] if focus is not None else []

    def wanted(self, start: int, end: int) -> bool:
        """True when [start, end] overlaps a focus range (always, without focus)."""
        if self.focus is None:
            return True
        i = bisect_right(self.focus_starts, end) - 1
        return i >= 0 and self.focus[i][1] >= start

    def add(self, node: yaml.Node, role: Role, path: tuple[PathPart, ...], doc: int,
            in_flow: bool, depth: int, floor: int = 0) -> Entry:
        # An alias carries the marks of the node it names, which was defined earlier: it
        # starts before the end of what precedes it in the document (``floor``).
        alias = role == "value" and node.start_mark.index < floor
        entry = Entry(node, role, path, doc, in_flow, depth, alias)
        self.entries.append(entry)
        if alias:
            return entry
        if isinstance(node, yaml.ScalarNode):
            self._protect_scalar(node)
        elif isinstance(node, yaml.MappingNode):
            flow = in_flow or bool(node.flow_style)
            before = node.start_mark.index
            for key, value in node.value:
                key_start, key_end = key.start_mark.index, key.end_mark.index
                value_end = value.end_mark.index if value.start_mark.index >= key_end else key_end
                if self.wanted(key_start, value_end):
                    sub = path + (_key_text(key),)
                    key_entry = self.add(key, "key", sub, doc, flow, depth + 1, before)
                    key_entry.value = self.add(value, "value", sub, doc, flow, depth + 1, key_end)
                before = max(before, value_end)
        elif isinstance(node, yaml.SequenceNode):
            flow = in_flow or bool(node.flow_style)
            before = node.start_mark.index
            for i, item in enumerate(node.value):
                item_start, item_end = item.start_mark.index, item.end_mark.index
                alias_item = item_start < before
                dash = None if flow or alias_item else self._dash_before(item_start)
                if self.wanted(dash if dash is not None else item_start, item_end if not alias_item else item_start):
                    item_entry = self.add(item, "value", path + (i,), doc, flow, depth + 1, before)
                    if dash is not None:
                        item_entry.dash = dash
                        self.dashes[dash] = item_entry
                if not alias_item:
                    before = max(before, item_end)
        return entry

    def _dash_before(self, start: int) -> int | None:
        # The `-` of a block sequence item is the first non-blank character before the
        # item's content (usually on the same line).
        i = start - 1
        text = self.text
        while i >= 0 and text[i] in " \t\r\n":
            i -= 1
        return i if i >= 0 and text[i] == "-" else None

    def _protect_scalar(self, node: yaml.ScalarNode) -> None:
        start, end = node.start_mark.index, node.end_mark.index
        if start == end:
            return
        if node.style in ("|", ">"):
            # The header line (`| # comment`) holds a real comment; only content is protected.
            newline = self.text.find("\n", start, end)
            if newline == -1:
                return
            start = newline + 1
        self.protected.append((start, end))


def _focus(text: str, line_starts: list[int], keys: Sequence[str]) -> list[tuple[int, int]]:
    """Character ranges around every line holding one of ``keys``: that line and the next
    ones up to the first line with content (a head comment's target), and the line before
    (a multi-line head comment disqualifies a marker)."""
    ranges: list[tuple[int, int]] = []
    last = len(line_starts) - 1
    for line in lines_holding(text, keys):
        lo = line_starts[max(0, line - 1)]
        nxt = line + 1
        while nxt < last and not text[line_starts[nxt] : line_starts[nxt + 1]].strip(" \t\r\n-"):
            nxt += 1  # blank lines and lone dashes: the target is further down
        hi = line_starts[nxt + 1] - 1 if nxt + 1 <= last else len(text)
        if ranges and lo <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
        else:
            ranges.append((lo, hi))
    return ranges


def parse_document(text: str, focus_keys: Sequence[str] | None = None, *, what: str = "the file",
                   line_offset: int = 0) -> Document:
    """Compose every YAML document of ``text`` and index its nodes.

    With ``focus_keys`` only the nodes near the lines holding those keys are indexed (enough
    to find and set marked fields; not for path lookups).  Raises PromoteError (with the
    line) when the text is not valid YAML.  Duplicate keys are noted as every read notes
    them (named by ``what``, lines shifted by ``line_offset``).
    """
    line_starts = _line_starts(text)
    try:
        # The one bounded check (size, depth, alias expansion) every YAML read goes through.
        load.check_bounds(text, "the file")
    except KrmMergeError as err:
        raise PromoteError(err.message) from None
    try:
        roots = [root for root in load.compose_marked(text) if root is not None]
        load.note_duplicate_keys(roots, what, line_offset)
        indexer = _Indexer(text, _focus(text, line_starts, focus_keys) if focus_keys is not None else None)
        for doc, root in enumerate(roots):
            indexer.add(root, "value", (), doc, False, 0)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise UnreadableYaml(problem,
                           line=mark.line + 1 if mark is not None else None) from None
    except RecursionError:
        raise PromoteError("YAML nesting too deep to process") from None
    return Document(text, roots, indexer.entries, indexer.dashes, indexer.protected, line_starts)
