"""The one layout detector: how a YAML text is indented and ends, so an edit can print it the same way.

kyaml remembers per resource whether sequences are "compact" (``- `` at the
parent key's column) or "wide" (indented, as ``kpt pkg get`` writes
Kptfiles) and restores it on write.  Every printer here keeps more of the
text's own layout: the mapping indentation (1, 2, 4 ... spaces), the sequence
dash offset and content column, and the final newlines.  Pure text: no YAML
library is loaded to read a layout.
"""

from __future__ import annotations

import functools
import re


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A key alone on its line, then (after comment or blank lines) a deeper key / a dash with content.

    Compiled on first use: every run imports this module, few print a tree.
    """
    key_line = r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*"
    return re.compile(key_line + r"( *)[^\s#-]", re.M), re.compile(key_line + r"( *)-( +)[^\s#]", re.M)


class Layout:
    """ruamel's indentation settings (``indent(mapping, sequence, offset)``) and the text's final newlines.

    A plain value class rather than a dataclass: the module is on every run's
    start-up path, and a dataclass costs more to create than to use here.
    """

    __slots__ = ("mapping", "sequence", "offset", "ending")

    def __init__(self, mapping: int = 2, sequence: int = 2, offset: int = 0, ending: str = "\n") -> None:
        self.mapping, self.sequence, self.offset, self.ending = mapping, sequence, offset, ending

    def _key(self) -> tuple[int, int, int, str]:
        return self.mapping, self.sequence, self.offset, self.ending

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Layout{self._key()!r}"

    @property
    def dash_width(self) -> int:
        """Columns from a sequence's dash to its content (``-   name:`` → 4)."""
        return self.sequence - self.offset


COMPACT = Layout()
"""kyaml's default: 2-space mappings, ``- `` at the parent key's column."""

WIDE = Layout(2, 4, 2)
"""kpt's other style (``kpt pkg get`` Kptfiles): the dashes indented by two."""


def layout_of(text: str) -> Layout:
    """The layout a block YAML text uses; kyaml's compact defaults for what it does not show.

    Mappings: the first key nested deeper than the key above it.  Sequences:
    the first block sequence with content after its dash (a ``- # comment``
    shows no content column): its dash offset under its key and the column its
    content starts at.
    """
    mapping = COMPACT.mapping
    map_under_key, seq_under_key = _patterns()
    for m in map_under_key.finditer(text):
        if len(m.group(2)) > len(m.group(1)):
            mapping = len(m.group(2)) - len(m.group(1))
            break
    offset, sequence = COMPACT.offset, COMPACT.sequence
    s = seq_under_key.search(text)
    if s:
        offset = max(0, len(s.group(2)) - len(s.group(1)))
        sequence = offset + 1 + len(s.group(3))
    stripped = text.rstrip("\n")
    return Layout(mapping, sequence, offset, text[len(stripped):] if stripped else "\n")
