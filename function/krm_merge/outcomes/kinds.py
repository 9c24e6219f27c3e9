"""The typed outcomes of a command: each a kind and a typed payload, decided where the decision is made.

A command (``update``, ``promote``, ``run``, ``conflicts``, ``resolve``,
``recover``, ``diff``) collects what it did as a list of these records in a
:class:`~krm_merge.outcomes.report.Report`; the one renderer
(:mod:`krm_merge.outcomes.render`) turns that list into every format: the
stderr lines, ``--results`` (kpt's results YAML), ``--report json`` (the
versioned document of ``docs/report.schema.json``), ``--report markdown`` and
the exit code.  Nothing reads a message back: what a record means is its type
and its enum fields, the words are the renderer's.

Every record has ``kind`` (a :class:`Kind`), ``severity`` (``error``,
``warning`` or ``info``: an error fails the command) and ``within(folder)``
(the same record for a subpackage's file named from its parent).  They are
NamedTuples, not dataclasses: ``update`` loads this module on every run, and
creating dataclasses cost its start-up several milliseconds (issue 24).
"""

from __future__ import annotations

from enum import Enum

from krm_merge.krm.results import File, Result, ResourceRef
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional


class Kind(Enum):
    """What an outcome is about; the value is its ``kind`` in the JSON report."""

    RESOURCE = "resource"  # a resource of an update: taken, merged, kept, added, deleted, unchanged
    CONFLICT = "conflict"  # a field changed on both sides, and how it was decided
    FILE_CHANGED = "fileChanged"  # a file written, added or deleted; a folder removed
    FILE_MERGED = "fileMerged"  # a non-KRM file merged 3-way (update --files merge), with its diff3 regions
    FILE_KEPT = "fileKept"  # a file upstream changed that the update did not take
    FILE_SKIPPED = "fileSkipped"  # a file the command did not read
    LINK_REFUSED = "linkRefused"  # a link, special file or krm-merge's own name in a copy from elsewhere: not read
    MARKER_SHAPED = "markerShaped"  # text shaped like a conflict marker arriving from upstream: content, no conflict
    FIELD_SET = "fieldSet"  # a field a promotion set
    MARKER = "marker"  # a conflict left in the package for a person (conflicts)
    UNRECORDED_MARKER = "unrecordedMarker"  # marker-shaped text in the package no update recorded: not a conflict
    RESOLVED = "resolved"  # a marked conflict decided (resolve)
    CONFLICTS_LEFT = "conflictsLeft"  # conflicts left in the package to decide: exit code 3
    PULL_REQUEST = "pullRequest"  # what --pull-request did: opened, updated, a dry run's preview, the step that failed
    PACKAGE = "package"  # one package of a fleet update: updated, current, conflicted, failed (its own report inside)
    FORGE_REQUESTS = "forgeRequests"  # what a fleet's pull requests asked of a forge: requests sent, time waited
    RESULT = "result"  # a KRM function's own result (run)
    ERROR = "error"  # the command's own messages, by severity
    WARNING = "warning"
    INFO = "info"


# --- resources of an update ---------------------------------------------------------------


class Action(Enum):
    """What an update did to a resource."""

    TAKEN = "taken"  # upstream's version replaced local's
    MERGED = "merged"
    KEPT = "kept"  # local's version stays
    ADDED = "added"
    DELETED = "deleted"
    UNCHANGED = "unchanged"


