"""``krm-merge promote DIR``: one or many promotions applied to files, in place, for a CI job.

    krm-merge promote DIR [--set NS:PIPELINE:ENV=VALUE]... [--image-policy NS:NAME=IMAGE_REF]...
                          [--kustomize-image DIR:NAME=IMAGE_REF]... [--environment E]
                          [--report json|markdown FILE] [--dry-run] [--allow-no-match] [--skip-unreadable]
                          [--pull-request [--branch T] [--base B] [--remote R] [--forge F] [--forge-api URL]
                                          [--forge-repo O/N] [--label L]... [--reviewer U]... [--secrets-dir DIR]]
    krm-merge promote DIR --pipeline NS/NAME (--environment E | --from-environment E) --value V
    krm-merge promote DIR --image-policy NS:NAME --value IMAGE[:TAG][@DIGEST]

The command builds its inputs from files and runs the promote mode's engine
(:mod:`krm_merge.promote.engine`) on them: only files whose bytes contain a marker key (or
the Pipeline API group, to find Pipelines) are decoded and parsed, plus the kustomization
files of ``--kustomize-image``.  A changed file differs from the original only in the set
scalars (and, for kustomize images, the added entry lines).  A marked file that is not
UTF-8 or not valid YAML is an error (a warning and skipped with ``--skip-unreadable``).  All files are written at once or none.  What the run
did is one report of typed outcomes (each field set, each file skipped, each error), rendered
by :mod:`krm_merge.outcomes.render`: lines on stderr, ``--results``, ``--report``.
With ``--pull-request`` the change then goes up for review (:mod:`krm_merge.commands.pull_request`):
checked and committed before the write, pushed and opened as a pull request after it.
Exit code 0 when fields were set (or already current, or nothing matched with
``--allow-no-match``), 1 on any error, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import glob
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from krm_merge import txn
from krm_merge.change.settings import SettingsError
from krm_merge.commands.base import command_parser
from krm_merge.commands.pull_request import PROMOTE_BRANCH, PullRequestStep, add_options, promote_step, settings_from_args
from krm_merge.errors import KrmMergeError
from krm_merge.krm.pkgio import ChangeSet
from krm_merge.krm.results import Field, File, Result
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import FileSkipped, Message, SkipReason, message
from krm_merge.outcomes.kinds import Outcome as Said
from krm_merge.outcomes.report import Report, State
from krm_merge.promote.errors import PromoteError, UnreadableYaml
from krm_merge.promote.report import field_sets, subject
from krm_merge.promote.files import (
    Screen, ScreenedFile, check_all, decode, diff_all, encode, planned_write, read_one, screen, write_all)
from krm_merge.promote.markers import IMAGEPOLICY_KEY, PROMOTION_KEY
from krm_merge.promote.pipeline import PIPELINE_GROUP, PipelineRef, find_pipeline
from krm_merge.promote.request import (
    KUSTOMIZATION_NAMES, Promotion, RequestError, Resolved, no_match_messages, parse_image_policy,
    parse_kustomize_image, parse_set, promotion_from_spec, resolve)
from krm_merge.promote.units import Unit, empty_outcome
from krm_merge.yaml.load import collecting_duplicate_keys, load_all_data

if TYPE_CHECKING:
    from krm_merge.promote.units import Outcome

PROG = "krm-merge promote"


class UsageError(PromoteError):
    """Options that do not fit together (exit code 2, like argparse's own errors)."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Set the fields marked for GitOps promotions, in place, in one run.", EXAMPLES,
                          _arguments)


