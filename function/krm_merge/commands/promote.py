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
scalars (and, for kustomize images, the added entry lines).  Files that are not UTF-8 are
skipped with a warning; a marked file that is not valid YAML is an error (a warning and
skipped with ``--skip-unreadable``).  All files are written at once or none.
With ``--pull-request`` the change then goes up for review (:mod:`krm_merge.commands.pull_request`):
checked before the write, committed, pushed and opened as a pull request after it.
Exit code 0 when fields were set (or already current, or nothing matched with
``--allow-no-match``), 1 on any error, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from krm_merge import txn
from krm_merge.change.settings import SettingsError
from krm_merge.commands.pull_request import (
    PROMOTE_BRANCH, PullRequestStep, add_options, change_text, promote_step, settings_from_args)
from krm_merge.commands.reporting import RESULTS_HELP, emit, guarded, resource_ref, write_results
from krm_merge.errors import KrmMergeError
from krm_merge.krm.pkgio import ChangeSet
from krm_merge.krm.results import Field, File, Result, Results
from krm_merge.promote import report
from krm_merge.promote.changes import Change
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.files import (
    ScreenedFile, check_all, decode, diff_all, encode, planned_write, read_one, screen, write_all)
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    # A fixed width keeps argparse from importing shutil (and bz2, lzma) on every run.
    p = _Parser(prog=PROG, description="Set the fields marked for GitOps promotions, in place, in one run.",
                formatter_class=lambda prog: argparse.HelpFormatter(prog, width=100))
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
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"),
                   help="write a change report: FORMAT json or markdown ('-' for stdout)")
    # A report is output the caller asked for (a pull request body), not a change to the
    # repository: a dry run still writes it, so a CI job can preview a release with its report.
    p.add_argument("--dry-run", action="store_true",
                   help="print the changes, a diff and the report; change no file under DIR "
                        "(a --report FILE is still written)")
    p.add_argument("--allow-no-match", action="store_true", help="exit 0 when a promotion finds no field")
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    p.add_argument("--skip-unreadable", action="store_true",
                   help="warn about and skip a marked file that is not valid YAML (default: an error, exit 1)")
    add_options(p, default_branch=PROMOTE_BRANCH.replace("{promotion}", "{namespace}-{pipeline}-{environment}"))
    p.add_argument("--secrets-dir", metavar="DIR",
                   help="with --pull-request and a Pipeline whose promotion names a secretRef: its token is "
                        "DIR/<namespace>/<name>/<key> (default $KRM_MERGE_SECRETS_DIR)")
    return p


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    arg_parser = parser()
    args = arg_parser.parse_args(argv)
    if args.report and args.report[0] not in ("json", "markdown"):
        arg_parser.error(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    try:
        args.pull_request_settings = settings_from_args(args)
    except SettingsError as err:
        arg_parser.error(str(err))
    if args.secrets_dir and not args.pull_request:
        arg_parser.error("--secrets-dir: goes with --pull-request")
    results = Results()

    def body() -> int:
        try:
            return _locked_main(args, results)
        except UsageError as err:
            arg_parser.error(err.message)  # exits 2: not a result

    code = guarded(PROG, body, results, describe=_describe)
    write_results(args.results, results)
    return code


def _describe(err: KrmMergeError) -> str:
    return str(err) if isinstance(err, PromoteError) else err.one_line()


def _locked_main(args: argparse.Namespace, results: Results) -> int:
    # Held from the screen to the write: a second writer is refused, not silently overwritten.
    with txn.PackageLock(args.dir, PROG, read_only=args.dry_run) as lock:
        _say(results, [Result(message, "warning", file=File(args.dir)) for message in lock.messages])
        return _main(args, results)


def _say(results: Results, found: list[Result]) -> None:
    """Add ``found`` to the command's results and write their lines on stderr now (they interleave with stdout)."""
    results.extend(found)
    emit(PROG, found)


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


def _main(args: argparse.Namespace, results: Results) -> int:
    root = args.dir
    if not os.path.isdir(root):
        raise PromoteError(f"{root} is not a directory")
    promotions = promotions_from_args(args)
    run = plan(root, promotions, skip_unreadable=args.skip_unreadable)
    _say(results, run.warnings)
    if run.errors:
        _say(results, [*run.errors, Result("nothing written", "info")])
        return 1
    out = sys.stdout
    # The changes go to stdout once written (or, in a dry run, checked as the write would check them);
    # as results they carry resource, field and file for --results.
    results.extend(change_result(rel, change) for rel, change in run.changes)
    missing = no_match_messages(run.resolved, run.outcome.matched)
    if args.allow_no_match:
        _say(results, [Result(message, "warning") for message in missing])
    else:
        _say(results, [Result(f"{message} (use --allow-no-match to accept this)", "error") for message in missing])
    if missing and not args.allow_no_match:
        _say(results, [Result("nothing written", "info")])
        return 1
    matched = sum(run.outcome.matched)
    if not run.changes and matched:
        out.write(f"{matched} field(s) already at the promoted value(s); nothing to change\n")
    entries = report.entries(run.changes)
    summary = report.summary(entries, [r.promotion for r in run.resolved])
    step = _pull_request_step(args, run, results)
    paths = [w.path for w in run.writes.writes]
    text = change_text("promote", (entries, summary))
    if step is not None:
        try:
            check_all(root, run.writes)  # before the pull request's commit: a refused write gets none
            step.prepare(paths, dry_run=args.dry_run)
            if not args.dry_run:
                step.make_commit(run.writes.writes, text)
        except KrmMergeError:
            _write_report(args, entries, summary, step)  # nothing written; the report says why
            raise
    else:
        _write_report(args, entries, summary, None)  # before the write, as without a pull request
    if args.dry_run:
        diff = diff_all(root, run.writes)
        _print_changes(run.changes)
        out.write(diff)
        out.write(report.to_markdown(entries, summary))
        if step is not None:
            step.preview(paths, text)
            _write_report(args, entries, summary, step)
        return 0
    write_all(root, run.writes)
    _print_changes(run.changes)
    out.write(summary + "\n")
    if step is not None:
        try:
            step.publish()
        finally:  # the report says what became of the pull request, failed or not
            _write_report(args, entries, summary, step)
    return 0


def _print_changes(changes: list[tuple[str, Change]]) -> None:
    """One line per field set: ``FILE:LINE: FIELD: OLD -> NEW``."""
    out = sys.stdout
    for rel, change in changes:
        old = repr(change.old) if change.old is not None else "(added)"
        out.write(f"{rel}:{change.line}: {change.path}: {old} -> {change.new!r}\n")


def _write_report(args: argparse.Namespace, entries: list[report.Entry], summary: str,
                  step: PullRequestStep | None) -> None:
    if args.report:
        report.write(args.report[0], args.report[1], entries, summary, step.report_entry() if step else None)


def _pull_request_step(args: argparse.Namespace, run: _Run, results: Results) -> PullRequestStep | None:
    """The ``--pull-request`` step of this run (None without the option)."""
    if args.pull_request_settings is None:
        return None
    return promote_step(PROG, results, args.pull_request_settings, args.dir, run.resolved, run.find_pipeline,
                        secrets_dir=args.secrets_dir)


def change_result(rel: str, change: Change) -> Result:
    """The info result of one field a promotion set: its resource, field (old and new value) and file."""
    was = f"was {change.old!r}" if change.old is not None else "added"
    by = f" for marker {change.marker!r}" if change.marker else (f" by {change.source}" if change.source else "")
    return Result(f"set {change.path} to {change.new!r} ({was}){by}", "info", resource_ref(change.resource),
                  Field(change.path, change.old, change.new), File(rel, change.doc))


class _Run:
    """What one run found and plans to write."""

    def __init__(self, resolved: list[Resolved], outcome: Outcome,
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None]) -> None:
        self.resolved = resolved
        self.outcome = outcome
        self.find_pipeline = find_pipeline
        self.writes = ChangeSet()
        self.changes: list[tuple[str, Any]] = []
        self.errors = Results()
        self.warnings = Results()


