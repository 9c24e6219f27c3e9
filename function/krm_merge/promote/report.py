"""The change report of a promotion run, for a pull request: JSON or Markdown.

One entry per changed field (file, line, resource, field path, old -> new, and the marker or
strategy that set it), plus a one-line summary usable as a commit message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from krm_merge import files

if TYPE_CHECKING:  # the report is built on every run; the YAML code only loads when a file is edited
    from krm_merge.promote.changes import Change
    from krm_merge.promote.request import Promotion


class Entry(NamedTuple):
    """One changed field."""

    file: str
    line: int
    resource: str
    field: str
    old: str | None  # None: the field was added
    new: str
    source: str


def entries(changes: Sequence[tuple[str, Change]]) -> list[Entry]:
    """Report entries for (file, change) pairs, in file and line order."""
    return sorted((Entry(file, c.line, c.resource, c.path, c.old, c.new, c.source) for file, c in changes),
                  key=lambda e: (e.file, e.line))


def entries_from_results(results: Iterable[Any]) -> list[Entry]:
    """Report entries from the promote mode's info results (``krm-merge run``: the mode reports through them).

    A result carries the field (path, old and new value), the resource and the file, not the line
    or what set the field: those stay empty (``-`` in the Markdown).
    """
    found = []
    for r in results:
        field = getattr(r, "field", None)
        if r.severity != "info" or field is None or r.file is None or field.proposed_value is None:
            continue
        resource = r.resource_ref.display() if r.resource_ref is not None else ""
        old = None if field.current_value is None else str(field.current_value)
        found.append(Entry(r.file.path, 0, resource, field.path, old, str(field.proposed_value), ""))
    return sorted(found, key=lambda e: (e.file, e.field))


def summary(found: Sequence[Entry], promotions: Sequence[Promotion]) -> str:
    """One line: what was promoted and how many fields/files changed."""
    what = "; ".join(p.describe() for p in promotions)
    if not found:
        return f"promote: nothing to change ({what})"
    files = len({e.file for e in found})
    return (f"promote: {what} ({len(found)} field{'s' if len(found) != 1 else ''} in "
            f"{files} file{'s' if files != 1 else ''})")


def to_json(found: Sequence[Entry], line: str, pull_request: dict[str, Any] | None = None) -> str:
    """The report as JSON: ``{"summary": ..., "changes": [...]}``, and ``"pullRequest"`` when one was opened."""
    data: dict[str, Any] = {"summary": line, "changes": [e._asdict() for e in found]}
    if pull_request is not None:
        data["pullRequest"] = pull_request
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str | None) -> str:
    if text is None:
        return "*(added)*"
    return "`" + text.replace("|", "\\|").replace("`", "'").replace("\n", "\\n") + "`"


def to_markdown(found: Sequence[Entry], line: str) -> str:
    """The report as a Markdown table under the summary line."""
    out = [line, ""]
    if found:
        out.append("| file | line | resource | field | old | new | set by |")
        out.append("| --- | --- | --- | --- | --- | --- | --- |")
        for e in found:
            out.append(f"| {e.file} | {e.line or '-'} | {e.resource or '-'} | {_cell(e.field)} | {_cell(e.old)} | "
                       f"{_cell(e.new)} | {_cell(e.source) if e.source else '-'} |")
    return "\n".join(out) + "\n"


def write(fmt: str, path: str, found: Sequence[Entry], line: str, pull_request: dict[str, Any] | None = None) -> None:
    """Write the report in ``fmt`` (json or markdown) to ``path`` (``-``: stdout); ``pull_request`` goes in the JSON."""
    text = to_json(found, line, pull_request) if fmt == "json" else to_markdown(found, line)
    if path == "-":
        sys.stdout.write(text)
        return
    files.write_file_atomic(path, text)  # a reader of the report never sees half of it
