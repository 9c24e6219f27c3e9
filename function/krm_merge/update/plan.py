"""The plan of an update: every file write, deletion and emptied folder, and what the update decided, before the disk is touched.

One plan is built per update (subpackages included): its file changes are
the project's one change set (:class:`krm_merge.krm.pkgio.ChangeSet`),
written as one transaction of :mod:`krm_merge.txn`, so the update is
all-or-nothing and ``--dry-run`` shows exactly what would be written; its
outcomes (:mod:`krm_merge.outcomes.kinds`) are everything the update decided,
in one list, rendered by :mod:`krm_merge.outcomes.render`.
"""

from __future__ import annotations

from pathlib import Path

from krm_merge.krm import pkgio
from krm_merge.outcomes.kinds import Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMAND = "krm-merge update"


class UpdatePlan:
    """Everything the update will do, computed before touching the disk: the change set and the outcomes.

    A plain class with ``__slots__``, not a dataclass: creating dataclasses cost a small
    update's start-up several milliseconds (issue 24).
    """

    __slots__ = ("changes", "outcomes", "marks", "upstream", "subpackages")

    def __init__(self, changes: pkgio.ChangeSet | None = None) -> None:
        self.changes = pkgio.ChangeSet() if changes is None else changes
        self.outcomes: list[Outcome] = []  # each resource, conflict, file not taken, link refused: in order
        # update.ledger.Entry (the ledger imports this module): each marker it writes, for the conflict ledger
        self.marks: list[Any] = []
        # For the ledger's earlier entries: by folder ("" the root, "a/b/" a remote subpackage), upstream's values
        # in the version each package was merged from (update.ledger.UpstreamFields; None: none was merged), and
        # the local package's subpackage folders as the update found them.
        self.upstream: list[tuple[str, Any]] = []
        self.subpackages: list[str] = []

    @property
    def writes(self) -> list[pkgio.Write]:
        """The files written or deleted (``data is None``)."""
        return self.changes.writes

    @property
    def remove_dirs(self) -> list[str]:
        """The folders the update empties and removes."""
        return self.changes.remove_dirs

    def within(self, folder: str) -> list[Outcome]:
        """The plan's outcomes as its parent's: every file named from ``folder`` (a subpackage's plan)."""
        return [o.within(folder) for o in self.outcomes]


def apply_plan(root: Path, plan: UpdatePlan) -> None:
    """Write the plan as one transaction: files, deletions, emptied folders.

    Every file must still hold the bytes the plan was made from.
    """
    plan.changes.apply(root, command=COMMAND)


__all__ = ["COMMAND", "UpdatePlan", "apply_plan"]
