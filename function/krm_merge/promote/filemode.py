"""Promote on a tree of files: the engine of the ``promote`` command (``krm-merge promote DIR``).

The command builds promotions from its options and hands them here: :func:`plan` lists
the tree once (:func:`krm_merge.promote.files.screen`, on the package lister), decodes
and parses only the files whose bytes hold a marker key (or the Pipeline API group, to
find Pipelines) plus the kustomization files of kustomize-image promotions, runs the
engine (:mod:`krm_merge.promote.engine`) on them and plans the writes;
:class:`FilePlanner` turns that into typed outcomes on the command's report, under the tree's lock,
for the change pipeline (:mod:`krm_merge.change.pipeline`) to write every file or none (a dry run's diff
instead), with ``--pull-request`` or ``--push`` around the write.  A changed file differs from the original
only in the set scalars (and, for kustomize images, the added entry lines).  With ``--push`` a lost race
plans the same promotions again on the new head's files (:class:`Replanner`, handed to the push stage as a
value): a field another writer set meanwhile is decided by :mod:`krm_merge.promote.contest`.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from krm_merge import txn
from krm_merge.krm import pkgio
from krm_merge.krm.pkgio import ChangeSet
from krm_merge.krm.results import Field, File, Result
from krm_merge.outcomes.kinds import FileSkipped, Message, SkipReason, message
from krm_merge.outcomes.kinds import Outcome as Said
from krm_merge.outcomes.report import Report, State
from krm_merge.promote.contest import RULE, ours_prevails
from krm_merge.promote.errors import PromoteError, UnreadableYaml
from krm_merge.promote.event import Nothing, promotion_from_event
from krm_merge.promote.files import (
    Screen, ScreenedFile, check_all, decode, diff_all, encode, holds, list_tree, pipeline_lookup, planned_write,
    read_one, screen, write_all)
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PIPELINE_GROUP, PipelineRef
from krm_merge.promote.report import field_sets, subject
from krm_merge.promote.request import Promotion, Resolved, is_kustomization_in, no_match_messages, resolve
from krm_merge.promote.units import Unit, empty_outcome
from krm_merge.records import Record
from krm_merge.yaml.load import collecting_duplicate_keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from krm_merge.promote.units import Outcome


COMMAND = "krm-merge promote"


class EventSource(Record):
    """``--event``: the Flux event's file (``-``: standard input) and where its Pipeline is read from."""

    source: str
    pipeline: str | None = None
    pipeline_file: str | None = None


class PromoteRequest(Record):
    """What one ``promote`` run asks, read once from the command line: the tree, the promotions (none with an
    event: the event brings its own) and how to treat what it finds."""

    root: str
    promotions: tuple[Promotion, ...] = ()
    event: EventSource | None = None
    skip_unreadable: bool = False
    allow_no_match: bool = False
    dry_run: bool = False


class FilePlanner:
    """A promote run as the change pipeline (:func:`krm_merge.change.pipeline.run`) runs it: planned under the
    tree's lock, from the screen to the write."""

    def __init__(self, request: PromoteRequest) -> None:
        self.request = request

    @contextmanager
    def plan(self, report: Report) -> Iterator[FileRun]:
        """Plan the promotions on the files under the root (the outcomes in ``report``); the lock is held for the
        ``with`` block: a second writer is refused, not silently overwritten."""
        request = self.request
        with txn.PackageLock(request.root, COMMAND, read_only=request.dry_run) as lock:
            report.extend(message(text, "warning", request.root) for text in lock.messages)
            yield self._planned(report)

    def _planned(self, report: Report) -> FileRun:
        request = self.request
        root = request.root
        if not os.path.isdir(root):
            raise PromoteError(f"{root} is not a directory")
        promotions = list(request.promotions)
        event = None
        if request.event is not None:
            found = promotion_from_event(request.event.source, root, pipeline=request.event.pipeline,
                                         pipeline_file=request.event.pipeline_file)
            if isinstance(found, Nothing):
                report.add(message(f"nothing to promote: {found.reason}", "info"))
                return FileRun.nothing(root, report)
            promotions, event = [found.promotion], found
        run = plan(root, promotions, skip_unreadable=request.skip_unreadable)
        run.root, run.report = root, report
        if event is not None:  # the event's Pipeline, read before the tree's; its promotion may ask for a pull request
            run.find_pipeline = event.find_pipeline(run.find_pipeline)
            run.pipeline_asks = event.pull_request
        report.subject = subject([r.rendered for r in run.resolved])
        report.extend(run.outcomes)
        if any(o.severity == "error" for o in run.outcomes):
            run.stop = State.NOT_WRITTEN
            return run
        report.extend(field_sets(run.changes))
        missing = no_match_messages(run.resolved, run.outcome.matched)
        if request.allow_no_match:
            report.extend(message(text) for text in missing)
        else:
            report.extend(message(f"{text} (use --allow-no-match to accept this)", "error") for text in missing)
            if missing:
                run.stop = State.NOT_WRITTEN
                return run
        matched = sum(run.outcome.matched)
        if not run.changes and matched:
            report.add(message(f"{matched} field(s) already at the promoted value(s): none to set", "info"))
        report.add_changes(run.writes)
        return run


