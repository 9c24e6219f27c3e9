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
under ``--conflicts fail``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the plain form `update PKG[@REF]` is read without argparse (see parse_args)
    import argparse

from krm_merge import txn
from krm_merge.change.settings import SettingsError
from krm_merge.commands import outcomes
from krm_merge.commands.pull_request import (
    OPTION_DEFAULTS, ChangeText, PullRequestStep, add_options, change_text, settings_from_args)
from krm_merge.commands.reporting import (
    RESULTS_HELP, emit, failure, guarded, update_report, write_report, write_results,
)
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.document import STRATEGIES
from krm_merge.krm.results import Result, Results, labelled_line
from krm_merge.update.git import plan_git_update
from krm_merge.update.plan import COMMAND as PROG
from krm_merge.update.plan import UpdatePlan, apply_plan, render_plan, said
from krm_merge.upstream.git import split_package_ref
from krm_merge.yaml.load import collecting_duplicate_keys
POLICIES = ("upstream-wins", "local-wins", "fail", "mark")
FILE_POLICIES = ("keep-local", "merge")
CONFLICTS_LEFT = 3
"""Exit code of an update under ``--conflicts mark`` that wrote markers: merged, conflicts left to decide."""


DEFAULT_BRANCH = "krm-merge/update/{package}"
"""The pull request's branch (``{package}``: the package's path in the repository; ``{ref}``: the upstream ref)."""
DEFAULTS: dict[str, Any] = {
    "origin": None, "upstream": None, "strategy": None, "conflicts": "upstream-wins", "files": "keep-local",
    "fallback_keys": None, "no_recursive": False, "dry_run": False, "results": None, "report": None,
    **OPTION_DEFAULTS,
}
"""Every option's value when it is not given: the parser's defaults and the plain form's, one table."""


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    # Imported here: the plain form `update PKG[@REF]` (parse_args) never loads argparse, whose
    # import and parser cost ~3.5 ms of a small update's ~85 ms (issue 24).
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(2, f"krm-merge update: error: {message}\n")

    p = _Parser(prog="krm-merge update", description="3-way update of a local package copy (kpt pkg update).")
    p.add_argument("package", metavar="PKG[@REF]",
                   help="the local package directory (updated in place); @REF: the upstream branch, tag or commit "
                        "(default: upstream.git.ref of its Kptfile)")
    p.add_argument("--origin", metavar="DIR", help="the upstream version local was fetched from (a directory; with --upstream)")
    p.add_argument("--upstream", metavar="DIR", help="the new upstream version (a directory; with --origin)")
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="default: upstream.updateStrategy of the Kptfile, else resource-merge")
    p.add_argument("--conflicts", choices=POLICIES,
                   help="who wins a field changed on both sides (mark: local's value stays with a "
                        "'# krm-merge:conflict' comment; exit 3; see krm-merge conflicts/resolve)")
    p.add_argument("--files", choices=FILE_POLICIES,
                   help="non-KRM files changed on both sides: keep local's (kpt) or merge them as git merge-file does "
                        "(diff3 markers where both changed the same lines; binary files: local kept)")
    p.add_argument(
        "--fallback-keys",
        metavar="K1,K2",
        help="element keys for lists without schema (default: kpt's documented list; '' = none, like kpt)",
    )
    p.add_argument("--no-recursive", action="store_true",
                   help="do not update remote subpackages (their own upstream.git) after the package (kpt always does)")
    p.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"),
                   help="write an update report: FORMAT json or markdown ('-' for stdout); also with --dry-run")
    add_options(p, default_branch=DEFAULT_BRANCH)
    p.set_defaults(**DEFAULTS)
    return p


