"""What each outcome says, in words: its one-line text, and the KRM results of what a person is told.

The words of every kind live here, one table of functions per kind
(:data:`WORDS`); :mod:`krm_merge.outcomes.render` arranges them into each
format (lines, ``--results``, the reports).  Enum fields are worded from the
tables below (``ACTION_WORDS``, ``REASON_WORDS``, ...), never the other way:
nothing reads a word back.
"""

from __future__ import annotations

import os

from krm_merge import files
from krm_merge.interrupts import NAMES as SIGNAL_NAMES
from krm_merge.krm.display import escape_name
from krm_merge.krm.results import Field, File, ResourceRef, Result
from krm_merge.krm.values import render_value
from krm_merge.records import Record

from .kinds import (
    Action, ConflictOutcome, ConflictsLeft, Decision, FieldSet, FileAction, FileChanged, FileKept, FileMerged,
    FileSkipped, ForgeRequests, FunctionResult, KeptReason, LinkRefused, MarkerOutcome, MarkerShaped, Message, Outcome,
    PREVIEW_ACTIONS, PackageStatus, PackageUpdate, PullRequestAction, PullRequestOutcome, Reason, RefusedEntry, Resolved, ResourceOutcome, SkipReason,
    UnrecordedMarker,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

# --- the words of enum values ----------------------------------------------------------------

ACTION_WORDS = {
    Action.TAKEN: "taken from upstream", Action.MERGED: "merged", Action.KEPT: "kept local", Action.ADDED: "added",
    Action.DELETED: "deleted", Action.UNCHANGED: "unchanged",
}
REASON_WORDS = {
    Reason.UNCHANGED_LOCALLY: "unchanged locally",
    Reason.RENAMED_UPSTREAM: "renamed upstream, unchanged locally",
    Reason.CHANGED_LOCALLY: "changed locally, unchanged upstream",
    Reason.CHANGED_ON_BOTH_SIDES: "changed on both sides",
    Reason.SAME_AS_UPSTREAM: "local is upstream's",
    Reason.LOCAL_ONLY: "local only",
    Reason.ADDED_UPSTREAM: "added upstream",
    Reason.DELETED_LOCALLY: "deleted locally",
    Reason.DELETED_LOCALLY_CHANGED_UPSTREAM: "deleted locally; upstream's change to it not taken (it stays deleted)",
    Reason.DELETED_UPSTREAM: "deleted upstream, unchanged locally",
    Reason.DELETED_UPSTREAM_CHANGED_LOCALLY: "deleted upstream, changed locally",
    Reason.DELETED_BY_MERGE: "deleted by the merge",
    Reason.KPTFILE: "Kptfile merged with its pipeline",
    Reason.UNCHANGED_UPSTREAM: "unchanged upstream",
    Reason.LOCK_RECORDED: "unchanged upstream; the new upstream lock recorded",
    Reason.REPLACED_BY_STRATEGY: "replaced by upstream's ({detail})",
    Reason.ROOT_KPTFILE: "the root Kptfile stays local's ({detail}, as kpt)",
    Reason.NOT_UPSTREAM: "not upstream ({detail})",
    Reason.SUBPACKAGE_DELETED: "subpackage {detail} deleted upstream, unchanged locally",
    Reason.SUBPACKAGE_KEPT: "subpackage {detail} deleted upstream, changed locally",
    Reason.KEPT_WITH_SUBPACKAGE: "in subpackage {detail}, deleted upstream and changed locally",
    Reason.SUBPACKAGE_DELETED_LOCALLY: "subpackage {detail} deleted locally",
    Reason.SUBPACKAGE_REMOTE: "subpackage {detail} has an upstream of its own",
    Reason.SUBPACKAGE_UNFETCHED: "subpackage {detail}: only its Kptfile is merged (upstream's copy is unfetched)",
}
DECISION_WORDS = {
    Decision.UPSTREAM: "upstream's value", Decision.LOCAL: "local's value",
    Decision.MARKED: "local's value, marked '# krm-merge:conflict'", Decision.NOT_MERGED: "not merged (conflicts: fail)",
}
FILE_ACTION_WORDS = {
    FileAction.ADDED: "added", FileAction.CHANGED: "changed", FileAction.DELETED: "deleted",
    FileAction.DIRECTORY_REMOVED: "directory removed",
}
KEPT_WORDS = {
    KeptReason.CHANGED_LOCALLY: "changed locally and upstream: local's kept (kpt's rule for non-KRM files)",
    KeptReason.DELETED_LOCALLY: "deleted locally: upstream's change not taken (it stays deleted)",
    KeptReason.DELETED_UPSTREAM_CHANGED_LOCALLY: "deleted upstream, changed locally: local's kept (kpt's rule)",
    KeptReason.KRMIGNORED: "named in local's .krmignore: upstream's change not taken",
    KeptReason.BINARY: "binary file ({detail}) changed on both sides: local kept, upstream's change not applied",
    KeptReason.MARKER_LINES: ("changed on both sides, and its versions hold lines shaped like conflict markers of every "
                              "length up to {detail}, so the conflicts git would leave could not be told apart: "
                              "local kept"),
}
KEPT_HINTS = {
    KeptReason.CHANGED_LOCALLY: "--files merge merges both changes (text files)",
    KeptReason.DELETED_LOCALLY: "",
    KeptReason.DELETED_UPSTREAM_CHANGED_LOCALLY: "",
    KeptReason.KRMIGNORED: "the update leaves files local's .krmignore names alone; copy upstream's by hand",
    KeptReason.BINARY: "",
    KeptReason.MARKER_LINES: "",
}
SKIP_WORDS = {
    SkipReason.NOT_UTF8: "not UTF-8 text{detail}; skipped",
    SkipReason.INVALID_YAML: "not valid YAML{detail}; skipped",
    SkipReason.LINK_TO_DIRECTORY: "a symbolic link to a directory; not read (kpt fn source does not follow these either)",
    SkipReason.BROKEN_LINK: "a broken symbolic link{detail}; skipped (it holds no marker)",
}


def _who(resource: ResourceRef | None, file: str) -> str:
    """``FILE: Kind/name`` — a YAML file that is no resource is named by its file alone."""
    label = resource.display() if resource is not None else ""
    return f"{file}: {label}" if label else file


def _resource_text(o: ResourceOutcome) -> str:
    return f"{_who(o.resource, o.file)}: {ACTION_WORDS[o.action]} ({REASON_WORDS[o.reason].format(detail=o.detail)})"


def _conflict_text(o: ConflictOutcome) -> str:
    decided = DECISION_WORDS[o.decision] + (f" (a rule: {o.rule})" if o.rule else "")
    return (f"{_who(o.resource, o.file)}: {o.field}: changed locally ({o.origin} -> {o.local}) and upstream "
            f"({o.origin} -> {o.upstream}); decided: {decided}")


def _region_text(o: FileMerged, line: int, end: int) -> str:
    return f"{o.path}:{line}: lines changed on both sides; diff3 markers left (lines {line}-{end})"


def _merged_text(o: FileMerged) -> str:
    if not o.regions:
        return f"{o.path}: changes of local and upstream combined (git merge-file)"
    return f"{o.path}: merged (git merge-file); {len(o.regions)} diff3 region(s) left for a person"


def _kept_text(o: FileKept) -> str:
    hint = KEPT_HINTS[o.reason]
    return f"{o.path}: {KEPT_WORDS[o.reason].format(detail=o.detail)}" + (f"; {hint}" if hint else "")


def _skipped_text(o: FileSkipped) -> str:
    return f"{o.path}: {SKIP_WORDS[o.reason].format(detail=f' ({o.detail})' if o.detail else '')}"


def _link_text(o: LinkRefused) -> str:
    if o.entry is RefusedEntry.SPECIAL:
        return f"{o.copy}: {o.path}: not a regular file or folder; not read and not copied"
    if o.entry in (RefusedEntry.OWN_NAME, RefusedEntry.GIT_NAME):
        return f"{o.copy}: {escape_name(o.path)}: {_protected_words(o.path.rpartition('/')[2], o.entry)}"
    return (f"{o.copy}: {o.path}: a symbolic link; not read and not copied (content from elsewhere "
            "is never read through a link; docs/security.md)")


def _protected_words(name: str, entry: RefusedEntry) -> str:
    """Why a name of git's or krm-merge's own state is left out; another spelling of one says which it is and
    how (its spelling is shown escaped: a zero-width character prints as nothing)."""
    whose = ("a git repository's own folder, which git refuses too" if entry is RefusedEntry.GIT_NAME
             else "a name krm-merge keeps its own state under (its conflict ledger, lock or journal)")
    protected = files.protected_name(name)
    if protected is not None and protected != name:
        whose = f"{protected} on some file systems ({files.how_protected(name)}): {whose}"
    return f"{whose}; content from elsewhere never brings it: not read and not copied"


def _shaped_text(o: MarkerShaped) -> str:
    return (f"{o.copy}: {o.path}:{o.line}: text shaped like a krm-merge conflict marker arrives from {o.copy}: "
            "content, not a conflict (no update recorded it); krm-merge conflicts lists it apart and resolve never "
            "acts on it")


def _field_set_text(o: FieldSet) -> str:
    old = repr(o.old) if o.old is not None else "(added)"
    return f"{o.file}:{o.line}: {o.field}: {old} -> {o.new!r}" + (f" (set by {o.source})" if o.source else "")


ABSENT_WORD = "<absent>"
"""A side without the field, as a marker writes it (``merge3.conflicts.ABSENT``)."""
SIDES = ("local", "upstream", "origin")


def value_text(values: dict[str, Any], side: str) -> str:
    """One side's value as a marker shows it: compact JSON, ``<absent>`` for a side without the field."""
    if side not in values:
        return ABSENT_WORD
    return render_value(values[side], as_json=True)  # bounded: a message, not the value


def _where(o: MarkerOutcome, package: str = "") -> str:
    """``FILE:LINE: Kind/name field``; FILE under ``package`` (the directory as the user named it) when given."""
    on = " ".join(part for part in (o.resource, o.field) if part) or "(not on a field)"
    return f"{shown_path(package, o.file)}:{o.line}: {on}"


def shown_path(package: str, rel: str) -> str:
    """A package file's path as a person's tools take it: under the package directory as the user named it
    (``apps/web/a.yaml``, so an editor or terminal opens ``FILE:LINE`` from where the command ran)."""
    if not package or os.path.normpath(package) == ".":
        return rel
    return os.path.join(package, rel)


def marker_text(o: MarkerOutcome, package: str = "") -> str:
    """``FILE:LINE: Kind/name field: local=... upstream=... origin=...``, a marker as ``conflicts`` lists it."""
    return f"{_where(o, package)}: " + " ".join(f"{side}={value_text(o.values, side)}" for side in SIDES)


UNRECORDED = "not recorded by an update of this package: not a conflict; delete it"
"""What ``conflicts`` and ``resolve`` say of marker-shaped text no ledger entry binds."""


def _unrecorded_text(o: UnrecordedMarker) -> str:
    return f"{_where(o.marker)}: a {o.marker.type} marker {UNRECORDED}"


def _left_text(o: ConflictsLeft) -> str:
    marked = o.count - o.regions - o.earlier
    regions = f" and {o.regions} diff3 region(s)" if o.regions else ""
    earlier = f", and {o.earlier} conflict(s) left by an earlier update" if o.earlier else ""
    if o.on_branch:  # the markers are on the pull request's branch: decided there, not in the checkout
        return (f"{marked} conflict(s) marked '# krm-merge:conflict'{regions} left in {o.package}{earlier} on the "
                f"pull request's branch: decide with krm-merge resolve {o.package} --take local|upstream "
                "--pull-request")
    return (f"{marked} conflict(s) marked '# krm-merge:conflict'{regions} left in {o.package}{earlier}: list them with krm-merge conflicts {o.package}, decide "
            f"with krm-merge resolve {o.package} --take local|upstream (or edit the value and delete the marker)")


def _changed_text(o: FileChanged) -> str:
    return f"{o.path}: {FILE_ACTION_WORDS[o.action]}"


def _resolved_text(o: Resolved) -> str:
    return f"took {o.take}: {marker_text(o.marker)}"


PULL_REQUEST_VERBS = {
    PullRequestAction.OPENED: "opened", PullRequestAction.UPDATED: "updated",
    PullRequestAction.UNCHANGED: "already up to date",
}


def _pull_request_text(o: PullRequestOutcome) -> str:
    """``pull request #1 opened: BRANCH into main (commit 1a2b3c4d5e6f)``; GitLab's is ``merge request !1``."""
    if o.action is PullRequestAction.FAILED:
        return f"no pull request: the {o.step or 'pull request'} step failed: {o.error}"
    if o.action is PullRequestAction.NOTHING_TO_CHANGE:
        return f"no pull request: nothing to change (branch {o.branch})"
    if o.action in PREVIEW_ACTIONS:
        which = f" #{o.number} ({o.url})" if o.url else ""
        return (f"pull request (dry run): {o.action.value} a pull request{which} on {o.forge} {o.repo}: "
                f"branch {o.branch} into {o.base}, {o.files} file(s)")
    return f"{published_text(o)}: {o.branch} into {o.base} (commit {str(o.commit)[:12]})"


def published_text(o: PullRequestOutcome) -> str:
    """``pull request #2 opened`` (``updated``, ``already up to date``; GitLab's ``merge request !2``)."""
    noun = f"merge request !{o.number}" if o.forge == "gitlab" else f"pull request #{o.number}"
    return f"{noun} {PULL_REQUEST_VERBS[o.action]}"


def current_text(package: str, subject: str) -> str:
    """A package already at the ref asked for, as a fleet update says it: ``apps/shop: current to v2``
    (``subject``: what the update was asked, ``apps/shop to v2``, or ``apps/shop`` without a ref)."""
    return f"{package}: current{subject.removeprefix(package)}" if subject.startswith(package) else f"{subject}: current"


def _package_text(o: PackageUpdate) -> str:
    """A fleet update's line for one package: ``clusters/east: updated to v3 (1a2b3c4d5e6f): 2 file(s) changed``."""
    to = f" to {o.after.ref} ({o.after.commit[:12]})" if o.after is not None else ""
    if o.status is PackageStatus.UPDATED:
        lost = f", {o.overwritten} local edit(s) overwritten by upstream" if o.overwritten else ""
        return f"{o.path}: updated{to}: {o.files} file(s) changed{lost}"
    if o.status is PackageStatus.CURRENT:
        return f"{o.path}: current{to}"
    if o.status is PackageStatus.CONFLICTED:
        how = ("marked '# krm-merge:conflict', the rest written: see krm-merge conflicts" if o.code == 3
               else "nothing written")
        return f"{o.path}: conflicted{to}: {o.conflicts} conflict(s), {how}"
    return f"{o.path}: failed: {o.error}"


LOCAL_EDIT_WORDS = {Decision.UPSTREAM: "overwritten by upstream", Decision.MARKED: "left marked"}
"""What became of a package's local edit that a fleet update names (:data:`~.kinds.LOCAL_EDIT_DECISIONS`)."""


def local_edit_text(package: str, edit: ConflictOutcome) -> str:
    """``PKG/FILE: Kind/name FIELD: local edit overwritten by upstream: origin=... local=... upstream=...``."""
    on = " ".join(part for part in (edit.resource.display() if edit.resource else "", edit.field) if part)
    return (f"{shown_path(package, edit.file)}: {on}: local edit {LOCAL_EDIT_WORDS[edit.decision]}: "
            f"origin={edit.origin} local={edit.local} upstream={edit.upstream}")


def forge_requests_text(requests: int, waited: float) -> str:
    """``48 forge request(s), 12.4 s waited for the forge's request budget``: what a fleet asked of its forges."""
    return f"{requests} forge request(s), {waited:.1f} s waited for the forge's request budget"


def _forge_requests_text(o: ForgeRequests) -> str:
    """``github at api.github.com: 48 request(s), 12.4 s waited for its request budget``."""
    return f"{o.forge} at {o.host}: {o.requests} request(s), {o.waited:.1f} s waited for its request budget"


def _result_text(o: FunctionResult) -> str:
    return o.result.display()


def _message_text(o: Message) -> str:
    return o.result.message


class Said(Record):
    """One thing an outcome says: its KRM result, the label of its stderr line (None: no line, results only),
    and the line's words when they are not the result's message (a function's result, shown as kpt shows it)."""

    label: str | None
    result: Result
    shown: str = ""


def resource_ref(label: str, api_version: str = "") -> ResourceRef | None:
    """A ``Kind/[namespace/]name`` label as a reference; its apiVersion ``api_version`` (a label does not carry one).

    A part the label shows as ``?`` (a kustomization without a name) is empty in the reference, not a name "?".
    """
    parts = label.split("/")
    if not (len(parts) in (2, 3) and parts[0] and parts[-1]):
        return None
    kind, name = ("" if part == "?" else part for part in (parts[0], parts[-1]))
    return ResourceRef(api_version, kind, name, parts[1] if len(parts) == 3 else "")


SAID_REASONS = {
    Reason.DELETED_UPSTREAM_CHANGED_LOCALLY: "deleted upstream but modified locally: kept",
    Reason.SUBPACKAGE_KEPT: "subpackage {detail} deleted upstream but modified locally: kept",
    Reason.DELETED_LOCALLY_CHANGED_UPSTREAM: "deleted locally; upstream's change to it not taken (it stays deleted)",
}
"""The resource outcomes a person is told about one by one (the others are counted in the summary line)."""


def _severity_label(severity: str) -> str:
    return "" if severity == "info" else severity


def _resource_says(o: ResourceOutcome) -> list[Said]:
    if o.reason not in SAID_REASONS:
        return []  # the summary counts them; the report lists each
    words = f"{_who(o.resource, o.file)}: {SAID_REASONS[o.reason].format(detail=o.detail)}"
    label = "warning" if o.severity == "warning" else "kept local"
    return [Said(label, Result(words, o.severity, o.resource, file=File(o.file)))]


def _conflict_says(o: ConflictOutcome) -> list[Said]:
    field = Field(o.field, o.local, o.upstream)
    return [Said("conflict", Result(_conflict_text(o), o.severity, o.resource, field, File(o.file, o.index)))]


def _merged_says(o: FileMerged) -> list[Said]:
    where = File(o.path)
    if not o.regions:
        return [Said("merged", Result(_merged_text(o), o.severity, file=where))]
    return [Said("conflict", Result(_region_text(o, *r), o.severity, file=where)) for r in o.regions]


FileOutcome = FileKept | FileSkipped | LinkRefused | MarkerShaped


def _file_says(label: str | None) -> Callable[[FileOutcome], list[Said]]:
    """A file's outcome said as one line about the file (its text), under ``label`` (None: its severity)."""
    def says(o: FileOutcome) -> list[Said]:
        shown = _severity_label(o.severity) if label is None else label
        return [Said(shown, Result(text(o), o.severity, file=File(o.path)))]
    return says


def _field_set_says(o: FieldSet) -> list[Said]:
    field = Field(o.field, o.old, o.new)
    return [Said("set", Result(_field_set_text(o), o.severity, o.resource, field, File(o.file, o.index)))]


def _marker_says(o: MarkerOutcome) -> list[Said]:
    # listed on stdout by `conflicts` (its document): a result, no stderr line
    field = Field(o.field, value_text(o.values, "local"), value_text(o.values, "upstream")) if o.field else None
    return [Said(None, Result(marker_text(o), o.severity, resource_ref(o.resource), field, File(o.file)))]


def _unrecorded_says(o: UnrecordedMarker) -> list[Said]:
    marker = o.marker
    field = Field(marker.field) if marker.field else None
    return [Said("warning", Result(_unrecorded_text(o), o.severity, resource_ref(marker.resource), field,
                                   File(marker.file)))]


def _resolved_says(o: Resolved) -> list[Said]:
    marker = o.marker
    result = Result(marker_text(marker), o.severity, resource_ref(marker.resource),
                    Field(marker.field) if marker.field else None, File(marker.file))
    return [Said(f"took {o.take}", result)]


def _left_says(o: ConflictsLeft) -> list[Said]:
    return [Said("", Result(_left_text(o), o.severity))] if o.count else []


def _pull_request_says(o: PullRequestOutcome) -> list[Said]:
    notes = [Said("warning", Result(note, "warning")) for note in o.notes]  # what the forge adapter adjusted
    if o.action is PullRequestAction.FAILED:
        return notes  # the step's error is the command's error message, said once
    # a dry run's preview is on stdout (the renderer's document): a result, no stderr line
    label = None if o.action in PREVIEW_ACTIONS else ""
    return [*notes, Said(label, Result(_pull_request_text(o), o.severity))]


def _package_says(o: PackageUpdate) -> list[Said]:
    # the status is in the words: no label (its severity still fails or conflicts the fleet); each local edit named
    # is a result of its own, and on stderr a line of the fleet's summary (bounded there: a fleet has thousands)
    return [Said("", Result(_package_text(o), o.severity, file=File(o.path))),
            *(Said(None, Result(local_edit_text(o.path, e), "warning", file=File(shown_path(o.path, e.file))))
              for e in o.edits)]


def _result_says(o: FunctionResult) -> list[Said]:
    return [Said("", o.result, o.result.display())]


def _message_says(o: Message) -> list[Said]:
    # an interruption's line is its own words, no label (the same line whether a report or cli.entry says it)
    label = "" if o.result.tags.get("kind") == INTERRUPTED else _severity_label(o.severity)
    return [Said(label, o.result)]


INTERRUPTED = "interrupted"
"""The tag ``kind`` of the message saying a termination signal stopped the command (its results carry it)."""


def interrupted(signo: int, written: bool) -> Message:
    """What a termination signal interrupted (:class:`krm_merge.interrupts.Interrupted`): an error whose line says
    whether the write was finished (``written``: the signal came after a transaction's commit point) or nothing
    was written."""
    name = SIGNAL_NAMES.get(signo, f"signal {signo}")
    words = (f"interrupted ({name}) after the commit point: the write was finished" if written
             else f"interrupted ({name}): nothing written")
    return Message(Result(words, "error", tags={"kind": INTERRUPTED}))


def _silent(o: Outcome) -> list[Said]:
    return []  # only the reports list it


def _results_only(o: Outcome) -> list[Said]:
    return [Said(None, Result(text(o), o.severity))]  # a result; the summary line says it on stderr


class Words(Record):
    """A kind's words: its one-line text, and what it says to a person (each ``outcome -> ...``)."""

    text: Callable[[Any], str]
    says: Callable[[Any], list[Said]]


WORDS: dict[type, Words] = {
    ResourceOutcome: Words(_resource_text, _resource_says),
    ConflictOutcome: Words(_conflict_text, _conflict_says),
    FileChanged: Words(_changed_text, _silent),
    FileMerged: Words(_merged_text, _merged_says),
    FileKept: Words(_kept_text, _file_says("kept local")),
    FileSkipped: Words(_skipped_text, _file_says(None)),
    LinkRefused: Words(_link_text, _file_says(None)),
    MarkerShaped: Words(_shaped_text, _file_says(None)),
    FieldSet: Words(_field_set_text, _field_set_says),
    MarkerOutcome: Words(marker_text, _marker_says),
    UnrecordedMarker: Words(_unrecorded_text, _unrecorded_says),
    Resolved: Words(_resolved_text, _resolved_says),
    ConflictsLeft: Words(_left_text, _left_says),
    PullRequestOutcome: Words(_pull_request_text, _pull_request_says),
    PackageUpdate: Words(_package_text, _package_says),
    ForgeRequests: Words(_forge_requests_text, _results_only),
    FunctionResult: Words(_result_text, _result_says),
    Message: Words(_message_text, _message_says),
}
"""Each kind's words; a new kind adds its entry here (``tests/outcomes/test_render.py`` fails until it does)."""


def text(outcome: Outcome) -> str:
    """The outcome in one line of words (its ``message`` in the JSON report)."""
    return WORDS[type(outcome)].text(outcome)


def said(outcome: Outcome) -> list[Said]:
    """What ``outcome`` tells a person (stderr) and ``--results``: nothing for what only the report lists.

    A typed outcome's results carry its kind as the tag ``kind`` (``conflict``,
    ``fileKept``, ...), so a reader of ``--results`` tells them apart without
    reading a message; a message or a function's result keeps its own tags.
    """
    found = WORDS[type(outcome)].says(outcome)
    if isinstance(outcome, (Message, FunctionResult)):
        return found
    tags = {"kind": outcome.kind.value}
    return [item._replace(result=item.result._replace(tags=tags)) for item in found]


__all__ = [
    "ACTION_WORDS", "DECISION_WORDS", "FILE_ACTION_WORDS", "KEPT_HINTS", "KEPT_WORDS", "PULL_REQUEST_VERBS",
    "INTERRUPTED", "REASON_WORDS", "SAID_REASONS", "SIDES", "SKIP_WORDS", "UNRECORDED", "Said", "WORDS", "Words",
    "LOCAL_EDIT_WORDS", "current_text", "forge_requests_text", "interrupted", "local_edit_text", "marker_text",
    "published_text", "resource_ref", "said", "shown_path", "text", "value_text",
]