def plan(root: str, promotions: list[Promotion], skip_unreadable: bool = False) -> _Run:
    """Read the files the promotions can touch, run the engine, plan the writes.

    A marked file that is not valid YAML is an error: skipping it silently would let a
    release pass with one of its promotions missing.  ``skip_unreadable`` makes it a warning.
    """
    keys = sorted({PROMOTION_KEY for p in promotions if p.pipeline is not None and p.strategy == "markers"}
                  | {IMAGEPOLICY_KEY for p in promotions if p.image_policy is not None})
    needs_pipeline = any(p.pipeline is not None for p in promotions)
    tokens = tuple(k.encode() for k in keys) + ((PIPELINE_GROUP.encode(),) if needs_pipeline else ())
    files = screen(root, tokens) if tokens else []
    finder = _pipeline_finder(files)
    resolved = resolve(promotions, finder)
    kustomizations = _kustomization_rels(root, resolved)
    files = _with_kustomizations(root, files, kustomizations)
    units: list[tuple[str, str, Any]] = []
    warnings = Results()
    key_bytes = tuple(k.encode() for k in keys)
    for screened in files:
        if screened.rel in kustomizations or any(k in screened.data for k in key_bytes):
            try:
                text, bom = decode(screened.data)
            except UnicodeDecodeError as err:
                warnings.warning(f"{screened.rel}: not UTF-8 text (byte {err.start}); skipped", file=File(screened.rel))
                continue
            units.append((text, screened.rel, (screened, bom)))
    if units:
        # Imported only now: a tree without marked files never loads the engine.
        from krm_merge.promote.engine import promote_units

        with collecting_duplicate_keys() as duplicates:
            outcome = promote_units([Unit(*u) for u in units], resolved)
        warnings.extend(Result(dup.message(), "warning", file=File(dup.what)) for dup in duplicates)
    else:
        outcome = empty_outcome(len(resolved))
    run = _Run(resolved, outcome, finder)
    run.warnings.extend(warnings)
    for unit, err in outcome.errors:
        rel = unit.path or ""
        if err.message.startswith("not valid YAML"):
            where = f"{rel}" + (f":{err.line}" if err.line else "") + f": {err.message}"
            if skip_unreadable:
                run.warnings.warning(f"{where}; skipped", file=File(rel))
            else:
                run.errors.error(f"{where} (use --skip-unreadable to skip it)", file=File(rel))
        else:
            run.errors.append(_error_result(err.located(file=rel)))
    for result in outcome.results:
        screened, bom = result.unit.handle
        for bad in result.malformed:
            run.warnings.warning(f"{screened.rel}:{bad.line}: comment mentions a marker key but {bad.reason}: "
                                 f"{bad.comment.strip()}", file=File(screened.rel))
        if not result.changed:
            continue
        try:
            run.writes.writes.append(planned_write(screened, encode(result.text, bom)))
        except PromoteError as err:
            run.errors.append(_error_result(err.located(file=screened.rel)))
            continue
        run.changes.extend((screened.rel, change) for change in result.changes)
    return run


def _error_result(err: PromoteError) -> Result:
    """An engine error as a result: the command's wording, its file (document index) and field kept."""
    return Result(str(err), "error", field=Field(err.field) if err.field else None,
                  file=File(err.file, err.index or 0) if err.file else None)


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
