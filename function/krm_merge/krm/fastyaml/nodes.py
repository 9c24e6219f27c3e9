"""The position tree of the fast reader: where each entry and scalar of the text is."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# --- position tree -----------------------------------------------------------------


class ScalarPos:
    """Where a scalar (or a one-line flow collection) is written.

    ``line`` holds the value between columns ``start`` and ``end``; ``style``
    is one of ``plain``, ``single``, ``double``, ``empty`` (nothing written,
    read as null), ``flow``, ``literal`` (a block scalar whose content runs
    to the end of its entry) or ``multiline`` (a quoted scalar closed on a
    later line, up to its entry's end; never edited in place).  ``comment`` is the column of an end-of-line
    comment, or -1.
    """

    __slots__ = ("line", "start", "end", "style", "comment")

    def __init__(self, line: int, start: int, end: int, style: str, comment: int) -> None:
        self.line = line
        self.start = start
        self.end = end
        self.style = style
        self.comment = comment


class Entry:
    """One map entry or sequence element: lines ``start`` up to ``end``.

    ``end`` is the line after its last content line: the comment lines that
    follow an entry are not part of it (they are the next entry's head
    comments, or the container's foot).  ``inline`` says the value begins on
    the entry's first line.
    """

    __slots__ = ("start", "end", "value", "inline")

    def __init__(self, start: int, value: Any, inline: bool, end: int) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.inline = inline


class MapPos:
    """A block mapping whose keys are at column ``indent``.

    ``dash_line`` is the line index when the first key shares its line with a
    sequence dash (``- name: x``), else -1.  ``open`` is the first line after
    the line that opens the mapping (where its first key's head comments
    may start), ``end`` its last entry's end, ``after`` the next content line
    after the mapping (the comment lines before it are the mapping's foot).
    """

    __slots__ = ("indent", "entries", "dash_line", "open", "end", "after", "anchor")

    def __init__(self, indent: int, dash_line: int) -> None:
        self.indent = indent
        self.entries: dict[Any, Entry] = {}
        self.dash_line = dash_line
        self.open = dash_line
        self.end = 0
        self.after = 0
        self.anchor = ""  # the anchor name written before it (``labels: &labels``)


class SeqPos:
    """A block sequence whose dashes are at column ``indent`` (``open``/``end`` as for :class:`MapPos`)."""

    __slots__ = ("indent", "items", "open", "end", "after", "anchor")

    def __init__(self, indent: int) -> None:
        self.indent = indent
        self.items: list[Entry] = []
        self.open = 0
        self.end = 0
        self.after = 0
        self.anchor = ""


Node = ScalarPos | MapPos | SeqPos


class Parsed:
    """The result of :func:`parse`: plain data, its positions and the text they refer to."""

    __slots__ = ("data", "root", "text", "anchor_lines", "aliases")

    def __init__(
        self, data: Any, root: MapPos, text: str, anchor_lines: tuple[int, ...] = (), aliases: bool = False
    ) -> None:
        self.data = data
        self.root = root
        # The text, not its lines: items stay parsed until edited, and the lines
        # would cost more memory than the text; splitting again is cheap.
        self.text = text
        # Lines defining anchors (the editor never moves or deletes them), and whether aliases share values.
        self.anchor_lines = anchor_lines
        self.aliases = aliases


class Unsupported(Exception):
    """Raised inside the parser/editor when the input leaves the fast subset."""


class Nothing:
    """A marker distinct from every YAML value (None included)."""


NOTHING: Any = Nothing()