class Reason(Enum):
    """Why a resource got its :class:`Action` (``detail`` of the outcome names a folder or a strategy)."""

    UNCHANGED_LOCALLY = "unchangedLocally"
    RENAMED_UPSTREAM = "renamedUpstream"  # and unchanged locally: local's text with upstream's change, new markers
    CHANGED_LOCALLY = "changedLocally"  # and unchanged upstream
    CHANGED_ON_BOTH_SIDES = "changedOnBothSides"
    SAME_AS_UPSTREAM = "sameAsUpstream"
    LOCAL_ONLY = "localOnly"
    ADDED_UPSTREAM = "addedUpstream"
    DELETED_LOCALLY = "deletedLocally"  # upstream did not change it
    DELETED_LOCALLY_CHANGED_UPSTREAM = "deletedLocallyChangedUpstream"  # upstream's change not taken
    DELETED_UPSTREAM = "deletedUpstream"  # and unchanged locally
    DELETED_UPSTREAM_CHANGED_LOCALLY = "deletedUpstreamChangedLocally"
    DELETED_BY_MERGE = "deletedByMerge"
    KPTFILE = "kptfile"  # a Kptfile merged by the pipeline-aware merge
    UNCHANGED_UPSTREAM = "unchangedUpstream"  # a Kptfile upstream did not change
    LOCK_RECORDED = "lockRecorded"  # a Kptfile upstream did not change: local's, with the new upstream lock
    REPLACED_BY_STRATEGY = "replacedByStrategy"  # detail: the strategy
    ROOT_KPTFILE = "rootKptfile"  # the root Kptfile kept by a replacing strategy, as kpt keeps it (detail: the strategy)
    NOT_UPSTREAM = "notUpstream"  # removed by a replacing strategy (detail: the strategy)
    SUBPACKAGE_DELETED = "subpackageDeleted"  # detail: the subpackage folder
    SUBPACKAGE_KEPT = "subpackageKept"  # its Kptfile: the subpackage was deleted upstream, changed locally
    KEPT_WITH_SUBPACKAGE = "keptWithSubpackage"  # a resource of such a subpackage
    SUBPACKAGE_DELETED_LOCALLY = "subpackageDeletedLocally"
    SUBPACKAGE_REMOTE = "subpackageRemote"  # its own upstream: left to its own update
    SUBPACKAGE_UNFETCHED = "subpackageUnfetched"  # only its Kptfile is merged


class ResourceOutcome(Record):
    """What an update did to one resource; ``resource`` is None for a YAML file that is no resource (named by its file)."""

    resource: Optional[ResourceRef]
    file: str
    action: Action
    reason: Reason
    detail: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.RESOURCE

    @property
    def severity(self) -> str:
        return "warning" if self.reason in _WARNED_REASONS else "info"

    def within(self, folder: str) -> "ResourceOutcome":
        detail = f"{folder}/{self.detail}" if self.reason in _SUBPACKAGE_REASONS else self.detail
        return self._replace(file=f"{folder}/{self.file}", detail=detail)


_WARNED_REASONS = frozenset({Reason.DELETED_UPSTREAM_CHANGED_LOCALLY, Reason.SUBPACKAGE_KEPT})
_SUBPACKAGE_REASONS = frozenset({
    Reason.SUBPACKAGE_DELETED, Reason.SUBPACKAGE_KEPT, Reason.KEPT_WITH_SUBPACKAGE, Reason.SUBPACKAGE_DELETED_LOCALLY,
    Reason.SUBPACKAGE_REMOTE, Reason.SUBPACKAGE_UNFETCHED,
})


# --- conflicts ----------------------------------------------------------------------------


class Decision(Enum):
    """How a field changed on both sides was decided."""

    UPSTREAM = "upstream"  # upstream's value (local's change lost)
    LOCAL = "local"  # local's value
    MARKED = "marked"  # local's value, marked for a person to decide
    NOT_MERGED = "notMerged"  # --conflicts fail (or a rule's fail): nothing written


class ConflictOutcome(Record):
    """A field changed differently on both sides: its resource, file, field, the three values and the decision.

    Values are short renderings (``<absent>`` for a side without the field);
    ``rule`` is the package rule that decided it (``Kind:path: policy``), ""
    when ``--conflicts`` did.
    """

    resource: Optional[ResourceRef]
    file: str
    index: int  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins
    field: str
    local: str
    upstream: str
    origin: str
    decision: Decision
    rule: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.CONFLICT

    @property
    def severity(self) -> str:
        # Not merged fails the command; local's change lost, or left to a person, is a warning.
        if self.decision is Decision.NOT_MERGED:
            return "error"
        return "info" if self.decision is Decision.LOCAL else "warning"

    def within(self, folder: str) -> "ConflictOutcome":
        return self._replace(file=f"{folder}/{self.file}")


