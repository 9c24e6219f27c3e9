"""The plan of an update: every file write, deletion and emptied folder, computed before the disk is touched.

One plan is built per update (subpackages included); its file changes are
the project's one change set (:class:`krm_merge.krm.pkgio.ChangeSet`),
written as one transaction of :mod:`krm_merge.txn`, so the update is
all-or-nothing and ``--dry-run`` shows exactly what would be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from krm_merge.krm import pkgio
from krm_merge.krm.results import CONFLICT, Result, Results

COMMAND = "krm-merge update"


class UpdatePlan:
    """Everything the update will do, computed before touching the disk: the changes and what to say about them.

    A plain class with ``__slots__``, not a dataclass: creating dataclasses cost a small
    update's start-up several milliseconds (issue 24).
    """

    __slots__ = ("changes", "results", "conflicts", "merged_files", "outcomes")

    def __init__(self, changes: pkgio.ChangeSet | None = None) -> None:
        self.changes = pkgio.ChangeSet() if changes is None else changes
        self.results = Results()  # what the merge says: conflicts, warnings, skipped links
        self.conflicts = 0
        self.merged_files: list[Any] = []  # merge3.textfile.FileMerge, with --files merge
        self.outcomes: list[dict[str, Any]] = []  # each resource and conflict: update.outcomes

    @property
    def writes(self) -> list[pkgio.Write]:
        """The files written or deleted (``data is None``)."""
        return self.changes.writes

    @property
    def remove_dirs(self) -> list[str]:
        """The folders the update empties and removes."""
        return self.changes.remove_dirs


def said(plan: UpdatePlan) -> Results:
    """Everything the plan says, in the order ``update`` prints it: the merge's results, then the merged files'.

    A merged file's results are its own (:meth:`~krm_merge.merge3.textfile.FileMerge.results`),
    so that a subpackage's name them by their full path.
    """
    return Results([*plan.results, *(r for merged in plan.merged_files for r in merged.results())])


def within(sub: str, result: Result) -> Result:
    """A subpackage's result as its parent's: the file below ``sub``, ``sub`` named after the message's label."""
    label = CONFLICT if result.message.startswith(CONFLICT) else ""
    file = result.file._replace(path=f"{sub}/{result.file.path}") if result.file is not None else None
    return result._replace(message=f"{label}{sub}: {result.message[len(label):]}", file=file)


def apply_plan(root: Path, plan: UpdatePlan) -> None:
    """Write the plan as one transaction: files, deletions, emptied folders.

    Every file must still hold the bytes the plan was made from.
    """
    plan.changes.apply(root, command=COMMAND)


def render_plan(root: Path, plan: UpdatePlan) -> str:
    """Unified diff of text files; a one-line note for binary files and removed directories.

    The change set is checked first, as the write checks it (a dry run refuses what the write would).
    """
    return "".join(plan.changes.diff(root))


__all__ = ["COMMAND", "UpdatePlan", "apply_plan", "render_plan", "said", "within"]