def parse_args(argv: list[str]) -> argparse.Namespace | SimpleNamespace:
    """The command line read: ``PKG[@REF]`` alone (the usual form) directly, anything else by :func:`parser`.

    A single argument that is not an option is what the parser would take as
    the package with every default (tests/cli checks that both agree).
    """
    if len(argv) == 1 and not argv[0].startswith("-"):
        return SimpleNamespace(package=argv[0], **DEFAULTS)
    return parser().parse_args(argv)


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parse_args(argv)
    if (args.origin is None) != (args.upstream is None):
        sys.stderr.write("krm-merge update: error: --origin and --upstream go together\n")
        return 2
    if args.report and args.report[0] not in ("json", "markdown"):
        sys.stderr.write(f"krm-merge update: error: --report FORMAT must be json or markdown, got {args.report[0]!r}\n")
        return 2
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        sys.stderr.write(f"krm-merge update: error: {err}\n")
        return 2
    results = Results()
    args.step = None if settings is None else PullRequestStep(
        PROG, results, settings, _package_dir(args), branch_template=DEFAULT_BRANCH,
        placeholders={"ref": _ref(args) or "upstream"})
    code = guarded(PROG, lambda: _locked_update(args, results), results)
    write_results(args.results, results)
    return code


def _package_dir(args: argparse.Namespace | SimpleNamespace) -> str:
    return str(args.package if args.origin is not None else split_package_ref(args.package)[0])


def _ref(args: argparse.Namespace | SimpleNamespace) -> str | None:
    return None if args.origin is not None else split_package_ref(args.package)[1]


def _locked_update(args: argparse.Namespace | SimpleNamespace, results: Results) -> int:
    package_dir = _package_dir(args)
    # Held from the read to the write: a second writer is refused, not silently overwritten.
    with txn.PackageLock(package_dir, PROG, read_only=args.dry_run) as lock:
        for message in lock.messages:
            _say(results, Result(message, "warning"))
        return _locked_main(args, results)


def _locked_main(args: argparse.Namespace | SimpleNamespace, results: Results) -> int:
    with collecting_duplicate_keys() as duplicates:
        try:
            local, plan = _plan(args)
        finally:  # said before the error that stopped the plan, if one did
            _warn_duplicates(duplicates, results)
    step: PullRequestStep | None = args.step
    code = _finish(local, plan, args, results, step)
    report = update_report(plan, policy=args.conflicts, dry_run=args.dry_run, code=code)
    try:
        if step is not None and code in (0, CONFLICTS_LEFT):
            if args.dry_run:
                step.preview([w.path for w in plan.writes], _text(args, step, report))
            else:
                step.publish()
    finally:  # the report says what became of the pull request, failed or not
        if args.report:
            if step is not None and step.report_entry() is not None:
                report["pullRequest"] = step.report_entry()
            write_report(args.report[0], args.report[1], report)
    return code


def _text(args: argparse.Namespace | SimpleNamespace, step: PullRequestStep, report: dict[str, Any]) -> ChangeText:
    """The commit's and pull request's words: a title naming the package, the ref and the report's counts; the report."""
    ref = _ref(args)
    conflicts = len(report["conflicts"])
    title = (f"krm-merge update {step.package_name}" + (f" to {ref}" if ref else "")
             + f": {len(report['changes'])} file(s) changed" + (f", {conflicts} conflict(s)" if conflicts else ""))
    return change_text("update", (title, report))


def _plan(args: argparse.Namespace | SimpleNamespace) -> tuple[Path, UpdatePlan]:
    """The local package and its update's plan, from git or from ``--origin``/``--upstream`` directories."""
    if args.origin is None:
        path, ref = split_package_ref(args.package)
        return Path(path), plan_git_update(
            Path(path), ref, strategy=args.strategy, conflicts=args.conflicts, fallback_keys=args.fallback_keys,
            recursive=not args.no_recursive, files_policy=args.files,
        )
    # The merge (and ruamel with it) is imported only when it runs: a no-op git update stays fast.
    from krm_merge.update.planner import plan_update

    return Path(args.package), plan_update(
        Path(args.package), Path(args.origin), Path(args.upstream), strategy=args.strategy or "resource-merge",
        conflicts=args.conflicts, fallback_keys=args.fallback_keys, files_policy=args.files,
    )