# --- files ------------------------------------------------------------------------------


class FileAction(Enum):
    """What a command wrote."""

    ADDED = "added"
    CHANGED = "changed"
    DELETED = "deleted"
    DIRECTORY_REMOVED = "directoryRemoved"


class FileChanged(Record):
    """A file the command writes (or, in a dry run, would write), or a folder it removes."""

    path: str
    action: FileAction

    @property
    def kind(self) -> Kind:
        return Kind.FILE_CHANGED

    @property
    def severity(self) -> str:
        return "info"

    def within(self, folder: str) -> "FileChanged":
        return self._replace(path=f"{folder}/{self.path}")


class Region(Record):
    """A diff3 region left in a merged file: the lines of its ``<<<<<<<`` and ``>>>>>>>`` markers (1-based)."""

    line: int
    end_line: int


class FileMerged(Record):
    """A non-KRM file local and upstream both changed, merged as ``git merge-file --diff3`` does.

    ``regions``: where both changed the same lines, diff3 markers left for a
    person (``decision`` MARKED), or, under ``--conflicts fail``, the reason
    nothing is written (NOT_MERGED).
    """

    path: str
    regions: tuple[Region, ...] = ()
    decision: Decision = Decision.MARKED

    @property
    def kind(self) -> Kind:
        return Kind.FILE_MERGED

    @property
    def severity(self) -> str:
        if not self.regions:
            return "info"
        return "error" if self.decision is Decision.NOT_MERGED else "warning"

    def within(self, folder: str) -> "FileMerged":
        return self._replace(path=f"{folder}/{self.path}")


class KeptReason(Enum):
    """Why an update kept local's file although upstream changed it."""

    CHANGED_LOCALLY = "changedLocally"  # kpt's rule: a non-KRM file changed locally is kept whole
    DELETED_LOCALLY = "deletedLocally"  # deleted locally: stays deleted
    DELETED_UPSTREAM_CHANGED_LOCALLY = "deletedUpstreamChangedLocally"  # kpt's rule: local's change kept
    KRMIGNORED = "krmignored"  # local's .krmignore names it: the update leaves it alone
    BINARY = "binary"  # --files merge: a binary file is never merged
    MARKER_LINES = "markerLines"  # --files merge: its versions hold marker-shaped lines of every length git could use


class FileKept(Record):
    """A file upstream changed that the update did not take, and why (``detail``: e.g. which copies are binary)."""

    path: str
    reason: KeptReason
    detail: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.FILE_KEPT

    @property
    def severity(self) -> str:
        return "warning" if self.reason in (KeptReason.BINARY, KeptReason.MARKER_LINES) else "info"

    def within(self, folder: str) -> "FileKept":
        return self._replace(path=f"{folder}/{self.path}")


class SkipReason(Enum):
    """Why a command did not read a file."""

    NOT_UTF8 = "notUtf8"
    INVALID_YAML = "invalidYaml"  # promote --skip-unreadable
    LINK_TO_DIRECTORY = "linkToDirectory"
    BROKEN_LINK = "brokenLink"  # promote: a link to nothing holds no marker (Flux skips it too)


class FileSkipped(Record):
    """A file the command left alone without reading it (``detail``: where, e.g. the byte or line)."""

    path: str
    reason: SkipReason
    detail: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.FILE_SKIPPED

    @property
    def severity(self) -> str:
        return "info" if self.reason is SkipReason.LINK_TO_DIRECTORY else "warning"

    def within(self, folder: str) -> "FileSkipped":
        return self._replace(path=f"{folder}/{self.path}")


