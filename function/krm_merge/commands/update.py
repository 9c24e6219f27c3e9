"""``krm-merge update PKG[@REF]``: ``kpt pkg update`` for packages fetched with ``kpt pkg get``.

The origin (``upstreamLock``'s commit) and upstream (``REF``, default
``upstream.git.ref``) versions are fetched with the user's git
(:mod:`krm_merge.upstream.git`); ``--origin DIR --upstream DIR`` gives them
as plain directories instead.  This module parses the arguments, calls
:mod:`krm_merge.update` (git: :mod:`krm_merge.update.git`; directories:
:mod:`krm_merge.update.planner`) and renders the plan it returns: KRM
resources and Kptfiles are merged by kpt's package rules and strategies,
every other file by kpt's rules (:mod:`krm_merge.update.other_files`).
After a git update the root Kptfile records the new ``upstream.git.ref``
and ``upstreamLock`` as kpt does.

Origin and upstream are content from elsewhere: they are taken through
:func:`krm_merge.krm.pkgio.check_untrusted` and read in place (no symbolic link
followed, names and sizes checked), and remote subpackages
are followed with cycles refused and depth bounded (docs/security.md).

Writes are one transaction of :mod:`krm_merge.txn` under the package lock
(all-or-nothing even when the process is killed).  Paths never leave the
package and symlinks are never written through.  Nothing is written with ``--dry-run`` or when a conflict is found
under ``--conflicts fail``.  With ``--pull-request`` the change then goes up for review
(:mod:`krm_merge.commands.pull_request`): checked and committed before the write, pushed and opened after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:  # the plain form `update PKG[@REF]` is read without argparse (see parse_args)
    from typing import Any
    import argparse

    from krm_merge.commands.pull_request import PullRequestStep

from krm_merge import registry, txn
from krm_merge.change.settings import Settings, SettingsError
from krm_merge.commands.pull_request_options import OPTION_DEFAULTS, UPDATE_BRANCH, add_options, settings_from_args
from krm_merge.kptfile.document import STRATEGIES
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import ConflictsLeft, message
from krm_merge.outcomes.report import CONFLICTS_LEFT, Report, State
from krm_merge.records import Record
from krm_merge.update import ledger
from krm_merge.update.git import GitVersions, plan_git_update
from krm_merge.update.plan import UpdatePlan, apply_plan
from krm_merge.upstream.git import split_package_ref
from krm_merge.yaml.load import collecting_duplicate_keys

PROG = "krm-merge update"
POLICIES = ("upstream-wins", "local-wins", "fail", "mark")
FILE_POLICIES = ("keep-local", "merge")


MAX_JOBS = 1024
"""The most packages a fleet update updates at once (``--jobs``): each is a worker process."""
DEFAULT_BRANCH = UPDATE_BRANCH
"""The pull request's branch (``{package}``: the package's path in the repository; ``{ref}``: the upstream ref)."""
DEFAULTS: dict[str, Any] = {
    "origin": None, "upstream": None, "strategy": None, "conflicts": "upstream-wins", "files": "keep-local",
    "fallback_keys": None, "no_recursive": False, "accept_upstream_strategy": False, "dry_run": False,
    "results": None, "report": None, "quiet": False, **OPTION_DEFAULTS,
    # the fleet form (update ROOT... --upstream REPO[/DIRECTORY] --ref REF): krm_merge.commands.fleet
    "roots": (), "ref": None, "match": None, "jobs": None, "shard": None, "shard_count": None,
    "pull_request_per": None,
}
"""Every option's value when it is not given: the parser's defaults and the plain form's, one table."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    # Imported here: the plain form `update PKG[@REF]` (parse_args) never loads the command base and argparse,
    # whose import and parser cost ~3.5 ms of a small update's ~85 ms (issue 24).
    from krm_merge.commands.base import command_parser, number

    return command_parser(PROG, "3-way update of a local package copy (kpt pkg update).", EXAMPLES,
                          lambda p: _arguments(p, number))


