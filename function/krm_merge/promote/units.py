"""The inputs and outputs of the promote engine (kept free of YAML imports).

The ``promote`` command builds :class:`Unit` objects before it knows whether any file needs
parsing; a run that finds nothing to parse never imports the engine or the YAML library.
"""

from __future__ import annotations

from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from krm_merge.promote.changes import Change
    from krm_merge.promote.errors import PromoteError
    from krm_merge.promote.locate import MalformedMarker


Setter = tuple["str | None", tuple[int, ...], str]  # (value, promotion indices, marker); None: cannot serve


class Unit(Record):
    """One text to promote: a whole file (command) or one item (function mode)."""

    text: str
    path: str | None  # relative file path (kpt's path annotation for items), for templates
    handle: Any = None  # the caller's object (a KubeObject, a screened file)
    what: str = ""  # how messages name it ("item 2"); the path when empty


class UnitResult(Record):
    """What promoting one unit gave; ``text`` is the input object when nothing changed."""

    unit: Unit
    text: str
    changes: list[Change]
    malformed: list[MalformedMarker]

    @property
    def changed(self) -> bool:
        """True when the text differs from the input."""
        return bool(self.changes)


class Outcome(Record):
    """The result of one run over many units."""

    results: list[UnitResult]  # units a promotion touched (changed or not)
    errors: list[tuple[Unit, PromoteError]]
    matched: list[int]  # per resolved promotion: fields found (already-current included)


def empty_outcome(promotions: int) -> Outcome:
    """The outcome of a run that had no unit to look at."""
    return Outcome([], [], [0] * promotions)


class TextOutcome(Record):
    """The result of promoting one text."""

    text: str  # the new text (the same object when nothing changed)
    changes: list[Change]
    matched: int  # marked fields whose marker has a setter (already-current ones included)
    malformed: list[MalformedMarker]

    @property
    def changed(self) -> bool:
        """True when the text differs from the input."""
        return bool(self.changes)