class RefusedEntry(Enum):
    """What a copy from elsewhere held that krm-merge never reads nor copies."""

    LINK = "link"  # a symbolic link
    SPECIAL = "special"  # not a link, file or folder: a FIFO, socket or device
    OWN_NAME = "ownName"  # a name krm-merge keeps its own state under (its conflict ledger, lock or journal)
    GIT_NAME = "gitName"  # .git in another spelling a file system takes for it (.GIT, git~1, .git.)


class LinkRefused(Record):
    """A symbolic link, special file or krm-merge's own name in a copy from elsewhere (``copy``: origin, upstream):
    not read, not copied."""

    copy: str
    path: str
    entry: RefusedEntry = RefusedEntry.LINK

    @property
    def kind(self) -> Kind:
        return Kind.LINK_REFUSED

    @property
    def severity(self) -> str:
        return "warning"

    def within(self, folder: str) -> "LinkRefused":
        return self._replace(path=f"{folder}/{self.path}")


class MarkerShaped(Record):
    """A line of a file a copy from elsewhere (``copy``: upstream) brings, shaped like one of krm-merge's conflict
    markers: content, not a conflict (no update recorded it; ``conflicts`` lists it apart, ``resolve`` leaves it)."""

    copy: str
    path: str
    line: int

    @property
    def kind(self) -> Kind:
        return Kind.MARKER_SHAPED

    @property
    def severity(self) -> str:
        return "warning"

    def within(self, folder: str) -> "MarkerShaped":
        return self._replace(path=f"{folder}/{self.path}")


# --- promote ----------------------------------------------------------------------------


class FieldSet(Record):
    """A field a promotion set: where, the old value (None: added), the new one, and what set it."""

    file: str
    line: int
    index: int  # type: ignore[assignment]  # shadows tuple.index (the field wins): the document's index in its file
    resource: Optional[ResourceRef]
    field: str
    old: Optional[str]
    new: str
    source: str = ""  # the marker or the strategy

    @property
    def kind(self) -> Kind:
        return Kind.FIELD_SET

    @property
    def severity(self) -> str:
        return "info"

    def within(self, folder: str) -> "FieldSet":
        return self._replace(file=f"{folder}/{self.file}")


# --- conflicts left for a person (conflicts, resolve) ----------------------------------------


class MarkerOutcome(Record):
    """A conflict left in a package file: a field marker or a diff3 region (``type``: ``field``, ``text``).

    ``resource`` and ``field`` are empty when the marker is not on a resource's
    field; ``values`` holds the sides that have the field (``local``,
    ``upstream``, ``origin``) as data: local's as the file holds it, the
    others as the update recorded them (a diff3 region's: each side's lines).
    """

    type: str
    file: str
    line: int
    resource: str
    field: str
    values: dict[str, Any]

    @property
    def kind(self) -> Kind:
        return Kind.MARKER

    @property
    def severity(self) -> str:
        return "warning"

    def within(self, folder: str) -> "MarkerOutcome":
        return self._replace(file=f"{folder}/{self.file}")


class UnrecordedMarker(Record):
    """Marker-shaped text in a package file that no update of the package recorded: not a conflict (delete it).

    ``marker`` says where (its ``values`` are local's only: nothing recorded the others).
    """

    marker: MarkerOutcome

    @property
    def kind(self) -> Kind:
        return Kind.UNRECORDED_MARKER

    @property
    def severity(self) -> str:
        return "warning"

    def within(self, folder: str) -> "UnrecordedMarker":
        return self._replace(marker=self.marker.within(folder))


class Resolved(Record):
    """A marked conflict decided by ``resolve``: the marker, and the side taken (``local``, ``upstream``)."""

    marker: MarkerOutcome
    take: str

    @property
    def kind(self) -> Kind:
        return Kind.RESOLVED

    @property
    def severity(self) -> str:
        return "info"

    def within(self, folder: str) -> "Resolved":
        return self._replace(marker=self.marker.within(folder))


