"""The vocabulary of a package update: the request, its policies, subpackage decisions, options and the result.

Shared by the package merge, each strategy (:mod:`.updater`) and the
callers (the resource-merge mode, ``krm-merge update``), so that none of
them has to import another to name what it returns.
"""

from __future__ import annotations

from enum import Enum

from krm_merge.kptfile.document import Strategy
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.pkgio import folders_of
from krm_merge.merge3.policy import ConflictPolicy
from krm_merge.merge3.rules import FALLBACK_KEYS
from krm_merge.outcomes.kinds import Action, Reason
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, TypeAlias

    from krm_merge.merge3.conflicts import Conflict, FieldMark


RelPath: TypeAlias = "Callable[[Item], str]"
# Whether the files of a subpackage directory other than its KRM resources
# (READMEs, scripts) differ between local and origin; the ResourceList mode
# has none, the update command looks at the disk.
OtherFilesChanged: TypeAlias = "Callable[[str], bool]"


class FilesPolicy(Enum):
    """What an update does with a non-KRM file changed on both sides (``--files``)."""

    KEEP_LOCAL = "keep-local"  # kpt's rule
    MERGE = "merge"  # as git merge-file does: diff3 markers where both changed the same lines


FILES_POLICIES = tuple(p.value for p in FilesPolicy)
"""The command line's spellings of the files policies."""


class Subpackage(Enum):
    """What the update does with a whole subpackage directory."""

    MERGE = "merge"  # present in local and upstream (or only on one side): resources decide
    DELETE = "delete"  # deleted upstream, unchanged locally: removed
    KEEP = "keep"  # deleted upstream, changed locally: kept whole, untouched
    SKIP = "skip"  # deleted locally: upstream's version is not brought back
    REMOTE = "remote"  # its own upstream, re-pointed locally (or local-only): not part of this update
    UNFETCHED = "unfetched"  # upstream's copy has an upstream but no lock: only its Kptfile is merged
    OWN = "own"  # a remote subpackage merged with the parent's upstream copy, by its own updateStrategy


# A NamedTuple and a plain class, not dataclasses: ``update`` loads this module on every run,
# and creating dataclasses cost its start-up several milliseconds (issue 24).


ResourceDecision = tuple[Item, Action, Reason, str]
"""What the merge did to one resource: the item, the action, the reason, a detail (a folder or a strategy)."""


class PackageMergeOptions(Record):
    """Settings of one package merge."""

    strategy: Strategy = Strategy.RESOURCE_MERGE
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    fallback_keys: tuple[str, ...] = FALLBACK_KEYS
    add_kpt_merge_comment: bool = True


class UpdateRequest(Record):
    """One package's update as asked, parsed once: built by ``krm-merge update`` from its command line, by a fleet
    update for each package it selects; everything below the commands takes it (never an argparse namespace).

    ``package``: the local package directory (``@REF`` split off); ``ref``: the upstream ref asked for (None: the
    Kptfile's ``upstream.git.ref``); ``origin`` and ``upstream``: the two versions as directories (both or
    neither: without them the versions come from git); ``strategy``: None for the Kptfile's ``updateStrategy``.
    """

    package: str
    ref: str | None = None
    origin: str | None = None
    upstream: str | None = None
    strategy: Strategy | None = None
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    files: FilesPolicy = FilesPolicy.KEEP_LOCAL
    fallback_keys: str | None = None
    recursive: bool = True
    accept_upstream_strategy: bool = False
    dry_run: bool = False


class PackageMergeResult:
    """What the merge did to the local copy.

    ``items``: the local items after the merge, local order, additions last
    (new objects carry upstream's text; the caller gives them a path via
    ``added``, which maps each new item to the upstream item it came from).
    ``moved_index``: local items whose position inside their file follows
    an upstream re-ordering (the index is 3-way merged like a field).
    """

    __slots__ = ("items", "added", "deleted", "updated", "conflicts", "marks", "moved_index", "moved_file",
                 "subpackages", "strategies", "outcomes")

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.added: list[tuple[Item, Item]] = []
        self.deleted: list[Item] = []
        self.updated: list[Item] = []
        self.conflicts: list[tuple[Item, Conflict]] = []
        self.marks: list[tuple[Item, FieldMark]] = []  # the markers written (conflicts: mark), for the ledger
        self.moved_index: list[tuple[Item, int]] = []
        # Local items that follow upstream to another file (local kept origin's file): (item, upstream's item).
        self.moved_file: list[tuple[Item, Item]] = []
        self.subpackages: dict[str, Subpackage] = {}
        self.strategies: dict[str, Strategy] = {}  # subpackages merged by their own strategy
        # What happened to each resource, decided where the merge decides it: (item, action, reason,
        # detail: a folder or strategy); a resource deleted locally is named by upstream's item.
        self.outcomes: list[ResourceDecision] = []

    def subpackage_of(self, rel: str) -> Subpackage:
        """The decision covering a package-relative file path (MERGE outside decided subpackages)."""
        for folder in folders_of(rel):
            decision = self.subpackages.get(folder, Subpackage.MERGE)
            if decision not in (Subpackage.MERGE, Subpackage.OWN):
                return decision
        return Subpackage.MERGE

    def strategy_of(self, rel: str, default: Strategy) -> Strategy:
        """The strategy that decided a package-relative file path (the deepest own-strategy subpackage)."""
        return next((self.strategies[f] for f in reversed(folders_of(rel)) if f in self.strategies), default)


__all__ = ["FILES_POLICIES", "FilesPolicy", "OtherFilesChanged", "PackageMergeOptions", "PackageMergeResult", "RelPath", "ResourceDecision", "Subpackage",
           "UpdateRequest"]