EXAMPLES = ("krm-merge update apps/podinfo@v1.2.0",
            "krm-merge update apps/podinfo --origin old/ --upstream new/ --dry-run",
            "krm-merge update clusters/ --upstream https://github.com/org/blueprints/app \\\n"
            "      --ref v2.0.0 --pull-request  # a fleet update")


def _arguments(p: argparse.ArgumentParser, number: Callable[[int, int | None], Callable[[str], int]]) -> None:
    """The command's options; ``number``: the command base's type of an option taking a number (loaded with it)."""
    p.add_argument("package", metavar="PKG[@REF]",
                   help="the local package directory (updated in place); @REF: the upstream branch, tag or commit "
                        "(default: upstream.git.ref of its Kptfile); with --ref: a ROOT of a fleet update")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="with --ref: more roots of a fleet update")
    p.add_argument("--origin", metavar="DIR", help="the upstream version local was fetched from (a directory; with --upstream)")
    p.add_argument("--upstream", metavar="DIR | REPO[/DIRECTORY]",
                   help="the new upstream version (a directory; with --origin); with --ref: the repository "
                        "(and package directory) whose consumers a fleet update moves")
    fleet = p.add_argument_group(
        "fleet update", "update ROOT... --upstream REPO[/DIRECTORY] --ref REF: every package under the roots whose "
        "Kptfile's upstream.git names that repository (and directory), each in its own transaction (docs/fleet.md); "
        "every local edit overwritten by upstream or left marked is named; exit 0 all clean, 3 a local edit "
        "overwritten or conflicts left, 1 a package failed, 4 no package selected")
    fleet.add_argument("--ref", metavar="REF", help="the branch, tag or commit to move every selected package to")
    fleet.add_argument("--match", metavar="GLOB", help="only packages whose path below its root matches GLOB")
    fleet.add_argument("--jobs", metavar="N", type=number(1, MAX_JOBS),
                       help="packages updated at once (default: the number of CPUs)")
    fleet.add_argument("--shard", metavar="I/N", help="only share I (0 to N-1) of N of the selected packages "
                       "(default: JOB_COMPLETION_INDEX of KRM_MERGE_SHARDS or --shard-count, when set)")
    # at most fleet.shard.MAX_SHARDS, checked there (the fleet's modules load only with --ref)
    fleet.add_argument("--shard-count", metavar="N", type=number(1, None),
                       help="the number of shards, with the index from JOB_COMPLETION_INDEX (default: KRM_MERGE_SHARDS)")
    p.add_argument("--strategy", choices=STRATEGIES, metavar="STRATEGY",  # the choices, in the help: 80 columns
                   help=f"{', '.join(STRATEGIES)} (default: upstream.updateStrategy of the Kptfile, else "
                        "resource-merge)")
    p.add_argument("--conflicts", choices=POLICIES,
                   help="who wins a field changed on both sides (mark: local's value stays with a "
                        "'# krm-merge:conflict' comment; exit 3; see krm-merge conflicts/resolve)")
    p.add_argument("--files", choices=FILE_POLICIES,
                   help="non-KRM files changed on both sides: keep local's (kpt) or merge them as git merge-file does "
                        "(diff3 markers where both changed the same lines, exit 3; binary files: local kept)")
    p.add_argument(
        "--fallback-keys",
        metavar="K1,K2",
        help="element keys for lists without schema (default: kpt's documented list; '' = none, like kpt)",
    )
    p.add_argument("--no-recursive", action="store_true",
                   help="do not update remote subpackages (their own upstream.git) after the package (kpt always does)")
    p.add_argument("--accept-upstream-strategy", action="store_true",
                   help="update a remote subpackage by the updateStrategy upstream gives it now (kpt's rule); by "
                        "default the one of your own Kptfile is used and kept")
    p.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"),
                   help="write an update report: FORMAT json or markdown ('-' for stdout); also with --dry-run")
    add_options(p, default_branch=DEFAULT_BRANCH)
    fleet.add_argument("--pull-request-per", choices=("repo", "package"),
                       help="with --pull-request: one branch and pull request per consumers' repository (default) "
                            "or per package")
    p.set_defaults(**DEFAULTS)


