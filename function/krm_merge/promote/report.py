"""The change report of a promotion run, for a pull request: JSON or Markdown.

One entry per changed field (file, line, resource, field path, old -> new, and the marker or
strategy that set it), plus a one-line summary usable as a commit message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
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
            out.append(f"| {e.file} | {e.line} | {e.resource or '-'} | {_cell(e.field)} | {_cell(e.old)} | "
                       f"{_cell(e.new)} | {_cell(e.source) if e.source else '-'} |")
    return "\n".join(out) + "\n"


def write(fmt: str, path: str, found: Sequence[Entry], line: str, pull_request: dict[str, Any] | None = None) -> None:
    """Write the report in ``fmt`` (json or markdown) to ``path`` (``-``: stdout); ``pull_request`` goes in the JSON."""
    text = to_json(found, line, pull_request) if fmt == "json" else to_markdown(found, line)
    if path == "-":
        sys.stdout.write(text)
        return
    files.write_file_atomic(path, text)  # a reader of the report never sees half of it