class ConflictsLeft(Record):
    """Conflicts left in the package for a person to decide (field markers and diff3 regions): exit code 3."""

    package: str
    count: int  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins
    regions: int = 0  # of ``count``: diff3 regions in merged files
    earlier: int = 0  # of ``count``: left by an earlier update (still in its conflict ledger)
    on_branch: bool = False  # left on a pull request's branch (--pull-request), not in the checkout

    @property
    def kind(self) -> Kind:
        return Kind.CONFLICTS_LEFT

    @property
    def severity(self) -> str:
        return "info"

    def within(self, folder: str) -> "ConflictsLeft":
        return self


# --- the pull request (--pull-request) -----------------------------------------------------


class PullRequestAction(Enum):
    """What ``--pull-request`` did; the values are the ``action`` of the report's ``pullRequest`` entry."""

    OPENED = "opened"
    UPDATED = "updated"
    UNCHANGED = "unchanged"  # the pull request already says this: nothing pushed, nothing edited
    NOTHING_TO_CHANGE = "nothing to change"  # no file changes: no commit, no branch, no pull request
    WOULD_OPEN = "would open"  # --dry-run
    WOULD_UPDATE = "would update"
    WOULD_OPEN_OR_UPDATE = "would open or update"  # --dry-run without a token: the forge's list was not read
    FAILED = "failed"  # a step failed (``step``; the error itself is the command's error message)


PREVIEW_ACTIONS = frozenset({PullRequestAction.WOULD_OPEN, PullRequestAction.WOULD_UPDATE,
                             PullRequestAction.WOULD_OPEN_OR_UPDATE})
"""The actions of a dry run: shown, nothing done."""


class PullRequestOutcome(Record):
    """What the pull-request step did (or, in a dry run, would do), where, and with what.

    ``url``/``number``: the pull request's (None when there is none);
    ``commit``: the commit pushed; ``notes``: what the forge adapter adjusted
    (a body cut to the forge's limit); ``files`` and ``message``: a dry run's
    file count and the commit message it would write; ``step`` and ``error``:
    the step that failed and its message.
    """

    action: PullRequestAction
    forge: str = ""
    repo: str = ""
    branch: str = ""
    base: str = ""
    url: Optional[str] = None
    number: Optional[int] = None
    commit: Optional[str] = None
    notes: tuple[str, ...] = ()
    files: int = 0
    message: str = ""
    step: str = ""
    error: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.PULL_REQUEST

    @property
    def severity(self) -> str:
        return "error" if self.action is PullRequestAction.FAILED else "info"

    def within(self, folder: str) -> "PullRequestOutcome":
        return self


# --- a fleet update (update ROOT... --upstream REPO --ref REF) --------------------------------


LOCAL_EDIT_DECISIONS = frozenset({Decision.UPSTREAM, Decision.MARKED})
"""The conflicts a fleet update names as local edits: replaced by upstream's value, or left marked for a person
(local's value kept, ``local-wins``, loses nothing of the package's own; ``fail`` wrote nothing)."""


class PackageStatus(Enum):
    """What a fleet update did to one package."""

    UPDATED = "updated"  # written (with --dry-run: would be)
    CURRENT = "current"  # nothing to change: already at the ref
    CONFLICTED = "conflicted"  # conflicts left marked, or refused under --conflicts fail: fleet exit code 3
    FAILED = "failed"  # an error stopped its update (``error`` says which)


class Version(Record):
    """A package's upstream version: the ref kpt locks and its commit."""

    ref: str
    commit: str


