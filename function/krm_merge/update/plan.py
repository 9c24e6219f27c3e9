"""The plan of an update: every file write, deletion and emptied folder, computed before the disk is touched.

One plan is built per update (subpackages included) and written as one
transaction of :mod:`krm_merge.txn`, so the update is all-or-nothing and
``--dry-run`` can show exactly what would be written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from krm_merge import files


@dataclass
class FileWrite:
    """One planned change of a local file (``data is None`` = delete)."""

    path: str
    before: bytes | None
    data: bytes | None


@dataclass
class UpdatePlan:
    """Everything the update will do, computed before touching the disk."""

    writes: list[FileWrite] = field(default_factory=list)
    remove_dirs: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    conflicts: int = 0
    merged_files: list[Any] = field(default_factory=list)  # merge3.textfile.FileMerge, with --files merge
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # each resource and conflict: commands.outcomes


def apply_plan(root: Path, plan: UpdatePlan) -> None:
    """Write the plan as one transaction (:mod:`krm_merge.txn`): files, deletions, emptied folders.

    Every file must still hold the bytes the plan was made from; symlinks are never written through.
    """
    from krm_merge import txn

    changes = [txn.Change(w.path, w.data, w.before) for w in plan.writes]
    txn.commit(root, changes, remove_dirs=plan.remove_dirs, command="krm-merge update")


def render_plan(plan: UpdatePlan) -> str:
    """Unified diff of text files; a one-line note for binary files and removed directories."""
    out: list[str] = []
    for write in plan.writes:
        try:
            before = write.before.decode("utf-8") if write.before is not None else None
            after = write.data.decode("utf-8") if write.data is not None else None
        except UnicodeDecodeError:
            out.append(f"Binary file {write.path} {'deleted' if write.data is None else 'changed'}\n")
            continue
        out.append(files.unified_diff([(write.path, before, after)]))
    out.extend(f"directory {rel} removed\n" for rel in plan.remove_dirs)
    return "".join(out)


__all__ = ["FileWrite", "UpdatePlan", "apply_plan", "render_plan"]
