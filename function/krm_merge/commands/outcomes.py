"""What ``krm-merge update`` did to each resource and each conflict, for its summary line and ``--report``.

kpt's update cannot say which resources were kept because of local changes
(kpt#2241).  Every resource gets an outcome (taken from upstream, merged,
kept local, added, deleted, unchanged) and why (unchanged locally, changed
locally, deleted locally, deleted upstream but changed locally, local only,
...); every conflict its field, the three values and the value it got.  The
outcomes are decided where the merge decides them
(``PackageMergeResult.outcomes`` in :mod:`krm_merge.update.package_merge`); this
module only arranges them.  The report around them (files, folders,
warnings, the writer) is :func:`krm_merge.commands.reporting.update_report`.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from krm_merge.update.outcomes import DECISIONS, Entry, entries


def decided(found: Sequence[Entry], winner: str) -> int:
    """How many conflicts were decided ``winner`` (a ``Conflict.winner``: ``"none"``, ``"marked"``, ...)."""
    return sum(1 for e in found if e["kind"] == "conflict" and e["decision"] == DECISIONS.get(winner, winner))


def summary(found: Sequence[Entry]) -> str:
    """One line: how many resources got each outcome, and how the conflicts were decided."""
    resources = Counter(e["outcome"] for e in found if e["kind"] == "resource")
    parts = [f"{n} {outcome}" for outcome, n in sorted(resources.items())]
    conflicts = Counter(e["decision"] for e in found if e["kind"] == "conflict")
    if conflicts:
        parts.append(f"{sum(conflicts.values())} conflict(s): " + ", ".join(f"{n} {d}" for d, n in sorted(conflicts.items())))
    return "resources: " + ("; ".join(parts) if parts else "none")


def markdown(resources: Sequence[Entry]) -> list[str]:
    """Resource entries as a Markdown table (lines) under a heading; nothing when there are none."""
    if not resources:
        return []
    lines = ["### Resources", "", "| resource | file | outcome | why |", "| --- | --- | --- | --- |"]
    lines += [f"| {_cell(e['resource'])} | `{e['file']}` | {e['outcome']} | {_cell(e['reason'])} |" for e in resources]
    return lines + [""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


__all__ = ["DECISIONS", "Entry", "decided", "entries", "markdown", "summary"]