EXAMPLES = ("krm-merge promote clusters/ --image-policy flux-system:app=ghcr.io/org/app:1.2",
            "krm-merge promote . --set default:podinfo:prod=6.2.1 --dry-run",
            "krm-merge promote . --pipeline default/podinfo --from-environment staging \\\n"
            "      --value 6.2.1 --pull-request")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the directory to search (recursively) for marked YAML files")
    p.add_argument("--set", action="append", default=[], metavar="NS:PIPELINE:ENV=VALUE",
                   help='set {"$promotion": "NS:PIPELINE:ENV"} markers (repeatable)')
    p.add_argument("--image-policy", action="append", default=[], metavar="NS:NAME=IMAGE_REF",
                   help='set {"$imagepolicy": "NS:NAME[:tag|:name|:digest]"} markers (repeatable); '
                        "NS:NAME alone takes --value")
    p.add_argument("--kustomize-image", action="append", default=[], metavar="DIR:NAME=IMAGE_REF",
                   help="set images[name=NAME] in DIR/kustomization.yaml (DIR may use {environment.name})")
    p.add_argument("--pipeline", metavar="NS/NAME", help="Pipeline of a single promotion (with --value)")
    env = p.add_mutually_exclusive_group()
    env.add_argument("--environment", metavar="ENV", help="the environment to promote to")
    env.add_argument("--from-environment", metavar="ENV",
                     help="the environment promoted from; the target is the next one in the Pipeline")
    p.add_argument("--value", help="the new value of a single --pipeline or --image-policy promotion")
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"), help=render.REPORT_HELP)
    # A report is output the caller asked for (a pull request body), not a change to the
    # repository: a dry run still writes it, so a CI job can preview a release with its report.
    p.add_argument("--dry-run", action="store_true",
                   help="print a unified diff (unless a --report takes stdout); change no file under DIR "
                        "(a --report FILE is still written)")
    p.add_argument("--allow-no-match", action="store_true", help="exit 0 when a promotion finds no field")
    p.add_argument("--skip-unreadable", action="store_true",
                   help="warn about and skip a marked file that is not valid YAML or not UTF-8 (default: an error, "
                        "exit 1)")
    add_options(p, default_branch=PROMOTE_BRANCH.replace("{promotion}", "{namespace}-{pipeline}-{environment}"))
    p.add_argument("--secrets-dir", metavar="DIR",
                   help="with --pull-request and a Pipeline whose promotion names a secretRef: its token is "
                        "DIR/<namespace>/<name>/<key> (default $KRM_MERGE_SECRETS_DIR)")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    arg_parser = parser()
    args = arg_parser.parse_args(argv)
    if args.report and args.report[0] not in render.FORMATS:
        arg_parser.error(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    try:
        args.pull_request_settings = settings_from_args(args)
    except SettingsError as err:
        arg_parser.error(str(err))
    if args.secrets_dir and not args.pull_request:
        arg_parser.error("--secrets-dir: goes with --pull-request")
    report = Report("promote", args.dir)

    def body() -> Iterator[str]:
        try:
            return _locked_main(args, report)
        except UsageError as err:
            arg_parser.error(err.message)  # exits 2: not a result

    # Only the document asked for goes to stdout: a report to '-', else a dry run's diff.
    diff = report.guard(body, describe=_describe) or ()
    return render.finish(report, results_file=args.results, report_to=args.report, document=diff, quiet=args.quiet)


def _describe(err: KrmMergeError) -> str:
    return str(err) if isinstance(err, PromoteError) else err.one_line()


def _locked_main(args: argparse.Namespace, report: Report) -> Iterator[str]:
    # Held from the screen to the write: a second writer is refused, not silently overwritten.
    with txn.PackageLock(args.dir, PROG, read_only=args.dry_run) as lock:
        report.extend(message(text, "warning", args.dir) for text in lock.messages)
        return _main(args, report)


def promotions_from_args(args: argparse.Namespace) -> list[Promotion]:
    """The promotions the options ask for (UsageError for malformed options)."""
    try:
        return _promotions_from_args(args)
    except RequestError as err:
        raise UsageError(err.message) from None


def _promotions_from_args(args: argparse.Namespace) -> list[Promotion]:
    promotions: list[Promotion] = [parse_set(text) for text in args.set]
    bare_policies = [text for text in args.image_policy if "=" not in text]
    promotions.extend(parse_image_policy(text) for text in args.image_policy if "=" in text)
    if args.pipeline is not None or bare_policies:
        if args.value is None:
            raise UsageError("--value is needed with --pipeline or --image-policy NS:NAME")
        if len(bare_policies) + (args.pipeline is not None) > 1:
            raise UsageError("--value serves one --pipeline or --image-policy NS:NAME; use --set/--image-policy "
                               "NS:NAME=IMAGE_REF for several")
        if args.pipeline is not None:
            if not args.environment and not args.from_environment:
                raise PromoteError("give --environment or --from-environment")
            promotions.append(promotion_from_spec({"pipeline": args.pipeline, "environment": args.environment,
                                                   "fromEnvironment": args.from_environment, "value": args.value}))
        else:
            if args.from_environment or (args.environment and not args.kustomize_image):
                raise PromoteError("--image-policy takes no environment")
            promotions.append(promotion_from_spec({"imagePolicy": bare_policies[0], "value": args.value}))
    elif args.value is not None:
        raise UsageError("--value goes with --pipeline or --image-policy NS:NAME")
    promotions.extend(parse_kustomize_image(text, args.environment) for text in args.kustomize_image)
    if not promotions:
        raise UsageError("nothing to promote: give --set, --image-policy, --kustomize-image or --pipeline")
    return promotions


def _main(args: argparse.Namespace, report: Report) -> Iterator[str]:
    """Plan the promotions and write them (or not: the report's state says); returns a dry run's diff."""
    root = args.dir
    if not os.path.isdir(root):
        raise PromoteError(f"{root} is not a directory")
    promotions = promotions_from_args(args)
    run = plan(root, promotions, skip_unreadable=args.skip_unreadable)
    report.subject = subject([r.rendered for r in run.resolved])
    report.extend(run.outcomes)
    if any(o.severity == "error" for o in run.outcomes):
        report.state = State.NOT_WRITTEN
        return iter(())
    report.extend(field_sets(run.changes))
    missing = no_match_messages(run.resolved, run.outcome.matched)
    if args.allow_no_match:
        report.extend(message(text) for text in missing)
    else:
        report.extend(message(f"{text} (use --allow-no-match to accept this)", "error") for text in missing)
        if missing:
            report.state = State.NOT_WRITTEN
            return iter(())
    matched = sum(run.outcome.matched)
    if not run.changes and matched:
        report.add(message(f"{matched} field(s) already at the promoted value(s); nothing to change", "info"))
    report.add_changes(run.writes)
    step = _pull_request_step(args, run, report)
    # Checked as the write checks it: a dry run refuses what the write would, a refused write gets no commit.
    diff: Iterator[str] = iter(())
    if args.dry_run:
        diff = diff_all(root, run.writes)
    elif step is not None:
        check_all(root, run.writes)
    if step is not None:
        step.before_write(run.writes.writes, report.as_written, dry_run=args.dry_run)
    if args.dry_run:
        report.state = State.DRY_RUN
        return diff
    write_all(root, run.writes)
    report.state = State.WRITTEN
    if step is not None:
        step.publish()
    return iter(())


def _pull_request_step(args: argparse.Namespace, run: _Run, report: Report) -> PullRequestStep | None:
    """The ``--pull-request`` step of this run (None without the option)."""
    if args.pull_request_settings is None:
        return None
    return promote_step(report, args.pull_request_settings, args.dir, run.resolved, run.find_pipeline,
                        secrets_dir=args.secrets_dir)


class _Run:
    """What one run found and plans to write."""

    def __init__(self, resolved: list[Resolved], outcome: Outcome,
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None]) -> None:
        self.resolved = resolved
        self.outcome = outcome
        self.find_pipeline = find_pipeline
        self.writes = ChangeSet()
        self.changes: list[tuple[str, Any]] = []
        self.outcomes: list[Said] = []  # files skipped, malformed markers, duplicate keys, errors


