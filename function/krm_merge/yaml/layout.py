"""The one layout detector: how a YAML text is indented and ends, so an edit can print it the same way.

kyaml remembers per resource whether sequences are "compact" (``- `` at the
parent key's column) or "wide" (indented, as ``kpt pkg get`` writes
Kptfiles) and restores it on write.  We keep more of local's layout: the
mapping indentation (2 or 4 spaces…), the sequence indentation and the final
newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A key alone on its line, then (after comments/blank lines) a deeper key / a dash.
_MAP_UNDER_KEY = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)[^\s#-]", re.M)
_SEQ_UNDER_KEY = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)-( +)\S", re.M)


@dataclass(frozen=True)
class Layout:
    """ruamel's indentation settings and the trailing newlines of a text."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0
    ending: str = "\n"


def layout_of(text: str) -> Layout:
    """The indentation a YAML text uses (ruamel's defaults for what it does not show)."""
    mapping = 2
    m = _MAP_UNDER_KEY.search(text)
    if m and len(m.group(2)) > len(m.group(1)):
        mapping = len(m.group(2)) - len(m.group(1))
    offset, sequence = 0, 2
    s = _SEQ_UNDER_KEY.search(text)
    if s:
        offset = max(0, len(s.group(2)) - len(s.group(1)))
        sequence = offset + 1 + len(s.group(3))
    stripped = text.rstrip("\n")
    return Layout(mapping, sequence, offset, text[len(stripped):] if stripped else "\n")
