"""What a promotion run changed, as typed outcomes: one per field set (the renderer writes the reports).

Each field a promotion set becomes a :class:`~krm_merge.outcomes.kinds.FieldSet`
(file, line, resource, field path, old -> new, and the marker or strategy that
set it); :func:`subject` names what the run promoted, for the one-line summary
usable as a commit message (:func:`krm_merge.outcomes.render.title`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from krm_merge.krm.results import Result
from krm_merge.outcomes.kinds import FieldSet
from krm_merge.outcomes.words import resource_ref

TYPE_CHECKING = False
if TYPE_CHECKING:  # the report is built on every run; the YAML code only loads when a file is edited
    from krm_merge.promote.changes import Change
    from krm_merge.promote.request import Promotion


def field_sets(changes: Sequence[tuple[str, Change]]) -> list[FieldSet]:
    """One outcome per (file, change) pair, in file and line order."""
    found = [FieldSet(file, c.line, c.doc, resource_ref(c.resource, c.api_version), c.path, c.old, c.new, c.source)
             for file, c in changes]
    return sorted(found, key=lambda o: (o.file, o.line))


def field_sets_from_results(results: Iterable[Result]) -> list[FieldSet]:
    """The fields set, from the promote mode's info results (``krm-merge run``: the mode reports through them).

    A result carries the field (path, old and new value), the resource and the file, not the line
    or what set the field: those stay empty (line 0, shown as ``-``).
    """
    found = []
    for r in results:
        field = r.field
        if r.severity != "info" or field is None or r.file is None or field.proposed_value is None:
            continue
        old = None if field.current_value is None else str(field.current_value)
        found.append(FieldSet(r.file.path, 0, r.file.index, r.resource_ref, field.path, old, str(field.proposed_value)))
    return sorted(found, key=lambda o: (o.file, o.field))


def subject(promotions: Sequence[Promotion]) -> str:
    """What a run promoted: ``default/podinfo prod=6.3.0; image policy ...``."""
    return "; ".join(p.describe() for p in promotions)


__all__ = ["field_sets", "field_sets_from_results", "subject"]