def plan(root: str, promotions: list[Promotion], skip_unreadable: bool = False) -> _Run:
    """Read the files the promotions can touch, run the engine, plan the writes.

    A marked file that is not valid YAML, or not UTF-8, is an error: skipping it would let a
    release pass with one of its promotions missing.  ``skip_unreadable`` makes it a warning.
    """
    keys = sorted({PROMOTION_KEY for p in promotions if p.pipeline is not None and p.strategy == "markers"}
                  | {IMAGEPOLICY_KEY for p in promotions if p.image_policy is not None})
    needs_pipeline = any(p.pipeline is not None for p in promotions)
    tokens = tuple(k.encode() for k in keys) + ((PIPELINE_GROUP.encode(),) if needs_pipeline else ())
    screened_tree = screen(root, tokens) if tokens else Screen([], [])
    files = screened_tree.files
    finder = _pipeline_finder(files)
    resolved = resolve(promotions, finder)
    kustomizations = _kustomization_rels(root, resolved)
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
    run = _Run(resolved, outcome, finder)
    run.outcomes.extend(found)
    for unit, err in outcome.errors:
        rel = unit.path or ""
        if isinstance(err, UnreadableYaml) and skip_unreadable:
            run.outcomes.append(FileSkipped(rel, SkipReason.INVALID_YAML, _where(err)))
        elif isinstance(err, UnreadableYaml):
            where = rel + (f":{err.line}" if err.line else "")
            run.outcomes.append(message(f"{where}: {err.message} (use --skip-unreadable to skip it)", "error", rel))
        else:
            run.outcomes.append(_error(err.located(file=rel)))
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


def _kustomization_rels(root: str, resolved: list[Resolved]) -> set[str]:
    found: set[str] = set()
    for r in resolved:
        if r.promotion.strategy != "kustomize-image" or r.scope is None:
            continue
        for name in KUSTOMIZATION_NAMES:
            for path in glob.glob(os.path.join(glob.escape(root), r.scope, name)):
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel.startswith("../") or os.path.isabs(r.scope):
                    raise PromoteError(f"refusing {r.scope}: the kustomization path leaves {root}")
                found.add(rel)
    return found


def _with_kustomizations(root: str, files: list[ScreenedFile], rels: set[str]) -> list[ScreenedFile]:
    """Add the kustomization files of kustomize-image promotions (they need no marker)."""
    have = {f.rel for f in files}
    extra = [read_one(root, rel) for rel in sorted(rels - have)]
    return sorted(files + extra, key=lambda f: f.rel)


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