def parse_args(argv: list[str]) -> argparse.Namespace | SimpleNamespace:
    """The command line read: ``PKG[@REF]`` alone (the usual form) directly, anything else by :func:`parser`.

    A single argument that is not an option is what the parser would take as
    the package with every default (tests/cli checks that both agree).
    """
    if len(argv) == 1 and not argv[0].startswith("-"):
        return SimpleNamespace(package=argv[0], **DEFAULTS)
    p = parser()
    args = p.parse_args(argv)
    if args.roots and args.ref is None:
        p.error("several packages are a fleet update: give --upstream REPO[/DIRECTORY] --ref REF")
    return args


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parse_args(argv)
    if args.ref is not None:
        # The fleet form, loaded by name only when used (the registry's one lazy edge): the
        # plain `update PKG[@REF]` never imports its worker pool, sharding or report.
        fleet = registry.load_command("fleet")
        assert fleet is not None, "krm_merge.commands.fleet is part of krm-merge"
        return fleet.main(argv)
    if (args.origin is None) != (args.upstream is None):
        return render.usage_error(PROG, "--origin and --upstream go together")
    if args.report and args.report[0] not in render.FORMATS:
        return render.usage_error(PROG, f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        return render.usage_error(PROG, str(err))
    report = Report("update", args.package)
    refused = render.refuse_destinations(report, args.results, args.report, quiet=args.quiet)
    if refused is not None:  # before the package is read or written, dry runs alike
        return refused
    done = update_package(args, report, settings=settings)
    # Only the document asked for goes to stdout: a report to '-', else a dry run's diff.
    return render.finish(report, results_file=args.results, report_to=args.report, quiet=args.quiet,
                         document=done.diff if done is not None else ())


class Updated(Record):
    """What one package's update planned, and a dry run's diff (made file by file as it is printed; empty when
    the plan was written or refused)."""

    plan: UpdatePlan
    diff: Iterator[str]


def update_package(args: argparse.Namespace | SimpleNamespace, report: Report, *, settings: Settings | None = None,
                   versions: GitVersions | None = None, recovered: list[str] | None = None) -> Updated | None:
    """One package updated as ``krm-merge update`` does it (lock, plan, write), what it did in ``report``; its plan
    and a dry run's diff (None when an error stopped it: the error is in ``report``).

    ``settings``: ``--pull-request``'s.  ``versions`` says where the git
    versions come from (a fleet update's shared folders; default: this
    update's own fetch).  ``args.ref``, when set, is the ref of
    ``args.package`` (which then holds no ``@REF``).  ``recovered`` receives
    what the package lock said of an interrupted write it found (finished,
    rolled back, or only said by a dry run), for a fleet update to say too.
    """
    return report.guard(lambda: _locked_update(args, report, settings, versions, recovered))


def _package_ref(args: argparse.Namespace | SimpleNamespace) -> tuple[str, str | None]:
    """The package directory, and the upstream ref asked for (None: the Kptfile's, or --origin/--upstream)."""
    if args.origin is not None:
        return str(args.package), None
    if args.ref:  # a fleet update's package
        return str(args.package), str(args.ref)
    return split_package_ref(args.package)


def _locked_update(args: argparse.Namespace | SimpleNamespace, report: Report, settings: Settings | None,
                   versions: GitVersions | None, recovered: list[str] | None = None) -> Updated:
    """Plan and write (or not) under the package lock: the plan, and a dry run's diff (empty otherwise)."""
    package, ref = _package_ref(args)
    report.target = package
    report.subject = _subject(package, ref)
    step = None if settings is None else _pull_request_step(report, settings, package, ref)
    # Held from the read to the write: a second writer is refused, not silently overwritten.
    with txn.PackageLock(package, PROG, read_only=args.dry_run) as lock:
        report.extend(message(text, "warning") for text in lock.messages)
        if recovered is not None:
            recovered.extend(lock.messages)
        with collecting_duplicate_keys() as duplicates:
            try:
                planned = _plan(args, versions)
                recorded = ledger.record(Path(package), planned)  # the ledger's change joins the plan's (docs/merge.md)
            finally:  # said before the error that stopped the plan, if one did
                # Duplicate mapping keys in any of the three copies: read last-wins (as kubectl), said once each.
                report.extend(message(text, "warning") for text in dict.fromkeys(dup.message() for dup in duplicates))
        report.extend(planned.outcomes)
        report.add_changes(planned.changes)
        return Updated(planned, _write(Path(package), planned, args, report, step, recorded))


def _write(local: Path, plan: UpdatePlan, args: argparse.Namespace | SimpleNamespace, report: Report,
           step: PullRequestStep | None, recorded: int) -> Iterator[str]:
    """Write the plan unless a conflict failed it or it is a dry run; the report's state says which.

    ``recorded``: the conflicts the package's ledger holds once written (this
    update's markers and an earlier update's still there).  The change set is
    checked first as the write checks it (:meth:`ChangeSet.validate`): a dry run
    refuses what the write would, and returns its diff (made file by file as it
    is printed).  With ``--pull-request`` the step checks everything and makes
    its commit (of the planned bytes, worded by the report as the write would
    leave it) in place of the write, then publishes it: the package's files stay
    as they are (docs/pull-requests.md).
    """
    if any(o.severity == "error" for o in plan.outcomes):  # a conflict not merged (--conflicts fail, a rule's fail)
        report.state = State.NOT_WRITTEN
        return iter(())
    diff: Iterator[str] = iter(())
    if args.dry_run:
        diff = plan.changes.diff(local)
    elif step is not None:
        plan.changes.validate(local)  # before the pull request's commit: a refused write gets none
    # What the write leaves for a person: the markers written (a rule's upstream-wins under mark wrote none), the
    # diff3 regions --files merge left (with or without mark), an earlier update's still there.
    regions = sum(1 for entry in plan.marks if entry.kind == ledger.TEXT)
    left = [ConflictsLeft(str(local), recorded, regions, recorded - len(plan.marks), on_branch=step is not None)
            ] if recorded else []
    if step is not None:
        ref = _package_ref(args)[1]

        def written() -> Report:
            report.subject = _subject(step.package_name, ref)  # the package named by its path in the repository
            return report.as_written(*left)

        step.before_write(plan.changes.writes, written, dry_run=args.dry_run)
    if args.dry_run:
        report.state = State.DRY_RUN
        return diff
    if step is None:  # with --pull-request the change is committed on the branch: the files stay as they are
        apply_plan(local, plan)
    report.state = State.WRITTEN
    report.extend(left)
    if step is not None:
        step.publish()
    return iter(())


def _pull_request_step(report: Report, settings: Settings, package: str, ref: str | None) -> PullRequestStep:
    """``--pull-request``'s step for this package (its branch named by the ref asked for)."""
    from krm_merge.commands.pull_request import PullRequestStep

    return PullRequestStep(report, settings, package, branch_template=DEFAULT_BRANCH,
                           placeholders={"ref": ref or "upstream"})


def _subject(package: str, ref: str | None) -> str:
    """What an update was asked for, for its title: ``apps/pkg to v2`` (no ref: the Kptfile's)."""
    return package + (f" to {ref}" if ref else "")


def _plan(args: argparse.Namespace | SimpleNamespace, versions: GitVersions | None) -> UpdatePlan:
    """The update's plan, from git or from ``--origin``/``--upstream`` directories."""
    if args.origin is None:
        path, ref = _package_ref(args)
        return plan_git_update(
            Path(path), ref, strategy=args.strategy, conflicts=args.conflicts, fallback_keys=args.fallback_keys,
            recursive=not args.no_recursive, files_policy=args.files, versions=versions,
            accept_upstream_strategy=args.accept_upstream_strategy,
        )
    # The merge (and ruamel with it) is imported only when it runs: a no-op git update stays fast.
    from krm_merge.update.planner import plan_update

    return plan_update(
        Path(args.package), Path(args.origin), Path(args.upstream), strategy=args.strategy or "resource-merge",
        conflicts=args.conflicts, fallback_keys=args.fallback_keys, files_policy=args.files,
    )


__all__ = ["CONFLICTS_LEFT", "DEFAULTS", "FILE_POLICIES", "MAX_JOBS", "POLICIES", "Updated", "main", "parse_args",
           "parser", "update_package"]
