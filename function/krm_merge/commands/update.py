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
(:mod:`krm_merge.change.stage`): checked and committed before the write, pushed and opened after it.
The run is the change pipeline's (:func:`krm_merge.change.pipeline.run_command`): this module parses and calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

TYPE_CHECKING = False
if TYPE_CHECKING:  # the plain form `update PKG[@REF]` is read without argparse (see parse_args)
    from typing import Any
    import argparse

from krm_merge.change.pipeline import Output, run_command
from krm_merge.change.settings import SettingsError, Target
from krm_merge.commands.pull_request_options import OPTION_DEFAULTS, UPDATE_BRANCH, add_options, settings_from_args
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.document import STRATEGIES, Strategy
from krm_merge.merge3.policy import POLICIES, ConflictPolicy
from krm_merge.outcomes import render
from krm_merge.outcomes.report import CONFLICTS_LEFT, Report
from krm_merge.update.git import UpdatePlanner
from krm_merge.update.result import FILES_POLICIES, FilesPolicy, UpdateRequest
from krm_merge.upstream.git import split_package_ref

PROG = "krm-merge update"
FILE_POLICIES = FILES_POLICIES


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
        # The fleet form, given the options read here (nothing parsed twice): its worker pool, sharding and
        # report load only with --ref, never on the plain `update PKG[@REF]`.
        from krm_merge.commands import fleet

        return fleet.run(args, request_from(args, package="", ref=args.ref))
    if (args.origin is None) != (args.upstream is None):
        return render.usage_error(PROG, "--origin and --upstream go together")
    if args.report and args.report[0] not in render.FORMATS:
        return render.usage_error(PROG, f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        return render.usage_error(PROG, str(err))
    try:
        request = request_from(args)
    except KrmMergeError as err:  # a bad PKG@REF: an error of the package, exit 1, said after the destinations
        return run_command(err, Report("update", args.package), Output(args.results, args.report, args.quiet))
    target = None if settings is None else Target(settings, request.package, DEFAULT_BRANCH,
                                                  {"ref": request.ref or "upstream"})
    return run_command(UpdatePlanner(request), Report("update", args.package),
                       Output(args.results, args.report, args.quiet), target=target, dry_run=args.dry_run)


def request_from(args: argparse.Namespace | SimpleNamespace, *, package: str | None = None,
                 ref: str | None = None) -> UpdateRequest:
    """The update asked for by the command line, its policies parsed into their types once.

    ``package`` and ``ref`` (a fleet update's package and its ``--ref``) stand for ``PKG[@REF]``; else
    ``PKG@REF`` is split (not with ``--origin``: the directory is taken as given).
    """
    if package is None:
        package, ref = (args.package, None) if args.origin is not None else split_package_ref(args.package)
    return UpdateRequest(
        str(package), ref, args.origin, args.upstream if args.origin is not None else None,
        Strategy(args.strategy) if args.strategy is not None else None, ConflictPolicy(args.conflicts),
        FilesPolicy(args.files), args.fallback_keys, not args.no_recursive, args.accept_upstream_strategy,
        args.dry_run)


__all__ = ["CONFLICTS_LEFT", "DEFAULTS", "FILE_POLICIES", "MAX_JOBS", "POLICIES", "main", "parse_args", "parser",
           "request_from"]
