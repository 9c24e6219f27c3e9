"""Conflict markers written onto the lines of a resource merged as plain data (issue 43).

A marker is a comment at the end of its field's line
(:func:`krm_merge.merge3.conflicts.marker_comment`).  Plain data carries no
comments, so the merge on plain data (``merge3.plain``) hands back each
marker with its field's data path, and this module adds it to the line of
the text the editing layer printed: one parse by the fast reader and one
splice per marker, where the round-trip merge read three ruamel.yaml trees
and printed two (about 13 ms a resource: 20,000 conflicts took minutes).

Only where the bytes are sure to be the round-trip merge's: a one-line
scalar written on its key's line as ruamel.yaml prints it back, with no
comment after it.  Anything else (a block scalar, a map or list value, a
comment already on the line, a value ruamel.yaml re-spells such as ``True``
or ``~``) gives None, and the caller merges round-trip trees, which place
the marker as before.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Sequence

from krm_merge.krm import fastyaml
from krm_merge.yaml import scalars

# The styles whose text ruamel.yaml (quotes preserved) prints back as written.
_AS_WRITTEN = frozenset({"plain", "single", "double"})


@functools.cache
def _same_number() -> re.Pattern[str]:
    """Numbers YAML 1.1 (the fast reader) and 1.2 (ruamel.yaml) read alike and ruamel.yaml prints as written."""
    return re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


def _read_alike(written: str) -> bool:
    """Whether a plain scalar reads as the same value in YAML 1.1 and 1.2 and ruamel.yaml prints it back as
    written: the ledger records the value as the round-trip merge read it (``010`` is 10 there, 8 here; ``yes``
    a string there), and ruamel.yaml re-spells some (``True`` -> ``true``, ``~`` -> nothing, ``+1`` -> ``1``)."""
    value = scalars.resolve_plain(written)
    if isinstance(value, bool):
        return written in ("true", "false")
    if isinstance(value, (int, float)):
        return _same_number().fullmatch(written) is not None
    # a string in both: nothing YAML 1.2 reads as a number, a boolean or null starts so
    return isinstance(value, str) and written[:1] not in "0123456789+-.~" and written.lower() not in ("null", "true", "false")


def with_markers(text: str, markers: Sequence[tuple[tuple[Any, ...], str]], parsed: Any = None) -> str | None:
    """``text`` with each marker (field's data path, ``# krm-merge:conflict ...``) at the end of its field's line,
    one space after the value as the round-trip merge writes it; None when any one cannot be placed so.

    ``parsed``: the fast reader's parse of ``text`` when the caller holds it (the item's, read once per text).
    """
    if parsed is None or parsed.text is not text:
        parsed = fastyaml.parse(text)
    if parsed is None or parsed.aliases:
        return None
    lines = text.split("\n")
    done: set[int] = set()
    for path, marker in markers:
        line = _marker_line(parsed.root, path, lines)
        if line is None or line in done:
            return None
        done.add(line)
        lines[line] = f"{lines[line]} {marker}"
    return "\n".join(lines)


def _marker_line(root: Any, path: tuple[Any, ...], lines: list[str]) -> int | None:
    """The line a marker of the field at ``path`` goes on, or None (see the module's docstring)."""
    if not path:
        return None
    node: Any = root
    for part in path[:-1]:
        entry = _child(node, part)
        if entry is None:
            return None
        node = entry.value
    entry = _child(node, path[-1]) if isinstance(node, fastyaml.MapPos) else None
    value = entry.value if entry is not None else None
    # one line: a marker after the first line of a wrapped plain scalar would cut off the rest of it
    if (entry is None or not isinstance(value, fastyaml.ScalarPos) or not entry.inline or value.line != entry.start
            or entry.end != entry.start + 1):
        return None
    line = lines[value.line]
    written = line[value.start:value.end]
    if (value.style not in _AS_WRITTEN or value.comment >= 0 or value.end != len(line)
            or (value.style == "plain" and not _read_alike(written))
            or (value.style == "double" and "\\" in written)):
        return None
    return value.line


def _child(node: Any, part: Any) -> Any:
    """The entry of a map key or a sequence index in the position tree, or None."""
    if isinstance(node, fastyaml.MapPos):
        return node.entries.get(part)
    if isinstance(node, fastyaml.SeqPos) and isinstance(part, int) and 0 <= part < len(node.items):
        return node.items[part]
    return None


__all__ = ["with_markers"]