def _warn_duplicates(duplicates: list[Any], results: Results) -> None:
    """Duplicate mapping keys in any of the three copies: read last-wins (as kubectl), said once each."""
    for message in dict.fromkeys(dup.message() for dup in duplicates):
        _say(results, Result(message, "warning"))


def _say(results: Results, result: Result) -> None:
    """Keep one of the command's own results for ``--results`` and print its line (it names the program)."""
    results.append(result)
    emit(PROG, [result])


def _say_plan(results: Results, plan: UpdatePlan) -> None:
    """Keep the plan's results and print their lines (labelled by what they are, without the program)."""
    for result in said(plan):
        results.append(result)
        sys.stderr.write(labelled_line(result) + "\n")


def _finish(local: Path, plan: UpdatePlan, args: argparse.Namespace | SimpleNamespace, results: Results,
            step: PullRequestStep | None = None) -> int:
    conflicts, dry_run = args.conflicts, args.dry_run
    _say_plan(results, plan)
    failed = plan.conflicts if conflicts == "fail" else outcomes.decided(plan.outcomes, "none")  # a rule's fail
    if failed:
        _say(results, Result(f"{failed} conflicting field(s); nothing written", "error"))
        return 1
    diff = ""
    try:  # a dry run's plan is checked as the write checks it: both refuse the same change sets
        if dry_run:
            diff = render_plan(local, plan)
        elif step is not None:
            plan.changes.validate(local)  # before the pull request's commit: a refused write gets none
    except (KrmMergeError, OSError) as err:  # here, not in guarded: the report still says nothing was written
        _say(results, failure(err))
        return 1
    if step is not None:  # before anything is written: a refusal leaves the package as it was
        try:
            step.prepare([w.path for w in plan.writes], dry_run=dry_run)
            if not dry_run:  # the commit, of the report the write will give
                code = CONFLICTS_LEFT if _marked(plan, conflicts)[1] else 0
                report = update_report(plan, policy=conflicts, dry_run=False, code=code)
                step.make_commit(plan.writes, _text(args, step, report))
        except KrmMergeError as err:  # here, not in guarded: the report still says nothing was written
            _say(results, failure(err))
            return 1
    if dry_run:
        sys.stdout.write(diff)
        return 0
    try:
        apply_plan(local, plan)
    except (KrmMergeError, OSError) as err:  # here, not in guarded: the report still says nothing was written
        _say(results, failure(err))
        return 1
    sys.stdout.write(f"updated {local}: {len(plan.writes)} file(s) changed{_merged_summary(plan)}\n")
    if plan.outcomes:
        sys.stdout.write(outcomes.summary(plan.outcomes) + "\n")
    (marked, in_files), left = _marked(plan, conflicts)
    if left:
        sys.stdout.write(f"{marked} conflict(s) marked '# krm-merge:conflict'"
                         + (f" and {in_files} diff3 region(s) left in merged files" if in_files else "")
                         + f": list them with krm-merge conflicts {local}, decide with krm-merge resolve\n")
        return CONFLICTS_LEFT
    return 0


def _marked(plan: UpdatePlan, conflicts: str) -> tuple[tuple[int, int], bool]:
    """(conflicts marked in fields, diff3 regions left in merged files), and whether any is left to decide."""
    in_files = sum(len(m.conflicts) for m in plan.merged_files)  # --files merge's diff3 regions
    marked = plan.conflicts - in_files if conflicts == "mark" else outcomes.decided(plan.outcomes, "marked")  # by rules
    return (marked, in_files), bool((conflicts == "mark" and plan.conflicts) or marked)


def _merged_summary(plan: UpdatePlan) -> str:
    merged = [m for m in plan.merged_files if m.merged]
    if not merged:
        return ""
    marked = sum(1 for m in merged if m.conflicts)
    return f", {len(merged)} non-KRM file(s) merged" + (f" ({marked} with conflict markers left)" if marked else "")


__all__ = ["CONFLICTS_LEFT", "DEFAULTS", "FILE_POLICIES", "POLICIES", "main", "parse_args", "parser"]