class FileRun:
    """What one run found and plans to write: the change pipeline's planned change
    (:class:`krm_merge.change.pipeline.Planned`).

    ``stop``: the state a run ends in before the write (an error: ``NOT_WRITTEN``; an event with nothing to
    promote: ``READ_ONLY``), None to go on; ``pipeline_asks``: with ``--event``, whether the Pipeline's
    promotion for the target environment is a pull request (None without an event).
    """

    def __init__(self, resolved: list[Resolved], outcome: Outcome,
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None]) -> None:
        self.resolved = resolved
        self.outcome = outcome
        self.find_pipeline = find_pipeline
        self.writes = ChangeSet()
        self.changes: list[tuple[str, Any]] = []
        self.outcomes: list[Said] = []  # files skipped, malformed markers, duplicate keys, errors
        self.root = ""
        self.report = Report("promote")
        self.stop: State | None = None
        self.pipeline_asks: bool | None = None
        self.skip_unreadable = False

    @classmethod
    def nothing(cls, root: str, report: Report) -> FileRun:
        """A run with nothing to do (an event that asks for no promotion)."""
        run = cls([], empty_outcome(0), lambda ref: None)
        run.root, run.report, run.stop = root, report, State.READ_ONLY
        return run

    @property
    def planned_writes(self) -> list[pkgio.Write]:
        """The planned writes (path, new bytes)."""
        return self.writes.writes

    def check(self) -> None:
        """What the write checks, before it (a refused write gets no commit)."""
        check_all(self.root, self.writes)

    def diff(self) -> Iterator[str]:
        """A dry run's unified diff, once refused as the write refuses."""
        return diff_all(self.root, self.writes)

    def write(self) -> None:
        """Every planned file written, or none."""
        write_all(self.root, self.writes)

    def written(self, package_name: str | None) -> Report:
        """The report as the write leaves it (a pull request's words)."""
        return self.report.as_written()

    def done(self, *, on_branch: bool) -> None:
        """Nothing more to say after the write: every field set is in the report already."""

    def replanner(self) -> Replanner:
        """``--push``: the same promotions, to plan again on a newer head of the base branch after a lost race."""
        return Replanner([r.promotion for r in self.resolved], {_key(rel, c): c.old for rel, c in self.changes},
                         tuple(r.rendered.describe() for r in self.resolved), self.skip_unreadable)


Key = tuple[str, int, str]  # file, document index, field path


class Replanned(Record):
    """A promotion planned again on a newer head: the package's files (path, new bytes or None) and the report
    whose words make its commit message."""

    files: tuple[tuple[str, bytes | None], ...]
    words: Report


