"""Promote on a tree of files: the engine of the ``promote`` command (``krm-merge promote DIR``).

The command builds promotions from its options and hands them here: :func:`plan` lists
the tree once (:func:`krm_merge.promote.files.screen`, on the package lister), decodes
and parses only the files whose bytes hold a marker key (or the Pipeline API group, to
find Pipelines) plus the kustomization files of kustomize-image promotions, runs the
engine (:mod:`krm_merge.promote.engine`) on them and plans the writes;
:func:`run_files` turns that into typed outcomes on the command's report and writes
every file or none (a dry run's diff instead).  A changed file differs from the original
only in the set scalars (and, for kustomize images, the added entry lines).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator

from krm_merge.errors import KrmMergeError
from krm_merge.krm import pkgio
from krm_merge.krm.pkgio import ChangeSet
from krm_merge.krm.results import Field, File, Result
from krm_merge.outcomes.kinds import FileSkipped, Message, SkipReason, message
from krm_merge.outcomes.kinds import Outcome as Said
from krm_merge.outcomes.report import Report, State
from krm_merge.promote.errors import PromoteError, UnreadableYaml
from krm_merge.promote.files import (
    Screen, ScreenedFile, check_all, decode, diff_all, encode, list_tree, planned_write, read_one, screen, write_all)
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PIPELINE_GROUP, PipelineRef, find_pipeline
from krm_merge.promote.report import field_sets, subject
from krm_merge.promote.request import Promotion, Resolved, is_kustomization_in, no_match_messages, resolve
from krm_merge.promote.units import Unit, empty_outcome
from krm_merge.yaml.load import collecting_duplicate_keys, load_all_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from krm_merge.promote.units import Outcome


WriteHook = Callable[["FileRun"], "bool | None"]
"""A hook around the write; ``before_write`` returns True when it committed the change elsewhere (``--pull-request``:
on the pull request's branch) and the files are to stay as they are."""


def run_files(root: str, promotions: list[Promotion], report: Report, *, skip_unreadable: bool = False,
              allow_no_match: bool = False, dry_run: bool = False, before_write: WriteHook | None = None,
              after_write: WriteHook | None = None) -> Iterator[str]:
    """Plan ``promotions`` on the files under ``root`` and write them (or not: the report's state says).

    What the run found and did goes into ``report`` as typed outcomes; the
    return value is a dry run's unified diff (empty otherwise).
    ``before_write(run)`` runs once the writes are planned and checked as the
    write checks them, before they are written (or shown, with ``dry_run``):
    what it raises stops the run with nothing written, and when it returns True
    (``--pull-request`` committed the change on its branch) the files stay as they
    are; ``after_write(run)`` runs after the write (``--pull-request`` publishes there).
    """
    run = plan(root, promotions, skip_unreadable=skip_unreadable)
    report.subject = subject([r.rendered for r in run.resolved])
    report.extend(run.outcomes)
    if any(o.severity == "error" for o in run.outcomes):
        report.state = State.NOT_WRITTEN
        return iter(())
    report.extend(field_sets(run.changes))
    missing = no_match_messages(run.resolved, run.outcome.matched)
    if allow_no_match:
        report.extend(message(text) for text in missing)
    else:
        report.extend(message(f"{text} (use --allow-no-match to accept this)", "error") for text in missing)
        if missing:
            report.state = State.NOT_WRITTEN
            return iter(())
    matched = sum(run.outcome.matched)
    if not run.changes and matched:
        report.add(message(f"{matched} field(s) already at the promoted value(s): none to set", "info"))
    report.add_changes(run.writes)
    # Checked as the write checks it: a dry run refuses what the write would, a refused write gets no commit.
    diff: Iterator[str] = iter(())
    if dry_run:
        diff = diff_all(root, run.writes)
    elif before_write is not None:
        check_all(root, run.writes)
    kept = before_write(run) if before_write is not None else False
    if dry_run:
        report.state = State.DRY_RUN
        return diff
    if not kept:
        write_all(root, run.writes)
    report.state = State.WRITTEN
    if after_write is not None:
        after_write(run)
    return iter(())


class FileRun:
    """What one run found and plans to write."""

    def __init__(self, resolved: list[Resolved], outcome: Outcome,
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None]) -> None:
        self.resolved = resolved
        self.outcome = outcome
        self.find_pipeline = find_pipeline
        self.writes = ChangeSet()
        self.changes: list[tuple[str, Any]] = []
        self.outcomes: list[Said] = []  # files skipped, malformed markers, duplicate keys, errors


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
    finder = _pipeline_finder(files)
    resolved = resolve(promotions, finder)
    kustomizations = _kustomization_rels(root, listing, resolved)
    files = _with_kustomizations(root, files, kustomizations)
    units: list[tuple[str, str, Any]] = []
    found: list[Said] = [FileSkipped(link.rel, SkipReason.BROKEN_LINK, f"to {link.target}")
                         for link in screened_tree.broken_links]
    key_bytes = tuple(k.encode() for k in keys)
    for screened in files:
        if screened.rel in kustomizations or any(k in screened.data for k in key_bytes):
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


def pipeline_finder(root: str) -> Callable[[PipelineRef], dict[str, Any] | None]:
    """Look Pipelines up in the tree under ``root`` before any promotion is known (``promote --event``).

    One more listing of the tree than :func:`plan` makes: the event's promotion needs the Pipeline first.
    """
    return _pipeline_finder(screen(list_tree(root), (PIPELINE_GROUP.encode(),)).files)


def _pipeline_finder(files: list[ScreenedFile]) -> Callable[[PipelineRef], dict[str, Any] | None]:
    """Look Pipelines up among the files that may hold one; each such file is read once."""
    group = PIPELINE_GROUP.encode()
    candidates = [screened for screened in files if group in screened.data]
    documents: list[list[Any]] = []

    def find(ref: PipelineRef) -> dict[str, Any] | None:
        if candidates and not documents:
            documents.extend(_documents(screened) for screened in candidates)
        for docs in documents:
            found = find_pipeline(docs, ref)
            if found is not None:
                return found
        return None

    return find


def _documents(screened: ScreenedFile) -> list[Any]:
    try:
        return load_all_data(decode(screened.data)[0], screened.rel)
    except (KrmMergeError, UnicodeDecodeError, RecursionError):
        return []  # reported when it also holds markers; otherwise not ours
