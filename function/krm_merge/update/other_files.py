"""kpt's rules for the files of a package that are not KRM resources (READMEs, scripts, binaries).

A local file that is new or differs from origin is kept; an unmodified one
is replaced by upstream's or deleted with it; files added upstream are
copied.  ``--files merge`` merges a file both sides changed as
``git merge-file --diff3`` does (:mod:`krm_merge.merge3.textfile`) instead of
keeping local's.  Every file upstream changed that the update does not take
is an outcome saying why (:class:`~krm_merge.outcomes.kinds.FileKept`): kpt
drops such changes without a word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from krm_merge import files
from krm_merge.kptfile.document import Strategy
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.krm.snapshot import Snapshot, SnapshotFile
from krm_merge.outcomes.kinds import Decision, FileKept, FileMerged, KeptReason, Outcome, Region

if TYPE_CHECKING:  # imported by plan_other_files for --files merge only
    from krm_merge.merge3 import textfile

from .ledger import Entry, forged_markers, text_entries
from .result import PackageMergeResult, Subpackage
from .tree import ignored_krm_files, other_files_of


def plan_other_files(
    local: Snapshot, origin: Snapshot, upstream: Snapshot, krm_files: set[str], strategy: Strategy,
    result: PackageMergeResult,
    merge: bool = False, fail: bool = False,
) -> tuple[list[pkgio.Write], list[Outcome], list[Entry]]:
    """kpt's rules for non-KRM files (fast-forward / force-delete-replace: local copy = upstream's files).

    Files of a subpackage decided as a whole follow that decision (kept or
    deleted with it; a subpackage deleted locally gets nothing back).  With
    ``merge`` (``--files merge``) a file local and upstream both changed is
    merged instead of kept (under ``fail``, ``--conflicts fail``, its diff3
    regions fail the update).  Returns the writes, the outcomes (each file
    merged, each file upstream changed that local keeps, each line of a file
    upstream added or changed shaped like a conflict marker:
    :func:`.ledger.forged_markers`) and the ledger's entries of the diff3
    regions the merges leave.
    """
    if merge:
        # Only --files merge merges text files: other updates never load the merger (issue 24).
        from krm_merge.merge3 import textfile
    lf, of, uf = (other_files_of(copy, krm_files) for copy in (local, origin, upstream))
    writes: list[pkgio.Write] = []
    said: list[Outcome] = []
    marks: list[Entry] = []
    for rel in sorted(set(lf) | set(uf)):
        files.check_relative(rel)
        mine = lf[rel].read_bytes() if rel in lf else None
        theirs = uf[rel].read_bytes() if rel in uf else None
        base = of[rel].read_bytes() if rel in of else None
        upstream_changed = theirs != base and theirs != mine  # a change of upstream's local does not have
        if theirs is not None and theirs != base:
            said.extend(forged_markers("upstream", rel, theirs))
        decision = result.subpackage_of(rel)
        if decision is not Subpackage.MERGE:
            wanted = None if decision is Subpackage.DELETE else mine
            if decision is Subpackage.SKIP and upstream_changed and theirs is not None:
                said.append(FileKept(rel, KeptReason.DELETED_LOCALLY))
        elif result.strategy_of(rel, strategy) is not Strategy.RESOURCE_MERGE:
            wanted = theirs
        elif mine is None:
            wanted = theirs if base is None else None  # added upstream -> copy; deleted locally -> stays deleted
            if base is not None and upstream_changed and theirs is not None:
                said.append(FileKept(rel, KeptReason.DELETED_LOCALLY))
        elif base is not None and mine == base:
            wanted = theirs  # unmodified locally: upstream's version, or deleted with it
        elif merge and textfile.needs_merge(mine, base, theirs):
            assert theirs is not None  # needs_merge: both sides have the file
            merged = textfile.merge_file(rel, mine, base, theirs)
            said.append(_merged(merged, fail))
            marks.extend(text_entries(rel, merged.data, merged.conflicts))
            wanted = merged.data
        else:
            wanted = mine  # new or modified locally: kept
            if upstream_changed:
                why = KeptReason.CHANGED_LOCALLY if theirs is not None else KeptReason.DELETED_UPSTREAM_CHANGED_LOCALLY
                said.append(FileKept(rel, why))
        if wanted != mine:
            writes.append(pkgio.Write(rel, mine, wanted))
    return writes, said, marks


def _merged(merged: textfile.FileMerge, fail: bool) -> Outcome:
    """A ``--files merge`` decision as an outcome: merged (with the diff3 regions left), or local kept (binary)."""
    if merged.kept is not None:
        return FileKept(merged.path, merged.kept, merged.detail)
    regions = tuple(Region(r.start, r.end) for r in merged.conflicts)
    return FileMerged(merged.path, regions, Decision.NOT_MERGED if fail else Decision.MARKED)


def ignored_changes(local: Snapshot, origin: Snapshot, upstream: Snapshot, patterns: list[str]) -> list[Outcome]:
    """Each file local's ``.krmignore`` names (no resource to the update) that upstream changed: not taken, said so."""
    of, uf = ignored_krm_files(origin, patterns), ignored_krm_files(upstream, patterns)
    lf = ignored_krm_files(local, patterns) if of or uf else {}
    found: list[Outcome] = []
    for rel in sorted(set(of) | set(uf)):
        theirs = uf[rel].read_bytes() if rel in uf else None
        base = of[rel].read_bytes() if rel in of else None
        mine = lf[rel].read_bytes() if rel in lf else None
        if theirs != base and theirs != mine:
            found.append(FileKept(rel, KeptReason.KRMIGNORED))
    return found


def other_files_differ(local: Snapshot, origin: Snapshot, krm_files: set[str]) -> Callable[[str], bool]:
    """A test: whether the non-KRM files under a directory differ between local and origin.

    Both copies' files are filed once, on the first question, under every folder above them: a package with thousands of
    subpackages asks once per subpackage, and each answer costs that
    subpackage's files, not the whole tree's.
    """
    below: list[dict[str, dict[str, SnapshotFile]]] = []

    def differ(directory: str) -> bool:
        if not below:
            below.extend(_by_folder(other_files_of(copy, krm_files)) for copy in (local, origin))
        lf, of = (side.get(directory, {}) for side in below)
        return lf.keys() != of.keys() or any(lf[r].read_bytes() != of[r].read_bytes() for r in lf)

    return differ


def _by_folder(found: dict[str, SnapshotFile]) -> dict[str, dict[str, SnapshotFile]]:
    """Folder -> the files below it (at any depth)."""
    out: dict[str, dict[str, SnapshotFile]] = {}
    for rel, file in found.items():
        for folder in pkgio.folders_of(rel):
            out.setdefault(folder, {})[rel] = file
    return out


def check_other_files_unmodified(local: Snapshot, origin: Snapshot, krm_files: set[str]) -> None:
    """fast-forward's check of non-KRM files: a KrmError naming each one local changed, added or deleted."""
    lf, of = other_files_of(local, krm_files), other_files_of(origin, krm_files)
    modified = [rel for rel in sorted(set(lf) | set(of)) if rel not in lf or rel not in of or lf[rel].read_bytes() != of[rel].read_bytes()]
    if modified:
        raise KrmError(f"local package files have been modified: [{', '.join(modified)}]. use a different update --strategy")


__all__ = ["check_other_files_unmodified", "ignored_changes", "other_files_differ", "plan_other_files"]