class Replanner:
    """``promote --push``'s re-plan, given to the push stage (:mod:`krm_merge.change.push_stage`) as a value.

    ``baseline``: each field's value when this run planned first.  On a newer head a field whose value
    differs from it (set by another writer meanwhile) is decided by :data:`~krm_merge.promote.contest.RULE`,
    per promotion: one that loses on any of its fields is left out, its fields stay as the other writer set
    them.  Each contest is said once in the report, however many heads meet it again.
    """

    def __init__(self, promotions: list[Promotion], baseline: dict[Key, str | None], names: tuple[str, ...],
                 skip_unreadable: bool) -> None:
        self.promotions = promotions
        self.baseline = baseline
        self.names = names  # what is promoted, as the report names it (the local branch kept names it too)
        self.skip_unreadable = skip_unreadable
        self.said: set[tuple[Key, str]] = set()

    def replan(self, head: str, base: str, package: str, report: Report) -> Replanned | None:
        """The promotions planned on ``head``'s copy of the package (in the folder ``package``); None when
        nothing is left to change there.  The contests met go into ``report``."""
        promotions = list(self.promotions)
        run: FileRun | None = self._plan(package, promotions, head, base)
        lost = self._contests(run, head, report) if run is not None else set()
        if lost:
            promotions = [p for p in promotions
                          if not lost & {_key(rel, c) for rel, c in self._plan(package, [p], head, base).changes}]
            run = self._plan(package, promotions, head, base) if promotions else None
        if run is None or not run.writes.writes:
            return None
        words = Report("promote", report.target)
        words.subject = report.subject
        words.extend(field_sets(run.changes))
        words.add_changes(run.writes)
        return Replanned(tuple((w.path, w.data) for w in run.writes.writes), words.as_written())

    def _plan(self, package: str, promotions: list[Promotion], head: str, base: str) -> FileRun:
        run = plan(package, promotions, skip_unreadable=self.skip_unreadable)
        errors = [o.result.message for o in run.outcomes if isinstance(o, Message) and o.severity == "error"]
        if errors:
            raise PromoteError(f"planning again on {head[:12]} of {base}: {errors[0]}")
        return run

    def _contests(self, run: FileRun, head: str, report: Report) -> set[Key]:
        """The fields another writer set (to a value other than ours) whose value stands; each said once."""
        lost: set[Key] = set()
        for rel, change in run.changes:
            key = _key(rel, change)
            if key not in self.baseline or change.old == self.baseline[key] or change.old is None:
                continue
            won = ours_prevails(change.new, change.old)
            if not won:
                lost.add(key)
            if (key, change.old) in self.said:
                continue
            self.said.add((key, change.old))
            winner, loser = (change.new, change.old) if won else (change.old, change.new)
            report.add(message(f"push: {rel} {change.path}: another writer set {change.old} meanwhile (at "
                               f"{head[:12]}); {winner} stands over {loser} ({'ours' if won else 'theirs'}: {RULE})",
                               "info", rel))
        return lost


def _key(rel: str, change: Any) -> Key:
    return rel, change.doc, change.path


