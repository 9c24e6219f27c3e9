"""The diff3 conflict regions ``git merge-file --diff3`` writes: their grammar, found in a text.

``update --files merge`` (:mod:`.textfile`) leaves them in a file changed on
both sides, labelled :data:`LABELS`; ``conflicts``/``resolve`` and the
update's conflict ledger (:mod:`krm_merge.update.ledger`) read them back.
A module of its own, without the merge: reading regions must not load what
running ``git merge-file`` needs (an update that merges no text file).
"""

from __future__ import annotations

from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

# local = the user's copy (git's "ours"), origin = the version it was fetched from (the base),
# upstream = the new version ("theirs"): the names the rest of update uses for the three copies.
LABELS = ("local", "origin", "upstream")
MARKER_SIZE = 7  # git's default conflict-marker-size


# A NamedTuple, not a dataclass: creating dataclasses cost an update's start-up several milliseconds (issue 24).
class MarkerRegion(Record):
    """One diff3 conflict region of a text; lines are 1-based, ``base`` is 0 when the region has none."""

    start: int  # the ``<<<<<<<`` line
    base: int  # the ``|||||||`` line
    separator: int  # the ``=======`` line
    end: int  # the ``>>>>>>>`` line


def find_markers(text: str, marker_size: int = MARKER_SIZE) -> list[MarkerRegion]:
    """Every complete diff3 conflict region in ``text`` (``<<<<<<<`` … ``>>>>>>>``, any labels, LF or CRLF).

    A marker is ``marker_size`` marker characters alone or followed by a
    space and a label, as git writes them; a region missing its ``=======``
    or ``>>>>>>>`` line is not counted (it is not a conflict git left).
    """
    regions: list[MarkerRegion] = []
    start = base = separator = 0
    for number, line in enumerate(text.splitlines(), start=1):
        kind = _marker_kind(line, marker_size)
        if kind == "<":
            start, base, separator = number, 0, 0
        elif kind == "|" and start and not separator:
            base = number
        elif kind == "=" and start and not separator:
            separator = number
        elif kind == ">" and start and separator:
            regions.append(MarkerRegion(start, base, separator, number))
            start = base = separator = 0
    return regions


def labelled_regions(text: str) -> list[MarkerRegion]:
    """The complete regions of ``text`` labelled as ``update --files merge`` writes them (``local`` … ``upstream``):
    a file quoting other conflict markers (a README about git) holds none."""
    lines = text.splitlines()
    local, _, upstream = LABELS
    opening, closing = f"{'<' * MARKER_SIZE} {local}", f"{'>' * MARKER_SIZE} {upstream}"
    return [r for r in find_markers(text) if lines[r.start - 1] == opening and lines[r.end - 1] == closing]


def region_sides(lines: Sequence[str], region: MarkerRegion) -> tuple[str, str, str]:
    """(local, origin, upstream): each side of a region as text, every line ended by ``\n`` (``lines``: the
    file's, without their ends), so that no side and one empty line differ."""
    local_end = region.base or region.separator
    sides = (lines[region.start:local_end - 1], lines[region.base:region.separator - 1] if region.base else [],
             lines[region.separator:region.end - 1])
    local, origin, upstream = ("".join(line + "\n" for line in side) for side in sides)
    return local, origin, upstream


def _marker_kind(line: str, size: int) -> str | None:
    for char in "<|=>":
        marker = char * size
        if line == marker or (char != "=" and line.startswith(marker + " ")):
            return char
    return None


__all__ = ["LABELS", "MARKER_SIZE", "MarkerRegion", "find_markers", "labelled_regions", "region_sides"]