class PackageUpdate(Record):
    """One package of a fleet update, as its single update (``krm-merge update PATH@REF``) ended.

    ``code``: that update's exit code; ``before``/``after``: the version it
    was locked at and the one it moves to; ``files``/``conflicts``: the files
    it changed and the conflicts it found; ``report``: its own JSON report
    (:func:`krm_merge.outcomes.render.report_document`: every outcome of its
    update; None when no update ran); ``edits``: its local edits that
    upstream's value replaced or that are left marked (:data:`LOCAL_EDIT_DECISIONS`),
    named apart so that a fleet never overwrites one in silence (#46).
    """

    path: str
    status: PackageStatus
    code: int
    before: Optional[Version] = None
    after: Optional[Version] = None
    error: str = ""
    files: int = 0
    conflicts: int = 0
    report: Optional[dict[str, Any]] = None
    edits: tuple[ConflictOutcome, ...] = ()

    @property
    def kind(self) -> Kind:
        return Kind.PACKAGE

    @property
    def overwritten(self) -> int:
        """How many of its local edits upstream's value replaced (the fleet's exit code is then 3)."""
        return sum(1 for e in self.edits if e.decision is Decision.UPSTREAM)

    @property
    def severity(self) -> str:
        if self.status is PackageStatus.FAILED:
            return "error"
        return "warning" if self.status is PackageStatus.CONFLICTED or self.overwritten else "info"

    def within(self, folder: str) -> "PackageUpdate":
        return self._replace(path=f"{folder}/{self.path}")


class ForgeRequests(Record):
    """What a fleet update's pull requests asked of one forge's API host: the requests sent, and the seconds waited
    for its request budget (docs/pull-requests.md, pacing)."""

    forge: str
    host: str
    requests: int
    waited: float

    @property
    def kind(self) -> Kind:
        return Kind.FORGE_REQUESTS

    @property
    def severity(self) -> str:
        return "info"

    def within(self, folder: str) -> "ForgeRequests":
        return self


class FleetScope(Record):
    """What a fleet update's report covers: the upstream and ref, how many packages the roots held that track it,
    and the shards (``count``) whose packages it reports (``reported``: their indices)."""

    upstream: str
    ref: str
    selected: int
    count: int = 1  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins
    reported: tuple[int, ...] = (0,)


# --- messages ------------------------------------------------------------------------------


class Message(Record):
    """The command's own message (an error that stopped it, a lock recovered, a duplicate key): a KRM result."""

    result: Result

    @property
    def kind(self) -> Kind:
        return _SEVERITY_KINDS[self.result.severity]

    @property
    def severity(self) -> str:
        return self.result.severity

    def within(self, folder: str) -> "Message":
        file = self.result.file
        return self if file is None else Message(self.result._replace(file=file._replace(path=f"{folder}/{file.path}")))


_SEVERITY_KINDS = {"error": Kind.ERROR, "warning": Kind.WARNING, "info": Kind.INFO}


class FunctionResult(Record):
    """A result a KRM function reported (``run``, an SDK function on a folder), passed on as it is."""

    result: Result

    @property
    def kind(self) -> Kind:
        return Kind.RESULT

    @property
    def severity(self) -> str:
        return self.result.severity

    def within(self, folder: str) -> "FunctionResult":
        return self


Outcome = (ResourceOutcome | ConflictOutcome | FileChanged | FileMerged | FileKept | FileSkipped | LinkRefused
           | MarkerShaped | FieldSet | MarkerOutcome | UnrecordedMarker | Resolved | ConflictsLeft | PullRequestOutcome
           | PackageUpdate | ForgeRequests | Message | FunctionResult)
"""Any typed outcome."""


def message(text: str, severity: str = "warning", file: Optional[str] = None) -> Message:
    """The command's own message, about a file or none."""
    return Message(Result(text, severity, file=File(file) if file else None))


__all__ = [
    "Action", "ConflictOutcome", "ConflictsLeft", "Decision", "FieldSet", "FileAction", "FileChanged", "FileKept",
    "FileMerged", "FileSkipped", "FleetScope", "ForgeRequests", "FunctionResult", "KeptReason", "Kind", "LinkRefused", "MarkerOutcome",
    "LOCAL_EDIT_DECISIONS",
    "MarkerShaped", "Message", "Outcome", "PREVIEW_ACTIONS", "PackageStatus", "PackageUpdate", "PullRequestAction", "PullRequestOutcome", "Reason",
    "RefusedEntry", "Region", "Resolved", "ResourceOutcome", "SkipReason", "UnrecordedMarker", "Version", "message",
]