def plan(root: str, promotions: list[Promotion], skip_unreadable: bool = False) -> FileRun:
    """Read the files the promotions can touch, run the engine, plan the writes.

    A marked file that is not valid YAML, or not UTF-8, is an error: skipping it would let a
    release pass with one of its promotions missing.  ``skip_unreadable`` makes it a warning.
    """
    keys = sorted({PROMOTION_KEY for p in promotions if p.pipeline is not None and p.strategy == "markers"}
                  | {IMAGEPOLICY_KEY for p in promotions if p.image_policy is not None})
    needs_pipeline = any(p.pipeline is not None for p in promotions)
    tokens = tuple(k.encode() for k in keys) + ((PIPELINE_GROUP.encode(),) if needs_pipeline else ())
    listing = list_tree(root)  # the one listing of the run: the screen and the kustomizations match on it
    screened_tree = screen(listing, tokens) if tokens else Screen([], [])
    files = screened_tree.files
    finder = pipeline_lookup(files)
    resolved = resolve(promotions, finder)
    kustomizations = _kustomization_rels(root, listing, resolved)
    files = _with_kustomizations(root, files, kustomizations)
    units: list[tuple[str, str, Any]] = []
    found: list[Said] = [FileSkipped(link.rel, SkipReason.BROKEN_LINK, f"to {link.target}")
                         for link in screened_tree.broken_links]
    key_bytes = tuple(k.encode() for k in keys)
    for screened in files:
        if screened.rel in kustomizations or holds(screened.data, key_bytes):
            try:
                text, bom = decode(screened.data)
            except UnicodeDecodeError as err:
                found.append(_not_utf8(screened.rel, err, skip_unreadable))
                continue
            units.append((text, screened.rel, (screened, bom)))
    if units:
        # Imported only now: a tree without marked files never loads the engine.
        from krm_merge.promote.engine import promote_units

        with collecting_duplicate_keys() as duplicates:
            outcome = promote_units([Unit(*u) for u in units], resolved)
        found.extend(message(dup.message(), "warning", dup.what) for dup in duplicates)
    else:
        outcome = empty_outcome(len(resolved))
    run = FileRun(resolved, outcome, finder)
    run.skip_unreadable = skip_unreadable
    run.outcomes.extend(found)
    for unit, error in outcome.errors:
        rel = unit.path or ""
        if isinstance(error, UnreadableYaml) and skip_unreadable:
            run.outcomes.append(FileSkipped(rel, SkipReason.INVALID_YAML, _where(error)))
        elif isinstance(error, UnreadableYaml):
            where = rel + (f":{error.line}" if error.line else "")
            run.outcomes.append(message(f"{where}: {error.message} (use --skip-unreadable to skip it)", "error", rel))
        else:
            run.outcomes.append(_error(error.located(file=rel)))
    for result in outcome.results:
        screened, bom = result.unit.handle
        for bad in result.malformed:
            run.outcomes.append(message(f"{screened.rel}:{bad.line}: comment mentions a marker key but {bad.reason}: "
                                        f"{bad.comment.strip()}", "warning", screened.rel))
        if not result.changed:
            continue
        try:
            run.writes.writes.append(planned_write(screened, encode(result.text, bom)))
        except PromoteError as err:
            run.outcomes.append(_error(err.located(file=screened.rel)))
            continue
        run.changes.extend((screened.rel, change) for change in result.changes)
    return run


def _not_utf8(rel: str, err: UnicodeDecodeError, skip_unreadable: bool) -> Said:
    """A marked file that is not UTF-8: an error as for invalid YAML (its promotion would be missing), or skipped."""
    if skip_unreadable:
        return FileSkipped(rel, SkipReason.NOT_UTF8, f"byte {err.start}")
    return message(f"{rel}: not UTF-8 text (byte {err.start}) (use --skip-unreadable to skip it)", "error", rel)


def _where(err: UnreadableYaml) -> str:
    """Where in its file a text is not valid YAML, and why: ``line 3: mapping values are not allowed here``."""
    return (f"line {err.line}: " if err.line else "") + err.problem


def _error(err: PromoteError) -> Said:
    """An engine error as an outcome: the command's wording, its file (document index) and field kept."""
    return Message(Result(str(err), "error", field=Field(err.field) if err.field else None,
                          file=File(err.file, err.index or 0) if err.file else None))


def _kustomization_rels(root: str, listing: pkgio.Listing, resolved: list[Resolved]) -> set[str]:
    """The listed kustomization files of the kustomize-image promotions' folders (the engine's rule)."""
    found: set[str] = set()
    for r in resolved:
        if r.promotion.strategy != "kustomize-image" or r.scope is None:
            continue
        folder = posixpath.normpath(r.scope.replace(os.sep, "/"))
        if os.path.isabs(r.scope) or folder == ".." or folder.startswith("../"):
            raise PromoteError(f"refusing {r.scope}: the kustomization path leaves {root}")
        found.update(listed.rel for listed in listing.files if is_kustomization_in(listed.rel, r.scope))
    return found


def _with_kustomizations(root: str, files: list[ScreenedFile], rels: set[str]) -> list[ScreenedFile]:
    """Add the kustomization files of kustomize-image promotions (they need no marker)."""
    have = {f.rel for f in files}
    extra = [read_one(root, rel) for rel in sorted(rels - have)]
    return sorted(files + extra, key=lambda f: f.rel)
